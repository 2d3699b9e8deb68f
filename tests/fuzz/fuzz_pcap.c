/* fuzz_pcap.c - libFuzzer target: a whole capture file, read by the capture
 * reader `rdmasim decode` and `rdmasim replay` use (capture/capture.c: libpcap
 * for the file header and what it must read itself, mappings of the file
 * for the rest), frames held and released as decode's chunks are; every
 * frame decoded, fed to the iWARP stream decoder and printed, then the end
 * of the capture.
 *
 * The input is written to a file of its own first, since the reader maps
 * files. Property: a record read again through rdma_capture_record(), as
 * decode's workers do, is the frame rdma_capture_next() gave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "rdma_iwarp.h"

#define FUZZ_TARGET "fuzz_pcap"
#include "fuzz_common.h"

static char path[64];

static void cleanup(void) { unlink(path); }

static int setup(void)
{
    if (path[0])
        return 0;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/fuzz_pcap.XXXXXX", base);
    int fd = mkstemp(path);
    if (fd < 0) {
        path[0] = 0;
        return -1;
    }
    close(fd);
    atexit(cleanup);
    return 0;
}

static void reread(const struct rdma_capture *cap, const struct rdma_capture_frame *f)
{
    if (!f->record)
        return;
    struct rdma_capture_frame again;
    rdma_capture_record(cap, f->record, &again);
    require(again.sec == f->sec && again.nsec == f->nsec && again.caplen == f->caplen &&
                again.len == f->len && !memcmp(again.data, f->data, f->caplen),
            "a record read again is the same frame");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (setup())
        return 0;
    FILE *out = fopen(path, "wb");
    if (!out)
        return 0;
    size_t written = fwrite(data, 1, size, out);
    if (fclose(out) || written != size)
        return 0;
    struct rdma_capture cap;
    char errbuf[PCAP_ERRBUF_SIZE];
    if (!rdma_capture_open(&cap, path, errbuf, sizeof errbuf))
        return 0;
    struct rdma_iwarp_stream *iwarp = rdma_iwarp_stream_new();
    if (!iwarp) {
        rdma_capture_close(&cap);
        return 0;
    }
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    static struct rdma_pkt pkt;
    static struct rdma_iwarp_pdu pdu;
    static char text[16384];
    struct rdma_iwarp_seg seg;
    struct rdma_capture_frame cf;
    struct rdma_capture_span span;
    uint64_t frame_no = 0;
    rdma_capture_hold(&cap);
    int rc = rdma_capture_next(&cap, &cf);
    while (rc == 1) {
        reread(&cap, &cf);
        rdma_decode(&cfg, (unsigned)cap.linktype, cf.data, cf.caplen, cf.len, &pkt);
        rdma_iwarp_feed(iwarp, &pkt, cf.data, ++frame_no, &seg);
        rdma_format_json(&pkt, text, sizeof text);
        rdma_format_summary(&pkt, text, sizeof text);
        while (rdma_iwarp_next(iwarp, &pdu)) {
            rdma_iwarp_format_json(&seg, &pdu, text, sizeof text);
            rdma_iwarp_format_summary(&pkt, &seg, &pdu, text, sizeof text);
        }
        /* release what is done with, keeping the frame read ahead */
        uint64_t mark = rdma_capture_mark(&cap);
        rc = rdma_capture_next(&cap, &cf);
        rdma_capture_release(&cap, mark);
        if (rdma_capture_ahead(&cap, &span))
            rdma_capture_populate(&span);
        while (rdma_capture_dead(&cap, &span))
            rdma_capture_unmap(&span);
    }
    while (rdma_iwarp_finish(iwarp, &pdu))
        ;
    rdma_iwarp_stream_free(iwarp);
    while (rdma_capture_dead(&cap, &span))
        rdma_capture_unmap(&span);
    rdma_capture_close(&cap);
    return 0;
}
