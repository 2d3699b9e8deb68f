/* test_crc32_part.c - CRCs joined from their parts, and frames encoded
 * without their payload: the ICRC of a frame kept without its payload is
 * the ICRC of the whole frame, checked against the reference CRC of
 * unit.c (written from the specification, sharing no code with the codec).
 */
#include <string.h>

#include "rdma_bytes.h"
#include "unit.h"

#define ETH_LEN 14
#define IPV4_LEN 20
#define ICRC_LEN 4

static void pattern(uint8_t *p, size_t len, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

static const uint32_t lengths[] = {0, 1, 3, 4, 63, 64, 1000, 4095, 4096, 9000};
#define NLENGTHS (sizeof lengths / sizeof lengths[0])

START_TEST(append_is_the_crc_of_the_whole)
{
    static uint8_t whole[2 * 9000];
    for (size_t a = 0; a < NLENGTHS; a++) {
        uint32_t len_a = lengths[a], len_b = lengths[_i];
        pattern(whole, len_a + len_b, (unsigned)(a * 31 + (size_t)_i));
        struct rdma_crc32_part b;
        rdma_crc32_part_init(&b, whole + len_a, len_b);
        ck_assert_uint_eq(b.crc, ref_crc32(0, whole + len_a, len_b));
        uint32_t joined = rdma_crc32_append(ref_crc32(0, whole, len_a), &b);
        ck_assert_msg(joined == ref_crc32(0, whole, len_a + len_b), "%u then %u bytes", len_a, len_b);
    }
}
END_TEST

/* A RoCEv2 RDMA WRITE Only over IPv4 carrying `payload`. */
static void write_only(struct rdma_pkt *pkt, const uint8_t *payload, uint32_t len)
{
    memset(pkt, 0, sizeof *pkt);
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    pkt->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    rdma_pkt_set_opcode(pkt, 0x0a);
    static const uint8_t dst[6] = {2, 0, 0, 0, 0, 2}, src[6] = {2, 0, 0, 0, 0, 1};
    memcpy(pkt->eth.dst, dst, 6);
    memcpy(pkt->eth.src, src, 6);
    pkt->ip.dsfield_dscp = 26;
    pkt->ip.dsfield_ecn = 2;
    pkt->ip.ttl = 64;
    pkt->ip.flags = 2;
    static const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
    memcpy(pkt->ip.src, a, 4);
    memcpy(pkt->ip.dst, b, 4);
    pkt->udp.srcport = 49152;
    pkt->udp.dstport = RDMA_ROCEV2_UDP_PORT;
    pkt->bth.p_key = 0xffff;
    pkt->bth.destqp = 0x123;
    pkt->bth.psn = 77;
    pkt->reth.va = 0x1000;
    pkt->reth.r_key = 0x42;
    pkt->reth.dmalen = len;
    pkt->payload = payload;
    pkt->payload_len = len;
}

START_TEST(a_frame_without_its_payload_is_the_whole_frame_less_it)
{
    uint32_t len = lengths[_i];
    static uint8_t payload[9000], whole[9300], held[400];
    pattern(payload, len, 7);
    struct rdma_pkt pkt;
    write_only(&pkt, payload, len);
    size_t whole_len, held_len, at;
    ck_assert_int_eq(rdma_encode(&pkt, whole, sizeof whole, &whole_len), RDMA_OK);
    struct rdma_crc32_part part;
    rdma_crc32_part_init(&part, payload, len);
    ck_assert_int_eq(rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at), RDMA_OK);
    ck_assert_uint_eq(held_len + len, whole_len);
    ck_assert_uint_eq(at, ETH_LEN + IPV4_LEN + 8 + 12 + 16); /* after the BTH and RETH */
    ck_assert_mem_eq(held, whole, at);
    ck_assert_mem_eq(held + at, whole + at + len, held_len - at);
    /* the ICRC the whole frame carries, as the specification computes it */
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    struct rdma_pkt back;
    ck_assert_int_eq(rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, whole, whole_len, whole_len, &back), RDMA_OK);
    ck_assert(back.icrc.ok);
    size_t covered = held_len - ETH_LEN - ICRC_LEN;
    uint32_t icrc = rdma_icrc_rocev2_without(held + ETH_LEN, covered, at - ETH_LEN, &part);
    ck_assert_uint_eq(icrc, back.icrc.value);
    if (whole_len - ETH_LEN - ICRC_LEN <= UNIT_FRAME_MAX) /* the reference's limit */
        ck_assert_uint_eq(icrc, ref_icrc(UNIT_CRC_ROCEV2, whole + ETH_LEN, whole_len - ETH_LEN - ICRC_LEN));
}
END_TEST

