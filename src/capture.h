/* capture.h - frames from a capture file, for `rdmasim decode` and
 * `rdmasim replay` (see capture.c). */
#ifndef RDMASIM_CAPTURE_H
#define RDMASIM_CAPTURE_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capture_map {
    uint8_t *base;
    uint64_t off, len;
};

/* A window of the file, for another thread to map its pages in ahead of
 * the reader (capture_populate) or to unmap once no frame is in it
 * (capture_unmap): at millions of frames a second, mapping and unmapping
 * pages costs the reader as much as reading the records. */
struct capture_span {
    void *base;
    size_t len;
};

struct capture {
    pcap_t *pc;          /* checks the file header; reads what the mapping does not */
    char *iobuf;         /* the stdio buffer libpcap reads through */
    bool mapped;         /* records are read through mappings of the file */
    bool swapped, nano;
    bool hold;           /* mapped frames stay until capture_release() */
    int fd;              /* libpcap's, while mapped */
    int linktype;        /* a DLT_ value, as pcap_datalink() gives it */
    uint32_t snapshot;   /* libpcap's snapshot length for the file */
    uint64_t size, pos;  /* file size when opened; the next record */
    uint64_t released;   /* mappings ending at or before this may go */
    struct capture_map *maps; /* live mappings, in file order */
    size_t nmaps, maps_cap;
    const uint8_t *prefetched; /* the next line to prefetch in the last mapping */
    struct capture_map next;  /* held: the window after the last, mapped ahead */
    bool next_mapped, next_given;
    struct capture_span *dead; /* held: released windows, for capture_dead() */
    size_t ndead, dead_cap;
    char error[PCAP_ERRBUF_SIZE];
};

/* A frame as libpcap describes it at nanosecond precision: the seconds of
 * a classic pcap record are signed 32 bits there, and microseconds are
 * scaled after sign extension, so both are kept at that width. */
struct capture_frame {
    int64_t sec, nsec;
    uint32_t caplen, len;
    const uint8_t *data;
    /* Its record in the mapping, or NULL: data is then libpcap's buffer,
     * which the next capture_next() overwrites, held or not. */
    const uint8_t *record;
};

/* False, with libpcap's reason in err, when the file cannot be read as a
 * capture ("-" is standard input). */
bool capture_open(struct capture *c, const char *path, char *err, size_t errlen);
/* 1: a frame; 0: end of file; -1: a damaged record (c->error says why, in
 * libpcap's words). Unless held, data is valid until the next call. */
int capture_next(struct capture *c, struct capture_frame *f);
/* The frame of a record capture_next() read through the mapping, read
 * again (any thread may, reading only c's byte order and time unit);
 * returns where the record after it begins. */
const uint8_t *capture_record(const struct capture *c, const uint8_t *record,
                              struct capture_frame *f);
/* From now on frames read through the mapping (those with a record) stay
 * readable until a mark taken after them is released; each window is
 * mapped while the one before is read, for capture_ahead(), and released
 * windows wait for capture_dead(). */
void capture_hold(struct capture *c);
uint64_t capture_mark(const struct capture *c);
void capture_release(struct capture *c, uint64_t mark);
/* The window mapped ahead, once, for capture_populate(), which is to be
 * done soon: the span stays mapped until frames after it are released.
 * Pages not mapped in when the reader gets there fault in as it reads.
 * False if there is none. */
bool capture_ahead(struct capture *c, struct capture_span *s);
void capture_populate(const struct capture_span *s);
/* A released window, once, for capture_unmap(); false if there is none. */
bool capture_dead(struct capture *c, struct capture_span *s);
void capture_unmap(const struct capture_span *s);
void capture_close(struct capture *c);

#endif
