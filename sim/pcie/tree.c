/* tree.c - a host's PCIe tree at run time: its links, and the paths
 * TLPs take between the NIC, GPUs and socket memory.
 *
 * A path climbs from its initiator to the lowest node it shares with its
 * target and descends from there; between sockets it crosses the
 * inter-socket link from one root complex to the other. Each node a TLP
 * passes through adds its latency (a switch's port-to-port latency, a root
 * complex's), the target adds none: a write has landed when its last TLP
 * has arrived, a read's target answers after its read latency.
 *
 *   nic -> switch -> gpu0                peer to peer under a switch
 *   nic -> socket0 -> gpu1               peer to peer through the root complex
 *   nic -> socket0 => socket1 -> gpu2    across sockets
 *
 * Completions of a peer read that a root complex forwards pass a throttle
 * at that root complex running at peer_read_factor of the next link's rate.
 * NVIDIA's GPUDirect RDMA guide ("Supported Systems") ranks the three cases
 * the same way: PCIe switches only is best, a path through the CPU's root
 * complex performs badly, and one across the inter-socket link may not
 * work at all.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "pcie/pcie.h"

/* ---- paths --------------------------------------------------------------------- */
struct step {
    struct pcie_dir *d;
    uint64_t fs;
    sim_time_t lat;
    uint32_t into; /* the node the hop enters */
    bool root_pass; /* it enters a root complex that forwards it on */
};

static uint32_t chain(const struct cfg_pcie *t, uint32_t n, uint32_t *out)
{
    uint32_t k = 0;
    out[k++] = n;
    while (t->nodes[n].parent != n) {
        n = t->nodes[n].parent;
        out[k++] = n;
    }
    return k;
}

static sim_time_t pass_latency(const struct cfg_pcie *t, uint32_t n)
{
    return t->nodes[n].kind == PCIE_SWITCH ? t->nodes[n].latency
           : t->nodes[n].kind == PCIE_ROOT ? t->rc_latency
                                           : 0;
}

static struct pcie_link_rt *socket_link(struct sim_pcie_host *ph, uint32_t a, uint32_t b)
{
    const struct cfg_pcie *t = ph->cfg;
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a, k = 0;
    for (uint32_t i = 0; i < lo; i++)
        k += t->sockets - 1 - i;
    return &ph->links[t->nnodes + k + (hi - lo - 1)];
}

/* The path from node `from` to node `to`; with `throttle`, completions of
 * a peer read, slowed where a root complex forwards them. */
static void build_path(struct sim_pcie_host *ph, uint32_t from, uint32_t to, bool throttle,
                       struct pcie_path *p, uint16_t *mps)
{
    const struct cfg_pcie *t = ph->cfg;
    uint32_t a[PCIE_MAX_NODES], b[PCIE_MAX_NODES];
    uint32_t na = chain(t, from, a), nb = chain(t, to, b);
    struct step s[2 * PCIE_MAX_NODES + 2];
    uint32_t n = 0;
    /* the lowest shared node: ia in a, ib in b */
    uint32_t ia = na, ib = nb;
    for (uint32_t i = 0; i < na && ia == na; i++)
        for (uint32_t j = 0; j < nb; j++)
            if (a[i] == b[j]) {
                ia = i;
                ib = j;
                break;
            }
    uint32_t up_to = ia == na ? na - 1 : ia; /* climb to here */
    for (uint32_t i = 0; i < up_to; i++) {
        struct pcie_link_rt *l = &ph->links[a[i]];
        uint32_t into = a[i + 1];
        s[n++] = (struct step){&l->up, l->up.fs, t->nodes[a[i]].link.delay, into, false};
        if (t->nodes[a[i]].link.mps < *mps)
            *mps = t->nodes[a[i]].link.mps;
    }
    if (ia == na) { /* across sockets: from root a[na-1] to root b[nb-1] */
        uint32_t ra = a[na - 1], rb = b[nb - 1];
        struct pcie_link_rt *l = socket_link(ph, ra, rb);
        struct pcie_dir *d = ra < rb ? &l->up : &l->down;
        s[n++] = (struct step){d, d->fs, t->socket_delay, rb, false};
        ib = nb - 1;
    }
    for (uint32_t j = ib; j-- > 0;) {
        struct pcie_link_rt *l = &ph->links[b[j]];
        s[n++] = (struct step){&l->down, l->down.fs, t->nodes[b[j]].link.delay, b[j], false};
        if (t->nodes[b[j]].link.mps < *mps)
            *mps = t->nodes[b[j]].link.mps;
    }
    /* the nodes passed through add their latency; the target does not */
    for (uint32_t i = 0; i < n; i++)
        if (s[i].into != to) {
            s[i].lat += pass_latency(t, s[i].into);
            s[i].root_pass = t->nodes[s[i].into].kind == PCIE_ROOT;
        }
    p->hop = sim__xcalloc(2 * n + 1, sizeof *p->hop);
    p->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        p->hop[p->n++] = (struct pcie_hop){s[i].d, s[i].fs, s[i].lat};
        if (throttle && s[i].root_pass && i + 1 < n) {
            uint64_t fs = (uint64_t)((double)s[i + 1].fs / t->peer_read_factor + 0.5);
            p->hop[p->n++] = (struct pcie_hop){&ph->peer[s[i].into], fs, 0};
        }
    }
}

