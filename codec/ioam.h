/* ioam.h - the codec's own view of the IOAM trace (ioam.c): writing the
 * Hop-by-Hop header that carries it (encode.c) and finding it in one
 * (decode.c). The public part is in rdma_codec.h.
 */
#ifndef RDMA_IOAM_H
#define RDMA_IOAM_H

#include "rdma_codec.h"

/* Write the Hop-by-Hop header carrying trace t, whose Next Header is
 * `next`, at p: rdma_ioam_hbh_bytes(t) octets, or 0 if t cannot be. */
uint32_t rdma__ioam_put(uint8_t *p, const struct rdma_ioam *t, uint8_t next);
/* Look for a pre-allocated trace in the Hop-by-Hop header at hbh (len
 * octets captured from it on; hbh_at its offset in the frame). Sets
 * t->present when one is there; returns what is wrong with it, or NULL. */
const char *rdma__ioam_get(const uint8_t *hbh, size_t len, size_t hbh_at, struct rdma_ioam *t);

/* The fields (1 << enum rdma_ioam_field) a node's data of this trace
 * type holds. */
uint32_t rdma__ioam_fields(uint32_t trace_type);

#endif
