/* gen_iwarp_stories.c - iWARP captures with a known story for the
 * `rdmasim replay` tests, built with the codec's encoders (MPA frames,
 * FPDUs with markers and CRC32c, TCP segments) and written with libpcap at
 * nanosecond precision.
 *
 *   gen_iwarp_stories DIR     writes DIR/<story>.pcap for every story below
 *
 * Each story's comment is what test_replay.py expects replay to find: these
 * conversations, these messages and exactly these anomalies, with these
 * frames. Frame numbers count from 1; host A (10.0.0.1, fd00::1) is the
 * initiator, host B (10.0.0.2, fd00::2) the responder, port 6000.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_iwarp.h"
#include "../iwarp/tcp_headers.h"

#define US 1000u
#define MSS 1460u

enum { A, B };

struct end {
    uint8_t mac[6], ip4[4], ip6[16];
    uint16_t port;
    uint32_t seq;                 /* next stream octet */
    struct rdma_mpa_framing fr;
};

struct conn {
    struct end e[2];
    bool v6;
};

struct gen {
    pcap_t *dead;
    pcap_dumper_t *out;
    uint64_t t; /* ns */
};

static uint8_t data[8192];

static void die(const char *what)
{
    fprintf(stderr, "gen_iwarp_stories: %s\n", what);
    exit(1);
}

static void conn_init(struct conn *c, uint16_t port_a, bool v6)
{
    static const struct end a = {{0x02, 0, 0, 0, 0, 0x0a}, {10, 0, 0, 1}, {0xfd, [15] = 1}, 0, 0x10000000u, {0}};
    static const struct end b = {{0x02, 0, 0, 0, 0, 0x0b}, {10, 0, 0, 2}, {0xfd, [15] = 2}, 6000, 0xfffff000u, {0}};
    c->e[A] = a;
    c->e[B] = b;
    c->e[A].port = port_a;
    c->e[A].seq += port_a; /* connections differ in sequence space too */
    c->v6 = v6;
}

/* One TCP segment of len octets starting at sequence seq. */
static void emit(struct gen *g, const struct conn *c, unsigned from, uint16_t flags, uint32_t seq,
                 const uint8_t *p, size_t len, uint64_t after)
{
    const struct end *s = &c->e[from], *d = &c->e[from ^ 1];
    struct rdma_pkt pkt;
    struct rdma_tcp tcp;
    uint8_t frame[2048];
    size_t n;
    tcp_headers(&pkt, &tcp, c->v6, s->mac, d->mac, c->v6 ? s->ip6 : s->ip4, c->v6 ? d->ip6 : d->ip4,
                s->port, d->port);
    tcp.seq_raw = seq;
    tcp.ack_raw = d->seq;
    tcp.flags = flags;
    if (rdma_tcp_encode(&pkt, &tcp, p, len, frame, sizeof frame, &n) != RDMA_OK)
        die("segment does not encode");
    g->t += after;
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(g->t / 1000000000u);
    h.ts.tv_usec = (suseconds_t)(g->t % 1000000000u); /* nanoseconds: see main */
    h.caplen = h.len = (bpf_u_int32)n;
    pcap_dump((u_char *)g->out, &h, frame);
}

/* The next segment of a direction. */
static void seg(struct gen *g, struct conn *c, unsigned from, uint16_t flags, const uint8_t *p, size_t len,
                uint64_t after)
{
    emit(g, c, from, flags, c->e[from].seq, p, len, after);
    c->e[from].seq += (uint32_t)len + ((flags & (RDMA_TCP_SYN | RDMA_TCP_FIN)) ? 1 : 0);
}

/* SYN, SYN-ACK, ACK when syn is set, then the MPA Request (A) and Reply
 * (B), both asking for markers and CRC as given. */
