/* gen_captures.c - captures with a known story for the `rdmasim replay`
 * tests, built with the public encoder (rdma_pkt_set_opcode, rdma_encode)
 * and written with libpcap at nanosecond precision.
 *
 *   gen_captures DIR      writes DIR/<story>.pcap for every story below
 *
 * Each story's comment is what the test expects replay to find: exactly
 * these anomalies, with these frames. Frame numbers count from 1.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_codec.h"

#define QPN_A 0x000101 /* host A's QP */
#define QPN_B 0x000202 /* host B's QP */
#define US 1000u

struct gen {
    pcap_t *dead;
    pcap_dumper_t *out;
    uint64_t t;        /* ns */
    unsigned frames;
};

static uint8_t zeros[4096];

static void die(const char *what)
{
    fprintf(stderr, "gen_captures: %s\n", what);
    exit(1);
}

static void open_capture(struct gen *g, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.pcap", dir, name);
    g->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    if (!g->dead || !(g->out = pcap_dump_open(g->dead, path)))
        die(path);
    g->t = 1700000000ull * 1000000000ull;
    g->frames = 0;
}

static void close_capture(struct gen *g)
{
    pcap_dump_close(g->out);
    pcap_close(g->dead);
}

static void write_frame(struct gen *g, const uint8_t *buf, size_t len, size_t caplen)
{
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(g->t / 1000000000u);
    h.ts.tv_usec = (suseconds_t)(g->t % 1000000000u); /* nanoseconds: see open_capture */
    h.caplen = (bpf_u_int32)caplen;
    h.len = (bpf_u_int32)len;
    pcap_dump((u_char *)g->out, &h, buf);
    g->frames++;
}

/* A RoCEv2/IPv4 packet between host A (10.0.0.1) and host B (10.0.0.2). */
static void roce(struct rdma_pkt *p, int from_a, uint8_t opcode, uint32_t psn, uint32_t payload)
{
    static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
    static const uint8_t ip_a[4] = {10, 0, 0, 1}, ip_b[4] = {10, 0, 0, 2};
    memset(p, 0, sizeof *p);
    p->linktype = RDMA_LINKTYPE_ETHERNET;
    p->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    memcpy(p->eth.src, from_a ? mac_a : mac_b, 6);
    memcpy(p->eth.dst, from_a ? mac_b : mac_a, 6);
    p->ip.ttl = 64;
    p->ip.flags = 2;
    p->ip.dsfield_ecn = 2; /* ECT(0) */
    memcpy(p->ip.src, from_a ? ip_a : ip_b, 4);
    memcpy(p->ip.dst, from_a ? ip_b : ip_a, 4);
    p->udp.srcport = 49152;
    p->udp.dstport = RDMA_ROCEV2_UDP_PORT;
    rdma_pkt_set_opcode(p, opcode);
    p->bth.p_key = 0xffff;
    p->bth.destqp = from_a ? QPN_B : QPN_A;
    p->bth.psn = psn;
    p->bth.a = (rdma_opcodes[opcode].flags & RDMA_OPF_REQUEST) != 0;
    if (!rdma_opcodes[opcode].fixed_payload) {
        p->payload = zeros;
        p->payload_len = payload;
    }
}

static size_t encode(const struct rdma_pkt *p, uint8_t *buf, size_t cap)
{
    size_t len;
    if (rdma_encode(p, buf, cap, &len) != RDMA_OK)
        die("rdma_encode failed");
    return len;
}

static void put(struct gen *g, const struct rdma_pkt *p, uint64_t after_ns)
{
    uint8_t buf[8192];
    g->t += after_ns;
    size_t len = encode(p, buf, sizeof buf);
    write_frame(g, buf, len, len);
}

/* Opcodes by name from the table, so no number is repeated here. */
static uint8_t opcode(const char *name)
{
    for (unsigned i = 0; i < 256; i++)
        if (rdma_opcodes[i].name && !strcmp(rdma_opcodes[i].name, name))
            return (uint8_t)i;
    die(name);
    return 0;
}

