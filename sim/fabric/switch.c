/* switch.c - an output-queued switch with eight traffic classes per port,
 * a shared buffer (buffer.c), PFC (pfc.c, IEEE 802.1Qbb), ECN marking
 * (ecn.c) and the routing choices of net/route.c: ECMP, dmodk, per-packet
 * spraying and adaptive routing by the least bytes queued.
 *
 * A frame is forwarded its latency after its header arrived (cut-through:
 * net/port.c hands it over then) or after it arrived whole (store and
 * forward); the switch reads the Ethernet, IP and UDP headers with the codec, looks the
 * destination host up in its routes, picks among equal-cost ports with a
 * hash of the addresses and the UDP source port (RoCEv2 puts a hash of
 * the queue pair there: the per-QP entropy), and classifies the frame by
 * its DSCP or 802.1Q PCP into one of eight priorities. The buffer admits
 * it against its ingress group (port, priority), and it waits in the
 * egress queue of its class. RED marks it as it leaves, on the bytes
 * still queued behind it in its class, as switch ASICs and HPCC's ns-3
 * switch (SwitchNotifyDequeue) do: the mark then reaches the receiver
 * without first waiting through the queue it reports. `ecn.mark:
 * enqueue` marks on the bytes a frame finds on arrival instead. Like a real switch it does not
 * check the ICRC, so a frame with a bit error travels on to the host,
 * which drops it.
 *
 * Each port pulls its next frame when it is free: strict-priority classes
 * first (highest first), then the others by deficit weighted round robin
 * (Shreedhar and Varghese, SIGCOMM 1995), skipping classes the peer has
 * paused. A frame leaving frees its bytes in its ingress group, which may
 * end a pause there (XON).
 *
 * The PFC watchdog: a class whose peer keeps it paused longer than the
 * limit while frames wait is "stormed": its queue is dropped, and frames
 * for it are dropped on arrival, until that pause ends.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "rdma_bytes.h"
#include "rdma_codec.h"
#include "rdma_iwarp.h"

enum { SW_EV_PFC_WATCHDOG, SW_EV_FORWARD, SW_EV_COUNT };
static const char *const switch_event_names[SW_EV_COUNT] = {"pfc-watchdog", "forward"};

/* The port that spreads flows over paths: the UDP source port (RoCEv2's
 * per-QP entropy) or, for TCP, the source port of the connection. */
static bool flow_port(const struct rdma_pkt *pkt, const uint8_t *frame, uint16_t *sport)
{
    struct rdma_tcp th;
    const uint8_t *payload;
    uint32_t len;
    if (pkt->present & RDMA_HDR_UDP) {
        *sport = pkt->udp.srcport;
        return true;
    }
    if (!rdma_tcp_decode(pkt, frame, &th, &payload, &len))
        return false;
    *sport = th.srcport;
    return true;
}

static bool dest_host(const struct sim_network *net, const struct rdma_pkt *pkt, uint32_t *src,
                      uint32_t *dst)
{
    uint32_t s, d;
    if (pkt->present & RDMA_HDR_IP) {
        s = rdma_get_be32(pkt->ip.src) - sim__host_ip4(0);
        d = rdma_get_be32(pkt->ip.dst) - sim__host_ip4(0);
    } else if (pkt->present & RDMA_HDR_IPV6) {
        s = rdma_get_be32(pkt->ipv6.src + 12) - 1;
        d = rdma_get_be32(pkt->ipv6.dst + 12) - 1;
    } else {
        return false;
    }
    if (d >= net->nhosts)
        return false;
    *src = s;
    *dst = d;
    return true;
}

/* The egress port towards host dst under the configured routing, or
 * UINT32_MAX when there is none. */
