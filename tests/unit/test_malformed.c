/* test_malformed.c - frames with one thing wrong: each gives the status
 * that names it, with a reason. Damaged copies of the golden frames are
 * resealed (checksums and CRCs recomputed) unless the damage is the CRC.
 * Also: which bytes the ICRC covers, byte by byte, against IBA 7.8.1 and
 * annex A17.3.3, and reserved opcodes, which carry no extended headers.
 */
#include <stdio.h>
#include <string.h>

#include "golden.h"

static void reseal(enum golden_id id, uint8_t *buf)
{
    const struct golden *g = &goldens[id];
    unit_seal(g->crc, buf, g->l3, golden_end(g));
}

static void expect_status(unsigned linktype, const uint8_t *buf, size_t len,
                          enum rdma_status want, struct rdma_pkt *p, const char *what)
{
    enum rdma_status st = unit_decode(linktype, buf, len, len, p);
    ck_assert_msg(st == want, "%s: %s (%s), want %s", what, rdma_status_name(st),
                  p->reason ? p->reason : "no reason", rdma_status_name(want));
    if (want != RDMA_OK)
        ck_assert_msg(p->reason != NULL, "%s: no reason given", what);
}

/* Decode golden `id` after setting byte `off` to `value` and resealing. */
static void expect_patched(enum golden_id id, size_t off, uint8_t value, enum rdma_status want,
                           struct rdma_pkt *p, uint8_t *buf, const char *what)
{
    size_t len = golden_frame(id, buf);
    ck_assert_uint_lt(off, len);
    buf[off] = value;
    reseal(id, buf);
    expect_status(goldens[id].linktype, buf, len, want, p, what);
}

/* G_WRITE_ONLY: Ethernet 0-13, IPv4 14-33, UDP 34-41, BTH 42-53, RETH 54-69,
 * payload 70-74, pad 75-77, ICRC 78-81. */
#define W_IP 14
#define W_UDP 34
#define W_BTH 42
#define W_PAYLOAD 70

START_TEST(udp_length_beyond_ip_length)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    /* 48 -> 52: four bytes more than the IPv4 total length leaves */
    expect_patched(G_WRITE_ONLY, W_UDP + 5, 52, RDMA_MALFORMED, &p, buf, "UDP length 52");
    ck_assert(!(p.present & RDMA_HDR_BTH));
    expect_patched(G_WRITE_ONLY, W_UDP + 5, 7, RDMA_MALFORMED, &p, buf, "UDP length 7");
}
END_TEST

START_TEST(ipv4_header_length_below_5)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    expect_patched(G_WRITE_ONLY, W_IP, 0x44, RDMA_MALFORMED, &p, buf, "IHL 4");
    ck_assert(!(p.present & RDMA_HDR_UDP));
    expect_patched(G_WRITE_ONLY, W_IP, 0x40, RDMA_MALFORMED, &p, buf, "IHL 0");
    expect_patched(G_WRITE_ONLY, W_IP, 0x65, RDMA_MALFORMED, &p, buf, "version 6 in IPv4");
}
END_TEST

START_TEST(length_fields_beyond_the_frame)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    /* IPv4 total length 68 -> 72 */
    expect_patched(G_WRITE_ONLY, W_IP + 3, 72, RDMA_MALFORMED, &p, buf, "IPv4 total length");
    /* IPv6 payload length 36 -> 40 */
    expect_patched(G_IPV6_SEND_INV, 14 + 5, 40, RDMA_MALFORMED, &p, buf, "IPv6 payload length");
    /* RoCEv1 GRH PayLen 44 -> 48 */
    expect_patched(G_ROCEV1_CMPSWAP, 14 + 5, 48, RDMA_MALFORMED, &p, buf, "GRH PayLen");
}
END_TEST

