/* out.h - appending text to a caller's buffer without printf, for the
 * printers: decode --json must keep up with millions of frames a second.
 * Once the buffer is full every append is a no-op and `full` is set.
 *
 * Appends write in place: where the buffer has room for the longest text
 * an append can make, the text is written there after that one check, and
 * only near the end of the buffer does it go through a scratch copy. The
 * out_put_* functions (and the digit writers of rdma_text.h) write at a
 * pointer the caller has found room at (out_room) and return the end of
 * what they wrote, for out_end.
 */
#ifndef RDMA_OUT_H
#define RDMA_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rdma_text.h"

struct out {
    char *buf;
    size_t cap;
    size_t len;
    bool full;
};


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

/* The eight hex digits of x at p, the first at p[0]. Each nibble is
 * spread into a byte of its own, most significant first, and the bytes
 * of 10 to 15 (those that carry when 6 is added) get the gap between '9'
 * and 'a' (39) added: eight digits in a few operations, no table. */
static inline char *out_put_hex8(char *p, uint32_t x)
{
    uint64_t v = x;
    v = (v | v << 16) & 0x0000ffff0000ffffull;
    v = (v | v << 8) & 0x00ff00ff00ff00ffull;
    v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full; /* nibble i in byte i */
    v = __builtin_bswap64(v);                  /* the first digit in the lowest byte */
    uint64_t letters = (v + 0x0606060606060606ull) >> 4 & 0x0101010101010101ull;
    rdma__put_le64(p, v + 0x3030303030303030ull + 39 * letters);
    return p + 8;
}

/* A 64-bit value as JSON text, "0x" and sixteen hex digits in quotes
 * (RDMA_HEX64_JSON bytes at p): JSON readers such as jq hold numbers as
 * doubles, exact only below 2^53, so addresses, GUIDs and 64-bit operands
 * are strings, in the form tshark shows them. Returns the end. */
#define RDMA_HEX64_JSON 20
static inline char *out_put_hex64_json(char *p, uint64_t v)
{
    p[0] = '"';
    p[1] = '0';
    p[2] = 'x';
    p = out_put_hex8(p + 3, (uint32_t)(v >> 32));
    p = out_put_hex8(p, (uint32_t)v);
    *p = '"';
    return p + 1;
}

static inline void out_u64(struct out *o, uint64_t v)
{
    char *p = out_room(o, RDMA_U64_DIGITS);
    if (p) {
        out_end(o, rdma_put_u64(p, v));
        return;
    }
    char tmp[RDMA_U64_DIGITS];
    out_mem(o, tmp, (size_t)(rdma_put_u64(tmp, v) - tmp));
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

static inline void out_hex64_json(struct out *o, uint64_t v)
{
    char *p = out_room(o, RDMA_HEX64_JSON);
    if (p) {
        out_end(o, out_put_hex64_json(p, v));
        return;
    }
    o->full = true;
}

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind);

struct rdma_pkt;
/* "SRC → DST PROTO details" of an ARP, TCP, UDP, ICMP or ICMPv6 packet
 * whose network header (of the EtherType given) begins at p; false, and
 * nothing written, for any other (format_other.c). */
bool rdma__format_network(struct out *o, unsigned ethertype, const uint8_t *p, size_t captured);
/* " IPoIB " and the same, for an IPoIB packet in a UD SEND's payload. */
bool rdma__format_ipoib(struct out *o, const struct rdma_pkt *pkt);

#endif