static uint32_t route(struct sim_switch *sw, uint32_t src, uint32_t dst, uint16_t sport)
{
    struct sim_node *n = &sw->node;
    const struct sim_network *net = n->net;
    uint32_t k;
    const uint32_t *ports;
    switch (net->cfg->routing) {
    case CFG_ROUTING_SPRAY:
        if (!(ports = sim__route_set(net, n, dst, &k)))
            return UINT32_MAX;
        return ports[k == 1 ? 0 : sim_rng_below(&n->comp.rng, k)];
    case CFG_ROUTING_ADAPTIVE: {
        if (!(ports = sim__route_set(net, n, dst, &k)))
            return UINT32_MAX;
        if (k == 1)
            return ports[0];
        /* the fewest bytes queued; among equals, the flow's ECMP port
         * first, so an idle fabric keeps a flow on one path */
        uint32_t first = sim__flow_hash(src, dst, sport, n->index) % k, best = ports[first];
        for (uint32_t i = 1; i < k; i++) {
            uint32_t p = ports[(first + i) % k];
            if (sw->sp[p].bytes < sw->sp[best].bytes)
                best = p;
        }
        return best;
    }
    default: /* ecmp; dmodk's sets hold one port */
        return sim__route(net, n, dst, sim__flow_hash(src, dst, sport, n->index));
    }
}

static unsigned classify(const struct cfg_fabric *fab, const struct rdma_pkt *pkt)
{
    if (fab->trust_pcp)
        return pkt->nvlan ? pkt->vlan[0].priority : 0;
    unsigned dscp = pkt->present & RDMA_HDR_IP ? pkt->ip.dsfield_dscp : pkt->ipv6.tclass >> 2u;
    return sim__dscp_prio(fab, dscp);
}

/* ---- queues ---------------------------------------------------------------------- */
void sim__swq_push(struct sim_network *net, struct sw_queue *q, struct sw_item it)
{
    if (q->tail - q->head == q->cap)
        q->ring = sim__ring_grow(net, q->ring, &q->cap, q->head, q->tail, sizeof *q->ring);
    q->ring[q->tail++ & (q->cap - 1)] = it;
    q->bytes += it.len;
}

struct sw_item sim__swq_pop(struct sw_port *sp, unsigned c)
{
    struct sw_queue *q = &sp->q[c];
    struct sw_item it = q->ring[q->head++ & (q->cap - 1)];
    /* the next turn of this queue comes a frame time later: have its slot
     * in cache by then */
    __builtin_prefetch(&q->ring[q->head & (q->cap - 1)]);
    q->bytes -= it.len;
    sp->bytes -= it.len;
    if (q->head == q->tail) {
        sp->busy &= (uint8_t)~(1u << c);
        q->deficit = 0;
    }
    return it;
}

struct sw_port *sim__sw_ports(struct sim_network *net, uint32_t n)
{
    /* room for every port and one more per node: no switch has more */
    size_t cap = net->nports + net->cfg->nnodes;
    if (!net->switch_ports) {
        net->switch_ports_size = cap * sizeof(struct sw_port);
        net->switch_ports = sim__xmap_aligned((size_t)2 << 20, net->switch_ports_size);
        sim__huge_hint(net->switch_ports, net->switch_ports_size);
    }
    struct sw_port *sp = (struct sw_port *)net->switch_ports + net->switch_ports_used;
    net->switch_ports_used += n ? n : 1;
    return sp;
}

/* A frame leaves the buffer: free its bytes in its ingress group, which
 * may resume (XON). */
static void release(struct sim_switch *sw, const struct sw_item *it)
{
    /* without a shared buffer nothing is accounted, and there is no PFC
     * (the configuration check): the group's line stays unread */
    if (!sw->mmu.shared)
        return;
    struct sw_queue *iq = &sw->sp[it->in].q[it->prio]; /* the ingress group's line */
    sim__mmu_release(&sw->mmu, &iq->pg, it->len);
    struct sim_port *in = sw->node.ports[it->in];
    if (iq->xoff && (in->pfc.xoff & (1u << it->prio)) && sim__mmu_may_resume(&sw->mmu, &iq->pg)) {
        sim__pfc_xon(in, it->prio);
        iq->xoff = false;
    }
}

/* Take the head of class c of port p and free its buffer. */
static struct sw_item take(struct sim_switch *sw, struct sw_port *sp, unsigned c)
{
    struct sw_item it = sim__swq_pop(sp, c);
    release(sw, &it);
    return it;
}

