/* ib_link.c - the InfiniBand link layer: credit-based link-level flow
 * control per virtual lane (IBA vol. 1, release 1.4, 7.9), with flow
 * control packets that are real link packets built and checked by the
 * codec (Op, FCTBS, VL, FCCL and the LPCRC).
 *
 * When a port sends flow control packets for a VL:
 *  - once the node has freed `credit_update` blocks of its receive buffer
 *    since the last one (credits go back as the buffer drains);
 *  - and at least once every `period` (65,536 symbol times by default),
 *    as 7.9.4 requires of every operational data VL, busy or idle.
 * A packet may start only with credit for it; this model blocks a VL while
 * its credit is below the largest packet the link carries (`max_blocks`),
 * so that the nodes, which pull whole packets, need not know their next
 * packet's size: it waits for a little more credit than 7.9 demands for a
 * short packet, and never sends without credit.
 *
 * Link packets take the next slot on the wire (they go before the node's
 * next packet, as the link layer interleaves them), are not subject to
 * flow control, and end at the receiving port, after the packets sent
 * before them (own_in_order: a switch's forwarding latency delays both).
 */
#include <string.h>

#include "engine/util.h"
#include "net/ib.h"
#include "rdma_codec.h"

#define FC_MOD 4096u  /* FCTBS, ABR and FCCL count modulo 2^12 */
#define FC_HALF 2048u /* a limit further ahead than this is no credit (7.9.4.3) */

static bool has_credit(const struct sim_ib_vl *v, uint32_t blocks)
{
    return ((uint32_t)v->fccl - v->fctbs - blocks) % FC_MOD <= FC_HALF;
}

/* The credit limit a receiver grants: ABR plus its free blocks, at most
 * half the counter's range ahead. */
static uint16_t grant(const struct sim_port_ib *ib, const struct sim_ib_vl *v)
{
    uint32_t free = v->used < ib->cap ? ib->cap - v->used : 0;
    if (free > FC_HALF)
        free = FC_HALF;
    return (uint16_t)((v->abr + free) % FC_MOD);
}

static void send_fc(struct sim_port *p, unsigned vl)
{
    struct sim_port_ib *ib = p->ib;
    struct sim_ib_vl *v = &ib->vl[vl];
    struct sim_network *net = p->node->net;
    struct rdma_pkt pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.linktype = RDMA_LINKTYPE_INFINIBAND;
    pkt.present = RDMA_HDR_IBFC;
    pkt.ibfc.op = 0; /* normal */
    pkt.ibfc.fctbs = v->fctbs;
    pkt.ibfc.vl = (uint8_t)vl;
    pkt.ibfc.fccl = grant(ib, v);
    struct sim_frame *f = sim__frame_alloc(&net->pool, SIM_IB_FC_LEN);
    size_t len;
    if (!f)
        return;
    if (rdma_encode(&pkt, f->data, sim__frame_cap(f), &len) != RDMA_OK || len != SIM_IB_FC_LEN) {
        sim__frame_free(&net->pool, f);
        return;
    }
    f->len = SIM_IB_FC_LEN;
    f->bth_off = 0;
    v->freed = 0;
    v->last_fc = sim_now(p->comp.sim);
    p->st.fc_sent++;
    sim__port_send(p, f, SIM_IB_FC_LEN);
}

static void arm(struct sim_port *p)
{
    struct sim_port_ib *ib = p->ib;
    if (!ib->period)
        return;
    sim_time_t next = SIM_TIME_NEVER;
    for (unsigned vl = 0; vl < ib->nvls; vl++)
        if (ib->vl[vl].last_fc + ib->period < next)
            next = ib->vl[vl].last_fc + ib->period;
    sim_timer_arm(&ib->timer, p->comp.sim, next, &p->comp, SIM_PORT_LINK_TIMER, NULL);
}

/* Block or unblock VL vl by its credit; true when it became unblocked. */
static bool settle_vl(struct sim_port *p, unsigned vl)
{
    struct sim_port_ib *ib = p->ib;
    struct sim_ib_vl *v = &ib->vl[vl];
    uint8_t bit = (uint8_t)(1u << vl);
    bool ok = has_credit(v, ib->max_blocks);
    sim_time_t now = sim_now(p->comp.sim);
    if (!ok && !(p->blocked & bit)) {
        p->blocked |= bit;
        v->blocked_since = now;
        v->starved = true;
    } else if (ok && (p->blocked & bit)) {
        p->blocked &= (uint8_t)~bit;
        p->st.credit_blocked += now - v->blocked_since;
        return true;
    }
    return false;
}

