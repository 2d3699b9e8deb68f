/* out.h - appending text to a caller's buffer without printf, for the
 * printers: decode --json must keep up with millions of frames a second.
 * Once the buffer is full every append is a no-op and `full` is set.
 *
 * Appends write in place: where the buffer has room for the longest text
 * an append can make, the text is written there after that one check, and
 * only near the end of the buffer does it go through a scratch copy. The
 * out_put_* functions write at a pointer the caller has found room at
 * (out_room) and return the end of what they wrote, for out_end.
 */
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

#define OUT_U64_MAX 20 /* digits of UINT64_MAX */

/* Where n bytes can be written directly, or NULL. */
static inline char *out_room(const struct out *o, size_t n)
{
    return !o->full && o->cap - o->len >= n ? o->buf + o->len : NULL;
}

/* What was written from out_room() up to end is now part of the text. */
static inline void out_end(struct out *o, const char *end) { o->len = (size_t)(end - o->buf); }

static inline void out_mem(struct out *o, const char *s, size_t n)
{
    char *p = out_room(o, n);
    if (!p) {
        o->full = true;
        return;
    }
    memcpy(p, s, n);
    o->len += n;
}

static inline void out_str(struct out *o, const char *s) { out_mem(o, s, strlen(s)); }

static inline void out_chr(struct out *o, char c)
{
    char *p = out_room(o, 1);
    if (!p) {
        o->full = true;
        return;
    }
    *p = c;
    o->len++;
}

/* "00" to "99": decimal digits are written two at a time. */
#define OUT_DIGIT_PAIRS                                                        \
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839" \
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879" \
    "8081828384858687888990919293949596979899"

/* x < 10000 as exactly four digits at p. x / 100 is (x * 5243) >> 19 for
 * every such x, a multiply where a division would be. */
static inline void out_put4(char *p, uint32_t x)
{
    uint32_t hi = (x * 5243) >> 19;
    memcpy(p, &OUT_DIGIT_PAIRS[2 * hi], 2);
    memcpy(p + 2, &OUT_DIGIT_PAIRS[2 * (x - 100 * hi)], 2);
}

/* x < 10^8 as exactly eight digits at p. */
static inline void out_put8(char *p, uint32_t x)
{
    uint32_t hi = x / 10000;
    out_put4(p, hi);
    out_put4(p + 4, x - 10000 * hi);
}

/* x < 10000 in one to four digits at p; returns the end. */
static inline char *out_put_small(char *p, uint32_t x)
{
    if (x < 10) {
        *p = (char)('0' + x);
        return p + 1;
    }
    if (x < 100) {
        memcpy(p, &OUT_DIGIT_PAIRS[2 * x], 2);
        return p + 2;
    }
    if (x < 1000) {
        uint32_t hi = (x * 5243) >> 19;
        *p = (char)('0' + hi);
        memcpy(p + 1, &OUT_DIGIT_PAIRS[2 * (x - 100 * hi)], 2);
        return p + 3;
    }
    out_put4(p, x);
    return p + 4;
}

/* x < 10^8 in one to eight digits at p; returns the end. */
static inline char *out_put_lt1e8(char *p, uint32_t x)
{
    if (x < 10000)
        return out_put_small(p, x);
    uint32_t hi = x / 10000;
    p = out_put_small(p, hi);
    out_put4(p, x - 10000 * hi);
    return p + 4;
}

/* v in decimal at p (room for OUT_U64_MAX bytes); returns the end. The
 * digits are cut into groups of eight and four, whose divisions do not
 * wait on each other, and written two at a time. */
static inline char *out_put_u64(char *p, uint64_t v)
{
    if (v < 100000000)
        return out_put_lt1e8(p, (uint32_t)v);
    uint64_t hi = v / 100000000;
    uint32_t lo = (uint32_t)(v - 100000000 * hi);
    if (hi < 100000000) {
        p = out_put_lt1e8(p, (uint32_t)hi);
    } else {
        uint32_t top = (uint32_t)(hi / 100000000); /* below 10^4: UINT64_MAX has 20 digits */
        p = out_put_small(p, top);
        out_put8(p, (uint32_t)(hi - 100000000 * (uint64_t)top));
        p += 8;
    }
    out_put8(p, lo);
    return p + 8;
}

/* The low `digits` hex digits of v (at most 16) at p; returns the end. */
static inline char *out_put_hex(char *p, uint64_t v, unsigned digits)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = digits; i-- > 0;) {
        p[i] = hex[v & 15];
        v >>= 4;
    }
    return p + digits;
}

static inline void out_u64(struct out *o, uint64_t v)
{
    char *p = out_room(o, OUT_U64_MAX);
    if (p) {
        out_end(o, out_put_u64(p, v));
        return;
    }
    char tmp[OUT_U64_MAX];
    out_mem(o, tmp, (size_t)(out_put_u64(tmp, v) - tmp));
}

static inline void out_hex(struct out *o, uint64_t v, unsigned digits)
{
    if (digits > 16)
        digits = 16;
    char *p = out_room(o, digits);
    if (p) {
        out_end(o, out_put_hex(p, v, digits));
        return;
    }
    o->full = true;
}

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind);

#endif
