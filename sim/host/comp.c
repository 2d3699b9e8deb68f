/* comp.c - the completer of a reliable connected queue pair (IBA vol. 1
 * rel. 1.4, chapter 9.7, reliable service): responses retire work
 * requests, and losses are repaired by going back to the oldest
 * unacknowledged PSN (go-back-N).
 *
 * An ACK retires every WRITE and SEND up to its PSN; a READ response or
 * atomic ACK retires its READ or atomic and implicitly every earlier WRITE
 * and SEND. A NAK (PSN sequence error), a gap in READ responses, an ACK
 * beyond a READ whose responses never came, and the retransmission timer
 * all restart the requester from the oldest unacknowledged PSN, at most
 * retry_count times in a row; an RNR NAK does so after the RNR delay, at
 * most rnr_retry times (7: forever). Other NAKs end the queue pair.
 *
 * Per response packet:
 *   CHECK_PSN -> CHECK_ACK -> [IMPLICIT_ACK ->] READ | ATOMIC | ACK
 *                                            | RETRY | RNR | ERROR -> DONE
 * and for the timer: TIMEOUT -> RETRY | ERROR -> DONE.
 */
#include <stdlib.h>

#include "host/nic.h"

#define COMP_STATES(X)                                                         \
    X(CHECK_PSN)                                                               \
    X(CHECK_ACK)                                                               \
    X(IMPLICIT_ACK)                                                            \
    X(READ)                                                                    \
    X(ATOMIC)                                                                  \
    X(ACK)                                                                     \
    X(RETRY)                                                                   \
    X(RNR)                                                                     \
    X(ERROR)                                                                   \
    X(TIMEOUT)                                                                 \
    X(DONE)

enum comp_state {
#define COMP_ENUM(name) COMP_##name,
    COMP_STATES(COMP_ENUM)
#undef COMP_ENUM
};

struct comp_ctx {
    struct sim_qp *qp;
    const struct rdma_pkt *pkt; /* NULL for the timer */
    uint32_t psn;
    enum comp_state then; /* where IMPLICIT_ACK goes next */
    enum sim_msg_status error;
    bool progress;
};

void sim__comp_arm(struct sim_qp *qp)
{
    sim_time_t now = sim__qp_now(qp);
    qp->deadline = now + qp->p->timeout;
    /* a later deadline leaves the pending event: it re-arms when it fires */
    if (!sim_timer_armed(&qp->timer))
        sim_timer_arm(&qp->timer, sim__host_of(qp)->node.comp.sim, qp->deadline,
                      &sim__host_of(qp)->node.comp, SIM_HOST_QP_TIMEOUT, qp);
}

static void retire(struct comp_ctx *c, struct sim_wqe *w, enum sim_msg_status st)
{
    struct sim_qp *qp = c->qp;
    qp->una_psn = sim__psn_add(sim__wqe_last_psn(w), 1);
    c->progress = true;
    sim__qp_completed(qp, w, st);
}

static bool outstanding(const struct sim_qp *qp) { return qp->una_psn != qp->max_psn; }

static enum comp_state check_psn(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (qp->error || qp->sq_head == qp->sq_tail || !sim__wqe(qp, qp->sq_head)->started)
        return COMP_DONE;
    /* a response to nothing sent yet, or to what is already retired */
    if (sim__psn_diff(c->psn, qp->max_psn) >= 0 || sim__psn_diff(c->psn, qp->una_psn) < 0)
        return COMP_DONE;
    return COMP_CHECK_ACK;
}

static enum comp_state check_ack(struct comp_ctx *c)
{
    const struct rdma_pkt *pkt = c->pkt;
    uint32_t flags = pkt->op->flags;
    if (flags & RDMA_OPF_READ) {
        if ((pkt->present & RDMA_HDR_AETH) && rdma_aeth_kind(pkt->aeth.syndrome) != RDMA_AETH_ACK)
            return COMP_DONE;
        c->then = COMP_READ;
        return COMP_IMPLICIT_ACK;
    }
    if (flags & RDMA_OPF_ATOMIC) {
        c->then = COMP_ATOMIC;
        return COMP_IMPLICIT_ACK;
    }
    switch (rdma_aeth_kind(pkt->aeth.syndrome)) {
    case RDMA_AETH_ACK:
        return COMP_ACK;
    case RDMA_AETH_RNR_NAK:
        c->then = COMP_RNR;
        return COMP_IMPLICIT_ACK;
    case RDMA_AETH_NAK:
        switch (rdma_aeth_value(pkt->aeth.syndrome)) {
        case RDMA_NAK_PSN_SEQUENCE_ERROR:
            c->then = COMP_RETRY;
            break;
        case RDMA_NAK_REMOTE_ACCESS_ERROR:
            c->then = COMP_ERROR;
            c->error = SIM_MSG_REMOTE_ACCESS;
            break;
        case RDMA_NAK_INVALID_REQUEST:
            c->then = COMP_ERROR;
            c->error = SIM_MSG_REMOTE_INVALID;
            break;
        default:
            c->then = COMP_ERROR;
            c->error = SIM_MSG_REMOTE_OPERATIONAL;
            break;
        }
        return COMP_IMPLICIT_ACK;
    default:
        return COMP_DONE;
    }
}

