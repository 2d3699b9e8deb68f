/* test_iwarp.c - the iWARP codec: CRC32c vectors (RFC 3720 B.4), golden
 * FPDUs assembled octet by octet from the RFC layouts, round trips, every
 * prefix truncated, the errors, and TCP reassembly through the stream
 * decoder (split FPDUs, several per segment, retransmission, reordering,
 * a capture joined mid-stream with and without markers).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_iwarp.h"
#include "tcp_headers.h"
#include "../check_run.h"

static uint8_t scratch[RDMA_MPA_MAX_FPDU];

/* ---- CRC32c ---------------------------------------------------------------- */

START_TEST(crc32c_rfc3720_vectors)
{
    uint8_t b[48];
    memset(b, 0, 32);
    ck_assert_uint_eq(rdma_crc32c(b, 32), 0x8a9136aa); /* carried as aa 36 91 8a */
    memset(b, 0xff, 32);
    ck_assert_uint_eq(rdma_crc32c(b, 32), 0x62a8ab43);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    ck_assert_uint_eq(rdma_crc32c(b, 32), 0x46dd794e);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    ck_assert_uint_eq(rdma_crc32c(b, 32), 0x113fdb5c);
    static const uint8_t read10[48] = {
        0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
        0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    ck_assert_uint_eq(rdma_crc32c(read10, 48), 0xd9963a56);
    ck_assert_uint_eq(rdma_crc32c((const uint8_t *)"123456789", 9), 0xe3069283);
}
END_TEST

/* ---- golden FPDUs ---------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_crc(uint8_t *p, size_t covered)
{
    uint32_t c = rdma_crc32c(p, covered);
    for (int i = 0; i < 4; i++)
        p[covered + i] = (uint8_t)(c >> (8 * i)); /* least significant first */
}

/* Send with Invalidate, 5 octets of payload, no markers, CRC:
 * len 0x0017 | 0x41 0x44 | inval | QN 0 | MSN 7 | MO 0 | "hello" | pad 3 | CRC */
static size_t golden_send_inv(uint8_t *g)
{
    memset(g, 0, 64);
    g[0] = 0x00, g[1] = 18 + 5;
    g[2] = 0x41; /* T=0 L=1 DV=1 */
    g[3] = 0x44; /* RV=1 opcode 4 */
    put32(g + 4, 0xdeadbeef);
    put32(g + 8, 0);
    put32(g + 12, 7);
    put32(g + 16, 0);
    memcpy(g + 20, "hello", 5);
    put_crc(g, 28);
    return 32;
}

START_TEST(golden_send_invalidate)
{
    uint8_t g[64], out[64];
    size_t n = golden_send_inv(g), used, len;
    struct rdma_mpa_framing fr = {false, true, 0};
    struct rdma_iwarp_fpdu f;
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 1000, g, n, scratch, &f, &used), RDMA_OK);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(f.ulpdulength, 23);
    ck_assert_uint_eq(f.pad, 3);
    ck_assert(f.crc.present && f.crc.ok);
    ck_assert_uint_eq(f.ddp.tagged_flag, 0);
    ck_assert_uint_eq(f.ddp.last_flag, 1);
    ck_assert_uint_eq(f.rdmap.opcode, RDMA_RDMAP_SEND_INVALIDATE);
    ck_assert_uint_eq(f.rdmap.inval_stag, 0xdeadbeef);
    ck_assert_uint_eq(f.ddp.msn, 7);
    ck_assert_uint_eq(f.payload_len, 5);
    ck_assert(!memcmp(f.payload, "hello", 5));
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 1000, &f, out, sizeof out, &len), RDMA_OK);
    ck_assert_uint_eq(len, n);
    ck_assert(!memcmp(out, g, n));
}
END_TEST

/* RDMA Write at a stream position where a marker is due 8 octets in:
 * len | 0x81 0x40 | STag | [marker 0000 0008] | TO | payload | CRC */
START_TEST(golden_write_with_marker)
{
    uint8_t g[64], out[64];
    memset(g, 0, sizeof g);
    g[0] = 0x00, g[1] = 14 + 4;
    g[2] = 0x81; /* T=1 L=0 DV=1 */
    g[3] = 0x40; /* RDMA Write */
    put32(g + 4, 0x01020304);
    put32(g + 8, 0x00000008); /* marker: reserved 0, FPDUPTR 8 */
    put32(g + 12, 0x0);       /* TO high word */
    put32(g + 16, 0x1000);    /* TO low word */
    memcpy(g + 20, "abcd", 4); /* 2 + 18 octets: no pad */
    put_crc(g, 24);
    size_t n = 28, used, len;
    struct rdma_mpa_framing fr = {true, true, 5000 + 8};
    struct rdma_iwarp_fpdu f;
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 5000, g, n, scratch, &f, &used), RDMA_OK);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(f.nmarkers, 1);
    ck_assert_uint_eq(f.marker_offset[0], 8);
    ck_assert_uint_eq(f.markers[0].marker_fpduptr, 8);
    ck_assert_uint_eq(f.ddp.stag, 0x01020304);
    ck_assert_uint_eq(f.ddp.tagged_offset, 0x1000);
    ck_assert(!memcmp(f.payload, "abcd", 4));
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 5000, &f, out, sizeof out, &len), RDMA_OK);
    ck_assert_uint_eq(len, n);
    ck_assert(!memcmp(out, g, n));
}
END_TEST

/* An MPA Request, revision 2, with the IRD/ORD word (RFC 6581). */
START_TEST(golden_mpa_request_v2)
{
    uint8_t g[64], out[64];
    memcpy(g, "MPA ID Req Frame", 16);
    g[16] = 0xc0; /* M, C */
    g[17] = 2;
    g[18] = 0, g[19] = 4 + 3;
    g[20] = 0x80 | 0x00, g[21] = 0x10; /* P2P, IRD 16 */
    g[22] = 0x40, g[23] = 0x08;        /* RDMA Read RTR, ORD 8 */
    memcpy(g + 24, "abc", 3);
    struct rdma_mpa_frame f;
    size_t used, len;
    ck_assert_int_eq(rdma_mpa_frame_decode(g, 27, &f, &used), RDMA_OK);
    ck_assert_uint_eq(used, 27);
    ck_assert_uint_eq(f.kind, RDMA_MPA_REQUEST);
    ck_assert(f.enhanced);
    ck_assert_uint_eq(f.hdr.marker_flag, 1);
    ck_assert_uint_eq(f.hdr.crc_flag, 1);
    ck_assert_uint_eq(f.enh.peer_to_peer, 1);
    ck_assert_uint_eq(f.enh.ird, 16);
    ck_assert_uint_eq(f.enh.rtr_read, 1);
    ck_assert_uint_eq(f.enh.ord, 8);
    ck_assert_uint_eq(f.private_len, 3);
    ck_assert_int_eq(rdma_mpa_frame_encode(&f, out, sizeof out, &len), RDMA_OK);
    ck_assert_uint_eq(len, 27);
    ck_assert(!memcmp(out, g, 27));
    for (size_t k = 0; k < 27; k++)
        ck_assert_int_eq(rdma_mpa_frame_decode(g, k, &f, &used), RDMA_TRUNCATED);
    g[18] = 0x02, g[19] = 0x01; /* PD_Length 513 */
    ck_assert_int_eq(rdma_mpa_frame_decode(g, 27, &f, &used), RDMA_MALFORMED);
    g[0] = 'X';
    ck_assert_int_eq(rdma_mpa_frame_decode(g, 27, &f, &used), RDMA_UNSUPPORTED);
}
END_TEST