static void mpa_start(struct gen *g, struct conn *c, bool syn, bool markers, bool crc)
{
    if (syn) {
        seg(g, c, A, RDMA_TCP_SYN, NULL, 0, 1 * US);
        seg(g, c, B, RDMA_TCP_SYN | RDMA_TCP_ACK, NULL, 0, 1 * US);
        seg(g, c, A, RDMA_TCP_ACK, NULL, 0, 1 * US);
    }
    for (unsigned side = A; side <= B; side++) {
        struct rdma_mpa_frame f = {0};
        uint8_t buf[64];
        size_t n;
        f.kind = side == A ? RDMA_MPA_REQUEST : RDMA_MPA_REPLY;
        f.hdr.marker_flag = markers;
        f.hdr.crc_flag = crc;
        f.hdr.rev = 1;
        if (rdma_mpa_frame_encode(&f, buf, sizeof buf, &n) != RDMA_OK)
            die("MPA frame does not encode");
        seg(g, c, side, RDMA_TCP_ACK, buf, n, 1 * US);
        c->e[side].fr = (struct rdma_mpa_framing){markers, crc, c->e[side].seq};
    }
}

/* An FPDU as it goes on the wire from the direction's next octet plus off. */
static size_t encode(const struct conn *c, unsigned from, uint32_t off, const struct rdma_iwarp_fpdu *f,
                     uint8_t *out, size_t cap)
{
    size_t n;
    if (rdma_fpdu_encode(&c->e[from].fr, c->e[from].seq + off, f, out, cap, &n) != RDMA_OK)
        die("FPDU does not encode");
    return n;
}

static void send_fpdu(struct gen *g, struct conn *c, unsigned from, const struct rdma_iwarp_fpdu *f,
                      uint64_t after)
{
    uint8_t buf[4096];
    seg(g, c, from, RDMA_TCP_ACK, buf, encode(c, from, 0, f, buf, sizeof buf), after);
}

/* One FPDU cut into segments at the given octet offsets (0-terminated). */
static void send_split(struct gen *g, struct conn *c, unsigned from, const struct rdma_iwarp_fpdu *f,
                       const size_t *cuts, uint64_t after)
{
    uint8_t buf[8192];
    size_t n = encode(c, from, 0, f, buf, sizeof buf), at = 0;
    for (; *cuts; cuts++) {
        seg(g, c, from, RDMA_TCP_ACK, buf + at, *cuts - at, after);
        at = *cuts;
    }
    seg(g, c, from, RDMA_TCP_ACK, buf + at, n - at, after);
}

/* A tagged FPDU: an RDMA Write or a Read Response segment. */
static void tagged_fpdu(struct rdma_iwarp_fpdu *f, uint8_t opcode, uint32_t stag, uint64_t to,
                        uint32_t len, bool last)
{
    rdma_fpdu_set_opcode(f, opcode);
    f->ddp.stag = stag;
    f->ddp.tagged_offset = to;
    f->ddp.last_flag = last;
    f->payload = data;
    f->payload_len = len;
}

static void write_fpdu(struct rdma_iwarp_fpdu *f, uint32_t stag, uint64_t to, uint32_t len, bool last)
{
    tagged_fpdu(f, RDMA_RDMAP_WRITE, stag, to, len, last);
}

static void read_response(struct rdma_iwarp_fpdu *f, uint32_t stag, uint64_t to, uint32_t len, bool last)
{
    tagged_fpdu(f, RDMA_RDMAP_READ_RESPONSE, stag, to, len, last);
}

static void send_msg(struct rdma_iwarp_fpdu *f, uint8_t opcode, uint32_t msn, uint32_t len, uint32_t inval)
{
    rdma_fpdu_set_opcode(f, opcode);
    f->ddp.qn = 0;
    f->ddp.msn = msn;
    f->rdmap.inval_stag = inval;
    f->payload = data;
    f->payload_len = len;
}

static void read_request(struct rdma_iwarp_fpdu *f, uint32_t msn, uint32_t sink, uint64_t sink_to, uint32_t size,
                         uint32_t src, uint64_t src_to)
{
    rdma_fpdu_set_opcode(f, RDMA_RDMAP_READ_REQUEST);
    f->ddp.qn = 1;
    f->ddp.msn = msn;
    f->rr = (struct rdma_rdmap_rr){sink, sink_to, size, src, src_to};
}

