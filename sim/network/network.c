/* network.c - build the network a configuration describes, run it, and
 * count what happened.
 *
 * Building is the only place that looks at two hosts at once: it sets up
 * each connection's queue pairs and memory regions the way connection
 * management (IBA chapter 12) would before any traffic flows, then the
 * hosts are on their own.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "host/iwarp/iwarp.h"
#include "host/nic.h"
#include "net/ib.h"
#include "observe/ideal.h"
#include "observe/observe.h"
#include "pcie/pcie.h"
#include "network/network.h"
#include "sim.h"

/* ---- building --------------------------------------------------------------- */
/* Whether the ports and hosts, which every frame's events read, take
 * more than a core's cache (2 MiB of L2, a common size; fixed, so that a
 * run does the same work on any machine and under cachegrind): then the
 * engine's prefetch hooks pay for their instructions. */
#define CORE_CACHE_BYTES ((size_t)2 << 20)
static bool outgrows_cache(const struct sim_network *net)
{
    return net->nports * sizeof(struct sim_port) + net->nhosts * sizeof(struct sim_host) > CORE_CACHE_BYTES;
}

static void build_ports(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    net->nports = 2 * cfg->nlinks;
    net->ports = sim__xaligned(_Alignof(struct sim_port), net->nports * sizeof *net->ports);
    sim__huge_hint(net->ports, net->nports * sizeof *net->ports);
    memset(net->ports, 0, net->nports * sizeof *net->ports);
    for (size_t i = 0; i < cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        n->ports = sim__xcalloc(cfg->nodes[i].nlinks, sizeof *n->ports);
    }
    for (size_t l = 0; l < cfg->nlinks; l++) {
        if (!(l & 4095))
            sim__setup_progress(net, "links", (double)l / (double)cfg->nlinks);
        const struct cfg_link *cl = &cfg->links[l];
        uint32_t ends[2] = {cl->a, cl->b};
        for (int e = 0; e < 2; e++) {
            struct sim_port *p = &net->ports[2 * l + (size_t)e];
            struct sim_node *n = net->nodes[ends[e]];
            const struct cfg_node *cn = &cfg->nodes[ends[e]];
            p->node = n;
            p->peer = &net->ports[2 * l + (size_t)(1 - e)];
            p->index = n->nports++;
            p->link = (uint32_t)l;
            p->p = cl->p;
            p->delay = cl->p.delay;
            p->noisy = cl->p.loss > 0 || cl->p.ber > 0;
            p->corrupt_log = log1p(-cl->p.ber);
            if ((8 * SIM_S) % cl->p.rate == 0)
                p->ps_per_byte = 8 * SIM_S / cl->p.rate;
            p->down_at = SIM_TIME_NEVER;
            sim__port_set_link_layer(p, &sim__link_ethernet);
            p->name = sim__xasprintf("%s-%u", cn->name, p->index);
            n->ports[p->index] = p;
            /* one after another, in the array's order: a port finds its
             * peer's id from their places (port.c) */
            sim_component_add(net->sim, &p->comp, &sim__port_ops, p->name);
            assert(p->comp.id == net->ports[0].comp.id + 2 * l + (size_t)e);
            sim_component_set_domain(&p->comp, sim__node_domain(cfg, ends[e]));
        }
    }
}

/* What the nodes at a link's ends add to it: a NIC's transmit and receive
 * pipelines (when PCIe is not modelled, which has its own steps) lengthen
 * the way out of and into the host; a cut-through switch takes a frame
 * once its header has arrived. */
static void latencies(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    bool pcie = cfg->pcie && cfg->pcie->model;
    for (size_t i = 0; i < net->nports; i++) {
        struct sim_port *p = &net->ports[i];
        const struct cfg_node *from = &cfg->nodes[p->node->index];
        const struct cfg_node *to = &cfg->nodes[p->peer->node->index];
        if (!pcie && from->kind == CFG_HOST)
            p->delay += from->nic.tx_latency;
        if (!pcie && to->kind == CFG_HOST)
            p->delay += to->nic.rx_latency;
        if (to->kind == CFG_SWITCH) {
            p->cut_through = cfg->fabric.sw[to->swp].cut_through;
            p->peer_latency = cfg->fabric.sw[to->swp].latency;
        }
    }
}

