/* gen_iwarp.c - write an iWARP capture with the project's encoder: a TCP
 * handshake, the MPA Request/Reply, every RDMAP opcode in both directions
 * and FINs, over IPv4 or IPv6, cut into segments one of several ways.
 *
 * usage: gen_iwarp [-6] [-m] [-c] [-r REV] [-l one|two|split] [-s] [-t]
 *                  [-e crc|overrun|marker|reserved] [-n ROUNDS] OUT.pcap
 *   -6  IPv6            -m  markers both ways    -c  CRC
 *   -r  MPA revision (2: enhanced, with IRD/ORD)
 *   -l  one FPDU per segment (what tshark decodes), two per segment, or
 *       every FPDU split across segments
 *   -s  start mid-stream: no SYN, no handshake, the first FPDUs lost
 *   -t  a retransmitted segment and two segments out of order
 *   -e  one error: a bad CRC, a ULPDU_Length overrunning the stream end,
 *       a marker pointing nowhere, a DDP reserved field set
 *   -n  repeat the RDMAP exchange ROUNDS times (for benchmarks)
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma_iwarp.h"
#include "tcp_headers.h"

#define MAX_SEGS_PER_BURST 64
#define MSS 1460

struct opts {
    bool v6, markers, crc, midstream, disorder;
    unsigned rev, rounds;
    const char *layout, *error;
};

/* One segment waiting to be written. */
struct seg {
    unsigned from;
    uint16_t flags;
    uint32_t seq, ack;
    size_t off, len; /* data[off..len) goes out */
    uint8_t *data;
};

struct side {
    uint8_t mac[6], ip4[4], ip6[16];
    uint16_t port;
    uint32_t seq; /* next stream octet */
    struct rdma_mpa_framing fr;
    uint32_t msn[4]; /* per untagged queue */
};

struct gen {
    struct opts o;
    struct side s[2];
    struct seg *segs;
    size_t nsegs, cap;
    uint8_t payload[4096];
};

static void die(const char *what)
{
    fprintf(stderr, "gen_iwarp: %s\n", what);
    exit(1);
}

static void push(struct gen *g, unsigned from, uint16_t flags, const uint8_t *p, size_t len)
{
    if (g->nsegs == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->segs = realloc(g->segs, g->cap * sizeof *g->segs);
        if (!g->segs)
            die("out of memory");
    }
    struct seg *sg = &g->segs[g->nsegs++];
    sg->from = from;
    sg->flags = flags;
    sg->seq = g->s[from].seq;
    sg->ack = 0;
    sg->off = 0;
    sg->len = len;
    sg->data = malloc(len ? len : 1);
    if (!sg->data)
        die("out of memory");
    if (len)
        memcpy(sg->data, p, len);
    g->s[from].seq += (uint32_t)len + ((flags & (RDMA_TCP_SYN | RDMA_TCP_FIN)) ? 1 : 0);
}

/* ---- FPDUs ------------------------------------------------------------- */

struct burst {
    uint8_t bytes[MAX_SEGS_PER_BURST * 2 * 1600];
    size_t len;
    size_t start[MAX_SEGS_PER_BURST + 1]; /* FPDU boundaries */
    unsigned n;
};

static void fill_payload(struct gen *g, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        g->payload[i] = (uint8_t)(i * 7 + salt * 13 + 1);
}

static void add_fpdu(struct gen *g, unsigned from, struct burst *b, struct rdma_iwarp_fpdu *f)
{
    struct side *sd = &g->s[from];
    size_t n;
    uint32_t seq = sd->seq + (uint32_t)b->len;
    if (!(f->ddp.tagged_flag)) {
        unsigned q = f->ddp.qn & 3;
        f->ddp.msn = ++sd->msn[q];
    }
    if (rdma_fpdu_encode(&sd->fr, seq, f, b->bytes + b->len, sizeof b->bytes - b->len, &n) != RDMA_OK)
        die("FPDU does not encode");
    b->start[b->n++] = b->len;
    b->len += n;
    b->start[b->n] = b->len;
}

static void untagged(struct rdma_iwarp_fpdu *f, uint8_t opcode, uint32_t qn)
{
    rdma_fpdu_set_opcode(f, opcode);
    f->ddp.qn = qn;
}

