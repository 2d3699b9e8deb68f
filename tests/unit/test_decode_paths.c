/* test_decode_paths.c - rdma_decode() takes the plain RoCEv2/IPv4 frame on
 * a path of its own (decode.c); that path must leave struct rdma_pkt as
 * the general path leaves it, byte for byte, and must not take a frame the
 * general path would find anything wrong with.
 *
 * Both paths decode into structs filled alike beforehand (zeros, then
 * 0xa5), which are then compared whole: a member one path sets and the
 * other does not shows. Frames: every opcode, reserved ones included, with
 * payloads of 0 to 9 bytes (every pad count) and field values from a fixed
 * sequence; each of them with every byte of its headers changed, the
 * checksum and ICRC made right again and not; cut short on the wire and in
 * the capture; decoded with another RoCEv2 port and without the CRC check;
 * and every frame of the real captures.
 */
#include <stdio.h>
#include <string.h>

#include "decode_paths.h"
#include "rdma_bytes.h"
#include "unit.h"

#define ETH_LEN 14
#define HEADERS_MAX (ETH_LEN + 20 + 8 + 12 + 28 + 8) /* the longest header run of a plain frame */

static unsigned plain_taken;

/* The frame through rdma_decode() and through the general path, from the
 * same fill, gives the same struct. */
static void check_paths(const struct rdma_decode_config *cfg, unsigned linktype, const uint8_t *frame,
                        size_t caplen, size_t wirelen, const char *what)
{
    static struct rdma_pkt a, b;
    static const uint8_t fills[] = {0x00, 0xa5};
    for (size_t i = 0; i < sizeof fills; i++) {
        memset(&a, fills[i], sizeof a);
        memset(&b, fills[i], sizeof b);
        enum rdma_status sa = rdma_decode(cfg, linktype, frame, caplen, wirelen, &a);
        enum rdma_status sb = rdma__decode_general(cfg, linktype, frame, caplen, wirelen, &b);
        if (sa != sb)
            ck_abort_msg("%s: status %s, general path %s", what, rdma_status_name(sa), rdma_status_name(sb));
        if (memcmp(&a, &b, sizeof a)) {
            size_t k = 0;
            while (((uint8_t *)&a)[k] == ((uint8_t *)&b)[k])
                k++;
            ck_abort_msg("%s (fill %#x): byte %zu of struct rdma_pkt differs", what, fills[i], k);
        }
    }
    /* the plain path takes only whole Ethernet frames, and no others that
     * the general path finds a fault in */
    if (linktype == RDMA_LINKTYPE_ETHERNET && caplen == wirelen) {
        memset(&a, 0x5a, sizeof a);
        if (rdma__decode_plain_rocev2(cfg, frame, caplen, &a)) {
            plain_taken++;
            if (b.proto != RDMA_PROTO_ROCEV2 || (b.status != RDMA_OK && b.status != RDMA_BAD_ICRC))
                ck_abort_msg("%s: taken by the plain path, %s by the general one", what,
                             rdma_status_name(b.status));
        } else {
            static struct rdma_pkt untouched;
            memset(&untouched, 0x5a, sizeof untouched);
            if (memcmp(&a, &untouched, sizeof a))
                ck_abort_msg("%s: left by the plain path, changed", what);
        }
    }
}

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    return *x >> 11;
}

/* A RoCEv2/IPv4 frame of the opcode (a reserved one is built as opcode 0
 * and given its code afterwards), every field from the sequence x. */
static size_t build(uint8_t *out, size_t cap, unsigned opcode, size_t payload_len, uint64_t *x)
{
    static const uint8_t payload[16] = "0123456789abcdef";
    struct rdma_pkt p;
    memset(&p, 0, sizeof p);
    p.linktype = RDMA_LINKTYPE_ETHERNET;
    p.present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    uint64_t v = next(x);
    memcpy(p.eth.dst, &v, 6);
    v = next(x);
    memcpy(p.eth.src, &v, 6);
    v = next(x);
    p.ip.dsfield_dscp = v & 63;
    p.ip.dsfield_ecn = v >> 6 & 3;
    p.ip.id = (uint16_t)(v >> 8);
    p.ip.flags = v >> 24 & 2; /* don't fragment, or not */
    p.ip.ttl = (uint8_t)(v >> 32);
    v = next(x);
    memcpy(p.ip.src, &v, 4);
    memcpy(p.ip.dst, (uint8_t *)&v + 4, 4);
    p.udp.srcport = (uint16_t)next(x);
    p.udp.dstport = RDMA_ROCEV2_UDP_PORT;
    bool reserved = !rdma_opcodes[opcode].name;
    rdma_pkt_set_opcode(&p, reserved ? 0 : (uint8_t)opcode);
    v = next(x);
    p.bth.se = v & 1;
    p.bth.m = v >> 1 & 1;
    p.bth.p_key = (uint16_t)(v >> 2);
    p.bth.fecn = v >> 18 & 1;
    p.bth.becn = v >> 19 & 1;
    p.bth.destqp = (uint32_t)(v >> 20) & 0xffffff;
    p.bth.a = v >> 44 & 1;
    p.bth.psn = (uint32_t)next(x) & 0xffffff;
    v = next(x);
    p.rdeth.eecnxt = (uint32_t)v & 0xffffff;
    p.deth.q_key = (uint32_t)(v >> 24);
    p.deth.srcqp = (uint32_t)next(x) & 0xffffff;
    p.xrceth.xrcsrq = (uint32_t)next(x) & 0xffffff;
    p.reth.va = next(x);
    v = next(x);
    p.reth.r_key = (uint32_t)v;
    p.reth.dmalen = (uint32_t)(v >> 32);
    p.atomiceth.va = next(x);
    p.atomiceth.r_key = (uint32_t)next(x);
    p.atomiceth.swapdt = next(x);
    p.atomiceth.cmpdt = next(x);
    v = next(x);
    p.aeth.syndrome = (uint8_t)v;
    p.aeth.msn = (uint32_t)(v >> 8) & 0xffffff;
    p.atomicacketh.origremdt = next(x);
    p.immdt.imm = (uint32_t)next(x);
    p.ieth.r_key = (uint32_t)next(x);
    if (opcode == 0x81) /* a CNP's 16 bytes, as the opcode table says */
        payload_len = 16;
    else if (!reserved && !(rdma_opcodes[opcode].flags & RDMA_OPF_PAYLOAD))
        payload_len = 0;
    p.payload = payload;
    p.payload_len = (uint32_t)payload_len;
    size_t len;
    ck_assert_int_eq(rdma_encode(&p, out, cap, &len), RDMA_OK);
    if (reserved) {
        out[ETH_LEN + 20 + 8] = (uint8_t)opcode;
        unit_seal(UNIT_CRC_ROCEV2, out, ETH_LEN, len);
    }
    return len;
}