START_TEST(lrh_packet_length_beyond_frame)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    /* PktLen 7 -> 8 words: 32 bytes and the VCRC do not fit in 30 */
    expect_patched(G_IB_ACK, 5, 8, RDMA_MALFORMED, &p, buf, "PktLen 8");
    ck_assert(!(p.present & RDMA_HDR_BTH));
    /* PktLen 1 word ends inside the LRH itself */
    expect_patched(G_IB_ACK, 5, 1, RDMA_MALFORMED, &p, buf, "PktLen 1");
}
END_TEST

START_TEST(rocev1_grh_next_header)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    /* NxtHdr 0x1b -> 0x11 (UDP): not an IBA transport */
    expect_patched(G_ROCEV1_CMPSWAP, 14 + 6, 0x11, RDMA_MALFORMED, &p, buf, "NxtHdr 0x11");
    ck_assert(p.present & RDMA_HDR_GRH);
    ck_assert(!(p.present & RDMA_HDR_BTH));
}
END_TEST

/* Encode a decoded golden frame with another payload, then decode it: the
 * lengths and CRCs are right, the payload is what is wrong. */
static void expect_with_payload(enum golden_id id, const uint8_t *payload, uint32_t len,
                                enum rdma_status want, const char *what)
{
    uint8_t buf[UNIT_FRAME_MAX], out[UNIT_FRAME_MAX];
    size_t n = golden_frame(id, buf), out_len;
    struct rdma_pkt p;
    ck_assert_int_eq(unit_decode(goldens[id].linktype, buf, n, n, &p), RDMA_OK);
    p.payload = payload;
    p.payload_len = len;
    ck_assert_int_eq(rdma_encode(&p, out, sizeof out, &out_len), RDMA_OK);
    expect_status(goldens[id].linktype, out, out_len, want, &p, what);
    ck_assert_msg(p.icrc.present && p.icrc.ok, "%s: ICRC", what);
    ck_assert_uint_eq(p.payload_len, len);
}

START_TEST(cnp_without_its_16_bytes)
{
    static const uint8_t zeros[24];
    expect_with_payload(G_CNP, zeros, 16, RDMA_OK, "CNP, 16 bytes");
    expect_with_payload(G_CNP, zeros, 0, RDMA_MALFORMED, "CNP, no bytes");
    expect_with_payload(G_CNP, zeros, 8, RDMA_MALFORMED, "CNP, 8 bytes");
    expect_with_payload(G_CNP, zeros, 24, RDMA_MALFORMED, "CNP, 24 bytes");
}
END_TEST

START_TEST(payload_on_an_ack)
{
    expect_with_payload(G_QINQ_ACK, (const uint8_t *)"abcd", 4, RDMA_MALFORMED, "ACK + 4");
    expect_with_payload(G_QINQ_ACK, (const uint8_t *)"a", 1, RDMA_MALFORMED, "ACK + 1");
    expect_with_payload(G_SLL2_READ, (const uint8_t *)"abcd", 4, RDMA_MALFORMED,
                        "READ Request + 4");
    expect_with_payload(G_IB_ATOMIC_ACK, (const uint8_t *)"abcd", 4, RDMA_MALFORMED,
                        "ATOMIC Acknowledge + 4");
}
END_TEST

START_TEST(pad_count_on_an_ack)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    /* BTH byte 1 of the native ACK: PadCnt 0 -> 1 */
    expect_patched(G_IB_ACK, 8 + 1, 0x10, RDMA_MALFORMED, &p, buf, "ACK with PadCnt 1");
}
END_TEST

/* G_QINQ_ACK with `extra` more tags (802.1Q, PCP 1, VID 10) after its
 * C-tag, into out; returns the frame's length. */
