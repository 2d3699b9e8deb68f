/* requests.c - request packets arriving at a QP: PSN order and message
 * assembly (IBA vol. 1 9.7.1 and 9.7.4: requests carry consecutive PSNs; a
 * READ request reserves one PSN per response packet).
 *
 *   PSN == expected   the next packet: assemble, expect PSN + span
 *   PSN  > expected   a PSN gap: the packets between were lost before the
 *                     capture point or captured elsewhere
 *   PSN  < expected   a retransmission; consecutive ones form a go-back-N
 *                     episode, started by a NAK, an RNR NAK or a timeout
 *
 * An exact copy of the previous request (same PSN, opcode and ICRC) arriving
 * sooner than any transport timer could fire is a duplicate, not a
 * retransmission: the Local ACK Timeout is 4.096 us x 2^n with n >= 1
 * (IBA 9.7.6.1.3), so no requester resends within 8.192 us.
 */
#include "internal.h"

#define DUP_WINDOW_NS 8192u

static uint32_t span_for(uint32_t len, uint32_t mtu)
{
    uint32_t n = (len + mtu - 1) / mtu;
    return n ? n : 1;
}

static bool is_pmtu(uint32_t len)
{
    return len >= 256 && len <= 4096 && !(len & (len - 1));
}

/* First and middle packets carry exactly one path MTU of payload. */
void replay__chan_learn_mtu(struct rdma_replay_chan *c, const struct rdma_pkt *pkt)
{
    uint32_t fl = pkt->op->flags;
    if ((fl & (RDMA_OPF_FIRST | RDMA_OPF_MIDDLE)) && !(fl & RDMA_OPF_LAST) && is_pmtu(pkt->payload_len))
        c->mtu = pkt->payload_len;
}

static void note(struct rdma_replay *r, unsigned kind, unsigned code, struct rdma_replay_flow *f, uint64_t packets,
                 struct rdma_replay_event *ev)
{
    ev->t = r->t;
    if (!replay__anomaly_add(&r->anomalies, kind, code, (int32_t)(f->id - 1), packets, ev))
        r->oom = true;
}

static bool is_duplicate(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    if (!c->last_frame || pkt->bth.psn != c->last_psn || pkt->bth.opcode != c->last_opcode)
        return false;
    if (pkt->icrc.present && pkt->icrc.value != c->last_icrc)
        return false;
    if (r->t >= c->last_t && r->t - c->last_t >= DUP_WINDOW_NS)
        return false;
    f->duplicates++;
    struct rdma_replay_event ev = {.frame = {c->last_frame, r->frame, 0}, .psn = pkt->bth.psn, .psn_end = pkt->bth.psn};
    note(r, RDMA_REPLAY_ANOM_DUPLICATE, 0, f, 1, &ev);
    return true;
}

static void init_message(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_msg *m,
                         const struct rdma_pkt *pkt, bool partial)
{
    m->psn = pkt->bth.psn;
    m->t_first = r->t;
    m->f_first = r->frame;
    m->kind = (uint8_t)replay__kind_of_flags(pkt->op->flags);
    m->partial = partial;
    if (f->peer < 0) {
        uint32_t *gen = replay__flow_pair_gen(&r->flows, &f->key);
        if (gen)
            (*gen)++;
    }
}

static struct rdma_replay_msg *start_message(struct rdma_replay *r, struct rdma_replay_flow *f,
                                             const struct rdma_pkt *pkt, bool partial)
{
    struct rdma_replay_msg *m = replay__chan_push(r, f);
    if (m)
        init_message(r, f, m, pkt, partial);
    return m;
}

