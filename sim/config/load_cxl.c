/* load_cxl.c - CXL memory expanders in a host's PCIe tree (pcie cxl) and
 * the loads and stores a workload makes to them (workload cxl); see
 * docs/config.md, "CXL memory", and pcie/cxl.c for the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/units.h"
#include "engine/util.h"

bool sim__cxl_devices(struct loader *L, struct fy_node *seq, struct cfg_pcie *t)
{
    static const char *const keys[] = {"name", "at", "gen", "width", "delay", "cpu_latency",
                                       "port_latency", "media_latency", NULL};
    if (!sim__expect_seq(L, seq, "pcie cxl"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[9];
        if (!sim__fields(L, item, "pcie cxl", keys, v))
            return false;
        if (!v[0])
            return sim__fail(L, item, "pcie cxl: needs a name");
        struct cfg_cxl d = {
            .gen = 5,
            .width = 16,
            .cpu_latency = CXL_DEFAULT_CPU_LATENCY,
            .port_latency = CXL_DEFAULT_PORT_LATENCY,
            .media_latency = CXL_DEFAULT_MEDIA_LATENCY,
        };
        char name[128], at[32] = "socket0", extra;
        uint32_t gen = 5, width = 16;
        if (!sim__scalar(L, v[0], "pcie cxl name", name, sizeof name) ||
            (v[1] && !sim__scalar(L, v[1], "pcie cxl at", at, sizeof at)) ||
            (v[2] && !sim__get_u32(L, v[2], "pcie cxl gen", 5, 6, &gen)) ||
            (v[3] && !sim__get_u32(L, v[3], "pcie cxl width", 1, 16, &width)) ||
            (v[4] && !sim__get_time(L, v[4], "pcie cxl delay", &d.delay)) ||
            (v[5] && !sim__get_time(L, v[5], "pcie cxl cpu_latency", &d.cpu_latency)) ||
            (v[6] && !sim__get_time(L, v[6], "pcie cxl port_latency", &d.port_latency)) ||
            (v[7] && !sim__get_time(L, v[7], "pcie cxl media_latency", &d.media_latency)))
            return false;
        if (sscanf(at, "socket%u%c", &d.socket, &extra) != 1 || d.socket >= t->sockets)
            return sim__fail(L, v[1], "pcie cxl at: '%s' is not one of the sockets (a CXL "
                                      "expander sits on a root port)", at);
        if (width & (width - 1))
            return sim__fail(L, v[3], "pcie cxl width: %u is not 1, 2, 4, 8 or 16", width);
        for (uint32_t i = 0; i < t->ncxl; i++)
            if (!strcmp(t->cxl[i].name, name))
                return sim__fail(L, v[0], "pcie cxl name: '%s' twice", name);
        d.gen = (uint8_t)gen;
        d.width = (uint8_t)width;
        d.name = sim__xstrdup(name);
        t->cxl = sim__xrealloc(t->cxl, (t->ncxl + 1) * sizeof *t->cxl);
        t->cxl[t->ncxl++] = d;
    }
    return true;
}

bool sim__cxl_accesses(struct loader *L, struct fy_node *seq)
{
    static const char *const keys[] = {"host", "device", "op", "count", "start", "interval", NULL};
    if (!L->cfg->pcie)
        L->cfg->pcie = sim__xcalloc(1, sizeof *L->cfg->pcie);
    struct sim_pcie_config *pc = L->cfg->pcie;
    if (!sim__expect_seq(L, seq, "cxl"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[7];
        if (!sim__fields(L, item, "cxl access", keys, v))
            return false;
        if (!v[0] || !v[1])
            return sim__fail(L, item, "cxl access: needs 'host' and 'device'");
        struct cfg_cxl_access a = {.count = 1, .pos = sim__pos(L, item)};
        char dev[128], op[16] = "load";
        if (!sim__get_host(L, v[0], "cxl host", &a.host) ||
            !sim__scalar(L, v[1], "cxl device", dev, sizeof dev) ||
            (v[2] && !sim__scalar(L, v[2], "cxl op", op, sizeof op)) ||
            (v[3] && !sim__get_uint(L, v[3], "cxl count", 1, CFG_MAX_MESSAGES, &a.count)) ||
            (v[4] && !sim__get_time(L, v[4], "cxl start", &a.start)) ||
            (v[5] && !sim__get_time(L, v[5], "cxl interval", &a.interval)))
            return false;
        if (strcmp(op, "load") && strcmp(op, "store"))
            return sim__fail(L, v[2], "cxl op: '%s' is not load or store", op);
        a.store = !strcmp(op, "store");
        a.device = sim__xstrdup(dev);
        SIM_GROW(pc->cxl, pc->capcxl, pc->ncxl);
        pc->cxl[pc->ncxl++] = a;
    }
    return true;
}

bool sim__cxl_check(struct loader *L)
{
    struct sim_pcie_config *pc = L->cfg->pcie;
    for (size_t i = 0; i < pc->ncxl; i++) {
        struct cfg_cxl_access *a = &pc->cxl[i];
        const char *host = L->cfg->nodes[a->host].name;
        if (!pc->present || !pc->model)
            return sim__fail_at(L, &a->pos, "cxl access: needs PCIe modelled (a pcie section, "
                                            "model: true)");
        const struct cfg_pcie *t = sim__pcie_tree(L->cfg, a->host);
        uint32_t d;
        for (d = 0; d < t->ncxl && strcmp(t->cxl[d].name, a->device); d++)
            ;
        if (d == t->ncxl)
            return sim__fail_at(L, &a->pos, "cxl device: '%s' is not a CXL expander of host '%s'",
                                a->device, host);
        a->dev = d;
    }
    return true;
}

void sim__cxl_free(struct sim_pcie_config *pc)
{
    for (size_t i = 0; i < pc->ncxl; i++)
        free(pc->cxl[i].device);
    free(pc->cxl);
}