static void tagged(struct rdma_iwarp_fpdu *f, uint8_t opcode, uint32_t stag, uint64_t to)
{
    rdma_fpdu_set_opcode(f, opcode);
    f->ddp.stag = stag;
    f->ddp.tagged_offset = to;
}

static void with_payload(struct gen *g, struct rdma_iwarp_fpdu *f, size_t len, unsigned salt)
{
    fill_payload(g, len, salt);
    f->payload = g->payload;
    f->payload_len = (uint32_t)len;
}

/* Cut a burst into segments the way -l asks. */
static void segment(struct gen *g, unsigned from, const struct burst *b)
{
    const char *l = g->o.layout;
    for (unsigned i = 0; i < b->n;) {
        size_t a = b->start[i];
        if (!strcmp(l, "two") && i + 1 < b->n && b->start[i + 2] - a <= MSS) {
            push(g, from, RDMA_TCP_ACK, b->bytes + a, b->start[i + 2] - a);
            i += 2;
            continue;
        }
        size_t e = b->start[i + 1];
        if (!strcmp(l, "split")) {
            /* Cut inside the length field, then inside the DDP header, then at MSS. */
            size_t cuts[] = {a + 1, a + 9};
            size_t at = a;
            for (size_t k = 0; k < 2 && cuts[k] < e; k++) {
                push(g, from, RDMA_TCP_ACK, b->bytes + at, cuts[k] - at);
                at = cuts[k];
            }
            while (at < e) {
                size_t n = e - at < MSS ? e - at : MSS;
                push(g, from, RDMA_TCP_ACK, b->bytes + at, n);
                at += n;
            }
        } else {
            if (e - a > MSS)
                die("an FPDU larger than one segment needs -l split");
            push(g, from, RDMA_TCP_ACK, b->bytes + a, e - a);
        }
        i++;
    }
}

/* Initiator (0) to responder (1): every untagged and request opcode. */
static void burst_requests(struct gen *g, unsigned round)
{
    struct burst *b = calloc(1, sizeof *b);
    struct rdma_iwarp_fpdu f;
    if (!b)
        die("out of memory");
    untagged(&f, RDMA_RDMAP_SEND, 0);
    with_payload(g, &f, 37, round);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_SEND_SE, 0);
    with_payload(g, &f, 600, round + 1);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_SEND_INVALIDATE, 0);
    f.rdmap.inval_stag = 0x1234abcd;
    with_payload(g, &f, 2, round);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_SEND_SE_INVALIDATE, 0);
    f.rdmap.inval_stag = 0x00c0ffee;
    f.ddp.last_flag = 0;
    with_payload(g, &f, 1000, round + 2);
    add_fpdu(g, 0, b, &f);
    tagged(&f, RDMA_RDMAP_WRITE, 0x11223344, 0x1000 + round);
    with_payload(g, &f, 1200, round + 3);
    add_fpdu(g, 0, b, &f);
    tagged(&f, RDMA_RDMAP_WRITE, 0x11223344, 0x2000);
    with_payload(g, &f, 3, round);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_READ_REQUEST, 1);
    f.rr = (struct rdma_rdmap_rr){0xaabbccdd, 0x7fff0000ull + round, 1500, 0x55667788, 0x123456789aull};
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_IMMEDIATE, 0);
    with_payload(g, &f, 8, round);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_IMMEDIATE_SE, 0);
    with_payload(g, &f, 8, round + 5);
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_ATOMIC_REQUEST, 3);
    f.atomic.add = (struct rdma_rdmap_atomic_add){0, RDMA_RDMAP_ATOMIC_FETCHADD, 7 + round, 0xfeed0001,
                                                  0x8000, 5, ~0ull, 0, 0};
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_ATOMIC_REQUEST, 3);
    f.atomic.swap = (struct rdma_rdmap_atomic_swap){0, RDMA_RDMAP_ATOMIC_CMPSWAP, 8 + round, 0xfeed0001,
                                                    0x8008, 99, ~0ull, 42, ~0ull};
    add_fpdu(g, 0, b, &f);
    untagged(&f, RDMA_RDMAP_ATOMIC_REQUEST, 3);
    f.atomic.swap = (struct rdma_rdmap_atomic_swap){0, RDMA_RDMAP_ATOMIC_SWAP, 9 + round, 0xfeed0001,
                                                    0x8010, 1234, ~0ull, 0, 0};
    add_fpdu(g, 0, b, &f);
    segment(g, 0, b);
    free(b);
}