/* Add a request packet to its message; returns the PSNs it occupies. */
static uint32_t fill(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_msg *m,
                     const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t fl = pkt->op->flags, psn = pkt->bth.psn;
    m->req_packets++;
    m->t_req_last = r->t;
    m->f_req_last = r->frame;
    if (pkt->present & RDMA_HDR_RETH) {
        m->va = pkt->reth.va;
        m->rkey = pkt->reth.r_key;
        m->dmalen = pkt->reth.dmalen;
        m->has_reth = true;
    }
    if (pkt->present & RDMA_HDR_ATOMICETH) {
        m->va = pkt->atomiceth.va;
        m->rkey = pkt->atomiceth.r_key;
        m->dmalen = 8;
        m->has_reth = true;
    }
    if (pkt->present & RDMA_HDR_IMMDT) {
        m->imm = pkt->immdt.imm;
        m->has_imm = true;
    }
    if (pkt->present & RDMA_HDR_IETH) {
        m->rkey = pkt->ieth.r_key;
        m->has_ieth = true;
    }
    uint32_t span = 1;
    if (fl & RDMA_OPF_READ) {
        m->resp_next = psn;
        if (c->mtu) {
            span = span_for(m->dmalen, c->mtu);
            m->span_known = true;
        } else {
            /* Path MTU unknown: 256 to 4096 bytes per response packet. */
            span = span_for(m->dmalen, 4096);
            c->read_open = true;
            c->read_lo = rdma_psn_add(psn, span);
            c->read_hi = rdma_psn_add(psn, span_for(m->dmalen, 256));
        }
        m->npsn = span;
    } else {
        /* An atomic carries no payload: its operand, 8 bytes of the
         * AtomicETH, is what it moves (the dmalen its request sets). */
        uint32_t bytes = fl & RDMA_OPF_ATOMIC ? m->dmalen : pkt->payload_len;
        m->bytes += bytes;
        f->goodput_bytes += bytes;
        f->tl_bytes += bytes;
        m->npsn = (uint32_t)rdma_psn_diff(psn, m->psn) + 1;
    }
    if (fl & RDMA_OPF_LAST) {
        m->req_done = true;
        m->kind = (uint8_t)replay__kind_of_flags(fl);
        if (!(fl & RDMA_OPF_READ))
            m->span_known = true;
        /* Unreliable transports have no acknowledgement to wait for. */
        if (f->transport == RDMA_TRANSPORT_UC || f->transport == RDMA_TRANSPORT_UD) {
            replay__msg_finish(r, f, m, RDMA_REPLAY_MSG_OK);
            replay__chan_pop_done(r, f);
        }
    }
    return span;
}

/* A request packet that is new (not a retransmission): add it to its message. */
static void new_packet(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t fl = pkt->op->flags;
    struct rdma_replay_msg *last = c->n ? replay__chan_msg(c, c->n - 1) : NULL;
    bool open = last && !last->req_done && !last->f_done;
    struct rdma_replay_msg *m;
    if (fl & RDMA_OPF_FIRST) {
        if (open)
            replay__msg_finish(r, f, last, RDMA_REPLAY_MSG_INCOMPLETE);
        m = start_message(r, f, pkt, false);
    } else if (open && last->kind / RDMA_REPLAY_KIND_MODS == replay__kind_of_flags(fl) / RDMA_REPLAY_KIND_MODS) {
        m = last;
    } else {
        /* a continuation whose first packet is not in the capture */
        if (open)
            replay__msg_finish(r, f, last, RDMA_REPLAY_MSG_INCOMPLETE);
        m = start_message(r, f, pkt, true);
    }
    if (m)
        c->epsn = rdma_psn_add(pkt->bth.psn, fill(r, f, m, pkt));
}

