/* bytes.h - fields of any bit width inside big-endian integers, for the
 * codec's field lists (fields.h); whole integers are rdma_bytes.h's.
 *
 * A field is `width` bits whose least significant bit sits `shift` bits up
 * from the bottom of the big-endian integer of ceil((shift+width)/8) bytes
 * that starts at `p + byte`. With constant arguments the compiler reduces
 * these to a few loads and shifts.
 */
#ifndef RDMA_CODEC_BYTES_H
#define RDMA_CODEC_BYTES_H

#include <stdint.h>
#include <string.h>

#include "rdma_bytes.h"

static inline uint64_t get_bits(const uint8_t *p, unsigned shift, unsigned width)
{
    unsigned nbytes = (shift + width + 7) / 8;
    uint64_t v = 0;
    _Pragma("GCC unroll 8") /* nbytes is a constant: a few loads, no loop */
    for (unsigned i = 0; i < nbytes; i++)
        v = v << 8 | p[i];
    v >>= shift;
    return width >= 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

static inline void put_bits(uint8_t *p, unsigned shift, unsigned width, uint64_t value)
{
    unsigned nbytes = (shift + width + 7) / 8;
    uint64_t mask = (width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1) << shift;
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++)
        v = v << 8 | p[i];
    v = (v & ~mask) | ((value << shift) & mask);
    for (unsigned i = nbytes; i-- > 0;) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

#endif
