/* cubic.c - CUBIC's window in congestion avoidance (RFC 9438).
 *
 * In segments and seconds, with C = 0.4 and beta_cubic = 0.7 (4.1):
 *   W_cubic(t) = C (t - K)^3 + W_max,   K = cbrt((W_max - cwnd_epoch) / C)  (4.2)
 * t counts from the first ACK after a reduction (the epoch); each ACK of
 * `acked` octets moves cwnd toward W_cubic(t + SRTT) by
 * (target - cwnd) / cwnd segments per segment acknowledged (4.4), unless
 * the Reno-friendly estimate W_est, growing by alpha_cubic = 3 (1 - beta)
 * / (1 + beta) segments per window (4.3), is above it. A loss sets W_max
 * (lowered further by fast convergence when it comes below the last one,
 * 4.7) and ssthresh = cwnd beta_cubic (4.6).
 */
#include <math.h>

#include "host/nic.h"
#include "host/tcp/tcp.h"

#define C_CUBIC 0.4
#define BETA_CUBIC 0.7

void sim__cubic_ack(struct sim_tcp *t, uint32_t acked)
{
    struct sim_tcp_cc *c = &t->cc;
    double mss = t->mss, cwnd = c->cwnd / mss, seg = acked / mss;
    sim_time_t now = sim__tcp_now(t);
    if (c->epoch == SIM_TIME_NEVER) {
        c->epoch = now;
        if (c->w_max < cwnd)
            c->w_max = cwnd; /* no reduction yet: the curve starts here */
        c->k = cbrt((c->w_max - cwnd) / C_CUBIC);
        c->w_est = cwnd;
    }
    double s = (double)(now - c->epoch + t->srtt) / (double)SIM_S - c->k;
    double target = C_CUBIC * s * s * s + c->w_max;
    if (target > 1.5 * cwnd)
        target = 1.5 * cwnd; /* 4.4: at most half a window more per round trip */
    c->w_est += 3 * (1 - BETA_CUBIC) / (1 + BETA_CUBIC) * seg / cwnd;
    double next = cwnd;
    if (c->w_est > target)
        next = c->w_est;
    else if (target > cwnd)
        next = cwnd + (target - cwnd) / cwnd * seg;
    double octets = next * mss;
    if (octets > (double)(UINT32_C(1) << 30))
        octets = (double)(UINT32_C(1) << 30);
    if (octets > c->cwnd)
        c->cwnd = (uint32_t)octets;
}

void sim__cubic_loss(struct sim_tcp *t)
{
    struct sim_tcp_cc *c = &t->cc;
    double cwnd = c->cwnd / (double)t->mss;
    /* 4.7: fast convergence */
    c->w_max = cwnd < c->w_max ? cwnd * (1 + BETA_CUBIC) / 2 : cwnd;
    double ss = cwnd * BETA_CUBIC * t->mss;
    c->ssthresh = ss < 2.0 * t->mss ? 2 * t->mss : (uint32_t)ss;
    c->epoch = SIM_TIME_NEVER;
}