static unsigned dwrr(struct sw_port *sp, uint8_t ready)
{
    for (;;) {
        unsigned c = sp->rr;
        if (ready & (1u << c)) {
            struct sw_queue *q = &sp->q[c];
            uint32_t len = q->ring[q->head & (q->cap - 1)].len;
            if (q->deficit >= len) {
                q->deficit -= len;
                return c;
            }
        }
        /* the next ready class's turn (classes with nothing ready pass
         * without a change): it may send a quantum's worth, at least one
         * frame since quanta are whole largest frames */
        unsigned later = ready & ~((2u << c) - 1);
        unsigned next = (unsigned)__builtin_ctz(later ? later : ready);
        sp->rr = (uint8_t)next;
        sp->q[next].deficit += sp->q[next].quantum;
    }
}

/* A frame out of class it->prio of port's queues (sp) goes on the wire. */
static void send_out(struct sim_switch *sw, struct sim_port *port, struct sw_port *sp, struct sw_item *it)
{
    /* the frame's bytes are out of cache by now: only a frame RED marks
     * is touched */
    if (sw->p->ecn && !sw->p->ecn_enqueue && (it->l3 & SW_L3_ECT) &&
        sim__ecn_decide(&sp->red, sp->q[it->prio].bytes, &sw->node.comp.rng) &&
        sim__ecn_mark(it->f->data + (it->l3 & SW_L3_OFF), it->l3 & SW_L3_V6))
        port->st.ecn_marked++;
    if (it->l3 & SW_L3_V6)
        sim__telemetry_add(sw, port, it);
    sim__port_send(port, it->f, it->len);
}

static void sw_tx_ready(struct sim_node *n, struct sim_port *port)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sw_port *sp = &sw->sp[port->index];
    uint8_t ready = sp->busy & (uint8_t)~port->blocked;
    if (!ready)
        return;
    uint8_t strict = ready & sw->p->strict;
    unsigned c = strict ? 31u - (unsigned)__builtin_clz(strict) : dwrr(sp, ready);
    sp->q[c].sent++;
    struct sw_item it = take(sw, sp, c);
    /* the port need not ask again until a frame is queued (forward): on a
     * fabric where little queues, each frame's end would read this port's
     * state for nothing */
    port->quiet = !sp->busy;
    send_out(sw, port, sp, &it);
}

/* Drop everything queued in class c of a port. */
static void flush(struct sim_switch *sw, struct sim_port *port, unsigned c, uint64_t *count)
{
    struct sw_port *sp = &sw->sp[port->index];
    while (sp->busy & (1u << c)) {
        struct sw_item it = take(sw, sp, c);
        sim__frame_free(&sw->node.net->pool, it.f);
        (*count)++;
    }
}

static void drop(struct sim_switch *sw, struct sim_frame *f, uint64_t *count)
{
    (*count)++;
    sim__frame_free(&sw->node.net->pool, f);
}

static void forward(struct sim_switch *sw, struct sim_port *in, struct sim_frame *f, uint32_t out,
                    unsigned prio, uint8_t l3);

#define PLAIN_IP_AT 14 /* untagged Ethernet */
#define PLAIN_UDP_AT (PLAIN_IP_AT + 20)

/* Whether the 20 bytes of an IPv4 header without options sum to all ones
 * (RFC 1071): its checksum is right. */
