/* iwarp_internal.h - what the iWARP files of the codec share and do not
 * export: the ULPDU (DDP + RDMAP) codec and FPDU layout. */
#ifndef RDMA_IWARP_INTERNAL_H
#define RDMA_IWARP_INTERNAL_H

#include "rdma_iwarp.h"

/* DDP header, the largest RDMAP header (a Terminate carrying a DDP and a
 * Read Request header, or an Atomic Request) and room to spare. */
#define RDMA__ULPDU_HDR_MAX 128

/* Keep the first problem found, like rdma_decode(). */
static inline void rdma__iw_fail(uint8_t *status, const char **reason, enum rdma_status st,
                                 const char *why)
{
    if (*status == RDMA_OK) {
        *status = (uint8_t)st;
        *reason = why;
    }
}
#define FPDU_FAIL(f, st, why) rdma__iw_fail(&(f)->status, &(f)->reason, (st), (why))

/* DDP + RDMAP headers and payload of a complete ULPDU of len octets. */
void rdma__ulpdu_decode(const uint8_t *u, size_t len, struct rdma_iwarp_fpdu *f);
/* The DDP + RDMAP headers f describes; returns their length. */
size_t rdma__ulpdu_headers_encode(const struct rdma_iwarp_fpdu *f, uint8_t *out);

/* Octets the FPDU starting at p (sequence seq) occupies in the stream, or 0
 * when its ULPDU_Length is not within len. */
size_t rdma__fpdu_wire_len(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                           size_t len);

/* Octets from seq to the next marker position (0: a marker is due at seq). */
static inline uint32_t rdma__to_marker(const struct rdma_mpa_framing *fr, uint32_t seq)
{
    return (fr->origin - seq) & (RDMA_MPA_MARKER_INTERVAL - 1);
}

#endif
