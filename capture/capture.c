/* capture.c - frames from a capture file, in order, one at a time.
 *
 * Classic pcap files (pcap-savefile(5), draft-ietf-opsawg-pcap sections 4
 * and 5) are a file header and then one record per frame:
 *
 *    file header, 24 bytes              record header, 16 bytes
 *    +-------------+-------------+      +---------------------------+
 *  0 |          magic            |    0 | seconds                   |
 *  4 | major (2)   | minor (4)   |    4 | micro- or nanoseconds     |
 *  8 |  reserved (time zone)     |    8 | captured length           |
 * 12 |  reserved (accuracy)      |   12 | original length           |
 * 16 |     snapshot length       |      +---------------------------+
 * 20 | FCS bits and link type    |      captured length bytes of frame
 *    +---------------------------+
 *
 * Their records are read through read-only mappings of the file, so frames
 * are analysed where the page cache holds them instead of being copied
 * twice (kernel to stdio, stdio to libpcap) on their way in; at the sizes
 * RoCE captures reach, those copies cost more than the analysis. A mapping
 * is a window of the file, unmapped once reading has moved past it (or,
 * when frames are held, once the caller releases them), so memory does not
 * follow the file.
 *
 * libpcap still opens every file: it checks the file header and words what
 * is wrong with it, and it reads what the mappings do not: other formats
 * (pcapng), standard input, old versions of the format, link types whose
 * records it rewrites, and every record that is not whole in the file or
 * is longer than the snapshot length. Such a record it reads from its own
 * offset, so frames, lengths and the words of every error are libpcap's.
 *
 * A file that shrinks while it is mapped takes its pages with it: reading
 * one raises SIGBUS. The handler installed with the first mapping puts a
 * page of zeros where the page was (for a fault past the end of a file
 * mapping, BUS_ADRERR, the only kind of file mapping this process makes)
 * and counts it; every record is touched page by page before it is handed
 * out, so the count tells rdma_capture_next() to end with an error naming
 * the frame instead of passing zeros on.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "gunzip.h"

#define WINDOW (32u << 20)
#define PREFETCH_AHEAD (16u << 10)
#define CACHE_LINE 64
#define READ_BUFFER (64u << 10)
#define FILE_HEADER 24
#define RECORD_HEADER 16

static volatile sig_atomic_t lost_pages; /* pages replaced by the SIGBUS handler */
static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si->si_code == BUS_ADRERR && si->si_addr) {
        void *page = (void *)((uintptr_t)si->si_addr & ~(page_size - 1));
        if (mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            lost_pages++;
            return;
        }
    }
    signal(sig, SIG_DFL); /* not ours: as if there were no handler */
    raise(sig);
}

static void install_sigbus(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

static uint32_t get32(const uint8_t *p, bool swapped)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return swapped ? __builtin_bswap32(v) : v;
}

/* A window no frame is in any more: unmapped, or held, kept for
 * rdma_capture_dead(). */
static void retire_window(struct rdma_capture *c, void *base, size_t len)
{
    if (c->hold && c->ndead == c->dead_cap) {
        size_t cap = c->dead_cap ? 2 * c->dead_cap : 4;
        struct rdma_capture_span *d = realloc(c->dead, cap * sizeof *d);
        if (d) {
            c->dead = d;
            c->dead_cap = cap;
        }
    }
    if (c->hold && c->ndead < c->dead_cap)
        c->dead[c->ndead++] = (struct rdma_capture_span){base, len};
    else
        munmap(base, len);
}

/* Retire the windows that end at or before c->released. */
static void drop_released(struct rdma_capture *c)
{
    size_t n = 0;
    while (n < c->nmaps && c->maps[n].off + c->maps[n].len <= c->released) {
        retire_window(c, c->maps[n].base, c->maps[n].len);
        n++;
    }
    if (n) {
        c->nmaps -= n;
        memmove(c->maps, c->maps + n, c->nmaps * sizeof *c->maps);
    }
}

