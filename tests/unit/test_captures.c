/* test_captures.c - every frame of the real captures in pcaps/real: RDMA
 * frames decode cleanly with valid CRCs and re-encode to the same bytes,
 * the counts per file match what tshark finds, and the CRC functions agree
 * with the CRCs the capturing hosts and NICs computed.
 */
#include <stdio.h>
#include <string.h>

#include "golden.h"

/* RDMA frames per file, as tshark 4.0 counts them:
 *   RoCEv2  tshark -r FILE -Y 'udp.dstport == 4791'
 *   RoCEv1  tshark -r FILE -Y 'eth.type == 0x8915'
 *   IB      tshark -r FILE -Y 'infiniband.lrh'
 * A capture added to pcaps/real needs a line here. */
static const struct expect {
    const char *name;
    size_t frames, rocev2, rocev1, ib;
} expects[] = {
    {"hw-cx4-cnp-rocev1.pcap", 3, 1, 2, 0},
    {"ib-native-erf.pcap", 43, 0, 0, 43},
    {"rxe-rocev2-read-write-ecn.pcap", 12, 12, 0, 0},
    {"rxe-rocev2-send-port69.pcap", 123, 105, 0, 0},
    {"rxe-rocev2-write-read-arp.pcap", 16, 12, 0, 0},
};
#define NEXPECTS (sizeof expects / sizeof expects[0])

#define ERF_HEADER 16
#define LRH_LEN 8
#define GRH_LEN 40

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where the packet the ICRC covers starts and where its ICRC ends, read
 * from the frame's own headers (the captures carry no VLAN tags or ERF
 * extension headers). */
static void locate(int linktype, const uint8_t *f, enum unit_crc *kind, size_t *l3, size_t *end)
{
    if (linktype == RDMA_LINKTYPE_ERF) {
        *kind = UNIT_CRC_IB;
        *l3 = ERF_HEADER;
        *end = *l3 + (size_t)(be16(f + *l3 + 4) & 0x7ff) * 4; /* LRH PktLen */
        return;
    }
    ck_assert_int_eq(linktype, RDMA_LINKTYPE_ETHERNET);
    *l3 = 14;
    switch (be16(f + 12)) {
    case RDMA_ETHERTYPE_IPV4:
        *kind = UNIT_CRC_ROCEV2;
        *end = *l3 + be16(f + *l3 + 2); /* total length */
        break;
    case RDMA_ETHERTYPE_IPV6:
        *kind = UNIT_CRC_ROCEV2;
        *end = *l3 + 40 + be16(f + *l3 + 4); /* payload length */
        break;
    default:
        ck_assert_uint_eq(be16(f + 12), RDMA_ETHERTYPE_ROCEV1);
        *kind = UNIT_CRC_ROCEV1;
        *end = *l3 + GRH_LEN + be16(f + *l3 + 4); /* GRH PayLen */
        break;
    }
}

static size_t expected_rdma(bool rocev2_only)
{
    size_t n = 0;
    for (size_t i = 0; i < NEXPECTS; i++)
        n += expects[i].rocev2 + (rocev2_only ? 0 : expects[i].rocev1 + expects[i].ib);
    return n;
}

static const struct expect *find_expect(const char *name)
{
    for (size_t i = 0; i < NEXPECTS; i++)
        if (strcmp(expects[i].name, name) == 0)
            return &expects[i];
    return NULL;
}

START_TEST(every_capture_is_expected)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    ck_assert_uint_eq(n, NEXPECTS);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(find_expect(caps[i].name), "%s: no expected counts", caps[i].name);
    unit_free_captures(caps, n);
}
END_TEST

/* Frame by frame: status, CRCs, byte-exact re-encoding, counts. */
START_TEST(frames_decode_and_reencode)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    for (size_t i = 0; i < n; i++) {
        const struct unit_capture *cap = &caps[i];
        const struct expect *want = find_expect(cap->name);
        ck_assert_ptr_nonnull(want);
        size_t count[RDMA_PROTO_PAUSE + 1] = {0};
        for (size_t j = 0; j < cap->count; j++) {
            const struct unit_frame *f = &cap->frames[j];
            char what[256];
            snprintf(what, sizeof what, "%s frame %zu", cap->name, j + 1);
            ck_assert_msg(f->caplen == f->len, "%s: captured in part", what);
            struct rdma_pkt p;
            enum rdma_status st = unit_decode((unsigned)cap->linktype, f->data, f->len, f->len, &p);
            /* Nothing in these captures is broken, RDMA or not. */
            ck_assert_msg(st == RDMA_OK, "%s: %s (%s)", what, rdma_status_name(st),
                          p.reason ? p.reason : "");
            count[p.proto]++;
            if (p.proto == RDMA_PROTO_OTHER)
                continue;
            ck_assert_msg(p.icrc.present && p.icrc.ok, "%s: ICRC", what);
            ck_assert_msg(p.vcrc.present == (p.proto == RDMA_PROTO_IB), "%s: VCRC present", what);
            if (p.proto == RDMA_PROTO_IB)
                ck_assert_msg(p.vcrc.ok, "%s: VCRC", what);
            unit_assert_roundtrip((unsigned)cap->linktype, f->data, f->len, what);
        }
        ck_assert_uint_eq(cap->count, want->frames);
        ck_assert_msg(count[RDMA_PROTO_ROCEV2] == want->rocev2, "%s: %zu RoCEv2 frames, want %zu",
                      cap->name, count[RDMA_PROTO_ROCEV2], want->rocev2);
        ck_assert_msg(count[RDMA_PROTO_ROCEV1] == want->rocev1, "%s: %zu RoCEv1 frames, want %zu",
                      cap->name, count[RDMA_PROTO_ROCEV1], want->rocev1);
        ck_assert_msg(count[RDMA_PROTO_IB] == want->ib, "%s: %zu IB frames, want %zu", cap->name,
                      count[RDMA_PROTO_IB], want->ib);
        ck_assert_uint_eq(count[RDMA_PROTO_OTHER],
                          want->frames - want->rocev2 - want->rocev1 - want->ib);
    }
    unit_free_captures(caps, n);
}
END_TEST