static size_t more_tags(uint8_t *out, unsigned extra)
{
    const struct golden *g = &goldens[G_QINQ_ACK];
    uint8_t two[UNIT_FRAME_MAX];
    size_t len = golden_frame(G_QINQ_ACK, two);
    static const uint8_t tag[4] = {0x20, 0x0a, 0x08, 0x00};
    memcpy(out, two, g->l3);
    out[g->l3 - 2] = 0x81; /* the C-tag's EtherType now announces a tag */
    out[g->l3 - 1] = 0x00;
    for (unsigned i = 0; i < extra; i++) {
        memcpy(out + g->l3 + 4 * i, tag, sizeof tag);
        if (i + 1 < extra) {
            out[g->l3 + 4 * i + 2] = 0x81;
            out[g->l3 + 4 * i + 3] = 0x00;
        }
    }
    memcpy(out + g->l3 + 4 * extra, two + g->l3, len - g->l3);
    unit_seal(g->crc, out, g->l3 + 4 * extra, len + 4 * extra);
    return len + 4 * extra;
}

START_TEST(third_vlan_tag)
{
    /* up to RDMA_MAX_VLAN (20) tags RoCE behind them is decoded, as
     * tshark 4.0 decodes it (a 21st tag stops it too) */
    const struct golden *g = &goldens[G_QINQ_ACK];
    uint8_t frame[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    size_t len = more_tags(frame, 1);
    expect_status(g->linktype, frame, len, RDMA_OK, &p, "three tags");
    ck_assert_uint_eq(p.nvlan, 3);
    ck_assert(p.present & RDMA_HDR_IP);
    len = more_tags(frame, RDMA_MAX_VLAN - 2);
    expect_status(g->linktype, frame, len, RDMA_OK, &p, "twenty tags");
    ck_assert_uint_eq(p.nvlan, RDMA_MAX_VLAN);
    len = more_tags(frame, RDMA_MAX_VLAN - 1);
    expect_status(g->linktype, frame, len, RDMA_UNSUPPORTED, &p, "twenty-one tags");
    ck_assert_uint_eq(p.nvlan, RDMA_MAX_VLAN);
    ck_assert(!(p.present & RDMA_HDR_IP));
}
END_TEST

START_TEST(pfc_enable_vector_upper_byte)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    expect_patched(G_PFC, 14 + 2, 0x01, RDMA_MALFORMED, &p, buf, "enbv 0x01a5");
    ck_assert_uint_eq(p.proto, RDMA_PROTO_PFC);
}
END_TEST

START_TEST(unknown_link_type)
{
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame(G_WRITE_ONLY, buf);
    struct rdma_pkt p;
    expect_status(105 /* IEEE 802.11 */, buf, len, RDMA_UNSUPPORTED, &p, "link type 105");
}
END_TEST

/* ---- CRCs and checksums --------------------------------------------------- */

static void fix_ipv4_checksum(uint8_t *ip)
{
    ip[10] = ip[11] = 0;
    uint16_t c = (uint16_t)~ref_fold(ref_sum16(0, ip, 20));
    ip[10] = (uint8_t)(c >> 8);
    ip[11] = (uint8_t)c;
}

static void fix_vcrc(const struct golden *g, uint8_t *buf)
{
    size_t end = golden_end(g);
    uint16_t v = ref_vcrc(buf + g->l3, end - g->l3);
    buf[end] = (uint8_t)v;
    buf[end + 1] = (uint8_t)(v >> 8);
}

START_TEST(flipped_icrc_byte)
{
    const struct golden *g = &goldens[_i];
    if (g->crc == UNIT_CRC_NONE) {
        uint8_t buf[UNIT_FRAME_MAX];
        size_t len = golden_frame((enum golden_id)_i, buf);
        struct rdma_pkt p;
        expect_status(g->linktype, buf, len, RDMA_OK, &p, g->name);
        ck_assert(!p.icrc.present);
        return;
    }
    for (size_t k = 1; k <= 4; k++) {
        uint8_t buf[UNIT_FRAME_MAX];
        size_t len = golden_frame((enum golden_id)_i, buf);
        buf[golden_end(g) - k] ^= 0x01;
        if (g->crc == UNIT_CRC_IB)
            fix_vcrc(g, buf); /* the VCRC covers the ICRC */
        struct rdma_pkt p;
        expect_status(g->linktype, buf, len, RDMA_BAD_ICRC, &p, g->name);
        ck_assert(p.icrc.present && !p.icrc.ok);
        ck_assert_uint_ne(p.icrc.value, p.icrc.computed);
        if (g->crc == UNIT_CRC_IB)
            ck_assert(p.vcrc.ok);
    }
}
END_TEST

