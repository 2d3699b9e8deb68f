/* pfc.c - Priority-based Flow Control (IEEE 802.1Qbb-2011, clause 36 and
 * annex N): the pause frames a port sends, and the pauses it obeys.
 *
 *   | dst 01:80:C2:00:00:01 | src | 0x8808 | opcode 0x0101 | class-enable vector |
 *   | pause time c0 | c1 | ... | c7 |  (quanta of 512 bit times; 0 = resume)
 *
 * A receiver stops starting frames of a paused priority for exactly the
 * time the frame gives, counted from its arrival; a frame already on the
 * wire finishes. A sender keeps a priority paused by sending XOFF again
 * before the last one runs out (by default at half the pause time), and
 * ends the pause early with a pause time of 0 (XON). Frames are built by
 * the codec, so they are what Wireshark shows as MAC Control / CBFC.
 *
 * Which priorities to pause and when is the node's business (the switch's
 * shared buffer, the NIC's receive buffer); this file keeps the state of
 * each port, sends the frames and runs the timers.
 */
#include <assert.h>
#include <string.h>

#include "engine/util.h"
#include "net/pfc.h"
#include "rdma_codec.h"

static const uint8_t pfc_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

void sim__pfc_port_init(struct sim_port *p, bool honour, uint16_t quanta, sim_time_t refresh)
{
    struct sim_port_pfc *s = &p->pfc;
    s->honour = honour;
    s->quanta = quanta;
    s->quantum = sim__ser_time(64, p->p.rate); /* 512 bits */
    s->refresh = refresh ? refresh : (quanta * s->quantum + 1) / 2;
    sim_timer_init(&s->expire_timer);
    sim_timer_init(&s->refresh_timer);
}

static uint32_t port_id(const struct sim_port *p) { return (uint32_t)(p - p->node->net->ports); }

static void log_row(struct sim_port *p, unsigned prio, enum sim_pfc_event ev, uint16_t quanta,
                    sim_time_t duration)
{
    struct sim_pfc_row row = {
        .t = sim_now(p->comp.sim),
        .key = sim_last_key(p->comp.sim),
        .duration = duration,
        .port = port_id(p),
        .quanta = quanta,
        .prio = (uint8_t)prio,
        .event = (uint8_t)ev,
    };
    for (struct sim_pfc_hook *h = p->node->net->pfc_hooks; h; h = h->next)
        h->fn(h, &row);
}

void sim__pfc_hook_add(struct sim_network *net, struct sim_pfc_hook *h)
{
    h->next = net->pfc_hooks;
    net->pfc_hooks = h;
}

void sim__pfc_log_watchdog(struct sim_port *p, unsigned prio, bool storm)
{
    log_row(p, prio, storm ? SIM_PFC_STORM : SIM_PFC_RESTORE, 0,
            storm ? sim_now(p->comp.sim) - p->pfc.since[prio] : 0);
}

/* Switch ports: 06 (locally administered), node index, port index. */
static void port_mac(const struct sim_port *p, uint8_t mac[6])
{
    const struct sim_network *net = p->node->net;
    if (p->node->kind == CFG_HOST) {
        sim__host_mac(net->node_host[p->node->index], mac);
        return;
    }
    uint32_t n = p->node->index;
    mac[0] = 0x06;
    mac[1] = (uint8_t)(n >> 16);
    mac[2] = (uint8_t)(n >> 8);
    mac[3] = (uint8_t)n;
    mac[4] = (uint8_t)(p->index >> 8);
    mac[5] = (uint8_t)p->index;
}