/* Everything before a response's PSN arrived: retire the WRITEs and SENDs
 * that end before it, and count the packets of one it ends inside. */
static enum comp_state implicit_ack(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    while (qp->sq_head != qp->sq_tail) {
        struct sim_wqe *w = sim__wqe(qp, qp->sq_head);
        if (!w->started || sim__wqe_is_rd_atomic(w))
            break;
        if (sim__psn_diff(sim__wqe_last_psn(w), c->psn) >= 0) {
            if (sim__psn_diff(c->psn, qp->una_psn) > 0) {
                qp->una_psn = c->psn;
                c->progress = true;
            }
            break;
        }
        retire(c, w, SIM_MSG_OK);
    }
    return c->then;
}

static enum comp_state ack(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    while (qp->sq_head != qp->sq_tail) {
        struct sim_wqe *w = sim__wqe(qp, qp->sq_head);
        if (!w->started || sim__psn_diff(c->psn, w->first_psn) < 0)
            break;
        /* responses come in PSN order: an ACK past a READ or atomic whose
         * response is missing means the response was lost */
        if (sim__wqe_is_rd_atomic(w))
            return COMP_RETRY;
        if (sim__psn_diff(c->psn, sim__wqe_last_psn(w)) >= 0) {
            retire(c, w, SIM_MSG_OK);
            continue;
        }
        uint32_t next = sim__psn_add(c->psn, 1);
        if (sim__psn_diff(next, qp->una_psn) > 0) {
            qp->una_psn = next;
            c->progress = true;
        }
        break;
    }
    return COMP_DONE;
}

static enum comp_state read(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct rdma_pkt *pkt = c->pkt;
    if (qp->sq_head == qp->sq_tail)
        return COMP_DONE;
    struct sim_wqe *w = sim__wqe(qp, qp->sq_head);
    if (w->op != SIM_OP_READ || !w->started || sim__psn_diff(c->psn, w->first_psn) < 0 ||
        sim__psn_diff(c->psn, sim__wqe_last_psn(w)) > 0)
        return COMP_DONE;
    if (c->psn != qp->una_psn)
        return qp->retrying ? COMP_DONE : COMP_RETRY;
    uint64_t off = (uint64_t)sim__psn_diff(c->psn, w->first_psn) * qp->mtu;
    uint64_t want = w->len - off < qp->mtu ? w->len - off : qp->mtu;
    if (pkt->payload_len != want)
        return COMP_DONE;
    bool last = c->psn == sim__wqe_last_psn(w);
    if (want)
        sim__nic_place(qp->nic, w->lmr, off, pkt->payload, (uint32_t)want, last);
    if (last) {
        retire(c, w, SIM_MSG_OK);
    } else {
        qp->una_psn = sim__psn_add(c->psn, 1);
        c->progress = true;
    }
    return COMP_DONE;
}

static enum comp_state atomic(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (qp->sq_head == qp->sq_tail)
        return COMP_DONE;
    struct sim_wqe *w = sim__wqe(qp, qp->sq_head);
    if (!sim__op_is_atomic(w->op) || !w->started || c->psn != w->first_psn || c->psn != qp->una_psn)
        return COMP_DONE;
    uint8_t orig[8];
    for (int i = 0; i < 8; i++)
        orig[i] = (uint8_t)(c->pkt->atomicacketh.origremdt >> (8 * i));
    sim__nic_place(qp->nic, w->lmr, 0, orig, 8, true);
    retire(c, w, SIM_MSG_OK);
    return COMP_DONE;
}