void sim__ib_free(struct sim_port *p, unsigned vl, uint32_t len)
{
    struct sim_port_ib *ib = p->ib;
    struct sim_ib_vl *v = &ib->vl[vl];
    uint32_t b = sim__ib_blocks(len);
    v->used = v->used > b ? v->used - b : 0;
    v->freed += b;
    if (v->freed >= ib->update && !p->down)
        send_fc(p, vl);
}

/* ---- the link layer's operations ------------------------------------------------- */
static bool ib_own(const struct sim_frame *f) { return f->len == SIM_IB_FC_LEN; }

static void fc_received(struct sim_port *p, struct sim_frame *f)
{
    struct sim_network *net = p->node->net;
    struct rdma_decode_config dcfg;
    struct rdma_pkt pkt;
    rdma_decode_config_init(&dcfg);
    bool ok = rdma_decode(&dcfg, RDMA_LINKTYPE_INFINIBAND, f->data, f->len, f->len, &pkt) == RDMA_OK &&
              (pkt.present & RDMA_HDR_IBFC) && pkt.ibfc.vl < p->ib->nvls;
    sim__frame_free(&net->pool, f);
    if (!ok) {
        p->node->bad_frames++;
        return;
    }
    struct sim_ib_vl *v = &p->ib->vl[pkt.ibfc.vl];
    p->st.fc_received++;
    /* as receiver: packets lost on the way count as received (7.9.4.2) */
    v->abr = pkt.ibfc.fctbs;
    /* as sender: the peer's new limit */
    v->fccl = pkt.ibfc.fccl;
    if (settle_vl(p, pkt.ibfc.vl))
        sim__port_unblocked(p);
}

static bool ib_receive(struct sim_port *p, struct sim_frame *f)
{
    if (f->len == SIM_IB_FC_LEN) {
        fc_received(p, f);
        return true;
    }
    struct sim_port_ib *ib = p->ib;
    unsigned vl = sim__ib_vl(f);
    if (vl >= ib->nvls)
        return false; /* the node finds it malformed */
    struct sim_ib_vl *v = &ib->vl[vl];
    uint32_t b = sim__ib_blocks(f->len);
    v->abr = (uint16_t)((v->abr + b) % FC_MOD);
    v->used += b;
    if (v->used > ib->cap)
        p->st.credit_overruns++;
    return false;
}

static void ib_sent(struct sim_port *p, const struct sim_frame *f, uint32_t len)
{
    unsigned vl = sim__ib_vl(f);
    struct sim_ib_vl *v = &p->ib->vl[vl];
    v->fctbs = (uint16_t)((v->fctbs + sim__ib_blocks(len)) % FC_MOD);
    settle_vl(p, vl);
}

static void ib_timer(struct sim_port *p, void *which)
{
    (void)which;
    struct sim_port_ib *ib = p->ib;
    sim_time_t now = sim_now(p->comp.sim);
    if (!sim_timer_fire(&ib->timer, now))
        return;
    if (p->down)
        return;
    for (unsigned vl = 0; vl < ib->nvls; vl++)
        if (ib->vl[vl].last_fc + ib->period <= now)
            send_fc(p, vl);
    arm(p);
}

/* The limit a VL starts with: the peer's whole buffer, as far as the
 * counters reach. */
static uint16_t initial_limit(const struct sim_port *p)
{
    uint32_t cap = p->peer->ib->cap;
    return (uint16_t)(cap < FC_HALF ? cap : FC_HALF);
}

/* Both ends start again from empty counters and full credit when their
 * link comes up (7.9.4: flow control is initialized as the link comes
 * up); going down closes the time VLs waited for credit, and voids what a
 * flow control packet still arriving says of the link before. */
static void restart(struct sim_port *p)
{
    struct sim_port_ib *ib = p->ib;
    sim_time_t now = sim_now(p->comp.sim);
    for (unsigned vl = 0; vl < ib->nvls; vl++) {
        struct sim_ib_vl *v = &ib->vl[vl];
        if (p->blocked & (1u << vl))
            p->st.credit_blocked += now - v->blocked_since;
        *v = (struct sim_ib_vl){.fccl = initial_limit(p), .last_fc = now};
    }
    p->blocked = 0;
}

static void ib_link_down(struct sim_port *p) { restart(p); }

/* Up again: a flow control packet for each VL tells the peer where the
 * counters stand, and the periodic ones resume. */
