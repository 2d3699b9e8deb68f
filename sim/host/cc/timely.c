/* timely.c - TIMELY congestion control (Mittal et al., "TIMELY: RTT-based
 * Congestion Control for the Datacenter", SIGCOMM 2015, algorithm 1), per
 * queue pair, as HPCC's ns-3 simulator runs it over RoCE (rdma-hw.cc,
 * HandleAckTimely): the responder acknowledges every packet, the requester
 * takes the time from sending a request to its ACK as the RTT sample.
 *
 * Once per round trip (an ACK past the PSN sent last at the previous
 * update), with the new RTT r:
 *   diff     = (1 - alpha) diff + alpha (r - r_prev)
 *   gradient = diff / min_rtt
 *   r < T_low:          R += delta
 *   r > T_high:         R *= 1 - beta (1 - T_high / r)
 *   gradient <= 0:      R += N delta, N = 5 after five such round trips
 *                       in a row (hyperactive increase), else 1
 *   otherwise:          R *= 1 - beta gradient
 * No update cuts R below half of what it was: the authors' published code
 * (Mittal, timely-code-snippet.cc: "decrease in rate capped by 0.5 times
 * the old rate") bounds the cut the printed algorithm leaves unbounded;
 * without it a gradient above 1 / beta asks for a rate below zero, and a
 * sender at min_rate climbs back by delta per round trip. HPCC's ns-3
 * clamps that cut to min_rate instead. R stays between min_rate and line
 * rate; the NIC paces the queue pair at R. Nothing travels on the wire
 * for it beyond the ACKs themselves.
 *
 * delta defaults to 0.1% of the line rate: the paper's 10 Mb/s at 10 Gb/s
 * (the authors' code: "10Mbps for 10Gbps line rate"), 100 Mb/s at 100 Gb/s
 * as HPCC's ns-3 run.py sets it (RATE_AI 10 x bw/10 Mb/s). A fixed 10 Mb/s
 * at 100 Gb/s leaves a link a flow has left idle for tens of milliseconds:
 * below T_low a sender climbs by delta per round trip.
 */
#include "engine/util.h"
#include "host/nic.h"

void sim__timely_sent(struct sim_qp *qp, uint32_t psn)
{
    /* only queue pairs that send requests keep send times */
    if (!qp->cc->sent)
        qp->cc->sent = sim__xcalloc(SIM_TIMELY_RING, sizeof *qp->cc->sent);
    struct sim_timely_sent *s = &qp->cc->sent[psn & (SIM_TIMELY_RING - 1)];
    s->psn = psn;
    s->at = sim__qp_now(qp);
}

void sim__timely_ack(struct sim_qp *qp, uint32_t psn)
{
    struct sim_dcqcn *cc = qp->cc;
    const struct cfg_timely *t = &qp->p->fab.timely;
    if (!cc->sent)
        return;
    const struct sim_timely_sent *s = &cc->sent[psn & (SIM_TIMELY_RING - 1)];
    if (s->psn != psn || !s->at)
        return; /* sent too long ago to be remembered */
    sim_time_t now = sim__qp_now(qp), rtt = now - s->at;
    uint32_t ack = sim__psn_add(psn, 1);
    if (!cc->started) {
        cc->started = true;
        cc->last_rtt = rtt;
        cc->update_psn = qp->max_psn;
        return;
    }
    if (sim__psn_diff(ack, cc->update_psn) <= 0)
        return;
    cc->update_psn = qp->max_psn;
    double line = (double)qp->nic->port->p.rate;
    double new_diff = (double)rtt - (double)cc->last_rtt;
    cc->last_rtt = rtt;
    cc->rtt_diff = (1 - t->alpha) * cc->rtt_diff + t->alpha * new_diff;
    double gradient = cc->rtt_diff / (double)t->min_rtt;
    double delta = t->rai ? (double)t->rai : line / 1000, before = cc->rc;
    if (rtt < t->t_low) {
        cc->rc += delta;
        cc->stage = 0;
    } else if (rtt > t->t_high) {
        cc->rc *= 1 - t->beta * (1 - (double)t->t_high / (double)rtt);
        cc->stage = 0;
        cc->cuts++;
    } else if (gradient <= 0) {
        cc->stage++;
        cc->rc += (cc->stage >= 5 ? 5 : 1) * delta;
    } else {
        cc->rc *= 1 - t->beta * gradient;
        cc->stage = 0;
        cc->cuts++;
    }
    if (cc->rc < before / 2)
        cc->rc = before / 2;
    if (cc->rc < (double)t->min_rate)
        cc->rc = (double)t->min_rate;
    if (cc->rc > line)
        cc->rc = line;
    cc->rt = cc->rc;
    cc->limited = cc->rc < line;
}
