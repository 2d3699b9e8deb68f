/* load_fabric.c - the fabric's configuration keys (docs/config.md, "The
 * fabric"): switch buffers, scheduling, PFC and ECN; the NIC's VLAN tag,
 * PFC, receive buffer and DCQCN; the priority map, the monitor and link
 * faults. Errors are FILE:LINE:COL: messages, like the rest of the loader.
 *
 * Defaults: DCQCN's come from its paper (Zhu et al., SIGCOMM 2015): g =
 * 1/256, CNP interval 50 us, rate-increase timer 55 us, byte counter 10 MB,
 * F = 5, R_AI 40 Mb/s, R_HAI 200 Mb/s; the dynamic threshold alpha = 1/8;
 * priorities from DSCP / 8 (class selector), which puts RoCE's usual DSCP
 * 26 on priority 3 and CNPs' DSCP 48 on priority 6.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/loader.h"
#include "config/wire.h"
#include "engine/units.h"
#include "engine/util.h"
#include "rdma_codec.h"

#define PFC_REFRESH_MIN_PS 420 /* 672 bit times at 1.6 Tb/s */

void sim__cfg_switch_defaults(struct cfg_switch *s)
{
    *s = (struct cfg_switch){
        .alpha = 0.125,
        .strict = 0xc0, /* 6 and 7: CNPs and network control */
        .quanta = UINT16_MAX,
        /* NVIDIA Spectrum (SN2000 series datasheets): 300 ns port to port,
         * cut-through */
        .latency = 300 * SIM_NS,
        .cut_through = true,
        .ecn_all = {.pmax = -1},
    };
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        s->weights[c] = 1;
}

void sim__cfg_nic_fabric_defaults(struct cfg_nic_fabric *n)
{
    *n = (struct cfg_nic_fabric){
        .pfc = true,
        .rx_buffer = 256 * 1024,
        .dcqcn = {
            .enable = true,
            .g = 1.0 / 256,
            .cnp_interval = 50 * SIM_US,
            .timer = 55 * SIM_US,
            .alpha_timer = 55 * SIM_US,
            .byte_counter = 10 * 1000 * 1000,
            .f = 5,
            /* rai, rhai 0: the paper's, scaled with the link (cc/dcqcn.c) */
            .min_rate = 100 * 1000 * 1000,
            .cnp_dscp = 48,
        },
        /* DCTCP (Alizadeh et al., SIGCOMM 2010): g = 1/16; the increase
         * per round trip and the floor are HPCC's simulator's (1 Gb/s,
         * and DCQCN's minimum rate) */
        .dctcp = {
            .g = 1.0 / 16,
            .rai = 1000 * 1000 * 1000,
            .min_rate = 100 * 1000 * 1000,
        },
        /* TIMELY's paper (section 5): alpha 0.875, beta 0.8, T_low 50 us,
         * T_high 500 us, minimum RTT 20 us; delta from the link's rate
         * (rai 0, cc/timely.c): the paper's 10 Mb/s at 10 Gb/s */
        .timely = {
            .alpha = 0.875,
            .beta = 0.8,
            .t_low = 50 * SIM_US,
            .t_high = 500 * SIM_US,
            .min_rtt = 20 * SIM_US,
            .min_rate = 100 * 1000 * 1000,
        },
        /* HPCC's paper (section 3.3): eta 95%, maxStage 5; W_AI from the
         * link's rate (rai 0, cc/hpcc.c); telemetry room for 5 hops (its
         * ns-3's IntHeader::maxHop); the floor is DCQCN's */
        .hpcc = {
            .eta = 0.95,
            .max_stage = 5,
            .hops = 5,
            .min_rate = 100 * 1000 * 1000,
        },
    };
}

void sim__cfg_fabric_init(struct cfg_fabric *f)
{
    *f = (struct cfg_fabric){.sample = 10 * SIM_US, .deadlock_check = 100 * SIM_US};
    for (unsigned d = 0; d < 64; d++)
        f->dscp_map[d] = (uint8_t)(d >> 3);
    SIM_GROW(f->sw, f->capsw, 0);
    sim__cfg_switch_defaults(&f->sw[0]);
    f->nsw = 1;
}