START_TEST(flipped_vcrc_byte)
{
    static const enum golden_id ib[] = {G_IB_ACK, G_IB_ATOMIC_ACK};
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < 2; k++) {
            uint8_t buf[UNIT_FRAME_MAX];
            size_t len = golden_frame(ib[i], buf);
            buf[len - 2 + k] ^= 0x80;
            struct rdma_pkt p;
            expect_status(RDMA_LINKTYPE_INFINIBAND, buf, len, RDMA_BAD_VCRC, &p,
                          goldens[ib[i]].name);
            ck_assert(p.icrc.ok);
            ck_assert(p.vcrc.present && !p.vcrc.ok);
        }
    }
}
END_TEST

START_TEST(bad_ipv4_header_checksum)
{
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame(G_WRITE_ONLY, buf);
    buf[W_IP + 11] ^= 0x01;
    struct rdma_pkt p;
    expect_status(RDMA_LINKTYPE_ETHERNET, buf, len, RDMA_BAD_CHECKSUM, &p, "IPv4 checksum");
    ck_assert(!p.ip_checksum_ok);
    /* The rest of the frame still decodes: the ICRC does not cover it. */
    ck_assert(p.present & RDMA_HDR_RETH);
    ck_assert(p.icrc.ok);
}
END_TEST

/* One byte changed under the ICRC: a variant field (set to ones in the CRC
 * model) leaves the ICRC valid, anything else breaks it. The IPv4 checksum
 * and the VCRC are recomputed, since they cover every byte. */
