/* req.c - the requester of a reliable connected queue pair (IBA vol. 1
 * rel. 1.4, chapter 9.7, reliable service): send work requests become
 * request packets.
 *
 * WRITE and SEND messages are segmented at the path MTU into First,
 * Middle..., Last packets (or one Only), each with the next PSN; READ and
 * atomic requests are one packet, a READ consuming one PSN per response
 * packet it asks for. The ACK-request bit is set on the last
 * packet of each message, and every ack_request_every packets if asked.
 * At most max_rd_atomic READ and atomic requests are outstanding.
 *
 * A work request waits until the NIC has it (doorbell and WQE fetch), and
 * a packet until the DMA path has its payload in the NIC.
 *
 * The state machine runs once each time the NIC asks this queue pair for a
 * packet:
 *   GET_WQE -> CHECK_LIMITS -> FETCH -> BUILD -> EMIT -> SENT
 *        \------------\----------\-------------------> IDLE
 */
#include <string.h>

#include "host/nic.h"

#define REQ_STATES(X)                                                          \
    X(GET_WQE)                                                                 \
    X(CHECK_LIMITS)                                                            \
    X(FETCH)                                                                   \
    X(BUILD)                                                                   \
    X(EMIT)                                                                    \
    X(SENT)                                                                    \
    X(IDLE)

enum req_state {
#define REQ_ENUM(name) REQ_##name,
    REQ_STATES(REQ_ENUM)
#undef REQ_ENUM
};

struct req_ctx {
    struct sim_qp *qp;
    struct rdma_pkt *pkt;
    struct sim_wqe *w;
    uint32_t psns;  /* PSNs this packet consumes */
    uint32_t bytes; /* payload bytes it carries */
    bool last;      /* it ends the work request */
};

static enum req_state get_wqe(struct req_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (qp->error || qp->sq_next == qp->sq_tail)
        return REQ_IDLE;
    c->w = sim__wqe(qp, qp->sq_next);
    /* not in the NIC yet: wake up when it is */
    if (c->w->ready_at > sim__qp_now(qp)) {
        sim__nic_wake_at(qp->nic, qp, c->w->ready_at);
        return REQ_IDLE;
    }
    return REQ_CHECK_LIMITS;
}

/* PSNs are 24 bits and compared in a window of half the space, so no more
 * than 2^23 - 1 may be outstanding. */
#define PSN_WINDOW ((UINT32_C(1) << 23) - 1)

static uint32_t psns_needed(const struct sim_qp *qp, const struct sim_wqe *w)
{
    return w->op == SIM_OP_READ ? w->npkts - qp->req_offset / qp->mtu : 1;
}

static enum req_state check_limits(struct req_ctx *c)
{
    struct sim_qp *qp = c->qp;
    /* after an RNR NAK the queue pair waits; the RNR timer wakes it */
    if (sim__qp_now(qp) < qp->rnr_until)
        return REQ_IDLE;
    if (sim__wqe_is_rd_atomic(c->w) && qp->rd_outstanding >= qp->p->max_rd_atomic)
        return REQ_IDLE;
    uint32_t outstanding = (qp->next_psn - qp->una_psn) & 0xffffff;
    if (outstanding + psns_needed(qp, c->w) > PSN_WINDOW)
        return REQ_IDLE;
    /* an acknowledgement opens the window again (comp.c wakes the pair) */
    if (qp->cc && qp->cc->hpcc && sim__hpcc_window_full(qp))
        return REQ_IDLE;
    return REQ_FETCH;
}

static bool carries_payload(const struct sim_wqe *w) { return !sim__wqe_is_rd_atomic(w); }

static enum req_state fetch(struct req_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct sim_wqe *w = c->w;
    uint32_t off = qp->req_offset, len = 0;
    if (carries_payload(w)) {
        uint32_t left = w->len - off;
        len = left < qp->mtu ? left : qp->mtu;
    }
    bool in = qp->nic->dma->fetch(qp->nic, qp, SIM_DMA_REQ, qp->sq_next, off, len);
    return in ? REQ_BUILD : REQ_IDLE;
}

