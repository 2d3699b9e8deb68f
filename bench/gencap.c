/* gencap.c - write a pcap of the RoCEv2 traffic mix of traffic.h for the
 * whole-process benchmark: FRAMES Ethernet frames, path MTUs of 256-1024
 * bytes so frames stay between 62 and 1098 bytes, nanosecond timestamps
 * spaced as the frames would leave a 100 Gb/s port back to back.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic.h"

#define LINK_GBPS 100
#define WIRE_OVERHEAD 24 /* preamble and start delimiter 8, FCS 4, inter-frame gap 12 */
#define START_SECONDS 1700000000
#define WRITE_BUFFER (4u << 20)

struct writer {
    pcap_dumper_t *dumper;
    uint64_t frames, max_frames;
    uint64_t bytes;
    size_t min_len, max_len;
    uint64_t time_ps;
};

static void write_frame(void *ctx, const uint8_t *frame, size_t len)
{
    struct writer *w = ctx;
    if (w->frames == w->max_frames)
        return;
    struct pcap_pkthdr h;
    /* With nanosecond precision, pcap_dump() takes tv_usec as nanoseconds. */
    h.ts.tv_sec = (time_t)(START_SECONDS + w->time_ps / 1000000000000u);
    h.ts.tv_usec = (suseconds_t)(w->time_ps / 1000 % 1000000000);
    h.caplen = h.len = (bpf_u_int32)len;
    pcap_dump((u_char *)w->dumper, &h, frame);
    w->frames++;
    w->bytes += len;
    if (len < w->min_len)
        w->min_len = len;
    if (len > w->max_len)
        w->max_len = len;
    w->time_ps += (len + WIRE_OVERHEAD) * 8 * 1000 / LINK_GBPS;
}

int main(int argc, char **argv)
{
    bool small = argc > 1 && !strcmp(argv[1], "--small");
    argc -= small;
    argv += small;
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_gencap [--small] FILE [FRAMES [SEED]]\n"
                        "Write FRAMES (default 1000000) RoCEv2 frames to the pcap FILE; with\n"
                        "--small, small frames only (single-packet messages of at most 200\n"
                        "bytes, their ACKs and READ requests, and CNPs): 62-274 bytes.\n");
        return 2;
    }
    struct writer w = {.max_frames = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000,
                       .min_len = SIZE_MAX};
    struct traffic_config cfg = {.nqp = 1000, .mtu_min = 256, .mtu_max = 1024, .min_last = 1,
                                 .seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1};
    if (small) {
        /* control traffic and short messages: what a link carries besides
         * bulk data, where per-frame costs dominate */
        cfg.mtu_max = 256;
        cfg.max_last = 200;
        cfg.max_packets = 1;
        cfg.cnp_percent = 20;
    }
    struct traffic t;
    if (traffic_init(&t, &cfg)) {
        fprintf(stderr, "bench_gencap: out of memory\n");
        return 1;
    }
    pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    /* Written in large pieces, as a copied or downloaded capture is: the
     * page cache then holds the file in large folios, which map several
     * times faster than the 4 KB pieces of stdio's default buffer. */
    static char write_buffer[WRITE_BUFFER]; /* glibc ignores a size without a buffer */
    FILE *f = fopen(argv[1], "wb");
    if (f && setvbuf(f, write_buffer, _IOFBF, sizeof write_buffer)) {
        fclose(f);
        f = NULL;
    }
    w.dumper = p && f ? pcap_dump_fopen(p, f) : NULL;
    if (!w.dumper) {
        fprintf(stderr, "bench_gencap: %s: %s\n", argv[1],
                !f ? strerror(errno) : p ? pcap_geterr(p) : "out of memory");
        if (f)
            fclose(f);
        return 1;
    }
    int rc = 0;
    while (w.frames < w.max_frames && !rc)
        rc = traffic_message(&t, write_frame, &w);
    if (rc)
        fprintf(stderr, "bench_gencap: the encoder refused a generated frame\n");
    if (pcap_dump_flush(w.dumper) || ferror(pcap_dump_file(w.dumper))) {
        fprintf(stderr, "bench_gencap: %s: write error\n", argv[1]);
        rc = 1;
    }
    pcap_dump_close(w.dumper);
    pcap_close(p);
    traffic_free(&t);
    if (!rc)
        printf("%s: %llu frames of %zu-%zu bytes, %llu bytes in all\n", argv[1],
               (unsigned long long)w.frames, w.min_len, w.max_len, (unsigned long long)w.bytes);
    return rc ? 1 : 0;
}
