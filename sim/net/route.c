/* route.c - shortest-path routes computed from the graph, with equal-cost
 * multipath: a breadth-first search from every host gives each switch the
 * ports one hop closer to each host. Among them (topology.routing):
 *   ecmp      a flow hash picks, so one queue pair's frames always take one
 *             path and arrive in order;
 *   dmodk     the destination picks, fixed when routes are built: a switch
 *             t hops above the nearest host, with n equal-cost ports, takes
 *             port (dst / n^(t-1)) mod n. On a fat-tree this is
 *             destination-mod-k (the two-level tables of Al-Fares et al.,
 *             SIGCOMM 2008, section 3.4, and OpenSM's ftree routing): edge
 *             switches spread by dst mod k/2, aggregation switches by
 *             (dst / (k/2)) mod k/2, so hosts with consecutive addresses
 *             take disjoint paths and a shift permutation (i -> i + s) has
 *             no two flows on one link; elsewhere, a deterministic spread;
 *   spray and adaptive pick per packet in the switch (fabric/switch.c),
 *             from the set sim__route_set returns.
 * Links that are down (fault.c) are left out; routes are built again when
 * one goes down or comes up. A switch whose row of routes is arithmetic
 * (every switch of a fat-tree) gets a rule that computes it (net.h,
 * struct sim_route_rule), found from the row and checked against it for
 * every host, so that a hop need not read the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "net/net.h"

uint32_t sim__flow_hash(uint32_t src_host, uint32_t dst_host, uint16_t sport, uint32_t salt)
{
    uint64_t k = (uint64_t)src_host << 40 ^ (uint64_t)dst_host << 16 ^ sport;
    return (uint32_t)(sim__mix64(k ^ (uint64_t)salt << 32 ^ salt) >> 32);
}

/* The set id of a switch slot's code (not SIM_ROUTE_NONE). */
static uint32_t set_of_code(const struct sim_routes *r, const struct sim_node *sw, uint32_t slot, uint32_t code)
{
    return code < sw->nports ? r->sets_base[slot] + code : r->multi[r->multi_base[slot] + code - sw->nports];
}

uint16_t sim__route_table_code(const struct sim_network *net, const struct sim_node *sw, uint32_t host)
{
    const struct sim_routes *r = &net->routes;
    return r->code_of[(size_t)r->slot_of_node[sw->index] * net->nhosts + host];
}

static uint32_t code_for(const struct sim_routes *r, uint32_t slot, uint32_t nhosts, uint32_t host)
{
    const struct sim_route_rule *u = &r->rule[slot];
    return u->fits ? sim__route_rule_code(u, host) : r->code_of[(size_t)slot * nhosts + host];
}

uint32_t sim__route(const struct sim_network *net, const struct sim_node *sw, uint32_t host,
                    uint32_t hash)
{
    const struct sim_routes *r = &net->routes;
    uint32_t slot = r->slot_of_node[sw->index];
    uint32_t code = code_for(r, slot, net->nhosts, host);
    if (code == SIM_ROUTE_NONE)
        return UINT32_MAX;
    if (code < sw->nports) /* one port: the code is its index */
        return code;
    const struct sim_port_set *s = &r->sets[set_of_code(r, sw, slot, code)];
    return r->ports[s->off + hash % s->n];
}

const uint32_t *sim__route_set(const struct sim_network *net, const struct sim_node *sw,
                               uint32_t host, uint32_t *n)
{
    const struct sim_routes *r = &net->routes;
    uint32_t slot = r->slot_of_node[sw->index];
    uint32_t code = code_for(r, slot, net->nhosts, host);
    if (code == SIM_ROUTE_NONE)
        return NULL;
    uint32_t id = set_of_code(r, sw, slot, code);
    *n = r->sets[id].n;
    return &r->ports[r->sets[id].off];
}

/* dmodk: the index among n equal-cost ports of a switch `tier` hops above
 * its nearest host, for destination host h. */
uint32_t sim__dmodk(uint32_t h, uint32_t n, uint32_t tier)
{
    uint64_t div = 1;
    for (uint32_t t = 1; t < tier && div <= h; t++)
        div *= n;
    return (uint32_t)(h / div % n);
}

