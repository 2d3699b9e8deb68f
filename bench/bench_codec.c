/* bench_codec.c - in-process throughput of rdma_decode() and of the RoCEv2
 * ICRC on one core, over the traffic mix of traffic.h (RDMA WRITE, SEND with
 * immediate and READ over 1000 queue pairs, payloads of 1024-4096 bytes).
 *
 * The frames are built once, back to back in one buffer as a capture file
 * holds them, then processed over and over. Every figure is taken in several
 * repetitions of at least -t seconds each, timed with CLOCK_MONOTONIC; the
 * rates of the best and the median repetition are printed. The corpus is
 * sized to stay in the last-level cache, as a capture just read would be:
 * with -n large enough to spill to memory, the header decode waits on cache
 * misses instead. ICRC bytes are the bytes the
 * CRC covers in the frame, from the IP header up to the ICRC (the eight 0xFF
 * bytes the CRC model puts in front are not frame bytes and are not counted).
 * GB is 10^9 bytes.
 */
#include <getopt.h>
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma_codec.h"
#include "traffic.h"

#define ETH_HEADER_LEN 14
#define ICRC_LEN 4
#define MAX_REPETITIONS 99

struct corpus {
    uint8_t *buf;
    size_t len, cap;
    size_t *offset;
    uint32_t *frame_len;
    uint32_t *covered; /* ICRC-covered bytes, from the IP header */
    size_t n, max;
    uint64_t frame_bytes, covered_bytes;
    uint32_t min_frame, max_frame;
    bool failed;
};

static void add_frame(void *ctx, const uint8_t *frame, size_t len)
{
    struct corpus *c = ctx;
    if (c->n == c->max || c->failed)
        return;
    if (c->cap - c->len < len) {
        size_t cap = c->cap ? 2 * c->cap : (size_t)1 << 20;
        while (cap - c->len < len)
            cap *= 2;
        uint8_t *buf = realloc(c->buf, cap);
        if (!buf) {
            c->failed = true;
            return;
        }
        c->buf = buf;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, frame, len);
    c->offset[c->n] = c->len;
    c->frame_len[c->n] = (uint32_t)len;
    c->len += len;
    c->n++;
}

/* Build the frames, then check that each decodes cleanly with a good ICRC
 * and record what the ICRC covers. */
static int build_corpus(struct corpus *c, size_t n, unsigned nqp, uint64_t seed)
{
    struct traffic_config tc = {.nqp = nqp, .mtu_min = 1024, .mtu_max = 4096, .min_last = 1024,
                                .seed = seed};
    struct traffic t;
    memset(c, 0, sizeof *c);
    c->max = n;
    c->offset = malloc(n * sizeof *c->offset);
    c->frame_len = malloc(n * sizeof *c->frame_len);
    c->covered = malloc(n * sizeof *c->covered);
    if (!c->offset || !c->frame_len || !c->covered || traffic_init(&t, &tc)) {
        fprintf(stderr, "bench_codec: out of memory\n");
        return -1;
    }
    while (c->n < n && !c->failed)
        if (traffic_message(&t, add_frame, c)) {
            fprintf(stderr, "bench_codec: the encoder refused a generated frame\n");
            c->failed = true;
        }
    traffic_free(&t);
    if (c->failed)
        return -1;
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    struct rdma_pkt pkt;
    c->min_frame = UINT32_MAX;
    for (size_t i = 0; i < c->n; i++) {
        if (rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, c->buf + c->offset[i], c->frame_len[i],
                        c->frame_len[i], &pkt) != RDMA_OK ||
            pkt.proto != RDMA_PROTO_ROCEV2 || !pkt.icrc.ok) {
            fprintf(stderr, "bench_codec: generated frame %zu does not decode cleanly: %s\n", i,
                    pkt.reason ? pkt.reason : rdma_status_name((enum rdma_status)pkt.status));
            return -1;
        }
        c->covered[i] = pkt.ip.len - ICRC_LEN;
        c->covered_bytes += c->covered[i];
        c->frame_bytes += c->frame_len[i];
        if (c->frame_len[i] < c->min_frame)
            c->min_frame = c->frame_len[i];
        if (c->frame_len[i] > c->max_frame)
            c->max_frame = c->frame_len[i];
    }
    return 0;
}

/* The workloads. Each returns a value derived from every frame, so none of
 * the work can be optimised away. */
static uint64_t decode_all(const struct corpus *c, bool verify_crc)
{
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    cfg.verify_crc = verify_crc;
    struct rdma_pkt pkt;
    uint64_t acc = 0;
    for (size_t i = 0; i < c->n; i++) {
        rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, c->buf + c->offset[i], c->frame_len[i],
                    c->frame_len[i], &pkt);
        acc += pkt.bth.psn + pkt.status;
    }
    return acc;
}

static uint64_t decode_crc_off(const struct corpus *c) { return decode_all(c, false); }
static uint64_t decode_crc_on(const struct corpus *c) { return decode_all(c, true); }