/* Each byte of the headers changed, with the IPv4 checksum and ICRC
 * sealed again (the change the only fault) and not. */
static void check_changed_bytes(const struct rdma_decode_config *cfg, const uint8_t *frame, size_t len,
                                const char *what)
{
    static const uint8_t flips[] = {0x01, 0x10, 0x30, 0x80, 0xff};
    uint8_t copy[UNIT_FRAME_MAX];
    char where[160];
    size_t headers = len < HEADERS_MAX ? len : HEADERS_MAX;
    for (size_t at = 0; at < headers; at++) {
        for (size_t f = 0; f < sizeof flips; f++) {
            for (int seal = 0; seal < 2; seal++) {
                memcpy(copy, frame, len);
                copy[at] ^= flips[f];
                /* the end of the packet as its IPv4 length says, within the frame */
                size_t end = ETH_LEN + rdma_get_be16(copy + ETH_LEN + 2);
                if (seal && end <= len && end >= ETH_LEN + 20 + 8 + 12 + 4 && copy[ETH_LEN] == 0x45)
                    unit_seal(UNIT_CRC_ROCEV2, copy, ETH_LEN, end);
                snprintf(where, sizeof where, "%s, byte %zu ^ %#x%s", what, at, flips[f],
                         seal ? " sealed" : "");
                check_paths(cfg, RDMA_LINKTYPE_ETHERNET, copy, len, len, where);
            }
        }
    }
}

START_TEST(plain_rocev2_path_makes_what_the_general_path_makes)
{
    struct rdma_decode_config cfg, other_port, no_crc;
    rdma_decode_config_init(&cfg);
    other_port = no_crc = cfg;
    other_port.rocev2_port = 4792;
    no_crc.verify_crc = false;
    uint64_t x = 0x2545f4914f6cdd1d;
    uint8_t frame[UNIT_FRAME_MAX];
    char what[96];
    plain_taken = 0;
    for (unsigned op = 0; op < 256; op++) {
        for (size_t payload_len = 0; payload_len < 10; payload_len++) {
            size_t len = build(frame, sizeof frame, op, payload_len, &x);
            snprintf(what, sizeof what, "opcode %#04x, %zu bytes of payload", op, payload_len);
            unsigned before = plain_taken;
            check_paths(&cfg, RDMA_LINKTYPE_ETHERNET, frame, len, len, what);
            ck_assert_msg(plain_taken == before + (rdma_opcodes[op].name != NULL), "%s: plain path %s",
                          what, rdma_opcodes[op].name ? "not taken" : "taken");
            check_paths(&other_port, RDMA_LINKTYPE_ETHERNET, frame, len, len, what);
            check_paths(&no_crc, RDMA_LINKTYPE_ETHERNET, frame, len, len, what);
            for (size_t cut = 0; cut < len; cut++) {
                check_paths(&cfg, RDMA_LINKTYPE_ETHERNET, frame, cut, len, what);
                check_paths(&cfg, RDMA_LINKTYPE_ETHERNET, frame, cut, cut, what);
            }
            check_paths(&cfg, RDMA_LINKTYPE_ETHERNET, frame, len, len + 1, what);
            if (payload_len < 2)
                check_changed_bytes(&cfg, frame, len, what);
        }
    }
    ck_assert_uint_gt(plain_taken, 1000);
}
END_TEST

START_TEST(real_captures_decode_alike_on_both_paths)
{
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    ck_assert_uint_gt(n, 0);
    char what[160];
    plain_taken = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++) {
            const struct unit_frame *f = &caps[i].frames[j];
            snprintf(what, sizeof what, "%s frame %zu", caps[i].name, j + 1);
            check_paths(&cfg, (unsigned)caps[i].linktype, f->data, f->caplen, f->len, what);
        }
    }
    ck_assert_uint_gt(plain_taken, 0);
    unit_free_captures(caps, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decode_paths");
    TCase *tc = tcase_create("decode_paths");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, plain_rocev2_path_makes_what_the_general_path_makes);
    tcase_add_test(tc, real_captures_decode_alike_on_both_paths);
    suite_add_tcase(s, tc);
    return check_run(s);
}