/* ---- round trips ----------------------------------------------------------- */

static uint8_t payload[3000];

/* Every opcode with its headers filled in. */
static void sample_fpdu(struct rdma_iwarp_fpdu *f, unsigned opcode, size_t plen)
{
    rdma_fpdu_set_opcode(f, (uint8_t)opcode);
    f->ddp.last_flag = opcode & 1;
    if (f->ddp.tagged_flag) {
        f->ddp.stag = 0x10000 + opcode;
        f->ddp.tagged_offset = 0x123456789abcull + opcode;
    } else {
        f->ddp.qn = opcode % 4;
        f->ddp.msn = 100 + opcode;
        f->ddp.mo = 4096;
    }
    if (f->op->flags & RDMA_RDMAP_INVALIDATE)
        f->rdmap.inval_stag = 0xabcd0000 + opcode;
    f->rr = (struct rdma_rdmap_rr){1, 2, 3, 4, 5};
    if (opcode == RDMA_RDMAP_TERMINATE) {
        f->term = (struct rdma_rdmap_term){1, 2, 3, 1, 1, 1, 0};
        f->present |= RDMA_IW_TERM_DDP | RDMA_IW_TERM_RR;
        f->term_ddp_seg_len = 77;
        f->term_ddp = (struct rdma_ddp){0, 1, 0, 1, 0, 0, 1, 9, 0};
        f->term_rdmap = (struct rdma_rdmap){1, 0, RDMA_RDMAP_READ_REQUEST, 0};
        f->term_rr = (struct rdma_rdmap_rr){6, 7, 8, 9, 10};
    }
    f->atomic.swap = (struct rdma_rdmap_atomic_swap){0, RDMA_RDMAP_ATOMIC_CMPSWAP, 11, 12, 13, 14, 15, 16, 17};
    f->atomic_resp = (struct rdma_rdmap_atomic_resp){18, 19};
    if (!(f->op->flags & RDMA_RDMAP_NO_PAYLOAD)) {
        f->payload = payload;
        f->payload_len = (uint32_t)plen;
    }
}

START_TEST(round_trip_every_opcode_and_position)
{
    static const size_t sizes[] = {0, 1, 2, 3, 4, 497, 1000, 2999};
    static uint8_t a[8192], b[8192];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 31 + 7);
    for (unsigned opcode = 0; opcode < 12; opcode++) {
        for (unsigned mk = 0; mk < 4; mk++) {
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                for (uint32_t phase = 0; phase < 512; phase += 28) {
                    struct rdma_mpa_framing fr = {mk & 1, mk & 2, 0xfffffe00u};
                    uint32_t seq = fr.origin + phase; /* wraps the sequence space */
                    struct rdma_iwarp_fpdu f, d;
                    size_t na, nb, used;
                    sample_fpdu(&f, opcode, sizes[si]);
                    ck_assert_int_eq(rdma_fpdu_encode(&fr, seq, &f, a, sizeof a, &na), RDMA_OK);
                    ck_assert_int_eq(rdma_fpdu_decode(&fr, seq, a, na, scratch, &d, &used), RDMA_OK);
                    ck_assert_uint_eq(used, na);
                    ck_assert_uint_eq(na % 4, 0);
                    ck_assert_uint_eq(d.present, f.present);
                    ck_assert_uint_eq(d.rdmap.opcode, opcode);
                    ck_assert_uint_eq(d.payload_len, f.payload_len);
                    ck_assert(!d.payload_len || !memcmp(d.payload, payload, d.payload_len));
                    ck_assert_int_eq(rdma_fpdu_encode(&fr, seq, &d, b, sizeof b, &nb), RDMA_OK);
                    ck_assert_uint_eq(nb, na);
                    ck_assert(!memcmp(a, b, na));
                    /* Every prefix is "not yet complete", never a misdecode. */
                    for (size_t k = 0; k < na; k += (na > 64 ? 37 : 1))
                        ck_assert_int_eq(rdma_fpdu_decode(&fr, seq, a, k, scratch, &d, &used),
                                         RDMA_TRUNCATED);
                }
            }
        }
    }
}
END_TEST

START_TEST(every_prefix_truncated)
{
    static uint8_t a[4096];
    struct rdma_mpa_framing fr = {true, true, 0};
    struct rdma_iwarp_fpdu f, d;
    size_t na, used;
    sample_fpdu(&f, RDMA_RDMAP_WRITE, 1500);
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 300, &f, a, sizeof a, &na), RDMA_OK);
    for (size_t k = 0; k < na; k++) {
        ck_assert_int_eq(rdma_fpdu_decode(&fr, 300, a, k, scratch, &d, &used), RDMA_TRUNCATED);
        ck_assert(used == 0 || used == na);
    }
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 300, &f, a, na - 1, &used), RDMA_TRUNCATED);
}
END_TEST

/* ---- errors ----------------------------------------------------------------- */