static bool ipv4_sum_is_ones(const uint8_t *ip)
{
    uint32_t sum = 0;
    for (unsigned i = 0; i < 20; i += 2)
        sum += rdma_get_be16(ip + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

/* Read straight from the frame's bytes where they are those of the plain
 * frame (fabric.h), whose decode by the codec would find nothing wrong. */
bool sim__sw_plain_headers(const struct sim_switch *sw, const struct sim_frame *f, struct sw_headers *h)
{
    const struct sim_network *net = sw->node.net;
    const uint8_t *d = f->data, *ip = d + PLAIN_IP_AT;
    /* the last test: a frame to the port the configuration decodes as
     * RoCEv2 (none, for a switch) is the codec's to check */
    if (sim__frame_head(f) < PLAIN_UDP_AT + 8 || rdma_get_be16(d + 12) != RDMA_ETHERTYPE_IPV4 || ip[0] != 0x45 ||
        ip[9] != 17 || (rdma_get_be16(ip + 6) & 0x3fff) || rdma_get_be16(d + PLAIN_UDP_AT + 2) == sw->dcfg.rocev2_port)
        return false;
    uint32_t ip_len = rdma_get_be16(ip + 2);
    if (ip_len < 20 || PLAIN_IP_AT + ip_len > f->len || !ipv4_sum_is_ones(ip))
        return false;
    h->src = rdma_get_be32(ip + 12) - sim__host_ip4(0);
    h->dst = rdma_get_be32(ip + 16) - sim__host_ip4(0);
    if (h->dst >= net->nhosts)
        return false;
    h->sport = rdma_get_be16(d + PLAIN_UDP_AT);
    const struct cfg_fabric *fab = &net->cfg->fabric;
    h->prio = fab->trust_pcp ? 0 : sim__dscp_prio(fab, ip[1] >> 2);
    unsigned ecn = ip[1] & 3u;
    h->l3 = (uint8_t)(PLAIN_IP_AT | (ecn == 1 || ecn == 2 ? SW_L3_ECT : 0));
    return true;
}

bool sim__sw_decoded_headers(const struct sim_switch *sw, const struct sim_frame *f, struct sw_headers *h)
{
    const struct sim_network *net = sw->node.net;
    struct rdma_pkt pkt;
    /* the headers are all a switch reads: a frame that leaves out its
     * fill decodes as one captured up to it */
    enum rdma_status st = rdma_decode(&sw->dcfg, RDMA_LINKTYPE_ETHERNET, f->data, sim__frame_head(f), f->len, &pkt);
    if ((st != RDMA_OK && !(f->fill_len && rdma_pkt_snapped(&pkt))) || !flow_port(&pkt, f->data, &h->sport) ||
        !dest_host(net, &pkt, &h->src, &h->dst))
        return false;
    h->prio = classify(&net->cfg->fabric, &pkt);
    bool v6 = !(pkt.present & RDMA_HDR_IP);
    unsigned ecn = v6 ? pkt.ipv6.tclass & 3u : pkt.ip.dsfield_ecn;
    h->l3 = (uint8_t)((14 + 4 * pkt.nvlan) | (v6 ? SW_L3_V6 : 0) | (ecn == 1 || ecn == 2 ? SW_L3_ECT : 0));
    return true;
}

static void sw_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sim_network *net = n->net;
    struct sw_headers h;
    uint32_t out;
    if (!sim__sw_plain_headers(sw, f, &h) && !sim__sw_decoded_headers(sw, f, &h)) {
        n->bad_frames++;
        sim__frame_free(&net->pool, f);
        return;
    }
    if ((out = route(sw, h.src, h.dst, h.sport)) == UINT32_MAX) {
        n->unroutable++; /* every link toward the destination is down */
        sim__frame_free(&net->pool, f);
        return;
    }
    unsigned prio = h.prio;
    uint8_t l3 = h.l3;
    /* The frame arrives its forwarding latency after its header (cut-through)
     * or its last bit (store and forward) did (net/port.c). A cut-through
     * frame bound for a faster port waits until it has arrived whole, as
     * such switches fall back to store and forward: the port would
     * otherwise run out of it. */
    uint64_t wire = (uint64_t)f->len + in->wire_extra;
    if (sw->p->cut_through && wire > in->cut_bytes && sim__port_faster(n->ports[out], in)) {
        sim_time_t wait = sim__ser_time(wire, in->p.rate) - sim__ser_time(in->cut_bytes, in->p.rate);
        /* what the headers said rides along: no second decode */
        f->in = (uint16_t)in->index;
        f->out = (uint16_t)out;
        f->prio = (uint8_t)prio;
        f->l3 = l3;
        sim_schedule(n->comp.sim, sim_now(n->comp.sim) + wait, &n->comp, SW_EV_FORWARD, f);
        return;
    }
    forward(sw, in, f, out, prio, l3);
}

/* A cut-through frame bound for a faster port has arrived whole. */
static void forward_later(struct sim_switch *sw, struct sim_frame *f)
{
    forward(sw, sw->node.ports[f->in], f, f->out, f->prio, f->l3);
}

/* Admit, mark and queue a frame of priority prio for egress port `out`;
 * l3 says where its IP header starts, IPv6 or not, ECN-capable or not. */
static void forward(struct sim_switch *sw, struct sim_port *in, struct sim_frame *f, uint32_t out,
                    unsigned prio, uint8_t l3)
{
    struct sim_node *n = &sw->node;
    struct sim_port *op = n->ports[out];
    struct sw_port *sp = &sw->sp[out];
    uint8_t bit = (uint8_t)(1u << prio);
    if (sp->storm & bit) {
        if ((op->blocked & bit) && op->pfc.since[prio] == sp->storm_since[prio]) {
            drop(sw, f, &op->st.watchdog_drops);
            return;
        }
        sp->storm &= (uint8_t)~bit;
        sim__pfc_log_watchdog(op, prio, false);
    }
    struct sw_queue *q = &sp->q[prio];
    struct sw_port *ip = &sw->sp[in->index];
    bool lossless = sw->p->lossless & bit;
    uint32_t len = f->len;
    /* without a shared buffer, a frame that finds its port idle goes
     * straight out, as the simple switch's did */
    if (sw->mmu.shared || !sim__port_idle(op) || sp->busy) {
        enum sim_admit a = sim__mmu_admit(&sw->mmu, &ip->q[prio].pg, len, lossless, &ip->headroom,
                                          q->bytes, sp->bytes);
        if (a == SIM_ADMIT_HEADROOM) {
            if (ip->q[prio].pg.hdrm > in->st.max_headroom)
                in->st.max_headroom = ip->q[prio].pg.hdrm;
        } else if (a != SIM_ADMIT_OK) {
            /* drops count at the port the frame was headed for; those that
             * overflowed a PFC headroom also at the port they came in on */
            if (a == SIM_ADMIT_HEADROOM_FULL)
                in->st.headroom_drops++;
            drop(sw, f, &op->st.drops);
            return;
        }
    }
    if (sw->p->ecn && sw->p->ecn_enqueue && (l3 & SW_L3_ECT) &&
        sim__ecn_decide(&sp->red, q->bytes, &n->comp.rng) &&
        sim__ecn_mark(f->data + (l3 & SW_L3_OFF), l3 & SW_L3_V6))
        op->st.ecn_marked++;
    struct sw_item it = {.f = f, .len = len, .in = (uint16_t)in->index, .prio = (uint8_t)prio, .l3 = l3};
    if (lossless && sim__mmu_should_pause(&sw->mmu, &ip->q[prio].pg) && !(in->pfc.xoff & bit)) {
        sim__pfc_xoff(in, prio);
        ip->q[prio].xoff = true;
    }
    if (!sp->busy && sim__port_idle(op) && !(op->blocked & bit)) {
        /* Nothing waits and the port is free: the frame would be queued
         * and taken straight back (sw_tx_ready), so it skips the ring,
         * whose slot is one more cold line a hop, and leaves the queue's
         * state as that would: its turn (DWRR) and no deficit kept. */
        if (!(sw->p->strict & bit))
            sp->rr = (uint8_t)prio;
        q->deficit = 0;
        q->sent++;
        op->quiet = true;
        release(sw, &it);
        send_out(sw, op, sp, &it);
    } else {
        sim__swq_push(n->net, q, it);
        sp->busy |= bit;
        op->quiet = false;
        sp->bytes += len;
        if (sim__port_idle(op))
            sw_tx_ready(n, op);
    }
    /* the largest queue: bytes waiting, not the frame going out */
    if (sp->bytes > sp->max_queue)
        op->st.max_queue = sp->max_queue = sp->bytes;
}

/* ---- the PFC watchdog ----------------------------------------------------------- */
static void arm_watchdog(struct sim_switch *sw, struct sim_port *port, sim_time_t at)
{
    struct sw_port *sp = &sw->sp[port->index];
    sim_timer_arm(&sp->watchdog, sw->node.comp.sim, at, &sw->node.comp, SW_EV_PFC_WATCHDOG, port);
}

static void sw_paused(struct sim_node *n, struct sim_port *port, unsigned prio)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sw_port *sp = &sw->sp[port->index];
    if (sp->storm & (1u << prio)) {
        /* a new pause: the storm the watchdog saw is over */
        sp->storm &= (uint8_t)~(1u << prio);
        sim__pfc_log_watchdog(port, prio, false);
    }
    if (sw->p->watchdog)
        arm_watchdog(sw, port, sim_now(n->comp.sim) + sw->p->watchdog);
}