/* InfiniBand: every port gets credit-based flow control, sized for the
 * largest packet a host's MTU allows and the receiving node's latency. */
static void infiniband_ports(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    uint32_t mtu = 256;
    for (size_t i = 0; i < cfg->nnodes; i++)
        if (cfg->nodes[i].kind == CFG_HOST && cfg->nodes[i].nic.mtu > mtu)
            mtu = cfg->nodes[i].nic.mtu;
    /* LRH, BTH, RETH and ImmDt, payload, ICRC, VCRC */
    uint32_t max_packet = 8 + 12 + 16 + 4 + mtu + 4 + 2;
    for (size_t i = 0; i < net->nports; i++) {
        struct sim_port *p = &net->ports[i];
        const struct cfg_node *n = &cfg->nodes[p->node->index];
        sim_time_t latency = n->kind == CFG_SWITCH ? cfg->fabric.sw[n->swp].latency : 0;
        sim__ib_port_init(p, &cfg->ib, max_packet, latency);
    }
    for (size_t i = 0; i < net->nports; i++)
        sim__ib_port_start(&net->ports[i]);
}

/* The largest IB MTU that fits the smaller NIC setting and, with the
 * largest headers a payload-carrying packet has, every link on the paths
 * the two queue pairs' frames take. */
static uint32_t path_mtu(struct sim_network *net, const struct sim_qp *qa, const struct sim_qp *qb)
{
    uint32_t a = qb->peer, b = qa->peer;
    const struct cfg_nic *na = qa->p, *nb = qb->p;
    uint32_t mtu = na->mtu < nb->mtu ? na->mtu : nb->mtu;
    uint32_t link_mtu = UINT32_MAX;
    struct sim_path fwd, rev;
    sim__path(net, a, b, qa->sport, &fwd);
    sim__path(net, b, a, qb->sport, &rev);
    for (uint32_t i = 0; i < fwd.n; i++)
        if (fwd.hop[i].mtu < link_mtu)
            link_mtu = fwd.hop[i].mtu;
    for (uint32_t i = 0; i < rev.n; i++)
        if (rev.hop[i].mtu < link_mtu)
            link_mtu = rev.hop[i].mtu;
    uint32_t ip = (na->ipv6 || nb->ipv6) ? 40 : 20;
    while (mtu > 256 && ip + 8 + 12 + 16 + 4 + mtu + 4 > link_mtu)
        mtu /= 2;
    sim__path_free(&fwd);
    sim__path_free(&rev);
    return mtu;
}

/* The MSS of an iWARP connection (RFC 9293 3.7.1): the smallest IP MTU of
 * the links both ways, less the IP and TCP headers, as each side would
 * announce it after path MTU discovery; at most what a frame holds. */
static uint32_t tcp_mss(struct sim_network *net, const struct sim_qp *qa, const struct sim_qp *qb)
{
    uint32_t mtu = UINT32_MAX;
    struct sim_path path[2];
    sim__path(net, qb->peer, qa->peer, qa->sport, &path[0]);
    sim__path(net, qa->peer, qb->peer, qb->sport, &path[1]);
    for (int d = 0; d < 2; d++) {
        for (uint32_t i = 0; i < path[d].n; i++)
            if (path[d].hop[i].mtu < mtu)
                mtu = path[d].hop[i].mtu;
        sim__path_free(&path[d]);
    }
    uint32_t hdr = (qa->p->ipv6 || qb->p->ipv6 ? 40 : 20) + 20;
    uint32_t mss = mtu > hdr ? mtu - hdr : 0;
    return mss > SIM_TCP_MAX_SEGMENT ? SIM_TCP_MAX_SEGMENT : mss;
}