static const struct flip {
    enum golden_id id;
    size_t off;
    uint8_t mask;
    bool variant;
    const char *what;
} flips[] = {
    {G_WRITE_ONLY, 0, 0x01, true, "Ethernet destination (not covered)"},
    {G_WRITE_ONLY, W_IP + 1, 0xfc, true, "IPv4 DSCP"},
    {G_WRITE_ONLY, W_IP + 1, 0x03, true, "IPv4 ECN"},
    {G_WRITE_ONLY, W_IP + 8, 0xff, true, "IPv4 TTL"},
    {G_WRITE_ONLY, W_UDP + 7, 0x5a, true, "UDP checksum"},
    {G_WRITE_ONLY, W_BTH + 4, 0xc0, true, "BTH FECN and BECN"},
    {G_WRITE_ONLY, W_BTH + 4, 0x3f, true, "BTH reserved bits"},
    {G_WRITE_ONLY, W_IP + 5, 0x01, false, "IPv4 identification"},
    {G_WRITE_ONLY, W_IP + 12, 0x01, false, "IPv4 source"},
    {G_WRITE_ONLY, W_UDP + 1, 0x01, false, "UDP source port"},
    {G_WRITE_ONLY, W_BTH + 1, 0x80, false, "BTH SE"},
    {G_WRITE_ONLY, W_BTH + 11, 0x01, false, "BTH PSN"},
    {G_WRITE_ONLY, W_BTH + 12, 0x01, false, "RETH VA"},
    {G_WRITE_ONLY, W_PAYLOAD, 0x01, false, "payload"},
    {G_WRITE_ONLY, W_PAYLOAD + 5, 0x01, false, "pad"},
    {G_IPV6_SEND_INV, 14, 0x0f, true, "IPv6 traffic class (high)"},
    {G_IPV6_SEND_INV, 15, 0xff, true, "IPv6 traffic class and flow label"},
    {G_IPV6_SEND_INV, 17, 0xff, true, "IPv6 flow label (low)"},
    {G_IPV6_SEND_INV, 21, 0xff, true, "IPv6 hop limit"},
    {G_IPV6_SEND_INV, 14 + 40 + 8 + 4, 0x80, true, "BTH FECN"},
    {G_IPV6_SEND_INV, 22, 0x01, false, "IPv6 source"},
    {G_IPV6_SEND_INV, 14 + 40 + 8 + 12, 0x01, false, "IETH"},
    {G_ROCEV1_CMPSWAP, 15, 0xff, true, "GRH traffic class and flow label"},
    {G_ROCEV1_CMPSWAP, 21, 0xff, true, "GRH hop limit"},
    {G_ROCEV1_CMPSWAP, 14 + 40 + 4, 0x40, true, "BTH BECN"},
    {G_ROCEV1_CMPSWAP, 6, 0x01, true, "Ethernet source (not covered)"},
    {G_ROCEV1_CMPSWAP, 22, 0x01, false, "GRH SGID"},
    {G_ROCEV1_CMPSWAP, 14 + 40 + 12 + 27, 0x01, false, "AtomicETH CmpData"},
    {G_IB_ACK, 0, 0xf0, true, "LRH VL"},
    {G_IB_ACK, 8 + 4, 0xc0, true, "BTH FECN and BECN"},
    {G_IB_ACK, 1, 0xf0, false, "LRH SL"},
    {G_IB_ACK, 3, 0x01, false, "LRH DLID"},
    {G_IB_ACK, 7, 0x01, false, "LRH SLID"},
    {G_IB_ACK, 8 + 12 + 3, 0x01, false, "AETH MSN"},
    {G_IB_ATOMIC_ACK, 0, 0xf0, true, "LRH VL (LNH 3)"},
    {G_IB_ATOMIC_ACK, 1, 0xf0, true, "LRH SL (LNH 3)"},
    {G_IB_ATOMIC_ACK, 3, 0x01, true, "LRH DLID (LNH 3)"},
    {G_IB_ATOMIC_ACK, 7, 0x01, true, "LRH SLID (LNH 3)"},
    {G_IB_ATOMIC_ACK, 8 + 1, 0xff, true, "GRH traffic class and flow label"},
    {G_IB_ATOMIC_ACK, 8 + 7, 0x0f, true, "GRH hop limit"},
    {G_IB_ATOMIC_ACK, 8 + 24, 0x01, false, "GRH DGID"},
    {G_IB_ATOMIC_ACK, 8 + 40 + 12 + 4 + 7, 0x01, false, "AtomicAckETH"},
};

START_TEST(icrc_covers_invariant_fields)
{
    const struct flip *f = &flips[_i];
    const struct golden *g = &goldens[f->id];
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame(f->id, buf);
    buf[f->off] ^= f->mask;
    if (g->crc == UNIT_CRC_ROCEV2 && (buf[g->l3] >> 4) == 4)
        fix_ipv4_checksum(buf + g->l3);
    if (g->crc == UNIT_CRC_IB)
        fix_vcrc(g, buf);
    struct rdma_pkt p;
    expect_status(g->linktype, buf, len, f->variant ? RDMA_OK : RDMA_BAD_ICRC, &p, f->what);
}
END_TEST

/* ---- reserved opcodes ------------------------------------------------------ */

/* G_RD_SEND with another opcode: after the BTH come 16 bytes (RDETH, DETH
 * and 4 bytes of payload in the original) that a reserved opcode must take
 * as payload, not as extended headers. */