static void write_only(struct gen *g, uint32_t psn, uint64_t after)
{
    struct rdma_pkt p;
    roce(&p, 1, opcode("RC RDMA WRITE Only"), psn, 64);
    p.reth.va = 0x7f0000001000ull + (uint64_t)psn * 64;
    p.reth.r_key = 0x1234;
    p.reth.dmalen = 64;
    put(g, &p, after);
}

/* syndrome: ACK kind in bits 6-5, credits / NAK code / RNR timer in 4-0 */
static void ack(struct gen *g, uint32_t psn, unsigned kind, unsigned value, uint32_t msn, uint64_t after)
{
    struct rdma_pkt p;
    roce(&p, 0, opcode("RC Acknowledge"), psn, 0);
    p.aeth.syndrome = (uint8_t)(kind << 5 | value);
    p.aeth.msn = msn;
    put(g, &p, after);
}

/* Frames 1-3 WRITE 100-102; 103 is lost before the capture point; frames
 * 4-5 WRITE 104-105. Frame 6 NAK PSN sequence error at 103. Frames 7-9
 * resend 103-105 (one go-back-N episode triggered by frame 6, three
 * retransmitted packets), frame 10 ACK 105.
 * Expected: PSN gap 103 (frames 3, 4); NAK "PSN sequence error" (frame 6);
 * go-back-N 103-105 after NAK frame 6; 3 retransmissions (frames 7-9);
 * 6 RDMA WRITEs, all acknowledged. */
static void story_gap_gbn(struct gen *g)
{
    for (uint32_t psn = 100; psn <= 105; psn++)
        if (psn != 103)
            write_only(g, psn, 2 * US);
    ack(g, 103, RDMA_AETH_NAK, RDMA_NAK_PSN_SEQUENCE_ERROR, 3, 3 * US);
    for (uint32_t psn = 103; psn <= 105; psn++)
        write_only(g, psn, 2 * US);
    ack(g, 105, RDMA_AETH_ACK, 31, 6, 3 * US);
}

/* Captured at the requester: frames 1-3 WRITE 300-302, all captured; 301 is
 * lost after the capture point, so frame 4 is a NAK sequence error at 301.
 * Frames 5-6 resend 301-302, frame 7 ACK 302.
 * Expected: NAK (frame 4), go-back-N 301-302 after frame 4 with two
 * retransmissions (frames 5, 6); no PSN gap. */
static void story_nak_seq(struct gen *g)
{
    for (uint32_t psn = 300; psn <= 302; psn++)
        write_only(g, psn, 2 * US);
    ack(g, 301, RDMA_AETH_NAK, RDMA_NAK_PSN_SEQUENCE_ERROR, 1, 3 * US);
    write_only(g, 301, 2 * US);
    write_only(g, 302, 2 * US);
    ack(g, 302, RDMA_AETH_ACK, 31, 3, 3 * US);
}

/* Frame 1 SEND Only PSN 200; frame 2 RNR NAK with timer 14 (1.28 ms, IBA
 * table 45); frame 3 the SEND again 1.28 ms later; frame 4 ACK.
 * Expected: RNR NAK timer 14 = 1280000 ns (frame 2); go-back-N after the
 * RNR NAK, waiting 1.28 ms; one retransmission (frame 3); the SEND's
 * latency runs from frame 1 to frame 4. */
static void story_rnr(struct gen *g)
{
    struct rdma_pkt p;
    roce(&p, 1, opcode("RC SEND Only"), 200, 100);
    put(g, &p, 0);
    ack(g, 200, RDMA_AETH_RNR_NAK, 14, 0, 5 * US);
    put(g, &p, 1280 * US);
    ack(g, 200, RDMA_AETH_ACK, 31, 1, 5 * US);
}

static void read_request(struct gen *g, uint32_t psn, uint32_t len, uint64_t after)
{
    struct rdma_pkt p;
    roce(&p, 1, opcode("RC RDMA READ Request"), psn, 0);
    p.reth.va = 0x7f0000100000ull;
    p.reth.r_key = 0x5678;
    p.reth.dmalen = len;
    put(g, &p, after);
}

