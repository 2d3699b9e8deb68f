/* fabric_csv.c - the fabric's outputs: pfc.csv, qlen.csv and rates.csv,
 * each written under a temporary name and renamed into place, and the
 * fabric's parts of summary.json (per-port counters, totals, deadlocks).
 * Numbers are printed exactly or with fixed precision, so two runs with
 * one seed leave identical files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/nic.h"
#include "observe/observe.h"
#include "sim.h"

static const char *const pfc_event_names[] = {
#define SIM__PFC_NAME(name, str) str,
    SIM_PFC_EVENTS(SIM__PFC_NAME)
#undef SIM__PFC_NAME
};

void sim__fabric_port_json(FILE *f, const struct sim_port *p)
{
    const struct sim_port_stats *s = &p->st;
    fprintf(f, ", \"headroom_bytes\": %llu, \"max_headroom_bytes\": %llu", (unsigned long long)s->headroom,
            (unsigned long long)s->max_headroom);
    fprintf(f, ", \"headroom_drops\": %llu, \"watchdog_drops\": %llu, \"pauses_sent\": %llu, "
               "\"resumes_sent\": %llu, \"pauses_received\": %llu, \"resumes_received\": %llu, "
               "\"paused_ps\": %llu, \"ecn_marked\": %llu, \"cnps_sent\": %llu, \"cnps_received\": %llu",
            (unsigned long long)s->headroom_drops, (unsigned long long)s->watchdog_drops,
            (unsigned long long)s->pauses_sent, (unsigned long long)s->resumes_sent,
            (unsigned long long)s->pauses_received, (unsigned long long)s->resumes_received,
            (unsigned long long)s->paused, (unsigned long long)s->ecn_marked,
            (unsigned long long)s->cnps_sent, (unsigned long long)s->cnps_received);
    if (p->ib)
        fprintf(f, ", \"fc_sent\": %llu, \"fc_received\": %llu, \"credit_overruns\": %llu, "
                   "\"credit_blocked_ps\": %llu",
                (unsigned long long)s->fc_sent, (unsigned long long)s->fc_received,
                (unsigned long long)s->credit_overruns, (unsigned long long)s->credit_blocked);
}

void sim__fabric_summary_json(FILE *f, struct sim_network *net)
{
    const struct sim_monitor *mon = net->monitor;
    struct sim_port_stats t = {0};
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port_stats *s = &net->ports[i].st;
        t.headroom_drops += s->headroom_drops;
        t.watchdog_drops += s->watchdog_drops;
        t.pauses_sent += s->pauses_sent;
        t.resumes_sent += s->resumes_sent;
        t.paused += s->paused;
        t.ecn_marked += s->ecn_marked;
        t.cnps_sent += s->cnps_sent;
        t.fc_sent += s->fc_sent;
        t.credit_overruns += s->credit_overruns;
        t.credit_blocked += s->credit_blocked;
    }
    uint64_t cuts = 0;
    for (size_t i = 0; i < net->nconns; i++)
        for (int s = 0; s < 2; s++)
            if (net->conns[i].qp[s]->cc)
                cuts += net->conns[i].qp[s]->cc->cuts;
    fprintf(f, "  \"fabric\": {\n    \"pauses_sent\": %llu,\n    \"resumes_sent\": %llu,\n"
               "    \"paused_ps\": %llu,\n    \"headroom_drops\": %llu,\n    \"watchdog_drops\": %llu,\n"
               "    \"ecn_marked\": %llu,\n    \"cnps_sent\": %llu,\n    \"rate_cuts\": %llu,\n"
               "    \"link_faults\": %zu,\n",
            (unsigned long long)t.pauses_sent, (unsigned long long)t.resumes_sent,
            (unsigned long long)t.paused, (unsigned long long)t.headroom_drops,
            (unsigned long long)t.watchdog_drops, (unsigned long long)t.ecn_marked,
            (unsigned long long)t.cnps_sent, (unsigned long long)cuts, net->cfg->fabric.nfaults);
    if (net->subnet)
        fprintf(f, "    \"flow_control_packets\": %llu,\n    \"credit_overruns\": %llu,\n"
                   "    \"credit_blocked_ps\": %llu,\n",
                (unsigned long long)t.fc_sent, (unsigned long long)t.credit_overruns,
                (unsigned long long)t.credit_blocked);
    fprintf(f, "    \"deadlocks\": [");
    for (size_t i = 0; i < mon->ndeadlocks; i++) {
        const struct sim_deadlock *d = &mon->deadlocks[i];
        fprintf(f, "%s\n      {\"time_ps\": %llu, \"cycle\": [", i ? "," : "", (unsigned long long)d->t);
        for (uint32_t k = 0; k < d->n; k++)
            fprintf(f, "%s{\"port\": \"%s\", \"priority\": %u}", k ? ", " : "",
                    net->ports[d->ports[k]].name, d->prios[k]);
        fprintf(f, "]}");
    }
    fprintf(f, "%s]\n  }", mon->ndeadlocks ? "\n    " : "");
}

bool sim_network_deadlock(const struct sim_network *net, size_t i, char *buf, size_t cap)
{
    const struct sim_monitor *mon = net->monitor;
    if (i >= mon->ndeadlocks || !cap)
        return false;
    const struct sim_deadlock *d = &mon->deadlocks[i];
    size_t n = (size_t)snprintf(buf, cap, "at %.3f us:", (double)d->t / (double)SIM_US);
    for (uint32_t k = 0; k <= d->n && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, " %s%s (priority %u)", k ? "-> " : "",
                              net->ports[d->ports[k % d->n]].name, d->prios[k % d->n]);
    return true;
}

/* ---- CSV files -------------------------------------------------------------------------- */
/* Each row of a monitor table, those spilled to its file first; false when
 * rows were lost (errno set). */
