/* tcp_cc.c - a TCP endpoint's congestion window (RFC 5681), with the
 * rules of the algorithm its NIC runs (nic.tcp.cc): NewReno here, CUBIC in
 * cubic.c, DCTCP's ECN reaction in tcp_dctcp.c (which otherwise grows and
 * halves as NewReno does, RFC 8257 3.3).
 *
 *   initial window  nic.tcp.init_cwnd segments (RFC 6928)
 *   slow start      cwnd += min(acked, 2 SMSS) per ACK (RFC 3465 2.2, L = 2)
 *   avoidance       cwnd += SMSS once per cwnd octets acknowledged (RFC 3465
 *                   2.1, appropriate byte counting: delayed ACKs do not
 *                   slow the growth to half a segment per round trip)
 *   loss            ssthresh = max(FlightSize / 2, 2 SMSS) (RFC 5681 eq. 4),
 *                   cwnd = ssthresh on entering recovery (RFC 6675 5)
 *   timeout         the same ssthresh, cwnd = 1 SMSS (RFC 5681 3.1)
 */
#include "host/nic.h"
#include "host/tcp/tcp.h"

#define MAX_CWND (UINT32_C(1) << 30)

void sim__tcp_cc_init(struct sim_tcp *t)
{
    uint64_t w = (uint64_t)t->p->init_cwnd * t->mss;
    t->cc.cwnd = w > MAX_CWND ? MAX_CWND : (uint32_t)w;
    t->cc.ssthresh = MAX_CWND;
    t->cc.acked_ca = 0;
    t->cc.epoch = SIM_TIME_NEVER;
}

void sim__tcp_cc_ack(struct sim_tcp *t, uint32_t acked)
{
    struct sim_tcp_cc *c = &t->cc;
    if (c->cwnd < c->ssthresh) {
        uint32_t add = acked < 2 * t->mss ? acked : 2 * t->mss;
        c->cwnd = c->cwnd + add > MAX_CWND ? MAX_CWND : c->cwnd + add;
        return;
    }
    if (t->p->cc == CFG_TCP_CC_CUBIC) {
        sim__cubic_ack(t, acked);
        return;
    }
    c->acked_ca += acked;
    if (c->acked_ca >= c->cwnd) {
        c->acked_ca -= c->cwnd;
        if (c->cwnd + t->mss <= MAX_CWND)
            c->cwnd += t->mss;
    }
}

static uint32_t half_flight(const struct sim_tcp *t)
{
    uint32_t h = sim__tcp_flight(t) / 2;
    return h > 2 * t->mss ? h : 2 * t->mss;
}

void sim__tcp_cc_loss(struct sim_tcp *t)
{
    if (t->p->cc == CFG_TCP_CC_CUBIC)
        sim__cubic_loss(t);
    else
        t->cc.ssthresh = half_flight(t);
    t->cc.cwnd = t->cc.ssthresh;
    t->cc.acked_ca = 0;
}

void sim__tcp_cc_rto(struct sim_tcp *t)
{
    if (t->p->cc == CFG_TCP_CC_CUBIC)
        sim__cubic_loss(t);
    else
        t->cc.ssthresh = half_flight(t);
    t->cc.cwnd = t->mss;
    t->cc.acked_ca = 0;
}