static void read_response(struct gen *g, const char *op, uint32_t psn, uint32_t len, uint64_t after)
{
    struct rdma_pkt p;
    roce(&p, 0, opcode(op), psn, len);
    p.aeth.syndrome = 31;
    put(g, &p, after);
}

/* Frames 1-3: a SEND First/Middle/Last of 1024+1024+100 bytes (MTU 1024)
 * at PSN 400-402; frame 4 READ 2048 bytes at 403 (responses 403-404);
 * frame 5 READ 1000 bytes at 405. The responder answers the second READ
 * first: frame 6 READ Response Only 405 (whose AETH also acknowledges the
 * SEND), then frames 7-8 First/Last 403-404 and frame 9 an ACK of 402,
 * each out of order: below 405, with no retransmission to explain it.
 * Frame 10: a WRITE at 406 that is never acknowledged.
 * Expected: three out-of-order responses (frames 7, 8, 9); one missing
 * acknowledgement (frame 10); SEND 2148 bytes completed by frame 6, two
 * READs (2048, 1000 bytes), one WRITE; latencies from the frame times. */
static void story_out_of_order(struct gen *g)
{
    struct rdma_pkt p;
    roce(&p, 1, opcode("RC SEND First"), 400, 1024);
    put(g, &p, 0);
    roce(&p, 1, opcode("RC SEND Middle"), 401, 1024);
    put(g, &p, 1 * US);
    roce(&p, 1, opcode("RC SEND Last"), 402, 100);
    put(g, &p, 1 * US);
    read_request(g, 403, 2048, 1 * US);
    read_request(g, 405, 1000, 1 * US);
    read_response(g, "RC RDMA READ Response Only", 405, 1000, 7 * US);
    read_response(g, "RC RDMA READ Response First", 403, 1024, 1 * US);
    read_response(g, "RC RDMA READ Response Last", 404, 1024, 1 * US);
    ack(g, 402, RDMA_AETH_ACK, 31, 1, 2 * US);
    write_only(g, 406, 3 * US);
}

/* Host B's PFC frames from 02:00:00:00:00:0b: frames 1-100 pause priority
 * 3 for 65535 quanta every 10 us (each refreshes the timer before it runs
 * out at 100 Gb/s: 65535 x 5.12 ns = 335.5 us); frame 101 resumes priority
 * 3 (zero quanta) 50 us after frame 100; frame 102 pauses priority 5 for
 * 1000 quanta (5.12 us at 100 Gb/s) and nothing cuts it short.
 * Expected: priority 3: 100 pauses, 1 resume, paused from frame 1 to frame
 * 101 (99 x 10 us + 50 us = 1040 us); priority 5: 1 pause of 5.12 us. */
static void story_pfc_storm(struct gen *g)
{
    uint8_t buf[128];
    struct rdma_pkt p;
    memset(&p, 0, sizeof p);
    p.linktype = RDMA_LINKTYPE_ETHERNET;
    p.present = RDMA_HDR_ETH | RDMA_HDR_PFC;
    static const uint8_t pfc_dst[6] = {0x01, 0x80, 0xc2, 0, 0, 0x01}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
    memcpy(p.eth.dst, pfc_dst, 6);
    memcpy(p.eth.src, mac_b, 6);
    p.pfc.opcode = RDMA_MAC_CONTROL_PFC;
    p.pfc.enbv = 1u << 3;
    p.pfc.pause_time[3] = 0xffff;
    for (int i = 0; i < 100; i++) {
        g->t += i ? 10 * US : 0;
        size_t len = encode(&p, buf, sizeof buf);
        write_frame(g, buf, len, len);
    }
    p.pfc.pause_time[3] = 0;
    g->t += 50 * US;
    size_t len = encode(&p, buf, sizeof buf);
    write_frame(g, buf, len, len);
    p.pfc.enbv = 1u << 5;
    p.pfc.pause_time[5] = 1000;
    g->t += 100 * US;
    len = encode(&p, buf, sizeof buf);
    write_frame(g, buf, len, len);
}