void sim__cfg_fabric_free(struct cfg_fabric *f)
{
    free(f->sw);
    free(f->faults);
}

/* ---- values ------------------------------------------------------------------ */
/* A number, or a fraction "1/256". */
static bool get_fraction(struct loader *L, struct fy_node *n, const char *what, double min,
                         double max, double *v)
{
    char buf[VALUE_MAX];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    char *end;
    double x = strtod(buf, &end);
    if (end != buf && *end == '/') {
        const char *den = end + 1;
        double y = strtod(den, &end);
        x = end != den && y > 0 ? x / y : NAN;
    }
    if (end == buf || *end || !isfinite(x))
        return sim__fail(L, n, "%s: '%s' is not a number (0.125 or 1/8)", what, buf);
    if (x < min || x > max)
        return sim__fail(L, n, "%s: %s is out of range (%g to %g)", what, buf, min, max);
    *v = x;
    return true;
}

/* Whether a value is the word `word` (auto, dynamic, off, none), which
 * some keys take instead of a number. */
static bool is_keyword(struct fy_node *n, const char *word)
{
    char buf[32];
    if (!fy_node_is_scalar(n) || fy_node_is_alias(n))
        return false;
    size_t len;
    const char *s = fy_node_get_scalar(n, &len);
    if (!s || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    return !strcmp(buf, word);
}

/* A list of priorities (0..7) as a bit mask. */
static bool get_prios(struct loader *L, struct fy_node *n, const char *what, uint8_t *mask)
{
    if (!sim__expect_seq(L, n, what))
        return false;
    void *it = NULL;
    struct fy_node *item;
    *mask = 0;
    while ((item = fy_node_sequence_iterate(n, &it))) {
        uint32_t p;
        if (!sim__get_u32(L, item, what, 0, SIM_PRIOS - 1, &p))
            return false;
        *mask |= (uint8_t)(1u << p);
    }
    return true;
}

/* ---- switches ------------------------------------------------------------------ */
static bool scheduler(struct loader *L, struct fy_node *map, struct cfg_switch *s)
{
    static const char *const keys[] = {"strict", "weights", NULL};
    struct fy_node *v[3];
    if (!sim__fields(L, map, "scheduler", keys, v))
        return false;
    if (v[0] && !get_prios(L, v[0], "scheduler strict", &s->strict))
        return false;
    if (v[1]) {
        if (!sim__expect_seq(L, v[1], "scheduler weights"))
            return false;
        if (fy_node_sequence_item_count(v[1]) != SIM_PRIOS)
            return sim__fail(L, v[1], "scheduler weights: give one weight for each of the 8 classes");
        void *it = NULL;
        struct fy_node *item;
        for (unsigned c = 0; (item = fy_node_sequence_iterate(v[1], &it)); c++) {
            uint32_t w;
            if (!sim__get_u32(L, item, "scheduler weights", 1, 100, &w))
                return false;
            s->weights[c] = (uint8_t)w;
        }
    }
    return true;
}

static bool pfc(struct loader *L, struct fy_node *map, struct cfg_switch *s)
{
    static const char *const keys[] = {"enable", "priorities", "xoff", "xon", "headroom",
                                       "quanta", "refresh", "watchdog", NULL};
    struct fy_node *v[9];
    if (!sim__fields(L, map, "pfc", keys, v))
        return false;
    bool enable = true;
    uint8_t prios = s->lossless ? s->lossless : 1u << 3;
    if (v[0] && !sim__get_bool(L, v[0], "pfc enable", &enable))
        return false;
    if (v[1] && !get_prios(L, v[1], "pfc priorities", &prios))
        return false;
    s->lossless = enable ? prios : 0;
    if (v[2]) {
        if (is_keyword(v[2], "dynamic"))
            s->xoff = 0;
        else if (!sim__get_size(L, v[2], "pfc xoff", 1, UINT64_C(1) << 40, &s->xoff))
            return false;
    }
    if (v[3] && !sim__get_size(L, v[3], "pfc xon", 1, UINT64_C(1) << 40, &s->xon))
        return false;
    if (v[4]) {
        if (is_keyword(v[4], "auto"))
            s->headroom = 0;
        else if (!sim__get_size(L, v[4], "pfc headroom", 1, UINT64_C(1) << 40, &s->headroom))
            return false;
    }
    if (v[5]) {
        uint32_t q;
        if (!sim__get_u32(L, v[5], "pfc quanta", 1, UINT16_MAX, &q))
            return false;
        s->quanta = (uint16_t)q;
    }
    if (v[6]) {
        if (is_keyword(v[6], "auto"))
            s->refresh = 0;
        else if (!sim__get_time(L, v[6], "pfc refresh", &s->refresh))
            return false;
        else if (!s->refresh)
            return sim__fail(L, v[6], "pfc refresh: must be above zero (or auto)");
        /* A PFC frame is 64 bytes, with preamble and gap 672 bit times: 420 ps
         * at 1.6 Tb/s, the fastest Ethernet rate. A refresh shorter than that
         * asks for more pause frames than any link can carry. */
        else if (s->refresh < PFC_REFRESH_MIN_PS)
            return sim__fail(L, v[6],
                             "pfc refresh: %llups is shorter than one PFC frame takes on the wire at any Ethernet "
                             "rate (672 bit times: 420ps at 1.6 Tbps); write at least 420ps, or auto",
                             (unsigned long long)s->refresh);
    }
    if (v[7]) {
        if (is_keyword(v[7], "off"))
            s->watchdog = 0;
        else if (!sim__get_time(L, v[7], "pfc watchdog", &s->watchdog))
            return false;
    }
    return true;
}

static bool ecn_thresholds(struct loader *L, struct fy_node **v, const char *what, struct cfg_ecn *e)
{
    char w[64];
    snprintf(w, sizeof w, "%s kmin", what);
    if (v[0] && !is_keyword(v[0], "auto")) {
        if (!sim__get_size(L, v[0], w, 1, UINT64_C(1) << 40, &e->kmin))
            return false;
        e->kmin_pos = sim__pos(L, v[0]);
    }
    snprintf(w, sizeof w, "%s kmax", what);
    if (v[1] && !is_keyword(v[1], "auto")) {
        if (!sim__get_size(L, v[1], w, 1, UINT64_C(1) << 40, &e->kmax))
            return false;
        e->kmax_pos = sim__pos(L, v[1]);
    }
    snprintf(w, sizeof w, "%s pmax", what);
    if (v[2] && !sim__get_prob(L, v[2], w, &e->pmax))
        return false;
    if (e->kmin && e->kmax && e->kmax <= e->kmin)
        return sim__fail(L, v[1] ? v[1] : v[0], "%s: kmax must lie above kmin", what);
    return true;
}

static bool ecn(struct loader *L, struct fy_node *map, struct cfg_switch *s)
{
    static const char *const keys[] = {"kmin", "kmax", "pmax", "enable", "rates", "mark", NULL};
    struct fy_node *v[7];
    if (!sim__fields(L, map, "ecn", keys, v))
        return false;
    s->ecn = true;
    if (v[3] && !sim__get_bool(L, v[3], "ecn enable", &s->ecn))
        return false;
    if (v[5]) {
        char buf[32];
        if (!sim__scalar(L, v[5], "ecn mark", buf, sizeof buf))
            return false;
        if (!strcmp(buf, "dequeue") || !strcmp(buf, "enqueue"))
            s->ecn_enqueue = buf[0] == 'e';
        else
            return sim__fail(L, v[5], "ecn mark: '%s' is not one of dequeue, enqueue", buf);
    }
    if (!ecn_thresholds(L, v, "ecn", &s->ecn_all))
        return false;
    if (!v[4])
        return true;
    if (!sim__expect_seq(L, v[4], "ecn rates"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(v[4], &it))) {
        static const char *const rkeys[] = {"kmin", "kmax", "pmax", "rate", NULL};
        struct fy_node *rv[5];
        if (!sim__fields(L, item, "ecn rates", rkeys, rv))
            return false;
        if (!rv[3])
            return sim__fail(L, item, "ecn rates: each entry needs the 'rate' it applies to");
        uint64_t rate;
        if (!sim__get_rate(L, rv[3], "ecn rates rate", &rate))
            return false;
        uint32_t i;
        for (i = 0; i < s->necn_rates && s->ecn_rates[i].rate != rate; i++)
            ;
        if (i == CFG_ECN_RATES)
            return sim__fail(L, item, "ecn rates: at most %d port speeds", CFG_ECN_RATES);
        if (i == s->necn_rates)
            s->ecn_rates[s->necn_rates++] = (struct cfg_ecn){.rate = rate, .pmax = -1};
        if (!ecn_thresholds(L, rv, "ecn rates", &s->ecn_rates[i]))
            return false;
    }
    return true;
}

bool sim__switch_fabric(struct loader *L, struct fy_node **v, struct cfg_switch *s)
{
    if (v[0] && !sim__get_size(L, v[0], "switch shared_buffer", 0, UINT64_C(1) << 40, &s->shared_buffer))
        return false;
    if (v[1] && !get_fraction(L, v[1], "switch alpha", 1.0 / 1024, 1024, &s->alpha))
        return false;
    if (v[2] && !sim__get_size(L, v[2], "switch reserved", 0, UINT64_C(1) << 30, &s->reserved))
        return false;
    if (v[6]) {
        if (!sim__get_time(L, v[6], "switch latency", &s->latency))
            return false;
        s->latency_set = true;
        if (s->latency > SIM_MS)
            return sim__fail(L, v[6], "switch latency: must lie between 0 and 1ms");
    }
    if (v[7]) {
        char buf[32];
        if (!sim__scalar(L, v[7], "switch forwarding", buf, sizeof buf))
            return false;
        if (!strcmp(buf, "cut-through") || !strcmp(buf, "store-and-forward"))
            s->cut_through = buf[0] == 'c';
        else
            return sim__fail(L, v[7], "switch forwarding: '%s' is not one of cut-through, store-and-forward",
                             buf);
    }
    return (!v[3] || scheduler(L, v[3], s)) && (!v[4] || pfc(L, v[4], s)) &&
           (!v[5] || ecn(L, v[5], s));
}

bool sim__switch_fabric_own(struct loader *L, struct fy_node **v, uint32_t *swp)
{
    bool any = false;
    for (unsigned i = 0; i < SIM_NSWITCH_FABRIC_KEYS; i++)
        any |= v[i] != NULL;
    if (!any)
        return true;
    struct cfg_fabric *f = &L->cfg->fabric;
    SIM_GROW(f->sw, f->capsw, f->nsw);
    f->sw[f->nsw] = f->sw[0];
    *swp = f->nsw++;
    return sim__switch_fabric(L, v, &f->sw[*swp]);
}

/* ---- NICs ----------------------------------------------------------------------- */
static bool dcqcn(struct loader *L, struct fy_node *map, struct cfg_dcqcn *d)
{
    static const char *const keys[] = {"enable", "g", "cnp_interval", "timer", "alpha_timer",
                                       "byte_counter", "f", "rai", "rhai", "min_rate",
                                       "cnp_dscp", "clamp_target", NULL};
    struct fy_node *v[13];
    if (!sim__fields(L, map, "dcqcn", keys, v))
        return false;
    if (v[0] && !sim__get_bool(L, v[0], "dcqcn enable", &d->enable))
        return false;
    if (v[1] && !get_fraction(L, v[1], "dcqcn g", 1e-6, 1, &d->g))
        return false;
    sim_time_t *times[] = {&d->cnp_interval, &d->timer, &d->alpha_timer};
    const char *tnames[] = {"dcqcn cnp_interval", "dcqcn timer", "dcqcn alpha_timer"};
    for (int i = 0; i < 3; i++) {
        if (!v[2 + i])
            continue;
        if (!sim__get_time(L, v[2 + i], tnames[i], times[i]))
            return false;
        if (i && !*times[i])
            return sim__fail(L, v[2 + i], "%s: must be above zero", tnames[i]);
    }
    if (v[5] && !sim__get_size(L, v[5], "dcqcn byte_counter", 64, UINT64_C(1) << 40, &d->byte_counter))
        return false;
    if (v[6] && !sim__get_u32(L, v[6], "dcqcn f", 1, 1000, &d->f))
        return false;
    if (v[7] && !sim__get_rate(L, v[7], "dcqcn rai", &d->rai))
        return false;
    if (v[8] && !sim__get_rate(L, v[8], "dcqcn rhai", &d->rhai))
        return false;
    if (v[9]) {
        if (!sim__get_rate(L, v[9], "dcqcn min_rate", &d->min_rate))
            return false;
        d->min_rate_pos = sim__pos(L, v[9]);
    }
    if (v[10]) {
        uint32_t x;
        if (!sim__get_u32(L, v[10], "dcqcn cnp_dscp", 0, 63, &x))
            return false;
        d->cnp_dscp = (uint8_t)x;
    }
    if (v[11] && !sim__get_bool(L, v[11], "dcqcn clamp_target", &d->clamp_target))
        return false;
    return true;
}

static bool hpcc(struct loader *L, struct fy_node *map, struct cfg_hpcc *h)
{
    static const char *const keys[] = {"eta", "max_stage", "rai", "base_rtt", "hops", "min_rate", NULL};
    struct fy_node *hv[7];
    if (!sim__fields(L, map, "hpcc", keys, hv))
        return false;
    if (hv[0] && !get_fraction(L, hv[0], "hpcc eta", 0.01, 1, &h->eta))
        return false;
    if (hv[1] && !sim__get_u32(L, hv[1], "hpcc max_stage", 0, 1000, &h->max_stage))
        return false;
    if (hv[2] && !sim__get_rate(L, hv[2], "hpcc rai", &h->rai))
        return false;
    if (hv[3]) {
        if (!sim__get_time(L, hv[3], "hpcc base_rtt", &h->base_rtt))
            return false;
        if (!h->base_rtt)
            return sim__fail(L, hv[3], "hpcc base_rtt: must be above zero (leave it out for the "
                                       "network's largest)");
    }
    if (hv[4] && !sim__get_u32(L, hv[4], "hpcc hops", 1, RDMA_IOAM_MAX_NODES, &h->hops))
        return false;
    if (hv[5]) {
        if (!sim__get_rate(L, hv[5], "hpcc min_rate", &h->min_rate))
            return false;
        h->min_rate_pos = sim__pos(L, hv[5]);
    }
    return true;
}

bool sim__nic_fabric(struct loader *L, struct fy_node **v, struct cfg_nic_fabric *n)
{
    if (v[0] && !sim__get_bool(L, v[0], "nic vlan", &n->vlan))
        return false;
    if (v[1] && !sim__get_bool(L, v[1], "nic pfc", &n->pfc))
        return false;
    if (v[2]) {
        if (is_keyword(v[2], "none"))
            n->rx_rate = 0;
        else if (!sim__get_rate(L, v[2], "nic rx_rate", &n->rx_rate))
            return false;
    }
    if (v[3] && !sim__get_size(L, v[3], "nic rx_buffer", 1, UINT64_C(1) << 40, &n->rx_buffer))
        return false;
    if (v[4] && !dcqcn(L, v[4], &n->dcqcn))
        return false;
    if (v[5]) {
        char buf[32];
        static const char *const names[] = {"dcqcn", "dctcp", "none", "timely", "hpcc"};
        if (!sim__scalar(L, v[5], "nic cc", buf, sizeof buf))
            return false;
        unsigned i;
        for (i = 0; i < 5 && strcmp(buf, names[i]); i++)
            ;
        if (i == 5)
            return sim__fail(L, v[5], "nic cc: '%s' is not one of dcqcn, dctcp, timely, hpcc, none", buf);
        n->cc = (uint8_t)i;
    }
    if (v[6]) {
        static const char *const keys[] = {"g", "rai", "min_rate", NULL};
        struct fy_node *dv[4];
        if (!sim__fields(L, v[6], "dctcp", keys, dv))
            return false;
        if (dv[0] && !get_fraction(L, dv[0], "dctcp g", 1e-6, 1, &n->dctcp.g))
            return false;
        if (dv[1] && !sim__get_rate(L, dv[1], "dctcp rai", &n->dctcp.rai))
            return false;
        if (dv[2]) {
            if (!sim__get_rate(L, dv[2], "dctcp min_rate", &n->dctcp.min_rate))
                return false;
            n->dctcp.min_rate_pos = sim__pos(L, dv[2]);
        }
    }
    if (v[7]) {
        static const char *const keys[] = {"alpha", "beta", "t_low", "t_high", "min_rtt", "rai",
                                           "min_rate", NULL};
        struct fy_node *tv[8];
        struct cfg_timely *t = &n->timely;
        if (!sim__fields(L, v[7], "timely", keys, tv))
            return false;
        if (tv[0] && !get_fraction(L, tv[0], "timely alpha", 1e-6, 1, &t->alpha))
            return false;
        if (tv[1] && !get_fraction(L, tv[1], "timely beta", 1e-6, 1, &t->beta))
            return false;
        sim_time_t *times[] = {&t->t_low, &t->t_high, &t->min_rtt};
        const char *tn[] = {"timely t_low", "timely t_high", "timely min_rtt"};
        for (int i = 0; i < 3; i++)
            if (tv[2 + i] && !sim__get_time(L, tv[2 + i], tn[i], times[i]))
                return false;
        if (!t->min_rtt)
            return sim__fail(L, tv[4], "timely min_rtt: must be above zero");
        if (t->t_high <= t->t_low)
            return sim__fail(L, tv[3] ? tv[3] : tv[2], "timely: t_high must lie above t_low");
        if (tv[5] && !sim__get_rate(L, tv[5], "timely rai", &t->rai))
            return false;
        if (tv[6]) {
            if (!sim__get_rate(L, tv[6], "timely min_rate", &t->min_rate))
                return false;
            t->min_rate_pos = sim__pos(L, tv[6]);
        }
    }
    return !v[8] || hpcc(L, v[8], &n->hpcc);
}

/* ---- the priority map, the monitor, faults -------------------------------------- */
static bool qos(struct loader *L, struct fy_node *map)
{
    static const char *const keys[] = {"trust", "dscp_map", NULL};
    struct fy_node *v[3];
    struct cfg_fabric *f = &L->cfg->fabric;
    if (!sim__fields(L, map, "qos", keys, v))
        return false;
    if (v[0]) {
        char buf[16];
        if (!sim__scalar(L, v[0], "qos trust", buf, sizeof buf))
            return false;
        if (strcmp(buf, "dscp") && strcmp(buf, "pcp"))
            return sim__fail(L, v[0], "qos trust: '%s' is not dscp or pcp", buf);
        f->trust_pcp = !strcmp(buf, "pcp");
    }
    if (!v[1])
        return true;
    if (!sim__expect_map(L, v[1], "qos dscp_map"))
        return false;
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(v[1], &it))) {
        struct fy_node *k = fy_node_pair_key(pair), *val = fy_node_pair_value(pair);
        uint32_t dscp, prio;
        if (!k || !val)
            return sim__fail(L, k ? k : v[1], "qos dscp_map: write DSCP: PRIORITY pairs");
        if (!sim__get_u32(L, k, "qos dscp_map DSCP", 0, 63, &dscp) ||
            !sim__get_u32(L, val, "qos dscp_map priority", 0, SIM_PRIOS - 1, &prio))
            return false;
        f->dscp_map[dscp] = (uint8_t)prio;
    }
    return true;
}

