/* resp.c - the responder of a reliable connected queue pair (IBA vol. 1
 * rel. 1.4, chapter 9.7, reliable service): request packets are checked,
 * executed against host memory and acknowledged.
 *
 * A packet with the expected PSN is executed; a later PSN means packets
 * were lost and earns one NAK (PSN sequence error) until the expected PSN
 * arrives; an earlier PSN is a duplicate: WRITE and SEND are acknowledged
 * again, READ is answered again from memory, and an atomic's saved result
 * is sent again without executing it twice. SEND and WRITE with immediate
 * consume a posted receive, and earn an RNR NAK when none is posted.
 * With nic.ooo the NIC holds requests beyond a gap and hands them over in
 * PSN order once it fills (nic.c); the NAK then waits for the reorder
 * window.
 *
 * Per request packet:
 *   CHECK_PSN -> CHECK_OP_SEQ -> CHECK_RESOURCE -> CHECK_RKEY -> CHECK_LENGTH
 *     -> EXECUTE -> COMPLETE -> ACKNOWLEDGE -> DONE
 *   with exits to DUPLICATE, NAK_SEQ, RNR, NAK_INVALID and NAK_ACCESS.
 *
 * What the responder sends waits in out[], in PSN order, until the NIC
 * pulls it; a plain ACK still waiting is replaced by a newer one
 * (coalescing), so a burst of requests costs one ACK on the wire. An ACK
 * goes once the NIC is done writing the data it acknowledges, a READ
 * response once the DMA path has read its payload, an atomic's response
 * once the atomic has been carried out in memory.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/collective.h"
#include "host/nic.h"

#define RESP_STATES(X)                                                         \
    X(CHECK_PSN)                                                               \
    X(CHECK_OP_SEQ)                                                            \
    X(CHECK_RESOURCE)                                                          \
    X(CHECK_RKEY)                                                              \
    X(CHECK_LENGTH)                                                            \
    X(EXECUTE)                                                                 \
    X(COMPLETE)                                                                \
    X(ACKNOWLEDGE)                                                             \
    X(DUPLICATE)                                                               \
    X(NAK_SEQ)                                                                 \
    X(RNR)                                                                     \
    X(NAK_INVALID)                                                             \
    X(NAK_ACCESS)                                                              \
    X(DONE)

enum resp_state {
#define RESP_ENUM(name) RESP_##name,
    RESP_STATES(RESP_ENUM)
#undef RESP_ENUM
};

/* AETH syndromes (IBA 9.7.5.1, table 43): ACK with no credit count. */
#define SYN_ACK 0x1f
#define SYN_RNR(timer) (0x20 | ((timer) & 0x1f))
#define SYN_NAK(code) (0x60 | (code))

struct resp_ctx {
    struct sim_qp *qp;
    const struct rdma_pkt *pkt;
    uint32_t flags; /* the opcode's RDMA_OPF_* */
    uint32_t psn;
    uint32_t mr;    /* region the packet's data goes to or comes from */
    uint64_t off;
};

/* ---- the output queue ---------------------------------------------------------- */
static struct sim_resp_item *push(struct sim_qp *qp)
{
    if (qp->out_tail - qp->out_head == qp->out_cap) {
        uint32_t cap = qp->out_cap ? qp->out_cap * 2 : 8;
        struct sim_resp_item *out = sim__xcalloc(cap, sizeof *out);
        for (uint32_t i = qp->out_head; i != qp->out_tail; i++)
            out[i & (cap - 1)] = qp->out[i & (qp->out_cap - 1)];
        free(qp->out);
        qp->out = out;
        qp->out_cap = cap;
    }
    struct sim_resp_item *it = &qp->out[qp->out_tail++ & (qp->out_cap - 1)];
    memset(it, 0, sizeof *it);
    return it;
}

static void queue_ack(struct sim_qp *qp, uint8_t syndrome, uint32_t psn)
{
    if (qp->out_tail != qp->out_head) {
        struct sim_resp_item *last = &qp->out[(qp->out_tail - 1) & (qp->out_cap - 1)];
        if (last->kind == RESP_ACK && last->syndrome == SYN_ACK && syndrome == SYN_ACK) {
            last->psn = psn;
            last->msn = qp->msn;
            last->ready_at = qp->written_at;
            return;
        }
    }
    struct sim_resp_item *it = push(qp);
    it->kind = RESP_ACK;
    it->syndrome = syndrome;
    it->psn = psn;
    it->msn = qp->msn;
    if (syndrome == SYN_ACK) {
        it->ready_at = qp->written_at;
        qp->st.acks++;
    }
    sim__nic_wake(qp->nic, qp);
}

