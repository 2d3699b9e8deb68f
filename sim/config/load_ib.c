/* load_ib.c - the keys of a native InfiniBand fabric (docs/config.md,
 * "InfiniBand"): the top-level `infiniband` mapping, link rates by their
 * IB names, and the checks an IB subnet needs once the topology is known.
 *
 * Link rates (IBA vol. 2, release 1.4, and the InfiniBand Trade
 * Association's roadmap): a lane signals at the generation's rate and
 * carries data after its line code, 8b/10b up to QDR and 64b/66b from
 * FDR10 on (HDR and later signal PAM4 with forward error correction and
 * carry 50, 100, 200 Gb/s of data per lane); a link has 1, 2, 4, 8 or 12
 * lanes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/cfg_ib.h"
#include "config/loader.h"

struct ib_speed {
    const char *name;
    uint64_t lane_bps; /* data bits per second per lane, after the line code */
};

static const struct ib_speed speeds[] = {
    {"SDR", UINT64_C(2000000000)},       /* 2.5 Gbaud, 8b/10b */
    {"DDR", UINT64_C(4000000000)},       /* 5 Gbaud, 8b/10b */
    {"QDR", UINT64_C(8000000000)},       /* 10 Gbaud, 8b/10b */
    {"FDR10", UINT64_C(10000000000)},    /* 10.3125 Gbaud, 64b/66b */
    {"FDR", UINT64_C(13636363636)},      /* 14.0625 Gbaud, 64b/66b */
    {"EDR", UINT64_C(25000000000)},      /* 25.78125 Gbaud, 64b/66b */
    {"HDR", UINT64_C(50000000000)},      /* 53.125 Gb/s PAM4 */
    {"NDR", UINT64_C(100000000000)},     /* 106.25 Gb/s PAM4 */
    {"XDR", UINT64_C(200000000000)},     /* 212.5 Gb/s PAM4 */
};

bool sim__ib_rate(const char *s, uint64_t *bps, uint8_t *lanes)
{
    unsigned width = 1;
    if (isdigit((unsigned char)s[0])) {
        char *end;
        width = (unsigned)strtoul(s, &end, 10);
        if ((*end != 'x' && *end != 'X') ||
            (width != 1 && width != 2 && width != 4 && width != 8 && width != 12))
            return false;
        s = end + 1;
        while (*s == ' ')
            s++;
    }
    for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
        if (!strcasecmp(s, speeds[i].name)) {
            *bps = speeds[i].lane_bps * width;
            *lanes = (uint8_t)width;
            return true;
        }
    return false;
}

const char *sim__ib_rate_name(uint64_t bps, uint8_t lanes, char *buf, size_t cap)
{
    for (size_t i = 0; lanes && i < sizeof speeds / sizeof speeds[0]; i++)
        if (speeds[i].lane_bps * lanes == bps) {
            snprintf(buf, cap, "%ux%s", lanes, speeds[i].name);
            return buf;
        }
    return NULL;
}

void sim__cfg_ib_defaults(struct cfg_ib *ib)
{
    *ib = (struct cfg_ib){.vls = 8, .credit_update = 64, .vlarb.high_limit = 0, .trace_flow_control = true};
    for (unsigned sl = 0; sl < CFG_IB_SLS; sl++)
        ib->sl2vl[sl] = (uint8_t)(sl % ib->vls);
    /* IB CC's parameters are the congestion control manager's to choose
     * (A10.4); these let the 32 -> 1 incast of examples/ib-incast.yaml
     * settle (docs/config.md, "InfiniBand") */
    ib->cc = (struct cfg_ibcc){
        .threshold = 16 * 1024,
        .marking_rate = 0,
        .ccti_increase = 1,
        .ccti_limit = 127,
        .ccti_timer = 50 * SIM_US,
        .ipd_step = 1,
    };
}

