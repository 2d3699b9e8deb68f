/* ideal.c - the ideal completion time of a message, from the same frame
 * sizes the NIC puts on the wire and the same paths the switches choose.
 *
 * Packets move store and forward: packet j leaves hop i when it has fully
 * arrived there and hop i has finished packet j-1. This recursion costs
 * one step per packet and hop, a small fraction of simulating them.
 * Each switch adds its latency, from the packet's header when it cuts
 * through (net/port.c, fabric/switch.c); a NIC's pipelines lengthen the
 * first and last hop. With PCIe modelled, the completion is done when its
 * entry is in memory: the requester's NIC writing it, alone on its PCIe
 * path, and the root complex's write latency follow the last packet. A
 * step over a server's NVSwitch takes its bytes at the NVLink rate and
 * the switch's latency.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "host/nic.h"
#include "net/ib.h"
#include "observe/ideal.h"

#define ETH_MIN 60

void sim__path(const struct sim_network *net, uint32_t src, uint32_t dst, uint16_t sport,
               struct sim_path *path)
{
    const struct sim_node *n = net->nodes[net->host_node[src]];
    const struct sim_port *port = n->ports[0];
    size_t cap = 0;
    path->hop = NULL;
    path->n = 0;
    for (size_t guard = 0; guard <= net->cfg->nnodes; guard++) {
        SIM_GROW(path->hop, cap, path->n);
        n = port->peer->node;
        struct sim_hop hop = {port->p.rate, port->delay, port->p.mtu, 0, false, port->cut_bytes, port};
        if (n->kind == CFG_SWITCH) {
            const struct cfg_switch *s = &net->cfg->fabric.sw[net->cfg->nodes[n->index].swp];
            hop.latency = s->latency;
            hop.cut_through = s->cut_through;
        }
        path->hop[path->n++] = hop;
        if (n->kind == CFG_HOST)
            return;
        uint32_t out;
        if (net->subnet) {
            uint32_t lid = sim__ib_host_lid(net, dst) + (sport & ((1u << net->cfg->ib.lmc) - 1));
            uint16_t ibport = sim__ib_lft(net, n, lid);
            if (ibport == SIM_IB_NO_PORT || ibport == 0)
                return;
            out = ibport - 1u;
        } else if ((out = sim__route(net, n, dst, sim__flow_hash(src, dst, sport, n->index))) ==
                   UINT32_MAX) {
            return;
        }
        port = n->ports[out];
    }
}

void sim__path_free(struct sim_path *path)
{
    free(path->hop);
    path->hop = NULL;
    path->n = 0;
}

/* Bytes an RC packet of this opcode and payload costs on a link: an
 * Ethernet frame is at least 60 bytes; an InfiniBand packet has no minimum. */
static uint64_t wire_bytes(const struct sim_network *net, uint32_t overhead, uint8_t opcode,
                           uint32_t payload)
{
    static const uint16_t size[] = {
#define HDR_SIZE(member, BIT, sz) [RDMA_HDRI_##BIT] = sz,
        RDMA_HEADERS(HDR_SIZE)
#undef HDR_SIZE
    };
    uint64_t len = overhead + RDMA_HDR_SIZE_BTH + payload + ((4 - (payload & 3)) & 3);
    for (uint32_t hdrs = rdma_opcodes[opcode].headers; hdrs; hdrs &= hdrs - 1)
        len += size[__builtin_ctz(hdrs)];
    if (net->subnet)
        return len + SIM_IB_WIRE_EXTRA;
    return (len < ETH_MIN ? ETH_MIN : len) + SIM_ETH_WIRE_EXTRA;
}

struct pipeline {
    const struct sim_path *path;
    sim_time_t *free_at; /* when each hop has finished the previous packet */
    sim_time_t *ser;     /* each hop's serialization time of `bytes` */
    uint64_t bytes;      /* of the last packet: most packets of a message have one size */
    sim_time_t arrived;  /* when the last packet reached the far end */
};

static void send_packet(struct pipeline *p, sim_time_t ready, uint64_t bytes)
{
    sim_time_t t = ready;
    if (bytes != p->bytes) {
        for (uint32_t i = 0; i < p->path->n; i++)
            p->ser[i] = sim__ser_time(bytes, p->path->hop[i].rate);
        p->bytes = bytes;
    }
    for (uint32_t i = 0; i < p->path->n; i++) {
        const struct sim_hop *h = &p->path->hop[i];
        if (p->free_at[i] > t)
            t = p->free_at[i];
        sim_time_t start = t;
        t += p->ser[i];
        p->free_at[i] = t;
        if (h->cut_through && bytes > h->cut_bytes) {
            /* the next switch has the header this long after it started,
             * and waits for the rest when its next port is faster */
            sim_time_t hdr = sim__ser_time(h->cut_bytes, h->rate);
            t = start + hdr;
            if (i + 1 < p->path->n && p->path->hop[i + 1].rate > h->rate)
                t += p->ser[i] - hdr;
        }
        t += h->delay + h->latency;
    }
    p->arrived = t;
}

