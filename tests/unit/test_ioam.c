/* test_ioam.c - the IOAM Pre-allocated Trace in an IPv6 Hop-by-Hop header
 * (RFC 9197 4.4, RFC 9486 3; codec/ioam.c): a golden vector written byte by
 * byte from the RFCs, encode/decode round trips, a node adding its data in
 * place with the ICRC still valid, every prefix truncated, malformed
 * headers, and both printers.
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#define ETH 14
#define IPV6 40

/* The trace HPCC's telemetry uses: Hop_Lim and node ID, timestamp seconds
 * and fraction, namespace data (short), queue depth, namespace data (wide):
 * 4 + 4 + 4 + 4 + 4 + 8 = 28 octets, NodeLen 7. */
static const uint32_t TYPE = RDMA_IOAM_BIT(0) | RDMA_IOAM_BIT(2) | RDMA_IOAM_BIT(3) | RDMA_IOAM_BIT(5) |
                             RDMA_IOAM_BIT(6) | RDMA_IOAM_BIT(10);

/* Two slots, one filled: 2 + 2 + 4 + 8 + 2 x 28 = 72 octets, a multiple of
 * 8, so Hdr Ext Len 8 and no padding after the option. */
static const uint8_t golden_hbh[72] = {
    0x11, 0x08,             /* next header UDP, (72 / 8) - 1 */
    0x01, 0x00,             /* PadN, no data: the option starts at 4n */
    0x31, 0x42, 0x00, 0x00, /* IOAM, 66 octets of option data, reserved, pre-allocated trace */
    0x80, 0x01,             /* Namespace-ID */
    0x38, 0x07,             /* NodeLen 7, flags 0, RemainingLen 7 (one free slot) */
    0xb6, 0x20, 0x00, 0x00, /* trace type bits 0 2 3 5 6 10, reserved */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x3f, 0x00, 0x01, 0x02, /* hop limit 63, node 0x000102 */
    0x00, 0x00, 0x00, 0x01, /* 1 s */
    0x00, 0x00, 0x03, 0xe8, /* 1000 ns */
    0x00, 0x01, 0x86, 0xa0, /* 100,000 (the link's Mb/s) */
    0x00, 0x00, 0x10, 0x00, /* 4096 queued octets */
    0x80, 0x00, 0x00, 0x00, 0x00, 0xab, 0xcd, 0xef, /* 64-bit: the top bit set */
};

static struct rdma_ioam_node node(uint64_t id, uint64_t q)
{
    struct rdma_ioam_node n;
    memset(&n, 0, sizeof n);
    n.v[RDMA_IOAM_hop_lim] = 63;
    n.v[RDMA_IOAM_node_id] = id;
    n.v[RDMA_IOAM_ts_sec] = 1;
    n.v[RDMA_IOAM_ts_frac] = 1000;
    n.v[RDMA_IOAM_ns_data] = 100000;
    n.v[RDMA_IOAM_queue_depth] = q;
    n.v[RDMA_IOAM_ns_data_wide] = UINT64_C(0x8000000000abcdef);
    return n;
}

static struct rdma_ioam_node nodes[RDMA_IOAM_MAX_NODES];

/* An RC ACK over IPv6 carrying a trace of `slots` slots with `filled` nodes. */
static size_t build(uint8_t *f, uint8_t slots, uint8_t filled, struct rdma_pkt *pkt)
{
    memset(pkt, 0, sizeof *pkt);
    rdma_pkt_set_opcode(pkt, 0x11); /* RC Acknowledge */
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    pkt->present |= RDMA_HDR_ETH | RDMA_HDR_IPV6 | RDMA_HDR_UDP;
    pkt->ipv6.tclass = 0x68;
    pkt->ipv6.flow = 0x12345;
    pkt->ipv6.hlim = 64;
    pkt->ipv6.src[0] = pkt->ipv6.dst[0] = 0xfd;
    pkt->ipv6.dst[15] = 1;
    pkt->udp.srcport = 0xc000;
    pkt->udp.dstport = RDMA_ROCEV2_UDP_PORT;
    pkt->udp.checksum = 1;
    pkt->bth.p_key = 0xffff;
    pkt->bth.destqp = 0x11;
    pkt->bth.psn = 5;
    pkt->ioam.present = true;
    pkt->ioam.ns = RDMA_IOAM_NS_HPCC;
    pkt->ioam.trace_type = TYPE;
    pkt->ioam.slots = slots;
    pkt->ioam.nnodes = filled;
    for (uint8_t i = 0; i < filled; i++)
        nodes[i] = node(0x102 + i, 4096);
    pkt->ioam.node = nodes;
    size_t len = 0;
    ck_assert_int_eq(rdma_encode(pkt, f, UNIT_FRAME_MAX, &len), RDMA_OK);
    return len;
}

