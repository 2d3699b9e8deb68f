/* hpcc.c - HPCC (Li et al., "HPCC: High Precision Congestion Control",
 * SIGCOMM 2019, algorithm 1) per queue pair, with the in-band telemetry
 * switches add (fabric/telemetry.c) carried in an IOAM trace (codec/ioam.c).
 *
 *   requester  each request carries an empty trace of `hops` slots
 *              (namespace RDMA_IOAM_NS_HPCC); every switch fills one as
 *              the request leaves it
 *   responder  acknowledges every request (as HPCC's ns-3 does) and copies
 *              the trace of the request it acknowledges into the ACK
 *              (namespace RDMA_IOAM_NS_HPCC_ECHO: switches leave it be)
 *   requester  per ACK, with L the telemetry of the last ACK and T the
 *              base RTT:
 *     u_i = min(q_i, L.q_i) / (B_i T) + txRate_i / B_i,
 *           txRate_i = (tx_i - L.tx_i) / (ts_i - L.ts_i)
 *     u, tau = the largest u_i and its ts_i - L.ts_i;  tau = min(tau, T)
 *     U = (1 - tau/T) U + tau/T u
 *     W = Wc / (U / eta) + W_AI   if U >= eta or incStage >= maxStage
 *       = Wc + W_AI               otherwise
 *     only an ACK past lastUpdateSeq (one per round trip) keeps W as the
 *     reference window Wc (incStage back to 0, or one more), and sets
 *     lastUpdateSeq to snd_nxt; the others react to it without keeping it
 *     R = W / T, between min_rate and line rate; L = this ACK's telemetry.
 * The NIC paces the queue pair at R, as under the other algorithms, and
 * holds its bytes in flight under W (section 3.2: HPCC is window-based,
 * pacing smooths the window's bursts; HPCC's ns-3 does both, rdma-hw.cc
 * IsWinBound): a request waits while the PSNs in flight, at one MTU
 * each, come to W or more; with none in flight one goes, however small W.
 *
 * The trace holds, per hop (fabric/telemetry.c): the time in ns, the
 * octets the egress port has sent, the octets queued there, and its rate
 * in Mb/s. The hops of the last ACK are kept by position, as HPCC's ns-3
 * keeps them (rdma-hw.cc, UpdateRateHp); a path of a different length
 * starts over from this ACK.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/nic.h"

#define NS_PER_S UINT64_C(1000000000)
#define MBPS 1e6
#define HPCC_FLOWS 16 /* N in the default W_AI */

/* the fields HPCC needs (fabric/telemetry.c writes them) */
#define TRACE_TYPE                                                                                   \
    (RDMA_IOAM_BIT(0) | RDMA_IOAM_BIT(2) | RDMA_IOAM_BIT(3) | RDMA_IOAM_BIT(5) | RDMA_IOAM_BIT(6) |  \
     RDMA_IOAM_BIT(10))

struct hop {
    uint64_t ns, tx, q, mbps;
};

struct sim_hpcc {
    sim_time_t t;          /* the base RTT */
    double w_init, w_ai, w_min; /* bytes */
    double u, wc;
    double w; /* the window in force */
    uint32_t stage, last_update_psn;
    bool started;
    uint8_t nhops;
    struct hop hop[RDMA_IOAM_MAX_NODES]; /* L */
    /* responder: the telemetry of the last request, for its ACK */
    uint8_t echo_n;
    struct rdma_ioam_node echo[RDMA_IOAM_MAX_NODES];
};

void sim__hpcc_init(struct sim_qp *qp, sim_time_t base_rtt)
{
    const struct cfg_hpcc *p = &qp->p->fab.hpcc;
    struct sim_hpcc *h = sim__xcalloc(1, sizeof *h);
    double t = (double)base_rtt / SIM_S, line = (double)qp->nic->port->p.rate;
    /* W_AI: so that N = 16 flows' increases together fit in the headroom
     * 1 - eta leaves (section 3.3), unless rai sets it */
    double rai = p->rai ? (double)p->rai : (1 - p->eta) * line / HPCC_FLOWS;
    h->t = base_rtt;
    h->w_init = line * t / 8;
    h->w_ai = rai * t / 8;
    h->w_min = (double)p->min_rate * t / 8;
    h->wc = h->w = h->w_init;
    qp->cc->hpcc = h;
}

void sim__hpcc_free(struct sim_qp *qp)
{
    if (qp->cc)
        free(qp->cc->hpcc);
}

void sim__hpcc_collect(struct sim_qp *qp, const struct rdma_ioam *t)
{
    struct sim_hpcc *h = qp->cc->hpcc;
    if (t->ns != RDMA_IOAM_NS_HPCC || !t->nodes_decoded || t->trace_type != TRACE_TYPE)
        return;
    h->echo_n = t->nnodes;
    for (unsigned i = 0; i < t->nnodes; i++)
        rdma_ioam_node_get(t, i, &h->echo[i]);
}