void sim__route_tiers(const struct sim_network *net, uint32_t *tier, uint32_t *queue)
{
    const struct sim_config *cfg = net->cfg;
    uint32_t qh = 0, qt = 0;
    for (size_t i = 0; i < cfg->nnodes; i++) {
        tier[i] = cfg->nodes[i].kind == CFG_HOST ? 0 : UINT32_MAX;
        if (!tier[i])
            queue[qt++] = (uint32_t)i;
    }
    while (qh < qt) {
        uint32_t u = queue[qh++];
        const struct sim_node *n = net->nodes[u];
        for (uint32_t p = 0; p < n->nports; p++) {
            uint32_t v = n->ports[p]->peer->node->index;
            if (!n->ports[p]->down && tier[v] == UINT32_MAX) {
                tier[v] = tier[u] + 1;
                queue[qt++] = v;
            }
        }
    }
}

struct builder {
    struct sim_routes *r;
    size_t nsets, capsets, nports, capports;
    /* sets of more than one port; ports are numbered relative to their
     * switch, so switches with the same equal-cost ports share one set and
     * there are few of them */
    uint32_t *multi;
    size_t nmulti, capmulti;
    uint32_t *last; /* per switch slot: the multi-port set it met last */
    /* per switch slot: the multi-port sets it has codes for, in code order */
    uint32_t **mine;
    uint32_t *nmine;
    size_t *capmine;
};

static uint32_t add_set(struct builder *b, const uint32_t *ports, uint32_t n)
{
    SIM_GROW(b->r->sets, b->capsets, b->nsets);
    b->r->sets[b->nsets] = (struct sim_port_set){.off = (uint32_t)b->nports, .n = n};
    for (uint32_t i = 0; i < n; i++) {
        SIM_GROW(b->r->ports, b->capports, b->nports);
        b->r->ports[b->nports++] = ports[i];
    }
    return (uint32_t)b->nsets++;
}

static bool same_set(const struct builder *b, uint32_t id, const uint32_t *cand, uint32_t nc)
{
    const struct sim_port_set *s = &b->r->sets[id];
    return s->n == nc && !memcmp(&b->r->ports[s->off], cand, nc * sizeof *cand);
}

/* The set id of switch `slot` for the nc (> 1) ports in cand; a switch
 * mostly meets the set it met last (its up-links, from every group but
 * one). */
static uint32_t multi_id(struct builder *b, uint32_t slot, const uint32_t *cand, uint32_t nc)
{
    if (b->last[slot] != UINT32_MAX && same_set(b, b->last[slot], cand, nc))
        return b->last[slot];
    for (size_t m = 0; m < b->nmulti; m++) {
        if (same_set(b, b->multi[m], cand, nc))
            return b->last[slot] = b->multi[m];
    }
    SIM_GROW(b->multi, b->capmulti, b->nmulti);
    return b->last[slot] = b->multi[b->nmulti++] = add_set(b, cand, nc);
}

/* The code of switch `slot` (nports ports) for the nc ports in cand. */
static uint16_t route_code(struct builder *b, uint32_t slot, uint32_t nports, const uint32_t *cand, uint32_t nc)
{
    if (nc == 1)
        return (uint16_t)cand[0];
    uint32_t id = multi_id(b, slot, cand, nc), i = 0;
    while (i < b->nmine[slot] && b->mine[slot][i] != id)
        i++;
    if (i == b->nmine[slot]) {
        if (nports + i >= SIM_ROUTE_NONE) {
            /* a switch would need more equal-cost sets than 16 bits can
             * name: no generated topology comes near */
            fprintf(stderr, "rdmasim: a switch has more than %u sets of equal-cost ports\n",
                    SIM_ROUTE_NONE - nports);
            abort();
        }
        sim__grow(&b->mine[slot], &b->capmine[slot], b->nmine[slot], sizeof **b->mine);
        b->mine[slot][b->nmine[slot]++] = id;
    }
    return (uint16_t)(nports + i);
}

