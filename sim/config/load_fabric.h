/* config_fabric.h - the loader's side of the fabric keys (config_fabric.c):
 * switch buffers, scheduling, PFC and ECN; the NIC's VLAN tag, PFC,
 * receive buffer and DCQCN; the priority map, the monitor and link faults
 * (docs/config.md, "The fabric"). Each group of keys is listed here so the
 * mapping that holds them can accept them alongside its own.
 */
#ifndef SIM_CONFIG_FABRIC_H
#define SIM_CONFIG_FABRIC_H

#include "config/loader.h"

/* keys of a switch or of switch_defaults */
#define SIM_SWITCH_FABRIC_KEYS "shared_buffer", "alpha", "reserved", "scheduler", "pfc", "ecn"
#define SIM_NSWITCH_FABRIC_KEYS 6
/* keys of nic */
#define SIM_NIC_FABRIC_KEYS "vlan", "pfc", "rx_rate", "rx_buffer", "dcqcn"
#define SIM_NNIC_FABRIC_KEYS 5
/* top-level keys */
#define SIM_TOP_FABRIC_KEYS "qos", "monitor", "faults"
#define SIM_NTOP_FABRIC_KEYS 3

/* v holds the values of the keys above, NULL where absent. */
bool sim__switch_fabric(struct loader *L, struct fy_node **v, struct cfg_switch *s);
/* A switch with any of its own fabric keys gets a parameter set of its
 * own, starting from switch_defaults; sets *swp to its index. */
bool sim__switch_fabric_own(struct loader *L, struct fy_node **v, uint32_t *swp);
bool sim__nic_fabric(struct loader *L, struct fy_node **v, struct cfg_nic_fabric *n);
/* After the topology: the top-level keys, and checks that need the links
 * (buffers that hold their ports' headroom). */
bool sim__top_fabric(struct loader *L, struct fy_node **v);
bool sim__check_fabric(struct loader *L);

#endif