static void send_frame(struct sim_port *p, uint8_t enbv, uint16_t quanta)
{
    struct sim_network *net = p->node->net;
    struct rdma_pkt pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.linktype = RDMA_LINKTYPE_ETHERNET;
    pkt.present = RDMA_HDR_ETH | RDMA_HDR_PFC;
    memcpy(pkt.eth.dst, pfc_dst, 6);
    port_mac(p, pkt.eth.src);
    pkt.pfc.opcode = RDMA_MAC_CONTROL_PFC;
    pkt.pfc.enbv = enbv;
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        if (enbv & (1u << c))
            pkt.pfc.pause_time[c] = quanta;
    struct sim_frame *f = sim__frame_alloc(&net->pool, 64);
    size_t len;
    enum rdma_status st = rdma_encode(&pkt, f->data, sim__frame_cap(f), &len);
    assert(st == RDMA_OK); /* a fixed layout that fits the smallest frame */
    (void)st;
    f->len = (uint32_t)len;
    f->bth_off = (uint16_t)len; /* no BTH: bit errors spare it */
    if (quanta)
        p->st.pauses_sent++;
    else
        p->st.resumes_sent++;
    sim__port_send(p, f, f->len);
}

static void schedule_refresh(struct sim_port *p)
{
    struct sim *sim = p->comp.sim;
    sim_timer_arm(&p->pfc.refresh_timer, sim, sim_now(sim) + p->pfc.refresh, &p->comp,
                  SIM_PORT_LINK_TIMER, &p->pfc.refresh_timer);
}

void sim__pfc_xoff(struct sim_port *p, unsigned prio)
{
    struct sim_port_pfc *s = &p->pfc;
    uint8_t bit = (uint8_t)(1u << prio);
    if (s->xoff & bit)
        return;
    s->xoff |= bit;
    s->xoff_since[prio] = sim_now(p->comp.sim);
    send_frame(p, bit, s->quanta);
    log_row(p, prio, SIM_PFC_PAUSE, s->quanta, s->quanta * s->quantum);
    if (!sim_timer_armed(&s->refresh_timer))
        schedule_refresh(p);
}

void sim__pfc_xon(struct sim_port *p, unsigned prio)
{
    struct sim_port_pfc *s = &p->pfc;
    uint8_t bit = (uint8_t)(1u << prio);
    if (!(s->xoff & bit))
        return;
    s->xoff &= (uint8_t)~bit;
    if (!s->xoff)
        sim_timer_cancel(&s->refresh_timer); /* the pending refresh is void */
    send_frame(p, bit, 0);
    log_row(p, prio, SIM_PFC_RESUME, 0, sim_now(p->comp.sim) - s->xoff_since[prio]);
}

void sim__pfc_refresh(struct sim_port *p)
{
    struct sim_port_pfc *s = &p->pfc;
    if (!sim_timer_fire(&s->refresh_timer, sim_now(p->comp.sim)))
        return; /* superseded */
    if (!s->xoff)
        return;
    send_frame(p, s->xoff, s->quanta);
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        if (s->xoff & (1u << c))
            log_row(p, c, SIM_PFC_REFRESH, s->quanta, s->quanta * s->quantum);
    schedule_refresh(p);
}

/* ---- obeying pauses ------------------------------------------------------------ */
static void schedule_expire(struct sim_port *p, sim_time_t at)
{
    sim_timer_arm(&p->pfc.expire_timer, p->comp.sim, at, &p->comp, SIM_PORT_LINK_TIMER,
                  &p->pfc.expire_timer);
}

static void end_pause(struct sim_port *p, unsigned c, sim_time_t at)
{
    p->blocked &= (uint8_t)~(1u << c);
    p->st.paused += at - p->pfc.since[c];
}

