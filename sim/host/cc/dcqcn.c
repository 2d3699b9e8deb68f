/* dcqcn.c - DCQCN congestion control (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015, section 3), per queue pair.
 *
 * Notification point (the receiver): a packet arriving with CE set makes
 * the queue pair send a CNP to its peer, at most one per `cnp_interval`.
 *
 * Reaction point (the sender), with current rate RC and target rate RT:
 *   CNP:           RT = RC (with clamp_target, or when the timer or the
 *                  byte counter raised the rate since the last cut);
 *                  RC = RC (1 - alpha/2);
 *                  alpha = (1 - g) alpha + g;
 *                  the timer, the byte counter and their step counts restart
 *   alpha timer:   no CNP for `alpha_timer`: alpha = (1 - g) alpha
 *   rate increase, on each expiry of `timer` (step count T) and each
 *   `byte_counter` bytes sent (step count BC), then RC = (RT + RC) / 2:
 *       max(T, BC) < F      fast recovery   RT unchanged
 *       min(T, BC) < F      additive        RT += R_AI
 *       both >= F           hyper           RT += i R_HAI, i = min(T, BC) - F + 1
 * RC never goes below `min_rate` nor RT above line rate. A queue pair back
 * within 0.1% of line rate leaves the limiter (its rate timer stops) until
 * the next CNP. The NIC paces each limited queue pair at RC: after a frame
 * of w wire bytes, its next one waits w x 8 / RC.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "host/nic.h"

#define ALPHA_FLOOR 1e-6 /* below this the alpha timer stops: alpha is spent */

static const struct cfg_dcqcn *params(const struct sim_qp *qp) { return &qp->p->fab.dcqcn; }
static double line_rate(const struct sim_qp *qp) { return (double)qp->nic->port->p.rate; }

/* The paper's R_AI (40 Mb/s) and R_HAI (200 Mb/s) are for its 40 Gb/s
 * NICs; unset, they scale with the link as its ECN thresholds do
 * (fabric/ecn.c): 0.1% and 0.5% of line rate. HPCC's ns-3 `run.py`
 * scales its DCQCN's the same way (5 and 50 Mb/s per 25 Gb/s). */
static double additive(const struct sim_qp *qp)
{
    uint64_t rai = params(qp)->rai;
    return rai ? (double)rai : line_rate(qp) / 1000;
}

static double hyper(const struct sim_qp *qp)
{
    uint64_t rhai = params(qp)->rhai;
    return rhai ? (double)rhai : line_rate(qp) / 200;
}

void sim__dcqcn_init(struct sim_qp *qp)
{
    uint8_t kind = qp->p->fab.cc;
    if (kind == CFG_CC_NONE || (kind == CFG_CC_DCQCN && !params(qp)->enable))
        return;
    struct sim_dcqcn *cc = sim__xcalloc(1, sizeof *cc);
    cc->dctcp = kind == CFG_CC_DCTCP;
    cc->timely = kind == CFG_CC_TIMELY;
    cc->ibcc = kind == CFG_CC_IBCC;
    cc->rc = cc->rt = line_rate(qp);
    cc->alpha = 1;
    cc->rate_at = cc->alpha_at = SIM_TIME_NEVER;
    sim_timer_init(&cc->timer);
    cc->last_cnp = SIM_TIME_NEVER;
    qp->cc = cc;
    if (kind == CFG_CC_HPCC)
        sim__hpcc_init(qp, qp->hpcc_t);
}

double sim__dcqcn_rate(const struct sim_qp *qp) { return qp->cc ? qp->cc->rc : line_rate(qp); }

static void arm(struct sim_qp *qp)
{
    struct sim_dcqcn *cc = qp->cc;
    sim_time_t next = cc->limited ? cc->rate_at : SIM_TIME_NEVER;
    if (cc->alpha > ALPHA_FLOOR && cc->alpha_at < next)
        next = cc->alpha_at;
    struct sim_host *h = sim__host_of(qp);
    sim_timer_arm(&cc->timer, h->node.comp.sim, next, &h->node.comp, SIM_HOST_DCQCN, qp);
}

