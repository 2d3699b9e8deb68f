/* capture.c - frames from a capture file, in order, one at a time.
 *
 * Classic pcap files (the tcpdump format: a 24-byte file header, then a
 * 16-byte header per record) are read through a sliding read-only mapping
 * of the file, so frames are analysed where the page cache holds them
 * instead of being copied twice (kernel to stdio, stdio to libpcap) on
 * their way in; at the sizes RoCE captures reach, those copies cost more
 * than the analysis. The window is bounded, so memory does not follow the
 * file. Anything else (pcapng, other formats) goes through libpcap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"

#define WINDOW (32u << 20)
#define MAX_RECORD 262144u /* libpcap's largest snapshot length */
#define FILE_HEADER 24
#define RECORD_HEADER 16
#define LINKTYPE_MASK 0x03ffffffu /* the upper bits carry FCS information */

static uint32_t get32(const uint8_t *p, bool swapped)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return swapped ? __builtin_bswap32(v) : v;
}

/* Map the window holding [pos, pos + n); false past the end of the file. */
static bool window(struct capture *c, uint64_t pos, uint64_t n)
{
    if (pos + n > c->size)
        return false;
    if (c->win && pos >= c->win_off && pos + n <= c->win_off + c->win_len)
        return true;
    if (c->win)
        munmap(c->win, c->win_len);
    c->win = NULL;
    uint64_t off = pos & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
    uint64_t len = pos + n - off;
    if (len < WINDOW)
        len = WINDOW;
    if (off + len > c->size)
        len = c->size - off;
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, c->fd, (off_t)off);
    if (p == MAP_FAILED)
        return false;
    c->win = p;
    c->win_off = off;
    c->win_len = len;
    return true;
}

/* 1: a classic pcap file, opened; 0: something else; -1: cannot open it. */
static int open_classic(struct capture *c, const char *path)
{
    uint8_t h[FILE_HEADER];
    struct stat st;
    c->fd = open(path, O_RDONLY);
    if (c->fd < 0)
        return -1;
    if (fstat(c->fd, &st) || !S_ISREG(st.st_mode) || pread(c->fd, h, sizeof h, 0) != sizeof h)
        goto no;
    uint32_t magic = get32(h, false);
    switch (magic) {
    case 0xa1b2c3d4u:
    case 0xa1b23c4du:
        c->swapped = false;
        break;
    case 0xd4c3b2a1u:
    case 0x4d3cb2a1u:
        c->swapped = true;
        break;
    default:
        goto no;
    }
    c->nano = (c->swapped ? __builtin_bswap32(magic) : magic) == 0xa1b23c4du;
    c->linktype = (int)(get32(h + 20, c->swapped) & LINKTYPE_MASK);
    c->snaplen = get32(h + 16, c->swapped);
    c->size = (uint64_t)st.st_size;
    c->pos = FILE_HEADER;
    return 1;
no:
    close(c->fd);
    c->fd = -1;
    return 0;
}

bool capture_open(struct capture *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    int classic = open_classic(c, path);
    if (classic > 0)
        return true;
    if (classic < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return false;
    }
    char errbuf[PCAP_ERRBUF_SIZE];
    c->pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!c->pc) {
        snprintf(err, errlen, "%s", errbuf);
        return false;
    }
    c->linktype = pcap_datalink(c->pc);
    return true;
}

int capture_next(struct capture *c, struct capture_frame *f)
{
    if (c->pc) {
        struct pcap_pkthdr *h;
        const u_char *data;
        int rc = pcap_next_ex(c->pc, &h, &data);
        if (rc != 1) {
            if (rc == PCAP_ERROR)
                snprintf(c->error, sizeof c->error, "%s", pcap_geterr(c->pc));
            return rc == PCAP_ERROR ? -1 : 0;
        }
        /* PCAP_TSTAMP_PRECISION_NANO: tv_usec holds nanoseconds */
        f->sec = (uint64_t)h->ts.tv_sec;
        f->nsec = (uint32_t)h->ts.tv_usec;
        f->caplen = h->caplen;
        f->len = h->len;
        f->data = data;
        return 1;
    }
    if (c->pos == c->size)
        return 0;
    if (!window(c, c->pos, RECORD_HEADER)) {
        snprintf(c->error, sizeof c->error, "truncated record header");
        return -1;
    }
    const uint8_t *h = c->win + (c->pos - c->win_off);
    uint32_t caplen = get32(h + 8, c->swapped);
    if (caplen > MAX_RECORD) {
        snprintf(c->error, sizeof c->error, "record of %u bytes, larger than any capture holds", caplen);
        return -1;
    }
    if (!window(c, c->pos, RECORD_HEADER + (uint64_t)caplen)) {
        snprintf(c->error, sizeof c->error, "truncated record");
        return -1;
    }
    h = c->win + (c->pos - c->win_off);
    f->sec = get32(h, c->swapped);
    f->nsec = get32(h + 4, c->swapped);
    if (!c->nano)
        f->nsec *= 1000;
    /* as libpcap does: bytes beyond the file's snapshot length are skipped */
    f->caplen = c->snaplen && caplen > c->snaplen ? c->snaplen : caplen;
    f->len = get32(h + 12, c->swapped);
    f->data = h + RECORD_HEADER;
    c->pos += RECORD_HEADER + caplen;
    return 1;
}

void capture_close(struct capture *c)
{
    if (c->pc)
        pcap_close(c->pc);
    if (c->win)
        munmap(c->win, c->win_len);
    if (c->fd >= 0)
        close(c->fd);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}
