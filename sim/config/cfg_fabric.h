/* cfg_fabric.h - the checked configuration of the lossless fabric: switch
 * buffers, scheduling, PFC and ECN, the NIC's side of PFC and DCQCN, the
 * fabric-wide priority map, link faults and what the monitor samples
 * (docs/config.md, "The fabric").
 *
 * Every field holds a final value: defaults and "auto" settings that
 * depend on a port's link (PFC headroom, ECN thresholds) are marked here
 * and resolved when the network is built.
 */
#ifndef SIM_CFG_FABRIC_H
#define SIM_CFG_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

#define SIM_PRIOS 8 /* 802.1Q priorities, one traffic class each */

/* Where a value came from, for checks made once the whole network is known. */
struct cfg_pos {
    const char *file;
    int line, col;
};

/* ECN marking (RED on the instantaneous queue of a class). A threshold of
 * 0 means "scaled with the port's rate" (sim__ecn_resolve). */
struct cfg_ecn {
    uint64_t rate; /* in a per-rate entry: the port speed it applies to */
    uint64_t kmin, kmax;
    double pmax;
    struct cfg_pos kmin_pos, kmax_pos; /* of values set in the file */
};
#define CFG_ECN_RATES 8

struct cfg_switch {
    uint64_t shared_buffer; /* bytes; 0: each port has `buffer` bytes of its own */
    double alpha;           /* dynamic threshold: a queue may use alpha x free pool */
    uint64_t reserved;      /* guaranteed bytes of each (port, priority) at ingress */
    uint8_t strict;         /* bit c: class c is scheduled by strict priority */
    uint8_t weights[SIM_PRIOS]; /* DWRR weights of the other classes */
    /* PFC */
    uint8_t lossless;  /* bit p: priority p is paused instead of dropped; 0: PFC off */
    uint64_t xoff;     /* static XOFF threshold of a priority group's shared use; 0: dynamic */
    uint64_t xon;      /* resume when the shared use is this far below XOFF; 0: one frame */
    uint64_t headroom; /* per (port, lossless priority); 0: from the link */
    uint16_t quanta;   /* pause time sent, in 512-bit-time quanta */
    sim_time_t refresh;  /* XOFF sent again this often; 0: at half the pause time */
    sim_time_t watchdog; /* a class paused this long with frames waiting drops them; 0: off */
    /* ECN */
    /* forwarding: a frame may leave `latency` after its header arrived
     * (cut-through), or after it arrived whole (store and forward) */
    sim_time_t latency;
    bool latency_set; /* given in the file: an InfiniBand fabric keeps it */
    bool cut_through;
    bool ecn;
    bool ecn_enqueue; /* mark as a frame joins its queue; false: as it leaves (the default) */
    struct cfg_ecn ecn_all;
    struct cfg_ecn ecn_rates[CFG_ECN_RATES];
    uint32_t necn_rates;
};

/* DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015). */
struct cfg_dcqcn {
    bool enable;
    double g;                 /* alpha gain */
    sim_time_t cnp_interval;  /* notification point: one CNP per QP per interval */
    sim_time_t timer;         /* reaction point: rate increase timer */
    sim_time_t alpha_timer;   /* alpha decays when no CNP came for this long */
    uint64_t byte_counter;    /* a rate increase every this many bytes sent */
    uint32_t f;               /* fast recovery steps */
    uint64_t rai, rhai;       /* additive and hyper increase, bits per second */
    uint64_t min_rate;
    struct cfg_pos min_rate_pos; /* when set in the file */
    bool clamp_target;        /* RT = RC on every CNP (the paper) */
    uint8_t cnp_dscp;
};

/* DCTCP's rule applied to RoCE, as HPCC's ns-3 simulator does it
 * (rdma-hw.cc, HandleAckDctcp): the responder echoes CE in the ACKs, the
 * requester estimates the fraction marked once per round trip. */
struct cfg_dctcp {
    double g;          /* alpha gain (DCTCP: 1/16) */
    uint64_t rai;      /* additive increase per round trip without marks */
    uint64_t min_rate;
    struct cfg_pos min_rate_pos; /* when set in the file */
};

/* TIMELY (Mittal et al., SIGCOMM 2015): the rate from round-trip times
 * and their gradient. */
struct cfg_timely {
    double alpha;            /* EWMA weight of the RTT difference */
    double beta;             /* multiplicative decrease factor */
    sim_time_t t_low, t_high; /* RTT thresholds */
    sim_time_t min_rtt;      /* normalizes the gradient */
    uint64_t rai;            /* additive increase (delta); 0: 0.1% of the link rate */
    uint64_t min_rate;
    struct cfg_pos min_rate_pos; /* when set in the file */
};

/* HPCC (Li et al., SIGCOMM 2019): a window from the in-band telemetry of
 * the most loaded hop, paced at window / base RTT. */
struct cfg_hpcc {
    double eta;          /* target utilization */
    uint32_t max_stage;  /* additive increases before a multiplicative step */
    uint64_t rai;        /* W_AI as a rate: W_AI = rai x base_rtt; 0: from the link rate */
    sim_time_t base_rtt; /* T; 0: the largest base RTT of the network's queue pairs */
    uint32_t hops;       /* telemetry slots a request carries */
    uint64_t min_rate;
    struct cfg_pos min_rate_pos; /* when set in the file */
};

/* The congestion control a NIC runs (nic.cc). */
enum cfg_cc { CFG_CC_DCQCN, CFG_CC_DCTCP, CFG_CC_NONE, CFG_CC_TIMELY, CFG_CC_HPCC,
              CFG_CC_IBCC /* set for InfiniBand hosts when infiniband.cc is enabled */ };

struct cfg_nic_fabric {
    uint8_t cc;         /* enum cfg_cc */
    bool vlan;          /* 802.1Q priority tag (VID 0) with the PCP of the frame's DSCP */
    bool pfc;           /* honour PFC, and send it when the receive buffer fills */
    uint64_t rx_rate;   /* bits/s the NIC takes frames in at; 0: as they arrive */
    uint64_t rx_buffer; /* bytes */
    struct cfg_dcqcn dcqcn;
    struct cfg_dctcp dctcp;
    struct cfg_timely timely;
    struct cfg_hpcc hpcc;
};

struct cfg_fault {
    uint32_t link;
    sim_time_t down, up; /* up: SIM_TIME_NEVER if the link stays down */
};

struct cfg_fabric {
    bool trust_pcp;           /* classify by the 802.1Q PCP instead of the DSCP */
    uint8_t dscp_map[64];     /* DSCP -> priority */
    sim_time_t sample;        /* qlen.csv and rates.csv interval; 0: off */
    sim_time_t deadlock_check; /* 0: off */
    /* switch parameter sets; cfg_node.swp indexes them, 0 is switch_defaults */
    struct cfg_switch *sw;
    size_t nsw, capsw;
    struct cfg_fault *faults;
    size_t nfaults, capfaults;
};

void sim__cfg_switch_defaults(struct cfg_switch *s);
void sim__cfg_nic_fabric_defaults(struct cfg_nic_fabric *n);
void sim__cfg_fabric_init(struct cfg_fabric *f);
void sim__cfg_fabric_free(struct cfg_fabric *f);

/* The priority of a DSCP under the fabric's map. */
static inline unsigned sim__dscp_prio(const struct cfg_fabric *f, unsigned dscp)
{
    return f->dscp_map[dscp & 63];
}

#endif
