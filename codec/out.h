/* out.h - appending text to a caller's buffer without printf, for the
 * printers: decode --json must keep up with millions of frames a second.
 * Once the buffer is full every append is a no-op and `full` is set. */
#ifndef RDMA_OUT_H
#define RDMA_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct out {
    char *buf;
    size_t cap;
    size_t len;
    bool full;
};

static inline void out_mem(struct out *o, const char *s, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static inline void out_str(struct out *o, const char *s) { out_mem(o, s, strlen(s)); }
static inline void out_chr(struct out *o, char c) { out_mem(o, &c, 1); }

static inline void out_u64(struct out *o, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    out_mem(o, tmp + i, sizeof tmp - i);
}

static inline void out_hex(struct out *o, uint64_t v, unsigned digits)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[16];
    if (digits > 16)
        digits = 16;
    for (unsigned i = digits; i-- > 0;) {
        tmp[i] = hex[v & 15];
        v >>= 4;
    }
    out_mem(o, tmp, digits);
}

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind);

#endif