/* A flipped bit in the headers held, or in the payload the part stands
 * for, changes the ICRC: the check still covers every byte. */
START_TEST(a_flipped_bit_anywhere_changes_the_icrc)
{
    static uint8_t payload[4096], held[200];
    pattern(payload, sizeof payload, 3);
    struct rdma_pkt pkt;
    write_only(&pkt, payload, sizeof payload);
    struct rdma_crc32_part part;
    rdma_crc32_part_init(&part, payload, sizeof payload);
    size_t held_len, at;
    ck_assert_int_eq(rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at), RDMA_OK);
    size_t covered = held_len - ETH_LEN - ICRC_LEN;
    uint32_t good = rdma_icrc_rocev2_without(held + ETH_LEN, covered, at - ETH_LEN, &part);
    ck_assert_uint_eq(good, rdma_get_le32(held + held_len - ICRC_LEN));
    /* the BTH's destination QP and a RETH byte, both under the ICRC */
    static const size_t header_bytes[] = {ETH_LEN + IPV4_LEN + 8 + 7, ETH_LEN + IPV4_LEN + 8 + 12 + 3};
    for (size_t i = 0; i < 2; i++) {
        held[header_bytes[i]] ^= 0x10;
        ck_assert_uint_ne(rdma_icrc_rocev2_without(held + ETH_LEN, covered, at - ETH_LEN, &part), good);
        held[header_bytes[i]] ^= 0x10;
    }
    for (size_t bit = 0; bit < sizeof payload * 8; bit += 4093) {
        payload[bit / 8] ^= (uint8_t)(1u << bit % 8);
        struct rdma_crc32_part flipped;
        rdma_crc32_part_init(&flipped, payload, sizeof payload);
        ck_assert_uint_ne(rdma_icrc_rocev2_without(held + ETH_LEN, covered, at - ETH_LEN, &flipped), good);
        payload[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
}
END_TEST

/* Frames whose other checks read the payload are not encoded without it. */
START_TEST(frames_whose_checks_read_the_payload_are_refused)
{
    static uint8_t payload[256], held[200];
    struct rdma_crc32_part part;
    rdma_crc32_part_init(&part, payload, sizeof payload);
    size_t held_len, at;
    struct rdma_pkt pkt;
    write_only(&pkt, payload, sizeof payload);
    pkt.udp.checksum = 1; /* computed over the payload */
    ck_assert_int_eq(rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at), RDMA_UNSUPPORTED);
    write_only(&pkt, payload, sizeof payload);
    pkt.present = (pkt.present & ~(uint32_t)RDMA_HDR_IP) | RDMA_HDR_IPV6;
    ck_assert_int_eq(rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at), RDMA_UNSUPPORTED);
    write_only(&pkt, payload, sizeof payload - 1); /* the part is not the payload */
    ck_assert_int_eq(rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at), RDMA_UNSUPPORTED);
    ck_assert_uint_eq(held_len, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crc32_part");
    TCase *tc = tcase_create("crc32_part");
    tcase_add_loop_test(tc, append_is_the_crc_of_the_whole, 0, NLENGTHS);
    tcase_add_loop_test(tc, a_frame_without_its_payload_is_the_whole_frame_less_it, 0, NLENGTHS);
    tcase_add_test(tc, a_flipped_bit_anywhere_changes_the_icrc);
    tcase_add_test(tc, frames_whose_checks_read_the_payload_are_refused);
    suite_add_tcase(s, tc);
    return check_run(s);
}
