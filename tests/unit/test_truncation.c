/* test_truncation.c - cut frames: every prefix of every golden frame and of
 * every real RDMA frame decodes to RDMA_TRUNCATED (the wire length stays the
 * full one, as in a capture with a snap length), and the encoder asked to
 * write into any buffer too small says so without writing past it. Each
 * prefix sits in a buffer of exactly its size, so the sanitizer build turns
 * any read beyond the captured bytes into a failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "golden.h"

START_TEST(golden_prefixes)
{
    const struct golden *g = &goldens[_i];
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame((enum golden_id)_i, buf);
    unit_assert_prefixes(g->linktype, buf, len, len - g->pad, g->name);
}
END_TEST

START_TEST(capture_prefixes)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    size_t frames = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++) {
            const struct unit_frame *f = &caps[i].frames[j];
            struct rdma_pkt p;
            unit_decode((unsigned)caps[i].linktype, f->data, f->len, f->len, &p);
            if (p.proto == RDMA_PROTO_OTHER)
                continue;
            char what[256];
            snprintf(what, sizeof what, "%s frame %zu", caps[i].name, j + 1);
            /* None of the RDMA frames in the captures is padded. */
            unit_assert_prefixes((unsigned)caps[i].linktype, f->data, f->len, f->len, what);
            frames++;
        }
    }
    ck_assert_uint_gt(frames, 0);
    unit_free_captures(caps, n);
}
END_TEST

/* Encode pkt into heap buffers of every size below what it needs. */
static void assert_encode_short(const struct rdma_pkt *pkt, const char *what)
{
    uint8_t full[UNIT_FRAME_MAX];
    size_t need;
    ck_assert_int_eq(rdma_encode(pkt, full, sizeof full, &need), RDMA_OK);
    for (size_t cap = 0; cap < need; cap++) {
        uint8_t *out = malloc(cap ? cap : 1);
        ck_assert_ptr_nonnull(out);
        size_t out_len = 1;
        enum rdma_status st = rdma_encode(pkt, out, cap, &out_len);
        free(out);
        ck_assert_msg(st == RDMA_TRUNCATED, "%s: %zu of %zu bytes: %s", what, cap, need,
                      rdma_status_name(st));
        ck_assert_uint_eq(out_len, 0);
    }
}

START_TEST(golden_encode_short)
{
    const struct golden *g = &goldens[_i];
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame((enum golden_id)_i, buf);
    struct rdma_pkt p;
    ck_assert_int_eq(unit_decode(g->linktype, buf, len, len, &p), RDMA_OK);
    assert_encode_short(&p, g->name);
    if (p.present & RDMA_HDR_UDP) {
        /* The UDP checksum covers the whole datagram, ICRC included. */
        p.udp.checksum = 1;
        assert_encode_short(&p, g->name);
    }
}
END_TEST

START_TEST(capture_encode_short)
{
    struct unit_capture *caps;
    size_t n = unit_load_captures(&caps);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++) {
            const struct unit_frame *f = &caps[i].frames[j];
            struct rdma_pkt p;
            unit_decode((unsigned)caps[i].linktype, f->data, f->len, f->len, &p);
            if (p.proto == RDMA_PROTO_OTHER)
                continue;
            char what[256];
            snprintf(what, sizeof what, "%s frame %zu", caps[i].name, j + 1);
            assert_encode_short(&p, what);
        }
    }
    unit_free_captures(caps, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("truncation");
    TCase *tc = tcase_create("prefixes");
    /* Thousands of decodes per frame under the sanitizers. */
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, golden_prefixes, 0, G_COUNT);
    tcase_add_test(tc, capture_prefixes);
    tcase_add_loop_test(tc, golden_encode_short, 0, G_COUNT);
    tcase_add_test(tc, capture_encode_short);
    suite_add_tcase(s, tc);
    return check_run(s);
}