void sim__hpcc_trace(const struct sim_qp *qp, struct rdma_pkt *pkt)
{
    const struct sim_hpcc *h = qp->cc->hpcc;
    struct rdma_ioam *t = &pkt->ioam;
    if (pkt->op->flags & RDMA_OPF_REQUEST) {
        t->ns = RDMA_IOAM_NS_HPCC;
        t->slots = (uint8_t)qp->p->fab.hpcc.hops;
        t->nnodes = 0;
    } else if (pkt->op->flags & RDMA_OPF_ACK) {
        t->ns = RDMA_IOAM_NS_HPCC_ECHO;
        t->slots = t->nnodes = h->echo_n;
        t->node = h->echo;
    } else {
        return; /* READ responses are not governed */
    }
    t->present = true;
    t->trace_type = TRACE_TYPE;
}

/* Algorithm 1, ComputeWind. */
static double window(struct sim_hpcc *h, const struct cfg_hpcc *p, bool keep)
{
    double w;
    if (h->u >= p->eta || h->stage >= p->max_stage) {
        w = h->u > 0 ? h->wc / (h->u / p->eta) + h->w_ai : h->w_init;
        if (keep)
            h->stage = 0;
    } else {
        w = h->wc + h->w_ai;
        if (keep)
            h->stage++;
    }
    if (w > h->w_init)
        w = h->w_init;
    if (w < h->w_min)
        w = h->w_min;
    if (keep)
        h->wc = w;
    return w;
}

void sim__hpcc_ack(struct sim_qp *qp, uint32_t psn, const struct rdma_ioam *t)
{
    struct sim_dcqcn *cc = qp->cc;
    struct sim_hpcc *h = cc->hpcc;
    const struct cfg_hpcc *p = &qp->p->fab.hpcc;
    if (t->ns != RDMA_IOAM_NS_HPCC_ECHO || !t->nodes_decoded || t->trace_type != TRACE_TYPE)
        return;
    struct hop now[RDMA_IOAM_MAX_NODES];
    /* the first hop's data is last on the wire */
    for (unsigned i = 0; i < t->nnodes; i++) {
        struct rdma_ioam_node n;
        rdma_ioam_node_get(t, t->nnodes - 1u - i, &n);
        const uint64_t *v = n.v;
        now[i] = (struct hop){v[RDMA_IOAM_ts_sec] * NS_PER_S + v[RDMA_IOAM_ts_frac], v[RDMA_IOAM_ns_data_wide],
                              v[RDMA_IOAM_queue_depth], v[RDMA_IOAM_ns_data]};
    }
    uint32_t ack = sim__psn_add(psn, 1);
    if (!h->started || h->nhops != t->nnodes) {
        h->started = true;
        h->last_update_psn = qp->max_psn;
    } else {
        /* MeasureInflight */
        double t_s = (double)h->t / SIM_S, umax = 0, tau = 0;
        bool any = false;
        for (unsigned i = 0; i < t->nnodes; i++) {
            const struct hop *a = &now[i], *b = &h->hop[i];
            if (a->ns <= b->ns || !a->mbps)
                continue; /* no time has passed at this hop */
            double dt = (double)(a->ns - b->ns) / NS_PER_S, bps = (double)a->mbps * MBPS;
            double tx = (double)(a->tx - b->tx) * 8 / dt;
            double u = (double)(a->q < b->q ? a->q : b->q) * 8 / (bps * t_s) + tx / bps;
            if (!any || u > umax) {
                umax = u;
                tau = dt;
            }
            any = true;
        }
        if (any) {
            if (tau > t_s)
                tau = t_s;
            h->u = (1 - tau / t_s) * h->u + tau / t_s * umax;
            bool keep = sim__psn_diff(ack, h->last_update_psn) > 0;
            double w = h->w = window(h, p, keep);
            if (keep)
                h->last_update_psn = qp->max_psn;
            double line = (double)qp->nic->port->p.rate;
            cc->rc = w * 8 / t_s;
            if (cc->rc > line)
                cc->rc = line;
            cc->cuts += cc->rc < cc->rt;
            cc->rt = cc->rc;
            cc->limited = cc->rc < line;
        }
    }
    h->nhops = t->nnodes;
    memcpy(h->hop, now, t->nnodes * sizeof *now);
}

bool sim__hpcc_window_full(const struct sim_qp *qp)
{
    uint32_t in_flight = (qp->next_psn - qp->una_psn) & 0xffffff;
    return in_flight && (double)in_flight * qp->mtu >= qp->cc->hpcc->w;
}