/* Hosts are leaves: a breadth-first search from a host reaches every
 * switch at the same distance as one from any other host attached to the
 * same nodes over links that are up, and the searches differ only at the
 * switches next to the host, whose shortest paths end at the host itself.
 * So hosts are grouped by their attachment (its sorted list of neighbour
 * nodes) and one search serves a group: at a k-ary fat-tree, one per edge
 * switch rather than one per host, k/2 times fewer. */
struct groups {
    uint32_t *first; /* group -> its first host */
    uint32_t *next;  /* host -> the next host of its group, UINT32_MAX at the end */
    uint32_t n;
};

static uint32_t neighbours(const struct sim_network *net, uint32_t h, uint32_t *nb)
{
    const struct sim_node *n = net->nodes[net->host_node[h]];
    uint32_t k = 0;
    for (uint32_t p = 0; p < n->nports; p++) {
        if (n->ports[p]->down)
            continue;
        uint32_t v = n->ports[p]->peer->node->index, i = k++;
        for (; i > 0 && nb[i - 1] > v; i--) /* insertion sort: hosts have few ports */
            nb[i] = nb[i - 1];
        nb[i] = v;
    }
    return k;
}

static void group_hosts(const struct sim_network *net, struct groups *g)
{
    uint32_t nh = net->nhosts, cap = 2;
    while (cap < 2 * nh)
        cap *= 2;
    uint32_t *table = sim__xmalloc(cap * sizeof *table); /* open addressing: group ids */
    memset(table, 0xff, cap * sizeof *table);
    uint32_t *last = sim__xmalloc((nh + 1) * sizeof *last);
    uint32_t *nb = sim__xmalloc((net->nports + 1) * sizeof *nb), *other = NULL;
    size_t capother = 0;
    g->first = sim__xmalloc((nh + 1) * sizeof *g->first);
    g->next = sim__xmalloc((nh + 1) * sizeof *g->next);
    g->n = 0;
    for (uint32_t h = 0; h < nh; h++) {
        uint32_t k = neighbours(net, h, nb);
        uint64_t key = k;
        for (uint32_t i = 0; i < k; i++)
            key = sim__mix64(key ^ nb[i]);
        uint32_t at = (uint32_t)key & (cap - 1);
        g->next[h] = UINT32_MAX;
        for (;; at = (at + 1) & (cap - 1)) {
            uint32_t id = table[at];
            if (id == UINT32_MAX) {
                table[at] = g->n;
                g->first[g->n] = last[g->n] = h;
                g->n++;
                break;
            }
            const struct sim_node *f = net->nodes[net->host_node[g->first[id]]];
            SIM_GROW(other, capother, f->nports);
            if (neighbours(net, g->first[id], other) == k && !memcmp(nb, other, k * sizeof *nb)) {
                g->next[last[id]] = h;
                last[id] = h;
                break;
            }
        }
    }
    free(other);
    free(nb);
    free(last);
    free(table);
}

/* The rule of a switch whose ports lead to peer[] (UINT32_MAX: down),
 * `own` hops above its nearest host, for its row of codes; fits stays
 * false unless the rule gives every host the row's code. The hosts below
 * it are those its codes send down a port, to a peer nearer the hosts;
 * each down port serves a run of down_div of them in port order, and the
 * up codes repeat as dmodk picks them (this file's header): up_n codes,
 * each for up_n^(own-1) consecutive hosts. */
static struct sim_route_rule fit_rule(const uint16_t *row, uint32_t nhosts, const uint32_t *peer,
                                      uint32_t nports, const uint32_t *tier, uint32_t own)
{
    struct sim_route_rule u = {.down_div = 1, .up_div = 1, .up_n = 1};
    uint32_t first = UINT32_MAX, last = 0, lo_up = SIM_ROUTE_NONE, hi_up = 0;
    for (uint32_t h = 0; h < nhosts; h++) {
        uint16_t c = row[h];
        if (c == SIM_ROUTE_NONE)
            return u;
        if (c < nports && peer[c] != UINT32_MAX && tier[peer[c]] < own) {
            if (first == UINT32_MAX)
                first = h;
            last = h;
        } else {
            lo_up = c < lo_up ? c : lo_up;
            hi_up = c > hi_up ? c : hi_up;
        }
    }
    if (first != UINT32_MAX) {
        u.lo = first;
        u.span = last - first + 1;
        u.down_base = row[first];
        while (first + u.down_div <= last && row[first + u.down_div] == u.down_base)
            u.down_div++;
    }
    if (lo_up != SIM_ROUTE_NONE) {
        u.up_base = (uint16_t)lo_up;
        u.up_n = hi_up - lo_up + 1;
        for (uint32_t t = 1; t < own && u.up_div <= nhosts; t++)
            u.up_div = u.up_div * (uint64_t)u.up_n > UINT32_MAX ? UINT32_MAX : u.up_div * u.up_n;
    }
    for (uint32_t h = 0; h < nhosts; h++)
        if (sim__route_rule_code(&u, h) != row[h])
            return u;
    u.fits = true;
    return u;
}