/* The codec's CRC functions and the reference ones of unit.c against the
 * ICRC and VCRC each frame carries, located from the frame's own headers. */
START_TEST(crcs_match_the_captures)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++) {
            const struct unit_frame *f = &caps[i].frames[j];
            struct rdma_pkt p;
            unit_decode((unsigned)caps[i].linktype, f->data, f->len, f->len, &p);
            if (p.proto == RDMA_PROTO_OTHER)
                continue;
            enum unit_crc kind;
            size_t l3, end;
            locate(caps[i].linktype, f->data, &kind, &l3, &end);
            ck_assert_uint_le(end + (kind == UNIT_CRC_IB ? 2 : 0), f->len);
            const uint8_t *h = f->data + l3;
            size_t covered = end - 4 - l3;
            uint32_t stored = le32(f->data + end - 4), codec;
            if (kind == UNIT_CRC_ROCEV2)
                codec = rdma_icrc_rocev2(h, covered);
            else if (kind == UNIT_CRC_ROCEV1)
                codec = rdma_icrc_grh(h, covered);
            else if ((h[1] & 3) == 3)
                codec = rdma_icrc_grh(h + LRH_LEN, covered - LRH_LEN);
            else
                codec = rdma_icrc_lrh(h, covered);
            ck_assert_msg(codec == stored, "%s frame %zu: ICRC %08x, frame has %08x",
                          caps[i].name, j + 1, codec, stored);
            ck_assert_uint_eq(ref_icrc(kind, h, covered), stored);
            if (kind == UNIT_CRC_IB) {
                uint16_t vcrc = (uint16_t)(f->data[end] | f->data[end + 1] << 8);
                ck_assert_uint_eq(rdma_vcrc(h, end - l3), vcrc);
                ck_assert_uint_eq(ref_vcrc(h, end - l3), vcrc);
            }
            checked++;
        }
    }
    ck_assert_uint_eq(checked, expected_rdma(false));
    unit_free_captures(caps, n);
}
END_TEST

/* The ICRC functions against the reference at every length from a bare
 * BTH to past the codec's 16-byte masking pieces, for each header layout,
 * with random bytes (so every masked field is exercised) and a version or
 * LNH set as the layout needs: short packets, IPv4 options and the usual
 * layouts each take their own path through codec/icrc.c. */
START_TEST(icrc_every_length_matches_reference)
{
    enum { MAX_LEN = 300 };
    static const struct {
        enum unit_crc kind;
        uint8_t first;   /* byte 0: IP version and header length, or LRH VL */
        size_t headers;  /* up to the end of the BTH */
    } layouts[] = {
        {UNIT_CRC_ROCEV2, 0x45, 20 + 8 + 12},
        {UNIT_CRC_ROCEV2, 0x47, 28 + 8 + 12},
        {UNIT_CRC_ROCEV2, 0x60, 40 + 8 + 12},
        {UNIT_CRC_ROCEV1, 0x60, 40 + 12},
        {UNIT_CRC_IB, 0x70, 8 + 12},
    };
    uint8_t pkt[MAX_LEN];
    uint32_t seed = 1;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        for (size_t len = layouts[i].headers; len <= MAX_LEN; len++) {
            for (size_t b = 0; b < len; b++) {
                seed = seed * 1103515245u + 12345u;
                pkt[b] = (uint8_t)(seed >> 16);
            }
            pkt[0] = layouts[i].first;
            uint32_t codec;
            if (layouts[i].kind == UNIT_CRC_ROCEV2)
                codec = rdma_icrc_rocev2(pkt, len);
            else if (layouts[i].kind == UNIT_CRC_ROCEV1)
                codec = rdma_icrc_grh(pkt, len);
            else {
                pkt[1] &= 0xfc; /* LNH 2: no GRH */
                pkt[1] |= 2;
                codec = rdma_icrc_lrh(pkt, len);
            }
            ck_assert_msg(codec == ref_icrc(layouts[i].kind, pkt, len),
                          "layout %zu, %zu bytes: ICRC %08x, reference %08x", i, len, codec,
                          ref_icrc(layouts[i].kind, pkt, len));
        }
    }
}
END_TEST

