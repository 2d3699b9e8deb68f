/* collectives_csv.c - one row per collective, in collectives.csv and as
 * nccl-tests prints it in collectives.txt (docs/config.md, Outputs).
 *
 * A collective starts when its first step is posted and ends when its
 * last step's data is in the memory of the rank it went to. As in
 * nccl-tests (doc/PERFORMANCE.md), the algorithm bandwidth is size / time
 * and the bus bandwidth scales it to what each rank's link carried:
 * by 2(n - 1)/n for all-reduce, (n - 1)/n for reduce-scatter, all-gather
 * and alltoall, 1 for broadcast.
 */
#include <inttypes.h>
#include <stdio.h>

#include "host/nic.h"
#include "observe/observe.h"

struct coll_result {
    sim_time_t start, end; /* end 0: not finished */
    double algbw, busbw;   /* GB/s (10^9 bytes per second) */
    uint64_t wrong, checked;
};

static void result(const struct sim_network *net, const struct cfg_coll *co, struct coll_result *r)
{
    *r = (struct coll_result){.start = SIM_TIME_NEVER};
    bool done = true;
    for (uint32_t i = co->first_msg; i < co->first_msg + co->nmsgs; i++) {
        const struct sim_msg *m = &net->msgs[i];
        if (m->posted < r->start && m->status != SIM_MSG_PENDING)
            r->start = m->posted;
        if (!m->delivered || m->status != SIM_MSG_OK)
            done = false;
        else if (m->delivered > r->end)
            r->end = m->delivered;
        r->wrong += m->data_ok == 0;
        r->checked += m->data_ok >= 0;
    }
    if (!done || r->start == SIM_TIME_NEVER) {
        r->end = 0;
        return;
    }
    double n = co->nranks, t = (double)(r->end - r->start) / (double)SIM_S;
    r->algbw = t > 0 ? (double)co->size / t / 1e9 : 0;
    double factor = co->kind == CFG_COLL_ALL_REDUCE ? 2 * (n - 1) / n
                    : co->kind == CFG_COLL_BROADCAST ? 1
                                                     : (n - 1) / n;
    r->busbw = r->algbw * factor;
}

/* The table's column is six wide: there hierarchical is "hier". */
static const char *algorithm(const struct cfg_coll *co, bool table)
{
    return co->kind == CFG_COLL_ALL_TO_ALL          ? "direct"
           : co->algorithm == CFG_ALG_TREE         ? "tree"
           : co->algorithm == CFG_ALG_HIERARCHICAL ? (table ? "hier" : "hierarchical")
                                                   : "ring";
}

void sim__coll_write_csv(const struct sim_network *net, FILE *f)
{
    fprintf(f, "id,kind,algorithm,ranks,bytes,slice,messages,start_ps,end_ps,time_ps,algbw_GBps,"
               "busbw_GBps,status,data\n");
    for (size_t i = 0; i < net->cfg->ncolls; i++) {
        const struct cfg_coll *co = &net->cfg->colls[i];
        struct coll_result r;
        result(net, co, &r);
        fprintf(f, "%zu,%s,%s,%u,%" PRIu64 ",%" PRIu64 ",%u,", i, sim__coll_name(co->kind),
                algorithm(co, false), co->nranks, co->size, co->slice,
                co->nmsgs);
        if (r.end)
            fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,ok,", r.start, r.end,
                    r.end - r.start, r.algbw, r.busbw);
        else
            fprintf(f, ",,,,,pending,");
        fprintf(f, "%s\n", r.wrong ? "corrupted" : r.checked == co->nmsgs ? "ok" : "unchecked");
    }
}

void sim__coll_write_table(const struct sim_network *net, FILE *f)
{
    fprintf(f, "# rdmasim collectives: int32 data, columns as nccl-tests prints them, with the "
               "algorithm\n"
               "#\n"
               "# %14s %6s %5s %12s %12s %6s %6s %10s %8s %8s %7s\n"
               "# %14s %6s %5s %12s %12s %6s %6s %10s %8s %8s\n",
               "collective", "algo", "ranks", "size", "count", "type", "redop", "time", "algbw",
               "busbw", "#wrong", "", "", "", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
               "(GB/s)");
    for (size_t i = 0; i < net->cfg->ncolls; i++) {
        const struct cfg_coll *co = &net->cfg->colls[i];
        struct coll_result r;
        result(net, co, &r);
        fprintf(f, "  %14s %6s %5u %12" PRIu64 " %12" PRIu64 " %6s %6s ", sim__coll_name(co->kind),
                algorithm(co, true), co->nranks, co->size, co->size / 4, "int32",
                co->kind == CFG_COLL_ALL_REDUCE || co->kind == CFG_COLL_REDUCE_SCATTER ? "sum"
                                                                                      : "none");
        if (r.end)
            fprintf(f, "%10.2f %8.2f %8.2f ", (double)(r.end - r.start) / (double)SIM_US, r.algbw,
                    r.busbw);
        else
            fprintf(f, "%10s %8s %8s ", "pending", "-", "-");
        if (r.checked == co->nmsgs)
            fprintf(f, "%7" PRIu64 "\n", r.wrong);
        else
            fprintf(f, "%7s\n", "N/A");
    }
}
