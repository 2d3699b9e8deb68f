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

/* "00" to "99": decimal digits are written two at a time. */
#define RDMA__DIGIT_PAIRS                                                      \
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839" \
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879" \
    "8081828384858687888990919293949596979899"

/* x < 10000 as exactly four digits at p. x / 100 is (x * 5243) >> 19 for
 * every such x, a multiply where a division would be. */
static inline void rdma__put4(char *p, uint32_t x)
{
    uint32_t hi = (x * 5243) >> 19;
    memcpy(p, &RDMA__DIGIT_PAIRS[2 * hi], 2);
    memcpy(p + 2, &RDMA__DIGIT_PAIRS[2 * (x - 100 * hi)], 2);
}

/* x < 10^8 as exactly eight digits at p. */
static inline void rdma_put_digits8(char *p, uint32_t x)
{
    uint32_t hi = x / 10000;
    rdma__put4(p, hi);
    rdma__put4(p + 4, x - 10000 * hi);
}

/* x < 10000 in one to four digits at p; returns the end. */
static inline char *rdma__put_small(char *p, uint32_t x)
{
    if (x < 10) {
        *p = (char)('0' + x);
        return p + 1;
    }
    if (x < 100) {
        memcpy(p, &RDMA__DIGIT_PAIRS[2 * x], 2);
        return p + 2;
    }
    if (x < 1000) {
        uint32_t hi = (x * 5243) >> 19;
        *p = (char)('0' + hi);
        memcpy(p + 1, &RDMA__DIGIT_PAIRS[2 * (x - 100 * hi)], 2);
        return p + 3;
    }
    rdma__put4(p, x);
    return p + 4;
}

/* x < 10^8 in one to eight digits at p; returns the end. */
static inline char *rdma__put_lt1e8(char *p, uint32_t x)
{
    if (x < 10000)
        return rdma__put_small(p, x);
    uint32_t hi = x / 10000;
    p = rdma__put_small(p, hi);
    rdma__put4(p, x - 10000 * hi);
    return p + 4;
}

/* v in decimal at p (room for RDMA_U64_DIGITS bytes); returns the end. The
 * digits are cut into groups of eight and four, whose divisions do not
 * wait on each other, and written two at a time. */
static inline char *rdma_put_u64(char *p, uint64_t v)
{
    if (v < 100000000)
        return rdma__put_lt1e8(p, (uint32_t)v);
    uint64_t hi = v / 100000000;
    uint32_t lo = (uint32_t)(v - 100000000 * hi);
    if (hi < 100000000) {
        p = rdma__put_lt1e8(p, (uint32_t)hi);
    } else {
        uint32_t top = (uint32_t)(hi / 100000000); /* below 10^4: UINT64_MAX has 20 digits */
        p = rdma__put_small(p, top);
        rdma_put_digits8(p, (uint32_t)(hi - 100000000 * (uint64_t)top));
        p += 8;
    }
    rdma_put_digits8(p, lo);
    return p + 8;
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