/* Connect two iWARP queue pairs: the lower host opens, each side's port
 * names its queue pair, each direction starts at its own sequence number. */
static void iwarp_connect(struct sim_network *net, struct sim_conn *c, uint64_t r)
{
    struct sim_qp *a = c->qp[0], *b = c->qp[1];
    uint16_t pa = (uint16_t)(SIM_TCP_PORT_BASE + a->qpn - SIM_QPN_BASE);
    uint16_t pb = (uint16_t)(SIM_TCP_PORT_BASE + b->qpn - SIM_QPN_BASE);
    a->sport = pa;
    b->sport = pb;
    uint32_t mss = tcp_mss(net, a, b);
    sim__iw_attach(a, true, pa, pb, mss, (uint32_t)r);
    sim__iw_attach(b, false, pb, pa, mss, (uint32_t)(r >> 32));
    c->path_mtu = a->mtu = b->mtu = mss;
}

/* What each iWARP side will have done when its part of the run is over:
 * its own messages, and the peer's Reads it answers. */
static void iwarp_expectations(struct sim_network *net)
{
    for (size_t i = 0; i < net->cfg->nmsgs; i++) {
        const struct sim_conn *c = &net->conns[net->msgs[i].conn];
        int s = net->cfg->msgs[i].src == c->host[0] ? 0 : 1;
        if (!c->qp[s]->iw)
            continue;
        c->qp[s]->iw->expect_own++;
        if (net->cfg->msgs[i].op == SIM_OP_READ)
            c->qp[1 - s]->iw->expect_reads++;
    }
}

struct conn_map {
    uint32_t *slots; /* conn + 1 */
    size_t cap;
};

static uint32_t conn_of(struct sim_network *net, struct conn_map *map, size_t *capconns,
                        uint32_t a, uint32_t b, uint32_t qp_id)
{
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    uint64_t key = sim__mix64((uint64_t)lo << 40 ^ (uint64_t)hi << 16 ^ qp_id);
    size_t mask = map->cap - 1, i = key & mask;
    for (; map->slots[i]; i = (i + 1) & mask) {
        const struct sim_conn *c = &net->conns[map->slots[i] - 1];
        if (c->host[0] == lo && c->host[1] == hi && c->qp_id == qp_id)
            return map->slots[i] - 1;
    }
    uint32_t id = (uint32_t)net->nconns++;
    SIM_GROW(net->conns, *capconns, id);
    net->conns[id] = (struct sim_conn){.host = {lo, hi}, .qp_id = qp_id};
    map->slots[i] = id + 1;
    return id;
}

static struct sim_host *host_at(struct sim_network *net, uint32_t node)
{
    return (struct sim_host *)net->nodes[node];
}

static uint16_t udp_sport(uint32_t qpn, uint32_t dest_qpn, uint32_t host)
{
    uint64_t h = sim__mix64((uint64_t)qpn << 32 | dest_qpn | (uint64_t)host << 56);
    return (uint16_t)(0xc000 | (h & 0x3fff));
}