START_TEST(golden_vector)
{
    uint8_t f[UNIT_FRAME_MAX];
    struct rdma_pkt pkt, got;
    size_t len = build(f, 2, 1, &pkt);
    ck_assert_uint_eq(rdma_ioam_node_bytes(TYPE), 28);
    ck_assert_uint_eq(rdma_ioam_hbh_bytes(&pkt.ioam), sizeof golden_hbh);
    ck_assert_uint_eq(f[ETH + 6], 0); /* IPv6 next header: Hop-by-Hop */
    ck_assert_mem_eq(f + ETH + IPV6, golden_hbh, sizeof golden_hbh);
    /* the payload length counts the Hop-by-Hop header */
    ck_assert_uint_eq((size_t)(f[ETH + 4] << 8 | f[ETH + 5]), len - ETH - IPV6);
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
    ck_assert(got.icrc.ok);
    ck_assert(got.ioam.present && got.ioam.nodes_decoded);
    ck_assert_uint_eq(got.ioam.at, ETH + IPV6 + 8);
    ck_assert_uint_eq(got.ioam.ns, RDMA_IOAM_NS_HPCC);
    ck_assert_uint_eq(got.ioam.node_len, 7);
    ck_assert_uint_eq(got.ioam.remaining, 7);
    ck_assert_uint_eq(got.ioam.slots, 2);
    ck_assert_uint_eq(got.ioam.nnodes, 1);
    struct rdma_ioam_node n;
    rdma_ioam_node_get(&got.ioam, 0, &n);
    ck_assert_mem_eq(&n, &nodes[0], sizeof n);
    ck_assert_uint_eq(rdma_ioam_find(f, len), ETH + IPV6 + 8);
}
END_TEST

/* Every trace-type bit RFC 9197 sizes: 4 octets, 8 for the wide ones
 * (bits 8, 9, 10); any undefined bit, the opaque state snapshot or the
 * reserved bit cannot be sized. */
START_TEST(node_sizes)
{
    for (unsigned b = 0; b < 24; b++) {
        uint32_t want = b == 8 || b == 9 || b == 10 ? 8 : b < 12 ? 4 : 0;
        ck_assert_uint_eq(rdma_ioam_node_bytes(RDMA_IOAM_BIT(b)), want);
    }
    ck_assert_uint_eq(rdma_ioam_node_bytes(0xfff000), 9 * 4 + 3 * 8);
}
END_TEST

/* decode(encode(p)) = p and encode(decode(f)) = f, for 1 to 8 slots and
 * every number of filled ones; the Hop-by-Hop header ends on 8 octets
 * (a PadN after the option when 28 x slots is not a multiple of 8). */
START_TEST(round_trips)
{
    uint8_t slots = (uint8_t)(_i + 1);
    for (uint8_t filled = 0; filled <= slots; filled++) {
        uint8_t f[UNIT_FRAME_MAX], g[UNIT_FRAME_MAX];
        struct rdma_pkt pkt, got;
        size_t len = build(f, slots, filled, &pkt), len2 = 0;
        uint32_t hbh = rdma_ioam_hbh_bytes(&pkt.ioam);
        ck_assert_uint_eq(hbh % 8, 0);
        ck_assert_uint_eq(hbh, (16 + 28u * slots + 7) / 8 * 8);
        ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
        ck_assert(got.icrc.ok);
        ck_assert_uint_eq(got.ioam.slots, slots);
        ck_assert_uint_eq(got.ioam.nnodes, filled);
        for (unsigned i = 0; i < filled; i++) {
            struct rdma_ioam_node n;
            rdma_ioam_node_get(&got.ioam, i, &n);
            ck_assert_mem_eq(&n, &nodes[i], sizeof n);
        }
        ck_assert_int_eq(rdma_encode(&got, g, sizeof g, &len2), RDMA_OK);
        ck_assert_uint_eq(len2, len);
        ck_assert_mem_eq(g, f, len);
    }
}
END_TEST