static void watchdog(struct sim_switch *sw, struct sim_port *port)
{
    struct sw_port *sp = &sw->sp[port->index];
    sim_time_t now = sim_now(sw->node.comp.sim), limit = sw->p->watchdog, next = SIM_TIME_NEVER;
    if (!sim_timer_fire(&sp->watchdog, now))
        return; /* superseded by an earlier one */
    for (unsigned c = 0; c < SIM_PRIOS; c++) {
        uint8_t bit = (uint8_t)(1u << c);
        if (!(port->blocked & bit) || (sp->storm & bit))
            continue;
        sim_time_t due = port->pfc.since[c] + limit;
        if (due <= now) {
            if (sp->busy & bit) {
                sp->storm |= bit;
                sp->storm_since[c] = port->pfc.since[c];
                sim__pfc_log_watchdog(port, c, true);
                flush(sw, port, c, &port->st.watchdog_drops);
                continue;
            }
            /* nothing waits yet: look again */
            due = now + (limit + 1) / 2;
        }
        if (due < next)
            next = due;
    }
    if (next != SIM_TIME_NEVER)
        arm_watchdog(sw, port, next);
}

/* ---- the rest of the node --------------------------------------------------------- */
static void sw_link_down(struct sim_node *n, struct sim_port *port)
{
    struct sim_switch *sw = sim__switch_of(n);
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        flush(sw, port, c, &port->st.lost);
}

