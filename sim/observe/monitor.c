/* monitor.c - what watches the fabric without taking part in it: samples
 * of every switch queue and every queue pair's rate at a fixed interval
 * (qlen.csv, rates.csv), the PFC log (pfc.csv), and the periodic search
 * for PFC deadlock (deadlock.c). It reads the nodes' state but never
 * changes it, so a run is the same with or without it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "host/nic.h"
#include "observe/observe.h"

enum { MON_EV_SAMPLE, MON_EV_DEADLOCK_CHECK, MON_EV_COUNT };
static const char *const monitor_event_names[MON_EV_COUNT] = {"sample", "deadlock-check"};

/* A table of *n rows of `size` bytes that reached SIM_SPILL_ROWS goes to
 * its file and starts again empty. */
static void spill(struct sim_spill *s, const void *rows, size_t *n, size_t size)
{
    if (*n < SIM_SPILL_ROWS)
        return;
    if (!s->f && !s->err && !(s->f = tmpfile()))
        s->err = errno ? errno : EIO;
    if (s->f && !s->err) {
        if (fwrite(rows, size, *n, s->f) == *n)
            s->rows += *n;
        else
            s->err = errno ? errno : EIO;
    }
    *n = 0;
}

static void record_pfc(struct sim_pfc_hook *h, const struct sim_pfc_row *row)
{
    struct sim_monitor *mon = (struct sim_monitor *)((char *)h - offsetof(struct sim_monitor, pfc_hook));
    SIM_GROW(mon->pfc, mon->cappfc, mon->npfc);
    mon->pfc[mon->npfc++] = *row;
    spill(&mon->spill_pfc, mon->pfc, &mon->npfc, sizeof *mon->pfc);
}

/* A run split over MPI ranks has a monitor on every rank, each sampling
 * the nodes its rank runs; rank 0 merges the rows (network/parallel.c). */
static bool elsewhere(const struct sim_monitor *mon, const struct sim_node *n)
{
    return sim_component_remote(mon->net->sim, &n->comp);
}

static void sample_queues(struct sim_monitor *mon, sim_time_t now)
{
    struct sim_network *net = mon->net;
    for (size_t i = 0; i < net->cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        if (n->kind != CFG_SWITCH || elsewhere(mon, n))
            continue;
        struct sim_switch *sw = sim__switch_of(n);
        for (uint32_t k = 0; k < n->nports; k++) {
            uint32_t id = (uint32_t)(n->ports[k] - net->ports);
            const struct sw_port *sp = &sw->sp[k];
            /* a row while a queue holds bytes, and one when it empties */
            if (!sp->bytes && !mon->qlen_shown[id])
                continue;
            mon->qlen_shown[id] = sp->bytes != 0;
            SIM_GROW(mon->qlen, mon->capqlen, mon->nqlen);
            struct sim_qlen_row *r = &mon->qlen[mon->nqlen++];
            r->t = now;
            r->port = id;
            for (unsigned c = 0; c < SIM_PRIOS; c++)
                r->q[c] = (uint32_t)sp->q[c].bytes;
            spill(&mon->spill_qlen, mon->qlen, &mon->nqlen, sizeof *mon->qlen);
        }
    }
}

static void sample_rates(struct sim_monitor *mon, sim_time_t now)
{
    struct sim_network *net = mon->net;
    double secs = (double)net->cfg->fabric.sample / (double)SIM_S;
    for (size_t i = 0; i < net->nconns; i++) {
        for (int s = 0; s < 2; s++) {
            const struct sim_qp *qp = net->conns[i].qp[s];
            if (elsewhere(mon, net->nodes[net->conns[i].host[s]]))
                continue;
            uint64_t *last = &mon->last_bytes[2 * i + (size_t)s];
            uint64_t sent = qp->st.tx_bytes - *last;
            *last = qp->st.tx_bytes;
            if (!sent && !(qp->cc && qp->cc->limited))
                continue;
            SIM_GROW(mon->rates, mon->caprates, mon->nrates);
            mon->rates[mon->nrates++] = (struct sim_rate_row){
                .t = now,
                .conn = (uint32_t)i,
                .side = (uint8_t)s,
                .rate = sim__dcqcn_rate(qp),
                .target = qp->cc ? qp->cc->rt : sim__dcqcn_rate(qp),
                .alpha = qp->cc ? qp->cc->alpha : 0,
                .throughput = (double)sent * 8 / secs,
            };
            spill(&mon->spill_rates, mon->rates, &mon->nrates, sizeof *mon->rates);
        }
    }
}