/* Responder (1) to initiator (0): the tagged replies and atomic responses. */
static void burst_responses(struct gen *g, unsigned round)
{
    struct burst *b = calloc(1, sizeof *b);
    struct rdma_iwarp_fpdu f;
    if (!b)
        die("out of memory");
    tagged(&f, RDMA_RDMAP_READ_RESPONSE, 0xaabbccdd, 0x7fff0000ull + round);
    with_payload(g, &f, 1401, round + 7);
    add_fpdu(g, 1, b, &f);
    tagged(&f, RDMA_RDMAP_WRITE, 0x99, 0);
    with_payload(g, &f, 510, round);
    add_fpdu(g, 1, b, &f);
    untagged(&f, RDMA_RDMAP_ATOMIC_RESPONSE, 3);
    f.atomic_resp = (struct rdma_rdmap_atomic_resp){7 + round, 0x100};
    add_fpdu(g, 1, b, &f);
    untagged(&f, RDMA_RDMAP_ATOMIC_RESPONSE, 3);
    f.atomic_resp = (struct rdma_rdmap_atomic_resp){8 + round, 42};
    add_fpdu(g, 1, b, &f);
    untagged(&f, RDMA_RDMAP_SEND, 0);
    with_payload(g, &f, 1, round);
    add_fpdu(g, 1, b, &f);
    segment(g, 1, b);
    free(b);
}

/* Two Terminates, as a responder reports a bad Write and a bad Read
 * Request: a DDP tagged buffer error with the DDP header, and an RDMAP
 * remote operation error with the DDP and Read Request headers. */
static void burst_terminate(struct gen *g)
{
    struct burst *b = calloc(1, sizeof *b);
    struct rdma_iwarp_fpdu f;
    if (!b)
        die("out of memory");
    untagged(&f, RDMA_RDMAP_TERMINATE, 2);
    f.term = (struct rdma_rdmap_term){1, 1, 0x00, 1, 1, 0, 0};
    f.present |= RDMA_IW_TERM_DDP;
    f.term_ddp_seg_len = 1214;
    f.term_ddp = (struct rdma_ddp){1, 1, 0, RDMA_DDP_VERSION, 0x11223344, 0x1000, 0, 0, 0};
    f.term_rdmap = (struct rdma_rdmap){RDMA_RDMAP_VERSION, 0, RDMA_RDMAP_WRITE, 0};
    add_fpdu(g, 1, b, &f);
    untagged(&f, RDMA_RDMAP_TERMINATE, 2);
    f.term = (struct rdma_rdmap_term){0, 2, 0x06, 1, 1, 1, 0};
    f.present |= RDMA_IW_TERM_DDP | RDMA_IW_TERM_RR;
    f.term_ddp_seg_len = 46;
    f.term_ddp = (struct rdma_ddp){0, 1, 0, RDMA_DDP_VERSION, 0, 0, 1, 1, 0};
    f.term_rdmap = (struct rdma_rdmap){RDMA_RDMAP_VERSION, 0, RDMA_RDMAP_READ_REQUEST, 0};
    f.term_rr = (struct rdma_rdmap_rr){0xaabbccdd, 0x7fff0000, 1500, 0x55667788, 0x123456789a};
    add_fpdu(g, 1, b, &f);
    segment(g, 1, b);
    free(b);
}

/* ---- the connection ---------------------------------------------------- */