static bool each_row(struct sim_network *net, FILE *f, const struct sim_spill *s, const void *rows, size_t n,
                     size_t size, void (*row)(struct sim_network *, FILE *, const void *))
{
    if (s->err) {
        errno = s->err;
        return false;
    }
    if (s->f) {
        enum { BLOCK = 4096 };
        char *buf = sim__xmalloc(BLOCK * size);
        rewind(s->f);
        for (uint64_t left = s->rows; left;) {
            size_t want = left < BLOCK ? (size_t)left : BLOCK, got = fread(buf, size, want, s->f);
            for (size_t i = 0; i < got; i++)
                row(net, f, buf + i * size);
            if (got < want) {
                free(buf);
                errno = ferror(s->f) ? EIO : ENODATA;
                return false;
            }
            left -= got;
        }
        free(buf);
    }
    for (size_t i = 0; i < n; i++)
        row(net, f, (const char *)rows + i * size);
    return true;
}

static void pfc_row(struct sim_network *net, FILE *f, const void *row)
{
    {
        const struct sim_pfc_row *r = row;
        const struct sim_port *p = &net->ports[r->port];
        fprintf(f, "%llu,%s,%s,%s,%u,%s,%u,%llu\n", (unsigned long long)r->t,
                net->cfg->nodes[p->node->index].name, p->name, p->peer->name, r->prio,
                pfc_event_names[r->event], r->quanta, (unsigned long long)r->duration);
    }
}

static bool write_pfc(struct sim_network *net, FILE *f)
{
    const struct sim_monitor *mon = net->monitor;
    fprintf(f, "time_ps,node,port,peer,priority,event,quanta,duration_ps\n");
    return each_row(net, f, &mon->spill_pfc, mon->pfc, mon->npfc, sizeof *mon->pfc, pfc_row);
}

static void qlen_row(struct sim_network *net, FILE *f, const void *row)
{
    {
        const struct sim_qlen_row *r = row;
        const struct sim_port *p = &net->ports[r->port];
        uint64_t total = 0;
        for (unsigned c = 0; c < SIM_PRIOS; c++)
            total += r->q[c];
        fprintf(f, "%llu,%s,%s,%llu", (unsigned long long)r->t, net->cfg->nodes[p->node->index].name,
                p->name, (unsigned long long)total);
        for (unsigned c = 0; c < SIM_PRIOS; c++)
            fprintf(f, ",%u", r->q[c]);
        fprintf(f, "\n");
    }
}

static bool write_qlen(struct sim_network *net, FILE *f)
{
    const struct sim_monitor *mon = net->monitor;
    fprintf(f, "time_ps,node,port,total_bytes");
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        fprintf(f, ",tc%u", c);
    fprintf(f, "\n");
    return each_row(net, f, &mon->spill_qlen, mon->qlen, mon->nqlen, sizeof *mon->qlen, qlen_row);
}

static void rate_row(struct sim_network *net, FILE *f, const void *row)
{
    {
        const struct sim_rate_row *r = row;
        const struct sim_conn *c = &net->conns[r->conn];
        fprintf(f, "%llu,%u,%s,%s,%u,%.0f,%.0f,%.6f,%.0f\n", (unsigned long long)r->t, r->conn,
                net->cfg->nodes[c->host[r->side]].name, net->cfg->nodes[c->host[1 - r->side]].name,
                c->qp[r->side]->qpn, r->rate, r->target, r->alpha, r->throughput);
    }
}

static bool write_rates(struct sim_network *net, FILE *f)
{
    const struct sim_monitor *mon = net->monitor;
    fprintf(f, "time_ps,flow,src,dst,qpn,rate_bps,target_bps,alpha,throughput_bps\n");
    return each_row(net, f, &mon->spill_rates, mon->rates, mon->nrates, sizeof *mon->rates, rate_row);
}

int sim__fabric_write(struct sim_network *net, const char *dir, char *err, size_t errcap)
{
    static const struct {
        const char *name;
        bool (*write)(struct sim_network *net, FILE *f);
    } files[] = {{"pfc.csv", write_pfc}, {"qlen.csv", write_qlen}, {"rates.csv", write_rates}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *path = sim__xasprintf("%s/%s", dir, files[i].name);
        char *tmp = sim__xasprintf("%s.tmp", path);
        FILE *f = sim__fopen_new(tmp);
        bool ok = f != NULL;
        bool rows = true;
        int rows_errno = 0;
        if (ok) {
            struct sim_temp temp = {0}; /* removed if the process ends on out of memory */
            sim__temp_hold(&temp, tmp);
            rows = files[i].write(net, f);
            rows_errno = errno;
            ok = rows && !ferror(f);
            ok = !fclose(f) && ok;
            sim__temp_release(&temp);
            ok = ok && !rename(tmp, path);
        }
        if (!rows) {
            snprintf(err, errcap, "%s: rows kept in a temporary file during the run were lost: %s", path,
                     strerror(rows_errno));
            remove(tmp);
        } else if (!ok) {
            snprintf(err, errcap, "%s: %s", path, strerror(errno));
            remove(tmp);
        }
        free(path);
        free(tmp);
        if (!ok)
            return -1;
    }
    return 0;
}