sim_time_t sim__base_rtt(const struct sim_network *net, uint32_t conn, int side)
{
    const struct sim_conn *c = &net->conns[conn];
    const struct sim_qp *q = c->qp[side], *peer = c->qp[1 - side];
    const struct sim_nic *nic = q->nic, *peer_nic = peer->nic;
    struct sim_path fwd, rev;
    uint32_t a = net->node_host[c->host[side]], b = net->node_host[c->host[1 - side]];
    sim__path(net, a, b, q->sport, &fwd);
    sim__path(net, b, a, peer->sport, &rev);
    sim_time_t *free_f = sim__xcalloc(2 * (size_t)fwd.n, sizeof *free_f);
    sim_time_t *free_r = sim__xcalloc(2 * (size_t)rev.n, sizeof *free_r);
    struct pipeline pf = {&fwd, free_f, free_f + fwd.n, 0, 0}, pr = {&rev, free_r, free_r + rev.n, 0, 0};
    send_packet(&pf, 0, wire_bytes(net, nic->transport->overhead(nic), nic->opc.req[SIM_OP_WRITE][SIM_POS_ONLY],
                                   q->mtu));
    send_packet(&pr, pf.arrived, wire_bytes(net, peer_nic->transport->overhead(peer_nic), peer_nic->opc.ack, 0));
    free(free_f);
    free(free_r);
    sim__path_free(&fwd);
    sim__path_free(&rev);
    return pr.arrived;
}

sim_time_t sim__ideal_time(const struct sim_network *net, uint32_t id)
{
    const struct cfg_msg *m = &net->cfg->msgs[id];
    if (m->nvlink) { /* alone on its NVLinks, then the NVSwitch's latency */
        const struct cfg_nvswitch *sw = &net->cfg->nvswitches[net->cfg->nodes[m->src].nvswitch - 1];
        return sw->latency + (sim_time_t)((double)m->size * 8 / (double)sw->rate * (double)SIM_S + 0.5);
    }
    const struct sim_conn *c = &net->conns[net->msgs[id].conn];
    int req_side = c->host[0] == m->src ? 0 : 1;
    const struct sim_qp *rq = c->qp[req_side], *rs = c->qp[1 - req_side];
    const struct sim_nic *nic = rq->nic, *peer_nic = rs->nic;
    const struct sim_opcodes *opc = &nic->opc;
    uint32_t ovh = nic->transport->overhead(nic), povh = peer_nic->transport->overhead(peer_nic);
    struct sim_path fwd, rev;
    sim__path(net, net->node_host[m->src], net->node_host[m->dst], rq->sport, &fwd);
    sim__path(net, net->node_host[m->dst], net->node_host[m->src], rs->sport, &rev);
    sim_time_t *free_f = sim__xcalloc(2 * (size_t)fwd.n, sizeof *free_f);
    sim_time_t *free_r = sim__xcalloc(2 * (size_t)rev.n, sizeof *free_r);
    struct pipeline pf = {&fwd, free_f, free_f + fwd.n, 0, 0}, pr = {&rev, free_r, free_r + rev.n, 0, 0};
    uint32_t mtu = rq->mtu;
    uint64_t size = m->size;
    switch (m->op) {
    case SIM_OP_READ: {
        send_packet(&pf, 0, wire_bytes(net, ovh, opc->req[SIM_OP_READ][SIM_POS_ONLY], 0));
        sim_time_t at = pf.arrived;
        uint64_t off = 0;
        do {
            uint32_t n = size - off < mtu ? (uint32_t)(size - off) : mtu;
            bool first = off == 0, last = size - off <= mtu;
            send_packet(&pr, at, wire_bytes(net, povh, opc->read_resp[sim__pos_of(first, last)], n));
            off += n;
        } while (off < size);
        break;
    }
    case SIM_OP_CAS:
    case SIM_OP_FAA:
        send_packet(&pf, 0, wire_bytes(net, ovh, opc->req[m->op][SIM_POS_ONLY], 0));
        send_packet(&pr, pf.arrived, wire_bytes(net, povh, opc->atomic_ack, 0));
        break;
    default: {
        uint64_t off = 0;
        do {
            uint32_t n = size - off < mtu ? (uint32_t)(size - off) : mtu;
            bool first = off == 0, last = size - off <= mtu;
            send_packet(&pf, 0, wire_bytes(net, ovh, opc->req[m->op][sim__pos_of(first, last)], n));
            off += n;
        } while (off < size);
        send_packet(&pr, pf.arrived, wire_bytes(net, povh, opc->ack, 0));
        break;
    }
    }
    free(free_f);
    free(free_r);
    sim__path_free(&fwd);
    sim__path_free(&rev);
    return pr.arrived + (nic->pcie ? sim__dma_pcie_completion_alone(nic) : 0);
}
