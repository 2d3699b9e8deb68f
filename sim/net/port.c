/* port.c - ports and the links between them.
 *
 * A port serializes one frame at a time at its link's rate (frame bytes
 * plus what its link layer adds: preamble, FCS and inter-frame gap on
 * Ethernet), then the frame travels for the
 * link's propagation delay and arrives whole at the peer port: store and
 * forward. Frames may be lost (frame loss rate) or get one bit flipped
 * (bit error rate); the flipped bit lies after the fifth byte of the BTH
 * (the ICRC covers the rest of the packet, but not the BTH's fifth byte),
 * so the receiver finds a bad ICRC and drops the frame, as hardware does.
 *
 * The link layer's own frames (Ethernet's MAC control frames: PFC) end at
 * the receiving port, which obeys them (pfc.c); the node never sees them.
 * A link that
 * goes down (fault.c) loses every frame that was on it: the one being
 * serialized and those still propagating.
 *
 * Towards a cut-through switch a frame longer than the header the switch
 * reads (its link layer's cut_through_bytes) reaches the peer once that header has
 * arrived, a propagation delay after it left; loss and bit errors are
 * then decided as it starts, and a link that goes down while its tail is
 * still leaving does not take it back. The switch keeps it from finishing
 * on a faster port before it has arrived whole (fabric/switch.c).
 *
 * A switch's forwarding latency is added to the arrival of the frames it
 * forwards (peer_latency): they reach it when it would send them on, which
 * costs no event; the link layer's own frames (PFC) arrive without it.
 */
#include <math.h>
#include <stdlib.h>

#include "engine/util.h"
#include "net/net.h"

static struct sim_frame *corrupt(struct sim_port *p, struct sim_frame *f);

/* A switch's forwarding latency delays what it forwards: a frame from p
 * reaches it that much later, without an event of its own. */
static sim_time_t forwarding_latency(const struct sim_port *p, const struct sim_frame *f)
{
    if (p->peer_latency && (p->ll->own_in_order || !(p->ll->own && p->ll->own(f))))
        return p->peer_latency;
    return 0;
}

/* The frame's last bit (or, towards a cut-through switch, its header) is
 * on the wire at t: loss, bit errors, and arrival a propagation delay
 * later. */
static void deliver(struct sim_port *p, struct sim_frame *f, sim_time_t t)
{
    if (p->noisy && p->p.loss > 0 && sim_rng_unit(&p->comp.rng) < p->p.loss) {
        p->st.lost++;
        sim__frame_free(&p->node->net->pool, f);
        return;
    }
    if (p->noisy && p->p.ber > 0 && sim_rng_unit(&p->comp.rng) < -expm1(p->corrupt_log * 8.0 * f->len))
        f = corrupt(p, f);
    /* the peer's id without reading the peer (network.c numbers ports
     * in their array's order) */
    uint32_t peer_id = p->comp.id + (uint32_t)(p->peer - p);
    sim_schedule_id(p->comp.sim, t + p->delay + forwarding_latency(p, f), &p->peer->comp, peer_id,
                    SIM_PORT_ARRIVAL, f);
}

/* Time to serialize `bytes`: from the fields every frame reads when the
 * rate allows (the link's parameters lie lines further on). */
static sim_time_t wire_time(const struct sim_port *p, uint64_t bytes)
{
    return p->ps_per_byte ? bytes * p->ps_per_byte : sim__ser_time(bytes, p->p.rate);
}

static void start(struct sim_port *p, struct sim_frame *f, uint32_t len)
{
    struct sim *sim = p->comp.sim;
    p->sending = f;
    p->tx_start = sim_now(sim);
    uint64_t bytes = (uint64_t)len + p->wire_extra;
    sim_time_t t = wire_time(p, bytes);
    p->st.busy += t;
    p->st.tx_frames++;
    p->st.tx_bytes += len;
    if (p->ll->sent && !(p->ll->own && p->ll->own(f)))
        p->ll->sent(p, f, len);
    for (struct sim_tap *tap = p->tap; tap; tap = tap->next)
        tap->frame(tap, sim_now(sim), f);
    sim_schedule(sim, sim_now(sim) + t, &p->comp, SIM_PORT_TX_DONE, NULL);
    p->early = p->cut_through && bytes > p->cut_bytes;
    if (p->early)
        deliver(p, f, sim_now(sim) + wire_time(p, p->cut_bytes));
}

void sim__port_send(struct sim_port *p, struct sim_frame *f, uint32_t len)
{
    if (p->down) {
        p->st.lost++;
        sim__frame_free(&p->node->net->pool, f);
        return;
    }
    if (sim__port_idle(p)) {
        start(p, f, len);
        return;
    }
    if (p->ring_tail - p->ring_head == p->ring_cap)
        p->ring = sim__ring_grow(p->node->net, p->ring, &p->ring_cap, p->ring_head, p->ring_tail, sizeof *p->ring);
    p->ring[p->ring_tail++ & (p->ring_cap - 1)] = (struct sim_queued){f, len};
}

/* A bit error anywhere after the BTH's first word: in a frame that leaves
 * out its fill, the fill too, which the frame then takes in whole. */
