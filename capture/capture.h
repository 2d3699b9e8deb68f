/* capture.h - frames from a capture file, one at a time (see capture.c):
 * the reader of `rdmasim decode`, `rdmasim replay` and the pcap fuzz
 * target. It knows files and records, not what the frames hold. */
#ifndef RDMASIM_CAPTURE_H
#define RDMASIM_CAPTURE_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdma_capture_map {
    uint8_t *base;
    uint64_t off, len;
};

/* A window of the file, for another thread to map its pages in ahead of
 * the reader (rdma_capture_populate) or to unmap once no frame is in it
 * (rdma_capture_unmap): at millions of frames a second, mapping and unmapping
 * pages costs the reader as much as reading the records. */
struct rdma_capture_span {
    void *base;
    size_t len;
};

struct rdma_capture {
    pcap_t *pc;          /* checks the file header; reads what the mapping does not */
    char *iobuf;         /* the stdio buffer libpcap reads through */
    bool mapped;         /* records are read through mappings of the file */
    bool swapped, nano;
    bool hold;           /* mapped frames stay until rdma_capture_release() */
    int fd;              /* libpcap's, while mapped */
    int linktype;        /* a DLT_ value, as pcap_datalink() gives it */
    uint32_t snapshot;   /* libpcap's snapshot length for the file */
    uint64_t size, pos;  /* file size when opened; the next record */
    uint64_t released;   /* mappings ending at or before this may go */
    struct rdma_capture_map *maps; /* live mappings, in file order */
    size_t nmaps, maps_cap;
    const uint8_t *prefetched; /* the next line to prefetch in the last mapping */
    struct rdma_capture_map next;  /* held: the window after the last, mapped ahead */
    bool next_mapped, next_given;
    struct rdma_capture_span *dead; /* held: released windows, for rdma_capture_dead() */
    size_t ndead, dead_cap;
    unsigned long faults; /* pages of the file found gone, when opened (see capture.c) */
    char error[PCAP_ERRBUF_SIZE];
};

/* A frame as libpcap describes it at nanosecond precision: the seconds of
 * a classic pcap record are signed 32 bits there, and microseconds are
 * scaled after sign extension, so both are kept at that width. */
struct rdma_capture_frame {
    int64_t sec, nsec;
    uint32_t caplen, len;
    const uint8_t *data;
    /* Its record in the mapping, or NULL: data is then libpcap's buffer,
     * which the next rdma_capture_next() overwrites, held or not. */
    const uint8_t *record;
};

/* False, with libpcap's reason in err, when the file cannot be read as a
 * capture ("-" is standard input). */
bool rdma_capture_open(struct rdma_capture *c, const char *path, char *err, size_t errlen);
/* 1: a frame; 0: end of file; -1: a damaged record (c->error says why, in
 * libpcap's words). Unless held, data is valid until the next call. */
int rdma_capture_next(struct rdma_capture *c, struct rdma_capture_frame *f);
/* The frame of a record rdma_capture_next() read through the mapping, read
 * again (any thread may, reading only c's byte order and time unit);
 * returns where the record after it begins. */
const uint8_t *rdma_capture_record(const struct rdma_capture *c, const uint8_t *record,
                              struct rdma_capture_frame *f);
/* Pass over the records that follow in the last mapping without making
 * frames of them, for a reader that hands them to others to read with
 * rdma_capture_record(): at most max, each taken while *bytes, to which
 * their captured lengths are added, is below max_bytes. Returns how many;
 * *end is then where the record after them begins. A record that
 * rdma_capture_next() would not read from that mapping as it stands (one
 * it cuts, one too long or damaged, one of lost pages) ends the pass,
 * for rdma_capture_next() to read. */
size_t rdma_capture_skip(struct rdma_capture *c, size_t max, uint64_t *bytes, uint64_t max_bytes,
                         const uint8_t **end);
/* From now on frames read through the mapping (those with a record) stay
 * readable until a mark taken after them is released; each window is
 * mapped while the one before is read, for rdma_capture_ahead(), and released
 * windows wait for rdma_capture_dead(). */
void rdma_capture_hold(struct rdma_capture *c);
uint64_t rdma_capture_mark(const struct rdma_capture *c);
void rdma_capture_release(struct rdma_capture *c, uint64_t mark);
/* The window mapped ahead, once, for rdma_capture_populate(), which is to be
 * done soon: the span stays mapped until frames after it are released.
 * Pages not mapped in when the reader gets there fault in as it reads.
 * False if there is none. */
bool rdma_capture_ahead(struct rdma_capture *c, struct rdma_capture_span *s);
void rdma_capture_populate(const struct rdma_capture_span *s);
/* A released window, once, for rdma_capture_unmap(); false if there is none. */
bool rdma_capture_dead(struct rdma_capture *c, struct rdma_capture_span *s);
void rdma_capture_unmap(const struct rdma_capture_span *s);
void rdma_capture_close(struct rdma_capture *c);

#endif
