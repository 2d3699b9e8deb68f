/* nic.c - the NIC between a host's queue pairs and its port.
 *
 * Transmission is pulled, not pushed: whenever the port has finished a
 * frame, the NIC asks the queue pairs in its ring, round robin, for one
 * packet (responses before requests within a queue pair) and builds the
 * frame just in time. Nothing queues inside the NIC, so PSNs and
 * timestamps are those of the moment a frame goes on the wire.
 *
 * The fabric adds three rules to the pull. CNPs go first. Nothing of a
 * priority the switch has paused (PFC) starts. A queue pair DCQCN limits
 * waits in a heap until its pacing time (cc/dcqcn.c); meanwhile it may still
 * send acknowledgements, which are not rate limited.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/iwarp/iwarp.h"
#include "host/nic.h"
#include "net/ib.h"

static int find_opcode(uint32_t want, const char *op)
{
    const uint32_t mask = RDMA_OPF_REQUEST | RDMA_OPF_RESPONSE | RDMA_OPF_SEND | RDMA_OPF_WRITE |
                          RDMA_OPF_READ | RDMA_OPF_ATOMIC | RDMA_OPF_ACK | RDMA_OPF_FIRST |
                          RDMA_OPF_MIDDLE | RDMA_OPF_LAST | RDMA_OPF_IMM | RDMA_OPF_INV;
    for (unsigned c = 0; c < 0x20; c++) {
        const struct rdma_opcode_info *info = &rdma_opcodes[c];
        if (info->name && info->transport == RDMA_TRANSPORT_RC && (info->flags & mask) == want &&
            (!op || !strcmp(info->op, op)))
            return (int)c;
    }
    return -1;
}

void sim__opcodes_init(struct sim_opcodes *o)
{
    static const uint32_t pos[4] = {RDMA_OPF_ONLY, RDMA_OPF_FIRST, RDMA_OPF_MIDDLE, RDMA_OPF_LAST};
    const uint32_t req = RDMA_OPF_REQUEST, rsp = RDMA_OPF_RESPONSE;
    memset(o, 0xff, sizeof *o);
    for (int p = 0; p < 4; p++) {
        bool last = pos[p] & RDMA_OPF_LAST;
        uint32_t w = req | RDMA_OPF_WRITE | pos[p], s = req | RDMA_OPF_SEND | pos[p];
        o->req[SIM_OP_WRITE][p] = (uint8_t)find_opcode(w, NULL);
        o->req[SIM_OP_WRITE_IMM][p] = (uint8_t)find_opcode(w | (last ? RDMA_OPF_IMM : 0), NULL);
        o->req[SIM_OP_SEND][p] = (uint8_t)find_opcode(s, NULL);
        o->req[SIM_OP_SEND_IMM][p] = (uint8_t)find_opcode(s | (last ? RDMA_OPF_IMM : 0), NULL);
        o->req[SIM_OP_SEND_INV][p] = (uint8_t)find_opcode(s | (last ? RDMA_OPF_INV : 0), NULL);
        o->read_resp[p] = (uint8_t)find_opcode(rsp | RDMA_OPF_READ | pos[p], NULL);
    }
    o->req[SIM_OP_READ][SIM_POS_ONLY] = (uint8_t)find_opcode(req | RDMA_OPF_READ | RDMA_OPF_ONLY, NULL);
    o->req[SIM_OP_CAS][SIM_POS_ONLY] =
        (uint8_t)find_opcode(req | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, "CmpSwap");
    o->req[SIM_OP_FAA][SIM_POS_ONLY] =
        (uint8_t)find_opcode(req | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, "FetchAdd");
    o->ack = (uint8_t)find_opcode(rsp | RDMA_OPF_ACK, NULL);
    o->atomic_ack = (uint8_t)find_opcode(rsp | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, NULL);
    for (unsigned c = 0; c < 256; c++)
        if (rdma_opcodes[c].flags & RDMA_OPF_CNP)
            o->cnp = (uint8_t)c;
}

const uint8_t *sim__nic_payload(struct sim_nic *nic, uint32_t mr, uint64_t off)
{
    const struct sim_mr *r = &nic->host->mrs[mr];
    /* the encoder copies the bytes into the frame at once: nothing changes
     * them in between */
    return r->bytes ? r->bytes + off : nic->host->node.net->fill;
}

