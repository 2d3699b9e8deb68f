/* decode.c - `rdmasim decode`: every frame of pcap/pcapng captures as a line
 * of text or a JSON object (NDJSON), streaming (capture.c).
 *
 * A capture is cut into chunks of consecutive frames. Worker threads, one
 * a core, decode chunks into text of their own, each taking the oldest
 * chunk not yet taken, while the main thread reads the next chunks and
 * writes finished ones in order, so the output is the same bytes as
 * frame-by-frame decoding, and memory holds a few chunks, not the file.
 * The main thread is the one all wait for, so it does as little as it
 * can: of a classic pcap file it only finds where chunks begin and end
 * (the workers read the records themselves), and it hands the mapping and
 * unmapping of the file's pages to the workers (capture.h).
 *
 * iWARP decoding is stateful (a TCP connection is reassembled across
 * frames, codec/tcp_stream.c), so frames carrying TCP take an ordered path:
 * a worker decodes such a frame's headers and leaves a place for its lines
 * in the chunk's text; the main thread, writing chunks in order, feeds the
 * frame to the connection state and writes its lines into that place. The
 * state therefore sees exactly the frames it would see frame by frame, in
 * the same order. Frames without TCP leave the state untouched but for
 * work it defers to the next frame fed (a connection closed by the frame
 * before is forgotten then), which only shows if the capture ends there:
 * so the last frame of a capture also takes the ordered path.
 *
 * Small captures (two chunks or fewer) are decoded by the main thread
 * alone, through the same chunks.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "cli.h"
#include "filter.h"
#include "rdma_codec.h"
#include "rdma_iwarp.h"
#include "rdma_text.h"

#define OUT_BUFFER (1u << 20)
/* A file name (at most PATH_MAX, 4096 bytes, or it would not open) as a
 * JSON string: six bytes an escaped byte, and the quotes; in the text
 * header, four an escaped byte. Never cut. */
#define FILE_TEXT_MAX (6 * 4096 + 2)
#define LINE_MAX_BYTES (16384 + FILE_TEXT_MAX)
#define CHUNK_FRAMES 2048
#define CHUNK_BYTES (4u << 20) /* of frame data */
#define CHUNK_OUT (1u << 20)   /* first size of a chunk's text; it grows */
#define MAX_WORKERS 8
#define SLOTS_PER_WORKER 4     /* chunks in flight a worker: slack for one late chunk */
#define DEAD_MAX 8             /* released windows waiting for a worker to unmap them */
#define INLINE_CHUNKS 1        /* decoded by the main thread before workers start */
/* The writers of a frame's line, inlined into the loop over a chunk's
 * frames: called apart, their set-up and the passing of their arguments
 * took as many instructions as the line's prefix itself. */
#define LINE_WRITER static inline __attribute__((always_inline))

struct decode_opts {
    bool json;
    bool strict;
    uint64_t max_frames;         /* -c: frames read at most, over all files; 0: all */
    const struct filter *filter; /* --filter, or NULL */
    struct rdma_decode_config cfg;
    struct rdma_iwarp_limits lim; /* --max-connections, --idle-timeout */
};

struct decode_stats {
    uint64_t frames;
    uint64_t rdma;
    uint64_t bad;     /* truncated (not by the snap length), malformed or a bad CRC */
    uint64_t snapped; /* cut by the snap length: not damage */
};

/* Output is assembled in a large buffer and written in big blocks: at
 * millions of lines a second, stdio's per-call locking would dominate. */
struct sink {
    char *buf;
    size_t len;
    bool failed;
};

static void sink_flush(struct sink *s)
{
    if (s->len && fwrite(s->buf, 1, s->len, stdout) != s->len)
        s->failed = true;
    s->len = 0;
}

static char *sink_line(struct sink *s)
{
    if (OUT_BUFFER - s->len < LINE_MAX_BYTES)
        sink_flush(s);
    return s->buf + s->len;
}

/* "==> NAME <==" before each file's lines when several are given, as
 * head(1) writes it, with control characters (and DEL and the backslash,
 * so that the escape is unambiguous) as \xNN: a name cannot move the
 * cursor, clear the screen or end the line. At most 4 * 4096 + 9 bytes. */
static size_t header_line(char *p, const char *path)
{
    static const char hex[] = "0123456789abcdef";
    memcpy(p, "==> ", 4);
    size_t n = 4;
    /* a name that opened is shorter than PATH_MAX: the bound never cuts it */
    for (const unsigned char *s = (const unsigned char *)path; *s && n + 4 + 5 < LINE_MAX_BYTES; s++) {
        if (*s < 0x20 || *s == 0x7f || *s == '\\') {
            p[n++] = '\\';
            p[n++] = 'x';
            p[n++] = hex[*s >> 4];
            p[n++] = hex[*s & 15];
        } else {
            p[n++] = (char)*s;
        }
    }
    memcpy(p + n, " <==\n", 5);
    return n + 5;
}

/* n bytes in order after what the sink holds: small pieces join it, large
 * ones are written as they are. */
static void sink_write(struct sink *s, const char *p, size_t n)
{
    if (!n)
        return;
    if (n <= OUT_BUFFER - s->len && n < LINE_MAX_BYTES) {
        memcpy(s->buf + s->len, p, n);
        s->len += n;
        return;
    }
    sink_flush(s);
    if (fwrite(p, 1, n, stdout) != n)
        s->failed = true;
}