static void handshake(struct gen *g)
{
    push(g, 0, RDMA_TCP_SYN, 0, 0);
    push(g, 1, RDMA_TCP_SYN | RDMA_TCP_ACK, 0, 0);
    push(g, 0, RDMA_TCP_ACK, 0, 0);
    static const uint8_t pd_req[] = "rdmasim initiator";
    static const uint8_t pd_rep[] = "rdmasim responder, accepted";
    struct rdma_mpa_frame f = {0};
    uint8_t buf[600];
    size_t n;
    f.kind = RDMA_MPA_REQUEST;
    f.hdr.marker_flag = g->o.markers;
    f.hdr.crc_flag = g->o.crc;
    f.hdr.rev = (uint8_t)g->o.rev;
    f.enhanced = g->o.rev == RDMA_MPA_ENHANCED_REV;
    f.enh = (struct rdma_mpa_enhanced){1, 1, 16, 0, 0, 8};
    f.private_data = pd_req;
    f.private_len = sizeof pd_req - 1;
    if (rdma_mpa_frame_encode(&f, buf, sizeof buf, &n) != RDMA_OK)
        die("MPA Request does not encode");
    push(g, 0, RDMA_TCP_ACK, buf, n);
    f.kind = RDMA_MPA_REPLY;
    f.enh = (struct rdma_mpa_enhanced){1, 1, 8, 0, 0, 16};
    f.private_data = pd_rep;
    f.private_len = sizeof pd_rep - 1;
    if (rdma_mpa_frame_encode(&f, buf, sizeof buf, &n) != RDMA_OK)
        die("MPA Reply does not encode");
    push(g, 1, RDMA_TCP_ACK, buf, n);
    for (unsigned i = 0; i < 2; i++)
        g->s[i].fr = (struct rdma_mpa_framing){g->o.markers, g->o.crc, g->s[i].seq};
}

/* Frame bytes of one segment. */
static void write_seg(struct gen *g, pcap_dumper_t *d, const struct seg *sg, unsigned long usec)
{
    struct rdma_pkt pkt;
    struct rdma_tcp tcp;
    const struct side *a = &g->s[sg->from], *b = &g->s[sg->from ^ 1];
    uint8_t frame[2048];
    size_t n;
    tcp_headers(&pkt, &tcp, g->o.v6, a->mac, b->mac, g->o.v6 ? a->ip6 : a->ip4,
                g->o.v6 ? b->ip6 : b->ip4, a->port, b->port);
    tcp.seq_raw = sg->seq + (uint32_t)sg->off;
    tcp.flags = sg->flags;
    tcp.ack_raw = sg->ack;
    if (rdma_tcp_encode(&pkt, &tcp, sg->data + sg->off, sg->len - sg->off, frame, sizeof frame,
                        &n) != RDMA_OK)
        die("segment does not encode");
    struct pcap_pkthdr h = {{(time_t)(1700000000 + usec / 1000000), (suseconds_t)(usec % 1000000)},
                            (bpf_u_int32)n, (bpf_u_int32)n};
    pcap_dump((u_char *)d, &h, frame);
}

static void init_sides(struct gen *g)
{
    static const struct side init[2] = {
        {{0x02, 0, 0, 0, 0, 1}, {10, 0, 0, 1}, {0xfd, 0, [15] = 1}, 40001, 0x10000000u, {0}, {0}},
        {{0x02, 0, 0, 0, 0, 2}, {10, 0, 0, 2}, {0xfd, 0, [15] = 2}, 40002, 0xfffff000u, {0}, {0}},
    };
    g->s[0] = init[0];
    g->s[1] = init[1];
}

/* The -e errors, applied to the encoded segments. */
static void inject_error(struct gen *g, size_t first_fpdu_seg)
{
    const char *e = g->o.error;
    struct seg *sg = &g->segs[first_fpdu_seg + 1]; /* the second FPDU of the initiator */
    size_t hdr = g->o.markers && sg->seq == g->s[0].fr.origin ? 4 : 0;
    if (!strcmp(e, "crc")) {
        sg->data[sg->len - 1] ^= 0x5a;
    } else if (!strcmp(e, "reserved")) {
        sg->data[hdr + 2] |= 0x04;
        if (g->o.crc) {
            uint32_t c = rdma_crc32c(sg->data, sg->len - 4);
            for (int i = 0; i < 4; i++)
                sg->data[sg->len - 4 + i] = (uint8_t)(c >> (8 * i));
        }
    } else if (!strcmp(e, "marker")) {
        /* The 600-octet Send spans a marker: make it point past its header. */
        uint32_t off = (g->s[0].fr.origin - sg->seq) & 511;
        if (!g->o.markers || off + 4 > sg->len)
            die("-e marker needs -m and -l one");
        sg->data[off + 3] += 64;
    } else if (!strcmp(e, "overrun")) {
        /* Drop the tail of the initiator's last FPDU: its length now runs
         * past the end of the stream (the FIN follows). */
        for (size_t i = g->nsegs; i-- > 0;) {
            if (g->segs[i].from == 0 && g->segs[i].len > 8) {
                g->segs[i].len -= 8;
                g->s[0].seq -= 8;
                return;
            }
        }
    } else {
        die("unknown -e");
    }
}

