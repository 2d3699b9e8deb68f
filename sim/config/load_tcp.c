/* load_tcp.c - the NIC keys of the transports over TCP: nic.transport,
 * nic.mpa_markers and nic.tcp (docs/config.md, "iWARP"), and what the
 * host's CPU spends on communication, nic.host_cost (docs/config.md,
 * "Plain TCP and host costs").
 */
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"

static const char *const transport_names[] = {
#define CFG__TRANSPORT_NAME(name, str) str,
    CFG_TRANSPORTS(CFG__TRANSPORT_NAME)
#undef CFG__TRANSPORT_NAME
};

static const char *const tcp_cc_names[] = {
#define CFG__TCP_CC_NAME(name, str) str,
    CFG_TCP_CCS(CFG__TCP_CC_NAME)
#undef CFG__TCP_CC_NAME
};

void sim__cfg_nic_tcp_defaults(struct cfg_nic *nic)
{
    nic->transport = CFG_TRANSPORT_ROCEV2;
    nic->mpa_markers = false; /* as most RNICs: RFC 6581 lets a peer refuse them */
    nic->tcp = (struct cfg_tcp){
        .cc = CFG_TCP_CC_NEWRENO,
        .sack = true,
        .init_cwnd = 10,                /* RFC 6928 */
        .window = UINT64_C(6) << 20,    /* Linux's tcp_rmem maximum */
        .min_rto = 200 * SIM_MS,        /* Linux's TCP_RTO_MIN */
        .initial_rto = SIM_S,           /* RFC 6298 2.1 */
        .max_rto = 120 * SIM_S,         /* Linux's TCP_RTO_MAX; RFC 6298 2.5 allows 60 s and up */
        .delayed_ack = 40 * SIM_MS,     /* Linux's TCP_DELACK_MIN; RFC 5681 4.2: under 500 ms */
        .retries = 15,                  /* Linux's tcp_retries2 */
    };
    nic->cost = (struct cfg_host_cost){
        /* a system call's entry and exit alone take about 100 ns, several
         * hundred since the 2018 Meltdown and Spectre mitigations (KPTI's
         * page-table switch); with the socket layer, an assumption in
         * that range */
        .syscall = 500 * SIM_NS,
        /* Cai et al., "Understanding Host Network Stack Overheads",
         * SIGCOMM 2021: one receiving core carries about 42 Gb/s of a long
         * flow, about half of its cycles copying from kernel to
         * application buffers: a copy at about 84 Gb/s ... */
        .copy_rate = UINT64_C(84000000000),
        /* ... and the other half for the rest of the stack: driver,
         * IP/TCP, the interrupt's share: 8960 x 8 bits / 42 Gb/s / 2 per
         * 8960-octet segment (the 9000-octet MTU's) */
        .segment = 853 * SIM_NS,
        /* kernel bypass: a WQE written and a doorbell (one MMIO write),
         * a completion entry read from memory; no system call, no copy;
         * assumptions of the order of a few cache misses */
        .post = 100 * SIM_NS,
        .poll = 50 * SIM_NS,
    };
}

static bool pick(struct loader *L, struct fy_node *n, const char *what, const char *const *names,
                 unsigned count, uint8_t *out)
{
    char buf[32];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    for (unsigned i = 0; i < count; i++)
        if (!strcmp(buf, names[i])) {
            *out = (uint8_t)i;
            return true;
        }
    char list[128] = "";
    for (unsigned i = 0; i < count; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, names[i]);
    }
    return sim__fail(L, n, "%s: '%s' is not one of %s", what, buf, list);
}

static bool time_in(struct loader *L, struct fy_node *n, const char *what, sim_time_t lo,
                    sim_time_t hi, sim_time_t *v)
{
    if (!sim__get_time(L, n, what, v))
        return false;
    if (*v < lo || *v > hi)
        return sim__fail(L, n, "%s: must lie between %llu ns and %llu s", what,
                         (unsigned long long)(lo / SIM_NS), (unsigned long long)(hi / SIM_S));
    return true;
}