/* Host A writes PSN 500-519 (frames 1, 3, 5, ... every 2 us, each followed
 * by its ACK); the switch marks WRITEs 510-514 ECN-CE, and host B answers
 * with a burst of 4 CNPs to A's QP 50 us apart after the first mark (frames
 * 41-44, after the traffic).
 * Expected: 5 ECN-CE packets (the frames of 510-514); 4 CNPs to QP 0x101 at
 * host A, closest 50 us apart; 20 WRITEs acknowledged. */
static void story_cnp_burst(struct gen *g)
{
    for (uint32_t psn = 500; psn < 520; psn++) {
        struct rdma_pkt p;
        roce(&p, 1, opcode("RC RDMA WRITE Only"), psn, 256);
        p.reth.va = 0x7f0000200000ull;
        p.reth.r_key = 0x9abc;
        p.reth.dmalen = 256;
        if (psn >= 510 && psn < 515)
            p.ip.dsfield_ecn = 3;
        put(g, &p, 2 * US);
        ack(g, psn, RDMA_AETH_ACK, 31, psn - 499, 1 * US);
    }
    for (int i = 0; i < 4; i++) {
        struct rdma_pkt p;
        roce(&p, 0, opcode("CNP"), 0, 0);
        p.bth.becn = 1;
        put(g, &p, i ? 50 * US : 5 * US);
    }
}

/* Frame 1 WRITE 600 (fine), frame 2 WRITE 601 with one payload byte
 * flipped after encoding (bad ICRC: the responder drops it), frame 3 a
 * WRITE cut to 40 bytes by a short capture buffer inside its IP header
 * (truncated), frame 4 WRITE 601 again (the requester's retransmission),
 * frame 5 a WRITE of 1024 bytes at 602 captured with a 128-byte snap length
 * (headers complete: analysed), frame 6 ACK 602.
 * Expected: bad ICRC (frame 2), bad frame "truncated" (frame 3), one
 * snapped frame, 3 WRITEs acknowledged; frame 4 is not a retransmission in
 * the capture's eyes because frame 2 was never delivered. Frame 3, cut
 * before its UDP header, cannot be recognised as RoCE: it counts as bad. */
static void story_bad_frames(struct gen *g)
{
    uint8_t buf[2048];
    struct rdma_pkt p;
    write_only(g, 600, 0);
    roce(&p, 1, opcode("RC RDMA WRITE Only"), 601, 64);
    p.reth.dmalen = 64;
    size_t len = encode(&p, buf, sizeof buf);
    buf[len - 10] ^= 0x01;
    g->t += 2 * US;
    write_frame(g, buf, len, len);
    len = encode(&p, buf, sizeof buf);
    g->t += 2 * US;
    write_frame(g, buf, len, 40);
    write_only(g, 601, 2 * US);
    roce(&p, 1, opcode("RC RDMA WRITE Only"), 602, 1024);
    p.reth.dmalen = 1024;
    len = encode(&p, buf, sizeof buf);
    g->t += 2 * US;
    write_frame(g, buf, len, 128);
    ack(g, 602, RDMA_AETH_ACK, 31, 3, 3 * US);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*build)(struct gen *);
    } stories[] = {
        {"gap_gbn", story_gap_gbn},
        {"nak_seq", story_nak_seq},
        {"rnr", story_rnr},
        {"out_of_order", story_out_of_order},
        {"pfc_storm", story_pfc_storm},
        {"cnp_burst", story_cnp_burst},
        {"bad_frames", story_bad_frames},
    };
    if (argc != 2) {
        fprintf(stderr, "usage: gen_captures DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof stories / sizeof stories[0]; i++) {
        struct gen g;
        open_capture(&g, argv[1], stories[i].name);
        stories[i].build(&g);
        close_capture(&g);
    }
    return 0;
}
