/* gen_bench.c - the capture `make bench-replay` measures: RoCEv2/IPv4 RC
 * traffic between 1,000 queue pairs (500 host pairs), interleaved packet by
 * packet as a busy fabric would show them.
 *
 *   gen_bench FILE [FRAMES [QPS [SNAPLEN]]]   defaults 1000000, 1000, 0
 *
 * SNAPLEN > 0 keeps only the first SNAPLEN bytes of each frame, as a
 * capture taken with `tcpdump -s SNAPLEN` or a truncating mirror port does;
 * replay then analyses the headers and cannot check the ICRC.
 *
 * Each queue pair repeats a cycle of 10 frames over 7 PSNs: a 4 KiB RDMA
 * WRITE (First, Middle, Middle, Last at MTU 1024) and its ACK, a 2 KiB RDMA
 * READ (request, two responses), a 256-byte SEND with immediate and its
 * ACK. Every frame goes through rdma_encode(), ICRC included.
 *
 * The file is written through an 8 MiB stdio buffer, as cp or a capture
 * tool writing large blocks would write it. Written in stdio's default
 * 4 KiB pieces, the page cache holds it in small folios, and mapping it
 * costs the reader about twice the system time.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_codec.h"

#define MTU 1024u
#define STEPS 10
#define WRITE_BUFFER (8u << 20)

struct step {
    const char *op;
    int from_requester;
    uint32_t payload;
    uint32_t psn_off;   /* PSN relative to the cycle's first */
};

/* One cycle of a queue pair. */
static const struct step cycle[STEPS] = {
    {"RC RDMA WRITE First", 1, MTU, 0},
    {"RC RDMA WRITE Middle", 1, MTU, 1},
    {"RC RDMA WRITE Middle", 1, MTU, 2},
    {"RC RDMA WRITE Last", 1, MTU, 3},
    {"RC Acknowledge", 0, 0, 3},
    {"RC RDMA READ Request", 1, 0, 4},
    {"RC RDMA READ Response First", 0, MTU, 4},
    {"RC RDMA READ Response Last", 0, MTU, 5},
    {"RC SEND Only with Immediate", 1, 256, 6},
    {"RC Acknowledge", 0, 0, 6},
};
#define CYCLE_PSNS 7

static uint8_t opcode(const char *name)
{
    for (unsigned i = 0; i < 256; i++)
        if (rdma_opcodes[i].name && !strcmp(rdma_opcodes[i].name, name))
            return (uint8_t)i;
    fprintf(stderr, "gen_bench: no opcode %s\n", name);
    exit(1);
}

static size_t build(uint8_t *buf, size_t cap, unsigned qp, const struct step *s, uint32_t psn)
{
    static uint8_t zeros[MTU];
    struct rdma_pkt p;
    memset(&p, 0, sizeof p);
    unsigned host = qp / 2; /* two queue pairs per host pair */
    uint8_t a[4] = {10, 1, (uint8_t)(host >> 8), (uint8_t)host}, b[4] = {10, 2, (uint8_t)(host >> 8), (uint8_t)host};
    p.linktype = RDMA_LINKTYPE_ETHERNET;
    p.present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    p.eth.src[0] = p.eth.dst[0] = 2;
    p.eth.src[5] = s->from_requester ? 0xa : 0xb;
    p.eth.dst[5] = s->from_requester ? 0xb : 0xa;
    p.ip.ttl = 64;
    p.ip.dsfield_ecn = 2;
    memcpy(p.ip.src, s->from_requester ? a : b, 4);
    memcpy(p.ip.dst, s->from_requester ? b : a, 4);
    p.udp.srcport = (uint16_t)(49152 + qp);
    p.udp.dstport = RDMA_ROCEV2_UDP_PORT;
    uint8_t op = opcode(s->op);
    rdma_pkt_set_opcode(&p, op);
    p.bth.p_key = 0xffff;
    p.bth.destqp = s->from_requester ? 0x10000 + qp : 0x20000 + qp;
    p.bth.psn = psn & 0xffffff;
    p.payload = zeros;
    p.payload_len = s->payload;
    p.reth.va = 0x7f0000000000ull + (uint64_t)qp * 0x100000;
    p.reth.r_key = 0x100 + qp;
    p.reth.dmalen = rdma_opcodes[op].flags & RDMA_OPF_READ ? 2 * MTU : 4 * MTU;
    p.aeth.syndrome = 31;
    p.immdt.imm = qp;
    size_t len;
    if (rdma_encode(&p, buf, cap, &len) != RDMA_OK) {
        fprintf(stderr, "gen_bench: encoding %s failed\n", s->op);
        exit(1);
    }
    return len;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: gen_bench FILE [FRAMES [QPS [SNAPLEN]]]\n");
        return 2;
    }
    unsigned long frames = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    unsigned qps = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1000;
    unsigned long snaplen = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
    if (!frames || !qps) {
        fprintf(stderr, "gen_bench: FRAMES and QPS must be positive\n");
        return 2;
    }
    static char iobuf[WRITE_BUFFER];
    FILE *fp = fopen(argv[1], "wb");
    if (!fp) {
        perror(argv[1]);
        return 1;
    }
    setvbuf(fp, iobuf, _IOFBF, sizeof iobuf);
    pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *out = dead ? pcap_dump_fopen(dead, fp) : NULL;
    if (!out) {
        fprintf(stderr, "gen_bench: %s: %s\n", argv[1], dead ? pcap_geterr(dead) : "pcap");
        return 1;
    }
    uint32_t *psn = calloc(qps, sizeof *psn);
    if (!psn)
        return 1;
    for (unsigned q = 0; q < qps; q++)
        psn[q] = q * 7919u & 0xffffff;
    uint8_t buf[2048];
    uint64_t t = 1700000000ull * 1000000000ull;
    /* Round-robin over the queue pairs, one step each: 100 ns apart. */
    for (unsigned long i = 0; i < frames; i++) {
        unsigned q = (unsigned)(i % qps);
        unsigned step = (unsigned)(i / qps % STEPS);
        const struct step *s = &cycle[step];
        size_t len = build(buf, sizeof buf, q, s, psn[q] + s->psn_off);
        if (step == STEPS - 1)
            psn[q] = (psn[q] + CYCLE_PSNS) & 0xffffff;
        struct pcap_pkthdr h;
        h.ts.tv_sec = (time_t)(t / 1000000000u);
        h.ts.tv_usec = (suseconds_t)(t % 1000000000u);
        h.len = (bpf_u_int32)len;
        h.caplen = (bpf_u_int32)(snaplen && snaplen < len ? snaplen : len);
        pcap_dump((u_char *)out, &h, buf);
        t += 100;
    }
    if (pcap_dump_flush(out)) {
        fprintf(stderr, "gen_bench: %s: %s\n", argv[1], pcap_geterr(dead));
        return 1;
    }
    pcap_dump_close(out); /* and fp */
    pcap_close(dead);
    free(psn);
    return 0;
}
