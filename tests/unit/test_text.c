/* test_text.c - the digit writers decode --json is built on, against
 * printf: rdma_put_u64 and rdma_put_digits8 (rdma_text.h, public), the
 * hex writers of out.h, and the numbers, addresses and CRCs of
 * rdma_format_json, whose eight-bit fields and IPv4 address parts come from
 * a table and MAC addresses from a table of hex pairs. Every writer is
 * checked at the edges of each digit count and on a spread of values, and
 * for writing nothing past the room it is given.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "out.h"
#include "rdma_text.h"
#include "unit.h"

#define GUARD 0x5a

/* Values where the digit count changes (9, 10, 99, 100, ... 10^19), the
 * edges of the integer types, and a spread between them. */
static size_t edge_values(uint64_t *v, size_t max)
{
    size_t n = 0;
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10) {
        v[n++] = p - 1;
        v[n++] = p;
        v[n++] = p + 1;
    }
    static const uint64_t more[] = {0, 255, 256, 65535, 65536, 16777215, 16777216,
                                    99999999, 100000000, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
                                    UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        v[n++] = more[i];
    uint64_t x = 0x9e3779b97f4a7c15u;
    while (n < max) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[n++] = x >> (x & 63); /* every magnitude */
    }
    return n;
}

#define NVALUES 4000

START_TEST(put_u64_writes_what_printf_writes)
{
    static uint64_t v[NVALUES];
    size_t n = edge_values(v, NVALUES);
    for (size_t i = 0; i < n; i++) {
        char want[32], got[RDMA_U64_DIGITS + 8];
        int len = snprintf(want, sizeof want, "%" PRIu64, v[i]);
        memset(got, GUARD, sizeof got);
        char *end = rdma_put_u64(got, v[i]);
        ck_assert_msg(end - got == len && !memcmp(got, want, (size_t)len), "%s written as %.*s", want,
                      (int)(end - got), got);
        for (size_t k = RDMA_U64_DIGITS; k < sizeof got; k++)
            ck_assert_msg(got[k] == GUARD, "%s: byte %zu written, past RDMA_U64_DIGITS", want, k);
    }
}
END_TEST

/* Every entry of the table of four digits the decimal writers are made of. */
START_TEST(digits4_table_holds_every_number_s_digits)
{
    for (uint32_t x = 0; x < 10000; x++) {
        char want[8], got[4];
        snprintf(want, sizeof want, "%04" PRIu32, x);
        uint32_t d = rdma__digits4[x];
        for (int k = 0; k < 4; k++)
            got[k] = (char)(d >> 8 * k);
        ck_assert_msg(!memcmp(got, want, 4), "%s in the table as %.4s", want, got);
    }
}
END_TEST

/* Every 16-bit value, the widths of most header fields, through the
 * writer of values below 10^8, which has room for eight. */
START_TEST(put_lt1e8_writes_what_printf_writes)
{
    for (uint32_t x = 0; x < 65536; x++) {
        char want[16], got[16];
        int len = snprintf(want, sizeof want, "%" PRIu32, x);
        memset(got, GUARD, sizeof got);
        char *end = rdma__put_lt1e8(got, x);
        ck_assert_msg(end - got == len && !memcmp(got, want, (size_t)len) && got[8] == GUARD,
                      "%s written as %.*s", want, (int)(end - got), got);
    }
}
END_TEST

START_TEST(put_digits8_keeps_leading_zeros)
{
    static const uint32_t v[] = {0, 9, 10, 99, 100, 1234567, 10000000, 99999999};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char want[16], got[10];
        snprintf(want, sizeof want, "%08" PRIu32, v[i]);
        memset(got, GUARD, sizeof got);
        rdma_put_digits8(got, v[i]);
        ck_assert_msg(!memcmp(got, want, 8) && got[8] == GUARD, "%s written as %.9s", want, got);
    }
}
END_TEST

START_TEST(hex_writers_write_what_printf_writes)
{
    static uint64_t v[NVALUES];
    size_t n = edge_values(v, NVALUES);
    for (size_t i = 0; i < n; i++) {
        char want[32], got[32];
        snprintf(want, sizeof want, "%08" PRIx32, (uint32_t)v[i]);
        memset(got, GUARD, sizeof got);
        ck_assert_ptr_eq(out_put_hex8(got, (uint32_t)v[i]), got + 8);
        ck_assert_msg(!memcmp(got, want, 8) && got[8] == GUARD, "%s written as %.9s", want, got);
        snprintf(want, sizeof want, "\"0x%016" PRIx64 "\"", v[i]);
        memset(got, GUARD, sizeof got);
        ck_assert_ptr_eq(out_put_hex64_json(got, v[i]), got + RDMA_HEX64_JSON);
        ck_assert_msg(!memcmp(got, want, RDMA_HEX64_JSON) && got[RDMA_HEX64_JSON] == GUARD,
                      "%s written as %.21s", want, got);
    }
}
END_TEST

