/* rdma_text.h - text for lines composed around the codec's printers
 * (rdma_format_json, rdma_format_summary): numbers in decimal, written as
 * the printers write them, without printf (rdmasim decode writes millions
 * of lines a second), and strings as JSON.
 */
#ifndef RDMA_TEXT_H
#define RDMA_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDMA_U64_DIGITS 20 /* digits of UINT64_MAX */

/* The text of 0 to 9999 as four digits, leading zeros kept, the first
 * digit in the lowest byte (text.c). Eight digits are two lookups where
 * splitting them in lanes of a word took some twenty operations; the
 * table is 40 KB, and decode --json reads it some ten times a frame. */
extern const uint32_t rdma__digits4[10000];

/* x < 10^8 as eight digits of text, the first in the lowest byte. */
static inline uint64_t rdma__digits8(uint32_t x)
{
    uint32_t hi = x / 10000;
    return rdma__digits4[hi] | (uint64_t)rdma__digits4[x - 10000 * hi] << 32;
}

/* The eight bytes of v at p, the lowest first, whatever the host's order. */
static inline void rdma__put_le64(char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

#define RDMA__ASCII_ZEROS 0x3030303030303030ull

/* x < 10^8 as exactly eight digits at p. */
static inline void rdma_put_digits8(char *p, uint32_t x) { rdma__put_le64(p, rdma__digits8(x)); }

/* x < 10^8 in one to eight digits at p, which has room for eight; returns
 * the end. No branch on the value: the leading zeros are the bytes below
 * the first that is not '0', found by counting trailing zero bits of the
 * text less '0's (the last digit's byte is marked so that 0 keeps one
 * digit). */
static inline char *rdma__put_lt1e8(char *p, uint32_t x)
{
    uint64_t d = rdma__digits8(x);
    unsigned zeros = (unsigned)__builtin_ctzll((d ^ RDMA__ASCII_ZEROS) | 1ull << 56) / 8;
    rdma__put_le64(p, d >> 8 * zeros);
    return p + 8 - zeros;
}

/* v >= 10^8 in decimal at p (room for RDMA_U64_DIGITS bytes); returns the
 * end. The digits are cut into groups of eight, written whole. */
static inline char *rdma__put_ge1e8(char *p, uint64_t v)
{
    uint64_t hi = v / 100000000;
    uint32_t lo = (uint32_t)(v - 100000000 * hi);
    if (hi < 100000000) {
        p = rdma__put_lt1e8(p, (uint32_t)hi);
    } else {
        uint32_t top = (uint32_t)(hi / 100000000); /* below 10^4: UINT64_MAX has 20 digits */
        p = rdma__put_lt1e8(p, top);
        rdma_put_digits8(p, (uint32_t)(hi - 100000000 * (uint64_t)top));
        p += 8;
    }
    rdma_put_digits8(p, lo);
    return p + 8;
}

/* v in decimal at p (room for RDMA_U64_DIGITS bytes); returns the end.
 * Most numbers are below 10^8, and take the short path inline. */
static inline __attribute__((always_inline)) char *rdma_put_u64(char *p, uint64_t v)
{
    return v < 100000000 ? rdma__put_lt1e8(p, (uint32_t)v) : rdma__put_ge1e8(p, v);
}

/* s as a JSON string into buf: in double quotes, with '"' and backslash escaped
 * and control characters as \u00XX (RFC 8259 section 7). A string that
 * does not fit is cut short, never inside an escape, and still closed.
 * Returns the length written, no terminator; 0 when cap < 2. */
size_t rdma_json_string(const char *s, char *buf, size_t cap);
/* The same, whole, to f; false on a write error. */
bool rdma_json_fputs(const char *s, FILE *f);

#ifdef __cplusplus
}
#endif

#endif