/* Frames 1-3 the TCP handshake (other traffic), 4 MPA Request, 5 MPA Reply
 * (CRC, no markers). Frames 6-8: an RDMA Write A->B of three segments of
 * 1000 bytes, STag 0x1000, TO 0x10000. Frame 9: a Read Request A->B for
 * 2500 bytes from STag 0x3000 TO 0x30000 into sink STag 0x2000 TO 0x20000;
 * frames 10-12 its Read Response (1000, 1000, 500 bytes), 10 us apart, the
 * last 30 us after the request. Frame 13 a Send A->B of 100
 * bytes (MSN 1), 14 a Send with Invalidate B->A of 64 bytes invalidating
 * 0x2000 (MSN 1), 15 a Send with SE A->B of 200 bytes (MSN 2), 16 a Send
 * with SE and Invalidate A->B of 50 bytes invalidating 0x4000 (MSN 3);
 * 17, 18 FINs.
 * Expected: one conversation 10.0.0.1:5000 - 10.0.0.2:6000 (pairing TCP),
 * 15 iWARP frames; the Write (3000 bytes, 3 segments, frames 6-8), the
 * Read (2500 bytes, 1 + 3 segments, frames 9-12, latency 30 us) and the
 * four Sends; no anomalies. */
static void story_write_read(struct gen *g, bool v6)
{
    struct conn c;
    struct rdma_iwarp_fpdu f;
    conn_init(&c, 5000, v6);
    mpa_start(g, &c, true, false, true);
    for (unsigned i = 0; i < 3; i++) {
        write_fpdu(&f, 0x1000, 0x10000 + 1000 * i, 1000, i == 2);
        send_fpdu(g, &c, A, &f, 1 * US);
    }
    read_request(&f, 1, 0x2000, 0x20000, 2500, 0x3000, 0x30000);
    send_fpdu(g, &c, A, &f, 5 * US);
    read_response(&f, 0x2000, 0x20000, 1000, false);
    send_fpdu(g, &c, B, &f, 10 * US);
    read_response(&f, 0x2000, 0x20000 + 1000, 1000, false);
    send_fpdu(g, &c, B, &f, 10 * US);
    read_response(&f, 0x2000, 0x20000 + 2000, 500, true);
    send_fpdu(g, &c, B, &f, 10 * US);
    send_msg(&f, RDMA_RDMAP_SEND, 1, 100, 0);
    send_fpdu(g, &c, A, &f, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND_INVALIDATE, 1, 64, 0x2000);
    send_fpdu(g, &c, B, &f, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND_SE, 2, 200, 0);
    send_fpdu(g, &c, A, &f, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND_SE_INVALIDATE, 3, 50, 0x4000);
    send_fpdu(g, &c, A, &f, 1 * US);
    seg(g, &c, A, RDMA_TCP_FIN | RDMA_TCP_ACK, NULL, 0, 1 * US);
    seg(g, &c, B, RDMA_TCP_FIN | RDMA_TCP_ACK, NULL, 0, 1 * US);
}

static void story_write_read4(struct gen *g) { story_write_read(g, false); }
static void story_write_read6(struct gen *g) { story_write_read(g, true); }

/* Markers and CRC, no TCP handshake: frame 1 MPA Request, 2 MPA Reply.
 * Frames 3-5: one Send A->B of 3000 bytes (MSN 1) in one FPDU cut at 1460
 * and 2920 octets. Frames 6-8: an RDMA Write A->B of 500 bytes (STag
 * 0x5000, TO 0) cut after 1 octet (inside ULPDU_Length, or the marker the
 * FPDU may begin with) and after 9. Frame 9: a 10-byte Send (MSN 2) and a
 * Read Request (MSN 1, 100 bytes into sink STag 0x6000) in one segment.
 * Frame 10, 4 us later: the Read Response, 100 bytes.
 * Expected: Send 3000 bytes, 1 segment, frames 3-5; Write 500 bytes,
 * frames 6-8; Send 10 bytes, frame 9; Read 100 bytes, frames 9-10, latency
 * 4 us; no anomalies. */
static void story_split(struct gen *g)
{
    struct conn c;
    struct rdma_iwarp_fpdu f;
    conn_init(&c, 5000, false);
    mpa_start(g, &c, false, true, true);
    send_msg(&f, RDMA_RDMAP_SEND, 1, 3000, 0);
    const size_t cuts3[] = {MSS, 2 * MSS, 0};
    send_split(g, &c, A, &f, cuts3, 1 * US);
    write_fpdu(&f, 0x5000, 0, 500, true);
    const size_t cuts_hdr[] = {1, 9, 0};
    send_split(g, &c, A, &f, cuts_hdr, 1 * US);
    uint8_t buf[512];
    send_msg(&f, RDMA_RDMAP_SEND, 2, 10, 0);
    size_t n = encode(&c, A, 0, &f, buf, sizeof buf);
    read_request(&f, 1, 0x6000, 0, 100, 0x7000, 0x70000);
    n += encode(&c, A, (uint32_t)n, &f, buf + n, sizeof buf - n);
    seg(g, &c, A, RDMA_TCP_ACK, buf, n, 1 * US);
    read_response(&f, 0x6000, 0, 100, true);
    send_fpdu(g, &c, B, &f, 4 * US);
}

