/* responses.c - acknowledgements, NAKs, RNR NAKs, READ responses and atomic
 * acknowledgements arriving at a requester (IBA vol. 1 9.7.5).
 *
 * An ACK with PSN p acknowledges every request up to p (coalesced ACKs); a
 * NAK or RNR NAK with PSN p acknowledges those before p. A READ completes
 * with its last response packet and an atomic with its ATOMIC Acknowledge;
 * the AETH of a READ response also acknowledges the requests before the
 * READ. Latency runs from the first request packet to that response.
 */
#include "internal.h"

#define DUP_WINDOW_NS 8192u /* see requests.c */

static void note(struct rdma_replay *r, unsigned kind, unsigned code, struct rdma_replay_flow *f, uint64_t packets,
                 struct rdma_replay_event *ev)
{
    ev->t = r->t;
    if (!replay__anomaly_add(&r->anomalies, kind, code, (int32_t)(f->id - 1), packets, ev))
        r->oom = true;
}

/* A response for a PSN no request in the capture used. */
static void unmatched(struct rdma_replay *r, struct rdma_replay_flow *rf, uint32_t psn)
{
    rf->unmatched++;
    struct rdma_replay_event ev = {.frame = {r->frame, 0, 0}, .psn = psn, .psn_end = psn};
    note(r, RDMA_REPLAY_ANOM_UNMATCHED, 0, rf, 1, &ev);
}

static void complete(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_msg *m,
                     enum rdma_replay_msg_status st)
{
    if (!m->f_done) {
        m->f_done = r->frame;
        m->t_done = r->t;
        m->has_latency = !m->partial;
    }
    replay__msg_finish(r, f, m, st);
}

/* Complete the SEND, WRITE and atomic messages wholly at or before psn
 * (inclusive) or before it. READs wait for their responses. */
static void acknowledge(struct rdma_replay *r, struct rdma_replay_flow *f, uint32_t psn, bool inclusive)
{
    struct rdma_replay_chan *c = &f->ch;
    for (uint32_t i = 0; i < c->n; i++) {
        struct rdma_replay_msg *m = replay__chan_msg(c, i);
        uint32_t last = rdma_psn_add(m->psn, (m->npsn ? m->npsn : 1) - 1);
        int32_t d = rdma_psn_diff(psn, last);
        if (d < 0 || (d == 0 && !inclusive))
            break;
        if (m->f_done || m->kind / RDMA_REPLAY_KIND_MODS == RDMA_REPLAY_KIND_BASE_READ)
            continue;
        if (!m->req_done)
            break;
        complete(r, f, m, RDMA_REPLAY_MSG_OK);
    }
    replay__chan_pop_done(r, f);
}

static bool exact_copy(const struct rdma_replay *r, const struct rdma_replay_chan *c, const struct rdma_pkt *pkt)
{
    return c->resp_valid && pkt->bth.psn == c->resp_last_psn && pkt->bth.opcode == c->resp_last_opcode &&
           (!pkt->icrc.present || pkt->icrc.value == c->resp_last_icrc) && r->t >= c->resp_last_t &&
           r->t - c->resp_last_t < DUP_WINDOW_NS;
}