START_TEST(reserved_opcodes_have_no_extended_headers)
{
    const struct golden *g = &goldens[G_RD_SEND];
    const size_t bth = g->l3 + 20 + 8;
    size_t reserved = 0;
    for (unsigned op = 0; op < 256; op++) {
        if (rdma_opcodes[op].name)
            continue;
        reserved++;
        uint8_t buf[UNIT_FRAME_MAX];
        size_t len = golden_frame(G_RD_SEND, buf);
        buf[bth] = (uint8_t)op;
        reseal(G_RD_SEND, buf);
        struct rdma_pkt p;
        char what[32];
        snprintf(what, sizeof what, "opcode %#04x", op);
        expect_status(g->linktype, buf, len, RDMA_OK, &p, what);
        ck_assert_ptr_eq(p.op, &rdma_opcodes[op]);
        ck_assert_ptr_null(p.op->name);
        ck_assert_uint_eq(p.present & RDMA_HDR_EXT_MASK, 0);
        ck_assert_ptr_eq(p.payload, buf + bth + 12);
        ck_assert_uint_eq(p.payload_len, 16);
        unit_assert_roundtrip(g->linktype, buf, len, what);
    }
    ck_assert_uint_gt(reserved, 0);
}
END_TEST

/* Nothing at all after the BTH: still a whole packet for these opcodes. */
START_TEST(reserved_opcode_with_nothing_after_the_bth)
{
    static const uint8_t ops[] = {0x18, 0x66, 0xc0};
    for (size_t i = 0; i < sizeof ops; i++) {
        uint8_t buf[UNIT_FRAME_MAX], out[UNIT_FRAME_MAX];
        size_t len = golden_frame(G_SLL_SEND, buf), out_len;
        struct rdma_pkt p;
        ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_LINUX_SLL, buf, len, len, &p), RDMA_OK);
        rdma_pkt_set_opcode(&p, ops[i]);
        p.payload_len = 0;
        ck_assert_int_eq(rdma_encode(&p, out, sizeof out, &out_len), RDMA_OK);
        ck_assert_uint_eq(out_len, len - 4); /* the SEND's 4 payload bytes */
        char what[32];
        snprintf(what, sizeof what, "opcode %#04x", ops[i]);
        expect_status(RDMA_LINKTYPE_LINUX_SLL, out, out_len, RDMA_OK, &p, what);
        ck_assert_ptr_null(p.op->name);
        ck_assert_uint_eq(p.payload_len, 0);
        ck_assert(p.icrc.ok);
        unit_assert_prefixes(RDMA_LINKTYPE_LINUX_SLL, out, out_len, out_len, what);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("malformed");
    TCase *tc = tcase_create("malformed");
    tcase_add_test(tc, udp_length_beyond_ip_length);
    tcase_add_test(tc, ipv4_header_length_below_5);
    tcase_add_test(tc, length_fields_beyond_the_frame);
    tcase_add_test(tc, lrh_packet_length_beyond_frame);
    tcase_add_test(tc, rocev1_grh_next_header);
    tcase_add_test(tc, cnp_without_its_16_bytes);
    tcase_add_test(tc, payload_on_an_ack);
    tcase_add_test(tc, pad_count_on_an_ack);
    tcase_add_test(tc, third_vlan_tag);
    tcase_add_test(tc, pfc_enable_vector_upper_byte);
    tcase_add_test(tc, unknown_link_type);
    suite_add_tcase(s, tc);
    tc = tcase_create("crc");
    tcase_add_loop_test(tc, flipped_icrc_byte, 0, G_COUNT);
    tcase_add_test(tc, flipped_vcrc_byte);
    tcase_add_test(tc, bad_ipv4_header_checksum);
    tcase_add_loop_test(tc, icrc_covers_invariant_fields, 0, sizeof flips / sizeof flips[0]);
    suite_add_tcase(s, tc);
    tc = tcase_create("reserved opcodes");
    tcase_add_test(tc, reserved_opcodes_have_no_extended_headers);
    tcase_add_test(tc, reserved_opcode_with_nothing_after_the_bth);
    suite_add_tcase(s, tc);
    return check_run(s);
}
