/* subnet.c - the subnet manager's start-up sweep, as OpenSM does it for the
 * simulated fabric: LIDs for every HCA port (2^lmc each) and switch, and a
 * linear forwarding table (LFT) per switch from destination LID to port.
 *
 * Routing engines (OpenSM's names):
 *   minhop  for each destination, among the ports on a shortest path, the
 *           port with the fewest LIDs routed through it so far (OpenSM's
 *           min-hop balancing), the lowest-numbered among equals;
 *   ftree   on a fat-tree, dmodk's choice (net/route.c), which is what
 *           OpenSM's fat-tree engine computes: a shift permutation puts
 *           one route on every up-link. The LMC's extra LIDs of a host are
 *           spread as if they were further hosts (dmodk of h x 2^lmc + i).
 * Switch LIDs (management traffic only: no data is sent to them) follow
 * min-hop over a breadth-first search of the switches.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "net/ib.h"

/* Hop counts from switch `from` to every node over switches only. */
static void bfs(const struct sim_network *net, uint32_t from, uint32_t *dist, uint32_t *queue)
{
    const struct sim_config *cfg = net->cfg;
    memset(dist, 0xff, cfg->nnodes * sizeof *dist);
    uint32_t qh = 0, qt = 0;
    dist[from] = 0;
    queue[qt++] = from;
    while (qh < qt) {
        uint32_t u = queue[qh++];
        const struct sim_node *n = net->nodes[u];
        if (n->kind != CFG_SWITCH)
            continue;
        for (uint32_t p = 0; p < n->nports; p++) {
            uint32_t v = n->ports[p]->peer->node->index;
            if (!n->ports[p]->down && dist[v] == UINT32_MAX) {
                dist[v] = dist[u] + 1;
                queue[qt++] = v;
            }
        }
    }
}

static uint32_t port_id(const struct sim_network *net, const struct sim_node *n, uint32_t p)
{
    return (uint32_t)(n->ports[p] - net->ports);
}

/* Among the ports of n in cand, the one with the fewest LIDs routed
 * through it so far (load, by network port); count it. */
static uint16_t least_loaded(const struct sim_network *net, const struct sim_node *n,
                             const uint32_t *cand, uint32_t nc, uint32_t *load)
{
    uint32_t best = cand[0];
    for (uint32_t i = 1; i < nc; i++)
        if (load[port_id(net, n, cand[i])] < load[port_id(net, n, best)])
            best = cand[i];
    load[port_id(net, n, best)]++;
    return (uint16_t)best;
}

void sim__subnet_build(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct sim_subnet *s = net->subnet;
    if (!s) {
        s = net->subnet = sim__xcalloc(1, sizeof *s);
        for (size_t i = 0; i < cfg->nnodes; i++)
            if (cfg->nodes[i].kind == CFG_SWITCH)
                s->nswitch++;
        s->nlids = 1 + (net->nhosts << cfg->ib.lmc) + s->nswitch;
        s->lft = sim__xmalloc((size_t)s->nswitch * s->nlids * sizeof *s->lft + 1);
        s->switch_node = sim__xmalloc((s->nswitch + 1) * sizeof *s->switch_node);
        for (size_t i = 0; i < cfg->nnodes; i++)
            if (cfg->nodes[i].kind == CFG_SWITCH)
                s->switch_node[net->routes.slot_of_node[i]] = (uint32_t)i;
    }
    uint32_t per_host = 1u << cfg->ib.lmc;
    uint32_t *tier = sim__xmalloc(cfg->nnodes * sizeof *tier);
    uint32_t *queue = sim__xmalloc(cfg->nnodes * sizeof *queue);
    uint32_t *cand = sim__xmalloc((cfg->nnodes + 1) * sizeof *cand);
    uint32_t *load = sim__xcalloc(net->nports + 1, sizeof *load);
    bool ftree = cfg->routing == CFG_ROUTING_FTREE;
    if (ftree)
        sim__route_tiers(net, tier, queue);
    for (size_t i = 0; i < (size_t)s->nswitch * s->nlids; i++)
        s->lft[i] = SIM_IB_NO_PORT;
    /* the hosts' LIDs, along the shortest paths of net/route.c */
    for (uint32_t slot = 0; slot < s->nswitch; slot++) {
        uint32_t node = s->switch_node[slot];
        const struct sim_node *sw = net->nodes[node];
        uint16_t *lft = &s->lft[(size_t)slot * s->nlids];
        for (uint32_t h = 0; h < net->nhosts; h++) {
            uint32_t n;
            const uint32_t *ports = sim__route_set(net, sw, h, &n);
            if (!ports)
                continue;
            for (uint32_t i = 0; i < per_host; i++) {
                uint32_t lid = sim__ib_host_lid(net, h) + i;
                if (ftree) {
                    uint32_t p = ports[n == 1 ? 0 : sim__dmodk(h * per_host + i, n, tier[node])];
                    load[port_id(net, sw, p)]++;
                    lft[lid] = (uint16_t)(p + 1);
                } else {
                    lft[lid] = (uint16_t)(least_loaded(net, sw, ports, n, load) + 1);
                }
            }
        }
        lft[sim__ib_switch_lid(net, slot)] = 0; /* its own LID: management port 0 */
    }
    /* the switches' LIDs, min-hop from each switch's side */
    uint32_t *dist = tier;
    for (uint32_t t = 0; t < s->nswitch; t++) {
        bfs(net, s->switch_node[t], dist, queue);
        uint32_t lid = sim__ib_switch_lid(net, t);
        for (uint32_t slot = 0; slot < s->nswitch; slot++) {
            uint32_t node = s->switch_node[slot];
            const struct sim_node *sw = net->nodes[node];
            if (slot == t || dist[node] == UINT32_MAX)
                continue;
            uint32_t nc = 0;
            for (uint32_t p = 0; p < sw->nports; p++) {
                uint32_t v = sw->ports[p]->peer->node->index;
                if (!sw->ports[p]->down && dist[v] != UINT32_MAX && dist[v] + 1 == dist[node] &&
                    net->nodes[v]->kind == CFG_SWITCH)
                    cand[nc++] = p;
            }
            if (nc)
                s->lft[(size_t)slot * s->nlids + lid] = (uint16_t)(least_loaded(net, sw, cand, nc, load) + 1);
        }
    }
    free(load);
    free(tier);
    free(queue);
    free(cand);
}

void sim__subnet_free(struct sim_network *net)
{
    if (!net->subnet)
        return;
    free(net->subnet->lft);
    free(net->subnet->switch_node);
    free(net->subnet);
    net->subnet = NULL;
}
