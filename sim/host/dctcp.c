/* dctcp.c - DCTCP's congestion control (Alizadeh et al., "Data Center
 * TCP", SIGCOMM 2010; RFC 8257) applied to a RoCE queue pair the way
 * HPCC's ns-3 simulator does (alibaba-edu/High-Precision-Congestion-Control,
 * rdma-hw.cc, HandleAckDctcp): a rate instead of a window.
 *
 * The responder acknowledges every packet and sets BECN in the BTH of an
 * ACK when a request arrived CE-marked since its last ACK (the BTH byte
 * that holds BECN is masked by the ICRC, as for CNPs). The requester,
 * per ACK of PSN p (ack = p + 1), with snd_nxt the PSN after the highest
 * sent:
 *   - counts the echoes; when ack passes the PSN that ended the last round
 *     trip, alpha = (1 - g) alpha + g F, F = echoes / packets that round
 *     trip covered, and a new round trip ends at snd_nxt;
 *   - on an echo outside congestion window reduced (CWR) state, cuts its
 *     rate R = max(min_rate, R (1 - alpha / 2)) and stays in CWR until
 *     ack passes snd_nxt of the cut: at most one cut per round trip;
 *   - outside CWR, at the start of each round trip, R = min(line, R + rai).
 * The NIC paces the queue pair at R as it does under DCQCN.
 *
 * An echo reaches the sender of requests (WRITE, SEND): READ responses,
 * data the responder sends, are not governed.
 */
#include "host/nic.h"

static uint32_t packets(uint32_t from, uint32_t to)
{
    int32_t d = sim__psn_diff(to, from);
    return d > 0 ? (uint32_t)d + 1 : 1;
}

void sim__dctcp_ack(struct sim_qp *qp, uint32_t psn, bool echo)
{
    struct sim_dcqcn *cc = qp->cc;
    const struct cfg_dctcp *d = &qp->p->fab.dctcp;
    double line = (double)qp->nic->port->p.rate;
    uint32_t ack = sim__psn_add(psn, 1), snd_nxt = qp->max_psn;
    bool new_round = false;
    cc->ecn_acks += echo;
    if (!cc->started) {
        cc->started = true;
        new_round = true;
        cc->update_psn = snd_nxt;
        cc->batch = packets(ack, snd_nxt);
    } else if (sim__psn_diff(ack, cc->update_psn) > 0) {
        new_round = true;
        double frac = (double)cc->ecn_acks / cc->batch;
        if (frac > 1)
            frac = 1;
        cc->alpha = (1 - d->g) * cc->alpha + d->g * frac;
        cc->update_psn = snd_nxt;
        cc->ecn_acks = 0;
        cc->batch = packets(ack, snd_nxt);
    }
    if (cc->cwr && sim__psn_diff(ack, cc->cwr_psn) > 0)
        cc->cwr = false;
    if (echo && !cc->cwr) {
        cc->rc *= 1 - cc->alpha / 2;
        if (cc->rc < (double)d->min_rate)
            cc->rc = (double)d->min_rate;
        cc->cwr = true;
        cc->cwr_psn = snd_nxt;
        cc->cuts++;
    } else if (!cc->cwr && new_round) {
        cc->rc += (double)d->rai;
        if (cc->rc > line)
            cc->rc = line;
    }
    cc->rt = cc->rc;
    cc->limited = cc->rc < line;
}