static void build_conns(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct conn_map map = {.cap = 16};
    while (map.cap < 2 * cfg->nmsgs + 2)
        map.cap *= 2;
    map.slots = sim__xcalloc(map.cap, sizeof *map.slots);
    size_t capconns = 0;
    for (size_t i = 0; i < cfg->nmsgs; i++)
        net->msgs[i].conn = conn_of(net, &map, &capconns, cfg->msgs[i].src, cfg->msgs[i].dst,
                                    cfg->msgs[i].qp);
    free(map.slots);
    for (size_t i = 0; i < net->nconns; i++) {
        if (!(i & 4095))
            sim__setup_progress(net, "queue pairs", (double)i / (double)net->nconns);
        struct sim_conn *c = &net->conns[i];
        uint32_t ha = net->node_host[c->host[0]], hb = net->node_host[c->host[1]];
        struct sim_qp *a = sim__host_add_qp(host_at(net, c->host[0]), (uint32_t)i, hb);
        struct sim_qp *b = sim__host_add_qp(host_at(net, c->host[1]), (uint32_t)i, ha);
        a->dest_qpn = b->qpn;
        b->dest_qpn = a->qpn;
        /* RoCE NICs put a hash of the queue pair in the UDP source port
         * (0xc000 and up) so that switches spread queue pairs over paths */
        a->sport = udp_sport(a->qpn, b->qpn, ha);
        b->sport = udp_sport(b->qpn, a->qpn, hb);
        if (cfg->ib.enable) {
            /* InfiniBand: the path bits that pick one of the peer's LIDs */
            a->sport = (uint16_t)(a->qpn & ((1u << cfg->ib.lmc) - 1));
            b->sport = (uint16_t)(b->qpn & ((1u << cfg->ib.lmc) - 1));
        }
        /* each direction starts at its own PSN, as connection setup picks */
        uint64_t r = sim__mix64(sim_seed(net->sim) ^ ((uint64_t)i << 1));
        uint32_t pa = (uint32_t)r & 0xffffff, pb = (uint32_t)(r >> 32) & 0xffffff;
        a->next_psn = a->una_psn = a->max_psn = b->epsn = pa;
        b->next_psn = b->una_psn = b->max_psn = a->epsn = pb;
        c->qp[0] = a;
        c->qp[1] = b;
        if (a->nic->transport == &sim__transport_iwarp || a->nic->transport == &sim__transport_tcp)
            iwarp_connect(net, c, r);
        else
            c->path_mtu = a->mtu = b->mtu = path_mtu(net, a, b);
    }
}

/* The bytes of message i's source, the same in every run. */
static void fill_source(uint8_t *p, uint64_t len, uint64_t seed, uint64_t i)
{
    uint64_t x = sim__mix64(seed ^ (i + 1) * UINT64_C(0x9e3779b97f4a7c15));
    for (uint64_t off = 0; off < len; off += 8) {
        x = sim__mix64(x + off);
        for (unsigned b = 0; b < 8 && off + b < len; b++)
            p[off + b] = (uint8_t)(x >> (8 * b));
    }
}

static void build_messages(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    bool data = cfg->payload_data;
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        if (!(i & 4095))
            sim__setup_progress(net, "messages", (double)i / (double)cfg->nmsgs);
        const struct cfg_msg *m = &cfg->msgs[i];
        struct sim_msg *msg = &net->msgs[i];
        struct sim_host *src = host_at(net, m->src), *dst = host_at(net, m->dst);
        bool atomic = sim__op_is_atomic(m->op);
        msg->lmr = sim__host_add_mr(src, m->size, data || atomic);
        msg->rmr = sim__host_add_mr(dst, m->size, data || atomic);
        const struct sim_mr *rmr = &dst->mrs[msg->rmr];
        msg->rva = rmr->va;
        msg->rkey = rmr->rkey;
        msg->data_ok = -1;
        src->mrs[msg->lmr].msg = dst->mrs[msg->rmr].msg = (uint32_t)i;
        if (atomic) {
            for (int b = 0; b < 8; b++)
                dst->mrs[msg->rmr].bytes[b] = (uint8_t)(m->initial >> (8 * b));
        } else if (data) {
            struct sim_mr *from = m->op == SIM_OP_READ ? &dst->mrs[msg->rmr] : &src->mrs[msg->lmr];
            fill_source(from->bytes, m->size, cfg->seed, i);
        }
    }
}

struct work {
    sim_time_t at;
    uint32_t conn, msg;
};

static int cmp_time(const void *a, const void *b)
{
    const struct work *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->msg > y->msg) - (x->msg < y->msg);
}

static int cmp_conn_time(const void *a, const void *b)
{
    const struct work *x = a, *y = b;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    return cmp_time(a, b);
}