static void ib_link_up(struct sim_port *p)
{
    restart(p);
    for (unsigned vl = 0; vl < p->ib->nvls; vl++)
        send_fc(p, vl);
    arm(p);
}

static void ib_settle(struct sim_port *p)
{
    struct sim_port_ib *ib = p->ib;
    sim_time_t now = sim_now(p->comp.sim);
    for (unsigned vl = 0; vl < ib->nvls; vl++)
        if (p->blocked & (1u << vl)) {
            p->st.credit_blocked += now - ib->vl[vl].blocked_since;
            ib->vl[vl].blocked_since = now;
        }
}

const struct sim_link_layer_ops sim__link_infiniband = {
    .name = "InfiniBand",
    .wire_extra = SIM_IB_WIRE_EXTRA,
    .cut_through_bytes = SIM_IB_CUT_THROUGH_BYTES,
    .receive = ib_receive,
    .own = ib_own,
    .own_in_order = true,
    .sent = ib_sent,
    .timer = ib_timer,
    .link_down = ib_link_down,
    .link_up = ib_link_up,
    .settle = ib_settle,
};

/* ---- set-up ------------------------------------------------------------------------ */
/* 65,536 symbol times (7.9.4): a symbol is a byte's time on one lane, so
 * 65,536 x 8 bits x lanes / rate; a rate given in bits per second counts
 * as four lanes, the common width. */
static sim_time_t fc_period(const struct cfg_ib *ib, const struct cfg_link_params *lp)
{
    if (ib->fc_period)
        return ib->fc_period == SIM_TIME_NEVER ? 0 : ib->fc_period;
    return sim__ser_time(UINT64_C(65536) * (lp->lanes ? lp->lanes : 4), lp->rate);
}

uint64_t sim__ib_vl_buffer(const struct cfg_ib *ib, const struct cfg_link_params *lp,
                           uint32_t max_packet, sim_time_t latency)
{
    uint32_t max_blocks = sim__ib_blocks(max_packet);
    uint64_t floor = (uint64_t)(max_blocks + ib->credit_update) * CFG_IB_BLOCK;
    if (ib->vl_buffer)
        return ib->vl_buffer > floor ? ib->vl_buffer : floor;
    /* The credit loop: a freed block's flow control packet may wait behind
     * a largest packet, crosses the link, and the credit it brings is used
     * a largest packet later at the earliest; meanwhile the link keeps
     * delivering at its rate, and what the receiver holds waits out its
     * forwarding latency. */
    sim_time_t wire = sim__ser_time(max_packet + SIM_IB_WIRE_EXTRA, lp->rate);
    sim_time_t loop = 2 * lp->delay + 2 * wire + latency +
                      sim__ser_time(SIM_IB_FC_LEN + SIM_IB_WIRE_EXTRA, lp->rate);
    uint64_t bytes = (uint64_t)((double)lp->rate / 8 * (double)loop / (double)SIM_S) + 1;
    return (bytes + CFG_IB_BLOCK - 1) / CFG_IB_BLOCK * CFG_IB_BLOCK + floor;
}

void sim__ib_port_init(struct sim_port *p, const struct cfg_ib *ib, uint32_t max_packet,
                       sim_time_t latency)
{
    struct sim_port_ib *s = sim__xcalloc(1, sizeof *s);
    p->ib = s;
    s->nvls = ib->vls;
    s->max_blocks = sim__ib_blocks(max_packet);
    s->cap = (uint32_t)(sim__ib_vl_buffer(ib, &p->p, max_packet, latency) / CFG_IB_BLOCK);
    /* A sender holds at most a window of credit: the buffer, and no more
     * than half the counters' range. Once it has used the window up to
     * less than a largest packet, the receiver must have sent a new limit
     * by the time it has freed what arrived, or the link stalls: so an
     * update never waits for more than the window less a largest packet. */
    uint32_t window = s->cap < FC_HALF ? s->cap : FC_HALF;
    uint32_t most = window > s->max_blocks ? window - s->max_blocks : 1;
    s->update = ib->credit_update < most ? ib->credit_update : most;
    s->period = fc_period(ib, &p->p);
    sim_timer_init(&s->timer);
    sim__port_set_link_layer(p, &sim__link_infiniband);
}

void sim__ib_port_start(struct sim_port *p)
{
    /* the link came up before the run: each VL's first flow control
     * packets have been exchanged, granting the peer's whole buffer */
    for (unsigned vl = 0; vl < p->ib->nvls; vl++)
        p->ib->vl[vl] = (struct sim_ib_vl){.fccl = initial_limit(p)};
    arm(p);
}
