/* ib_switch.c - an InfiniBand switch: output queued, one queue per VL on
 * each port, forwarding by the linear forwarding table the subnet manager
 * filled (net/subnet.c), credit-based flow control instead of a shared
 * buffer and PFC (net/ib_link.c), VL arbitration (vlarb.c) and IB
 * congestion control marking (IBA vol. 1, annex A10).
 *
 * A packet arrives in the input buffer of its port and VL, which its
 * upstream neighbour had credit for. The switch reads its LRH: the DLID
 * gives the output port, the SL the output VL (infiniband.sl2vl); when the
 * VL changes, the LRH's VL field and the VCRC (which covers it) are
 * rewritten, as switches do. The packet waits in the output port's VL
 * queue and frees its input blocks, returning credit upstream, only as it
 * leaves: the input buffer is where the packet is held. So a congested
 * output backs up into input buffers and then, through credits, into the
 * upstream switches, without a packet ever being dropped.
 *
 * Congestion control: a packet leaving a VL queue that still holds at
 * least `threshold` bytes is a candidate, unless the VL had to wait for
 * credit since its last packet left: the port is then a victim of
 * congestion downstream, not its root, and IB CC marks only at the root
 * (A10.2.1.1, without a victim mask). One candidate in every
 * marking_rate + 1 gets FECN set in its BTH (and its VCRC rewritten; the
 * ICRC does not cover FECN).
 *
 * Cut-through and latency as the Ethernet switch (fabric/switch.c): a
 * packet is forwarded `latency` after its LRH arrived, or after it arrived
 * whole when the output is faster than the input.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "net/ib.h"
#include "rdma_bytes.h"
#include "rdma_codec.h"

enum { IBSW_EV_FORWARD, IBSW_EV_COUNT };
static const char *const ibsw_event_names[IBSW_EV_COUNT] = {"forward"};

#define LRH_LEN 8
#define FECN_AT (LRH_LEN + 4) /* BTH byte 4: FECN is its top bit */
#define MIN_PACKET (LRH_LEN + 12 + 4 + 2)

static void rewrite_vcrc(struct sim_network *net, struct sim_frame *f)
{
    uint16_t vcrc = rdma_vcrc(sim__frame_bytes(f, net->fill, net->rx_bytes, f->len), f->len - 2);
    *sim__frame_byte(f, f->len - 2) = (uint8_t)vcrc;
    *sim__frame_byte(f, f->len - 1) = (uint8_t)(vcrc >> 8);
}

static void enqueue(struct sim_switch *sw, struct sim_frame *f, uint16_t in, uint32_t out,
                    unsigned vl, unsigned in_vl)
{
    struct sim_node *n = &sw->node;
    struct sim_port *op = n->ports[out];
    struct sw_port *sp = &sw->sp[out];
    sim__swq_push(n->net, &sp->q[vl], (struct sw_item){.f = f, .len = f->len, .in = in, .prio = (uint8_t)vl,
                                                       .l3 = (uint8_t)in_vl});
    sp->busy |= (uint8_t)(1u << vl);
    sp->bytes += f->len;
    if (sim__port_idle(op))
        n->nops->tx_ready(n, op);
    if (sp->bytes > sp->max_queue)
        op->st.max_queue = sp->max_queue = sp->bytes;
}

static void ib_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sim_network *net = n->net;
    unsigned in_vl = sim__ib_vl(f);
    uint16_t ibport = f->len >= MIN_PACKET ? sim__ib_lft(net, n, rdma_get_be16(f->data + 2)) : SIM_IB_NO_PORT;
    /* IB port 0 is the management port: data port k is the node's k - 1 */
    uint32_t out = ibport - 1u;
    if (ibport == SIM_IB_NO_PORT || ibport == 0 || out >= n->nports || n->ports[out] == in) {
        /* no route, or to the switch itself (no management agent modelled) */
        n->unroutable++;
        sim__ib_free(in, in_vl, f->len);
        sim__frame_free(&net->pool, f);
        return;
    }
    unsigned vl = net->cfg->ib.sl2vl[f->data[1] >> 4];
    if (vl != in_vl) {
        f->data[0] = (uint8_t)(vl << 4 | (f->data[0] & 0x0f));
        rewrite_vcrc(net, f);
    }
    uint64_t wire = (uint64_t)f->len + in->wire_extra;
    struct sim_port *op = n->ports[out];
    if (in->peer->cut_through && wire > in->cut_bytes && sim__port_faster(op, in)) {
        sim_time_t wait = sim__ser_time(wire, in->p.rate) - sim__ser_time(in->cut_bytes, in->p.rate);
        f->in = (uint16_t)in->index;
        f->out = (uint16_t)out;
        f->prio = (uint8_t)vl;
        f->l3 = (uint8_t)in_vl;
        sim_schedule(n->comp.sim, sim_now(n->comp.sim) + wait, &n->comp, IBSW_EV_FORWARD, f);
        return;
    }
    enqueue(sw, f, (uint16_t)in->index, out, vl, in_vl);
}