/* A table of {vl, weight} entries. */
static bool vlarb_table(struct loader *L, struct fy_node *seq, const char *what,
                        struct cfg_vlarb_entry *t, uint8_t *n)
{
    static const char *const keys[] = {"vl", "weight", NULL};
    if (!sim__expect_seq(L, seq, what))
        return false;
    void *it = NULL;
    struct fy_node *item;
    *n = 0;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[3];
        uint32_t vl, w;
        if (*n == CFG_IB_VLARB_ENTRIES)
            return sim__fail(L, item, "%s: at most %d entries", what, CFG_IB_VLARB_ENTRIES);
        if (!sim__fields(L, item, what, keys, v))
            return false;
        if (!v[0] || !v[1])
            return sim__fail(L, item, "%s: each entry needs 'vl' and 'weight'", what);
        if (!sim__get_u32(L, v[0], "vlarb vl", 0, CFG_IB_MAX_VLS - 1, &vl) ||
            !sim__get_u32(L, v[1], "vlarb weight", 0, 255, &w))
            return false;
        t[*n] = (struct cfg_vlarb_entry){.vl = (uint8_t)vl, .weight = (uint8_t)w};
        (*n)++;
    }
    return true;
}

static bool vlarb(struct loader *L, struct fy_node *map, struct cfg_vlarb *a)
{
    static const char *const keys[] = {"high", "low", "high_limit", NULL};
    struct fy_node *v[4];
    uint32_t lim;
    if (!sim__fields(L, map, "infiniband vlarb", keys, v))
        return false;
    if (v[0] && !vlarb_table(L, v[0], "infiniband vlarb high", a->high, &a->nhigh))
        return false;
    if (v[1] && !vlarb_table(L, v[1], "infiniband vlarb low", a->low, &a->nlow))
        return false;
    if (v[2]) {
        if (!sim__get_u32(L, v[2], "infiniband vlarb high_limit", 0, 255, &lim))
            return false;
        a->high_limit = (uint8_t)lim;
    }
    return true;
}

static bool ibcc(struct loader *L, struct fy_node *map, struct cfg_ibcc *cc)
{
    static const char *const keys[] = {"enable", "threshold", "marking_rate", "ccti_increase",
                                       "ccti_limit", "ccti_timer", "ipd_step", NULL};
    struct fy_node *v[8];
    if (!sim__fields(L, map, "infiniband cc", keys, v))
        return false;
    if (v[0] && !sim__get_bool(L, v[0], "infiniband cc enable", &cc->enable))
        return false;
    if (v[1] && !sim__get_size(L, v[1], "infiniband cc threshold", 64, UINT64_C(1) << 32, &cc->threshold))
        return false;
    if (v[2] && !sim__get_u32(L, v[2], "infiniband cc marking_rate", 0, 65535, &cc->marking_rate))
        return false;
    if (v[3] && !sim__get_u32(L, v[3], "infiniband cc ccti_increase", 1, 255, &cc->ccti_increase))
        return false;
    if (v[4] && !sim__get_u32(L, v[4], "infiniband cc ccti_limit", 1, 16383, &cc->ccti_limit))
        return false;
    if (v[5]) {
        if (!sim__get_time(L, v[5], "infiniband cc ccti_timer", &cc->ccti_timer))
            return false;
        if (cc->ccti_timer < SIM_NS)
            return sim__fail(L, v[5], "infiniband cc ccti_timer: must be at least 1ns");
    }
    if (v[6]) {
        char buf[64], *end;
        if (!sim__scalar(L, v[6], "infiniband cc ipd_step", buf, sizeof buf))
            return false;
        cc->ipd_step = strtod(buf, &end);
        if (*end || end == buf || !(cc->ipd_step > 0 && cc->ipd_step <= 64))
            return sim__fail(L, v[6], "infiniband cc ipd_step: '%s' is not a number above 0 and "
                                      "at most 64", buf);
    }
    return true;
}

