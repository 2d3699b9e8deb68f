/* monitor.c - what watches the fabric without taking part in it: samples
 * of every switch queue and every queue pair's rate at a fixed interval
 * (qlen.csv, rates.csv), the PFC log (pfc.csv), and the periodic search
 * for PFC deadlock (deadlock.c). It reads the nodes' state but never
 * changes it, so a run is the same with or without it.
 */
#include <stddef.h>
#include <stdlib.h>

#include "nic.h"
#include "util.h"

void sim__fabric_pfc_log(struct sim_network *net, const struct sim_pfc_row *row)
{
    struct sim_fabric *fab = net->fabric;
    SIM_GROW(fab->pfc, fab->cappfc, fab->npfc);
    fab->pfc[fab->npfc++] = *row;
}

static void sample_queues(struct sim_fabric *fab, sim_time_t now)
{
    struct sim_network *net = fab->net;
    for (size_t i = 0; i < net->cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        if (n->kind != CFG_SWITCH)
            continue;
        struct sim_switch *sw = sim__switch_of(n);
        for (uint32_t k = 0; k < n->nports; k++) {
            uint32_t id = (uint32_t)(n->ports[k] - net->ports);
            const struct sw_port *sp = &sw->sp[k];
            /* a row while a queue holds bytes, and one when it empties */
            if (!sp->bytes && !fab->qlen_shown[id])
                continue;
            fab->qlen_shown[id] = sp->bytes != 0;
            SIM_GROW(fab->qlen, fab->capqlen, fab->nqlen);
            struct sim_qlen_row *r = &fab->qlen[fab->nqlen++];
            r->t = now;
            r->port = id;
            for (unsigned c = 0; c < SIM_PRIOS; c++)
                r->q[c] = (uint32_t)sp->q[c].bytes;
        }
    }
}

static void sample_rates(struct sim_fabric *fab, sim_time_t now)
{
    struct sim_network *net = fab->net;
    double secs = (double)net->cfg->fabric.sample / (double)SIM_S;
    for (size_t i = 0; i < net->nconns; i++) {
        for (int s = 0; s < 2; s++) {
            const struct sim_qp *qp = net->conns[i].qp[s];
            uint64_t *last = &fab->last_bytes[2 * i + (size_t)s];
            uint64_t sent = qp->st.tx_bytes - *last;
            *last = qp->st.tx_bytes;
            if (!sent && !(qp->cc && qp->cc->limited))
                continue;
            SIM_GROW(fab->rates, fab->caprates, fab->nrates);
            fab->rates[fab->nrates++] = (struct sim_rate_row){
                .t = now,
                .conn = (uint32_t)i,
                .side = (uint8_t)s,
                .rate = sim__dcqcn_rate(qp),
                .target = qp->cc ? qp->cc->rt : sim__dcqcn_rate(qp),
                .alpha = qp->cc ? qp->cc->alpha : 0,
                .throughput = (double)sent * 8 / secs,
            };
        }
    }
}

static void monitor_init(struct sim_component *c)
{
    struct sim_fabric *fab = (struct sim_fabric *)c;
    const struct cfg_fabric *f = &fab->net->cfg->fabric;
    if (f->sample)
        sim_schedule(c->sim, f->sample, c, SIM_EV_SAMPLE, NULL);
    if (f->deadlock_check && fab->check_deadlock)
        sim_schedule(c->sim, f->deadlock_check, c, SIM_EV_DEADLOCK_CHECK, NULL);
}

static void monitor_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_fabric *fab = (struct sim_fabric *)c;
    const struct cfg_fabric *f = &fab->net->cfg->fabric;
    sim_time_t now = sim_now(c->sim);
    if (sim_event_kind(ev) == SIM_EV_SAMPLE) {
        sample_queues(fab, now);
        sample_rates(fab, now);
        sim_schedule(c->sim, now + f->sample, c, SIM_EV_SAMPLE, NULL);
    } else if (sim_event_kind(ev) == SIM_EV_DEADLOCK_CHECK) {
        sim__deadlock_check(fab);
        sim_schedule(c->sim, now + f->deadlock_check, c, SIM_EV_DEADLOCK_CHECK, NULL);
    }
}

static const struct sim_component_ops monitor_ops = {
    .type = "monitor",
    .init = monitor_init,
    .handle = monitor_handle,
};

static void faults_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_fabric *fab = (struct sim_fabric *)((char *)c - offsetof(struct sim_fabric, faults));
    const struct sim_fault_action *a = ev->ptr;
    sim__fault_apply(fab, a->link, a->up);
}

static const struct sim_component_ops faults_ops = {
    .type = "faults",
    .init = sim__faults_init,
    .handle = faults_handle,
};

void sim__fabric_create(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct sim_fabric *fab = sim__xcalloc(1, sizeof *fab);
    net->fabric = fab;
    fab->net = net;
    fab->qlen_shown = sim__xcalloc(net->nports ? net->nports : 1, 1);
    fab->last_bytes = sim__xcalloc(2 * net->nconns + 1, sizeof *fab->last_bytes);
    fab->last_sent = sim__xcalloc(net->nports * SIM_PRIOS + 1, sizeof *fab->last_sent);
    fab->in_deadlock = sim__xcalloc(net->nports * SIM_PRIOS + 1, 1);
    bool pfc = false;
    for (size_t i = 0; i < cfg->nnodes; i++)
        pfc |= cfg->nodes[i].kind == CFG_SWITCH && cfg->fabric.sw[cfg->nodes[i].swp].lossless;
    fab->check_deadlock = pfc;
    if (cfg->fabric.sample || (pfc && cfg->fabric.deadlock_check))
        sim_component_add(net->sim, &fab->monitor, &monitor_ops, "monitor");
    if (cfg->fabric.nfaults)
        sim_component_add(net->sim, &fab->faults, &faults_ops, "faults");
}

void sim__fabric_destroy(struct sim_network *net)
{
    struct sim_fabric *fab = net->fabric;
    if (!fab)
        return;
    for (size_t i = 0; i < fab->ndeadlocks; i++) {
        free(fab->deadlocks[i].ports);
        free(fab->deadlocks[i].prios);
    }
    free(fab->deadlocks);
    free(fab->pfc);
    free(fab->qlen);
    free(fab->rates);
    free(fab->qlen_shown);
    free(fab->last_bytes);
    free(fab->last_sent);
    free(fab->in_deadlock);
    free(fab->actions);
    free(fab);
}