/* Map a window's pages in at once, rather than a fault every few pages
 * (Linux 5.14); without it they fault in as they are read. */
static void populate(void *base, size_t len)
{
#ifdef MADV_POPULATE_READ
    madvise(base, len, MADV_POPULATE_READ);
#else
    (void)base;
    (void)len;
#endif
}

static bool add_map(struct rdma_capture *c, struct rdma_capture_map m)
{
    if (c->nmaps == c->maps_cap) {
        size_t cap = c->maps_cap ? 2 * c->maps_cap : 4;
        struct rdma_capture_map *maps = realloc(c->maps, cap * sizeof *maps);
        if (!maps)
            return false;
        c->maps = maps;
        c->maps_cap = cap;
    }
    c->maps[c->nmaps++] = m;
    return true;
}

static uint64_t page_floor(uint64_t off)
{
    return off & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
}

/* Map the window that follows the last one: from where a record that the
 * last one cuts can begin. */
static void map_next(struct rdma_capture *c)
{
    const struct rdma_capture_map *last = &c->maps[c->nmaps - 1];
    uint64_t end = last->off + last->len;
    if (end >= c->size)
        return;
    uint64_t longest = RECORD_HEADER + (uint64_t)c->snapshot;
    uint64_t off = page_floor(end > longest ? end - longest : 0);
    uint64_t len = c->size - off < WINDOW ? c->size - off : WINDOW;
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, c->fd, (off_t)off);
    if (p == MAP_FAILED)
        return;
    c->next = (struct rdma_capture_map){p, off, len};
    c->next_mapped = true;
    c->next_given = false;
}

/* The bytes [pos, pos + n) of the file in a new window, which the caller
 * has checked are inside the file; NULL if they cannot be mapped. */
static const uint8_t *new_window(struct rdma_capture *c, uint64_t pos, uint64_t n)
{
    if (!c->hold)
        c->released = pos + n; /* the last window ends before that: no frame is in it now */
    drop_released(c);
    struct rdma_capture_map m = c->next;
    if (c->next_mapped && pos >= m.off && pos + n <= m.off + m.len) {
        /* nobody has mapped its pages in: the reader does, in one call */
        if (!c->next_given)
            populate(m.base, m.len);
    } else {
        if (c->next_mapped)
            retire_window(c, m.base, m.len); /* reading went around it */
        m.off = page_floor(pos);
        m.len = pos + n - m.off;
        if (m.len < WINDOW)
            m.len = WINDOW;
        if (m.off + m.len > c->size)
            m.len = c->size - m.off;
        /* Populated up front: one call maps the window's pages, where
         * touching them would take a fault every few. */
        m.base = mmap(NULL, m.len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, c->fd, (off_t)m.off);
        if (m.base == MAP_FAILED) {
            c->next_mapped = false;
            return NULL;
        }
    }
    c->next_mapped = false;
    if (!add_map(c, m)) {
        retire_window(c, m.base, m.len);
        return NULL;
    }
    if (c->hold)
        map_next(c);
    c->prefetched = m.base + (pos - m.off);
    return c->prefetched;
}

/* The bytes [pos, pos + n) of the file, which the caller has checked are
 * inside it; NULL if they cannot be mapped. */
static inline const uint8_t *window(struct rdma_capture *c, uint64_t pos, uint64_t n)
{
    if (c->nmaps) {
        const struct rdma_capture_map *m = &c->maps[c->nmaps - 1];
        if (pos >= m->off && pos + n <= m->off + m->len)
            return m->base + (pos - m->off);
    }
    return new_window(c, pos, n);
}

/* The link types of RDMA captures (those the codec decodes: Ethernet,
 * Linux cooked SLL and SLL2, raw InfiniBand, ERF), whose records libpcap
 * passes on as the file stores them, byte order aside (map_classic). The
 * reader maps no other: it has no reason to, and some libpcap rewrites. */
