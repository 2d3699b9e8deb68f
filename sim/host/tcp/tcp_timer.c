/* tcp_timer.c - a TCP endpoint's timers: the retransmission timer (RFC
 * 6298) and the delayed ACK (RFC 5681 4.2).
 *
 * RTO (RFC 6298 2): the first sample R gives SRTT = R, RTTVAR = R/2; each
 * later one RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R;
 * RTO = SRTT + 4 RTTVAR (the clock is exact: no granularity term), at
 * least nic.tcp.min_rto (2.4) and at most max_rto (2.5). Before any
 * sample it is initial_rto (2.1). Each expiry doubles it (5.5, the
 * backoff) until an ACK of new data; after `retries` expiries in a row the
 * connection fails.
 *
 * On expiry with data in flight (5.4, and RFC 5681 3.1 eq. 4, RFC 6675
 * 5.1): every record not SACKed is deemed lost, cwnd falls to one segment,
 * ssthresh to half the flight, and the records go again from the oldest
 * as the window reopens. RecoveryPoint moves to the highest octet sent so
 * that duplicate ACKs of the old window start no fast retransmit (RFC
 * 6582 4.1).
 */
#include "host/nic.h"
#include "host/tcp/tcp.h"

static struct sim_tcp_rec *rec_at(struct sim_tcp *t, uint32_t i)
{
    return &t->rec[i & (t->rec_cap - 1)];
}

void sim__tcp_rtt_sample(struct sim_tcp *t, sim_time_t r)
{
    if (!t->rtt_valid) {
        t->srtt = r;
        t->rttvar = r / 2;
        t->rtt_valid = true;
    } else {
        sim_time_t diff = t->srtt > r ? t->srtt - r : r - t->srtt;
        t->rttvar = (3 * t->rttvar + diff) / 4;
        t->srtt = (7 * t->srtt + r) / 8;
    }
    sim_time_t rto = t->srtt + 4 * t->rttvar;
    if (rto < t->p->min_rto)
        rto = t->p->min_rto;
    if (rto > t->p->max_rto)
        rto = t->p->max_rto;
    t->rto = rto;
}

void sim__tcp_arm_rto(struct sim_tcp *t)
{
    struct sim_host *h = sim__host_of(t->qp);
    sim_time_t rto = t->rto;
    for (uint32_t i = 0; i < t->backoff && rto < t->p->max_rto; i++)
        rto *= 2;
    if (rto > t->p->max_rto)
        rto = t->p->max_rto;
    t->rto_at = sim__tcp_now(t) + rto;
    sim_timer_arm(&t->rto_timer, h->node.comp.sim, t->rto_at, &h->node.comp, SIM_HOST_TCP_RTO, t);
}

static void expire(struct sim_tcp *t)
{
    t->st.rto_events++;
    t->qp->st.timeouts++;
    if (++t->backoff > t->p->retries) {
        t->state = SIM_TCP_FAILED;
        t->ulp->failed(t->qp);
        return;
    }
    if (t->state == SIM_TCP_SYN_SENT || t->state == SIM_TCP_SYN_RCVD) {
        t->syn_due = true; /* RFC 6298 5.7 does not apply: no sample yet */
    } else {
        sim__tcp_cc_rto(t);
        for (uint32_t i = t->rec_head; i != t->rec_tail; i++) {
            struct sim_tcp_rec *r = rec_at(t, i);
            if (r->flags & SIM_TCP_SACKED)
                continue;
            if (r->flags & SIM_TCP_REXMIT) {
                r->flags &= (uint8_t)~SIM_TCP_REXMIT;
                t->rexmit_b -= r->len;
            }
            if (!(r->flags & SIM_TCP_LOST)) {
                r->flags |= SIM_TCP_LOST;
                t->lost_b += r->len;
            }
        }
        t->lost_hint = t->rec_head;
        if (t->fin_sent && sim__seq_le(t->snd_una, t->fin_seq))
            t->fin_due = true; /* after the records, the FIN again */
        t->in_recovery = false;
        t->recover = t->snd_max;
        t->dupacks = 0;
        t->reno_sacked_b = 0;
        sim__tcp_arm_rto(t);
    }
    sim__tcp_kick(t);
}

void sim__tcp_rto_event(struct sim_tcp *t)
{
    struct sim_host *h = sim__host_of(t->qp);
    sim_time_t now = sim__tcp_now(t);
    if (!sim_timer_fire(&t->rto_timer, now) || t->rto_at == SIM_TIME_NEVER)
        return;
    if (now < t->rto_at) { /* the deadline moved on: wait for it */
        sim_timer_arm(&t->rto_timer, h->node.comp.sim, t->rto_at, &h->node.comp, SIM_HOST_TCP_RTO, t);
        return;
    }
    t->rto_at = SIM_TIME_NEVER;
    expire(t);
}

void sim__tcp_arm_delack(struct sim_tcp *t)
{
    struct sim_host *h = sim__host_of(t->qp);
    sim_timer_arm(&t->delack_timer, h->node.comp.sim, sim__tcp_now(t) + t->p->delayed_ack,
                  &h->node.comp, SIM_HOST_TCP_DELACK, t);
}

void sim__tcp_delack_event(struct sim_tcp *t)
{
    if (!sim_timer_fire(&t->delack_timer, sim__tcp_now(t)) || !t->unacked_segs)
        return;
    t->ack_now = true;
    sim__tcp_kick(t);
}