/* A RoCEv2 RDMA WRITE Only over IPv4, its fields set from x. */
static void write_only(struct rdma_pkt *pkt, uint64_t x)
{
    memset(pkt, 0, sizeof *pkt);
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    pkt->proto = RDMA_PROTO_ROCEV2;
    pkt->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    rdma_pkt_set_opcode(pkt, 0x0a);
    for (int i = 0; i < 6; i++) {
        pkt->eth.dst[i] = (uint8_t)(x >> (8 * i));
        pkt->eth.src[i] = (uint8_t)~(x >> (8 * i));
    }
    for (int i = 0; i < 4; i++) {
        pkt->ip.src[i] = (uint8_t)(x >> (8 * i + 3));
        pkt->ip.dst[i] = (uint8_t)(x >> (8 * i + 5));
    }
    pkt->ip.ttl = (uint8_t)x;
    pkt->ip.id = (uint16_t)(x >> 8);
    pkt->bth.psn = (uint32_t)(x >> 16) & 0xffffff;
    pkt->reth.r_key = (uint32_t)(x >> 24);
    pkt->reth.va = x;
    pkt->icrc.present = true;
    pkt->icrc.value = (uint32_t)(x >> 13);
}

/* The member "name":value of text, or NULL. */
static const char *member(const char *text, const char *name, char *value, size_t cap)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = strstr(text, key);
    if (!at)
        return NULL;
    at += strlen(key);
    size_t n = strcspn(at, ",}");
    snprintf(value, cap, "%.*s", (int)n, at);
    return value;
}

/* The text printf makes of member k of write_only()'s packet, and its
 * name; the IPv4 source is looked for after "ip" (the first "src" is the
 * MAC's). */
static const char *expected(const struct rdma_pkt *pkt, int k, char *want, size_t cap)
{
    const uint8_t *d = pkt->eth.dst, *a = pkt->ip.src;
    switch (k) {
    case 0:
        snprintf(want, cap, "\"%02x:%02x:%02x:%02x:%02x:%02x\"", d[0], d[1], d[2], d[3], d[4], d[5]);
        return "dst";
    case 1:
        snprintf(want, cap, "\"%u.%u.%u.%u\"", a[0], a[1], a[2], a[3]);
        return "src";
    case 2:
        snprintf(want, cap, "%u", pkt->ip.ttl);
        return "ttl";
    case 3:
        snprintf(want, cap, "%u", pkt->ip.id);
        return "id";
    case 4:
        snprintf(want, cap, "%" PRIu32, pkt->bth.psn);
        return "psn";
    case 5:
        snprintf(want, cap, "%" PRIu32, pkt->reth.r_key);
        return "r_key";
    case 6:
        snprintf(want, cap, "\"0x%016" PRIx64 "\"", pkt->reth.va);
        return "va";
    case 7: /* the CRC's bytes in wire order, least significant first */
        snprintf(want, cap, "\"0x%02x%02x%02x%02x\"", pkt->icrc.value & 0xff, pkt->icrc.value >> 8 & 0xff,
                 pkt->icrc.value >> 16 & 0xff, pkt->icrc.value >> 24);
        return "value";
    }
    return NULL;
}

START_TEST(json_numbers_addresses_and_crcs_read_as_printf_writes_them)
{
    static uint64_t v[NVALUES];
    size_t n = edge_values(v, NVALUES);
    for (size_t i = 0; i < n; i++) {
        struct rdma_pkt pkt;
        char text[4096], got[64], want[64];
        write_only(&pkt, v[i]);
        size_t len = rdma_format_json(&pkt, text, sizeof text - 1);
        ck_assert_uint_gt(len, 0);
        text[len] = 0;
        const char *name;
        for (int k = 0; (name = expected(&pkt, k, want, sizeof want)); k++) {
            const char *from = k == 1 ? strstr(text, "\"ip\":") : text;
            ck_assert_msg(member(from, name, got, sizeof got) && !strcmp(got, want), "%s: %s for %s in %s",
                          name, got, want, text);
        }
    }
}
END_TEST