START_TEST(errors_are_reported)
{
    static uint8_t a[4096];
    struct rdma_mpa_framing fr = {true, true, 0};
    struct rdma_iwarp_fpdu f, d;
    size_t na, used;
    sample_fpdu(&f, RDMA_RDMAP_SEND, 1000);
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 100, &f, a, sizeof a, &na), RDMA_OK);

    a[na - 1] ^= 1;
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 100, a, na, scratch, &d, &used), RDMA_BAD_CHECKSUM);
    ck_assert(!d.crc.ok);
    ck_assert_str_eq(d.reason, "MPA CRC32c mismatch");
    a[na - 1] ^= 1;

    size_t m = (fr.origin - 100u) & 511; /* the marker inside */
    a[m + 3] += 8;
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 100, a, na, scratch, &d, &used), RDMA_MALFORMED);
    ck_assert_str_eq(d.reason, "MPA marker points to no FPDU header");
    a[m + 3] -= 16;
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 100, a, na, scratch, &d, &used), RDMA_MALFORMED);
    ck_assert_str_eq(d.reason, "ULPDU_Length overruns the FPDU a marker points to");
    a[m + 3] += 8;

    f.ddp.rsvd = 2;
    ck_assert_int_eq(rdma_fpdu_encode(&fr, 100, &f, a, sizeof a, &na), RDMA_OK);
    ck_assert_int_eq(rdma_fpdu_decode(&fr, 100, a, na, scratch, &d, &used), RDMA_MALFORMED);
    ck_assert_str_eq(d.reason, "DDP reserved field set");
    ck_assert_uint_eq(d.ddp.rsvd, 2);

    /* A ULPDU too short for its RDMAP header. */
    struct rdma_mpa_framing plain = {false, false, 0};
    uint8_t rr[32] = {0, 18, 0x41, 0x41};
    ck_assert_int_eq(rdma_fpdu_decode(&plain, 0, rr, 24, scratch, &d, &used), RDMA_MALFORMED);
    ck_assert_str_eq(d.reason, "ULPDU shorter than its RDMAP header");
}
END_TEST

START_TEST(names)
{
    ck_assert_str_eq(rdma_rdmap_opcodes[RDMA_RDMAP_SEND_SE_INVALIDATE].name, "Send with SE and Invalidate");
    ck_assert_ptr_null(rdma_rdmap_opcodes[0xc].name);
    ck_assert_str_eq(rdma_term_layer_name(1), "DDP");
    ck_assert_str_eq(rdma_term_etype_name(1, 2), "Untagged Buffer Error");
    ck_assert_str_eq(rdma_term_error_name(1, 2, 5), "DDP Message too long for available buffer");
    ck_assert_str_eq(rdma_term_error_name(2, 0, 2), "MPA CRC Error");
    ck_assert_ptr_null(rdma_term_error_name(0, 1, 0x42));
    ck_assert_str_eq(rdma_rdmap_atomic_op_name(2), "CmpSwap");
    ck_assert_ptr_null(rdma_rdmap_atomic_op_name(7));
}
END_TEST

/* ---- the stream decoder ------------------------------------------------------ */

/* One direction of a connection, as frames. */
struct conn_side {
    uint8_t ip[4];
    uint16_t port;
    uint32_t seq;
};

struct harness {
    struct rdma_iwarp_stream *s;
    struct conn_side side[2];
    uint64_t frame;
    /* what came out */
    unsigned n_mpa, n_fpdu, n_err;
    uint32_t msn[4096];
    unsigned opcode[4096];
    const char *errors[8];
    unsigned sender[4096]; /* the side each PDU came from, by its ends */
    unsigned n_pdu;
    unsigned last_frame_pdus;
    bool last_iwarp;
};

static void harness_init(struct harness *h)
{
    memset(h, 0, sizeof *h);
    h->s = rdma_iwarp_stream_new();
    ck_assert_ptr_nonnull(h->s);
    h->side[0] = (struct conn_side){{192, 168, 0, 1}, 5000, 1000};
    h->side[1] = (struct conn_side){{192, 168, 0, 2}, 6000, 0xffffff00u};
}

/* Which side sent a PDU: its ends must name one side as the sender and the
 * other as the receiver. */
static unsigned sender_of(const struct harness *h, const struct rdma_tcp_ends *e)
{
    ck_assert(!e->ipv6);
    for (unsigned i = 0; i < 2; i++) {
        const struct conn_side *a = &h->side[i], *b = &h->side[i ^ 1];
        if (!memcmp(e->src, a->ip, 4) && e->srcport == a->port) {
            ck_assert_mem_eq(e->dst, b->ip, 4);
            ck_assert_uint_eq(e->dstport, b->port);
            return i;
        }
    }
    ck_abort_msg("the PDU's ends name neither side");
    return 0;
}

static void collect(struct harness *h, const struct rdma_iwarp_pdu *pdu)
{
    h->sender[h->n_pdu++] = sender_of(h, &pdu->ends);
    if (pdu->kind == RDMA_IWARP_PDU_MPA) {
        h->n_mpa++;
    } else if (pdu->kind == RDMA_IWARP_PDU_FPDU) {
        ck_assert_int_eq(pdu->status, RDMA_OK);
        h->msn[h->n_fpdu] = pdu->fpdu.ddp.msn;
        h->opcode[h->n_fpdu++] = pdu->fpdu.rdmap.opcode;
    } else {
        h->errors[h->n_err++] = pdu->reason;
    }
}

/* Send `len` octets of side `from` at sequence `seq` (flags as given). */
static void segment_at(struct harness *h, unsigned from, uint32_t seq, uint16_t flags,
                       const uint8_t *p, size_t len)
{
    const struct conn_side *a = &h->side[from], *b = &h->side[from ^ 1];
    struct rdma_pkt pkt;
    struct rdma_tcp tcp;
    static uint8_t frame[70000];
    size_t n;
    tcp_headers(&pkt, &tcp, false, NULL, NULL, a->ip, b->ip, a->port, b->port);
    tcp.seq_raw = seq;
    tcp.ack_raw = b->seq;
    tcp.flags = flags | RDMA_TCP_ACK;
    ck_assert_int_eq(rdma_tcp_encode(&pkt, &tcp, p, len, frame, sizeof frame, &n), RDMA_OK);
    struct rdma_decode_config cfg;
    struct rdma_pkt d;
    struct rdma_iwarp_seg seg;
    struct rdma_iwarp_pdu pdu;
    rdma_decode_config_init(&cfg);
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
    rdma_iwarp_feed(h->s, &d, frame, ++h->frame, &seg);
    ck_assert(seg.tcp);
    ck_assert_uint_eq(seg.hdr.seq_raw, seq);
    h->last_frame_pdus = 0;
    while (rdma_iwarp_next(h->s, &pdu)) {
        collect(h, &pdu);
        h->last_frame_pdus++;
    }
    h->last_iwarp = seg.iwarp;
}

static void send_seg(struct harness *h, unsigned from, uint16_t flags, const uint8_t *p, size_t len)
{
    segment_at(h, from, h->side[from].seq, flags, p, len);
    h->side[from].seq += (uint32_t)len + ((flags & (RDMA_TCP_SYN | RDMA_TCP_FIN)) ? 1 : 0);
}

static void finish(struct harness *h)
{
    struct rdma_iwarp_pdu pdu;
    while (rdma_iwarp_finish(h->s, &pdu))
        collect(h, &pdu);
    rdma_iwarp_stream_free(h->s);
}