static enum comp_state retry(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    /* One go-back-N per loss: what the old stream still delivers after a
     * go-back-N is ignored, unless this very response acknowledged
     * something new, which makes it news of a later loss. */
    if (qp->retrying && c->pkt && !c->progress)
        return COMP_DONE;
    if (!qp->retry_left) {
        c->error = SIM_MSG_RETRY_EXCEEDED;
        return COMP_ERROR;
    }
    qp->retry_left--;
    qp->retrying = true;
    qp->st.rewinds++;
    sim__req_rewind(qp, qp->una_psn);
    sim__comp_arm(qp);
    sim__nic_wake(qp->nic, qp);
    return COMP_DONE;
}

static enum comp_state rnr(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (qp->p->rnr_retry != 7) {
        if (!qp->rnr_left) {
            c->error = SIM_MSG_RNR_RETRY_EXCEEDED;
            return COMP_ERROR;
        }
        qp->rnr_left--;
    }
    struct sim_host *h = sim__host_of(qp);
    qp->rnr_until = sim__qp_now(qp) + rdma_rnr_timer_us(rdma_aeth_value(c->pkt->aeth.syndrome)) * SIM_US;
    qp->retrying = true;
    qp->deadline = SIM_TIME_NEVER;
    sim__req_rewind(qp, qp->una_psn);
    sim_schedule(h->node.comp.sim, qp->rnr_until, &h->node.comp, SIM_HOST_QP_RNR, qp);
    return COMP_DONE;
}

static enum comp_state error(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (qp->sq_head != qp->sq_tail)
        sim__qp_completed(qp, sim__wqe(qp, qp->sq_head), c->error);
    while (qp->sq_head != qp->sq_tail)
        sim__qp_completed(qp, sim__wqe(qp, qp->sq_head), SIM_MSG_FLUSHED);
    qp->error = true;
    qp->deadline = SIM_TIME_NEVER;
    c->progress = false;
    return COMP_DONE;
}

static enum comp_state timeout(struct comp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (!outstanding(qp) || qp->error) {
        qp->deadline = SIM_TIME_NEVER;
        return COMP_DONE;
    }
    qp->st.timeouts++;
    qp->rto_resend = true;
    return COMP_RETRY;
}

typedef enum comp_state (*comp_fn)(struct comp_ctx *);

static const comp_fn comp_handlers[] = {
    [COMP_CHECK_PSN] = check_psn,
    [COMP_CHECK_ACK] = check_ack,
    [COMP_IMPLICIT_ACK] = implicit_ack,
    [COMP_READ] = read,
    [COMP_ATOMIC] = atomic,
    [COMP_ACK] = ack,
    [COMP_RETRY] = retry,
    [COMP_RNR] = rnr,
    [COMP_ERROR] = error,
    [COMP_TIMEOUT] = timeout,
};

static void run(struct comp_ctx *c, enum comp_state s)
{
    struct sim_qp *qp = c->qp;
    while (s != COMP_DONE)
        s = comp_handlers[s](c);
    if (!c->progress)
        return;
    /* Progress: the retry budgets start over and the timer restarts. An
     * acknowledgement may also reach past where a go-back-N put the
     * requester; it then resumes from there. */
    qp->retry_left = (uint8_t)qp->p->retry_count;
    qp->rnr_left = (uint8_t)qp->p->rnr_retry;
    qp->retrying = false;
    if (sim__psn_diff(qp->una_psn, qp->next_psn) > 0)
        sim__req_rewind(qp, qp->una_psn);
    if (outstanding(qp))
        sim__comp_arm(qp);
    else
        qp->deadline = SIM_TIME_NEVER;
    sim__nic_wake(qp->nic, qp);
}

void sim__comp_receive(struct sim_qp *qp, const struct rdma_pkt *pkt)
{
    struct comp_ctx c = {.qp = qp, .pkt = pkt, .psn = pkt->bth.psn};
    run(&c, COMP_CHECK_PSN);
}

void sim__comp_timer(struct sim_qp *qp)
{
    sim_time_t now = sim__qp_now(qp);
    if (!sim_timer_fire(&qp->timer, now) || qp->deadline == SIM_TIME_NEVER)
        return;
    if (now < qp->deadline) {
        sim_timer_arm(&qp->timer, sim__host_of(qp)->node.comp.sim, qp->deadline,
                      &sim__host_of(qp)->node.comp, SIM_HOST_QP_TIMEOUT, qp);
        return;
    }
    struct comp_ctx c = {.qp = qp};
    run(&c, COMP_TIMEOUT);
}

void sim__qp_fini(struct sim_qp *qp)
{
    free(qp->sq);
    free(qp->rq);
    free(qp->out);
    free(qp->atomics);
    free(qp);
}
