/* icrc.h - the codec's own entries to icrc.c, beside the public CRCs of
 * rdma_codec.h.
 */
#ifndef RDMA_ICRC_H
#define RDMA_ICRC_H

#include <stddef.h>
#include <stdint.h>

/* rdma_icrc_rocev2() of a packet whose IPv4 header has no options and
 * which runs at least to the end of its BTH (len >= 40), as the decoder
 * has checked: no test of the header's version and length. Not exported,
 * so that the decoder calls it directly rather than through the PLT. */
__attribute__((visibility("hidden"))) uint32_t rdma__icrc_rocev2_ipv4(const uint8_t *ip, size_t len);

#endif