#define ICRC_LEN 4 /* IBA vol. 1 7.8.1 */
#define VCRC_LEN 2 /* IBA vol. 1 7.8.2: native InfiniBand only */
#define IP_PROTO_UDP 17 /* IPv6 next header: UDP, no extension header between */

/* A frame with payload: none written by the codec without its payload,
 * the ICRC joined from the pattern's CRC (*out NULL if it fails);
 * RDMA_UNSUPPORTED for the frames whose other checks read every byte
 * (IPv6's UDP checksum, InfiniBand's VCRC). */
static enum rdma_status encode_without_fill(struct sim_network *net, const struct rdma_pkt *pkt, uint32_t cap,
                                            uint16_t bth_off, struct sim_frame **out)
{
    size_t len, at;
    struct sim_frame *f = sim__frame_alloc(&net->pool, cap - pkt->payload_len);
    *out = NULL;
    if (!f)
        return RDMA_TRUNCATED;
    enum rdma_status st = rdma_encode_without_payload(pkt, sim__fill_crc(net, pkt->payload_len), f->data,
                                                      sim__frame_cap(f), &len, &at);
    if (st != RDMA_OK) {
        sim__frame_free(&net->pool, f);
        return st;
    }
    f->len = (uint32_t)len + pkt->payload_len;
    f->fill_at = (uint16_t)at;
    f->fill_len = (uint16_t)pkt->payload_len;
    f->bth_off = bth_off;
    *out = f;
    return RDMA_OK;
}

struct sim_frame *sim__nic_encode(struct sim_nic *nic, const struct rdma_pkt *pkt, uint32_t cap,
                                  uint16_t bth_off)
{
    struct sim_network *net = nic->host->node.net;
    struct sim_frame_pool *pool = &net->pool;
    struct sim_frame *f;
    size_t len;
    if (pkt->payload == net->fill && pkt->payload_len >= SIM_FILL_MIN) {
        /* payload: none: the frame keeps all but its payload, which the
         * receiver knows from the same pattern */
        if (encode_without_fill(net, pkt, cap, bth_off, &f) != RDMA_UNSUPPORTED)
            return f;
        if (rdma_encode(pkt, net->tx_bytes, sizeof net->tx_bytes, &len) != RDMA_OK)
            return NULL;
        uint32_t pad = net->tx_bytes[bth_off + 1] >> 4 & 3u;
        uint32_t crcs = ICRC_LEN + (pkt->linktype == RDMA_LINKTYPE_INFINIBAND ? VCRC_LEN : 0);
        uint32_t fill_at = (uint32_t)len - crcs - pad - pkt->payload_len;
        f = sim__frame_without_fill(pool, net->tx_bytes, (uint32_t)len, fill_at, pkt->payload_len);
        if (f)
            f->bth_off = bth_off;
        return f;
    }
    f = sim__frame_alloc(pool, cap);
    if (!f)
        return NULL;
    if (rdma_encode(pkt, f->data, sim__frame_cap(f), &len) != RDMA_OK) {
        sim__frame_free(pool, f);
        return NULL;
    }
    f->len = (uint32_t)len;
    f->bth_off = bth_off;
    return f;
}

/* A RoCEv2 frame that leaves out its fill, decoded without reading the
 * fill: its headers and tail laid out where they are on the wire, the
 * fill's bytes left as they are (no header lies there), and the ICRC
 * checked from what the frame holds and the fill's CRC. false when the
 * frame is one whose other checks read the payload (an IPv6 extension
 * header), to be decoded whole. */