static void mpa_handshake(struct harness *h, bool markers, bool crc)
{
    uint8_t buf[64];
    size_t n;
    struct rdma_mpa_frame f = {0};
    send_seg(h, 0, RDMA_TCP_SYN, 0, 0);
    send_seg(h, 1, RDMA_TCP_SYN, 0, 0);
    f.kind = RDMA_MPA_REQUEST;
    f.hdr.marker_flag = markers;
    f.hdr.crc_flag = crc;
    f.hdr.rev = 1;
    ck_assert_int_eq(rdma_mpa_frame_encode(&f, buf, sizeof buf, &n), RDMA_OK);
    send_seg(h, 0, 0, buf, n);
    f.kind = RDMA_MPA_REPLY;
    ck_assert_int_eq(rdma_mpa_frame_encode(&f, buf, sizeof buf, &n), RDMA_OK);
    send_seg(h, 1, 0, buf, n);
    ck_assert_uint_eq(h->n_mpa, 2);
}

/* Encode `count` Sends of side 0 as one stream starting at its sequence. */
static size_t stream_of_sends(struct harness *h, const struct rdma_mpa_framing *fr, unsigned count,
                              uint8_t *out, size_t *bounds)
{
    size_t len = 0;
    for (unsigned i = 0; i < count; i++) {
        struct rdma_iwarp_fpdu f;
        size_t n;
        sample_fpdu(&f, RDMA_RDMAP_SEND, 100 + 150 * (i % 5));
        f.ddp.msn = i + 1;
        bounds[i] = len;
        ck_assert_int_eq(rdma_fpdu_encode(fr, h->side[0].seq + (uint32_t)len, &f, out + len, 4096, &n),
                         RDMA_OK);
        len += n;
    }
    bounds[count] = len;
    return len;
}

static void assert_msns_in_order(const struct harness *h, unsigned count, uint32_t first)
{
    ck_assert_uint_eq(h->n_fpdu, count);
    for (unsigned i = 0; i < count; i++)
        ck_assert_uint_eq(h->msn[i], first + i);
}

START_TEST(stream_split_and_packed)
{
    static uint8_t st[65536];
    size_t b[11];
    for (unsigned mk = 0; mk < 2; mk++) {
        struct harness h;
        harness_init(&h);
        mpa_handshake(&h, mk, true);
        struct rdma_mpa_framing fr = {mk, true, h.side[0].seq};
        size_t len = stream_of_sends(&h, &fr, 10, st, b);
        /* FPDU 1 and 2 in one segment, FPDU 3 in 3 pieces cut inside the
         * length field and the DDP header, the rest in 100-octet slices. */
        send_seg(&h, 0, 0, st, b[2]);
        ck_assert_uint_eq(h.last_frame_pdus, 2);
        send_seg(&h, 0, 0, st + b[2], 1);
        ck_assert_uint_eq(h.last_frame_pdus, 0);
        ck_assert(h.last_iwarp);
        send_seg(&h, 0, 0, st + b[2] + 1, 9);
        send_seg(&h, 0, 0, st + b[2] + 10, b[3] - b[2] - 10);
        ck_assert_uint_eq(h.last_frame_pdus, 1);
        for (size_t at = b[3]; at < len; at += 100)
            send_seg(&h, 0, 0, st + at, len - at < 100 ? len - at : 100);
        send_seg(&h, 0, RDMA_TCP_FIN, 0, 0);
        finish(&h);
        assert_msns_in_order(&h, 10, 1);
        ck_assert_uint_eq(h.n_err, 0);
    }
}
END_TEST

/* A Send the initiator puts right behind its Request is held until the
 * Reply, so the Reply's frame gives two PDUs from opposite directions; each
 * names the direction it travelled. */
START_TEST(stream_pdus_name_their_direction)
{
    struct harness h;
    harness_init(&h);
    uint8_t buf[64], fp[512];
    size_t n, m;
    struct rdma_mpa_frame f = {0};
    send_seg(&h, 0, RDMA_TCP_SYN, 0, 0);
    send_seg(&h, 1, RDMA_TCP_SYN, 0, 0);
    f.kind = RDMA_MPA_REQUEST;
    f.hdr.crc_flag = true;
    f.hdr.rev = 1;
    ck_assert_int_eq(rdma_mpa_frame_encode(&f, buf, sizeof buf, &n), RDMA_OK);
    send_seg(&h, 0, 0, buf, n);
    struct rdma_mpa_framing fr[2] = {{false, true, h.side[0].seq}, {false, true, 0}};
    struct rdma_iwarp_fpdu send;
    sample_fpdu(&send, RDMA_RDMAP_SEND, 100);
    send.ddp.msn = 1;
    ck_assert_int_eq(rdma_fpdu_encode(&fr[0], h.side[0].seq, &send, fp, sizeof fp, &m), RDMA_OK);
    send_seg(&h, 0, 0, fp, m);
    ck_assert_uint_eq(h.last_frame_pdus, 0);
    f.kind = RDMA_MPA_REPLY;
    ck_assert_int_eq(rdma_mpa_frame_encode(&f, buf, sizeof buf, &n), RDMA_OK);
    send_seg(&h, 1, 0, buf, n);
    ck_assert_uint_eq(h.last_frame_pdus, 2);
    fr[1].origin = h.side[1].seq;
    ck_assert_int_eq(rdma_fpdu_encode(&fr[1], h.side[1].seq, &send, fp, sizeof fp, &m), RDMA_OK);
    send_seg(&h, 1, 0, fp, m);
    finish(&h);
    static const unsigned want[] = {0, 1, 0, 1}; /* Request, Reply, Send, Send */
    ck_assert_uint_eq(h.n_pdu, 4);
    for (unsigned i = 0; i < 4; i++)
        ck_assert_msg(h.sender[i] == want[i], "PDU %u from side %u, want %u", i, h.sender[i], want[i]);
    ck_assert_uint_eq(h.n_fpdu, 2);
    ck_assert_uint_eq(h.n_err, 0);
}
END_TEST

START_TEST(stream_retransmission_and_reordering)
{
    static uint8_t st[65536];
    size_t b[7];
    struct harness h;
    harness_init(&h);
    mpa_handshake(&h, true, true);
    struct rdma_mpa_framing fr = {true, true, h.side[0].seq};
    stream_of_sends(&h, &fr, 6, st, b);
    uint32_t base = h.side[0].seq;
    segment_at(&h, 0, base, 0, st, b[1]);
    segment_at(&h, 0, base, 0, st, b[1]); /* retransmitted whole */
    ck_assert_uint_eq(h.last_frame_pdus, 0);
    segment_at(&h, 0, base + (uint32_t)b[2], 0, st + b[2], b[3] - b[2]); /* ahead of a hole */
    ck_assert_uint_eq(h.last_frame_pdus, 0);
    segment_at(&h, 0, base + (uint32_t)b[4], 0, st + b[4], b[6] - b[4]);
    segment_at(&h, 0, base + (uint32_t)b[1], 0, st + b[1], b[2] - b[1]); /* fills the first hole */
    ck_assert_uint_eq(h.last_frame_pdus, 2);
    /* Overlapping retransmission: half old, half new. */
    size_t mid = b[3] + (b[4] - b[3]) / 2;
    segment_at(&h, 0, base + (uint32_t)b[3], 0, st + b[3], mid - b[3]);
    segment_at(&h, 0, base + (uint32_t)b[3], 0, st + b[3], b[4] - b[3]);
    ck_assert_uint_eq(h.last_frame_pdus, 3);
    finish(&h);
    assert_msns_in_order(&h, 6, 1);
}
END_TEST