/* Before a port sends XOFF again, resume the groups that may (a
 * dynamic threshold rises when other groups drain). */
static void pfc_refresh(struct sim_node *n, struct sim_port *port)
{
    struct sim_switch *sw = sim__switch_of(n);
    struct sw_port *sp = &sw->sp[port->index];
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        if ((port->pfc.xoff & (1u << c)) && sim__mmu_may_resume(&sw->mmu, &sp->q[c].pg)) {
            sim__pfc_xon(port, c);
            sp->q[c].xoff = false;
        }
}

static void sw_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    if (sim_event_kind(ev) == SW_EV_PFC_WATCHDOG)
        watchdog(sw, ev->ptr);
    else if (sim_event_kind(ev) == SW_EV_FORWARD)
        forward_later(sw, ev->ptr);
}

/* The egress port of a frame arriving at the switch, as sw_receive finds
 * it for the common frame (Ethernet without a VLAN tag, IPv4 without
 * options, UDP) routed by a rule that draws nothing; UINT32_MAX for any
 * other. Reads the frame's first line alone. */
static uint32_t egress_ahead(const struct sim_node *n, const struct sim_frame *f)
{
    const struct sim_network *net = n->net;
    const uint8_t *d = f->data;
    if (net->cfg->routing != CFG_ROUTING_ECMP && net->cfg->routing != CFG_ROUTING_DMODK)
        return UINT32_MAX;
    if (f->len < 38 || d[12] != 0x08 || d[13] != 0x00 || d[14] != 0x45 || d[23] != 17)
        return UINT32_MAX;
    uint32_t src = rdma_get_be32(d + 26) - sim__host_ip4(0), dst = rdma_get_be32(d + 30) - sim__host_ip4(0);
    if (dst >= net->nhosts)
        return UINT32_MAX;
    uint16_t sport = (uint16_t)(d[34] << 8 | d[35]);
    return sim__route(net, n, dst, sim__flow_hash(src, dst, sport, n->index));
}

/* What forward will read for a frame arriving (sim_node_ops): the
 * switch's own lines and its ports' pointers (the first 64: routing the
 * frame twice would cost more), then the egress port's lines and the
 * switch's state for it and its class; for a port that will ask for its
 * next frame, the switch's state for the port. */
static void sw_prefetch(const struct sim_node *n, const struct sim_port *port, const struct sim_frame *f,
                        unsigned step)
{
    const struct sim_switch *sw = (const struct sim_switch *)n;
    if (!f) {
        if (step == 0)
            __builtin_prefetch(&sw->sp);
        else
            __builtin_prefetch(&sw->sp[port->index]);
        return;
    }
    if (step == 0) {
        __builtin_prefetch(&sw->sp);
        for (size_t at = 0; at < n->nports * sizeof *n->ports && at < 512; at += 64)
            __builtin_prefetch((const char *)n->ports + at);
        return;
    }
    uint32_t out = egress_ahead(n, f);
    if (out == UINT32_MAX)
        return;
    const char *op = (const char *)n->ports[out];
    __builtin_prefetch(op);
    __builtin_prefetch(op + 64);
    __builtin_prefetch(op + 128);
    const struct sw_port *sp = &sw->sp[out];
    __builtin_prefetch(sp);
    const struct cfg_fabric *fab = &n->net->cfg->fabric;
    if (!fab->trust_pcp)
        __builtin_prefetch(&sp->q[sim__dscp_prio(fab, f->data[15] >> 2)]);
}