/* Sends are posted at their start times. Receives are posted per queue
 * pair in the order of their messages' start times, each no earlier than
 * the one before, so the n-th SEND of a queue pair lands in the n-th
 * receive. */
static void build_work(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    size_t *nsend = sim__xcalloc(cfg->nnodes, sizeof *nsend);
    size_t *nrecv = sim__xcalloc(cfg->nnodes, sizeof *nrecv);
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        nsend[cfg->msgs[i].src]++;
        if (sim__op_uses_recv(cfg->msgs[i].op))
            nrecv[cfg->msgs[i].dst]++;
    }
    struct work **sends = sim__xcalloc(cfg->nnodes, sizeof *sends);
    struct work **recvs = sim__xcalloc(cfg->nnodes, sizeof *recvs);
    size_t *ns = sim__xcalloc(cfg->nnodes, sizeof *ns), *nr = sim__xcalloc(cfg->nnodes, sizeof *nr);
    for (size_t n = 0; n < cfg->nnodes; n++) {
        sends[n] = sim__xcalloc(nsend[n], sizeof **sends);
        recvs[n] = sim__xcalloc(nrecv[n], sizeof **recvs);
    }
    /* a message that waits for another is posted when that one arrives,
     * waiters of one message in the order of their ids */
    for (size_t i = cfg->nmsgs; i-- > 0;) {
        const struct cfg_msg *m = &cfg->msgs[i];
        if (m->after) {
            net->msgs[i].next_waiter = net->msgs[m->after - 1].waiter;
            net->msgs[m->after - 1].waiter = (uint32_t)i + 1;
            net->msgs[i].waiting++;
        }
        if (m->after2) {
            net->msgs[i].next_waiter2 = net->msgs[m->after2 - 1].waiter;
            net->msgs[m->after2 - 1].waiter = (uint32_t)i + 1;
            net->msgs[i].waiting++;
        }
    }
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        uint32_t conn = net->msgs[i].conn;
        if (!m->after)
            sends[m->src][ns[m->src]++] = (struct work){m->start, conn, (uint32_t)i};
        if (sim__op_uses_recv(m->op))
            recvs[m->dst][nr[m->dst]++] = (struct work){m->start, conn, (uint32_t)i};
    }
    for (size_t n = 0; n < cfg->nnodes; n++) {
        if (cfg->nodes[n].kind != CFG_HOST)
            continue;
        struct sim_host *h = host_at(net, (uint32_t)n);
        qsort(sends[n], ns[n], sizeof **sends, cmp_time);
        h->sends = sim__xcalloc(ns[n], sizeof *h->sends);
        for (size_t i = 0; i < ns[n]; i++) {
            uint32_t id = sends[n][i].msg;
            h->sends[h->nsends++] = id;
            /* sockets: the receiving side expects the messages in the
             * order they are sent, (start, index) as here */
            const struct sim_conn *c = &net->conns[net->msgs[id].conn];
            struct sim_qp *to = c->qp[cfg->msgs[id].src == c->host[0] ? 1 : 0];
            if (to->iw && to->iw->sockets) {
                const struct sim_msg *m = &net->msgs[id];
                struct sim_host *dst = host_at(net, cfg->msgs[id].dst);
                sim__iw_expect(to, m->rmr, m->rva - dst->mrs[m->rmr].va, (uint32_t)cfg->msgs[id].size);
            }
        }
        struct work *r = recvs[n];
        qsort(r, nr[n], sizeof *r, cmp_conn_time);
        for (size_t i = 0; i < nr[n]; i++) {
            r[i].at = cfg->msgs[r[i].msg].recv_at;
            if (i && r[i].conn == r[i - 1].conn && r[i].at < r[i - 1].at)
                r[i].at = r[i - 1].at;
        }
        qsort(r, nr[n], sizeof *r, cmp_time);
        h->recvs = sim__xcalloc(nr[n], sizeof *h->recvs);
        for (size_t i = 0; i < nr[n]; i++) {
            h->recvs[i].at = r[i].at;
            h->recvs[i].msg = r[i].msg;
        }
        h->nrecvs = nr[n];
    }
    for (size_t n = 0; n < cfg->nnodes; n++) {
        free(sends[n]);
        free(recvs[n]);
    }
    free(sends);
    free(recvs);
    free(ns);
    free(nr);
    free(nsend);
    free(nrecv);
}