/* Order of responses. Returns false if the packet is a copy to ignore. */
static bool check_order(struct rdma_replay *r, struct rdma_replay_flow *rf, struct rdma_replay_chan *c,
                        const struct rdma_pkt *pkt, uint32_t acked)
{
    if (exact_copy(r, c, pkt)) {
        rf->duplicates++;
        struct rdma_replay_event ev = {
            .frame = {c->resp_last_frame, r->frame, 0}, .psn = pkt->bth.psn, .psn_end = pkt->bth.psn};
        note(r, RDMA_REPLAY_ANOM_DUPLICATE, 0, rf, 1, &ev);
        return false;
    }
    if (!c->resp_valid)
        return true;
    int32_t d = rdma_psn_diff(acked, c->resp_hi);
    bool nak = (pkt->present & RDMA_HDR_AETH) && rdma_aeth_kind(pkt->aeth.syndrome) != RDMA_AETH_ACK;
    bool read = pkt->op->flags & RDMA_OPF_READ;
    if (d > 0 || (d == 0 && (nak || !read) && !c->retransmitted_since_resp))
        return true;
    struct rdma_replay_event ev = {
        .frame = {r->frame, c->resp_last_frame, 0}, .psn = pkt->bth.psn, .psn_end = c->resp_hi};
    if (c->retransmitted_since_resp) {
        /* the responder answering a retransmitted request again */
        rf->duplicates++;
        note(r, RDMA_REPLAY_ANOM_DUPLICATE, 1, rf, 1, &ev);
    } else {
        note(r, RDMA_REPLAY_ANOM_OUT_OF_ORDER, 0, rf, 1, &ev);
    }
    return true;
}

static void remember(struct rdma_replay *r, struct rdma_replay_chan *c, const struct rdma_pkt *pkt, uint32_t acked)
{
    if (!c->resp_valid || rdma_psn_diff(acked, c->resp_hi) > 0) {
        c->resp_hi = acked;
        c->retransmitted_since_resp = false;
    }
    c->resp_valid = true;
    c->resp_last_psn = pkt->bth.psn;
    c->resp_last_opcode = pkt->bth.opcode;
    c->resp_last_icrc = pkt->icrc.present ? pkt->icrc.value : 0;
    c->resp_last_t = r->t;
    c->resp_last_frame = r->frame;
}

static void nak(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_flow *rf,
                const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t psn = pkt->bth.psn;
    unsigned kind = rdma_aeth_kind(pkt->aeth.syndrome), value = rdma_aeth_value(pkt->aeth.syndrome);
    struct rdma_replay_msg *m = replay__chan_find(c, psn);
    struct rdma_replay_event ev = {.frame = {r->frame, m ? m->f_first : 0, 0}, .psn = psn, .psn_end = psn};
    acknowledge(r, f, psn, false);
    rf->tl_nak++;
    if (kind == RDMA_AETH_RNR_NAK) {
        ev.value = (uint64_t)rdma_rnr_timer_us(value) * 1000;
        note(r, RDMA_REPLAY_ANOM_RNR_NAK, value, rf, 1, &ev);
    } else {
        note(r, RDMA_REPLAY_ANOM_NAK, value, rf, 1, &ev);
        if (value != RDMA_NAK_PSN_SEQUENCE_ERROR) {
            /* the message fails; the requester's QP goes to the error state */
            m = replay__chan_find(c, psn);
            if (m && !m->f_done) {
                m->nak_code = (uint8_t)value;
                complete(r, f, m, RDMA_REPLAY_MSG_NAK);
                replay__chan_pop_done(r, f);
            }
            return;
        }
    }
    c->nak_pending = true;
    c->nak_kind = kind == RDMA_AETH_RNR_NAK ? RDMA_REPLAY_GBN_RNR : RDMA_REPLAY_GBN_NAK_SEQ;
    c->nak_psn = psn;
    c->nak_frame = r->frame;
    c->nak_t = r->t;
}

