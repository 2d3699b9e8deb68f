/* cc.h - rate-based congestion control of a queue pair, one state for each
 * algorithm a NIC may run (nic.cc): DCQCN (Zhu et al., SIGCOMM 2015:
 * dcqcn.c, with the notification point that turns CE marks into CNPs),
 * DCTCP's rule applied to a queue pair's rate (dctcp.c), TIMELY (Mittal
 * et al., SIGCOMM 2015: timely.c), HPCC (Li et al., SIGCOMM 2019: hpcc.c)
 * and, on InfiniBand, IB CC (ibcc.c).
 */
#ifndef SIM_HOST_CC_H
#define SIM_HOST_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/timer.h"

/* ---- DCQCN (dcqcn.c) ------------------------------------------------------------------ */
struct sim_qp;
struct sim_dcqcn {
    bool dctcp;           /* DCTCP's rule (dctcp.c) instead of DCQCN's */
    bool timely;          /* TIMELY's (timely.c) */
    bool ibcc;            /* InfiniBand's (ibcc.c) */
    uint32_t ccti;        /* InfiniBand: the congestion control table index */
    double rc, rt, alpha; /* current and target rate (bits/s), alpha */
    uint64_t bytes;       /* sent since the last byte-counter step */
    uint32_t t, bc;       /* timer and byte-counter steps since the last cut */
    bool limited;         /* below line rate: timers run */
    sim_time_t rate_at, alpha_at; /* deadlines of the rate and alpha updates */
    struct sim_timer timer;       /* the earlier of the two */
    sim_time_t last_cnp;  /* notification point: last CNP sent, SIM_TIME_NEVER if none */
    uint64_t cuts;
    /* DCTCP: ACKs with the echo since the last alpha update, the packets
     * that update covers, the PSN that ends the round trip, and the
     * congestion window reduced state (one cut per round trip) */
    uint32_t ecn_acks, batch, update_psn, cwr_psn;
    bool started, cwr;
    /* TIMELY: when recent PSNs were sent, the smoothed RTT difference,
     * the last RTT, and round trips in a row without a decrease */
    struct sim_timely_sent *sent;
    double rtt_diff;
    sim_time_t last_rtt;
    uint32_t stage;
    struct sim_hpcc *hpcc; /* HPCC's state (hpcc.c), when it runs */
};
struct sim_timely_sent {
    uint32_t psn;
    sim_time_t at;
};
#define SIM_TIMELY_RING 1024 /* PSNs whose send times are kept */
/* TIMELY at the requester: request psn leaves now; an ACK of psn arrived. */
void sim__timely_sent(struct sim_qp *qp, uint32_t psn);
void sim__timely_ack(struct sim_qp *qp, uint32_t psn);
/* DCTCP at the requester: an acknowledgement of psn arrived, with the
 * congestion echo (BECN) or not. */
void sim__dctcp_ack(struct sim_qp *qp, uint32_t psn, bool echo);
/* InfiniBand CC (ibcc.c): a FECN-marked packet arrived for qp (the
 * destination's side); a BECN arrived (the source's); the CCTI timer. */
void sim__ibcc_fecn(struct sim_qp *qp);
void sim__ibcc_becn(struct sim_qp *qp);
void sim__ibcc_timer(struct sim_qp *qp, sim_time_t at);
/* HPCC (hpcc.c): set up with base RTT T; free; a request arrived with
 * a trace (the responder keeps it for the ACK); the frame being built
 * gets its trace (a request: room for the switches; an ACK: the echo);
 * an ACK of psn arrived with its echo (the requester). */
struct rdma_ioam;
struct rdma_pkt;
void sim__hpcc_init(struct sim_qp *qp, sim_time_t base_rtt);
void sim__hpcc_free(struct sim_qp *qp);
void sim__hpcc_collect(struct sim_qp *qp, const struct rdma_ioam *t);
void sim__hpcc_trace(const struct sim_qp *qp, struct rdma_pkt *pkt);
void sim__hpcc_ack(struct sim_qp *qp, uint32_t psn, const struct rdma_ioam *t);
/* Whether the queue pair's bytes in flight fill HPCC's window. */
bool sim__hpcc_window_full(const struct sim_qp *qp);
void sim__dcqcn_init(struct sim_qp *qp);
/* Notification point: a CE-marked packet arrived for qp. */
void sim__dcqcn_ce(struct sim_qp *qp);
/* Reaction point: a CNP arrived for qp. */
void sim__dcqcn_cnp(struct sim_qp *qp);
/* qp put a rate-limited frame of `wire` bytes on the wire: pacing and the
 * byte counter. */
void sim__dcqcn_sent(struct sim_qp *qp, uint64_t wire);
void sim__dcqcn_timer(struct sim_qp *qp, sim_time_t at);
double sim__dcqcn_rate(const struct sim_qp *qp);

#endif