static void queue_read(struct sim_qp *qp, uint32_t psn, uint32_t mr, uint64_t off, uint32_t len)
{
    struct sim_resp_item *it = push(qp);
    it->kind = RESP_READ;
    it->psn = psn;
    it->msn = qp->msn;
    it->mr = mr;
    it->off = off;
    it->len = len;
    qp->nic->dma->ahead(qp->nic, qp, SIM_DMA_RESP);
    sim__nic_wake(qp->nic, qp);
}

static void queue_atomic(struct sim_qp *qp, uint32_t psn, uint64_t orig, sim_time_t ready_at)
{
    struct sim_resp_item *it = push(qp);
    it->kind = RESP_ATOMIC;
    it->psn = psn;
    it->msn = qp->msn;
    it->orig = orig;
    it->ready_at = ready_at;
    sim__nic_wake(qp->nic, qp);
}

/* ---- the state machine ---------------------------------------------------------- */
static bool is_write(const struct resp_ctx *c) { return c->flags & RDMA_OPF_WRITE; }
static bool is_send(const struct resp_ctx *c) { return c->flags & RDMA_OPF_SEND; }
static bool is_read(const struct resp_ctx *c) { return c->flags & RDMA_OPF_READ; }
static bool is_atomic(const struct resp_ctx *c) { return c->flags & RDMA_OPF_ATOMIC; }
static bool is_first(const struct resp_ctx *c) { return c->flags & RDMA_OPF_FIRST; }
static bool is_last(const struct resp_ctx *c) { return c->flags & RDMA_OPF_LAST; }

static uint32_t read_psns(const struct sim_qp *qp, uint32_t len)
{
    return len ? (len + qp->mtu - 1) / qp->mtu : 1;
}

static enum resp_state check_psn(struct resp_ctx *c)
{
    int32_t d = sim__psn_diff(c->psn, c->qp->epsn);
    if (d > 0)
        return RESP_NAK_SEQ;
    if (d < 0)
        return RESP_DUPLICATE;
    c->qp->nak_sent = false;
    return RESP_CHECK_OP_SEQ;
}

static enum resp_state check_op_seq(struct resp_ctx *c)
{
    const struct sim_qp *qp = c->qp;
    if (is_read(c) || is_atomic(c) || is_first(c))
        return qp->rmsg == RMSG_NONE ? RESP_CHECK_RESOURCE : RESP_NAK_INVALID;
    if ((is_write(c) && qp->rmsg == RMSG_WRITE) || (is_send(c) && qp->rmsg == RMSG_SEND))
        return RESP_CHECK_RESOURCE;
    return RESP_NAK_INVALID;
}

static enum resp_state check_resource(struct resp_ctx *c)
{
    const struct sim_qp *qp = c->qp;
    bool needs_recv = (is_send(c) && is_first(c)) ||
                      (is_write(c) && (c->flags & RDMA_OPF_IMM));
    if (needs_recv && qp->rq_head == qp->rq_tail)
        return RESP_RNR;
    return RESP_CHECK_RKEY;
}

static enum resp_state check_rkey(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct rdma_pkt *pkt = c->pkt;
    struct sim_host *h = sim__host_of(qp);
    const struct sim_mr *mr = NULL;
    if ((is_write(c) && is_first(c)) || is_read(c)) {
        mr = sim__mr_lookup(h, pkt->reth.r_key, pkt->reth.va, pkt->reth.dmalen);
        if (!mr)
            return RESP_NAK_ACCESS;
        c->off = pkt->reth.va - mr->va;
    } else if (is_atomic(c)) {
        if (pkt->atomiceth.va % 8)
            return RESP_NAK_INVALID;
        mr = sim__mr_lookup(h, pkt->atomiceth.r_key, pkt->atomiceth.va, 8);
        if (!mr || !mr->bytes)
            return RESP_NAK_ACCESS;
        c->off = pkt->atomiceth.va - mr->va;
    } else if (is_send(c) && is_first(c)) {
        c->mr = qp->rq[qp->rq_head & (qp->rq_cap - 1)].mr;
        c->off = 0;
        return RESP_CHECK_LENGTH;
    } else {
        c->mr = qp->rmsg_mr;
        c->off = qp->rmsg_off;
        return RESP_CHECK_LENGTH;
    }
    c->mr = (uint32_t)(mr - h->mrs);
    return RESP_CHECK_LENGTH;
}