static void read_response(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_flow *rf,
                          const struct rdma_pkt *pkt, bool dup)
{
    struct rdma_replay_chan *c = &f->ch;
    uint32_t psn = pkt->bth.psn, fl = pkt->op->flags;
    replay__chan_learn_mtu(c, pkt);
    struct rdma_replay_msg *m = replay__chan_find(c, psn);
    if (!m || m->kind / RDMA_REPLAY_KIND_MODS != RDMA_REPLAY_KIND_BASE_READ || m->f_done) {
        unmatched(r, rf, psn);
        return;
    }
    if (fl & RDMA_OPF_FIRST)
        acknowledge(r, f, m->psn, false);
    int32_t d = rdma_psn_diff(psn, m->resp_next);
    if (d > 0) {
        struct rdma_replay_event ev = {.frame = {c->resp_last_frame, r->frame, 0},
                                       .psn = m->resp_next,
                                       .psn_end = (psn - 1) & RDMA_PSN_MASK,
                                       .value = (uint64_t)d};
        note(r, RDMA_REPLAY_ANOM_PSN_GAP, 1, rf, 1, &ev);
    }
    if (d >= 0)
        m->resp_next = rdma_psn_add(psn, 1);
    m->resp_packets++;
    if (!dup && d >= 0) {
        m->bytes += pkt->payload_len;
        rf->goodput_bytes += pkt->payload_len;
        rf->tl_bytes += pkt->payload_len;
    }
    if (fl & RDMA_OPF_LAST) {
        uint32_t span = (uint32_t)rdma_psn_diff(psn, m->psn) + 1;
        if (!m->span_known && c->read_open && m == replay__chan_msg(c, c->n - 1)) {
            c->epsn = rdma_psn_add(m->psn, span);
            c->read_open = false;
        }
        m->npsn = span;
        m->span_known = true;
        complete(r, f, m, RDMA_REPLAY_MSG_OK);
        replay__chan_pop_done(r, f);
    }
}

static void atomic_ack(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_flow *rf,
                       const struct rdma_pkt *pkt)
{
    struct rdma_replay_chan *c = &f->ch;
    acknowledge(r, f, pkt->bth.psn, false);
    struct rdma_replay_msg *m = replay__chan_find(c, pkt->bth.psn);
    if (!m || m->kind / RDMA_REPLAY_KIND_MODS != RDMA_REPLAY_KIND_BASE_ATOMIC || m->f_done) {
        unmatched(r, rf, pkt->bth.psn);
        return;
    }
    m->resp_packets++;
    complete(r, f, m, RDMA_REPLAY_MSG_OK);
    replay__chan_pop_done(r, f);
}

void replay__chan_response(struct rdma_replay *r, struct rdma_replay_flow *rf, const struct rdma_pkt *pkt)
{
    struct rdma_replay_flow *f = replay__flow_responder_of(r, rf, pkt);
    uint32_t fl = pkt->op->flags, psn = pkt->bth.psn;
    if (!f) {
        /* The requests are not in the capture (or not recognisable yet). */
        if (fl & RDMA_OPF_PAYLOAD) {
            rf->goodput_bytes += pkt->payload_len;
            rf->tl_bytes += pkt->payload_len;
        }
        unmatched(r, rf, psn);
        return;
    }
    struct rdma_replay_chan *c = &f->ch;
    c->responses++;
    bool has_aeth = pkt->present & RDMA_HDR_AETH;
    unsigned kind = has_aeth ? rdma_aeth_kind(pkt->aeth.syndrome) : RDMA_AETH_ACK;
    uint32_t acked = kind == RDMA_AETH_ACK ? psn : (psn - 1) & RDMA_PSN_MASK;
    bool dup_before = c->retransmitted_since_resp && c->resp_valid && rdma_psn_diff(acked, c->resp_hi) <= 0;
    if (!check_order(r, rf, c, pkt, acked))
        return;
    if (kind == RDMA_AETH_RNR_NAK || kind == RDMA_AETH_NAK)
        nak(r, f, rf, pkt);
    else if (fl & RDMA_OPF_READ)
        read_response(r, f, rf, pkt, dup_before);
    else if (fl & RDMA_OPF_ATOMIC)
        atomic_ack(r, f, rf, pkt);
    else if ((fl & RDMA_OPF_ACK) && c->psn_valid && !c->read_open && rdma_psn_diff(psn, c->epsn) >= 0)
        unmatched(r, rf, psn);
    else if (fl & RDMA_OPF_ACK)
        acknowledge(r, f, psn, true);
    remember(r, c, pkt, acked);
}