/* Joined mid-stream: no SYN, no handshake, the first octets lost. */
static void midstream(bool markers)
{
    static uint8_t st[65536];
    size_t b[21];
    struct harness h;
    harness_init(&h);
    struct rdma_mpa_framing fr = {markers, true, h.side[0].seq};
    size_t len = stream_of_sends(&h, &fr, 20, st, b);
    size_t from = b[2] + 10; /* inside FPDU 3 */
    h.side[0].seq += (uint32_t)from;
    for (size_t at = from; at < len; at += 700)
        send_seg(&h, 0, 0, st + at, len - at < 700 ? len - at : 700);
    send_seg(&h, 0, RDMA_TCP_FIN, 0, 0);
    finish(&h);
    ck_assert_uint_eq(h.n_mpa, 0);
    if (markers) {
        /* From the first FPDU a marker points at, every one after it. */
        ck_assert_uint_gt(h.n_fpdu, 10);
        assert_msns_in_order(&h, h.n_fpdu, 21 - h.n_fpdu);
        ck_assert_uint_eq(h.n_err, 0);
    } else {
        ck_assert_uint_eq(h.n_fpdu, 0);
        ck_assert_uint_eq(h.n_err, 1);
        ck_assert_str_eq(h.errors[0], "no MPA handshake seen");
    }
}

START_TEST(stream_midstream_with_markers) { midstream(true); }
END_TEST

START_TEST(stream_midstream_without_markers) { midstream(false); }
END_TEST

START_TEST(stream_overrun_and_plain_tcp)
{
    static uint8_t st[65536];
    size_t b[3];
    struct harness h;
    harness_init(&h);
    mpa_handshake(&h, false, true);
    struct rdma_mpa_framing fr = {false, true, h.side[0].seq};
    stream_of_sends(&h, &fr, 2, st, b);
    send_seg(&h, 0, 0, st, b[2] - 5); /* the second FPDU lacks its last octets */
    send_seg(&h, 0, RDMA_TCP_FIN, 0, 0);
    ck_assert_uint_eq(h.n_fpdu, 1);
    ck_assert_uint_eq(h.n_err, 1);
    ck_assert_str_eq(h.errors[0], "ULPDU_Length overruns the end of the stream");
    finish(&h);

    /* A connection seen from its SYN that is not MPA stays plain TCP. */
    harness_init(&h);
    send_seg(&h, 0, RDMA_TCP_SYN, 0, 0);
    send_seg(&h, 0, 0, (const uint8_t *)"GET / HTTP/1.0\r\n\r\n", 18);
    ck_assert(!h.last_iwarp);
    finish(&h);
    ck_assert_uint_eq(h.n_err + h.n_fpdu + h.n_mpa, 0);
}
END_TEST

/* The capture lost a segment for good: past the out-of-order limit the
 * decoder goes on after the hole, finding the next FPDU from a marker, or
 * says once that it cannot without them. */
static void capture_gap(bool markers)
{
    enum { COUNT = 4000 };
    static uint8_t st[COUNT * 800];
    static size_t b[COUNT + 1];
    struct harness h;
    harness_init(&h);
    mpa_handshake(&h, markers, true);
    struct rdma_mpa_framing fr = {markers, true, h.side[0].seq};
    size_t len = stream_of_sends(&h, &fr, COUNT, st, b);
    uint32_t base = h.side[0].seq;
    segment_at(&h, 0, base, 0, st, b[1]);
    for (size_t at = b[2]; at < len; at += 1000)
        segment_at(&h, 0, base + (uint32_t)at, 0, st + at, len - at < 1000 ? len - at : 1000);
    finish(&h);
    ck_assert_uint_eq(h.msn[0], 1);
    if (markers) {
        ck_assert_uint_gt(h.n_fpdu, COUNT / 2);
        ck_assert_uint_eq(h.n_err, 0);
        for (unsigned i = 2; i < h.n_fpdu; i++)
            ck_assert_uint_eq(h.msn[i], h.msn[i - 1] + 1);
        ck_assert_uint_eq(h.msn[h.n_fpdu - 1], COUNT);
    } else {
        ck_assert_uint_eq(h.n_fpdu, 1);
        ck_assert_uint_eq(h.n_err, 1);
        ck_assert_str_eq(h.errors[0], "FPDU boundaries lost in a capture gap without markers");
    }
}

START_TEST(stream_gap_with_markers) { capture_gap(true); }
END_TEST

START_TEST(stream_gap_without_markers) { capture_gap(false); }
END_TEST

/* Past max_conns the least recently active connection ages out: an MPA
 * one with an error PDU that names it and says it is about another
 * connection (aged); octets held out of order at the end are reported. */
/* A SYN of another connection, from a third address, fed to h's stream:
 * a new connection that may make an old one age out. */
static void feed_other_syn(struct harness *h)
{
    struct rdma_pkt pkt, d;
    struct rdma_tcp tcp;
    static uint8_t frame[128];
    size_t n;
    const uint8_t other[4] = {10, 9, 9, 9};
    tcp_headers(&pkt, &tcp, false, NULL, NULL, other, h->side[1].ip, 7777, 80);
    tcp.flags = RDMA_TCP_SYN;
    ck_assert_int_eq(rdma_tcp_encode(&pkt, &tcp, NULL, 0, frame, sizeof frame, &n), RDMA_OK);
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
    struct rdma_iwarp_seg seg;
    rdma_iwarp_feed(h->s, &d, frame, ++h->frame, &seg);
}

