/* test_switch_headers.c - a switch reads the plain frame's headers from
 * its bytes (sim__sw_plain_headers) only where the codec's decode would
 * read the same: for frames as NICs send them, whole and held without
 * their payload, and for every single bit flipped in their headers, the
 * plain reading either declines or agrees field by field with the
 * decoded one (sim__sw_decoded_headers). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_bytes.h"
#include "sim.h"
#include "fabric/fabric.h"
#include "network/network.h"
#include "../check_run.h"
#include "config_text.h"

#define HOSTS 16
#define HEADERS 60 /* bytes flipped: Ethernet, IPv4, UDP, BTH, RETH */

static uint64_t next(uint64_t *x)
{
    *x += UINT64_C(0x9e3779b97f4a7c15);
    uint64_t z = *x;
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* An RDMA WRITE from host a to host b as a NIC writes it; the length. */
static size_t write_frame(uint8_t *out, size_t cap, uint32_t a, uint32_t b, uint64_t *x)
{
    static const uint8_t payload[64];
    struct rdma_pkt p;
    memset(&p, 0, sizeof p);
    p.linktype = RDMA_LINKTYPE_ETHERNET;
    p.present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    uint64_t v = next(x);
    p.ip.dsfield_dscp = v & 63;
    p.ip.dsfield_ecn = v >> 6 & 3;
    p.ip.flags = 2; /* don't fragment */
    p.ip.ttl = 64;
    rdma_put_be32(p.ip.src, sim__host_ip4(a));
    rdma_put_be32(p.ip.dst, sim__host_ip4(b));
    p.udp.srcport = (uint16_t)(0xc000 | (v >> 8 & 0x3fff));
    p.udp.dstport = RDMA_ROCEV2_UDP_PORT;
    rdma_pkt_set_opcode(&p, 0x0a); /* RC RDMA WRITE Only */
    p.bth.destqp = 0x100;
    p.bth.psn = (uint32_t)next(x) & 0xffffff;
    p.reth.va = next(x);
    p.reth.dmalen = sizeof payload;
    p.payload = payload;
    p.payload_len = sizeof payload;
    size_t len;
    ck_assert_int_eq(rdma_encode(&p, out, cap, &len), RDMA_OK);
    return len;
}

static bool same(const struct sw_headers *a, const struct sw_headers *b)
{
    return a->src == b->src && a->dst == b->dst && a->sport == b->sport && a->prio == b->prio && a->l3 == b->l3;
}

/* Every single bit of the headers flipped, and none, the frame whole and
 * held without its payload. A frame as sent to a host of the network is
 * read the plain way, not left to the codec: the comparison must not
 * pass by declining everything. */
static void check_flips(const struct sim_switch *sw, struct sim_frame *f, const uint8_t *bytes, size_t len,
                        size_t payload_at, bool for_host)
{
    for (int held = 0; held < 2; held++) {
        for (size_t bit = 0; bit <= 8 * HEADERS; bit++) {
            memcpy(f->data, bytes, len);
            if (bit < 8 * HEADERS)
                f->data[bit / 8] ^= (uint8_t)(1u << bit % 8);
            f->len = (uint32_t)len;
            f->fill_at = f->fill_len = 0;
            if (held) { /* payload: none, its bytes left out */
                f->fill_at = (uint16_t)payload_at;
                f->fill_len = 64;
                memmove(f->data + payload_at, bytes + payload_at + 64, len - payload_at - 64);
            }
            struct sw_headers p, d;
            memset(&p, 0xa5, sizeof p);
            memset(&d, 0x5a, sizeof d);
            if (!sim__sw_plain_headers(sw, f, &p)) {
                if (bit == 8 * HEADERS && for_host)
                    ck_abort_msg("a frame as sent%s is left to the codec", held ? ", payload left out" : "");
                continue;
            }
            if (!sim__sw_decoded_headers(sw, f, &d) || !same(&p, &d))
                ck_abort_msg("bit %zu flipped%s: the plain reading takes a frame the codec reads otherwise", bit,
                             held ? ", payload left out" : "");
        }
    }
}

static void check_network(const char *text)
{
    struct sim_config *cfg = config_text_load(text);
    struct sim_network *net = sim_network_create(cfg);
    const struct sim_switch *sw = NULL;
    for (size_t i = 0; i < cfg->nnodes && !sw; i++)
        if (cfg->nodes[i].kind != CFG_HOST)
            sw = (const struct sim_switch *)net->nodes[i];
    ck_assert_ptr_nonnull(sw);
    struct sim_frame *f = sim__frame_alloc(&net->pool, 512);
    uint8_t bytes[512];
    uint64_t x = 1;
    for (uint32_t a = 0; a < HOSTS; a += 3)
        for (uint32_t b = 0; b < HOSTS + 2; b += 5) { /* b past the hosts: for no host */
            size_t len = write_frame(bytes, sizeof bytes, a, b, &x);
            check_flips(sw, f, bytes, len, 14 + 20 + 8 + 12 + 16, b < HOSTS);
        }
    /* IPv6, a VLAN tag, IPv4 options: the codec's */
    size_t len = write_frame(bytes, sizeof bytes, 1, 2, &x);
    memcpy(f->data, bytes, len);
    f->len = (uint32_t)len;
    f->fill_at = f->fill_len = 0;
    struct sw_headers h;
    ck_assert(sim__sw_plain_headers(sw, f, &h));
    f->data[12] = 0x86, f->data[13] = 0xdd;
    ck_assert(!sim__sw_plain_headers(sw, f, &h));
    f->data[12] = 0x81, f->data[13] = 0x00;
    ck_assert(!sim__sw_plain_headers(sw, f, &h));
    f->data[12] = 0x08, f->data[13] = 0x00, f->data[14] = 0x46;
    ck_assert(!sim__sw_plain_headers(sw, f, &h));
    sim__frame_free(&net->pool, f);
    sim_network_destroy(net);
    sim_config_free(cfg);
}

START_TEST(plain_headers_agree_with_the_codec)
{
    check_network("payload: none\n"
                  "topology: {generate: {kind: fat-tree, k: 4}}\n"
                  "workload: {messages: [{src: h0, dst: h15, size: 1}]}\n");
}
END_TEST

START_TEST(plain_headers_agree_with_the_codec_trusting_pcp)
{
    check_network("payload: none\n"
                  "qos: {trust: pcp}\n"
                  "topology: {generate: {kind: fat-tree, k: 4}}\n"
                  "workload: {messages: [{src: h0, dst: h15, size: 1}]}\n");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("switch headers");
    TCase *t = tcase_create("plain");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, plain_headers_agree_with_the_codec);
    tcase_add_test(t, plain_headers_agree_with_the_codec_trusting_pcp);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