/* Nodes on the path fill the slots from the last; the first node's data
 * ends up last on the wire. The ICRC leaves extension headers out, so it
 * stays valid; the UDP checksum does not cover them either. A node finding
 * no free slot sets the overflow flag and writes nothing. */
START_TEST(nodes_push_in_place)
{
    uint8_t f[UNIT_FRAME_MAX];
    struct rdma_pkt pkt, got;
    size_t len = build(f, 3, 0, &pkt);
    size_t at = rdma_ioam_find(f, len);
    ck_assert_uint_ne(at, 0);
    for (unsigned i = 0; i < 3; i++) {
        struct rdma_ioam_node n = node(10 + i, 1000 * i);
        ck_assert(rdma_ioam_push(f, len, at, &n));
        ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
        ck_assert(got.icrc.ok);
        ck_assert_uint_eq(ref_udp_verify(f + ETH, f + ETH + IPV6 + 104, len - ETH - IPV6 - 104), 0xffff);
        ck_assert_uint_eq(got.ioam.nnodes, i + 1);
        ck_assert_uint_eq(got.ioam.remaining, 7 * (2 - i));
        struct rdma_ioam_node first, last;
        rdma_ioam_node_get(&got.ioam, 0, &first);
        rdma_ioam_node_get(&got.ioam, i, &last);
        ck_assert_uint_eq(first.v[RDMA_IOAM_node_id], 10 + i);
        ck_assert_uint_eq(last.v[RDMA_IOAM_node_id], 10);
    }
    struct rdma_ioam_node n = node(99, 0);
    uint8_t before[UNIT_FRAME_MAX];
    memcpy(before, f, len);
    ck_assert(!rdma_ioam_push(f, len, at, &n));
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
    ck_assert_uint_eq(got.ioam.flags, RDMA_IOAM_FLAG_OVERFLOW);
    before[at + 2] |= RDMA_IOAM_FLAG_OVERFLOW >> 1; /* the one bit that changed */
    ck_assert_mem_eq(f, before, len);
}
END_TEST

/* Every prefix of a frame with a trace decodes to "truncated". */
START_TEST(every_prefix_truncated)
{
    uint8_t f[UNIT_FRAME_MAX];
    struct rdma_pkt pkt, got;
    size_t len = build(f, 5, 2, &pkt);
    for (size_t n = 0; n < len; n++)
        ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, n, len, &got), RDMA_TRUNCATED);
}
END_TEST