struct sim_network *sim_network_create(const struct sim_config *cfg)
{
    return sim_network_create_watched(cfg, NULL, NULL);
}

struct sim_network *sim_network_create_watched(const struct sim_config *cfg, sim_setup_fn fn,
                                               void *arg)
{
    struct sim_network *net = sim__xcalloc(1, sizeof *net);
    net->cfg = cfg;
    net->setup_fn = fn;
    net->setup_arg = arg;
    net->sim = sim_create(cfg->seed);
    for (size_t i = 0; i < sizeof net->fill; i++)
        net->fill[i] = (uint8_t)i;
    net->nodes = sim__xcalloc(cfg->nnodes, sizeof *net->nodes);
    net->node_host = sim__xcalloc(cfg->nnodes, sizeof *net->node_host);
    net->host_node = sim__xcalloc(cfg->nnodes, sizeof *net->host_node);
    for (size_t i = 0; i < cfg->nnodes; i++) {
        if (!(i & 4095))
            sim__setup_progress(net, "nodes", (double)i / (double)cfg->nnodes);
        if (cfg->nodes[i].kind == CFG_HOST) {
            net->host_node[net->nhosts] = (uint32_t)i;
            net->node_host[i] = net->nhosts;
            net->nodes[i] = &sim__host_create(net, (uint32_t)i, net->nhosts++)->node;
        } else {
            net->node_host[i] = UINT32_MAX;
            net->nodes[i] = sim__switch_create(net, (uint32_t)i);
        }
        sim_component_set_domain(&net->nodes[i]->comp, sim__node_domain(cfg, (uint32_t)i));
    }
    build_ports(net);
    latencies(net);
    for (uint32_t h = 0; h < net->nhosts; h++)
        host_at(net, net->host_node[h])->nic.port = net->nodes[net->host_node[h]]->ports[0];
    sim__routes_build(net);
    if (cfg->ib.enable) {
        infiniband_ports(net);
        sim__subnet_build(net);
    }
    net->nmsgs = cfg->nmsgs;
    net->msgs = sim__xcalloc(cfg->nmsgs, sizeof *net->msgs);
    build_conns(net);
    iwarp_expectations(net);
    build_messages(net);
    sim__setup_progress(net, "work", 0);
    build_work(net);
    sim__setup_progress(net, "monitor", 0);
    sim__monitor_create(net);
    sim__faults_create(net);
    sim__pcie_create(net);
    sim__nvswitches_create(net);
    /* after the PCIe trees: with them, a completion ends in memory */
    for (size_t i = 0; i < net->cfg->nmsgs; i++)
        net->msgs[i].ideal = sim__ideal_time(net, (uint32_t)i);
    /* HPCC's T, unless the NIC sets one: one for the whole network, the
     * largest base RTT of its queue pairs, as HPCC's ns-3 runs it
     * (run.py: GLOBAL_T 1; third.cc: maxRtt over the pairs' base RTTs) */
    sim_time_t t = 0;
    for (size_t i = 0; i < net->nconns; i++)
        for (int side = 0; side < 2; side++) {
            const struct sim_qp *qp = net->conns[i].qp[side];
            sim_time_t rtt = qp->p->fab.cc == CFG_CC_HPCC ? sim__base_rtt(net, (uint32_t)i, side) : 0;
            if (rtt > t)
                t = rtt;
        }
    for (size_t i = 0; i < net->nconns; i++)
        for (int side = 0; side < 2; side++) {
            struct sim_qp *qp = net->conns[i].qp[side];
            qp->hpcc_t = qp->p->fab.hpcc.base_rtt ? qp->p->fab.hpcc.base_rtt : t;
        }
    if (outgrows_cache(net)) {
        sim_set_prefetch(net->sim, true);
        sim__huge_heap();
        /* every packet reads its queue pair's NIC parameters there */
        sim__huge_collapse(cfg->nodes, cfg->nnodes * sizeof *cfg->nodes);
    }
    net->setup_fn = NULL; /* routes built again on a link fault are part of the run */
    return net;
}