/* The ConnectX-4 Lx CNP, the one ICRC in the corpus computed by hardware:
 * its last four bytes are 82 fd 00 2a (scapy test/contrib/roce.uts). */
START_TEST(hardware_cnp_icrc)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    const struct unit_capture *cap = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(caps[i].name, "hw-cx4-cnp-rocev1.pcap") == 0)
            cap = &caps[i];
    ck_assert_ptr_nonnull(cap);
    const struct unit_frame *f = &cap->frames[0];
    static const uint8_t icrc[4] = {0x82, 0xfd, 0x00, 0x2a};
    ck_assert_mem_eq(f->data + f->len - 4, icrc, 4);
    ck_assert_uint_eq(rdma_icrc_rocev2(f->data + 14, f->len - 14 - 4), 0x2a00fd82);
    unit_free_captures(caps, n);
}
END_TEST

/* Ask the encoder for a UDP checksum on a RoCEv2 frame and check it with
 * the RFC 768 sum; nothing else in the frame may change (the ICRC counts
 * the checksum as ones, A17.3.3). */
static void check_udp_checksum(unsigned linktype, const uint8_t *frame, size_t len, size_t l3,
                               const char *what)
{
    struct rdma_pkt p, q;
    ck_assert_int_eq(unit_decode(linktype, frame, len, len, &p), RDMA_OK);
    ck_assert_uint_eq(p.proto, RDMA_PROTO_ROCEV2);
    ck_assert_uint_eq(p.udp.checksum, 0);
    p.udp.checksum = 1;
    uint8_t out[UNIT_FRAME_MAX];
    size_t out_len;
    ck_assert_int_eq(rdma_encode(&p, out, sizeof out, &out_len), RDMA_OK);
    ck_assert_uint_eq(out_len, len < UNIT_ETH_MIN_FRAME ? UNIT_ETH_MIN_FRAME : len);
    const uint8_t *ip = out + l3;
    size_t udp_at = l3 + ((ip[0] >> 4) == 4 ? (size_t)(ip[0] & 0x0f) * 4 : 40);
    size_t udp_len = be16(out + udp_at + 4);
    uint16_t sum = be16(out + udp_at + 6);
    ck_assert_msg(sum != 0, "%s: no UDP checksum written", what);
    ck_assert_msg(ref_udp_verify(ip, out + udp_at, udp_len) == 0xffff,
                  "%s: UDP checksum %04x does not verify", what, sum);
    for (size_t i = 0; i < len; i++)
        if (i != udp_at + 6 && i != udp_at + 7)
            ck_assert_msg(out[i] == frame[i], "%s: byte %zu changed", what, i);
    ck_assert_int_eq(unit_decode(linktype, out, out_len, out_len, &q), RDMA_OK);
    ck_assert(q.icrc.ok);
    ck_assert_uint_eq(q.udp.checksum, sum);
}

START_TEST(encoder_udp_checksum)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++) {
            const struct unit_frame *f = &caps[i].frames[j];
            struct rdma_pkt p;
            unit_decode((unsigned)caps[i].linktype, f->data, f->len, f->len, &p);
            if (p.proto != RDMA_PROTO_ROCEV2)
                continue;
            char what[256];
            snprintf(what, sizeof what, "%s frame %zu", caps[i].name, j + 1);
            check_udp_checksum((unsigned)caps[i].linktype, f->data, f->len, 14, what);
            checked++;
        }
    }
    ck_assert_uint_eq(checked, expected_rdma(true));
    unit_free_captures(caps, n);
    /* The captures hold no RoCEv2 over IPv6, nor a tagged frame. */
    static const enum golden_id ids[] = {G_IPV6_SEND_INV, G_QINQ_ACK, G_SLL2_READ, G_CNP};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        uint8_t buf[UNIT_FRAME_MAX];
        const struct golden *g = &goldens[ids[i]];
        size_t len = golden_frame(ids[i], buf);
        check_udp_checksum(g->linktype, buf, len, g->l3, g->name);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("captures");
    TCase *tc = tcase_create("real");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_capture_is_expected);
    tcase_add_test(tc, frames_decode_and_reencode);
    tcase_add_test(tc, crcs_match_the_captures);
    tcase_add_test(tc, icrc_every_length_matches_reference);
    tcase_add_test(tc, hardware_cnp_icrc);
    tcase_add_test(tc, encoder_udp_checksum);
    suite_add_tcase(s, tc);
    return check_run(s);
}