static enum resp_state check_length(struct resp_ctx *c)
{
    const struct sim_qp *qp = c->qp;
    uint32_t len = c->pkt->payload_len;
    if (is_read(c) || is_atomic(c))
        return len ? RESP_NAK_INVALID : RESP_EXECUTE;
    /* every packet but the last of a message carries exactly the MTU */
    if (is_last(c) ? len > qp->mtu : len != qp->mtu)
        return RESP_NAK_INVALID;
    if (is_write(c)) {
        uint64_t left = is_first(c) ? c->pkt->reth.dmalen : qp->rmsg_left;
        if (len > left || (is_last(c) && len != left))
            return RESP_NAK_INVALID;
    } else {
        const struct sim_mr *mr = &sim__host_of(c->qp)->mrs[c->mr];
        if (c->off + len > mr->len)
            return RESP_NAK_INVALID;
    }
    return RESP_EXECUTE;
}

static enum resp_state execute(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct rdma_pkt *pkt = c->pkt;
    if (is_read(c)) {
        qp->msn = sim__psn_add(qp->msn, 1);
        queue_read(qp, c->psn, c->mr, c->off, pkt->reth.dmalen);
        return RESP_COMPLETE;
    }
    if (is_atomic(c)) {
        struct sim_mr *mr = &sim__host_of(qp)->mrs[c->mr];
        uint8_t *p = mr->bytes + c->off;
        uint64_t orig = 0, v;
        for (int i = 7; i >= 0; i--)
            orig = orig << 8 | p[i]; /* host memory is little-endian */
        if (pkt->bth.opcode == qp->nic->opc.req[SIM_OP_CAS][SIM_POS_ONLY])
            v = orig == pkt->atomiceth.cmpdt ? pkt->atomiceth.swapdt : orig;
        else
            v = orig + pkt->atomiceth.swapdt;
        for (int i = 0; i < 8; i++)
            p[i] = (uint8_t)(v >> (8 * i));
        qp->atomics[qp->natomics++ % qp->p->max_rd_atomic] =
            (struct sim_atomic_result){.psn = c->psn, .orig = orig};
        qp->msn = sim__psn_add(qp->msn, 1);
        queue_atomic(qp, c->psn, orig, qp->nic->dma->atomic(qp->nic, c->mr, c->off));
        return RESP_COMPLETE;
    }
    if (pkt->payload_len) {
        sim_time_t t = sim__nic_place(qp->nic, c->mr, c->off, pkt->payload, pkt->payload_len,
                                      is_last(c));
        if (t > qp->written_at)
            qp->written_at = t;
    }
    return RESP_COMPLETE;
}

static enum resp_state complete(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct rdma_pkt *pkt = c->pkt;
    if (is_read(c) || is_atomic(c))
        return RESP_ACKNOWLEDGE;
    if (!is_last(c)) {
        qp->rmsg = is_write(c) ? RMSG_WRITE : RMSG_SEND;
        qp->rmsg_mr = c->mr;
        qp->rmsg_off = c->off + pkt->payload_len;
        if (is_write(c))
            qp->rmsg_left = (is_first(c) ? pkt->reth.dmalen : qp->rmsg_left) - pkt->payload_len;
        return RESP_ACKNOWLEDGE;
    }
    qp->rmsg = RMSG_NONE;
    qp->msn = sim__psn_add(qp->msn, 1);
    if (is_send(c) || (c->flags & RDMA_OPF_IMM)) {
        qp->rq_head++;
        qp->nic->dma->recv_done(qp->nic, qp);
        /* the region written names its message, whichever receive this used */
        sim_time_t now = sim__qp_now(qp);
        sim__host_delivered(sim__host_of(qp), sim__host_of(qp)->mrs[c->mr].msg,
                            qp->written_at > now ? qp->written_at : now);
    }
    if (c->flags & RDMA_OPF_INV) {
        struct sim_host *h = sim__host_of(qp);
        uint32_t idx = (pkt->ieth.r_key >> 8) - 1;
        if ((pkt->ieth.r_key >> 8) && idx < h->nmrs && h->mrs[idx].rkey == pkt->ieth.r_key)
            h->mrs[idx].valid = false;
    }
    return RESP_ACKNOWLEDGE;
}