void sim__pcie_build_route(struct sim_pcie_host *ph, uint32_t from, uint32_t to, struct pcie_route *r)
{
    const struct cfg_pcie *t = ph->cfg;
    const struct cfg_pcie_node *init = &t->nodes[from], *target = &t->nodes[to];
    bool peer = target->kind == PCIE_GPU;
    uint16_t mps = init->link.mps;
    build_path(ph, from, to, false, &r->out, &mps);
    build_path(ph, to, from, peer, &r->back, &mps);
    r->mps = mps;
    r->mrrs = init->link.mrrs;
    r->rcb = init->link.rcb;
    r->rcb_completions = init->link.rcb_completions;
    r->target_latency = peer ? target->read_latency : t->rc_read_latency;
    /* a GPU's own memory writes are not modelled: a peer write is done
     * when it reaches the GPU */
    r->write_latency = peer ? 0 : t->rc_write_latency;
}

void sim__pcie_free_route(struct pcie_route *r)
{
    free(r->out.hop);
    free(r->back.hop);
}

/* ---- the host ------------------------------------------------------------------ */
struct sim_pcie_host *sim__pcie_host_new(const struct cfg_pcie *cfg, struct sim *sim,
                                         const char *host)
{
    struct sim_pcie_host *ph = sim__xcalloc(1, sizeof *ph);
    uint32_t nn = cfg->nnodes, pairs = cfg->sockets * (cfg->sockets - 1) / 2;
    ph->cfg = cfg;
    ph->sim = sim;
    ph->host = host;
    ph->nlinks = nn + pairs;
    ph->links = sim__xcalloc(ph->nlinks, sizeof *ph->links);
    for (uint32_t i = 0; i < nn; i++) {
        const struct cfg_pcie_node *nd = &cfg->nodes[i];
        if (nd->kind == PCIE_ROOT)
            continue;
        struct pcie_link_rt *l = &ph->links[i];
        double rate = sim__pcie_tlp_rate(nd->link.gen, nd->link.width, nd->link.mps);
        uint64_t fs = sim__pcie_fs_per_byte(rate);
        l->name = nd->name;
        l->gen = nd->link.gen;
        l->width = nd->link.width;
        l->up = (struct pcie_dir){.fs = fs, .from = nd->name, .to = cfg->nodes[nd->parent].name};
        l->down = (struct pcie_dir){.fs = fs, .from = cfg->nodes[nd->parent].name, .to = nd->name};
    }
    uint64_t sfs = sim__pcie_fs_per_byte((double)cfg->socket_rate);
    for (uint32_t a = 0; a < cfg->sockets; a++)
        for (uint32_t b = a + 1; b < cfg->sockets; b++) {
            struct pcie_link_rt *l = socket_link(ph, a, b);
            l->own_name = sim__xasprintf("%s-%s", cfg->nodes[a].name, cfg->nodes[b].name);
            l->name = l->own_name;
            const char *na = cfg->nodes[a].name, *nb = cfg->nodes[b].name;
            l->up = (struct pcie_dir){.fs = sfs, .from = na, .to = nb};
            l->down = (struct pcie_dir){.fs = sfs, .from = nb, .to = na};
        }
    ph->peer = sim__xcalloc(cfg->sockets, sizeof *ph->peer);
    ph->nic_to = sim__xcalloc(nn, sizeof *ph->nic_to);
    ph->gpu_mem = sim__xcalloc(nn, sizeof *ph->gpu_mem);
    ph->credits = sim__xcalloc(nn, sizeof *ph->credits);
    uint32_t nic = cfg->nic, home = cfg->nodes[nic].socket;
    for (uint32_t i = 0; i < nn; i++) {
        const struct cfg_pcie_node *nd = &cfg->nodes[i];
        if (nd->kind == PCIE_ROOT || nd->kind == PCIE_GPU)
            sim__pcie_build_route(ph, nic, i, &ph->nic_to[i]);
        if (nd->kind == PCIE_GPU)
            sim__pcie_build_route(ph, i, home, &ph->gpu_mem[i]);
        if (nd->kind == PCIE_NIC || nd->kind == PCIE_GPU) {
            ph->credits[i].cap = nd->read_credits;
            ph->credits[i].heap = sim__xcalloc(nd->read_credits, sizeof *ph->credits[i].heap);
        }
    }
    if (cfg->nvlink_rate)
        ph->nvlink = sim__nvlink_new(nn, cfg->nvlink_rate);
    sim_timer_init(&ph->nvlink_end);
    ph->cxl_down = sim__xcalloc(cfg->ncxl + 1, sizeof *ph->cxl_down);
    ph->cxl_up = sim__xcalloc(cfg->ncxl + 1, sizeof *ph->cxl_up);
    for (uint32_t i = 0; i < cfg->ncxl; i++)
        ph->cxl_down[i].fs = ph->cxl_up[i].fs = sim__cxl_fs_per_byte(&cfg->cxl[i]);
    uint16_t mps = cfg->nodes[nic].link.mps;
    build_path(ph, home, nic, false, &ph->mmio, &mps);
    ph->gpu_mmio = sim__xcalloc(nn, sizeof *ph->gpu_mmio);
    for (uint32_t i = 0; i < nn; i++)
        if (cfg->nodes[i].kind == PCIE_GPU) {
            uint16_t gmps = mps;
            build_path(ph, i, nic, false, &ph->gpu_mmio[i], &gmps);
        }
    ph->mmio.start = cfg->rc_latency;
    return ph;
}