LINE_WRITER size_t put_u64(char *p, uint64_t v) { return (size_t)(rdma_put_u64(p, v) - p); }

/* The text of a time's seconds and its point, kept from line to line:
 * consecutive frames mostly fall in the same second. */
struct time_text {
    bool valid;
    int64_t sec;
    size_t len;
    char text[RDMA_U64_DIGITS + 2];
};

/* seconds.nanoseconds, nine fraction digits, of sec + nsec / 10^9 (nsec
 * of any sign): -0.3 s is "-0.300000000", as tshark writes it. */
LINE_WRITER size_t put_time(char *p, struct time_text *tt, int64_t sec, int64_t nsec)
{
    if ((uint64_t)nsec >= 1000000000) { /* records keep 0 <= nsec < 10^9; differences may not */
        sec += nsec / 1000000000;
        nsec %= 1000000000;
        if (nsec < 0) {
            nsec += 1000000000;
            sec--;
        }
    }
    /* now sec + nsec / 10^9 with 0 <= nsec < 10^9; a negative time is its
     * magnitude after a minus sign */
    uint64_t whole = (uint64_t)sec;
    uint32_t v = (uint32_t)nsec;
    bool neg = sec < 0;
    if (neg) {
        whole = 0 - (uint64_t)sec - (v ? 1 : 0);
        v = v ? 1000000000 - v : 0;
    }
    if (neg || !tt->valid || tt->sec != sec) {
        size_t n = 0;
        if (neg)
            tt->text[n++] = '-';
        n += put_u64(tt->text + n, whole);
        tt->text[n++] = '.';
        tt->len = n;
        tt->sec = sec;
        tt->valid = !neg; /* the text of a negative time depends on nsec too */
    }
    memcpy(p, tt->text, sizeof tt->text); /* all of it: one fixed copy, the line has room */
    p += tt->len;
    *p = (char)('0' + v / 100000000);
    rdma_put_digits8(p + 1, v % 100000000);
    return tt->len + 9;
}

static size_t put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return n;
}

/* A frame of a chunk: where its bytes are and what its record says, with
 * the time as libpcap gives it (capture.h). */
struct frame {
    /* not side by side: a copy of both as one 16-byte load from a frame
     * the capture reader has just stored as two would wait for them (a
     * load is served from one store, not two) */
    int64_t sec;
    uint32_t caplen, len;
    int64_t nsec;
    const uint8_t *data;
};

/* A frame of an iWARP connection: its TCP segment and the PDU it completes. */
struct iwarp_line {
    const struct rdma_iwarp_seg *seg;
    const struct rdma_iwarp_pdu *pdu; /* NULL: the frame completes none */
    unsigned index;                   /* of the PDU among those the frame completes */
};

LINE_WRITER size_t json_line(char *p, struct time_text *tt, const char *file, uint64_t frame,
                             const struct frame *h, const struct rdma_pkt *pkt,
                             const struct iwarp_line *iw)
{
    size_t n = put_str(p, "{\"frame\":");
    n += put_u64(p + n, frame);
    if (file) {
        n += put_str(p + n, ",\"file\":");
        n += rdma_json_string(file, p + n, FILE_TEXT_MAX);
    }
    n += put_str(p + n, ",\"ts\":\"");
    n += put_time(p + n, tt, h->sec, h->nsec);
    n += put_str(p + n, "\",\"len\":");
    uint32_t len = h->len - pkt->pseudo_len, caplen = h->caplen - pkt->pseudo_len;
    if (caplen == len && len < 100000000) {
        /* as in most frames, whole: the digits made once and stored
         * twice; below 10^8 they are the eight bytes rdma_put_u64() made
         * (what follows the digits is written over) */
        char digits[RDMA_U64_DIGITS];
        size_t k = put_u64(digits, len);
        memcpy(p + n, digits, 8);
        n += k;
        n += put_str(p + n, ",\"caplen\":");
        memcpy(p + n, digits, 8);
        n += k;
    } else {
        n += put_u64(p + n, len);
        n += put_str(p + n, ",\"caplen\":");
        n += put_u64(p + n, caplen);
    }
    p[n++] = ',';
    size_t m = rdma_format_json(pkt, p + n, LINE_MAX_BYTES - n - 2);
    if (!m)
        n--; /* cannot happen with the line bound above; keep the JSON valid */
    n += m;
    if (iw && iw->pdu) {
        n += put_str(p + n, ",\"fpdu\":");
        n += put_u64(p + n, iw->index);
    }
    if (iw) {
        p[n++] = ',';
        m = rdma_iwarp_format_json(iw->seg, iw->pdu, p + n, LINE_MAX_BYTES - n - 2);
        if (m)
            n += m;
        else
            n--; /* as above */
    }
    p[n++] = '}';
    p[n++] = '\n';
    return n;
}

