/* partition.c - which MPI rank runs which node, and the lookahead that the
 * cut links allow (docs/parallel.md).
 *
 * Nodes meet only through links, so a network splits along links: every
 * node, with its ports, belongs to one part. A frame crossing a cut link
 * reaches the other part no sooner than the link's delay after the event
 * that sent it (port.c: deliver), so the smallest delay of a cut link is
 * how far the parts may run ahead of each other: the lookahead of
 * conservative synchronisation (Chandy and Misra; ns-3's distributed
 * simulator takes the same bound from its point-to-point channels). A cut
 * link without delay would allow none, and is refused.
 *
 * Automatic partition, in two steps:
 *   1. leaf groups: every switch with hosts (a top-of-rack or edge switch)
 *      takes its hosts along; leaves are dealt to parts in their order,
 *      contiguous and balanced by node count, so a generated fat-tree's
 *      pods (its leaves are numbered pod by pod) stay together;
 *   2. the other switches (aggregation, spine, core) join the part they
 *      have the most links to; a tie (a core switch has one link to each
 *      pod) goes to the part with the fewest links so far, which spreads
 *      the core evenly.
 * A host attached to no switch (a direct host-to-host link) goes with its
 * peer. Where servers join their NIC hosts through an NVSwitch (the rail
 * generator with NVLink), the hosts meet there and not only through
 * links, so a server's hosts are one group dealt as a whole, and every
 * switch joins a part by step 2. The configuration's `partition:` key
 * overrides it, but may not split such a server (split_server).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/units.h"
#include "engine/util.h"
#include "network/network.h"
#include "net/net.h"

#define UNSET UINT32_MAX

/* The switch a host hangs from, or its peer host, through its first link. */
static uint32_t host_anchor(const struct sim_network *net, uint32_t node)
{
    const struct sim_node *n = net->nodes[node];
    return n->nports ? n->ports[0]->peer->node->index : node;
}

static void deal_leaves(const struct sim_network *net, unsigned nparts, uint32_t *part)
{
    const struct sim_config *cfg = net->cfg;
    size_t nnodes = cfg->nnodes;
    /* how many nodes each leaf switch carries: itself and its hosts */
    uint32_t *weight = sim__xcalloc(nnodes, sizeof *weight);
    size_t total = 0;
    for (size_t i = 0; i < nnodes; i++) {
        if (cfg->nodes[i].kind != CFG_HOST)
            continue;
        uint32_t a = host_anchor(net, (uint32_t)i);
        if (!weight[a])
            weight[a] = 1, total++;
        weight[a]++;
        total++;
    }
    size_t seen = 0;
    for (size_t i = 0; i < nnodes; i++) {
        if (!weight[i])
            continue;
        /* the part whose share of the total this leaf's middle falls in */
        part[i] = (uint32_t)((2 * seen + weight[i]) * nparts / (2 * total));
        seen += weight[i];
    }
    for (size_t i = 0; i < nnodes; i++)
        if (cfg->nodes[i].kind == CFG_HOST)
            part[i] = part[host_anchor(net, (uint32_t)i)];
    free(weight);
}

/* With NVSwitches: servers (a host without one is a server of its own)
 * dealt to parts in their order, contiguous and balanced by host count. */
static void deal_servers(const struct sim_network *net, unsigned nparts, uint32_t *part)
{
    const struct sim_config *cfg = net->cfg;
    size_t hosts = 0, seen = 0;
    for (size_t i = 0; i < cfg->nnodes; i++)
        hosts += cfg->nodes[i].kind == CFG_HOST;
    /* a server's hosts count from its first: they follow it in the part */
    uint32_t *first = sim__xcalloc(cfg->nnvswitches + 1, sizeof *first);
    uint32_t *size = sim__xcalloc(cfg->nnvswitches + 1, sizeof *size);
    for (size_t i = 0; i < cfg->nnodes; i++)
        if (cfg->nodes[i].kind == CFG_HOST && cfg->nodes[i].nvswitch)
            size[cfg->nodes[i].nvswitch]++;
    for (size_t i = 0; i < cfg->nnodes; i++) {
        if (cfg->nodes[i].kind != CFG_HOST)
            continue;
        uint32_t s = cfg->nodes[i].nvswitch;
        if (s && first[s]) {
            part[i] = part[first[s] - 1];
            continue;
        }
        uint32_t weight = s ? size[s] : 1;
        part[i] = (uint32_t)((2 * seen + weight) * nparts / (2 * hosts));
        seen += weight;
        if (s)
            first[s] = (uint32_t)i + 1;
    }
    free(first);
    free(size);
}

static void place_inner_switches(const struct sim_network *net, unsigned nparts, uint32_t *part)
{
    size_t nnodes = net->cfg->nnodes;
    uint64_t *links = sim__xcalloc(nparts, sizeof *links);
    uint32_t *votes = sim__xcalloc(nparts, sizeof *votes);
    for (size_t i = 0; i < nnodes; i++)
        if (part[i] != UNSET)
            links[part[i]] += net->nodes[i]->nports;
    for (bool placed = true; placed;) {
        placed = false;
        for (size_t i = 0; i < nnodes; i++) {
            const struct sim_node *n = net->nodes[i];
            if (part[i] != UNSET)
                continue;
            memset(votes, 0, nparts * sizeof *votes);
            uint32_t most = 0;
            for (uint32_t k = 0; k < n->nports; k++) {
                uint32_t p = part[n->ports[k]->peer->node->index];
                if (p != UNSET && ++votes[p] > most)
                    most = votes[p];
            }
            if (!most)
                continue; /* no placed neighbour yet: a later sweep */
            uint32_t best = UNSET;
            for (uint32_t p = 0; p < nparts; p++)
                if (votes[p] == most && (best == UNSET || links[p] < links[best]))
                    best = p;
            part[i] = best;
            links[best] += n->nports;
            placed = true;
        }
    }
    /* a switch no host can reach: the lightest part */
    for (size_t i = 0; i < nnodes; i++)
        if (part[i] == UNSET) {
            uint32_t best = 0;
            for (uint32_t p = 1; p < nparts; p++)
                if (links[p] < links[best])
                    best = p;
            part[i] = best;
            links[best] += net->nodes[i]->nports;
        }
    free(links);
    free(votes);
}

