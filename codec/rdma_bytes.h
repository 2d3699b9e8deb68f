/* rdma_bytes.h - integers on the wire, read and written by shifts, never by
 * casting a struct over a buffer: wire fields sit at any alignment (an IP
 * header 14 bytes into a pcap record, a BTH after it), and a cast would
 * read them in the host's byte order. The codec reads every field through
 * these; its users (the simulator rewriting an IP header in flight, say)
 * may too.
 */
#ifndef RDMA_BYTES_H
#define RDMA_BYTES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Big-endian (network order), as every header field is. */
static inline uint16_t rdma_get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t rdma_get_be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t rdma_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void rdma_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void rdma_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
/* Least significant byte first, as the ICRC and the MPA CRC are stored. */
static inline uint32_t rdma_get_le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline void rdma_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#ifdef __cplusplus
}
#endif

#endif