static void monitor_init(struct sim_component *c)
{
    struct sim_monitor *mon = (struct sim_monitor *)c;
    const struct cfg_fabric *f = &mon->net->cfg->fabric;
    if (f->sample)
        sim_schedule(c->sim, f->sample, c, MON_EV_SAMPLE, NULL);
    if (f->deadlock_check && mon->check_deadlock)
        sim_schedule(c->sim, f->deadlock_check, c, MON_EV_DEADLOCK_CHECK, NULL);
}

static void monitor_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_monitor *mon = (struct sim_monitor *)c;
    const struct cfg_fabric *f = &mon->net->cfg->fabric;
    sim_time_t now = sim_now(c->sim);
    mon->fired++;
    if (sim_event_kind(ev) == MON_EV_SAMPLE) {
        sample_queues(mon, now);
        sample_rates(mon, now);
        sim_schedule(c->sim, now + f->sample, c, MON_EV_SAMPLE, NULL);
    } else if (sim_event_kind(ev) == MON_EV_DEADLOCK_CHECK) {
        sim__deadlock_check(mon);
        sim_schedule(c->sim, now + f->deadlock_check, c, MON_EV_DEADLOCK_CHECK, NULL);
    }
}

static const struct sim_component_ops monitor_ops = {
    .type = "monitor",
    .event_names = monitor_event_names,
    .nevents = MON_EV_COUNT,
    .init = monitor_init,
    .handle = monitor_handle,
};

void sim__monitor_create(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct sim_monitor *mon = sim__xcalloc(1, sizeof *mon);
    net->monitor = mon;
    mon->net = net;
    mon->qlen_shown = sim__xcalloc(net->nports ? net->nports : 1, 1);
    mon->last_bytes = sim__xcalloc(2 * net->nconns + 1, sizeof *mon->last_bytes);
    mon->last_sent = sim__xcalloc(net->nports * SIM_PRIOS + 1, sizeof *mon->last_sent);
    mon->in_deadlock = sim__xcalloc(net->nports * SIM_PRIOS + 1, 1);
    bool pfc = false;
    for (size_t i = 0; i < cfg->nnodes; i++)
        pfc |= cfg->nodes[i].kind == CFG_SWITCH && cfg->fabric.sw[cfg->nodes[i].swp].lossless;
    mon->check_deadlock = pfc;
    if (cfg->fabric.sample || (pfc && cfg->fabric.deadlock_check)) {
        sim_component_add(net->sim, &mon->comp, &monitor_ops, "monitor");
        sim_component_set_domain(&mon->comp, SIM_DOMAIN_LAST); /* net.h */
    }
    mon->pfc_hook.fn = record_pfc;
    sim__pfc_hook_add(net, &mon->pfc_hook);
}

int sim__spill_read_all(struct sim_spill *s, const void *rows, size_t n, size_t size, uint8_t **out,
                        size_t *nout)
{
    if (s->err)
        return -1;
    size_t total = ((size_t)s->rows + n) * size;
    uint8_t *p = sim__xmalloc(total ? total : 1);
    if (s->f) {
        rewind(s->f);
        if (fread(p, size, (size_t)s->rows, s->f) != s->rows) {
            free(p);
            return -1;
        }
        fclose(s->f);
        s->f = NULL;
    }
    if (n)
        memcpy(p + (size_t)s->rows * size, rows, n * size);
    s->rows = 0;
    *out = p;
    *nout = total;
    return 0;
}

void sim__monitor_destroy(struct sim_network *net)
{
    struct sim_monitor *mon = net->monitor;
    if (!mon)
        return;
    for (size_t i = 0; i < mon->ndeadlocks; i++) {
        free(mon->deadlocks[i].ports);
        free(mon->deadlocks[i].prios);
    }
    free(mon->deadlocks);
    if (mon->views)
        free(mon->views->w);
    free(mon->views);
    struct sim_spill *sp[] = {&mon->spill_pfc, &mon->spill_qlen, &mon->spill_rates};
    for (size_t i = 0; i < 3; i++)
        if (sp[i]->f)
            fclose(sp[i]->f);
    free(mon->pfc);
    free(mon->qlen);
    free(mon->rates);
    free(mon->qlen_shown);
    free(mon->last_bytes);
    free(mon->last_sent);
    free(mon->in_deadlock);
    free(mon);
}
