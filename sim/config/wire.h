/* wire.h - Ethernet wire sizes and the PFC headroom they imply: a pure
 * function of a link's parameters, shared by the configuration's checks and
 * the run-time buffers.
 */
#ifndef SIM_CONFIG_WIRE_H
#define SIM_CONFIG_WIRE_H

#include <stdint.h>

#include "config/cfg.h"

/* Preamble and start delimiter (8), FCS (4), inter-frame gap (12): bytes a
 * frame costs on an Ethernet link beyond what a capture shows. */
#define SIM_ETH_WIRE_EXTRA 24

/* A PFC frame (IEEE 802.1Qbb: 60 bytes before the FCS) on the wire. */
#define SIM_PFC_FRAME_WIRE (60 + SIM_ETH_WIRE_EXTRA)

/* Largest frame a link carries: IP MTU, Ethernet header and one VLAN tag. */
static inline uint64_t sim__max_frame(const struct cfg_link_params *lp) { return lp->mtu + 18u; }

/* Bytes that may still arrive on a link after its receiver decides to
 * pause it; see wire.c for the derivation. */
uint64_t sim__pfc_headroom(const struct cfg_link_params *lp);

/* The most bytes one egress queue of a switch can ever hold: its port's
 * buffer without a shared one; with one, the whole buffer when a priority
 * is lossless (a lossless queue fills from every ingress group), else the
 * lossy dynamic threshold's fixed point, q = alpha x (pool - q), plus the
 * reserved space of the groups that feed it. ECN thresholds above it are
 * never reached. */
uint64_t sim__queue_cap(const struct cfg_switch *s, uint64_t port_buffer, uint64_t pool,
                        uint32_t nports);

#endif