static struct sim_frame *corrupt(struct sim_port *p, struct sim_frame *f)
{
    uint32_t from = f->bth_off + 5;
    if (f->len <= from)
        return f;
    uint64_t bit = sim_rng_below(&p->comp.rng, (uint64_t)(f->len - from) * 8);
    uint32_t at = from + (uint32_t)(bit / 8);
    if (at >= f->fill_at && at < (uint32_t)f->fill_at + f->fill_len) {
        struct sim_network *net = p->node->net;
        struct sim_frame *whole = sim__frame_whole(&net->pool, f, net->fill);
        if (p->sending == f) /* handed over early: tx_done must not see the old one */
            p->sending = whole;
        f = whole;
    }
    *sim__frame_byte(f, at) ^= (uint8_t)(1u << (bit % 8));
    p->st.corrupted++;
    return f;
}

static void tx_done(struct sim_port *p)
{
    struct sim_frame *f = p->sending;
    p->sending = NULL;
    if (p->early) {
        p->early = false; /* the peer has it already */
    } else if (p->went_down && p->down_at >= p->tx_start) {
        /* the link went down while the frame was leaving */
        p->st.lost++;
        sim__frame_free(&p->node->net->pool, f);
    } else {
        deliver(p, f, sim_now(p->comp.sim));
    }
    if (p->down)
        return;
    if (p->ring_head != p->ring_tail) {
        struct sim_queued q = p->ring[p->ring_head++ & (p->ring_cap - 1)];
        start(p, q.f, q.len);
    } else if (!p->quiet && p->node->nops->tx_ready) {
        p->node->nops->tx_ready(p->node, p);
    }
}

void sim__port_flush(struct sim_port *p)
{
    while (p->ring_head != p->ring_tail) {
        struct sim_queued q = p->ring[p->ring_head++ & (p->ring_cap - 1)];
        p->st.lost++;
        sim__frame_free(&p->node->net->pool, q.f);
    }
}

/* Whether a frame arriving at p was on the link when it went down (both
 * ends of a link go down together): one that had reached the port before
 * is in the node, whose forwarding latency its arrival waits out. */
static bool on_the_link_when_down(const struct sim_port *p, const struct sim_frame *f)
{
    sim_time_t reached = sim_now(p->comp.sim) - forwarding_latency(p->peer, f);
    return reached >= p->down_at && reached <= p->down_at + p->delay;
}

static void arrival(struct sim_port *p, struct sim_frame *f)
{
    /* went_down first: only links that ever failed read the peer's port */
    if (p->went_down && on_the_link_when_down(p, f)) {
        p->peer->st.lost++;
        sim__frame_free(&p->node->net->pool, f);
        return;
    }
    p->st.rx_frames++;
    p->st.rx_bytes += f->len;
    for (struct sim_tap *tap = p->tap; tap; tap = tap->next)
        tap->frame(tap, sim_now(p->comp.sim), f);
    if (!p->ll->receive(p, f))
        p->node->nops->receive(p->node, p, f);
}

static void port_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_port *p = (struct sim_port *)c;
    switch (sim_event_kind(ev)) {
    case SIM_PORT_TX_DONE:
        tx_done(p);
        break;
    case SIM_PORT_ARRIVAL:
        arrival(p, ev->ptr);
        break;
    case SIM_PORT_LINK_TIMER:
        p->ll->timer(p, ev->ptr);
        break;
    }
}

/* Before ev fires (engine.h's steps): the port's other lines of every
 * frame and the two lines of an arriving frame its receiver reads first
 * (the engine fetched the one the frame starts in); then the node's first
 * lines, for an arrival or an end of frame that will ask the node for the
 * next; then what the node will read for it (sim_node_ops). */
static void port_prefetch(const struct sim_component *c, const struct sim_event *ev, unsigned step)
{
    const struct sim_port *p = (const struct sim_port *)c;
    bool arrival = sim_event_kind(ev) == SIM_PORT_ARRIVAL;
    if (step == 0) {
        __builtin_prefetch((const char *)c + 64);
        __builtin_prefetch((const char *)c + 128);
        if (arrival) {
            __builtin_prefetch((const char *)ev->ptr + SIM_FRAME_LINE_AT);
            __builtin_prefetch((const char *)ev->ptr + SIM_FRAME_LINE_AT + 64);
        }
        return;
    }
    if (!arrival && (sim_event_kind(ev) != SIM_PORT_TX_DONE || p->quiet))
        return;
    if (step == 1) {
        __builtin_prefetch(p->node);
        __builtin_prefetch((const char *)p->node + 64);
        __builtin_prefetch((const char *)p->node + 128);
    } else if (p->node->nops->prefetch) {
        p->node->nops->prefetch(p->node, p, arrival ? ev->ptr : NULL, step - 2);
    }
}

void sim__port_set_link_layer(struct sim_port *p, const struct sim_link_layer_ops *ll)
{
    p->ll = ll;
    p->wire_extra = ll->wire_extra;
    p->cut_bytes = ll->cut_through_bytes;
}

void sim__port_unblocked(struct sim_port *p)
{
    if (sim__port_idle(p) && !p->down && !p->quiet && p->node->nops->tx_ready)
        p->node->nops->tx_ready(p->node, p);
}

static const char *const port_event_names[] = {
#define SIM__PORT_EV_NAME(name, str) str,
    SIM_PORT_EVENTS(SIM__PORT_EV_NAME)
#undef SIM__PORT_EV_NAME
};

const struct sim_component_ops sim__port_ops = {
    .type = "port",
    .event_names = port_event_names,
    .nevents = sizeof port_event_names / sizeof port_event_names[0],
    .handle = port_handle,
    .prefetch = port_prefetch,
};
