/* checksum.h - the Internet checksum (RFC 1071): a ones' complement sum of
 * 16-bit big-endian words, folded and inverted. Shared by the IPv4 header
 * check in the decoder and the IPv4/UDP/TCP checksums the encoders write. */
#ifndef RDMA_CHECKSUM_H
#define RDMA_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* Add len bytes to a running sum; an odd last byte is padded with zero. */
static inline uint32_t csum_add(const uint8_t *p, size_t len, uint32_t sum)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += rdma_get_be16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    return sum;
}

static inline uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

#endif
