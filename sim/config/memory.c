/* memory.c - how much memory a run will take, estimated from the
 * configuration's counts before anything is built, and the limit it must
 * stay under: the max_memory key, or else what the machine lets the
 * process use (physical memory, its cgroup's memory.max, ulimit -v,
 * whichever is least). A configuration that would not fit is refused at the
 * line that asks for it, with the estimate, rather than killed part way by
 * the kernel.
 *
 * What each item costs is the run's to say (network/memory_costs.c, which
 * sees the run-time structs); this file counts the items and adds up.
 * The estimate counts what grows with the network and the workload: nodes,
 * ports, the routes (one 2-byte entry per switch and destination host,
 * which dominates large fabrics), queue pairs with their starting queues,
 * messages with their memory regions, each host's PCIe tree when it is
 * modelled, and the message bytes themselves with payload: data. Frames queued in switches come and go with the
 * traffic, and the monitor's samples grow with the simulated time: both
 * are left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/util.h"

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t sim__memory_estimate(const struct sim_counts *c, const struct sim_memory_costs *k)
{
    const uint64_t pcie_host = c->pcie_nodes ? k->pcie_host + c->pcie_nodes * k->pcie_node : 0;
    const uint64_t pcie_msg = c->pcie_nodes ? k->pcie_msg : 0;
    uint64_t total = k->base;
    total = sat_add(total, sat_mul(c->hosts, k->host + pcie_host));
    total = sat_add(total, sat_mul(c->switches, k->sw));
    total = sat_add(total, sat_mul(c->links, k->link));
    total = sat_add(total, sat_mul(sat_mul(c->switches, c->hosts), k->route_entry));
    total = sat_add(total, sat_mul(c->qps, k->conn));
    total = sat_add(total, sat_mul(c->messages, k->msg + pcie_msg));
    return sat_add(total, c->data_bytes);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void sim__config_counts(const struct loader *L, bool count_qps, struct sim_counts *c)
{
    const struct sim_config *cfg = L->cfg;
    *c = (struct sim_counts){.links = cfg->nlinks, .messages = cfg->nmsgs, .data_bytes = L->data_bytes};
    const struct sim_pcie_config *pc = cfg->pcie;
    if (pc && pc->model && pc->deflt)
        c->pcie_nodes = pc->deflt->nnodes + pc->deflt->sockets;
    for (size_t i = 0; i < cfg->nnodes; i++) {
        if (cfg->nodes[i].kind == CFG_HOST)
            c->hosts++;
        else
            c->switches++;
    }
    if (!count_qps || !cfg->nmsgs)
        return;
    /* a connection is an unordered host pair and a qp number: node
     * indexes stay below 2^20 (CFG_MAX_NODES), qp numbers below 2^16 */
    uint64_t *keys = sim__xmalloc(cfg->nmsgs * sizeof *keys);
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        uint64_t lo = m->src < m->dst ? m->src : m->dst, hi = m->src < m->dst ? m->dst : m->src;
        keys[i] = lo << 36 | hi << 16 | m->qp;
    }
    qsort(keys, cfg->nmsgs, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < cfg->nmsgs; i++)
        c->qps += !i || keys[i] != keys[i - 1];
    free(keys);
}

/* The memory.max of the cgroup (v2) this process runs in, if it has one. */
static uint64_t cgroup_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return UINT64_MAX;
    char line[512], path[600];
    uint64_t limit = UINT64_MAX;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3))
            continue;
        line[strcspn(line, "\n")] = 0;
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(line + 3, "/") ? line + 3 : "");
        FILE *m = fopen(path, "r");
        unsigned long long v;
        if (m && fscanf(m, "%llu", &v) == 1) /* "max" reads as no number: no limit */
            limit = v;
        if (m)
            fclose(m);
    }
    fclose(f);
    return limit;
}

uint64_t sim__memory_available(const char **source)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
    *source = "the machine has";
    uint64_t cg = cgroup_limit();
    if (cg < limit) {
        limit = cg;
        *source = "its cgroup allows (memory.max)";
    }
    struct rlimit rl;
    if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit) {
        limit = rl.rlim_cur;
        *source = "ulimit -v allows";
    }
    return limit;
}

/* 1.5 GiB, 300.0 MiB: sizes as the configuration writes them. */
static void format_bytes(uint64_t v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double x = (double)v;
    size_t u = 0;
    while (x >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        x /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", x, units[u]);
}

bool sim__memory_check(struct loader *L, struct fy_node *at, const struct cfg_pos *pos,
                       const char *what, const struct sim_counts *c)
{
    const char *source = "max_memory allows";
    uint64_t limit = L->max_memory;
    if (!limit)
        limit = sim__memory_available(&source);
    uint64_t need = sim__memory_estimate(c, L->costs);
    if (need <= limit)
        return true;
    /* "H hosts, S switches, L links, Q queue pairs and M messages" */
    uint64_t n[] = {c->hosts, c->switches, c->links, c->qps, c->messages};
    static const char *const names[] = {"hosts", "switches", "links", "queue pairs", "messages"};
    size_t k = 0, last = 0, len = 0;
    for (size_t i = 0; i < 5; i++)
        if (n[i])
            last = i;
    char counts[256] = "", needs[32], has[32], data[64] = "";
    for (size_t i = 0; i < 5; i++) {
        if (!n[i])
            continue;
        len += (size_t)snprintf(counts + len, sizeof counts - len, "%s%llu %s",
                                !k ? "" : i == last ? " and " : ", ", (unsigned long long)n[i], names[i]);
        k++;
    }
    format_bytes(need, needs, sizeof needs);
    format_bytes(limit, has, sizeof has);
    if (c->data_bytes) {
        char d[32];
        format_bytes(c->data_bytes, d, sizeof d);
        snprintf(data, sizeof data, " (%s of it message data)", d);
    }
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s need about %s of memory%s, more than the %s %s; "
             "the max_memory key sets another limit", what, counts, needs, data, has, source);
    return pos ? sim__fail_at(L, pos, "%s", msg) : sim__fail(L, at, "%s", msg);
}