static void pfc_receive(struct sim_port *p, struct sim_frame *f)
{
    struct sim_network *net = p->node->net;
    struct sim_port_pfc *s = &p->pfc;
    struct rdma_decode_config dcfg;
    struct rdma_pkt pkt;
    rdma_decode_config_init(&dcfg);
    if (rdma_decode(&dcfg, RDMA_LINKTYPE_ETHERNET, f->data, f->len, f->len, &pkt) != RDMA_OK ||
        pkt.proto != RDMA_PROTO_PFC) {
        p->node->bad_frames++;
        sim__frame_free(&net->pool, f);
        return;
    }
    sim__frame_free(&net->pool, f);
    sim_time_t now = sim_now(p->comp.sim);
    bool resumed = false, any = false;
    for (unsigned c = 0; c < SIM_PRIOS; c++) {
        uint8_t bit = (uint8_t)(1u << c);
        if (!(pkt.pfc.enbv & bit))
            continue;
        uint16_t q = pkt.pfc.pause_time[c];
        any |= q != 0;
        if (!s->honour)
            continue;
        if (q) {
            s->until[c] = now + q * s->quantum;
            schedule_expire(p, s->until[c]);
            if (!(p->blocked & bit)) {
                p->blocked |= bit;
                s->since[c] = now;
                if (p->node->nops->paused)
                    p->node->nops->paused(p->node, p, c);
            }
        } else if (p->blocked & bit) {
            end_pause(p, c, now);
            resumed = true;
        }
    }
    if (any)
        p->st.pauses_received++;
    else
        p->st.resumes_received++;
    if (resumed)
        sim__port_unblocked(p);
}

static void pfc_expire(struct sim_port *p)
{
    struct sim_port_pfc *s = &p->pfc;
    sim_time_t now = sim_now(p->comp.sim);
    if (!sim_timer_fire(&s->expire_timer, now))
        return; /* superseded by an earlier one */
    bool resumed = false;
    sim_time_t next = SIM_TIME_NEVER;
    for (unsigned c = 0; c < SIM_PRIOS; c++) {
        if (!(p->blocked & (1u << c)))
            continue;
        if (s->until[c] <= now) {
            end_pause(p, c, s->until[c]);
            resumed = true;
        } else if (s->until[c] < next) {
            next = s->until[c];
        }
    }
    if (next != SIM_TIME_NEVER)
        schedule_expire(p, next);
    if (resumed)
        sim__port_unblocked(p);
}

static void pfc_link_down(struct sim_port *p)
{
    struct sim_port_pfc *s = &p->pfc;
    sim_time_t now = sim_now(p->comp.sim);
    for (unsigned c = 0; c < SIM_PRIOS; c++)
        if (p->blocked & (1u << c))
            end_pause(p, c, now);
    s->xoff = 0;
    sim_timer_cancel(&s->refresh_timer);
}

static void pfc_settle(struct sim_port *p)
{
    struct sim_port_pfc *s = &p->pfc;
    sim_time_t now = sim_now(p->comp.sim);
    for (unsigned c = 0; c < SIM_PRIOS; c++) {
        if (!(p->blocked & (1u << c)))
            continue;
        sim_time_t end = s->until[c] < now ? s->until[c] : now;
        p->st.paused += end - s->since[c];
        s->since[c] = end;
    }
}

/* ---- the Ethernet link layer ------------------------------------------------------ */
/* MAC control frames (EtherType 0x8808) are the link layer's own. */
static bool eth_own(const struct sim_frame *f)
{
    return f->len >= 14 && f->data[12] == 0x88 && f->data[13] == 0x08;
}

static bool eth_receive(struct sim_port *p, struct sim_frame *f)
{
    if (!eth_own(f))
        return false;
    pfc_receive(p, f);
    return true;
}

static void eth_timer(struct sim_port *p, void *which)
{
    if (which == &p->pfc.expire_timer) {
        pfc_expire(p);
    } else {
        /* before sending XOFF again, the node may resume what it can */
        if (p->node->nops->pfc_refresh)
            p->node->nops->pfc_refresh(p->node, p);
        sim__pfc_refresh(p);
    }
}

const struct sim_link_layer_ops sim__link_ethernet = {
    .name = "Ethernet",
    .wire_extra = SIM_ETH_WIRE_EXTRA,
    .cut_through_bytes = SIM_CUT_THROUGH_BYTES,
    .receive = eth_receive,
    .own = eth_own,
    .timer = eth_timer,
    .link_down = pfc_link_down,
    .settle = pfc_settle,
};
