/* test_capture_skip.c - rdma_capture_skip(), with which the reader of
 * `rdmasim decode` passes over the records a worker will read, against
 * rdma_capture_next() reading the same file record by record: the same
 * records, the same captured bytes, the next record where the pass ends,
 * and the records it must leave to rdma_capture_next() (longer than the
 * snapshot length, cut by the end of the file) left to it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check_run.h"
#include "capture.h"

#define FRAMES 300
#define SNAPLEN 256
#define TOO_LONG 200 /* the record whose captured length is past the snapshot length */
#define NONE FRAMES

static uint32_t caplen_of(unsigned i, unsigned too_long)
{
    return i == too_long ? SNAPLEN + 1 : 60 + i * 37 % 180;
}

static void put32(FILE *f, uint32_t v) { ck_assert_uint_eq(fwrite(&v, 4, 1, f), 1); }

/* A classic pcap file of FRAMES Ethernet records, the last cut short,
 * record too_long (or NONE) longer than the snapshot length. */
static void write_capture(char *path, unsigned too_long)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    put32(f, 0xa1b2c3d4u);
    put32(f, 2u | 4u << 16);
    put32(f, 0);
    put32(f, 0);
    put32(f, SNAPLEN);
    put32(f, 1); /* DLT_EN10MB */
    uint8_t data[SNAPLEN + 1];
    for (unsigned i = 0; i < FRAMES; i++) {
        uint32_t caplen = caplen_of(i, too_long);
        put32(f, 1700000000u + i);
        put32(f, i);
        put32(f, caplen);
        put32(f, caplen);
        memset(data, (int)i, sizeof data);
        size_t n = i == FRAMES - 1 ? caplen / 2 : caplen;
        ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    }
    ck_assert_int_eq(fclose(f), 0);
}

/* Read records with rdma_capture_next() up to record `to` (frame number
 * to + 1), from frame `*at`. */
static void read_to(struct rdma_capture *c, struct rdma_capture_frame *f, unsigned *at, unsigned to)
{
    for (; *at < to; ++*at)
        ck_assert_int_eq(rdma_capture_next(c, f), 1);
}

START_TEST(skip_passes_the_records_next_would_read)
{
    char path[] = "/tmp/test_capture_skipXXXXXX";
    write_capture(path, TOO_LONG);
    char err[256];
    struct rdma_capture c;
    ck_assert_msg(rdma_capture_open(&c, path, err, sizeof err), "%s", err);
    rdma_capture_hold(&c);
    struct rdma_capture_frame f;
    unsigned at = 0;
    read_to(&c, &f, &at, 1);

    /* at most max records */
    uint64_t bytes = 0;
    const uint8_t *end = NULL;
    ck_assert_uint_eq(rdma_capture_skip(&c, 10, &bytes, UINT64_MAX, &end), 10);
    uint64_t want = 0;
    for (unsigned i = 1; i <= 10; i++)
        want += caplen_of(i, TOO_LONG);
    ck_assert_uint_eq(bytes, want);
    at += 10;
    read_to(&c, &f, &at, 12);
    ck_assert_ptr_eq(f.record, end); /* the next record is the one the pass ended before */
    ck_assert_uint_eq(f.caplen, caplen_of(11, TOO_LONG));
    ck_assert_uint_eq(f.sec, 1700000000u + 11);

    /* each record taken while the bytes are below the bound */
    bytes = 1000;
    ck_assert_uint_eq(rdma_capture_skip(&c, 100, &bytes, 1001, &end), 1);
    ck_assert_uint_eq(bytes, 1000 + caplen_of(12, TOO_LONG));
    ck_assert_uint_eq(rdma_capture_skip(&c, 100, &bytes, 1001, &end), 0);

    /* up to the record longer than the snapshot length, which is left to
     * rdma_capture_next() (libpcap reads it), and on after it */
    bytes = 0;
    ck_assert_uint_eq(rdma_capture_skip(&c, FRAMES, &bytes, UINT64_MAX, &end), TOO_LONG - 13);
    ck_assert_int_eq(rdma_capture_next(&c, &f), 1);
    ck_assert_ptr_null(f.record);
    ck_assert_uint_eq(f.sec, 1700000000u + TOO_LONG);
    ck_assert_uint_eq(rdma_capture_skip(&c, FRAMES, &bytes, UINT64_MAX, &end), FRAMES - 2 - TOO_LONG);
    rdma_capture_close(&c);
    unlink(path);
}
END_TEST

/* Up to the record the end of the file cuts, which is left to
 * rdma_capture_next() (libpcap's error); before any record is read, no
 * window is mapped and nothing is passed over. */
START_TEST(skip_stops_at_a_cut_record)
{
    char path[] = "/tmp/test_capture_skipXXXXXX";
    write_capture(path, NONE);
    char err[256];
    struct rdma_capture c;
    ck_assert_msg(rdma_capture_open(&c, path, err, sizeof err), "%s", err);
    rdma_capture_hold(&c);
    uint64_t bytes = 0;
    const uint8_t *end = NULL;
    ck_assert_uint_eq(rdma_capture_skip(&c, FRAMES, &bytes, UINT64_MAX, &end), 0);
    ck_assert_ptr_null(end);
    struct rdma_capture_frame f;
    ck_assert_int_eq(rdma_capture_next(&c, &f), 1);
    ck_assert_uint_eq(rdma_capture_skip(&c, FRAMES, &bytes, UINT64_MAX, &end), FRAMES - 2);
    ck_assert_int_eq(rdma_capture_next(&c, &f), -1);
    rdma_capture_close(&c);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("capture_skip");
    TCase *tc = tcase_create("capture_skip");
    tcase_add_test(tc, skip_passes_the_records_next_would_read);
    tcase_add_test(tc, skip_stops_at_a_cut_record);
    suite_add_tcase(s, tc);
    return check_run(s);
}