START_TEST(stream_aged_out_and_held_octets)
{
    struct harness h;
    harness_init(&h);
    struct rdma_iwarp_limits lim = {1, 0, 0};
    rdma_iwarp_stream_set_limits(h.s, &lim);
    mpa_handshake(&h, false, true);
    /* a SYN of another connection, from a third address */
    struct rdma_iwarp_pdu pdu;
    feed_other_syn(&h);
    ck_assert(rdma_iwarp_next(h.s, &pdu));
    ck_assert(pdu.aged);
    ck_assert_uint_eq(pdu.kind, RDMA_IWARP_PDU_ERROR);
    ck_assert_ptr_nonnull(strstr(pdu.reason, "connection aged out"));
    sender_of(&h, &pdu.ends);
    ck_assert(!rdma_iwarp_next(h.s, &pdu));
    struct rdma_iwarp_stats st;
    rdma_iwarp_stream_stats(h.s, &st);
    ck_assert_uint_eq(st.aged_out, 1);
    ck_assert_uint_eq(st.conns, 1);
    rdma_iwarp_stream_free(h.s);

    /* the first FPDU lost, three behind it held to the end */
    enum { COUNT = 4 };
    static uint8_t stream[COUNT * 800];
    static size_t b[COUNT + 1];
    harness_init(&h);
    mpa_handshake(&h, false, true);
    struct rdma_mpa_framing fr = {false, true, h.side[0].seq};
    size_t len = stream_of_sends(&h, &fr, COUNT, stream, b);
    uint32_t base = h.side[0].seq;
    segment_at(&h, 0, base + (uint32_t)b[1], 0, stream + b[1], len - b[1]);
    ck_assert_uint_eq(h.n_fpdu, 0);
    struct rdma_iwarp_pdu last;
    unsigned errors = 0;
    while (rdma_iwarp_finish(h.s, &last)) {
        errors++;
        ck_assert_uint_eq(last.status, RDMA_TRUNCATED);
        ck_assert_uint_eq(sender_of(&h, &last.ends), 0);
        char want[64];
        snprintf(want, sizeof want, "%zu octets after a gap never delivered", len - b[1]);
        ck_assert_str_eq(last.reason, want);
    }
    ck_assert_uint_eq(errors, 1);
    rdma_iwarp_stream_free(h.s);
}
END_TEST

/* A connection without a segment for longer than idle_ns of capture time
 * ages out as one past max_conns does, and says which; one that is active
 * stays (before: only the count aged connections out). */
START_TEST(stream_aged_out_idle)
{
    struct harness h;
    harness_init(&h);
    struct rdma_iwarp_limits lim = {0, 0, 5000};
    rdma_iwarp_stream_set_limits(h.s, &lim);
    rdma_iwarp_stream_set_time(h.s, 1000000);
    mpa_handshake(&h, false, true);
    rdma_iwarp_stream_set_time(h.s, 1004000); /* 4 us later: still in time */
    send_seg(&h, 0, 0, NULL, 0);
    struct rdma_iwarp_stats st;
    rdma_iwarp_stream_stats(h.s, &st);
    ck_assert_uint_eq(st.conns, 1);
    ck_assert_uint_eq(st.aged_idle, 0);
    /* a SYN of another connection 5.001 us after the last segment */
    rdma_iwarp_stream_set_time(h.s, 1009001);
    rdma_iwarp_stream_set_time(h.s, 1000000); /* time does not go back */
    struct rdma_iwarp_pdu pdu;
    feed_other_syn(&h);
    ck_assert(rdma_iwarp_next(h.s, &pdu));
    ck_assert(pdu.aged);
    ck_assert_str_eq(pdu.reason,
                     "connection aged out, 0 octets held dropped (no segment for more than 5000 ns of capture time)");
    ck_assert(!rdma_iwarp_next(h.s, &pdu));
    rdma_iwarp_stream_stats(h.s, &st);
    ck_assert_uint_eq(st.aged_idle, 1);
    ck_assert_uint_eq(st.aged_out, 0);
    ck_assert_uint_eq(st.conns, 1);
    rdma_iwarp_stream_free(h.s);

    /* RDMA_IWARP_NEVER: an hour idle is nothing */
    harness_init(&h);
    lim.idle_ns = RDMA_IWARP_NEVER;
    rdma_iwarp_stream_set_limits(h.s, &lim);
    mpa_handshake(&h, false, true);
    rdma_iwarp_stream_set_time(h.s, UINT64_C(3600000000000));
    feed_other_syn(&h);
    ck_assert(!rdma_iwarp_next(h.s, &pdu));
    rdma_iwarp_stream_stats(h.s, &st);
    ck_assert_uint_eq(st.conns, 2);
    rdma_iwarp_stream_free(h.s);
}
END_TEST

/* ---- IPv6 extension headers ------------------------------------------------ */

/* One IPv6 segment from a to b (side 0: port 5000 to 6000), with the
 * extension headers `ext` (IPv6 Next Header values: Hop-by-Hop 0,
 * Destination Options 60, Fragment 44) between IPv6 and TCP, each 8
 * octets; `frag` is the Fragment header's offset and M word. */
static size_t v6_segment(unsigned from, uint32_t seq, uint16_t flags, const uint8_t *p, size_t len,
                         const uint8_t *ext, unsigned next, uint16_t frag, uint8_t *frame, size_t cap)
{
    static const uint8_t ip[2][16] = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}, {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
    struct rdma_pkt pkt;
    struct rdma_tcp tcp;
    uint8_t tmp[4096];
    size_t n;
    tcp_headers(&pkt, &tcp, true, NULL, NULL, ip[from], ip[from ^ 1], from ? 6000 : 5000, from ? 5000 : 6000);
    tcp.seq_raw = seq;
    tcp.flags = flags | RDMA_TCP_ACK;
    ck_assert_int_eq(rdma_tcp_encode(&pkt, &tcp, p, len, tmp, sizeof tmp, &n), RDMA_OK);
    size_t l4 = 14 + 40, add = 8 * (size_t)next;
    ck_assert_uint_le(n + add, cap);
    memcpy(frame, tmp, l4);
    for (unsigned i = 0; i < next; i++) {
        uint8_t *h = frame + l4 + 8 * i;
        memset(h, 0, 8);
        h[0] = i + 1 < next ? ext[i + 1] : RDMA_IP_PROTO_TCP;
        if (ext[i] == 44) {
            h[2] = (uint8_t)(frag >> 8), h[3] = (uint8_t)frag;
            h[7] = 0x5a; /* identification */
        } else {
            h[2] = 1, h[3] = 4; /* PadN over the rest */
        }
    }
    memcpy(frame + l4 + add, tmp + l4, n - l4);
    frame[14 + 6] = next ? ext[0] : RDMA_IP_PROTO_TCP;
    uint16_t plen = (uint16_t)((frame[18] << 8 | frame[19]) + add);
    frame[18] = (uint8_t)(plen >> 8), frame[19] = (uint8_t)plen;
    return n + add;
}