/* A server whose NVSwitch carries steps (net->nvswitches) runs on one
 * rank: its steps go from host to host through it, never over a link. */
static int split_server(const struct sim_network *net, const struct sim_partition *pt, char *err,
                        size_t errcap)
{
    const struct sim_config *cfg = net->cfg;
    if (!net->nvswitches)
        return 0;
    uint32_t *first = sim__xcalloc(cfg->nnvswitches + 1, sizeof *first); /* a host of each, + 1 */
    int bad = 0;
    for (size_t i = 0; !bad && i < cfg->nnodes; i++) {
        uint32_t k = cfg->nodes[i].nvswitch;
        if (cfg->nodes[i].kind != CFG_HOST || !k)
            continue;
        if (!first[k]) {
            first[k] = (uint32_t)i + 1;
            continue;
        }
        uint32_t h = first[k] - 1;
        if (pt->node_part[h] == pt->node_part[i])
            continue;
        const struct cfg_node *n = &cfg->nodes[i];
        snprintf(err, errcap,
                 "%s:%d:%d: partition: hosts %s and %s share an NVSwitch that carries collective steps, "
                 "but are on ranks %u and %u: put a server's hosts on one rank",
                 n->pos.file, n->pos.line, n->pos.col, cfg->nodes[h].name, n->name, pt->node_part[h],
                 pt->node_part[i]);
        bad = -1;
    }
    free(first);
    return bad;
}

int sim__partition(const struct sim_network *net, unsigned nparts, struct sim_partition *pt,
                   char *err, size_t errcap)
{
    const struct sim_config *cfg = net->cfg;
    memset(pt, 0, sizeof *pt);
    pt->nparts = nparts;
    pt->node_part = sim__xcalloc(cfg->nnodes, sizeof *pt->node_part);
    if (cfg->npartition) {
        for (size_t i = 0; i < cfg->nnodes; i++)
            pt->node_part[i] = cfg->partition[i] % nparts;
        if (split_server(net, pt, err, errcap)) {
            sim__partition_free(pt);
            return -1;
        }
    } else {
        for (size_t i = 0; i < cfg->nnodes; i++)
            pt->node_part[i] = UNSET;
        if (cfg->nnvswitches)
            deal_servers(net, nparts, pt->node_part);
        else
            deal_leaves(net, nparts, pt->node_part);
        place_inner_switches(net, nparts, pt->node_part);
    }
    pt->lookahead = SIM_TIME_NEVER;
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port *p = &net->ports[i];
        if (pt->node_part[p->node->index] == pt->node_part[p->peer->node->index])
            continue;
        pt->cut_ports++;
        if (p->delay < pt->lookahead)
            pt->lookahead = p->delay;
        if (!p->delay) {
            const struct cfg_link *l = &cfg->links[p->link];
            snprintf(err, errcap,
                     "%s:%d:%d: the link %s - %s has no delay and joins nodes on ranks %u and %u: a "
                     "cut link without delay allows no lookahead (give it a delay, or put both ends "
                     "on one rank with the partition key)",
                     l->pos.file, l->pos.line, l->pos.col, cfg->nodes[l->a].name, cfg->nodes[l->b].name,
                     pt->node_part[l->a], pt->node_part[l->b]);
            sim__partition_free(pt);
            return -1;
        }
    }
    return 0;
}

void sim__partition_free(struct sim_partition *pt)
{
    free(pt->node_part);
    pt->node_part = NULL;
}

void sim_network_print_partition(const struct sim_network *net, unsigned nparts, FILE *f)
{
    struct sim_partition pt;
    char err[512];
    if (sim__partition(net, nparts, &pt, err, sizeof err)) {
        fprintf(f, "  partition  %s\n", err);
        return;
    }
    const struct sim_config *cfg = net->cfg;
    char la[32];
    sim__format_time(pt.lookahead, la, sizeof la);
    fprintf(f, "  partition  %u ranks, %zu cut links, lookahead %s\n", nparts, pt.cut_ports / 2,
            pt.cut_ports ? la : "unbounded");
    for (unsigned r = 0; r < nparts; r++) {
        size_t hosts = 0, switches = 0, cut = 0;
        for (size_t i = 0; i < cfg->nnodes; i++)
            if (pt.node_part[i] == r)
                cfg->nodes[i].kind == CFG_HOST ? hosts++ : switches++;
        for (size_t i = 0; i < net->nports; i++) {
            const struct sim_port *p = &net->ports[i];
            cut += pt.node_part[p->node->index] == r && pt.node_part[p->peer->node->index] != r;
        }
        fprintf(f, "  rank %-4u  %zu hosts, %zu switches, %zu cut links:", r, hosts, switches, cut);
        size_t shown = 0;
        for (size_t i = 0; i < cfg->nnodes; i++)
            if (pt.node_part[i] == r && shown++ < 8)
                fprintf(f, " %s", cfg->nodes[i].name);
        fprintf(f, "%s\n", shown > 8 ? " ..." : "");
    }
    sim__partition_free(&pt);
}