void sim__dcqcn_ce(struct sim_qp *qp)
{
    struct sim_dcqcn *cc = qp->cc;
    if (!cc)
        return;
    if (cc->ibcc) {
        sim__ibcc_fecn(qp);
        return;
    }
    if (cc->dctcp) {
        qp->ce_echo = true; /* echoed in the next acknowledgement */
        return;
    }
    if (cc->timely || cc->hpcc)
        return; /* TIMELY reads delay, HPCC telemetry, not marks */
    sim_time_t now = sim__qp_now(qp);
    if (cc->last_cnp != SIM_TIME_NEVER && now - cc->last_cnp < params(qp)->cnp_interval)
        return;
    cc->last_cnp = now;
    sim__nic_push_cnp(qp->nic, qp->nic->transport->cnp(qp->nic, qp));
}

void sim__dcqcn_cnp(struct sim_qp *qp)
{
    struct sim_dcqcn *cc = qp->cc;
    if (cc && cc->ibcc)
        sim__ibcc_becn(qp);
    if (!cc || cc->dctcp || cc->timely || cc->hpcc || cc->ibcc)
        return;
    const struct cfg_dcqcn *d = params(qp);
    sim_time_t now = sim__qp_now(qp);
    /* the paper sets RT = RC on every CNP; NVIDIA's NICs (clamp_tgt_rate
     * 0) only when the rate was raised since the last cut: by the byte
     * counter, or by the timer (clamp_tgt_rate_after_time_inc, default
     * 1), so that the cuts of one congestion episode keep the target they
     * started from. HPCC's ns-3 (CLAMP_TARGET_RATE 0) has no byte counter
     * and asks the timer only. */
    if (d->clamp_target || cc->t > 0 || cc->bc > 0)
        cc->rt = cc->rc;
    cc->rc *= 1 - cc->alpha / 2;
    if (cc->rc < (double)d->min_rate)
        cc->rc = (double)d->min_rate;
    cc->alpha = (1 - d->g) * cc->alpha + d->g;
    cc->t = cc->bc = 0;
    cc->bytes = 0;
    cc->cuts++;
    cc->limited = true;
    cc->rate_at = now + d->timer;
    cc->alpha_at = now + d->alpha_timer;
    arm(qp);
}

static void increase(struct sim_qp *qp, bool timer)
{
    struct sim_dcqcn *cc = qp->cc;
    const struct cfg_dcqcn *d = params(qp);
    double line = line_rate(qp);
    if (timer)
        cc->t++;
    else
        cc->bc++;
    uint32_t lo = cc->t < cc->bc ? cc->t : cc->bc, hi = cc->t < cc->bc ? cc->bc : cc->t;
    if (hi >= d->f && lo < d->f)
        cc->rt += additive(qp);
    else if (lo >= d->f)
        cc->rt += (double)(lo - d->f + 1) * hyper(qp);
    if (cc->rt > line)
        cc->rt = line;
    cc->rc = (cc->rt + cc->rc) / 2;
    if ((line - cc->rc) * 1000 < line) {
        cc->rc = cc->rt = line;
        cc->limited = false;
    }
}

void sim__dcqcn_timer(struct sim_qp *qp, sim_time_t at)
{
    struct sim_dcqcn *cc = qp->cc;
    if (cc->ibcc) {
        sim__ibcc_timer(qp, at);
        return;
    }
    if (!sim_timer_fire(&cc->timer, at))
        return; /* superseded by an earlier one */
    const struct cfg_dcqcn *d = params(qp);
    if (at >= cc->alpha_at) {
        cc->alpha *= 1 - d->g;
        cc->alpha_at = at + d->alpha_timer;
    }
    if (cc->limited && at >= cc->rate_at) {
        increase(qp, true);
        cc->rate_at = at + d->timer;
    }
    arm(qp);
}

void sim__dcqcn_sent(struct sim_qp *qp, uint64_t wire)
{
    struct sim_dcqcn *cc = qp->cc;
    if (!cc->limited)
        return;
    qp->next_tx = sim__qp_now(qp) + (sim_time_t)((double)wire * 8e12 / cc->rc);
    if (cc->dctcp || cc->timely || cc->hpcc || cc->ibcc)
        return;
    cc->bytes += wire;
    uint64_t b = params(qp)->byte_counter;
    if (cc->bytes >= b) {
        cc->bytes -= b;
        increase(qp, false);
        arm(qp);
    }
}