static bool decode_without_fill(struct sim_nic *nic, const struct sim_frame *f, struct rdma_pkt *pkt,
                                enum rdma_status *st)
{
    static const struct rdma_decode_config headers_only = {RDMA_ROCEV2_UDP_PORT, false};
    struct sim_network *net = nic->host->node.net;
    uint8_t *b = net->rx_bytes;
    uint32_t tail = f->len - f->fill_at - f->fill_len;
    memcpy(b, f->data, f->fill_at);
    memcpy(b + f->fill_at + f->fill_len, f->data + f->fill_at, tail);
    *st = rdma_decode(&headers_only, RDMA_LINKTYPE_ETHERNET, b, f->len, f->len, pkt);
    if (*st != RDMA_OK)
        return true;
    bool plain = (pkt->present & RDMA_HDR_IP) || ((pkt->present & RDMA_HDR_IPV6) && pkt->ipv6.nxt == IP_PROTO_UDP);
    if (!plain || pkt->proto != RDMA_PROTO_ROCEV2 || !pkt->icrc.present || pkt->payload != b + f->fill_at ||
        pkt->payload_len != f->fill_len || nic->dcfg.rocev2_port != RDMA_ROCEV2_UDP_PORT)
        return false;
    size_t l3 = (size_t)(pkt->l3 - b);
    size_t covered = f->fill_at + f->fill_len + pkt->bth.padcnt - l3; /* up to the ICRC */
    const struct rdma_crc32_part *fill = sim__fill_crc(net, f->fill_len);
    pkt->icrc.computed = rdma_icrc_rocev2_without(f->data + l3, covered - f->fill_len, f->fill_at - l3, fill);
    pkt->icrc.ok = pkt->icrc.computed == pkt->icrc.value;
    pkt->payload = net->fill;
    pkt->captured_payload_len = pkt->payload_len;
    if (!pkt->icrc.ok) {
        pkt->status = RDMA_BAD_ICRC;
        pkt->reason = "ICRC mismatch";
        *st = RDMA_BAD_ICRC;
    }
    return true;
}

enum rdma_status sim__nic_decode(struct sim_nic *nic, unsigned linktype, const struct sim_frame *f,
                                 struct rdma_pkt *pkt)
{
    struct sim_network *net = nic->host->node.net;
    enum rdma_status st;
    if (f->fill_len && linktype == RDMA_LINKTYPE_ETHERNET && nic->dcfg.verify_crc &&
        decode_without_fill(nic, f, pkt, &st))
        return st;
    const uint8_t *bytes = sim__frame_bytes(f, net->fill, net->rx_bytes, f->len);
    return rdma_decode(&nic->dcfg, linktype, bytes, f->len, f->len, pkt);
}

#define CNP_LEN 16

void sim__nic_cnp_packet(const struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt)
{
    memset(pkt, 0, sizeof *pkt);
    rdma_pkt_set_opcode(pkt, nic->opc.cnp);
    pkt->bth.becn = 1;
    pkt->bth.p_key = 0xffff;
    pkt->bth.destqp = qp->dest_qpn;
    pkt->payload_len = CNP_LEN; /* no payload pointer: zeros */
}

sim_time_t sim__nic_place(struct sim_nic *nic, uint32_t mr, uint64_t off, const uint8_t *src,
                          uint32_t len, bool last)
{
    struct sim_mr *r = &nic->host->mrs[mr];
    if (r->bytes)
        memcpy(r->bytes + off, src, len);
    return nic->dma->write(nic, mr, off, len, last);
}

void sim__nic_wake_at(struct sim_nic *nic, struct sim_qp *qp, sim_time_t t)
{
    /* a wake already due earlier looks again then, and asks anew */
    if (qp->wake_at != SIM_TIME_NEVER && qp->wake_at <= t)
        return;
    qp->wake_at = t;
    sim_schedule(nic->host->node.comp.sim, t, &nic->host->node.comp, SIM_HOST_DMA, qp);
}

void sim__nic_dma_event(struct sim_nic *nic, struct sim_qp *qp)
{
    if (sim_now(nic->host->node.comp.sim) >= qp->wake_at)
        qp->wake_at = SIM_TIME_NEVER;
    if (nic->dma->event)
        nic->dma->event(nic, qp);
    sim__nic_wake(nic, qp);
}

/* ---- paced queue pairs: a min-heap by (next_tx, qpn) ---------------------------- */
static bool earlier(const struct sim_qp *a, const struct sim_qp *b)
{
    return a->next_tx < b->next_tx || (a->next_tx == b->next_tx && a->qpn < b->qpn);
}

static void heap_push(struct sim_nic *nic, struct sim_qp *qp)
{
    if (nic->npaced == nic->cappaced) {
        nic->cappaced = nic->cappaced ? 2 * nic->cappaced : 8;
        nic->paced = sim__xrealloc(nic->paced, nic->cappaced * sizeof *nic->paced);
    }
    uint32_t i = nic->npaced++;
    while (i && earlier(qp, nic->paced[(i - 1) / 2])) {
        nic->paced[i] = nic->paced[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    nic->paced[i] = qp;
    qp->in_heap = true;
}

static struct sim_qp *heap_pop(struct sim_nic *nic)
{
    struct sim_qp *top = nic->paced[0], *last = nic->paced[--nic->npaced];
    uint32_t i = 0, n = nic->npaced;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && earlier(nic->paced[c + 1], nic->paced[c]))
            c++;
        if (!earlier(nic->paced[c], last))
            break;
        nic->paced[i] = nic->paced[c];
        i = c;
    }
    if (n)
        nic->paced[i] = last;
    top->in_heap = false;
    return top;
}