/* CRC, no markers, no TCP handshake: frame 1 MPA Request, 2 MPA Reply.
 * Frame 3: Send A->B, 100 bytes (MSN 1). Frame 4: Send A->B (MSN 2) whose
 * CRC is wrong (last octet flipped). Frame 5: RDMA Write A->B, 200 bytes,
 * STag 0x7000; frame 6 the same segment again (a TCP retransmission).
 * Frames 7-8: a Send of 300 bytes (MSN 3) cut in two, the second half
 * captured first (frame 7 held out of order, frame 8 completes it, so the
 * FPDU's first octet is in frame 8). Frame 9: a Send (MSN 4) with a DDP
 * reserved bit set (CRC valid: a malformed FPDU). Frame 10: Read Request
 * A->B, never answered. Frame 11: B terminates the Write: DDP layer,
 * Tagged Buffer Error, Invalid STag, with the Write's DDP header.
 * Expected anomalies: bad MPA CRC (frame 4), TCP retransmission (frame 6),
 * TCP out of order (frame 7), bad frame malformed (frame 9), unanswered
 * request iWARP RDMA Read (frame 10), iWARP Terminate "DDP / Tagged Buffer
 * Error / Invalid STag" of an RDMA Write (frame 11). Messages: the Send of
 * frame 3, the Write (once), the Send of frame 8, the Read (no response). */
static void story_errors(struct gen *g)
{
    struct conn c;
    struct rdma_iwarp_fpdu f;
    uint8_t buf[1024];
    conn_init(&c, 5000, false);
    mpa_start(g, &c, false, false, true);
    send_msg(&f, RDMA_RDMAP_SEND, 1, 100, 0);
    send_fpdu(g, &c, A, &f, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND, 2, 40, 0);
    size_t n = encode(&c, A, 0, &f, buf, sizeof buf);
    buf[n - 1] ^= 0x5a;
    seg(g, &c, A, RDMA_TCP_ACK, buf, n, 1 * US);
    write_fpdu(&f, 0x7000, 0, 200, true);
    n = encode(&c, A, 0, &f, buf, sizeof buf);
    uint32_t seq = c.e[A].seq;
    seg(g, &c, A, RDMA_TCP_ACK, buf, n, 1 * US);
    emit(g, &c, A, RDMA_TCP_ACK, seq, buf, n, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND, 3, 300, 0);
    n = encode(&c, A, 0, &f, buf, sizeof buf);
    seq = c.e[A].seq;
    emit(g, &c, A, RDMA_TCP_ACK, seq + 150, buf + 150, n - 150, 1 * US);
    emit(g, &c, A, RDMA_TCP_ACK, seq, buf, 150, 1 * US);
    c.e[A].seq += (uint32_t)n;
    send_msg(&f, RDMA_RDMAP_SEND, 4, 20, 0);
    f.ddp.rsvd = 1;
    send_fpdu(g, &c, A, &f, 1 * US);
    read_request(&f, 1, 0x8000, 0, 64, 0x9000, 0);
    send_fpdu(g, &c, A, &f, 1 * US);
    rdma_fpdu_set_opcode(&f, RDMA_RDMAP_TERMINATE);
    f.ddp.qn = 2;
    f.ddp.msn = 1;
    f.term = (struct rdma_rdmap_term){1, 1, 0x00, 0, 1, 0, 0};
    f.present |= RDMA_IW_TERM_DDP;
    f.term_ddp_seg_len = 214;
    f.term_ddp = (struct rdma_ddp){1, 1, 0, RDMA_DDP_VERSION, 0x7000, 0, 0, 0, 0};
    f.term_rdmap = (struct rdma_rdmap){RDMA_RDMAP_VERSION, 0, RDMA_RDMAP_WRITE, 0};
    send_fpdu(g, &c, B, &f, 1 * US);
}