static void retransmission(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t psn = pkt->bth.psn;
    f->retransmits++;
    f->tl_retrans++;
    c->retransmitted_since_resp = true;
    struct rdma_replay_msg *m = replay__chan_find(c, psn);
    if (m) {
        m->retransmits++;
    } else if ((m = replay__chan_insert(r, f, psn))) {
        /* its first transmission never reached the capture point */
        init_message(r, f, m, pkt, !(pkt->op->flags & RDMA_OPF_FIRST));
        m->retransmits++;
        fill(r, f, m, pkt);
    }
    struct rdma_replay_event ev = {.frame = {r->frame, 0, 0}, .psn = psn, .psn_end = psn};
    note(r, RDMA_REPLAY_ANOM_RETRANSMIT, 0, f, 1, &ev);
    if (!c->in_gbn || psn != c->gbn_next) {
        replay__chan_close_gbn(r, f);
        c->in_gbn = true;
        c->gbn_psn = psn;
        c->gbn_end = (c->epsn - 1) & RDMA_PSN_MASK;
        c->gbn_packets = 0;
        c->gbn_first = r->frame;
        c->gbn_t = r->t;
        if (c->nak_pending && c->nak_psn == psn) {
            c->gbn_trigger = c->nak_kind;
            c->gbn_trigger_frame = c->nak_frame;
            c->gbn_wait = r->t >= c->nak_t ? r->t - c->nak_t : 0;
        } else {
            c->gbn_trigger = RDMA_REPLAY_GBN_TIMEOUT;
            c->gbn_trigger_frame = c->last_frame;
            c->gbn_wait = r->t >= c->last_t ? r->t - c->last_t : 0;
        }
        c->nak_pending = false;
    }
    uint32_t span = m && (pkt->op->flags & RDMA_OPF_READ) && m->npsn ? m->npsn : 1;
    c->gbn_packets++;
    c->gbn_last = r->frame;
    c->gbn_next = rdma_psn_add(psn, span);
    if (rdma_psn_diff(c->gbn_next, c->epsn) >= 0)
        replay__chan_close_gbn(r, f);
}

/* The READ whose span was open ends where the next request begins. */
static void settle_read(struct rdma_replay_chan *c, uint32_t psn)
{
    for (uint32_t i = c->n; i-- > 0;) {
        struct rdma_replay_msg *m = replay__chan_msg(c, i);
        if (m->kind / RDMA_REPLAY_KIND_MODS == RDMA_REPLAY_KIND_BASE_READ && !m->span_known) {
            m->npsn = (uint32_t)rdma_psn_diff(psn, m->psn);
            m->span_known = true;
            return;
        }
    }
}

void replay__chan_request(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t psn = pkt->bth.psn;
    c->requests++;
    if (f->transport == RDMA_TRANSPORT_UD) {
        /* A UD QP numbers its packets across all destinations: no order to
         * check per flow, and every datagram is a whole message. */
        new_packet(r, f, pkt);
        return;
    }
    if (is_duplicate(r, f, pkt))
        return;
    replay__chan_learn_mtu(c, pkt);
    if (!c->psn_valid) {
        c->epsn = psn;
        c->psn_valid = true;
    }
    if (c->read_open) {
        if (rdma_psn_diff(psn, c->read_lo) >= 0 && rdma_psn_diff(psn, c->read_hi) <= 0) {
            settle_read(c, psn);
            c->epsn = psn;
            c->read_open = false;
        } else if (rdma_psn_diff(psn, c->read_hi) > 0) {
            c->epsn = c->read_hi;
            c->read_open = false;
        }
    }
    int32_t d = rdma_psn_diff(psn, c->epsn);
    if (c->psn_from_cm) {
        c->psn_from_cm = false;
        if (d < 0) {
            c->epsn = psn;
            d = 0;
        }
    }
    if (d < 0) {
        retransmission(r, f, pkt);
    } else {
        replay__chan_close_gbn(r, f);
        if (d > 0) {
            struct rdma_replay_event ev = {.frame = {c->last_frame, r->frame, 0},
                                           .psn = c->epsn,
                                           .psn_end = (psn - 1) & RDMA_PSN_MASK,
                                           .value = (uint64_t)d};
            note(r, RDMA_REPLAY_ANOM_PSN_GAP, 0, f, 1, &ev);
        }
        new_packet(r, f, pkt);
    }
    c->last_psn = psn;
    c->last_opcode = pkt->bth.opcode;
    c->last_icrc = pkt->icrc.present ? pkt->icrc.value : 0;
    c->last_t = r->t;
    c->last_frame = r->frame;
}