static enum req_state build(struct req_ctx *c)
{
    struct sim_qp *qp = c->qp;
    struct sim_wqe *w = c->w;
    struct rdma_pkt *pkt = c->pkt;
    const struct sim_opcodes *opc = &qp->nic->opc;
    uint32_t off = qp->req_offset;
    bool ackreq = false;
    if (!off) {
        w->first_psn = qp->next_psn;
        w->started = true;
    }
    switch (w->op) {
    case SIM_OP_READ:
        rdma_pkt_set_opcode(pkt, opc->req[SIM_OP_READ][SIM_POS_ONLY]);
        pkt->reth.va = w->rva + off;
        pkt->reth.r_key = w->rkey;
        pkt->reth.dmalen = w->len - off;
        c->psns = psns_needed(qp, w);
        c->last = true;
        break;
    case SIM_OP_CAS:
    case SIM_OP_FAA:
        rdma_pkt_set_opcode(pkt, opc->req[w->op][SIM_POS_ONLY]);
        pkt->atomiceth.va = w->rva;
        pkt->atomiceth.r_key = w->rkey;
        pkt->atomiceth.swapdt = w->swap_add;
        pkt->atomiceth.cmpdt = w->compare;
        c->psns = 1;
        c->last = true;
        break;
    default: {
        uint32_t left = w->len - off;
        c->bytes = left < qp->mtu ? left : qp->mtu;
        c->last = left <= qp->mtu;
        c->psns = 1;
        rdma_pkt_set_opcode(pkt, opc->req[w->op][sim__pos_of(off == 0, c->last)]);
        if (pkt->present & RDMA_HDR_RETH) {
            pkt->reth.va = w->rva;
            pkt->reth.r_key = w->rkey;
            pkt->reth.dmalen = w->len;
        }
        if (pkt->present & RDMA_HDR_IMMDT)
            pkt->immdt.imm = w->imm;
        if (pkt->present & RDMA_HDR_IETH)
            pkt->ieth.r_key = w->inv_rkey;
        /* IBA 9.2.3: the solicited event bit rides on a SEND's last packet */
        if (c->last && sim__op_is_send(w->op))
            pkt->bth.se = sim__net_of(qp)->cfg->msgs[w->msg].solicited;
        pkt->payload = c->bytes ? sim__nic_payload(qp->nic, w->lmr, off) : NULL;
        pkt->payload_len = c->bytes;
        /* also ask when the window fills, or the requester would stall;
         * and with the first packet resent after a timeout, so that the
         * responder says at once how far it got (else a queue pair slower
         * than its timer would resend the same packets forever) */
        ackreq = c->last ||
                 (qp->p->ack_request_every && qp->since_ackreq + 1 >= qp->p->ack_request_every) ||
                 ((qp->next_psn - qp->una_psn) & 0xffffff) + 1 >= PSN_WINDOW || qp->rto_resend;
        break;
    }
    }
    pkt->bth.p_key = 0xffff;
    pkt->bth.destqp = qp->dest_qpn;
    pkt->bth.psn = qp->next_psn;
    pkt->bth.a = ackreq;
    return REQ_EMIT;
}

static enum req_state emit(struct req_ctx *c)
{
    struct sim_qp *qp = c->qp;
    struct sim_wqe *w = c->w;
    uint32_t psn = qp->next_psn;
    if (sim__psn_diff(psn, qp->max_psn) < 0) {
        qp->st.retransmitted++;
        sim__net_of(qp)->msgs[w->msg].retx++;
    }
    qp->st.tx_packets++;
    qp->since_ackreq = c->pkt->bth.a ? 0 : qp->since_ackreq + 1;
    qp->next_psn = sim__psn_add(psn, c->psns);
    if (sim__psn_diff(qp->next_psn, qp->max_psn) > 0)
        qp->max_psn = qp->next_psn;
    if (c->last) {
        qp->sq_next++;
        qp->req_offset = 0;
        if (sim__wqe_is_rd_atomic(w))
            qp->rd_outstanding++;
    } else {
        qp->req_offset += c->bytes;
    }
    if (qp->deadline == SIM_TIME_NEVER)
        sim__comp_arm(qp);
    return REQ_SENT;
}

typedef enum req_state (*req_fn)(struct req_ctx *);

static const req_fn req_handlers[] = {
    [REQ_GET_WQE] = get_wqe,
    [REQ_CHECK_LIMITS] = check_limits,
    [REQ_FETCH] = fetch,
    [REQ_BUILD] = build,
    [REQ_EMIT] = emit,
};

bool sim__req_next(struct sim_qp *qp, struct rdma_pkt *pkt)
{
    struct req_ctx c = {.qp = qp, .pkt = pkt};
    enum req_state s = REQ_GET_WQE;
    while (s != REQ_SENT && s != REQ_IDLE)
        s = req_handlers[s](&c);
    return s == REQ_SENT;
}

void sim__req_rewind(struct sim_qp *qp, uint32_t psn)
{
    uint32_t i = qp->sq_head;
    qp->req_offset = 0;
    for (; i != qp->sq_tail; i++) {
        const struct sim_wqe *w = sim__wqe(qp, i);
        int32_t d = sim__psn_diff(psn, w->first_psn);
        if (!w->started || d < 0)
            break;
        if ((uint32_t)d < w->npkts) {
            qp->req_offset = (uint32_t)d * qp->mtu;
            break;
        }
    }
    qp->sq_next = i;
    qp->next_psn = psn;
    qp->since_ackreq = 0;
    qp->nic->dma->restart(qp->nic, qp, SIM_DMA_REQ);
    qp->rd_outstanding = 0;
    for (uint32_t j = qp->sq_head; j != qp->sq_next; j++)
        if (sim__wqe_is_rd_atomic(sim__wqe(qp, j)))
            qp->rd_outstanding++;
}