static size_t text_line(char *p, struct time_text *tt, uint64_t frame, const struct frame *h,
                        const struct frame *first, const struct rdma_pkt *pkt,
                        const struct iwarp_line *iw)
{
    int64_t sec = h->sec - first->sec;
    int64_t nsec = h->nsec - first->nsec;
    char num[24];
    size_t k = put_u64(num, frame), n = 0;
    for (size_t i = k; i < 6; i++)
        p[n++] = ' ';
    memcpy(p + n, num, k);
    n += k;
    p[n++] = ' ';
    n += put_time(p + n, tt, sec, nsec);
    p[n++] = ' ';
    n += iw ? rdma_iwarp_format_summary(pkt, iw->seg, iw->pdu, p + n, LINE_MAX_BYTES - n - 32)
            : rdma_format_summary(pkt, p + n, LINE_MAX_BYTES - n - 32);
    n += put_str(p + n, " len=");
    n += put_u64(p + n, h->len - pkt->pseudo_len);
    p[n++] = '\n';
    return n;
}

static bool frame_is_bad(const struct rdma_pkt *pkt)
{
    return pkt->status != RDMA_OK && pkt->status != RDMA_UNSUPPORTED && !rdma_pkt_snapped(pkt);
}

static bool pdu_is_bad(const struct rdma_iwarp_pdu *pdu)
{
    return pdu->status != RDMA_OK && pdu->status != RDMA_UNSUPPORTED;
}

/* A problem found at the end of a capture, for the frame it began in. */
static size_t end_line(char *p, bool json, uint64_t frame, const struct rdma_iwarp_pdu *pdu)
{
    size_t n = put_str(p, json ? "{\"frame\":" : "");
    if (json) {
        n += put_u64(p + n, frame);
        n += put_str(p + n, ",\"proto\":\"iWARP\",\"error\":\"");
    } else {
        char num[24];
        size_t k = put_u64(num, frame);
        for (size_t i = k; i < 6; i++)
            p[n++] = ' ';
        memcpy(p + n, num, k);
        n += k;
        n += put_str(p + n, " iWARP [");
    }
    n += put_str(p + n, rdma_status_name((enum rdma_status)pdu->status));
    n += put_str(p + n, ": ");
    n += put_str(p + n, pdu->reason);
    n += put_str(p + n, json ? "\"}\n" : "]\n");
    return n;
}

/* The line of a frame (or of one of its PDUs) at p, or nothing when the
 * filter rejects it; returns its length. The filter reads the frame's JSON
 * object: the line itself with --json, else one made aside in scratch. */
LINE_WRITER size_t frame_line(char *p, char *scratch, struct time_text *tt,
                              const struct decode_opts *opts, const char *file, uint64_t number,
                              const struct frame *f,
                              const struct frame *first, const struct rdma_pkt *pkt,
                              const struct iwarp_line *iw)
{
    if (opts->json) {
        size_t n = json_line(p, tt, file, number, f, pkt, iw);
        return !opts->filter || filter_match(opts->filter, p, n) ? n : 0;
    }
    if (opts->filter) {
        struct time_text aside = {.valid = false};
        size_t n = json_line(scratch, &aside, file, number, f, pkt, iw);
        if (!filter_match(opts->filter, scratch, n))
            return 0;
    }
    return text_line(p, tt, number, f, first, pkt, iw);
}

/* What the frames of one capture share. */
struct file_job {
    const struct decode_opts *opts;
    const struct rdma_capture *cap; /* workers read records through it */
    const char *name;          /* in JSON lines when several files are decoded */
    unsigned linktype;
    struct frame first;
};

/* A frame that takes the ordered path: its lines go at `at` in the text. */
struct deferred {
    uint64_t number;
    struct frame frame;
    size_t at;
    struct rdma_pkt pkt;
};

enum chunk_state { CHUNK_FREE, CHUNK_FILLED, CHUNK_DECODED };

struct chunk {
    /* filled by the main thread */
    uint64_t seq;         /* chunk number in the file */
    uint64_t first_frame; /* the number of its first frame */
    size_t n;
    uint64_t bytes;       /* of frame data */
    /* Non-NULL: the frames are the n records of the capture's mapping that
     * begin here, which the worker reads itself (rdma_capture_record), since
     * frame[] written on one core and read on another would cost a cache
     * miss a frame; NULL: they are in frame[]. */
    const uint8_t *run, *run_end;
    bool last;            /* the capture ends with this chunk */
    uint64_t mark;        /* the capture's mappings up to here go once it is written */
    struct frame frame[CHUNK_FRAMES];
    uint8_t *copy;        /* frames libpcap read, which it would overwrite */
    size_t copy_len, copy_cap;
    /* decoded by a worker */
    char *out;
    size_t out_len, out_cap;
    struct deferred *def;
    size_t ndef, def_cap;
    uint64_t rdma, bad, snapped;
    bool oom;
    enum chunk_state state;
};

static bool chunk_room(struct chunk *ch)
{
    if (ch->out_cap - ch->out_len >= LINE_MAX_BYTES)
        return true;
    size_t cap = ch->out_cap ? 2 * ch->out_cap : CHUNK_OUT;
    char *p = realloc(ch->out, cap);
    if (!p)
        return false;
    ch->out = p;
    ch->out_cap = cap;
    return true;
}

static bool chunk_defer(struct chunk *ch, uint64_t number, const struct frame *f,
                        const struct rdma_pkt *pkt)
{
    if (ch->ndef == ch->def_cap) {
        size_t cap = ch->def_cap ? 2 * ch->def_cap : 64;
        struct deferred *d = realloc(ch->def, cap * sizeof *d);
        if (!d)
            return false;
        ch->def = d;
        ch->def_cap = cap;
    }
    ch->def[ch->ndef++] = (struct deferred){number, *f, ch->out_len, *pkt};
    return true;
}