static void ring_append(struct sim_nic *nic, struct sim_qp *qp)
{
    if (qp->in_ring)
        return;
    qp->in_ring = true;
    qp->ring_next = NULL;
    if (nic->ring_tail)
        nic->ring_tail->ring_next = qp;
    else
        nic->ring_head = qp;
    nic->ring_tail = qp;
}

/* An acknowledgement (not READ data) is next in the responder's queue. */
static bool ack_next(const struct sim_qp *qp)
{
    return qp->out_head != qp->out_tail && qp->out[qp->out_head & (qp->out_cap - 1)].kind != RESP_READ;
}

static void pull(struct sim_nic *nic)
{
    struct sim_port *port = nic->port;
    struct rdma_pkt pkt;
    if (port->down)
        return;
    if (nic->cnp_head && !(port->blocked & (1u << nic->cnp_prio))) {
        struct sim_frame *f = nic->cnp_head;
        nic->cnp_head = f->next;
        if (!nic->cnp_head)
            nic->cnp_tail = NULL;
        f->next = NULL;
        port->st.cnps_sent++;
        sim__port_send(port, f, f->len);
        return;
    }
    if (port->blocked & (1u << nic->prio))
        return; /* the end of the pause calls tx_ready */
    sim_time_t now = sim_now(port->comp.sim);
    while (nic->npaced && nic->paced[0]->next_tx <= now)
        ring_append(nic, heap_pop(nic));
    while (nic->ring_head) {
        struct sim_qp *qp = nic->ring_head;
        nic->ring_head = qp->ring_next;
        if (!nic->ring_head)
            nic->ring_tail = NULL;
        qp->in_ring = false;
        if (qp->iw) { /* iWARP: its TCP endpoint says what goes next */
            struct sim_frame *f = sim__iw_pull(qp);
            if (!f)
                continue;
            qp->st.tx_bytes += f->len;
            sim__port_send(port, f, f->len);
            ring_append(nic, qp);
            return;
        }
        memset(&pkt, 0, sizeof pkt);
        bool paced = qp->cc && qp->next_tx > now, request = false;
        uint32_t sent_psn = qp->max_psn; /* before this frame: it may be a new one */
        if (paced) {
            if (!ack_next(qp) || !sim__resp_next(qp, &pkt)) {
                if (!qp->in_heap)
                    heap_push(nic, qp);
                continue;
            }
        } else if (!sim__resp_next(qp, &pkt)) {
            if (!sim__req_next(qp, &pkt))
                continue;
            request = true;
        }
        struct sim_frame *f = nic->transport->frame(nic, qp, &pkt);
        assert(f);
        if (request && qp->cc && qp->cc->timely)
            sim__timely_sent(qp, pkt.bth.psn);
        if (request && qp->rto_resend) {
            f->flags |= (uint8_t)(SIM_FRAME_RTO | qp->rto_resend << SIM_FRAME_RTO_SHIFT);
            f->aux = sent_psn;
            qp->rto_resend = 0;
        }
        qp->st.tx_bytes += f->len;
        if (qp->cc && !paced)
            sim__dcqcn_sent(qp, f->len + port->wire_extra);
        sim__port_send(port, f, f->len);
        /* back to the end of the ring: round robin, one packet per turn */
        ring_append(nic, qp);
        return;
    }
    if (nic->npaced) {
        struct sim_host *h = nic->host;
        sim_timer_arm(&nic->wake, h->node.comp.sim, nic->paced[0]->next_tx, &h->node.comp,
                      SIM_HOST_NIC_WAKE, NULL);
    }
}

void sim__nic_wake(struct sim_nic *nic, struct sim_qp *qp)
{
    ring_append(nic, qp);
    if (sim__port_idle(nic->port))
        pull(nic);
}

void sim__nic_wake_event(struct sim_nic *nic)
{
    if (!sim_timer_fire(&nic->wake, sim_now(nic->host->node.comp.sim)))
        return; /* superseded by an earlier one */
    if (sim__port_idle(nic->port))
        pull(nic);
}