static bool get_interval(struct loader *L, struct fy_node *n, const char *what, sim_time_t *t)
{
    if (is_keyword(n, "off")) {
        *t = 0;
        return true;
    }
    if (!sim__get_time(L, n, what, t))
        return false;
    if (!*t)
        return sim__fail(L, n, "%s: must be above zero (or off)", what);
    return true;
}

static bool monitor(struct loader *L, struct fy_node *map)
{
    static const char *const keys[] = {"sample", "deadlock_check", NULL};
    struct fy_node *v[3];
    struct cfg_fabric *f = &L->cfg->fabric;
    return sim__fields(L, map, "monitor", keys, v) &&
           (!v[0] || get_interval(L, v[0], "monitor sample", &f->sample)) &&
           (!v[1] || get_interval(L, v[1], "monitor deadlock_check", &f->deadlock_check));
}

static bool faults(struct loader *L, struct fy_node *seq)
{
    static const char *const keys[] = {"a", "b", "down", "up", NULL};
    struct sim_config *cfg = L->cfg;
    struct cfg_fabric *f = &cfg->fabric;
    if (!sim__expect_seq(L, seq, "faults"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[5];
        if (!sim__fields(L, item, "fault", keys, v))
            return false;
        if (!v[0] || !v[1] || !v[2])
            return sim__fail(L, item, "fault: needs the link's ends 'a' and 'b', and 'down'");
        uint32_t a, b;
        struct cfg_fault flt = {.up = SIM_TIME_NEVER};
        if (!sim__get_node(L, v[0], "fault a", &a) || !sim__get_node(L, v[1], "fault b", &b) ||
            !sim__get_time(L, v[2], "fault down", &flt.down) ||
            (v[3] && !sim__get_time(L, v[3], "fault up", &flt.up)))
            return false;
        if (flt.up <= flt.down)
            return sim__fail(L, v[3], "fault up: the link must come up after it goes down");
        size_t l;
        for (l = 0; l < cfg->nlinks; l++)
            if ((cfg->links[l].a == a && cfg->links[l].b == b) ||
                (cfg->links[l].a == b && cfg->links[l].b == a))
                break;
        if (l == cfg->nlinks)
            return sim__fail(L, v[1], "fault: no link joins '%s' and '%s'", cfg->nodes[a].name,
                             cfg->nodes[b].name);
        flt.link = (uint32_t)l;
        SIM_GROW(f->faults, f->capfaults, f->nfaults);
        f->faults[f->nfaults++] = flt;
    }
    return true;
}

bool sim__top_fabric(struct loader *L, struct fy_node **v)
{
    return (!v[0] || qos(L, v[0])) && (!v[1] || monitor(L, v[1])) && (!v[2] || faults(L, v[2]));
}

/* ---- checks that need the links ---------------------------------------------------- */
bool sim__check_fabric(struct loader *L)
{
    struct sim_config *cfg = L->cfg;
    uint64_t *need = sim__xcalloc(cfg->nnodes, sizeof *need);
    uint64_t *frame = sim__xcalloc(cfg->nnodes, sizeof *frame);
    uint64_t *rate = sim__xcalloc(cfg->nnodes, sizeof *rate);
    uint32_t *nports = sim__xcalloc(cfg->nnodes, sizeof *nports);
    bool ok = true;
    for (size_t l = 0; l < cfg->nlinks; l++) {
        const struct cfg_link *lk = &cfg->links[l];
        uint32_t ends[2] = {lk->a, lk->b};
        for (int e = 0; e < 2; e++) {
            const struct cfg_node *n = &cfg->nodes[ends[e]];
            uint64_t largest = sim__max_frame(&lk->p);
            if (largest > frame[ends[e]])
                frame[ends[e]] = largest;
            rate[ends[e]] = lk->p.rate;
            nports[ends[e]]++;
            if (n->kind == CFG_HOST) {
                need[ends[e]] = sim__pfc_headroom(&lk->p);
                continue;
            }
            const struct cfg_switch *s = &cfg->fabric.sw[n->swp];
            uint64_t headroom = s->headroom ? s->headroom : sim__pfc_headroom_switch(&lk->p, s->latency);
            need[ends[e]] += SIM_PRIOS * s->reserved +
                             headroom * (uint64_t)__builtin_popcount(s->lossless);
        }
    }
    for (size_t i = 0; ok && i < cfg->nnodes; i++) {
        const struct cfg_node *n = &cfg->nodes[i];
        if (n->kind == CFG_HOST) {
            const struct cfg_nic_fabric *nf = &n->nic.fab;
            uint64_t want = (nf->pfc ? need[i] : 0) + 2 * frame[i];
            /* the minimum rate of the congestion control the NIC runs */
            const char *cc = nf->cc == CFG_CC_DCTCP    ? "dctcp"
                             : nf->cc == CFG_CC_TIMELY ? "timely"
                             : nf->cc == CFG_CC_HPCC   ? "hpcc"
                                                       : "dcqcn";
            uint64_t min_rate = nf->cc == CFG_CC_DCTCP    ? nf->dctcp.min_rate
                                : nf->cc == CFG_CC_TIMELY ? nf->timely.min_rate
                                : nf->cc == CFG_CC_HPCC   ? nf->hpcc.min_rate
                                                          : nf->dcqcn.min_rate;
            const struct cfg_pos *at = nf->cc == CFG_CC_DCTCP    ? &nf->dctcp.min_rate_pos
                                       : nf->cc == CFG_CC_TIMELY ? &nf->timely.min_rate_pos
                                       : nf->cc == CFG_CC_HPCC   ? &nf->hpcc.min_rate_pos
                                                                 : &nf->dcqcn.min_rate_pos;
            bool on = nf->cc != CFG_CC_NONE && nf->cc != CFG_CC_IBCC &&
                      (nf->cc != CFG_CC_DCQCN || nf->dcqcn.enable);
            if (on && nf->cc == CFG_CC_HPCC && !n->nic.ipv6) {
                ok = sim__fail_at(L, &n->pos, "host '%s': nic cc hpcc needs ipv6: true: its telemetry "
                                              "rides in an IPv6 hop-by-hop header", n->name);
            } else if (on && rate[i] && min_rate > rate[i]) {
                char r[32], l[32];
                snprintf(r, sizeof r, "%g Gb/s", (double)min_rate / 1e9);
                snprintf(l, sizeof l, "%g Gb/s", (double)rate[i] / 1e9);
                ok = sim__fail_at(L, at->file ? at : &n->pos,
                                  "nic %s min_rate: %s is above the rate of host '%s''s link (%s): "
                                  "no rate cut could ever reach it", cc, r, n->name, l);
            } else if (nf->rx_rate && nf->rx_buffer < want)
                ok = sim__fail_at(L, &n->pos, "host '%s': nic rx_buffer %llu is too small: it needs "
                                              "%llu bytes (%s)", n->name,
                                  (unsigned long long)nf->rx_buffer, (unsigned long long)want,
                                  nf->pfc ? "PFC headroom and two largest frames" : "two largest frames");
            continue;
        }
        const struct cfg_switch *s = &cfg->fabric.sw[n->swp];
        if (cfg->ib.enable)
            continue; /* buffers are counted in credits per VL (load_ib.c) */
        if (s->lossless && !s->shared_buffer)
            ok = sim__fail_at(L, &n->pos, "switch '%s': pfc needs a shared_buffer", n->name);
        else if (s->shared_buffer && s->shared_buffer < need[i] + 2 * frame[i])
            ok = sim__fail_at(L, &n->pos, "switch '%s': shared_buffer %llu is too small: its ports' "
                                          "reserved space and PFC headroom take %llu bytes, and the "
                                          "pool needs at least two largest frames",
                              n->name, (unsigned long long)s->shared_buffer,
                              (unsigned long long)need[i]);
        if (!ok || !s->ecn)
            continue;
        /* ECN thresholds a queue can never reach */
        uint64_t pool = s->shared_buffer > need[i] ? s->shared_buffer - need[i] : 0;
        uint64_t cap = sim__queue_cap(s, n->buffer, pool, nports[i]);
        const char *why = !s->shared_buffer ? "its port buffer"
                          : s->lossless     ? "its shared buffer"
                                            : "alpha x pool / (1 + alpha): its lossy dynamic threshold";
        for (uint32_t k = 0; ok && k <= s->necn_rates; k++) {
            const struct cfg_ecn *e = k ? &s->ecn_rates[k - 1] : &s->ecn_all;
            if (e->kmax > cap)
                ok = sim__fail_at(L, &e->kmax_pos, "ecn kmax: %llu bytes is more than a queue of switch "
                                                   "'%s' can ever hold (%llu bytes, %s): frames would "
                                                   "be dropped before every one is marked",
                                  (unsigned long long)e->kmax, n->name, (unsigned long long)cap, why);
            else if (e->kmin >= cap)
                ok = sim__fail_at(L, &e->kmin_pos, "ecn kmin: %llu bytes is more than a queue of switch "
                                                   "'%s' can ever hold (%llu bytes, %s): nothing would "
                                                   "ever be marked",
                                  (unsigned long long)e->kmin, n->name, (unsigned long long)cap, why);
        }
    }
    free(need);
    free(frame);
    free(rate);
    free(nports);
    return ok;
}