void sim__routes_build(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct sim_routes *r = &net->routes;
    struct builder b = {.r = r};
    size_t nswitch = 0;
    r->slot_of_node = sim__xmalloc(cfg->nnodes * sizeof *r->slot_of_node);
    for (size_t i = 0; i < cfg->nnodes; i++)
        r->slot_of_node[i] = cfg->nodes[i].kind == CFG_SWITCH ? (uint32_t)nswitch++ : UINT32_MAX;
    r->code_of = sim__xmalloc((nswitch * net->nhosts + 1) * sizeof *r->code_of);
    for (size_t slot = 0; slot < nswitch; slot++) { /* a row at a time: 640 MiB at k=64 */
        if (!(slot & 255))
            sim__setup_progress(net, "routes", 0);
        memset(&r->code_of[slot * net->nhosts], 0xff, net->nhosts * sizeof *r->code_of);
    }
    r->sets_base = sim__xmalloc((nswitch + 1) * sizeof *r->sets_base);
    b.last = sim__xmalloc((nswitch + 1) * sizeof *b.last);
    memset(b.last, 0xff, (nswitch + 1) * sizeof *b.last);
    b.mine = sim__xcalloc(nswitch + 1, sizeof *b.mine);
    b.nmine = sim__xcalloc(nswitch + 1, sizeof *b.nmine);
    b.capmine = sim__xcalloc(nswitch + 1, sizeof *b.capmine);

    /* Every port of a switch is a set of its own, with the port's index as
     * id relative to the switch's base; larger sets are added on demand. */
    for (size_t i = 0; i < cfg->nnodes; i++) {
        const struct sim_node *n = net->nodes[i];
        if (n->kind != CFG_SWITCH)
            continue;
        r->sets_base[r->slot_of_node[i]] = (uint32_t)b.nsets;
        for (uint32_t p = 0; p < n->nports; p++)
            add_set(&b, &p, 1);
    }

    uint32_t *dist = sim__xmalloc(cfg->nnodes * sizeof *dist);
    uint32_t *queue = sim__xmalloc(cfg->nnodes * sizeof *queue);
    uint32_t *cand = sim__xmalloc((cfg->nnodes + 1) * sizeof *cand);
    uint32_t *tier = NULL;
    if (cfg->routing == CFG_ROUTING_DMODK) {
        tier = sim__xmalloc(cfg->nnodes * sizeof *tier);
        sim__route_tiers(net, tier, queue);
    }
    /* The graph as arrays (the peer of each port, UINT32_MAX when it is
     * down): the searches below walk it once per group, and following the
     * ports' pointers there costs a cache miss each. */
    uint32_t *off = sim__xmalloc((cfg->nnodes + 1) * sizeof *off);
    uint32_t *adj = sim__xmalloc((net->nports + 1) * sizeof *adj);
    off[0] = 0;
    for (size_t i = 0; i < cfg->nnodes; i++) {
        const struct sim_node *n = net->nodes[i];
        for (uint32_t p = 0; p < n->nports; p++)
            adj[off[i] + p] = n->ports[p]->down ? UINT32_MAX : n->ports[p]->peer->node->index;
        off[i + 1] = off[i] + n->nports;
    }
    struct groups g;
    group_hosts(net, &g);
    for (uint32_t gi = 0; gi < g.n; gi++) {
        sim__setup_progress(net, "routes", (double)gi / g.n);
        memset(dist, 0xff, cfg->nnodes * sizeof *dist);
        uint32_t qh = 0, qt = 0, src = net->host_node[g.first[gi]];
        dist[src] = 0;
        queue[qt++] = src;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            /* hosts are endpoints, never transit */
            if (cfg->nodes[u].kind == CFG_HOST && u != src)
                continue;
            for (uint32_t e = off[u]; e < off[u + 1]; e++) {
                uint32_t v = adj[e];
                if (v != UINT32_MAX && dist[v] == UINT32_MAX) {
                    dist[v] = dist[u] + 1;
                    queue[qt++] = v;
                }
            }
        }
        /* Next to the hosts a switch's ports lead to each host itself;
         * further away they are the same for the whole group. */
        for (uint32_t qi = 0; qi < qt; qi++) {
            uint32_t i = queue[qi], slot = r->slot_of_node[i], nc = 0, np = off[i + 1] - off[i];
            const uint32_t *peer = &adj[off[i]];
            if (cfg->nodes[i].kind != CFG_SWITCH)
                continue;
            uint16_t *row = &r->code_of[(size_t)slot * net->nhosts];
            if (dist[i] == 1) {
                for (uint32_t h = g.first[gi]; h != UINT32_MAX; h = g.next[h]) {
                    nc = 0;
                    for (uint32_t p = 0; p < np; p++)
                        if (peer[p] == net->host_node[h])
                            cand[nc++] = p;
                    if (nc && tier) {
                        cand[0] = cand[sim__dmodk(h, nc, tier[i])];
                        nc = 1;
                    }
                    if (nc)
                        row[h] = route_code(&b, slot, np, cand, nc);
                }
                continue;
            }
            for (uint32_t p = 0; p < np; p++)
                if (peer[p] != UINT32_MAX && dist[peer[p]] + 1 == dist[i])
                    cand[nc++] = p;
            if (nc == 0)
                continue;
            uint16_t code = tier ? 0 : route_code(&b, slot, np, cand, nc);
            for (uint32_t h = g.first[gi]; h != UINT32_MAX; h = g.next[h])
                row[h] = tier ? (uint16_t)cand[sim__dmodk(h, nc, tier[i])] : code;
        }
    }
    /* the rows as rules where they fit */
    if (!tier) {
        tier = sim__xmalloc(cfg->nnodes * sizeof *tier);
        sim__route_tiers(net, tier, queue);
    }
    r->rule = sim__xcalloc(nswitch + 1, sizeof *r->rule);
    for (size_t i = 0; i < cfg->nnodes; i++) {
        uint32_t slot = r->slot_of_node[i];
        if (slot != UINT32_MAX)
            r->rule[slot] = fit_rule(&r->code_of[(size_t)slot * net->nhosts], net->nhosts, &adj[off[i]],
                                     off[i + 1] - off[i], tier, tier[i]);
    }
    /* each switch's several-port sets, one after another */
    r->multi_base = sim__xmalloc((nswitch + 1) * sizeof *r->multi_base);
    size_t nmulti = 0;
    for (size_t slot = 0; slot < nswitch; slot++)
        nmulti += b.nmine[slot];
    r->multi = sim__xmalloc((nmulti + 1) * sizeof *r->multi);
    nmulti = 0;
    for (size_t slot = 0; slot < nswitch; slot++) {
        r->multi_base[slot] = (uint32_t)nmulti;
        for (uint32_t i = 0; i < b.nmine[slot]; i++)
            r->multi[nmulti++] = b.mine[slot][i];
        free(b.mine[slot]);
    }
    free(b.mine);
    free(b.nmine);
    free(b.capmine);
    free(b.multi);
    free(b.last);
    free(off);
    free(adj);
    free(g.first);
    free(g.next);
    free(tier);
    free(dist);
    free(queue);
    free(cand);
}

void sim__routes_free(struct sim_routes *r)
{
    free(r->code_of);
    free(r->rule);
    free(r->sets);
    free(r->ports);
    free(r->sets_base);
    free(r->multi);
    free(r->multi_base);
    free(r->slot_of_node);
    *r = (struct sim_routes){0};
}