static void ib_tx_ready(struct sim_node *n, struct sim_port *port)
{
    struct sim_switch *sw = sim__switch_of(n);
    const struct cfg_ib *ib = &n->net->cfg->ib;
    struct sw_port *sp = &sw->sp[port->index];
    uint8_t ready = sp->busy & (uint8_t)~port->blocked;
    if (!ready)
        return;
    int vl = sim__vlarb_pick(&sp->vlarb, &ib->vlarb, ready);
    if (vl < 0)
        return;
    sp->q[vl].sent++;
    struct sw_item it = sim__swq_pop(sp, (unsigned)vl);
    /* it leaves its input buffer: credit for the upstream port */
    sim__ib_free(n->ports[it.in], it.l3, it.len);
    /* a port whose VL waited for credit since it last sent is a victim of
     * congestion further on, not its root: it does not mark (A10.2.1.1) */
    bool victim = port->ib->vl[vl].starved;
    port->ib->vl[vl].starved = false;
    if (ib->cc.enable && !victim && sp->q[vl].bytes >= ib->cc.threshold &&
        ++sp->ibcc_count > ib->cc.marking_rate && !(it.f->data[FECN_AT] & 0x80)) {
        sp->ibcc_count = 0;
        it.f->data[FECN_AT] |= 0x80;
        rewrite_vcrc(n->net, it.f);
        port->st.ecn_marked++;
    }
    sim__vlarb_sent(&sp->vlarb, it.len);
    sim__port_send(port, it.f, it.len);
}

/* The link of `port` went down: what waits for it is lost, and gives its
 * input blocks back. */
static void ib_link_down(struct sim_node *n, struct sim_port *port)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sw_port *sp = &sw->sp[port->index];
    for (unsigned vl = 0; vl < SIM_PRIOS; vl++)
        while (sp->busy & (1u << vl)) {
            struct sw_item it = sim__swq_pop(sp, vl);
            sim__ib_free(n->ports[it.in], it.l3, it.len);
            sim__frame_free(&n->net->pool, it.f);
            port->st.lost++;
        }
}

static void ibsw_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    struct sim_frame *f = ev->ptr;
    if (sim_event_kind(ev) == IBSW_EV_FORWARD)
        enqueue(sw, f, f->in, f->out, f->prio, f->l3);
}

static const struct sim_node_ops ib_switch_node_ops = {
    .receive = ib_receive,
    .tx_ready = ib_tx_ready,
    .link_down = ib_link_down,
};

static void ibsw_init(struct sim_component *c)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    struct sim_node *n = &sw->node;
    sw->sp = sim__sw_ports(n->net, n->nports);
    for (uint32_t i = 0; i < n->nports; i++)
        sim__vlarb_init(&sw->sp[i].vlarb, &n->net->cfg->ib.vlarb);
}

static const struct sim_component_ops ib_switch_ops = {
    .type = "switch",
    .event_names = ibsw_event_names,
    .nevents = IBSW_EV_COUNT,
    .init = ibsw_init,
    .handle = ibsw_handle,
    .fini = sim__switch_fini,
};

struct sim_node *sim__ib_switch_create(struct sim_network *net, uint32_t index)
{
    struct sim_switch *sw = sim__xcalloc(1, sizeof *sw);
    const struct sim_config *cfg = net->cfg;
    sw->p = &cfg->fabric.sw[cfg->nodes[index].swp];
    sw->node.nops = &ib_switch_node_ops;
    sw->node.net = net;
    sw->node.index = index;
    sw->node.kind = CFG_SWITCH;
    sim_component_add(net->sim, &sw->node.comp, &ib_switch_ops, cfg->nodes[index].name);
    return &sw->node;
}