static bool records_as_stored(int linktype)
{
    switch (linktype) {
    case DLT_EN10MB:
    case DLT_LINUX_SLL:
    case DLT_LINUX_SLL2:
    case DLT_INFINIBAND:
    case DLT_ERF:
        return true;
    }
    return false;
}

/* Read the records of fd, which libpcap has opened, through mappings when
 * it is a classic pcap file whose records libpcap would pass on unchanged:
 * version 2.4 (earlier versions may have the two lengths swapped), and a
 * link type of records_as_stored(), except cooked captures written in the
 * other byte order (libpcap rewrites their CAN headers). */
static void map_classic(struct rdma_capture *c, int fd)
{
    uint8_t h[FILE_HEADER];
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, h, sizeof h, 0) != sizeof h)
        return;
    switch (get32(h, false)) {
    case 0xa1b2c3d4u:
        c->nano = false;
        c->swapped = false;
        break;
    case 0xa1b23c4du:
        c->nano = true;
        c->swapped = false;
        break;
    case 0xd4c3b2a1u:
        c->nano = false;
        c->swapped = true;
        break;
    case 0x4d3cb2a1u:
        c->nano = true;
        c->swapped = true;
        break;
    default:
        return;
    }
    if (pcap_major_version(c->pc) != 2 || pcap_minor_version(c->pc) != 4 ||
        !records_as_stored(c->linktype) ||
        (c->swapped && (c->linktype == DLT_LINUX_SLL || c->linktype == DLT_LINUX_SLL2)))
        return;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_sigbus);
    c->faults = (unsigned long)lost_pages;
    c->fd = fd;
    c->snapshot = (uint32_t)pcap_snapshot(c->pc);
    c->size = (uint64_t)st.st_size;
    c->pos = FILE_HEADER;
    c->mapped = true;
}

bool rdma_capture_open(struct rdma_capture *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    char errbuf[PCAP_ERRBUF_SIZE];
    /* "-" is left to libpcap, which reads standard input. A file that
     * cannot be opened is worded here, without its name (libpcap's words
     * name it, and the caller names it again). */
    bool stdin_ = !strcmp(path, "-");
    FILE *fp = stdin_ ? NULL : fopen(path, "rb");
    if (!stdin_ && !fp) {
        snprintf(err, errlen, "%s", strerror(errno));
        return false;
    }
    bool gzipped = fp && capture__is_gzip(fileno(fp));
    if (gzipped) {
        fclose(fp);
        if (!(fp = capture__gunzip(path))) {
            snprintf(err, errlen, "%s", strerror(errno));
            return false;
        }
    }
    if (fp) {
        /* stdio's buffer is one page unless it is handed a larger one: a
         * read() every ten frames for what libpcap reads */
        c->iobuf = malloc(READ_BUFFER);
        if (c->iobuf)
            setvbuf(fp, c->iobuf, _IOFBF, READ_BUFFER);
        c->pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, errbuf);
        if (!c->pc)
            fclose(fp);
    } else {
        c->pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    }
    if (!c->pc) {
        snprintf(err, errlen, "%s", errbuf);
        free(c->iobuf);
        c->iobuf = NULL;
        return false;
    }
    c->linktype = pcap_datalink(c->pc);
    if (fp && !gzipped)
        map_classic(c, fileno(fp));
    return true;
}

/* An ERF record carries its own time, 32.32 fixed-point seconds (least
 * significant byte first), finer than the pcap record's microseconds:
 * rounded to the nearest nanosecond as tshark rounds it. */
static void erf_time(struct rdma_capture_frame *f)
{
    if (f->caplen < 8)
        return;
    uint64_t ts = (uint64_t)get32(f->data, false) | (uint64_t)get32(f->data + 4, false) << 32;
    uint64_t frac = (ts & 0xffffffffu) * 1000000000u;
    frac += (frac & 0x80000000u) << 1;
    f->sec = (int64_t)(ts >> 32);
    f->nsec = (int64_t)(frac >> 32);
    if (f->nsec >= 1000000000) {
        f->nsec -= 1000000000;
        f->sec++;
    }
}