void sim_network_destroy(struct sim_network *net)
{
    if (!net)
        return;
    sim__split_free(net);
    sim__pcie_destroy(net);
    sim__traces_close(net, false, NULL, 0);
    free(net->pcaps);
    sim__output_dirs_release(net, false);
    sim_destroy(net->sim);
    free(net->nvswitches);
    sim__monitor_destroy(net);
    sim__faults_destroy(net);
    for (size_t i = 0; i < net->nports; i++) {
        free(net->ports[i].name);
        sim__ring_free(net->ports[i].ring, net->ports[i].ring_cap);
        free(net->ports[i].ib);
    }
    free(net->ports);
    sim__unmap(net->switch_ports, net->switch_ports_size);
    sim__subnet_free(net);
    sim__routes_free(&net->routes);
    sim__pool_fini(&net->pool);
    sim__arena_free(&net->rings);
    free(net->nodes);
    free(net->node_host);
    free(net->host_node);
    free(net->msgs);
    free(net->conns);
    free(net);
}

struct sim *sim_network_engine(struct sim_network *net) { return net->sim; }
double sim_network_progress(const struct sim_network *net)
{
    if (net->cfg->stop != SIM_TIME_NEVER)
        return net->cfg->stop ? (double)sim_now(net->sim) / (double)net->cfg->stop : 1;
    return net->nmsgs ? (double)net->finished / (double)net->nmsgs : net->transfers_left ? 0 : 1;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool run(struct sim_network *net)
{
    if (net->split)
        return sim__split_run(net);
    if (net->finished < net->nmsgs || net->transfers_left)
        sim_run(net->sim, net->cfg->stop);
    for (size_t i = 0; i < net->nports; i++)
        sim__port_settle(&net->ports[i]);
    sim__verify(net);
    return true;
}

bool sim_network_run(struct sim_network *net)
{
    double start = cpu_now();
    bool whole = run(net);
    net->run_cpu_s = cpu_now() - start;
    return whole;
}

void sim_network_totals(const struct sim_network *net, struct sim_totals *t)
{
    memset(t, 0, sizeof *t);
    t->messages = net->nmsgs;
    t->end = sim_now(net->sim);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct sim_msg *m = &net->msgs[i];
        if (m->status == SIM_MSG_OK) {
            t->completed++;
            t->bytes += net->cfg->msgs[i].size;
        } else if (m->status != SIM_MSG_PENDING) {
            t->failed++;
        }
        t->verified += m->data_ok == 1;
        t->corrupted += m->data_ok == 0;
        t->retransmitted += m->retx;
    }
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port *p = &net->ports[i];
        t->frames += p->st.tx_frames;
        t->dropped += p->st.drops;
        t->lost += p->st.lost;
        t->pauses += p->st.pauses_sent;
        t->ecn_marked += p->st.ecn_marked;
        t->cnps += p->st.cnps_sent;
    }
    t->deadlocks = net->monitor->ndeadlocks;
    for (size_t i = 0; i < net->nconns; i++)
        for (int s = 0; s < 2; s++) {
            t->timeouts += net->conns[i].qp[s]->st.timeouts;
            t->timeouts_without_loss += net->conns[i].qp[s]->st.rto_dups;
        }
    for (size_t i = 0; i < net->cfg->nnodes; i++) {
        t->bad_frames += net->nodes[i]->bad_frames;
        t->unroutable += net->nodes[i]->unroutable;
    }
}