/* Two connections between the same hosts, A ports 5001 and 5002, no TCP
 * handshakes. Frame 1 MPA Request on 5001 (markers, CRC), 2 MPA Request on
 * 5002 (neither). Frame 3: a 64-byte RDMA Write on 5001, sent before the
 * capture shows the Reply; frame 4 the Reply on 5001, which releases it.
 * Frame 5 the Reply on 5002. Frame 6: Read Request on 5002 (32 bytes into
 * sink STag 0x200); frame 7: Read Request on 5001 (48 bytes, the same sink
 * STag); frame 8 the Read Response on 5001 (48 bytes), frame 9 on 5002 (32
 * bytes). Frame 10: a 16-byte Send on 5002.
 * Expected: conversation 5001: the Write (requester 10.0.0.1:5001, frame
 * 3), the Read of 48 bytes (frames 7-8); conversation 5002: the Read of 32
 * bytes (frames 6-9), the Send (frame 10); no anomalies. */
static void story_two_conns(struct gen *g)
{
    struct conn c1, c2;
    struct rdma_iwarp_fpdu f;
    struct rdma_mpa_frame m = {0};
    uint8_t buf[64];
    size_t n;
    conn_init(&c1, 5001, false);
    conn_init(&c2, 5002, false);
    struct conn *both[2] = {&c1, &c2};
    for (int i = 0; i < 2; i++) {
        m.kind = RDMA_MPA_REQUEST;
        m.hdr.marker_flag = m.hdr.crc_flag = i == 0;
        m.hdr.rev = 1;
        if (rdma_mpa_frame_encode(&m, buf, sizeof buf, &n) != RDMA_OK)
            die("MPA Request does not encode");
        seg(g, both[i], A, RDMA_TCP_ACK, buf, n, 1 * US);
        both[i]->e[A].fr = (struct rdma_mpa_framing){i == 0, i == 0, both[i]->e[A].seq};
    }
    write_fpdu(&f, 0x100, 0, 64, true);
    send_fpdu(g, &c1, A, &f, 1 * US);
    for (int i = 0; i < 2; i++) {
        m.kind = RDMA_MPA_REPLY;
        m.hdr.marker_flag = m.hdr.crc_flag = i == 0;
        if (rdma_mpa_frame_encode(&m, buf, sizeof buf, &n) != RDMA_OK)
            die("MPA Reply does not encode");
        seg(g, both[i], B, RDMA_TCP_ACK, buf, n, 1 * US);
        both[i]->e[B].fr = (struct rdma_mpa_framing){i == 0, i == 0, both[i]->e[B].seq};
    }
    read_request(&f, 1, 0x200, 0, 32, 0x300, 0);
    send_fpdu(g, &c2, A, &f, 1 * US);
    read_request(&f, 1, 0x200, 0, 48, 0x400, 0);
    send_fpdu(g, &c1, A, &f, 1 * US);
    read_response(&f, 0x200, 0, 48, true);
    send_fpdu(g, &c1, B, &f, 1 * US);
    read_response(&f, 0x200, 0, 32, true);
    send_fpdu(g, &c2, B, &f, 1 * US);
    send_msg(&f, RDMA_RDMAP_SEND, 1, 16, 0);
    send_fpdu(g, &c2, A, &f, 1 * US);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*build)(struct gen *);
    } stories[] = {
        {"iw_write_read", story_write_read4},
        {"iw_write_read6", story_write_read6},
        {"iw_split", story_split},
        {"iw_errors", story_errors},
        {"iw_two_conns", story_two_conns},
    };
    if (argc != 2) {
        fprintf(stderr, "usage: gen_iwarp_stories DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof stories / sizeof stories[0]; i++) {
        char path[4096];
        struct gen g = {.t = 1700000000ull * 1000000000ull};
        snprintf(path, sizeof path, "%s/%s.pcap", argv[1], stories[i].name);
        g.dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
        if (!g.dead || !(g.out = pcap_dump_open(g.dead, path)))
            die(path);
        stories[i].build(&g);
        pcap_dump_close(g.out);
        pcap_close(g.dead);
    }
    return 0;
}