bool sim__ib_top(struct loader *L, struct fy_node *map)
{
    static const char *const keys[] = {"vls", "sl2vl", "vl_buffer", "credit_update", "fc_period",
                                       "lmc", "vlarb", "cc", "trace_flow_control", NULL};
    struct fy_node *v[10];
    struct cfg_ib *ib = &L->cfg->ib;
    uint32_t x;
    if (!sim__fields(L, map, "infiniband", keys, v))
        return false;
    if (v[0]) {
        if (!sim__get_u32(L, v[0], "infiniband vls", 1, CFG_IB_MAX_VLS, &x))
            return false;
        if (x & (x - 1))
            return sim__fail(L, v[0], "infiniband vls: %u is not one of 1, 2, 4, 8", x);
        ib->vls = (uint8_t)x;
        for (unsigned sl = 0; sl < CFG_IB_SLS; sl++)
            ib->sl2vl[sl] = (uint8_t)(sl % ib->vls);
    }
    if (v[1]) {
        if (!sim__expect_seq(L, v[1], "infiniband sl2vl"))
            return false;
        if (fy_node_sequence_item_count(v[1]) != CFG_IB_SLS)
            return sim__fail(L, v[1], "infiniband sl2vl: list the VL of each of the 16 SLs");
        void *it = NULL;
        struct fy_node *item;
        for (unsigned sl = 0; (item = fy_node_sequence_iterate(v[1], &it)); sl++) {
            if (!sim__get_u32(L, item, "infiniband sl2vl", 0, ib->vls - 1u, &x))
                return false;
            ib->sl2vl[sl] = (uint8_t)x;
        }
    }
    if (v[2] && !sim__get_size(L, v[2], "infiniband vl_buffer", 4 * 1024 + 128, UINT64_C(1) << 30,
                               &ib->vl_buffer))
        return false;
    if (v[3]) {
        uint64_t bytes;
        if (!sim__get_size(L, v[3], "infiniband credit_update", CFG_IB_BLOCK, UINT64_C(1) << 20, &bytes))
            return false;
        ib->credit_update = (uint32_t)((bytes + CFG_IB_BLOCK - 1) / CFG_IB_BLOCK);
    }
    if (v[4]) {
        char buf[64];
        if (fy_node_is_scalar(v[4]) && sim__scalar(L, v[4], "infiniband fc_period", buf, sizeof buf) &&
            !strcmp(buf, "off"))
            ib->fc_period = SIM_TIME_NEVER;
        else if (!sim__get_time(L, v[4], "infiniband fc_period", &ib->fc_period))
            return false;
        else if (!ib->fc_period)
            return sim__fail(L, v[4], "infiniband fc_period: must be above zero (or off)");
    }
    if (v[5]) {
        if (!sim__get_u32(L, v[5], "infiniband lmc", 0, 7, &x))
            return false;
        ib->lmc = (uint8_t)x;
    }
    if (v[6] && !vlarb(L, v[6], &ib->vlarb))
        return false;
    if (v[8] && !sim__get_bool(L, v[8], "infiniband trace_flow_control", &ib->trace_flow_control))
        return false;
    return !v[7] || ibcc(L, v[7], &ib->cc);
}

/* With the topology known: routing by LFT, LIDs within the unicast range,
 * VL arbitration tables that name only operational VLs, a buffer that
 * holds the largest packet. */