static const struct sim_node_ops switch_node_ops = {
    .receive = sw_receive,
    .tx_ready = sw_tx_ready,
    .paused = sw_paused,
    .link_down = sw_link_down,
    .pfc_refresh = pfc_refresh,
    .prefetch = sw_prefetch,
};

static void sw_init(struct sim_component *c)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    struct sim_node *n = &sw->node;
    const struct sim_config *cfg = n->net->cfg;
    const struct cfg_switch *p = sw->p;
    unsigned nlossless = (unsigned)__builtin_popcount(p->lossless);
    uint64_t headroom = 0, largest = 0;
    sw->sp = sim__sw_ports(n->net, n->nports);
    for (uint32_t i = 0; i < n->nports; i++) {
        struct sim_port *port = n->ports[i];
        struct sw_port *sp = &sw->sp[i];
        sim__pfc_port_init(port, true, p->quanta, p->refresh);
        sp->headroom = p->headroom ? p->headroom : sim__pfc_headroom_switch(&port->p, p->latency);
        headroom += sp->headroom * nlossless;
        if (nlossless)
            port->st.headroom = sp->headroom;
        uint64_t frame = sim__max_frame(&port->p);
        if (frame > largest)
            largest = frame;
        for (unsigned k = 0; k < SIM_PRIOS; k++)
            sp->q[k].quantum = (uint32_t)(p->weights[k] * frame); /* weights: at most 100 */
        sim_timer_init(&sp->watchdog);
    }
    uint64_t reserved = (uint64_t)n->nports * SIM_PRIOS * p->reserved;
    sw->mmu = (struct sim_mmu){
        .shared = p->shared_buffer > 0,
        .port_cap = cfg->nodes[n->index].buffer,
        /* the configuration check keeps this positive */
        .pool = p->shared_buffer > reserved + headroom ? p->shared_buffer - reserved - headroom : 0,
        .alpha = p->alpha,
        .reserved = p->reserved,
        .xoff = p->xoff,
        .xon = p->xon ? p->xon : largest,
    };
    uint64_t cap = sim__queue_cap(p, sw->mmu.port_cap, sw->mmu.pool, n->nports);
    for (uint32_t i = 0; i < n->nports; i++)
        sim__ecn_resolve(p, n->ports[i]->p.rate, cap, &sw->sp[i].red);
}

void sim__switch_fini(struct sim_component *c)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    if (sw->sp)
        for (uint32_t i = 0; i < sw->node.nports; i++)
            for (unsigned k = 0; k < SIM_PRIOS; k++)
                sim__ring_free(sw->sp[i].q[k].ring, sw->sp[i].q[k].cap);
    free(sw->node.ports);
    free(sw);
}

static const struct sim_component_ops switch_ops = {
    .type = "switch",
    .event_names = switch_event_names,
    .nevents = SW_EV_COUNT,
    .init = sw_init,
    .handle = sw_handle,
    .fini = sim__switch_fini,
};

struct sim_node *sim__switch_create(struct sim_network *net, uint32_t index)
{
    if (net->cfg->ib.enable)
        return sim__ib_switch_create(net, index);
    struct sim_switch *sw = sim__xcalloc(1, sizeof *sw);
    const struct sim_config *cfg = net->cfg;
    rdma_decode_config_init(&sw->dcfg);
    /* a switch reads up to the UDP header: no RoCE port, no transport
     * headers, no ICRC */
    sw->dcfg.rocev2_port = 0;
    sw->dcfg.verify_crc = false;
    sw->p = &cfg->fabric.sw[cfg->nodes[index].swp];
    sw->node.nops = &switch_node_ops;
    sw->node.net = net;
    sw->node.index = index;
    sw->node.kind = CFG_SWITCH;
    sim_component_add(net->sim, &sw->node.comp, &switch_ops, net->cfg->nodes[index].name);
    return &sw->node;
}