/* iWARP behind IPv6 extension headers is decoded as RoCEv2 behind them is
 * (before: rdma_tcp_decode looked only at the fixed header's Next Header,
 * so such segments were plain IPv6 to decode and replay). */
START_TEST(tcp_behind_ipv6_extension_headers)
{
    static const uint8_t ext[] = {0, 60, 44};
    static uint8_t frame[4096];
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    struct rdma_pkt d;
    struct rdma_tcp tcp;
    const uint8_t *data;
    uint32_t plen;
    size_t n = v6_segment(0, 77, 0, (const uint8_t *)"abcdefgh", 8, ext, 3, 0, frame, sizeof frame);
    ck_assert_int_eq(rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d), RDMA_OK);
    ck_assert(rdma_tcp_decode(&d, frame, &tcp, &data, &plen));
    ck_assert_uint_eq(tcp.srcport, 5000);
    ck_assert_uint_eq(tcp.dstport, 6000);
    ck_assert_uint_eq(tcp.seq_raw, 77);
    ck_assert_uint_eq(plen, 8);
    ck_assert(!memcmp(data, "abcdefgh", 8));

    /* not a whole datagram: a fragment with M set, or one at an offset */
    n = v6_segment(0, 77, 0, (const uint8_t *)"abcdefgh", 8, ext, 3, 1, frame, sizeof frame);
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
    ck_assert(!rdma_tcp_decode(&d, frame, &tcp, &data, &plen));
    n = v6_segment(0, 77, 0, (const uint8_t *)"abcdefgh", 8, ext, 3, 8, frame, sizeof frame);
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
    ck_assert(!rdma_tcp_decode(&d, frame, &tcp, &data, &plen));
    /* an extension header running past the payload length */
    n = v6_segment(0, 77, 0, (const uint8_t *)"abcdefgh", 8, ext, 1, 0, frame, sizeof frame);
    frame[54 + 1] = 200;
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
    ck_assert(!rdma_tcp_decode(&d, frame, &tcp, &data, &plen));
    /* cut inside the extension headers */
    n = v6_segment(0, 77, 0, (const uint8_t *)"abcdefgh", 8, ext, 3, 0, frame, sizeof frame);
    rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, 60, n, &d);
    ck_assert(!rdma_tcp_decode(&d, frame, &tcp, &data, &plen));

    /* a whole connection behind them: handshake, MPA, one Send */
    struct rdma_iwarp_stream *st = rdma_iwarp_stream_new();
    ck_assert_ptr_nonnull(st);
    uint32_t seq[2] = {1000, 50000};
    uint8_t buf[512];
    size_t len;
    unsigned mpa = 0, fpdu = 0, other = 0;
    uint64_t fn = 0;
    for (unsigned step = 0; step < 5; step++) {
        unsigned from = step == 1 || step == 3;
        uint16_t flags = step < 2 ? RDMA_TCP_SYN : 0;
        len = 0;
        if (step == 2 || step == 3) {
            struct rdma_mpa_frame f = {0};
            f.kind = step == 2 ? RDMA_MPA_REQUEST : RDMA_MPA_REPLY;
            f.hdr.crc_flag = true;
            f.hdr.rev = 1;
            ck_assert_int_eq(rdma_mpa_frame_encode(&f, buf, sizeof buf, &len), RDMA_OK);
        } else if (step == 4) {
            struct rdma_iwarp_fpdu f;
            struct rdma_mpa_framing fr = {false, true, 0};
            sample_fpdu(&f, RDMA_RDMAP_SEND, 100);
            f.ddp.msn = 1;
            ck_assert_int_eq(rdma_fpdu_encode(&fr, seq[0], &f, buf, sizeof buf, &len), RDMA_OK);
        }
        n = v6_segment(from, seq[from], flags, buf, len, ext, 3, 0, frame, sizeof frame);
        seq[from] += (uint32_t)len + (flags ? 1 : 0);
        rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d);
        struct rdma_iwarp_seg seg;
        struct rdma_iwarp_pdu pdu;
        rdma_iwarp_feed(st, &d, frame, ++fn, &seg);
        ck_assert(seg.tcp);
        while (rdma_iwarp_next(st, &pdu)) {
            ck_assert(pdu.ends.ipv6);
            if (pdu.kind == RDMA_IWARP_PDU_MPA)
                mpa++;
            else if (pdu.kind == RDMA_IWARP_PDU_FPDU && pdu.status == RDMA_OK &&
                     pdu.fpdu.rdmap.opcode == RDMA_RDMAP_SEND)
                fpdu++;
            else
                other++;
        }
    }
    rdma_iwarp_stream_free(st);
    ck_assert_uint_eq(mpa, 2);
    ck_assert_uint_eq(fpdu, 1);
    ck_assert_uint_eq(other, 0);
}
END_TEST

/* ---- TCP options (RFC 9293 3.1, RFC 7323, RFC 2018) ------------------------ */

/* A SYN's options as Linux lays them out without timestamps, octet for
 * octet: MSS 1460, NOP NOP SACK-permitted, NOP window scale 7. */
START_TEST(tcp_options_golden_syn)
{
    static const uint8_t want[] = {2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7};
    struct rdma_tcp_options o = {.mss = 1460, .sack_perm = true, .has_wscale = true, .wscale = 7}, d;
    uint8_t out[RDMA_TCP_MAX_OPTIONS];
    size_t n = rdma_tcp_options_encode(&o, out);
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(out, want, n);
    ck_assert_int_eq(rdma_tcp_options_decode(out, n, &d), RDMA_OK);
    ck_assert_int_eq(memcmp(&o, &d, sizeof o), 0);
}
END_TEST

/* SACK blocks: encode -> decode -> encode gives the same octets, for 1 to
 * 4 blocks, and with MSS and window scale taking room a fourth no longer fits. */
START_TEST(tcp_options_sack_round_trip)
{
    for (unsigned nb = 1; nb <= RDMA_TCP_MAX_SACK; nb++) {
        struct rdma_tcp_options o = {.nsack = (uint8_t)nb}, d;
        for (unsigned b = 0; b < nb; b++) {
            o.sack[b][0] = 0xfffff000u + 3000 * b; /* across the wrap */
            o.sack[b][1] = o.sack[b][0] + 1460;
        }
        uint8_t out[RDMA_TCP_MAX_OPTIONS], again[RDMA_TCP_MAX_OPTIONS];
        size_t n = rdma_tcp_options_encode(&o, out);
        ck_assert_uint_eq(n, 4 + 8 * nb);
        ck_assert_uint_eq(n % 4, 0);
        ck_assert_int_eq(rdma_tcp_options_decode(out, n, &d), RDMA_OK);
        ck_assert_int_eq(memcmp(&o, &d, sizeof o), 0);
        ck_assert_uint_eq(rdma_tcp_options_encode(&d, again), n);
        ck_assert_mem_eq(out, again, n);
    }
    struct rdma_tcp_options o = {.mss = 536, .has_wscale = true, .nsack = 4}, d;
    uint8_t out[RDMA_TCP_MAX_OPTIONS];
    size_t n = rdma_tcp_options_encode(&o, out);
    ck_assert_uint_le(n, RDMA_TCP_MAX_OPTIONS);
    ck_assert_int_eq(rdma_tcp_options_decode(out, n, &d), RDMA_OK);
    ck_assert_uint_eq(d.nsack, 3);
}
END_TEST