/* Whether the frame carries a TCP segment, which the iWARP stream takes. */
static bool carries_tcp(const struct rdma_pkt *pkt, const uint8_t *data)
{
    if (pkt->present & RDMA_HDR_UDP) /* most frames, told at once: a UDP datagram is no segment */
        return false;
    struct rdma_tcp tcp;
    const uint8_t *payload;
    uint32_t len;
    return rdma_tcp_decode(pkt, data, &tcp, &payload, &len);
}

/* A worker's part: every frame of the chunk decoded, and the lines of all
 * but those that take the ordered path. */
static void decode_chunk(const struct file_job *job, struct chunk *ch)
{
    const struct decode_opts *opts = job->opts;
    struct rdma_pkt pkt;
    struct time_text tt = {.valid = false};
    char scratch[LINE_MAX_BYTES];
    ch->out_len = ch->ndef = 0;
    ch->rdma = ch->bad = ch->snapped = 0;
    ch->oom = false;
    const uint8_t *record = ch->run;
    for (size_t i = 0; i < ch->n; i++) {
        struct frame run_frame;
        const struct frame *f = &ch->frame[i];
        if (record) {
            struct rdma_capture_frame cf;
            record = rdma_capture_record(job->cap, record, &cf);
            run_frame = (struct frame){.sec = cf.sec, .nsec = cf.nsec, .caplen = cf.caplen, .len = cf.len,
                                       .data = cf.data};
            f = &run_frame;
        }
        uint64_t frame = ch->first_frame + i;
        rdma_decode(&opts->cfg, job->linktype, f->data, f->caplen, f->len, &pkt);
        if (carries_tcp(&pkt, f->data) || (ch->last && i == ch->n - 1)) {
            if (!chunk_defer(ch, frame, f, &pkt))
                goto oom;
            continue;
        }
        if (!chunk_room(ch))
            goto oom;
        ch->out_len += frame_line(ch->out + ch->out_len, scratch, &tt, opts, job->name, frame, f,
                                  &job->first, &pkt, NULL);
        if (pkt.proto != RDMA_PROTO_OTHER)
            ch->rdma++;
        if (frame_is_bad(&pkt))
            ch->bad++;
        ch->snapped += rdma_pkt_snapped(&pkt);
    }
    return;
oom:
    ch->oom = true;
}

/* What the main thread writes with, in chunk order. */
struct writer {
    const struct file_job *job;
    struct rdma_capture *cap;
    struct rdma_iwarp_stream *iwarp;
    struct time_text tt;
    struct sink *out;
    struct decode_stats *st;
    char *scratch; /* LINE_MAX_BYTES, for the filter in text mode */
};

/* The ordered path: one frame through the iWARP stream, one line per PDU it
 * completes, or one line if it completes none. */
static void ordered_frame(struct writer *wr, const struct frame *f, uint64_t frame,
                          struct rdma_pkt *pkt)
{
    const struct file_job *job = wr->job;
    struct rdma_iwarp_stream *iwarp = wr->iwarp;
    struct sink *out = wr->out;
    struct rdma_iwarp_seg seg;
    struct rdma_iwarp_pdu pdu;
    /* capture time from the first frame, for the idle age-out */
    int64_t t = (f->sec - job->first.sec) * 1000000000 + (f->nsec - job->first.nsec);
    rdma_iwarp_stream_set_time(iwarp, t > 0 ? (uint64_t)t : 0);
    rdma_iwarp_feed(iwarp, pkt, f->data, frame, &seg);
    bool bad = frame_is_bad(pkt);
    struct iwarp_line iw = {&seg, NULL, 0};
    while (true) {
        bool more = rdma_iwarp_next(iwarp, &pdu);
        if (!more && iw.index)
            break;
        iw.pdu = more ? &pdu : NULL;
        bad |= more && pdu_is_bad(&pdu);
        const struct iwarp_line *line = more || seg.iwarp ? &iw : NULL;
        char *p = sink_line(out);
        out->len += frame_line(p, wr->scratch, &wr->tt, job->opts, job->name, frame, f, &job->first,
                               pkt, line);
        if (!more)
            break;
        iw.index++;
    }
    if (pkt->proto != RDMA_PROTO_OTHER)
        wr->st->rdma++;
    if (bad)
        wr->st->bad++;
    wr->st->snapped += rdma_pkt_snapped(pkt);
}

/* The main thread's part: a decoded chunk's text, with the lines of the
 * frames that took the ordered path in their places. */
static void write_chunk(struct writer *wr, struct chunk *ch)
{
    size_t from = 0;
    for (size_t i = 0; i < ch->ndef; i++) {
        struct deferred *d = &ch->def[i];
        sink_write(wr->out, ch->out + from, d->at - from);
        from = d->at;
        ordered_frame(wr, &d->frame, d->number, &d->pkt);
    }
    sink_write(wr->out, ch->out + from, ch->out_len - from);
    wr->st->frames += ch->n;
    wr->st->rdma += ch->rdma;
    wr->st->bad += ch->bad;
    wr->st->snapped += ch->snapped;
}

