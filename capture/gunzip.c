/* gunzip.c - a gzip-compressed capture (.pcap.gz, .pcapng.gz) as a stdio
 * stream of its decompressed bytes, which libpcap reads as it reads any
 * file (tshark opens them the same way). zlib reads the gzip members
 * (RFC 1952) one after another, as gzip -d does. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gunzip.h"

static ssize_t gz_read(void *cookie, char *buf, size_t n)
{
    /* gzread() takes an unsigned count: ask in pieces it can say */
    unsigned want = n > (1u << 30) ? 1u << 30 : (unsigned)n;
    int got = gzread(cookie, buf, want);
    if (got < 0) {
        errno = EIO;
        return -1;
    }
    return got;
}

static int gz_close(void *cookie) { return gzclose(cookie) == Z_OK ? 0 : EOF; }

bool capture__is_gzip(int fd)
{
    struct stat st;
    unsigned char magic[2];
    return !fstat(fd, &st) && S_ISREG(st.st_mode) && pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
           magic[1] == 0x8b;
}

FILE *capture__gunzip(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return NULL;
    gzbuffer(gz, 1u << 16);
    static const cookie_io_functions_t io = {.read = gz_read, .close = gz_close};
    FILE *fp = fopencookie(gz, "r", io);
    if (!fp)
        gzclose(gz);
    return fp;
}