int main(int argc, char **argv)
{
    struct gen *g = calloc(1, sizeof *g);
    if (!g)
        die("out of memory");
    g->o = (struct opts){.rev = 1, .rounds = 1, .layout = "one"};
    int c;
    while ((c = getopt(argc, argv, "6mcr:l:ste:n:")) != -1) {
        switch (c) {
        case '6': g->o.v6 = true; break;
        case 'm': g->o.markers = true; break;
        case 'c': g->o.crc = true; break;
        case 'r': g->o.rev = (unsigned)atoi(optarg); break;
        case 'l': g->o.layout = optarg; break;
        case 's': g->o.midstream = true; break;
        case 't': g->o.disorder = true; break;
        case 'e': g->o.error = optarg; break;
        case 'n': g->o.rounds = (unsigned)atoi(optarg); break;
        default: die("bad option (see the comment at the top of gen_iwarp.c)");
        }
    }
    if (optind + 1 != argc)
        die("usage: gen_iwarp [options] OUT.pcap");
    init_sides(g);
    handshake(g);
    size_t first_fpdu_seg = g->nsegs;
    for (unsigned r = 0; r < g->o.rounds; r++) {
        burst_requests(g, r);
        burst_responses(g, r);
    }
    burst_terminate(g);
    if (g->o.error)
        inject_error(g, first_fpdu_seg);
    push(g, 0, RDMA_TCP_FIN | RDMA_TCP_ACK, 0, 0);
    push(g, 1, RDMA_TCP_FIN | RDMA_TCP_ACK, 0, 0);

    /* Each segment acknowledges what the peer had sent before it. */
    uint32_t pos[2] = {g->segs[0].seq, g->segs[1].seq};
    for (size_t i = 0; i < g->nsegs; i++) {
        struct seg *sg = &g->segs[i];
        sg->ack = sg->flags & RDMA_TCP_ACK ? pos[sg->from ^ 1] : 0;
        pos[sg->from] = sg->seq + (uint32_t)sg->len + ((sg->flags & (RDMA_TCP_SYN | RDMA_TCP_FIN)) ? 1 : 0);
    }
    pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t *d = pcap_dump_open(dead, argv[optind]);
    if (!d)
        die(pcap_geterr(dead));
    size_t from = 0;
    if (g->o.midstream) {
        /* Skip the handshake and the first two FPDUs of the initiator, and
         * start 6 octets into the third. */
        from = first_fpdu_seg + 2;
        if (g->segs[from].len > 8)
            g->segs[from].off = 6;
    }
    unsigned long usec = 0;
    for (size_t i = from; i < g->nsegs; i++) {
        if (g->o.disorder && i == first_fpdu_seg + 3 && g->segs[i + 1].from == g->segs[i].from) {
            /* Out of order: the next segment goes first. */
            write_seg(g, d, &g->segs[i + 1], usec += 10);
            write_seg(g, d, &g->segs[i], usec += 10);
            i++;
            continue;
        }
        write_seg(g, d, &g->segs[i], usec += 10);
        if (g->o.disorder && i == first_fpdu_seg + 5)
            write_seg(g, d, &g->segs[i], usec += 10); /* retransmitted */
    }
    pcap_dump_close(d);
    pcap_close(dead);
    for (size_t i = 0; i < g->nsegs; i++)
        free(g->segs[i].data);
    free(g->segs);
    free(g);
    return 0;
}