/* Chunks in flight and the workers that decode them. */
struct pipeline {
    pthread_mutex_t lock;
    pthread_cond_t filled;  /* a chunk or mapping work is ready for a worker, or stop is set */
    pthread_cond_t decoded; /* a worker has finished a chunk */
    struct chunk *slot;     /* chunk k is slot[k % nslots] */
    size_t nslots;
    unsigned nworkers, started;
    uint64_t nfilled;       /* chunks 0 .. nfilled-1 have been filled */
    uint64_t taken;         /* the next chunk a worker takes */
    bool stop;
    /* Mapping work the main thread hands over (capture.h), taken before
     * chunks: a window's pages must be in before it gets there. */
    bool has_ahead;
    struct rdma_capture_span ahead;
    size_t ndead;
    struct rdma_capture_span dead[DEAD_MAX];
    const struct file_job *job;
    pthread_t worker[MAX_WORKERS];
};

static void set_state(struct pipeline *pl, struct chunk *ch, enum chunk_state state)
{
    pthread_mutex_lock(&pl->lock);
    ch->state = state;
    if (state == CHUNK_FILLED) {
        pl->nfilled = ch->seq + 1;
        pthread_cond_signal(&pl->filled);
    } else if (state == CHUNK_DECODED) {
        pthread_cond_signal(&pl->decoded);
    }
    pthread_mutex_unlock(&pl->lock);
}

/* A worker takes the oldest chunk no one has taken, rather than every
 * n-th: when a worker falls behind (the main thread shares its core), the
 * others go on with the chunks it would have had. */
static void *worker_main(void *arg)
{
    struct pipeline *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        while (!pl->stop && pl->taken == pl->nfilled && !pl->has_ahead && !pl->ndead)
            pthread_cond_wait(&pl->filled, &pl->lock);
        if (pl->stop) {
            pthread_mutex_unlock(&pl->lock);
            return NULL;
        }
        if (pl->has_ahead || pl->ndead) {
            bool has_ahead = pl->has_ahead;
            struct rdma_capture_span ahead = pl->ahead, dead[DEAD_MAX];
            size_t ndead = pl->ndead;
            memcpy(dead, pl->dead, ndead * sizeof *dead);
            pl->has_ahead = false;
            pl->ndead = 0;
            pthread_mutex_unlock(&pl->lock);
            if (has_ahead)
                rdma_capture_populate(&ahead);
            for (size_t i = 0; i < ndead; i++)
                rdma_capture_unmap(&dead[i]);
            continue;
        }
        struct chunk *ch = &pl->slot[pl->taken++ % pl->nslots];
        pthread_mutex_unlock(&pl->lock);
        decode_chunk(pl->job, ch);
        set_state(pl, ch, CHUNK_DECODED);
    }
}

static void pipeline_stop(struct pipeline *pl)
{
    if (!pl->started)
        return;
    pthread_mutex_lock(&pl->lock);
    pl->stop = true;
    pthread_cond_broadcast(&pl->filled);
    pthread_mutex_unlock(&pl->lock);
    for (unsigned i = 0; i < pl->started; i++)
        pthread_join(pl->worker[i], NULL);
    pl->started = 0;
    pl->stop = false;
}

/* Give the workers the mapping work there is: mapping and unmapping pages
 * costs as much as reading the records, and the main thread is the one
 * the others wait for. */
static void hand_over_mapping(struct pipeline *pl, struct rdma_capture *cap)
{
    pthread_mutex_lock(&pl->lock);
    bool more = false;
    if (!pl->has_ahead)
        more = pl->has_ahead = rdma_capture_ahead(cap, &pl->ahead);
    for (; pl->ndead < DEAD_MAX && rdma_capture_dead(cap, &pl->dead[pl->ndead]); pl->ndead++)
        more = true;
    if (more)
        pthread_cond_signal(&pl->filled);
    pthread_mutex_unlock(&pl->lock);
}

/* Start the workers from chunk first_seq on; false (and none running) if
 * they cannot be. */
static bool pipeline_start(struct pipeline *pl, uint64_t first_seq)
{
    pl->nfilled = pl->taken = first_seq;
    for (unsigned i = 0; i < pl->nworkers; i++) {
        if (pthread_create(&pl->worker[i], NULL, worker_main, pl)) {
            pl->started = i;
            pipeline_stop(pl);
            return false;
        }
    }
    pl->started = pl->nworkers;
    return true;
}

static void chunk_free(struct chunk *ch)
{
    free(ch->copy);
    free(ch->out);
    free(ch->def);
}

/* Add a frame to the chunk; false if the chunk must end before it. A
 * chunk that begins with a record of the mapping takes the records that
 * follow it there; any other takes any frame, and copies those libpcap
 * read (it reuses its buffer) while its copy area has room. */
static bool chunk_add(struct chunk *ch, const struct rdma_capture_frame *cf)
{
    if (!ch->n && cf->record)
        ch->run = cf->record;
    if (ch->run) {
        if (cf->record != ch->run_end && ch->n)
            return false;
        ch->run_end = cf->data + cf->caplen;
        ch->n++;
        ch->bytes += cf->caplen;
        return true;
    }
    const uint8_t *data = cf->data;
    if (!cf->record && cf->caplen) {
        if (ch->copy_cap - ch->copy_len < cf->caplen) {
            if (ch->n)
                return false;
            size_t cap = cf->caplen > CHUNK_BYTES ? cf->caplen : CHUNK_BYTES;
            uint8_t *p = malloc(cap);
            if (!p)
                return false;
            free(ch->copy);
            ch->copy = p;
            ch->copy_cap = cap;
        }
        data = memcpy(ch->copy + ch->copy_len, cf->data, cf->caplen);
        ch->copy_len += cf->caplen;
    }
    ch->frame[ch->n++] = (struct frame){.sec = cf->sec, .nsec = cf->nsec, .caplen = cf->caplen,
                                        .len = cf->len, .data = data};
    ch->bytes += cf->caplen;
    return true;
}

