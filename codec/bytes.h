/* bytes.h - big-endian wire access by shifts, never by casting structs.
 *
 * A field is `width` bits whose least significant bit sits `shift` bits up
 * from the bottom of the big-endian integer of ceil((shift+width)/8) bytes
 * that starts at `p + byte`. With constant arguments the compiler reduces
 * these to a few loads and shifts.
 */
#ifndef RDMA_BYTES_H
#define RDMA_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get_be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
/* CRCs are stored least significant byte first. */
static inline uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t get_bits(const uint8_t *p, unsigned shift, unsigned width)
{
    unsigned nbytes = (shift + width + 7) / 8;
    uint64_t v = 0;
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