void sim__nic_push_cnp(struct sim_nic *nic, struct sim_frame *f)
{
    if (nic->cnp_tail)
        nic->cnp_tail->next = f;
    else
        nic->cnp_head = f;
    nic->cnp_tail = f;
    if (sim__port_idle(nic->port))
        pull(nic);
}

void sim__nic_tx_ready(struct sim_node *n, struct sim_port *port)
{
    (void)port;
    pull(&((struct sim_host *)n)->nic);
}

static void prefetch_qp(const struct sim_qp *qp)
{
    for (size_t at = 0; at < sizeof *qp; at += 64)
        __builtin_prefetch((const char *)qp + at);
    __builtin_prefetch((const char *)qp + sizeof *qp - 1);
}

/* The queue pair a plain RoCEv2 frame (Ethernet without a VLAN tag, IPv4
 * without options) is for, by the BTH's destination QP: its pointer, then
 * its lines; the queue pair pull will take. */
void sim__nic_prefetch(const struct sim_node *n, const struct sim_port *port, const struct sim_frame *f,
                       unsigned step)
{
    const struct sim_nic *nic = &((const struct sim_host *)n)->nic;
    (void)port;
    if (!f) {
        if (step == 0 && nic->ring_head)
            prefetch_qp(nic->ring_head);
        return;
    }
    const uint8_t *d = f->data;
    if (f->len < 54 || d[12] != 0x08 || d[13] != 0x00 || d[14] != 0x45 || d[23] != 17 ||
        (d[36] << 8 | d[37]) != nic->dcfg.rocev2_port)
        return;
    uint32_t i = (uint32_t)(d[47] << 16 | d[48] << 8 | d[49]) - SIM_QPN_BASE;
    if (i >= nic->nqps)
        return;
    if (step == 0)
        __builtin_prefetch(&nic->qps[i]);
    else
        prefetch_qp(nic->qps[i]);
}

void sim__nic_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f)
{
    struct sim_nic *nic = &((struct sim_host *)n)->nic;
    (void)in;
    if (nic->rx.rate)
        sim__rxbuf_put(nic, f);
    else
        sim__nic_take(nic, f);
}

/* ---- out-of-order placement (nic.ooo) ---------------------------------------------
 * NICs built for fabrics that route per packet (adaptive routing, spraying)
 * place each request by its PSN as it arrives and acknowledge in order;
 * a gap earns a NAK only once it has stayed open for the reorder window.
 * Placement is modelled by holding the frames beyond a gap and handing
 * them to the responder in PSN order as the gap fills: the same bytes
 * land in the same places, acknowledged at the same moments. */
static void reorder_arm(struct sim_nic *nic, struct sim_qp *qp)
{
    struct sim_host *h = nic->host;
    qp->ooo_epsn = qp->epsn;
    qp->ooo_deadline = sim_now(h->node.comp.sim) + qp->p->ooo_window;
    /* a later deadline leaves the pending event: it re-arms when it fires */
    sim_timer_arm(&qp->reorder, h->node.comp.sim, qp->ooo_deadline, &h->node.comp,
                  SIM_HOST_QP_REORDER, qp);
}

static void hold(struct sim_nic *nic, struct sim_qp *qp, struct sim_frame *f, uint32_t psn)
{
    struct sim_frame **at = &qp->ooo;
    while (*at && sim__psn_diff((*at)->aux, psn) < 0)
        at = &(*at)->next;
    if (*at && (*at)->aux == psn) {
        sim__frame_free(&nic->host->node.net->pool, f); /* held already */
        return;
    }
    f->aux = psn;
    f->next = *at;
    *at = f;
    qp->nooo++;
    qp->st.ooo_held++;
    if (qp->nooo == 1 || qp->ooo_epsn != qp->epsn)
        reorder_arm(nic, qp);
}

/* Hand the held requests that are now in order to the responder. */
static void drain(struct sim_nic *nic, struct sim_qp *qp)
{
    struct sim_frame_pool *pool = &nic->host->node.net->pool;
    uint32_t epsn = qp->epsn;
    while (qp->ooo && sim__psn_diff(qp->ooo->aux, qp->epsn) <= 0) {
        struct sim_frame *f = qp->ooo;
        qp->ooo = f->next;
        qp->nooo--;
        struct rdma_pkt pkt;
        if (f->aux == qp->epsn && nic->transport->parse(nic, f, &pkt))
            sim__resp_receive(qp, &pkt);
        sim__frame_free(pool, f);
    }
    if (qp->ooo && qp->epsn != epsn)
        reorder_arm(nic, qp); /* a new gap */
}