/* Fill ch from the capture, starting with the frame read ahead in cf, and
 * read the next one into cf; returns what rdma_capture_next() last returned. */
static int fill_chunk(struct chunk *ch, struct rdma_capture *cap, struct rdma_capture_frame *cf,
                      uint64_t *frames, uint64_t limit)
{
    ch->first_frame = *frames + 1;
    ch->n = ch->bytes = ch->copy_len = 0;
    ch->run = NULL;
    uint64_t mark = rdma_capture_mark(cap);
    int rc = 1;
    do {
        if (!chunk_add(ch, cf))
            break;
        ++*frames;
        if (ch->run && ch->n < CHUNK_FRAMES && *frames < limit) {
            /* the records that follow in the mapping join the run unread:
             * the worker reads them (rdma_capture_record) */
            uint64_t most = limit - *frames < CHUNK_FRAMES - ch->n ? limit - *frames
                                                                     : CHUNK_FRAMES - ch->n;
            size_t k = rdma_capture_skip(cap, (size_t)most, &ch->bytes, CHUNK_BYTES, &ch->run_end);
            ch->n += k;
            *frames += k;
        }
        mark = rdma_capture_mark(cap); /* before the frame read ahead, which is not this chunk's */
        if (*frames == limit) { /* -c: the capture ends here */
            rc = 0;
            break;
        }
        rc = rdma_capture_next(cap, cf);
    } while (rc == 1 && ch->n < CHUNK_FRAMES && ch->bytes < CHUNK_BYTES);
    ch->mark = mark;
    ch->last = rc != 1;
    return rc;
}

/* One worker a core this process may run on. */
static unsigned worker_count(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) ? 1 : CPU_COUNT(&set);
    return n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : (unsigned)n;
}

/* Write the oldest chunk in flight once it is decoded, and free its slot;
 * false if its worker ran out of memory. */
static bool retire_chunk(struct pipeline *pl, uint64_t seq, struct writer *wr)
{
    struct chunk *ch = &pl->slot[seq % pl->nslots];
    pthread_mutex_lock(&pl->lock);
    while (ch->state != CHUNK_DECODED)
        pthread_cond_wait(&pl->decoded, &pl->lock);
    pthread_mutex_unlock(&pl->lock);
    if (ch->oom)
        return false;
    write_chunk(wr, ch);
    rdma_capture_release(wr->cap, ch->mark);
    /* Workers unmap what is released; without them, this thread does. */
    struct rdma_capture_span dead;
    while (!pl->started && rdma_capture_dead(wr->cap, &dead))
        rdma_capture_unmap(&dead);
    set_state(pl, ch, CHUNK_FREE);
    return true;
}