void sim__pcie_host_free(struct sim_pcie_host *ph)
{
    if (!ph)
        return;
    for (uint32_t i = 0; i < ph->nlinks; i++) {
        sim__pcie_dir_free(&ph->links[i].up);
        sim__pcie_dir_free(&ph->links[i].down);
        free(ph->links[i].own_name);
    }
    for (uint32_t s = 0; s < ph->cfg->sockets; s++)
        sim__pcie_dir_free(&ph->peer[s]);
    for (uint32_t i = 0; i < ph->cfg->nnodes; i++) {
        sim__pcie_free_route(&ph->nic_to[i]);
        sim__pcie_free_route(&ph->gpu_mem[i]);
        free(ph->gpu_mmio[i].hop);
        sim__pcie_credits_free(&ph->credits[i]);
    }
    sim__nvlink_free(ph->nvlink);
    for (uint32_t i = 0; i < ph->cfg->ncxl; i++) {
        sim__pcie_dir_free(&ph->cxl_down[i]);
        sim__pcie_dir_free(&ph->cxl_up[i]);
    }
    free(ph->cxl_down);
    free(ph->cxl_up);
    free(ph->mmio.hop);
    free(ph->gpu_mmio);
    free(ph->links);
    free(ph->peer);
    free(ph->nic_to);
    free(ph->gpu_mem);
    free(ph->credits);
    free(ph->qps);
    free(ph);
}

const struct pcie_route *sim__pcie_nic_route(const struct sim_pcie_host *ph, uint16_t place)
{
    if (place & PCIE_PLACE_BOUNCE)
        return &ph->nic_to[ph->cfg->nodes[ph->cfg->nic].socket];
    return &ph->nic_to[place & PCIE_PLACE_NODE];
}