static enum resp_state acknowledge(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    if (is_read(c)) {
        qp->epsn = sim__psn_add(qp->epsn, read_psns(qp, c->pkt->reth.dmalen));
        qp->unacked = 0;
        return RESP_DONE;
    }
    qp->epsn = sim__psn_add(qp->epsn, 1);
    if (is_atomic(c)) {
        qp->unacked = 0;
        return RESP_DONE;
    }
    qp->unacked++;
    /* DCTCP's estimate, TIMELY's RTTs and HPCC's telemetry want an
     * acknowledgement per packet, as HPCC's simulator sends them */
    bool each = qp->cc && (qp->cc->dctcp || qp->cc->timely || qp->cc->hpcc);
    if (c->pkt->bth.a || each || (qp->p->ack_coalesce && qp->unacked >= qp->p->ack_coalesce)) {
        queue_ack(qp, SYN_ACK, c->psn);
        qp->unacked = 0;
    }
    return RESP_DONE;
}

/* A duplicate request means the requester went back to its PSN and will
 * ask again for everything after it: responses to those requests that
 * have not started to go out are dropped, so that the answers to the new
 * requests do not queue behind stale ones. */
static void flush_from(struct sim_qp *qp, uint32_t psn)
{
    uint32_t tail = qp->out_tail;
    while (qp->out_tail != qp->out_head) {
        const struct sim_resp_item *it = &qp->out[(qp->out_tail - 1) & (qp->out_cap - 1)];
        if (sim__psn_diff(it->psn, psn) < 0 || (it->kind == RESP_READ && it->sent))
            break;
        qp->out_tail--;
    }
    if (qp->out_tail != tail)
        qp->nic->dma->restart(qp->nic, qp, SIM_DMA_RESP);
}

static enum resp_state duplicate(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    const struct rdma_pkt *pkt = c->pkt;
    flush_from(qp, c->psn);
    if (is_read(c)) {
        /* a READ is answered again from memory, from the PSN it names */
        struct sim_host *h = sim__host_of(qp);
        const struct sim_mr *mr = sim__mr_lookup(h, pkt->reth.r_key, pkt->reth.va, pkt->reth.dmalen);
        if (mr)
            queue_read(qp, c->psn, (uint32_t)(mr - h->mrs), pkt->reth.va - mr->va, pkt->reth.dmalen);
        return RESP_DONE;
    }
    if (is_atomic(c)) {
        /* never executed twice: the saved result goes out again */
        uint32_t n = qp->natomics < qp->p->max_rd_atomic ? qp->natomics : qp->p->max_rd_atomic;
        for (uint32_t i = 0; i < n; i++)
            if (qp->atomics[i].psn == c->psn) {
                queue_atomic(qp, c->psn, qp->atomics[i].orig, 0);
                break;
            }
        return RESP_DONE;
    }
    if (pkt->bth.a)
        queue_ack(qp, SYN_ACK, sim__psn_add(qp->epsn, 0xffffff));
    return RESP_DONE;
}

void sim__resp_nak_gap(struct sim_qp *qp)
{
    if (!qp->nak_sent) {
        qp->nak_sent = true;
        qp->st.naks_seq++;
        queue_ack(qp, SYN_NAK(RDMA_NAK_PSN_SEQUENCE_ERROR), qp->epsn);
    }
}

static enum resp_state nak_seq(struct resp_ctx *c)
{
    sim__resp_nak_gap(c->qp);
    return RESP_DONE;
}

