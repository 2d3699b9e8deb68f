/* checksum.h - the Internet checksum (RFC 1071): a ones' complement sum of
 * 16-bit big-endian words, folded and inverted. Shared by the IPv4 header
 * check in the decoder and the IPv4/UDP/TCP checksums the encoders write. */
#ifndef RDMA_CHECKSUM_H
#define RDMA_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* Add len bytes to a running sum; an odd last byte is padded with zero.
 * Four bytes at a time: a big-endian 32-bit word is congruent to the sum
 * of its two 16-bit halves modulo 0xffff (2^16 = 1), and so is a 64-bit
 * total to the sum of its 32-bit halves (RFC 1071 2.(B), deferred carries). */
static inline uint32_t csum_add(const uint8_t *p, size_t len, uint32_t sum)
{
    uint64_t s = sum;
    size_t i = 0;
    for (; i + 7 < len; i += 8) {
        uint64_t w = (uint64_t)rdma_get_be32(p + i) << 32 | rdma_get_be32(p + i + 4);
        s += (w >> 32) + (w & 0xffffffff);
    }
    for (; i + 3 < len; i += 4)
        s += rdma_get_be32(p + i);
    for (; i + 1 < len; i += 2)
        s += rdma_get_be16(p + i);
    if (len & 1)
        s += (uint32_t)p[len - 1] << 8;
    while (s >> 32)
        s = (s & 0xffffffff) + (s >> 32);
    return (uint32_t)s;
}

static inline uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

#endif