/* A header byte that contradicts the RFC is "malformed", with the reason. */
START_TEST(malformed_traces)
{
    static const struct {
        size_t off;     /* from the Namespace-ID */
        uint8_t v;
        const char *reason;
    } cases[] = {
        {2, 0x00, "IOAM NodeLen is zero"},                         /* NodeLen 0 */
        {2, 0x30, "IOAM NodeLen disagrees with the trace type"},   /* NodeLen 6 */
        {3, 0x7f, "IOAM RemainingLen runs past the option"},       /* 127 x 4 octets */
        {3, 0x06, "IOAM node data is not a whole number of nodes"}, /* 6, not 7 or 14 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t f[UNIT_FRAME_MAX];
        struct rdma_pkt pkt, got;
        size_t len = build(f, 2, 1, &pkt), at = ETH + IPV6 + 8;
        f[at + cases[i].off] = (uint8_t)(cases[i].off == 2 ? cases[i].v | (f[at + 2] & 7) : cases[i].v);
        ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_MALFORMED);
        ck_assert_str_eq(got.reason, cases[i].reason);
    }
    /* trace types with bits this codec does not size: the header is read,
     * the nodes are not */
    uint8_t f[UNIT_FRAME_MAX];
    struct rdma_pkt pkt, got;
    size_t len = build(f, 2, 1, &pkt), at = ETH + IPV6 + 8;
    f[at + 5] |= 0x02; /* bit 22, opaque state snapshot */
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
    ck_assert(got.ioam.present && !got.ioam.nodes_decoded);
}
END_TEST

/* A packet decoded into a struct that held a trace with nodes, whose own
 * trace option is too short for its header: the printers must not read
 * the earlier frame's nodes (it may be freed by then, as a capture reader's
 * buffer is). */
START_TEST(short_trace_after_a_full_one)
{
    uint8_t *f = malloc(UNIT_FRAME_MAX);
    struct rdma_pkt pkt, got;
    size_t len = build(f, 2, 1, &pkt), at = ETH + IPV6 + 8;
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    ck_assert_int_eq(rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
    ck_assert_uint_eq(got.ioam.nnodes, 1);
    uint8_t *g = malloc(len);
    memcpy(g, f, len);
    free(f);
    g[at - 3] = 4; /* option length: 2 + 2 octets of the 8-octet trace header */
    ck_assert_int_eq(rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, g, len, len, &got), RDMA_MALFORMED);
    ck_assert_str_eq(got.reason, "IOAM trace option shorter than its header");
    ck_assert(got.ioam.present);
    ck_assert(!got.ioam.nodes_decoded);
    ck_assert_uint_eq(got.ioam.nnodes, 0);
    ck_assert_ptr_null(got.ioam.data);
    char buf[4096];
    ck_assert_uint_gt(rdma_format_summary(&got, buf, sizeof buf), 0);
    ck_assert_uint_gt(rdma_format_json(&got, buf, sizeof buf), 0);
    free(g);
}
END_TEST

START_TEST(printers)
{
    uint8_t f[UNIT_FRAME_MAX];
    struct rdma_pkt pkt, got;
    size_t len = build(f, 2, 1, &pkt);
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ETHERNET, f, len, len, &got), RDMA_OK);
    char buf[4096];
    size_t n = rdma_format_summary(&got, buf, sizeof buf - 1);
    ck_assert_uint_gt(n, 0);
    buf[n] = 0;
    ck_assert_ptr_nonnull(strstr(buf, " IOAM ns=0x8001 nodes=1/2 [hop_lim=63 node_id=258 ts_sec=1 "
                                      "ts_frac=1000 ns_data=100000 queue_depth=4096 "
                                      "ns_data_wide=0x8000000000abcdef] ICRC ok"));
    n = rdma_format_json(&got, buf, sizeof buf - 1);
    ck_assert_uint_gt(n, 0);
    buf[n] = 0;
    ck_assert_ptr_nonnull(strstr(buf, "\"ioam\":{\"namespace\":32769,\"node_len\":7,\"flags\":0,"
                                      "\"remaining\":7,\"trace_type\":11935744,\"slots\":2,\"nodes\":"
                                      "[{\"hop_lim\":63,\"node_id\":258,\"ts_sec\":1,\"ts_frac\":1000,"
                                      "\"ns_data\":100000,\"queue_depth\":4096,"
                                      "\"ns_data_wide\":\"0x8000000000abcdef\"}]},\"udp\":"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ioam");
    TCase *tc = tcase_create("trace");
    tcase_add_test(tc, golden_vector);
    tcase_add_test(tc, node_sizes);
    tcase_add_loop_test(tc, round_trips, 0, RDMA_IOAM_MAX_NODES);
    tcase_add_test(tc, nodes_push_in_place);
    tcase_add_test(tc, every_prefix_truncated);
    tcase_add_test(tc, malformed_traces);
    tcase_add_test(tc, short_trace_after_a_full_one);
    tcase_add_test(tc, printers);
    suite_add_tcase(s, tc);
    return check_run(s);
}