bool sim__check_ib(struct loader *L, struct fy_node *at)
{
    struct sim_config *cfg = L->cfg;
    struct cfg_ib *ib = &cfg->ib;
    bool ib_routing = cfg->routing == CFG_ROUTING_MINHOP || cfg->routing == CFG_ROUTING_FTREE;
    if (!ib->enable) {
        if (ib_routing)
            return sim__fail(L, L->routing_at, "topology routing: %s is an InfiniBand routing engine: "
                                               "set topology fabric: infiniband, or use ecmp, dmodk, "
                                               "spray or adaptive", sim__routing_name(cfg->routing));
        return true;
    }
    /* an InfiniBand switch's port-to-port latency: 130 ns, NVIDIA's
     * Quantum QM8700-series (HDR) datasheet */
    for (size_t i = 0; i < cfg->fabric.nsw; i++)
        if (!cfg->fabric.sw[i].latency_set)
            cfg->fabric.sw[i].latency = CFG_IB_SWITCH_LATENCY;
    /* the hosts run IB CC or nothing: nic.cc and its keys are RoCE's */
    for (size_t i = 0; i < cfg->nnodes; i++)
        cfg->nodes[i].nic.fab.cc = ib->cc.enable ? CFG_CC_IBCC : CFG_CC_NONE;
    cfg->nic.fab.cc = ib->cc.enable ? CFG_CC_IBCC : CFG_CC_NONE;
    for (size_t i = 0; i < cfg->nnodes; i++)
        if (cfg->nodes[i].kind == CFG_HOST && cfg_transport_tcp(cfg->nodes[i].nic.transport))
            return sim__fail_at(L, &cfg->nodes[i].pos, "host '%s': nic transport %s runs over "
                                                     "Ethernet, not topology fabric: infiniband",
                                cfg->nodes[i].name,
                                cfg->nodes[i].nic.transport == CFG_TRANSPORT_TCP ? "tcp" : "iwarp");
    if (!L->routing_at)
        cfg->routing = CFG_ROUTING_MINHOP;
    else if (!ib_routing)
        return sim__fail(L, L->routing_at, "topology routing: %s is not an InfiniBand routing engine: use "
                                "minhop or ftree", sim__routing_name(cfg->routing));
    uint64_t hosts = 0, switches = 0;
    for (size_t i = 0; i < cfg->nnodes; i++)
        cfg->nodes[i].kind == CFG_HOST ? hosts++ : switches++;
    uint64_t lids = (hosts << ib->lmc) + switches;
    if (lids > CFG_IB_MAX_UNICAST_LID)
        return sim__fail(L, at, "topology: an InfiniBand subnet has at most %d unicast LIDs; %llu "
                                "hosts with lmc %u and %llu switches need %llu",
                         CFG_IB_MAX_UNICAST_LID, (unsigned long long)hosts, ib->lmc,
                         (unsigned long long)switches, (unsigned long long)lids);
    if (!ib->vlarb.nlow && !ib->vlarb.nhigh) {
        /* every operational VL in the low-priority table, one 4 KiB packet a turn */
        for (unsigned vl = 0; vl < ib->vls; vl++)
            ib->vlarb.low[ib->vlarb.nlow++] = (struct cfg_vlarb_entry){.vl = (uint8_t)vl, .weight = 64};
    }
    const struct cfg_vlarb_entry *tabs[2] = {ib->vlarb.high, ib->vlarb.low};
    uint8_t ns[2] = {ib->vlarb.nhigh, ib->vlarb.nlow};
    for (int t = 0; t < 2; t++)
        for (unsigned i = 0; i < ns[t]; i++)
            if (tabs[t][i].vl >= ib->vls)
                return sim__fail(L, at, "infiniband vlarb %s: VL %u is not operational (vls: %u)",
                                 t ? "low" : "high", tabs[t][i].vl, ib->vls);
    for (unsigned sl = 0; sl < CFG_IB_SLS; sl++) {
        bool served = false;
        for (int t = 0; t < 2; t++)
            for (unsigned i = 0; i < ns[t]; i++)
                served |= tabs[t][i].vl == ib->sl2vl[sl] && tabs[t][i].weight;
        for (size_t h = 0; h < cfg->nnodes && !served; h++)
            if (cfg->nodes[h].kind == CFG_HOST && cfg->nodes[h].nic.sl == sl)
                return sim__fail_at(L, &cfg->nodes[h].pos, "host '%s': nic sl %u maps to VL %u, which "
                                                         "no VL arbitration entry serves",
                                    cfg->nodes[h].name, sl, ib->sl2vl[sl]);
    }
    return true;
}
