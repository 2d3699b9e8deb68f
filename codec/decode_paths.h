/* decode_paths.h - the two ways rdma_decode() takes (decode.c), apart, so
 * that a test can hold the plain RoCEv2 frame's path to the general one.
 */
#ifndef RDMA_DECODE_PATHS_H
#define RDMA_DECODE_PATHS_H

#include "rdma_codec.h"

/* Decode a whole Ethernet frame of len bytes if it is a plain RoCEv2
 * frame (decode.c says which); false, with pkt untouched, if not. */
bool rdma__decode_plain_rocev2(const struct rdma_decode_config *cfg, const uint8_t *frame,
                               size_t len, struct rdma_pkt *pkt);

/* rdma_decode() without the plain RoCEv2 frame's path. */
enum rdma_status rdma__decode_general(const struct rdma_decode_config *cfg, unsigned linktype,
                                      const uint8_t *frame, size_t caplen, size_t wirelen,
                                      struct rdma_pkt *pkt);

#endif
