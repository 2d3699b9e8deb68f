/* cfg_ib.h - the checked configuration of a native InfiniBand fabric
 * (topology.fabric: infiniband; docs/config.md, "InfiniBand"): virtual
 * lanes, credit-based link-level flow control, VL arbitration, the subnet
 * manager's choices and IB congestion control.
 *
 * The numbers follow the InfiniBand Architecture Specification, volume 1,
 * release 1.4: flow control in 7.9, VL arbitration in 7.6.9, LIDs and LMC
 * in 4.1 and 7.11, congestion control in annex A10.
 */
#ifndef SIM_CFG_IB_H
#define SIM_CFG_IB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define CFG_IB_MAX_VLS 8       /* data VLs modelled (VL0..VL7; VL15 carries only management) */
#define CFG_IB_SLS 16          /* service levels */
#define CFG_IB_VLARB_ENTRIES 64 /* entries of each VL arbitration table (7.6.9.1) */
#define CFG_IB_BLOCK 64        /* flow control counts buffer in blocks of 64 bytes (7.9.4) */
/* The largest LID a unicast destination may have (4.1.3: 0x0001-0xBFFF). */
#define CFG_IB_MAX_UNICAST_LID 0xbfff
/* An InfiniBand switch's port-to-port latency unless set: NVIDIA Quantum
 * QM8700-series (HDR) datasheet, 130 ns. */
#define CFG_IB_SWITCH_LATENCY (130 * SIM_NS)

struct cfg_vlarb_entry {
    uint8_t vl, weight; /* weight in units of 64 bytes; 0: the entry is skipped */
};

struct cfg_vlarb {
    struct cfg_vlarb_entry high[CFG_IB_VLARB_ENTRIES], low[CFG_IB_VLARB_ENTRIES];
    uint8_t nhigh, nlow;
    /* LimitOfHighPriority: 4096-byte units of high-priority packets that may
     * go while a low-priority one waits; 255: no limit (7.6.9.2) */
    uint8_t high_limit;
};

/* IB congestion control (annex A10): switches mark FECN on a VL queue above
 * the threshold, the destination returns a CNP with BECN, the source raises
 * its congestion control table index (CCTI) and waits the table's
 * inter-packet delay between packets; a timer lowers the index again. */
struct cfg_ibcc {
    bool enable;
    uint64_t threshold;      /* bytes queued on an egress VL above which packets are marked */
    uint32_t marking_rate;   /* packets passed unmarked between two marks (A10.2.1.1) */
    uint32_t ccti_increase;  /* added to the CCTI on each BECN */
    uint32_t ccti_limit;     /* the highest CCTI (the table has ccti_limit + 1 entries) */
    sim_time_t ccti_timer;   /* the CCTI falls by one this often */
    double ipd_step;         /* table entry i holds an inter-packet delay of i x ipd_step packet times */
};

struct cfg_ib {
    bool enable;     /* topology.fabric: infiniband */
    uint8_t vls;     /* operational data VLs: 1, 2, 4 or 8 */
    uint8_t sl2vl[CFG_IB_SLS];
    uint64_t vl_buffer;     /* receive buffer per VL at every port, bytes; 0: enough for the link */
    uint32_t credit_update; /* blocks freed before a port sends its credit limit again */
    sim_time_t fc_period;   /* flow control packets at least this often per VL; 0: 65,536 symbol times */
    uint8_t lmc;            /* LID mask control: 2^lmc LIDs per HCA port */
    bool trace_flow_control; /* flow control packets in the traces */
    struct cfg_vlarb vlarb;
    struct cfg_ibcc cc;
};

void sim__cfg_ib_defaults(struct cfg_ib *ib);
/* The IB name of a rate ("4xEDR"), or NULL when it is not one. */
const char *sim__ib_rate_name(uint64_t bps, uint8_t lanes, char *buf, size_t cap);

#endif