static bool tcp(struct loader *L, struct fy_node *map, struct cfg_tcp *t)
{
    static const char *const keys[] = {"cc", "sack", "init_cwnd", "window", "min_rto",
                                       "initial_rto", "max_rto", "delayed_ack", "retries", NULL};
    struct fy_node *v[9];
    if (!sim__fields(L, map, "nic tcp", keys, v))
        return false;
    if (v[0] && !pick(L, v[0], "nic tcp cc", tcp_cc_names, CFG_TCP_CC_COUNT, &t->cc))
        return false;
    if (v[1] && !sim__get_bool(L, v[1], "nic tcp sack", &t->sack))
        return false;
    if (v[2] && !sim__get_u32(L, v[2], "nic tcp init_cwnd", 1, 1000, &t->init_cwnd))
        return false;
    /* RFC 7323 2.3: a window scale of at most 14, a window below 1 GiB */
    if (v[3] && !sim__get_size(L, v[3], "nic tcp window", 4096, (UINT64_C(1) << 30) - 1, &t->window))
        return false;
    if (v[4] && !time_in(L, v[4], "nic tcp min_rto", SIM_US, 10 * SIM_S, &t->min_rto))
        return false;
    if (v[5] && !time_in(L, v[5], "nic tcp initial_rto", SIM_US, 10 * SIM_S, &t->initial_rto))
        return false;
    if (v[6] && !time_in(L, v[6], "nic tcp max_rto", SIM_US, 1000 * SIM_S, &t->max_rto))
        return false;
    if (v[7] && !time_in(L, v[7], "nic tcp delayed_ack", SIM_NS, SIM_S, &t->delayed_ack))
        return false;
    if (v[8] && !sim__get_u32(L, v[8], "nic tcp retries", 1, 30, &t->retries))
        return false;
    if (t->max_rto < t->min_rto)
        return sim__fail(L, v[6] ? v[6] : v[4], "nic tcp: max_rto must not lie below min_rto");
    return true;
}

static bool host_cost(struct loader *L, struct fy_node *map, struct cfg_host_cost *c)
{
    static const char *const keys[] = {"syscall", "copy_rate", "segment", "post", "poll", NULL};
    struct fy_node *v[5];
    if (!sim__fields(L, map, "nic host_cost", keys, v))
        return false;
    sim_time_t *times[] = {&c->syscall, NULL, &c->segment, &c->post, &c->poll};
    const char *names[] = {"nic host_cost syscall", NULL, "nic host_cost segment", "nic host_cost post",
                           "nic host_cost poll"};
    for (int i = 0; i < 5; i++) {
        if (!v[i] || !times[i])
            continue;
        if (!sim__get_time(L, v[i], names[i], times[i]))
            return false;
        if (*times[i] > SIM_MS)
            return sim__fail(L, v[i], "%s: must lie between 0 and 1ms", names[i]);
    }
    if (v[1] && !sim__get_rate(L, v[1], "nic host_cost copy_rate", &c->copy_rate))
        return false;
    return true;
}

bool sim__nic_tcp(struct loader *L, struct fy_node **v, struct cfg_nic *nic)
{
    if (v[0] && !pick(L, v[0], "nic transport", transport_names, CFG_TRANSPORT_COUNT,
                      &nic->transport))
        return false;
    if (v[1] && !sim__get_bool(L, v[1], "nic mpa_markers", &nic->mpa_markers))
        return false;
    if (v[3] && !host_cost(L, v[3], &nic->cost))
        return false;
    return !v[2] || tcp(L, v[2], &nic->tcp);
}

/* What the iWARP model does not offer, refused with the message's line:
 * immediate data and atomics (RFC 7306 exists, the model has not got it),
 * two ends of a connection on different transports, and the VLAN tag. */
bool sim__check_iwarp(struct loader *L)
{
    const struct sim_config *cfg = L->cfg;
    for (size_t i = 0; i < cfg->nnodes; i++) {
        const struct cfg_node *n = &cfg->nodes[i];
        if (n->kind != CFG_HOST || !cfg_transport_tcp(n->nic.transport))
            continue;
        if (n->nic.fab.vlan)
            return sim__fail_at(L, &n->pos, "host %s: nic vlan is not offered with transport %s",
                                n->name, transport_names[n->nic.transport]);
    }
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        uint8_t a = cfg->nodes[m->src].nic.transport, b = cfg->nodes[m->dst].nic.transport;
        if (a != b)
            return sim__fail_at(L, &m->pos, "message %zu: %s (transport %s) and %s (%s) cannot connect",
                                i, cfg->nodes[m->src].name, transport_names[a],
                                cfg->nodes[m->dst].name, transport_names[b]);
        if (a == CFG_TRANSPORT_IWARP && m->op != SIM_OP_WRITE && m->op != SIM_OP_READ &&
            m->op != SIM_OP_SEND && m->op != SIM_OP_SEND_INV)
            return sim__fail_at(L, &m->pos,
                                "message %zu: op %s is not offered over iwarp (write, read, send, send_inv)",
                                i, sim__op_name(m->op));
        /* a socket carries bytes one way: a Read or an atomic would be a
         * request and a reply of the application's own protocol */
        if (a == CFG_TRANSPORT_TCP && m->op != SIM_OP_WRITE && m->op != SIM_OP_SEND)
            return sim__fail_at(L, &m->pos, "message %zu: op %s is not offered over tcp (write, send)", i,
                                sim__op_name(m->op));
    }
    return true;
}