/* Every eight-bit value through the table: TTLs and IPv4 address parts. */
START_TEST(json_bytes_read_as_printf_writes_them)
{
    struct rdma_pkt pkt;
    char text[4096], got[64], want[64];
    write_only(&pkt, 0);
    for (unsigned x = 0; x < 256; x++) {
        pkt.ip.ttl = (uint8_t)x;
        memset(pkt.ip.src, (int)x, 4);
        size_t len = rdma_format_json(&pkt, text, sizeof text - 1);
        ck_assert_uint_gt(len, 0);
        text[len] = 0;
        snprintf(want, sizeof want, "%u", x);
        ck_assert_msg(member(text, "ttl", got, sizeof got) && !strcmp(got, want), "ttl %s for %s", got, want);
        snprintf(want, sizeof want, "\"%u.%u.%u.%u\"", x, x, x, x);
        ck_assert_msg(member(strstr(text, "\"ip\":"), "src", got, sizeof got) && !strcmp(got, want),
                      "ip.src %s for %s", got, want);
    }
}
END_TEST

/* Every opcode's name as the opcode table has it: format_json.c holds the
 * members' text in a table of its own. */
START_TEST(json_opcode_names_are_the_table_s)
{
    struct rdma_pkt pkt;
    char text[4096], want[128];
    for (unsigned op = 0; op < 256; op++) {
        write_only(&pkt, 0);
        rdma_pkt_set_opcode(&pkt, (uint8_t)op);
        size_t len = rdma_format_json(&pkt, text, sizeof text - 1);
        ck_assert_uint_gt(len, 0);
        text[len] = 0;
        snprintf(want, sizeof want, "\"opcode_name\":\"%s\"",
                 rdma_opcodes[op].name ? rdma_opcodes[op].name : "reserved");
        const char *at = strstr(text, want);
        ck_assert_msg(at && strchr(",}", at[strlen(want)]), "opcode 0x%02x: %s not in %s", op, want, text);
    }
}
END_TEST

/* rdma_format_json writes the RoCEv2 frames most captures hold on a path
 * of its own when the buffer has room for the longest of them, and every
 * frame on the general path when it has less: given the room its text
 * takes and the byte of the comma it drops, every frame takes the general
 * path, which must make the same text, and one byte less makes nothing. Every opcode, each kind of AETH
 * syndrome, with and without a VLAN tag, a damaged header and a CRC, and
 * the fields of every extended header set. */
START_TEST(json_fast_path_writes_what_the_general_path_writes)
{
    static const uint8_t syndromes[] = {0x1f, 0x00, 0x2d, 0x20, 0x40, 0x60, 0x63, 0x7f};
    struct rdma_pkt pkt;
    char fast[4096], general[4096];
    unsigned taken = 0;
    for (unsigned op = 0; op < 256; op++) {
        for (unsigned k = 0; k < sizeof syndromes * 4; k++) {
            uint64_t x = 0x9e3779b97f4a7c15u * (op * 64 + k + 1);
            write_only(&pkt, x);
            rdma_pkt_set_opcode(&pkt, (uint8_t)op);
            pkt.aeth.syndrome = syndromes[k % sizeof syndromes];
            pkt.aeth.msn = (uint32_t)x & 0xffffff;
            pkt.deth.q_key = (uint32_t)(x >> 7);
            pkt.deth.srcqp = (uint32_t)(x >> 17) & 0xffffff;
            pkt.rdeth.eecnxt = (uint32_t)(x >> 3) & 0xffffff;
            pkt.xrceth.xrcsrq = (uint32_t)(x >> 5) & 0xffffff;
            pkt.atomiceth.swapdt = ~x;
            pkt.atomiceth.cmpdt = x * 3;
            pkt.atomicacketh.origremdt = x >> 9;
            pkt.immdt.imm = (uint32_t)(x >> 11);
            pkt.ieth.r_key = (uint32_t)(x >> 21);
            pkt.payload_len = (uint32_t)(x >> 40);
            pkt.ip_checksum_ok = x & 1;
            pkt.icrc.ok = x >> 1 & 1;
            unsigned variant = k / sizeof syndromes;
            if (variant == 1)
                pkt.nvlan = 1;
            if (variant == 2) {
                pkt.status = RDMA_MALFORMED;
                pkt.reason = "a reason";
            }
            if (variant == 3)
                pkt.icrc.present = false;
            size_t len = rdma_format_json(&pkt, fast, sizeof fast);
            ck_assert_uint_gt(len, 0);
            ck_assert_uint_lt(len, 1024); /* below the fast path's bound */
            ck_assert_uint_eq(rdma_format_json(&pkt, general, len + 1), len);
            ck_assert_msg(!memcmp(fast, general, len), "opcode 0x%02x, %u: %.*s\nand %.*s", op, k,
                          (int)len, fast, (int)len, general);
            ck_assert_uint_eq(rdma_format_json(&pkt, general, len), 0);
            taken += variant == 0;
        }
    }
    ck_assert_uint_gt(taken, 0);
}
END_TEST