START_TEST(tcp_options_malformed)
{
    static const uint8_t runs_past[] = {2, 4, 5};           /* MSS cut short */
    static const uint8_t bad_len[] = {2, 3, 5, 1};          /* MSS must be 4 long */
    static const uint8_t zero_len[] = {8, 0, 1, 1};         /* a length below 2 */
    static const uint8_t sack_odd[] = {5, 6, 0, 0, 0, 1};   /* half a block */
    static const uint8_t unknown[] = {8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0}; /* timestamps: skipped */
    struct rdma_tcp_options o;
    ck_assert_int_eq(rdma_tcp_options_decode(runs_past, sizeof runs_past, &o), RDMA_MALFORMED);
    ck_assert_int_eq(rdma_tcp_options_decode(bad_len, sizeof bad_len, &o), RDMA_MALFORMED);
    ck_assert_int_eq(rdma_tcp_options_decode(zero_len, sizeof zero_len, &o), RDMA_MALFORMED);
    ck_assert_int_eq(rdma_tcp_options_decode(sack_odd, sizeof sack_odd, &o), RDMA_MALFORMED);
    ck_assert_int_eq(rdma_tcp_options_decode(unknown, sizeof unknown, &o), RDMA_OK);
    ck_assert_uint_eq(o.mss, 0);
}
END_TEST

/* A segment with options built by the encoder decodes to the same header,
 * options and payload, its checksum is good, and one flipped bit anywhere
 * in the segment makes it bad (RFC 9293 3.1). */
START_TEST(tcp_segment_with_options_round_trip)
{
    static const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    static const uint8_t a6[16] = {0xfd, [15] = 1}, b6[16] = {0xfd, [15] = 2};
    for (int v6 = 0; v6 < 2; v6++) {
        struct rdma_pkt pkt, d;
        struct rdma_tcp tcp, th;
        tcp_headers(&pkt, &tcp, v6, NULL, NULL, v6 ? a6 : a, v6 ? b6 : b, 1024, 1025);
        tcp.seq_raw = 0x12345678;
        tcp.ack_raw = 0x9abcdef0;
        tcp.flags = RDMA_TCP_ACK | RDMA_TCP_ECE;
        tcp.window_size_value = 512;
        struct rdma_tcp_options o = {.nsack = 2, .sack = {{100, 200}, {300, 400}}}, od;
        uint8_t opts[RDMA_TCP_MAX_OPTIONS], data[301], frame[512];
        for (size_t i = 0; i < sizeof data; i++)
            data[i] = (uint8_t)(i * 7);
        size_t optlen = rdma_tcp_options_encode(&o, opts), n;
        ck_assert_int_eq(rdma_tcp_encode_opts(&pkt, &tcp, opts, optlen, data, sizeof data, frame,
                                              sizeof frame, &n), RDMA_OK);
        struct rdma_decode_config cfg;
        rdma_decode_config_init(&cfg);
        ck_assert_int_eq(rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, n, n, &d), RDMA_OK);
        const uint8_t *p;
        uint32_t len;
        ck_assert(rdma_tcp_decode(&d, frame, &th, &p, &len));
        ck_assert_uint_eq(len, sizeof data);
        ck_assert_mem_eq(p, data, len);
        ck_assert_uint_eq(th.doff, (20 + optlen) / 4);
        ck_assert_uint_eq(th.flags, tcp.flags);
        ck_assert_uint_eq(th.seq_raw, tcp.seq_raw);
        ck_assert_uint_eq(th.ack_raw, tcp.ack_raw);
        ck_assert_int_eq(rdma_tcp_options_decode(p - optlen, optlen, &od), RDMA_OK);
        ck_assert_int_eq(memcmp(&o, &od, sizeof o), 0);
        ck_assert(rdma_tcp_checksum_ok(&d, frame));
        size_t l4 = 14 + (v6 ? 40 : 20);
        for (size_t i = l4; i < l4 + 20 + optlen + len; i += 37) {
            frame[i] ^= 0x10;
            ck_assert(!rdma_tcp_checksum_ok(&d, frame));
            frame[i] ^= 0x10;
        }
        ck_assert_int_eq(rdma_tcp_encode_opts(&pkt, &tcp, opts, 3, data, 1, frame, sizeof frame, &n),
                         RDMA_MALFORMED);
    }
}
END_TEST

static Suite *iwarp_suite(void)
{
    Suite *s = suite_create("iwarp");
    TCase *c = tcase_create("codec");
    tcase_set_timeout(c, 60);
    tcase_add_test(c, crc32c_rfc3720_vectors);
    tcase_add_test(c, golden_send_invalidate);
    tcase_add_test(c, golden_write_with_marker);
    tcase_add_test(c, golden_mpa_request_v2);
    tcase_add_test(c, round_trip_every_opcode_and_position);
    tcase_add_test(c, every_prefix_truncated);
    tcase_add_test(c, errors_are_reported);
    tcase_add_test(c, names);
    tcase_add_test(c, tcp_options_golden_syn);
    tcase_add_test(c, tcp_options_sack_round_trip);
    tcase_add_test(c, tcp_options_malformed);
    tcase_add_test(c, tcp_segment_with_options_round_trip);
    suite_add_tcase(s, c);
    TCase *r = tcase_create("reassembly");
    tcase_set_timeout(r, 60);
    tcase_add_test(r, stream_split_and_packed);
    tcase_add_test(r, stream_retransmission_and_reordering);
    tcase_add_test(r, stream_pdus_name_their_direction);
    tcase_add_test(r, stream_midstream_with_markers);
    tcase_add_test(r, stream_midstream_without_markers);
    tcase_add_test(r, stream_overrun_and_plain_tcp);
    tcase_add_test(r, stream_gap_with_markers);
    tcase_add_test(r, stream_gap_without_markers);
    tcase_add_test(r, stream_aged_out_and_held_octets);
    tcase_add_test(r, tcp_behind_ipv6_extension_headers);
    tcase_add_test(r, stream_aged_out_idle);
    suite_add_tcase(s, r);
    return s;
}

int main(void) { return check_run(iwarp_suite()); }