static uint64_t icrc_rocev2(const struct corpus *c)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < c->n; i++)
        acc += rdma_icrc_rocev2(c->buf + c->offset[i] + ETH_HEADER_LEN, c->covered[i]);
    return acc;
}

/* The same bytes through ISA-L with no masking: the ceiling for the above. */
static uint64_t crc_isal(const struct corpus *c)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < c->n; i++)
        acc += crc32_gzip_refl(0, c->buf + c->offset[i] + ETH_HEADER_LEN, c->covered[i]);
    return acc;
}

typedef uint64_t workload_fn(const struct corpus *c);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Tell the compiler a result is used, so no pass can be optimised away. */
static inline void keep(uint64_t v) { __asm__ volatile("" : : "r"(v) : "memory"); }

/* Seconds per pass over the corpus in each of `reps` repetitions, sorted
 * ascending. The first, untimed pass warms the caches and sizes a
 * repetition. */
static void measure(workload_fn *run, const struct corpus *c, int reps, double seconds,
                    double *per_pass)
{
    double t0 = now();
    keep(run(c));
    double one = now() - t0;
    unsigned long passes = one > 0 && seconds / one > 1 ? (unsigned long)(seconds / one) + 1 : 1;
    for (int r = 0; r < reps; r++) {
        t0 = now();
        for (unsigned long p = 0; p < passes; p++)
            keep(run(c));
        per_pass[r] = (now() - t0) / (double)passes;
    }
    qsort(per_pass, (size_t)reps, sizeof *per_pass, by_value);
}

static double median(const double *sorted, int n)
{
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_codec [-n FRAMES] [-q QPS] [-r REPETITIONS] [-t SECONDS] [-s SEED]\n"
            "\n"
            "Build FRAMES RoCEv2/IPv4 frames (default 8192) over QPS queue pairs (1000)\n"
            "and measure rdma_decode() and the ICRC on one core: REPETITIONS (7) timed\n"
            "runs of at least SECONDS (0.2) each; prints the best and the median run.\n");
}

int main(int argc, char **argv)
{
    size_t nframes = 8192;
    unsigned nqp = 1000;
    int reps = 7;
    double seconds = 0.2;
    uint64_t seed = 1;
    int opt;
    while ((opt = getopt(argc, argv, "n:q:r:t:s:h")) != -1) {
        switch (opt) {
        case 'n':
            nframes = strtoul(optarg, NULL, 0);
            break;
        case 'q':
            nqp = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 't':
            seconds = atof(optarg);
            break;
        case 's':
            seed = strtoull(optarg, NULL, 0);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || !nframes || !nqp || reps < 1 || reps > MAX_REPETITIONS || seconds <= 0) {
        usage(stderr);
        return 2;
    }
    struct corpus c;
    if (build_corpus(&c, nframes, nqp, seed))
        return 1;
    double frames = (double)c.n, gb = (double)c.covered_bytes / 1e9;
    /* Each workload is timed once; a figure is a workload's rate in a unit. */
    static workload_fn *const workloads[] = {decode_crc_off, decode_crc_on, icrc_rocev2,
                                             crc_isal};
    const struct {
        const char *id;
        const char *unit;
        unsigned workload;
        double per_pass; /* units per pass over the corpus */
        const char *what;
    } figures[] = {
        {"decode.crc_off", "frames/s", 0, frames, "rdma_decode, verify_crc = false"},
        {"decode.crc_on", "frames/s", 1, frames, "rdma_decode, verify_crc = true"},
        {"decode.crc_on", "GB/s", 1, gb, "ICRC-covered bytes through rdma_decode"},
        {"icrc.rocev2", "GB/s", 2, gb, "rdma_icrc_rocev2 alone"},
        {"icrc.isal", "GB/s", 3, gb, "crc32_gzip_refl over the same bytes, unmasked"},
    };
    printf("# %zu frames over %u QPs, %zu-%zu bytes (mean %.0f), %.1f MB; ICRC covers %.1f MB\n",
           c.n, nqp, (size_t)c.min_frame, (size_t)c.max_frame, (double)c.frame_bytes / frames,
           (double)c.len / 1e6, (double)c.covered_bytes / 1e6);
    printf("# %d repetitions of >= %.2f s each; rates of the best and the median one\n", reps,
           seconds);
    printf("%-16s %-9s %12s %12s  %s\n", "figure", "unit", "best", "median", "what");
    fflush(stdout);
    double per_pass[sizeof workloads / sizeof workloads[0]][MAX_REPETITIONS];
    for (size_t w = 0; w < sizeof workloads / sizeof workloads[0]; w++)
        measure(workloads[w], &c, reps, seconds, per_pass[w]);
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        const double *t = per_pass[figures[i].workload];
        printf("%-16s %-9s %12.4g %12.4g  %s\n", figures[i].id, figures[i].unit,
               figures[i].per_pass / t[0], figures[i].per_pass / median(t, reps), figures[i].what);
    }
    free(c.buf);
    free(c.offset);
    free(c.frame_len);
    free(c.covered);
    return 0;
}