static enum resp_state rnr(struct resp_ctx *c)
{
    struct sim_qp *qp = c->qp;
    /* packets already on their way after this one would each look like a
     * sequence error; the requester restarts from this PSN anyway */
    qp->nak_sent = true;
    qp->st.rnr_naks++;
    queue_ack(qp, SYN_RNR(qp->p->rnr_timer), c->psn);
    return RESP_DONE;
}

static enum resp_state nak_invalid(struct resp_ctx *c)
{
    c->qp->st.naks_other++;
    queue_ack(c->qp, SYN_NAK(RDMA_NAK_INVALID_REQUEST), c->qp->epsn);
    return RESP_DONE;
}

static enum resp_state nak_access(struct resp_ctx *c)
{
    c->qp->st.naks_other++;
    queue_ack(c->qp, SYN_NAK(RDMA_NAK_REMOTE_ACCESS_ERROR), c->qp->epsn);
    return RESP_DONE;
}

typedef enum resp_state (*resp_fn)(struct resp_ctx *);

static const resp_fn resp_handlers[] = {
    [RESP_CHECK_PSN] = check_psn,
    [RESP_CHECK_OP_SEQ] = check_op_seq,
    [RESP_CHECK_RESOURCE] = check_resource,
    [RESP_CHECK_RKEY] = check_rkey,
    [RESP_CHECK_LENGTH] = check_length,
    [RESP_EXECUTE] = execute,
    [RESP_COMPLETE] = complete,
    [RESP_ACKNOWLEDGE] = acknowledge,
    [RESP_DUPLICATE] = duplicate,
    [RESP_NAK_SEQ] = nak_seq,
    [RESP_RNR] = rnr,
    [RESP_NAK_INVALID] = nak_invalid,
    [RESP_NAK_ACCESS] = nak_access,
};

void sim__resp_receive(struct sim_qp *qp, const struct rdma_pkt *pkt)
{
    struct resp_ctx c = {.qp = qp, .pkt = pkt, .flags = pkt->op->flags, .psn = pkt->bth.psn};
    enum resp_state s = RESP_CHECK_PSN;
    while (s != RESP_DONE)
        s = resp_handlers[s](&c);
}

/* ---- what goes out ----------------------------------------------------------------- */
bool sim__resp_next(struct sim_qp *qp, struct rdma_pkt *pkt)
{
    if (qp->out_head == qp->out_tail)
        return false;
    struct sim_resp_item *it = &qp->out[qp->out_head & (qp->out_cap - 1)];
    const struct sim_opcodes *opc = &qp->nic->opc;
    bool done = true;
    uint32_t psn = it->psn;
    if (it->ready_at > sim__qp_now(qp)) {
        sim__nic_wake_at(qp->nic, qp, it->ready_at);
        return false;
    }
    switch (it->kind) {
    case RESP_ACK:
        rdma_pkt_set_opcode(pkt, opc->ack);
        pkt->aeth.syndrome = it->syndrome;
        /* DCTCP's congestion echo: BECN, which the ICRC does not cover */
        pkt->bth.becn = qp->ce_echo;
        qp->ce_echo = false;
        break;
    case RESP_ATOMIC:
        rdma_pkt_set_opcode(pkt, opc->atomic_ack);
        pkt->aeth.syndrome = SYN_ACK;
        pkt->atomicacketh.origremdt = it->orig;
        break;
    case RESP_READ: {
        uint32_t left = it->len - it->sent;
        uint32_t n = left < qp->mtu ? left : qp->mtu;
        if (!qp->nic->dma->fetch(qp->nic, qp, SIM_DMA_RESP, qp->out_head, it->sent, n))
            return false;
        done = left <= qp->mtu;
        rdma_pkt_set_opcode(pkt, opc->read_resp[sim__pos_of(it->sent == 0, done)]);
        pkt->aeth.syndrome = SYN_ACK;
        pkt->payload = n ? sim__nic_payload(qp->nic, it->mr, it->off + it->sent) : NULL;
        pkt->payload_len = n;
        psn = sim__psn_add(it->psn, it->sent / qp->mtu);
        it->sent += n;
        break;
    }
    }
    pkt->aeth.msn = it->msn;
    pkt->bth.p_key = 0xffff;
    pkt->bth.destqp = qp->dest_qpn;
    pkt->bth.psn = psn;
    qp->st.tx_packets++;
    if (done)
        qp->out_head++;
    return true;
}