/* The next record read by libpcap; in a mapped file, the one at c->pos,
 * after which reading goes on through the mappings. */
static int next_libpcap(struct rdma_capture *c, struct rdma_capture_frame *f)
{
    FILE *fp = pcap_file(c->pc);
    if (c->mapped && fseeko(fp, (off_t)c->pos, SEEK_SET)) {
        snprintf(c->error, sizeof c->error, "error reading dump file: %s", strerror(errno));
        return -1;
    }
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc = pcap_next_ex(c->pc, &h, &data);
    if (rc != 1) {
        if (rc == PCAP_ERROR)
            snprintf(c->error, sizeof c->error, "%s", pcap_geterr(c->pc));
        return rc == PCAP_ERROR ? -1 : 0;
    }
    if (c->mapped) {
        off_t at = ftello(fp);
        if (at < 0)
            c->mapped = false; /* libpcap reads on from where it is */
        else
            c->pos = (uint64_t)at;
    }
    /* PCAP_TSTAMP_PRECISION_NANO: tv_usec holds nanoseconds */
    f->sec = h->ts.tv_sec;
    f->nsec = h->ts.tv_usec;
    f->caplen = h->caplen;
    f->len = h->len;
    f->data = data;
    f->record = NULL;
    if (c->linktype == DLT_ERF)
        erf_time(f);
    return 1;
}

const uint8_t *rdma_capture_record(const struct rdma_capture *c, const uint8_t *record,
                              struct rdma_capture_frame *f)
{
    /* as libpcap reads them: signed 32 bits, microseconds scaled after
     * sign extension */
    f->sec = (int32_t)get32(record, c->swapped);
    int32_t frac = (int32_t)get32(record + 4, c->swapped);
    f->nsec = c->nano ? frac : (int64_t)frac * 1000;
    f->caplen = get32(record + 8, c->swapped);
    f->len = get32(record + 12, c->swapped);
    f->data = record + RECORD_HEADER;
    f->record = record;
    if (c->linktype == DLT_ERF)
        erf_time(f);
    return f->data + f->caplen;
}

/* Touch the n bytes of the record at h page by page: false if a page of
 * it was found gone (the count is left for rdma_capture_next() to see). */
static bool record_whole(const struct rdma_capture *c, const uint8_t *h, uint64_t n)
{
    for (uint64_t o = 0; o < n; o += page_size)
        (void)*(volatile const uint8_t *)(h + o);
    (void)*(volatile const uint8_t *)(h + n - 1);
    return (unsigned long)lost_pages == c->faults;
}

/* Where the next record starts is known only once this one's length is
 * read: a chain of loads, each a miss to memory when it enters a new
 * page. Lines fetched ahead of it make the misses overlap. */
static void prefetch_ahead(struct rdma_capture *c)
{
    const struct rdma_capture_map *m = &c->maps[c->nmaps - 1];
    const uint8_t *want = m->base + (c->pos - m->off) + PREFETCH_AHEAD;
    if (want > m->base + m->len)
        want = m->base + m->len;
    for (; c->prefetched < want; c->prefetched += CACHE_LINE)
        __builtin_prefetch(c->prefetched);
}