void sim__nic_reorder_event(struct sim_nic *nic, struct sim_qp *qp)
{
    struct sim_host *h = nic->host;
    sim_time_t now = sim_now(h->node.comp.sim);
    if (!sim_timer_fire(&qp->reorder, now) || !qp->ooo)
        return;
    if (now < qp->ooo_deadline)
        sim_timer_arm(&qp->reorder, h->node.comp.sim, qp->ooo_deadline, &h->node.comp,
                      SIM_HOST_QP_REORDER, qp);
    else if (qp->epsn == qp->ooo_epsn)
        sim__resp_nak_gap(qp);
}

void sim__nic_take(struct sim_nic *nic, struct sim_frame *f)
{
    struct sim_node *n = &nic->host->node;
    struct rdma_pkt pkt;
    /* the packet leaves the receive buffer: its blocks are credit again */
    if (nic->port->ib)
        sim__ib_free(nic->port, sim__ib_vl(f), f->len);
    if (nic->transport == &sim__transport_iwarp || nic->transport == &sim__transport_tcp) {
        sim__iw_take(nic, f);
        return;
    }
    /* dropped: a bad ICRC, a malformed frame, or no such queue pair */
    if (!nic->transport->parse(nic, f, &pkt) || pkt.bth.destqp - SIM_QPN_BASE >= nic->nqps) {
        n->bad_frames++;
    } else if (pkt.op->flags & RDMA_OPF_CNP) {
        nic->port->st.cnps_received++;
        sim__dcqcn_cnp(nic->qps[pkt.bth.destqp - SIM_QPN_BASE]);
    } else {
        struct sim_qp *qp = nic->qps[pkt.bth.destqp - SIM_QPN_BASE];
        qp->st.rx_packets++;
        if (nic->transport->congested(&pkt))
            sim__dcqcn_ce(qp);
        if (pkt.op->flags & RDMA_OPF_REQUEST) {
            if (qp->cc && qp->cc->hpcc && pkt.ioam.present)
                sim__hpcc_collect(qp, &pkt.ioam);
            if ((f->flags & SIM_FRAME_RTO) && qp->epsn == f->aux)
                qp->st.rto_dups += f->flags >> SIM_FRAME_RTO_SHIFT;
            if (qp->p->ooo && sim__psn_diff(pkt.bth.psn, qp->epsn) > 0) {
                hold(nic, qp, f, pkt.bth.psn);
                return;
            }
            sim__resp_receive(qp, &pkt);
            if (qp->ooo)
                drain(nic, qp);
        } else {
            if (qp->cc && qp->cc->dctcp && (pkt.present & RDMA_HDR_AETH))
                sim__dctcp_ack(qp, pkt.bth.psn, pkt.bth.becn);
            else if (qp->cc && qp->cc->timely && (pkt.present & RDMA_HDR_AETH))
                sim__timely_ack(qp, pkt.bth.psn);
            else if (qp->cc && qp->cc->hpcc && (pkt.present & RDMA_HDR_AETH) && pkt.ioam.present)
                sim__hpcc_ack(qp, pkt.bth.psn, &pkt.ioam);
            sim__comp_receive(qp, &pkt);
        }
    }
    sim__frame_free(&n->net->pool, f);
}

void sim__nic_init_fabric(struct sim_nic *nic)
{
    const struct sim_network *net = nic->host->node.net;
    const struct cfg_nic *p = &net->cfg->nodes[nic->host->node.index].nic;
    if (net->cfg->ib.enable) {
        /* everything it sends goes on the VL of its SL */
        nic->prio = nic->cnp_prio = net->cfg->ib.sl2vl[p->sl];
    } else {
        nic->prio = (uint8_t)sim__dscp_prio(&net->cfg->fabric, p->dscp);
        nic->cnp_prio = (uint8_t)sim__dscp_prio(&net->cfg->fabric, p->fab.dcqcn.cnp_dscp);
    }
    sim_timer_init(&nic->wake);
    sim__pfc_port_init(nic->port, p->fab.pfc && !net->cfg->ib.enable, UINT16_MAX, 0);
    sim__rxbuf_init(nic);
    for (uint32_t i = 0; i < nic->nqps; i++)
        if (!nic->qps[i]->iw) /* TCP runs its own congestion control */
            sim__dcqcn_init(nic->qps[i]);
}