/* Decode one capture. Returns false if it could not be read to its end. */
static bool decode_file(const char *path, bool name_files, const struct decode_opts *opts,
                        struct sink *out, struct decode_stats *st, char *scratch)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    struct rdma_capture cap;
    if (!rdma_capture_open(&cap, path, errbuf, sizeof errbuf)) {
        fprintf(stderr, "rdmasim decode: %s: %s\n", path, errbuf);
        return false;
    }
    int linktype = cap.linktype;
    if (!rdma_linktype_supported((unsigned)linktype)) {
        const char *name = pcap_datalink_val_to_name(linktype);
        fprintf(stderr,
                "rdmasim decode: %s: link type %d (%s) is not supported; supported are "
                "EN10MB, LINUX_SLL, LINUX_SLL2, INFINIBAND and ERF\n",
                path, linktype, name ? name : "unknown");
        rdma_capture_close(&cap);
        return false;
    }
    struct file_job job = {opts, &cap, name_files ? path : NULL, (unsigned)linktype,
                           {0, 0, 0, 0, NULL}};
    struct pipeline pl = {.nworkers = worker_count(), .job = &job};
    pl.nslots = pl.nworkers > 1 ? (size_t)pl.nworkers * SLOTS_PER_WORKER : 1;
    pl.slot = calloc(pl.nslots, sizeof *pl.slot);
    struct rdma_iwarp_stream *iwarp = rdma_iwarp_stream_new();
    if (!iwarp || !pl.slot) {
        fprintf(stderr, "rdmasim decode: out of memory\n");
        rdma_iwarp_stream_free(iwarp);
        free(pl.slot);
        rdma_capture_close(&cap);
        return false;
    }
    pthread_mutex_init(&pl.lock, NULL);
    pthread_cond_init(&pl.filled, NULL);
    pthread_cond_init(&pl.decoded, NULL);
    rdma_iwarp_stream_set_limits(iwarp, &opts->lim);
    struct writer wr = {&job, &cap, iwarp, {.valid = false}, out, st, scratch};
    rdma_capture_hold(&cap);
    if (name_files && !opts->json) {
        char *p = sink_line(out);
        out->len += header_line(p, path);
    }
    /* cf is always the next frame, read ahead: a chunk knows whether it is
     * the last. */
    struct rdma_capture_frame cf;
    uint64_t frames = 0, filled = 0, written = 0;
    /* -c counts over the files: those before this one are all written */
    uint64_t limit = opts->max_frames ? opts->max_frames - st->frames : UINT64_MAX;
    int rc = rdma_capture_next(&cap, &cf);
    if (rc == 1)
        job.first = (struct frame){.sec = cf.sec, .nsec = cf.nsec};
    bool oom = false;
    while (rc == 1 && !oom) {
        while (written + pl.nslots <= filled && !oom)
            oom = !retire_chunk(&pl, written++, &wr);
        if (oom)
            break;
        struct chunk *ch = &pl.slot[filled % pl.nslots];
        ch->seq = filled;
        rc = fill_chunk(ch, &cap, &cf, &frames, limit);
        if (!ch->n) { /* not even one frame could be copied */
            oom = true;
            break;
        }
        if (!pl.started && filled >= INLINE_CHUNKS && !ch->last && pl.nworkers > 1)
            pipeline_start(&pl, filled);
        filled++;
        if (pl.started) {
            hand_over_mapping(&pl, &cap);
            set_state(&pl, ch, CHUNK_FILLED);
        } else {
            decode_chunk(&job, ch);
            ch->state = CHUNK_DECODED;
            oom = !retire_chunk(&pl, written++, &wr);
        }
    }
    while (written < filled && !oom)
        oom = !retire_chunk(&pl, written++, &wr);
    pipeline_stop(&pl);
    for (size_t i = 0; i < pl.ndead; i++)
        rdma_capture_unmap(&pl.dead[i]);
    for (size_t i = 0; i < pl.nslots; i++)
        chunk_free(&pl.slot[i]);
    free(pl.slot);
    pthread_cond_destroy(&pl.decoded);
    pthread_cond_destroy(&pl.filled);
    pthread_mutex_destroy(&pl.lock);
    bool complete = rc != -1 && !oom;
    if (oom) {
        sink_flush(out);
        fprintf(stderr, "rdmasim decode: out of memory\n");
    } else {
        struct rdma_iwarp_pdu pdu;
        while (rdma_iwarp_finish(iwarp, &pdu)) {
            char *p = sink_line(out);
            out->len += end_line(p, opts->json, pdu.frame, &pdu);
            st->bad += pdu_is_bad(&pdu);
        }
    }
    /* what the stream decoder's bounds left out, said once per file */
    struct rdma_iwarp_stats ist;
    rdma_iwarp_stream_stats(iwarp, &ist);
    if (ist.aged_out || ist.aged_idle || ist.over_budget) {
        sink_flush(out);
        size_t conns = opts->lim.max_conns ? opts->lim.max_conns : RDMA_IWARP_DEFAULT_MAX_CONNS;
        uint64_t idle = opts->lim.idle_ns ? opts->lim.idle_ns : RDMA_IWARP_DEFAULT_IDLE_NS;
        fprintf(stderr,
                "rdmasim decode: %s: TCP reassembly kept at most %zu connections and %zu MiB at once: %" PRIu64
                " connections aged out, %" PRIu64 " after %" PRIu64 " ns idle, %" PRIu64
                " times a stream's octets were left out\n",
                path, conns, (size_t)(RDMA_IWARP_DEFAULT_MAX_BYTES >> 20), ist.aged_out, ist.aged_idle, idle,
                ist.over_budget);
    }
    rdma_iwarp_stream_free(iwarp);
    if (rc == -1 && !oom) {
        /* libpcap stops at a damaged record; the frames before it are out. */
        sink_flush(out);
        fprintf(stderr, "rdmasim decode: %s: frame %" PRIu64 ": %s\n", path, frames + 1, cap.error);
    }
    rdma_capture_close(&cap);
    return complete;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdmasim decode [--json] [--strict] [-c N] [--filter EXPR] [--rocev2-port PORT]\n"
            "                      [--max-connections N] [--idle-timeout DUR] FILE...\n"
            "\n"
            "Print every frame of pcap or pcapng captures (also gzip-compressed, .pcap.gz):\n"
            "frame number, time, source and destination (IP, GID or LID), protocol, opcode,\n"
            "destination QP, PSN, flags (FECN, BECN, ECN-CE), CRC status and length. ARP,\n"
            "TCP, UDP, ICMP and ICMPv6 (also over IPoIB) get a line of their own; other\n"
            "frames are listed briefly. A truncated or malformed frame is reported on its\n"
            "line and decoding goes on; a frame cut by the capture's snap length is\n"
            "marked so and is not counted as damaged.\n"
            "iWARP (MPA/DDP/RDMAP over TCP) is reassembled per connection: one line per\n"
            "FPDU, with the frame that completes it; a connection joined without its MPA\n"
            "Request/Reply is decoded from its markers or reported once and skipped.\n"
            "\n"
            "  --json             one JSON object per frame (NDJSON); header objects use\n"
            "                     Wireshark's field names (bth.psn, reth.dmalen, ddp.stag,\n"
            "                     rdmap.opcode, ...); \"fpdu\" numbers the FPDUs of a frame;\n"
            "                     64-bit values and CRCs are hex strings, as tshark shows them\n"
            "  --strict           exit 1 if any frame is truncated, malformed or fails a CRC\n"
            "  -c N               read at most N frames (over all files), as tshark -c\n"
            "  --filter EXPR      show only frames whose JSON object matches EXPR, e.g.\n"
            "                     'bth.opcode == 4 && ip.src == 10.0.0.1', 'reth && !icrc.ok',\n"
            "                     'reth.va >= 0xffff000000000000' (==, !=, <, >, <=, >=, &&,\n"
            "                     ||, !, parentheses; a member alone tests it is there)\n"
            "  --rocev2-port PORT UDP destination port of RoCEv2 (default 4791)\n"
            "  --max-connections N  TCP connections reassembled at once (default 131072):\n"
            "                     past it the least recently active one ages out\n"
            "  --idle-timeout DUR a TCP connection without a segment for longer than DUR\n"
            "                     of capture time ages out (default 10min; units ns, us,\n"
            "                     ms, s, min; or never). An iWARP connection that ages\n"
            "                     out is reported on a line; counts go to stderr\n"
            "  -h, --help         this text\n"
            "\n"
            "Link types: Ethernet (with 802.1Q/802.1ad tags), Linux cooked (SLL, SLL2),\n"
            "raw InfiniBand, ERF carrying InfiniBand.\n"
            "Exit status: 0 files read, 1 damaged frames with --strict, 2 usage error or\n"
            "a file that could not be read to its end (it is named, with the frame).\n");
}