int rdma_capture_next(struct rdma_capture *c, struct rdma_capture_frame *f)
{
    if (!c->mapped)
        return next_libpcap(c, f);
    const uint8_t *h;
    uint64_t left = c->size - c->pos;
    if (left < RECORD_HEADER || !(h = window(c, c->pos, RECORD_HEADER)))
        return next_libpcap(c, f);
    uint32_t caplen = get32(h + 8, c->swapped);
    uint64_t n = RECORD_HEADER + (uint64_t)caplen;
    if (caplen > c->snapshot || left < n || !(h = window(c, c->pos, n)))
        return next_libpcap(c, f);
    /* a page of the record the file no longer has reads as zeros: look */
    if (!record_whole(c, h, n)) {
        struct stat st;
        long long now = fstat(c->fd, &st) ? -1 : (long long)st.st_size;
        snprintf(c->error, sizeof c->error, "the file shrank while it was read (from %llu to %lld bytes)",
                 (unsigned long long)c->size, now);
        c->faults = (unsigned long)lost_pages;
        return -1;
    }
    rdma_capture_record(c, h, f);
    c->pos += RECORD_HEADER + (uint64_t)caplen;
    prefetch_ahead(c);
    return 1;
}

size_t rdma_capture_skip(struct rdma_capture *c, size_t max, uint64_t *bytes, uint64_t max_bytes,
                         const uint8_t **end)
{
    if (!c->mapped || !c->nmaps)
        return 0;
    const struct rdma_capture_map *m = &c->maps[c->nmaps - 1];
    uint64_t stop = m->off + m->len < c->size ? m->off + m->len : c->size;
    if (c->pos < m->off || c->pos > stop)
        return 0; /* the last record was libpcap's */
    /* as rdma_capture_next() does it, record by record, in registers */
    const uint8_t *h = m->base + (c->pos - m->off), *last = m->base + (stop - m->off);
    const uint8_t *prefetched = c->prefetched, *map_end = m->base + m->len;
    uint64_t sum = *bytes;
    size_t k = 0;
    for (; k < max && sum < max_bytes && (size_t)(last - h) >= RECORD_HEADER; k++) {
        uint32_t caplen = get32(h + 8, c->swapped);
        uint64_t n = RECORD_HEADER + (uint64_t)caplen;
        if (caplen > c->snapshot || (uint64_t)(last - h) < n || !record_whole(c, h, n))
            break;
        h += n;
        sum += caplen;
        const uint8_t *want = (size_t)(map_end - h) > PREFETCH_AHEAD ? h + PREFETCH_AHEAD : map_end;
        for (; prefetched < want; prefetched += CACHE_LINE)
            __builtin_prefetch(prefetched);
    }
    if (k) {
        c->pos = m->off + (uint64_t)(h - m->base);
        c->prefetched = prefetched;
        *bytes = sum;
        *end = h;
    }
    return k;
}

void rdma_capture_hold(struct rdma_capture *c) { c->hold = true; }

bool rdma_capture_ahead(struct rdma_capture *c, struct rdma_capture_span *s)
{
    if (!c->next_mapped || c->next_given)
        return false;
    c->next_given = true;
    *s = (struct rdma_capture_span){c->next.base, c->next.len};
    return true;
}

void rdma_capture_populate(const struct rdma_capture_span *s) { populate(s->base, s->len); }

bool rdma_capture_dead(struct rdma_capture *c, struct rdma_capture_span *s)
{
    if (!c->ndead)
        return false;
    *s = c->dead[--c->ndead];
    return true;
}

void rdma_capture_unmap(const struct rdma_capture_span *s) { munmap(s->base, s->len); }

uint64_t rdma_capture_mark(const struct rdma_capture *c) { return c->pos; }

void rdma_capture_release(struct rdma_capture *c, uint64_t mark)
{
    if (mark > c->released)
        c->released = mark;
    drop_released(c);
}

void rdma_capture_close(struct rdma_capture *c)
{
    for (size_t i = 0; i < c->nmaps; i++)
        munmap(c->maps[i].base, c->maps[i].len);
    if (c->next_mapped)
        munmap(c->next.base, c->next.len);
    for (size_t i = 0; i < c->ndead; i++)
        munmap(c->dead[i].base, c->dead[i].len);
    free(c->dead);
    free(c->maps);
    if (c->pc)
        pcap_close(c->pc); /* and the file it read */
    free(c->iobuf);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}