/* The member `name` of pkt's text, by both paths (the general one for a
 * VLAN tag), against printf of `want`. */
static void check_member(struct rdma_pkt *pkt, const char *name, uint64_t want)
{
    char text[4096], got[64], expect[64];
    snprintf(expect, sizeof expect, "%" PRIu64, want);
    for (unsigned nvlan = 0; nvlan < 2; nvlan++) {
        pkt->nvlan = (uint8_t)nvlan;
        size_t len = rdma_format_json(pkt, text, sizeof text - 1);
        ck_assert_uint_gt(len, 0);
        text[len] = 0;
        ck_assert_msg(member(text, name, got, sizeof got) && !strcmp(got, expect), "%s %s for %s in %s",
                      name, got, expect, text);
    }
    pkt->nvlan = 0;
}

/* Fields narrower than their member take paths of their width: one digit
 * for three bits or fewer, at most five digits for 16 bits or fewer, no
 * test for ten digits below 27 bits. Every value of the narrow ones and of
 * a 16-bit one, the edges of the 24-bit ones; a value wider
 * than its field is cut to the field's bits, as the encoder cuts it. */
START_TEST(json_narrow_fields_read_as_printf_writes_them)
{
    struct rdma_pkt pkt;
    write_only(&pkt, 0);
    for (unsigned x = 0; x < 8; x++) {
        pkt.bth.se = pkt.bth.m = pkt.bth.fecn = pkt.bth.becn = pkt.bth.a = (uint8_t)(x & 1);
        pkt.bth.padcnt = pkt.ip.dsfield_ecn = (uint8_t)(x & 3);
        pkt.ip.flags = (uint8_t)x;
        static const char *const one_bit[] = {"se", "m", "fecn", "becn", "a"};
        for (size_t i = 0; i < sizeof one_bit / sizeof one_bit[0]; i++)
            check_member(&pkt, one_bit[i], x & 1);
        check_member(&pkt, "padcnt", x & 3);
        check_member(&pkt, "dsfield_ecn", x & 3);
        check_member(&pkt, "flags", x);
    }
    for (unsigned x = 0; x < 8192; x++) {
        pkt.ip.frag_offset = (uint16_t)x;
        check_member(&pkt, "frag_offset", x);
    }
    for (unsigned x = 0; x < 65536; x++) {
        pkt.udp.srcport = (uint16_t)x;
        check_member(&pkt, "srcport", x);
    }
    static uint64_t v[NVALUES];
    size_t n = edge_values(v, NVALUES);
    for (size_t i = 0; i < n; i++) {
        pkt.bth.destqp = pkt.bth.psn = (uint32_t)v[i] & 0xffffff;
        check_member(&pkt, "destqp", v[i] & 0xffffff);
        check_member(&pkt, "psn", v[i] & 0xffffff);
    }
    pkt.bth.se = 3;
    pkt.ip.flags = 15;
    pkt.bth.psn = 0x1000005;
    check_member(&pkt, "se", 1);
    check_member(&pkt, "flags", 7);
    check_member(&pkt, "psn", 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, put_u64_writes_what_printf_writes);
    tcase_add_test(tc, digits4_table_holds_every_number_s_digits);
    tcase_add_test(tc, put_lt1e8_writes_what_printf_writes);
    tcase_add_test(tc, put_digits8_keeps_leading_zeros);
    tcase_add_test(tc, hex_writers_write_what_printf_writes);
    tcase_add_test(tc, json_numbers_addresses_and_crcs_read_as_printf_writes_them);
    tcase_add_test(tc, json_bytes_read_as_printf_writes_them);
    tcase_add_test(tc, json_opcode_names_are_the_table_s);
    tcase_add_test(tc, json_fast_path_writes_what_the_general_path_writes);
    tcase_add_test(tc, json_narrow_fields_read_as_printf_writes_them);
    suite_add_tcase(s, tc);
    return check_run(s);
}
