/* ibcc.c - InfiniBand congestion control at the channel adapters (IBA
 * vol. 1, release 1.4, annex A10), per queue pair.
 *
 * Destination: every packet that arrives with FECN set (a switch found its
 * VL queue congested: fabric/ib_switch.c) is answered with a congestion
 * notification packet, BECN set, to the source queue pair (A10.3).
 * Source: each BECN raises the congestion control table index (CCTI) by
 * CCTI_Increase, up to CCTI_Limit; every CCTI_Timer the index falls by one
 * until it is back to zero (A10.4.3). The index selects the table's
 * inter-packet delay; this model's table is linear, entry i delaying each
 * packet by i x ipd_step of its own transmission time, so the queue pair
 * sends at line rate / (1 + CCTI x ipd_step) (A10.4.3.1 leaves the table's
 * contents to the congestion control manager).
 */
#include "engine/util.h"
#include "host/nic.h"

static const struct cfg_ibcc *params(const struct sim_qp *qp)
{
    return &qp->nic->host->node.net->cfg->ib.cc;
}

static void set_rate(struct sim_qp *qp)
{
    struct sim_dcqcn *cc = qp->cc;
    double line = (double)qp->nic->port->p.rate;
    cc->rc = cc->rt = line / (1 + cc->ccti * params(qp)->ipd_step);
    cc->limited = cc->ccti > 0;
}

void sim__ibcc_fecn(struct sim_qp *qp)
{
    sim__nic_push_cnp(qp->nic, qp->nic->transport->cnp(qp->nic, qp));
}

void sim__ibcc_becn(struct sim_qp *qp)
{
    struct sim_dcqcn *cc = qp->cc;
    const struct cfg_ibcc *p = params(qp);
    cc->ccti = cc->ccti + p->ccti_increase > p->ccti_limit ? p->ccti_limit : cc->ccti + p->ccti_increase;
    cc->cuts++;
    set_rate(qp);
    struct sim_host *h = sim__host_of(qp);
    sim_timer_arm(&cc->timer, h->node.comp.sim, sim__qp_now(qp) + p->ccti_timer, &h->node.comp,
                  SIM_HOST_DCQCN, qp);
}

void sim__ibcc_timer(struct sim_qp *qp, sim_time_t at)
{
    struct sim_dcqcn *cc = qp->cc;
    if (!sim_timer_fire(&cc->timer, at) || !cc->ccti)
        return;
    cc->ccti--;
    set_rate(qp);
    if (cc->ccti) {
        struct sim_host *h = sim__host_of(qp);
        sim_timer_arm(&cc->timer, h->node.comp.sim, at + params(qp)->ccti_timer, &h->node.comp,
                      SIM_HOST_DCQCN, qp);
    }
}