int cmd_decode(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},
        {"strict", no_argument, 0, 's'},
        {"filter", required_argument, 0, 'f'},
        {"rocev2-port", required_argument, 0, 'p'},
        {"max-connections", required_argument, 0, 'C'},
        {"idle-timeout", required_argument, 0, 'I'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct decode_opts opts = {0};
    struct filter *filter = NULL;
    uint64_t v;
    const char *err;
    rdma_decode_config_init(&opts.cfg);
    int c, rc = EXIT_OK;
    optind = 1;
    opterr = 0;
    while (rc == EXIT_OK && (c = getopt_long(argc, argv, ":hc:", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            opts.json = true;
            break;
        case 's':
            opts.strict = true;
            break;
        case 'c':
            if (!cli_parse_count(optarg, 1, UINT64_MAX, &opts.max_frames))
                rc = cli_usage_error("decode", "-c: '%s' is not a count of frames (1 or more)", optarg);
            break;
        case 'f': {
            char why[256];
            filter_free(filter);
            if (!(filter = filter_compile(optarg, why, sizeof why)))
                rc = cli_usage_error("decode", "--filter: %s in '%s'", why, optarg);
            break;
        }
        case 'p': {
            char *end;
            errno = 0;
            unsigned long port = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || port == 0 || port > 65535)
                rc = cli_usage_error("decode", "--rocev2-port: '%s' is not a port number (1-65535)", optarg);
            opts.cfg.rocev2_port = (uint16_t)port;
            break;
        }
        case 'C':
            if (!cli_parse_count(optarg, 1, (uint64_t)1 << 32, &v))
                rc = cli_usage_error("decode", "--max-connections: '%s' is not a count (1-4294967296)", optarg);
            opts.lim.max_conns = (size_t)v;
            break;
        case 'I':
            if (!strcmp(optarg, "never"))
                opts.lim.idle_ns = RDMA_IWARP_NEVER;
            else if ((err = cli_parse_duration(optarg, &opts.lim.idle_ns)))
                rc = cli_usage_error("decode", "--idle-timeout '%s': %s, or never", optarg, err);
            break;
        case 'h':
            usage(stdout);
            filter_free(filter);
            return EXIT_OK;
        default:
            rc = cli_bad_option("decode", c, optopt, argv, optind);
        }
    }
    if (rc == EXIT_OK && optind >= argc)
        rc = cli_usage_error("decode", "no capture file given");
    if (rc != EXIT_OK) {
        filter_free(filter);
        return rc;
    }
    opts.filter = filter;
    struct sink out = {malloc(OUT_BUFFER), 0, false};
    char *scratch = malloc(LINE_MAX_BYTES);
    if (!out.buf || !scratch) {
        fprintf(stderr, "rdmasim decode: out of memory\n");
        free(out.buf);
        free(scratch);
        filter_free(filter);
        return EXIT_USAGE;
    }
    struct decode_stats st = {0};
    bool unreadable = false;
    bool many = argc - optind > 1;
    for (int i = optind; i < argc && !(opts.max_frames && st.frames >= opts.max_frames); i++)
        if (!decode_file(argv[i], many, &opts, &out, &st, scratch))
            unreadable = true;
    sink_flush(&out);
    free(out.buf);
    free(scratch);
    filter_free(filter);
    if (fflush(stdout) || out.failed) {
        fprintf(stderr, "rdmasim decode: writing output: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    if (st.bad)
        fprintf(stderr, "rdmasim decode: %" PRIu64 " of %" PRIu64 " frames truncated, malformed or with a bad CRC\n",
                st.bad, st.frames);
    if (st.snapped)
        fprintf(stderr, "rdmasim decode: %" PRIu64 " of %" PRIu64 " frames cut by the snap length (CRCs not checked)\n",
                st.snapped, st.frames);
    if (unreadable)
        return EXIT_USAGE;
    return opts.strict && st.bad ? EXIT_BAD_FRAMES : EXIT_OK;
}
