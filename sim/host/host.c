/* host.c - a host: memory regions, the work its workload posts, and the
 * timers of its queue pairs. Work is posted by events at the times the
 * configuration gives, one pending event per kind, so a million messages
 * do not mean a million events waiting in the queue.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "host/collective.h"
#include "host/iwarp/iwarp.h"
#include "host/nic.h"

#define SQ_FIRST_RING 16 /* work requests; the ring doubles when full */

struct sim_mr *sim__mr_lookup(struct sim_host *h, uint32_t rkey, uint64_t va, uint64_t len)
{
    uint32_t idx = (rkey >> 8) - 1;
    if ((rkey >> 8) == 0 || idx >= h->nmrs)
        return NULL;
    struct sim_mr *mr = &h->mrs[idx];
    if (mr->rkey != rkey || !mr->valid || va < mr->va || len > mr->len || va - mr->va > mr->len - len)
        return NULL;
    return mr;
}

uint32_t sim__host_add_mr(struct sim_host *h, uint64_t len, bool bytes)
{
    SIM_GROW(h->mrs, h->capmrs, h->nmrs);
    uint32_t idx = (uint32_t)h->nmrs++;
    struct sim_mr *mr = &h->mrs[idx];
    /* the key byte varies with the index so keys are not consecutive */
    *mr = (struct sim_mr){
        .va = h->next_va,
        .len = len,
        .bytes = bytes ? sim__xcalloc(len ? len : 1, 1) : NULL,
        .rkey = (idx + 1) << 8 | (uint32_t)(sim__mix64(idx + h->host) & 0xff),
        .valid = true,
    };
    h->next_va += (len + 4095) & ~UINT64_C(4095);
    h->next_va += 4096; /* a guard page: a stray access hits no region */
    return idx;
}

/* ---- the instantaneous DMA path: every step is done when it is asked for --- */
static sim_time_t nic_now(const struct sim_nic *nic) { return sim_now(nic->host->node.comp.sim); }

static sim_time_t instant_post_send(struct sim_nic *nic, struct sim_qp *qp, const struct sim_wqe *w)
{
    (void)qp;
    (void)w;
    return nic_now(nic);
}

static void instant_qp_step(struct sim_nic *nic, struct sim_qp *qp)
{
    (void)nic;
    (void)qp;
}

static bool instant_fetch(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s,
                          uint32_t item, uint64_t off, uint32_t len)
{
    (void)nic;
    (void)qp;
    (void)s;
    (void)item;
    (void)off;
    (void)len;
    return true;
}

static void instant_stream(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s)
{
    (void)nic;
    (void)qp;
    (void)s;
}

static sim_time_t instant_write(struct sim_nic *nic, uint32_t mr, uint64_t off, uint32_t len,
                                bool last)
{
    (void)mr;
    (void)off;
    (void)len;
    (void)last;
    return nic_now(nic);
}

static sim_time_t instant_atomic(struct sim_nic *nic, uint32_t mr, uint64_t off)
{
    (void)mr;
    (void)off;
    return nic_now(nic);
}

static void instant_complete(struct sim_nic *nic, struct sim_qp *qp, uint32_t msg,
                             enum sim_msg_status st)
{
    (void)qp;
    sim__msg_done(nic->host->node.net, msg, st, nic_now(nic));
}

const struct sim_dma_ops sim__dma_instant = {
    .name = "instant",
    .post_send = instant_post_send,
    .post_recv = instant_qp_step,
    .fetch = instant_fetch,
    .restart = instant_stream,
    .ahead = instant_stream,
    .write = instant_write,
    .atomic = instant_atomic,
    .recv_done = instant_qp_step,
    .complete = instant_complete,
};

/* ---- posting work --------------------------------------------------------------- */
static struct sim_qp *qp_of(struct sim_host *h, uint32_t msg)
{
    struct sim_network *net = h->node.net;
    struct sim_conn *c = &net->conns[net->msgs[msg].conn];
    return c->qp[c->host[0] == h->node.index ? 0 : 1];
}

static void post_send(struct sim_host *h, uint32_t id)
{
    struct sim_network *net = h->node.net;
    const struct cfg_msg *m = &net->cfg->msgs[id];
    struct sim_msg *msg = &net->msgs[id];
    sim__coll_source(h, id);
    if (m->nvlink) {
        msg->posted = sim_now(h->node.comp.sim);
        sim__nvswitch_send(sim__nvswitch_of(net, m->src), id);
        return;
    }
    struct sim_qp *qp = qp_of(h, id);
    if (qp->sq_tail - qp->sq_head == qp->sq_cap) {
        uint32_t cap = qp->sq_cap * 2;
        struct sim_wqe *sq = sim__xcalloc(cap, sizeof *sq);
        for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++)
            sq[i & (cap - 1)] = *sim__wqe(qp, i);
        free(qp->sq);
        qp->sq = sq;
        qp->sq_cap = cap;
    }
    struct sim_wqe *w = sim__wqe(qp, qp->sq_tail++);
    uint32_t npkts = (uint32_t)((m->size + qp->mtu - 1) / qp->mtu);
    *w = (struct sim_wqe){
        .msg = id,
        .op = m->op,
        .len = (uint32_t)m->size,
        .lmr = msg->lmr,
        .rva = msg->rva,
        .rkey = msg->rkey,
        .imm = m->imm,
        .inv_rkey = m->op == SIM_OP_SEND_INV ? msg->rkey : 0,
        .compare = m->compare,
        .swap_add = m->swap_add,
        .npkts = sim__op_is_atomic(m->op) || !npkts ? 1 : npkts,
        .ready_at = SIM_TIME_NEVER,
    };
    msg->posted = sim_now(h->node.comp.sim);
    if (qp->error) {
        sim__qp_completed(qp, w, SIM_MSG_FLUSHED);
    } else {
        w->ready_at = h->nic.dma->post_send(&h->nic, qp, w);
        sim__nic_wake(&h->nic, qp);
    }
}

static void post_recv(struct sim_host *h, uint32_t id)
{
    struct sim_qp *qp = qp_of(h, id);
    if (qp->rq_tail - qp->rq_head == qp->rq_cap) {
        uint32_t cap = qp->rq_cap ? qp->rq_cap * 2 : 16;
        struct sim_recv *rq = sim__xcalloc(cap, sizeof *rq);
        for (uint32_t i = qp->rq_head; i != qp->rq_tail; i++)
            rq[i & (cap - 1)] = qp->rq[i & (qp->rq_cap - 1)];
        free(qp->rq);
        qp->rq = rq;
        qp->rq_cap = cap;
    }
    qp->rq[qp->rq_tail++ & (qp->rq_cap - 1)] = (struct sim_recv){
        .mr = h->node.net->msgs[id].rmr,
        .msg = id,
    };
    h->nic.dma->post_recv(&h->nic, qp);
}

static void schedule_send(struct sim_host *h)
{
    if (h->next_send < h->nsends)
        sim_schedule(h->node.comp.sim, h->node.net->cfg->msgs[h->sends[h->next_send]].start,
                     &h->node.comp, SIM_HOST_POST_SEND, NULL);
}

static void schedule_recv(struct sim_host *h)
{
    if (h->next_recv < h->nrecvs)
        sim_schedule(h->node.comp.sim, h->recvs[h->next_recv].at, &h->node.comp,
                     SIM_HOST_POST_RECV, NULL);
}

static void host_init(struct sim_component *c)
{
    struct sim_host *h = (struct sim_host *)c;
    sim__nic_init_fabric(&h->nic);
    for (uint32_t i = 0; i < h->nic.nqps; i++)
        if (h->nic.qps[i]->iw)
            sim__iw_start(h->nic.qps[i]);
    schedule_recv(h);
    schedule_send(h);
}

static void host_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_host *h = (struct sim_host *)c;
    sim_time_t now = sim_now(c->sim);
    const struct sim_config *cfg = h->node.net->cfg;
    switch (sim_event_kind(ev)) {
    case SIM_HOST_POST_SEND:
        while (h->next_send < h->nsends && cfg->msgs[h->sends[h->next_send]].start <= now)
            post_send(h, h->sends[h->next_send++]);
        schedule_send(h);
        break;
    case SIM_HOST_POST_RECV:
        while (h->next_recv < h->nrecvs && h->recvs[h->next_recv].at <= now)
            post_recv(h, h->recvs[h->next_recv++].msg);
        schedule_recv(h);
        break;
    case SIM_HOST_POST_AFTER:
        post_send(h, (uint32_t)((struct sim_msg *)ev->ptr - h->node.net->msgs));
        break;
    case SIM_HOST_QP_TIMEOUT:
        sim__comp_timer(ev->ptr);
        break;
    case SIM_HOST_QP_RNR:
        if (now >= ((struct sim_qp *)ev->ptr)->rnr_until)
            sim__nic_wake(&h->nic, ev->ptr);
        break;
    case SIM_HOST_NIC_WAKE:
        sim__nic_wake_event(&h->nic);
        break;
    case SIM_HOST_NIC_RX:
        sim__rxbuf_done(&h->nic);
        break;
    case SIM_HOST_DCQCN:
        sim__dcqcn_timer(ev->ptr, now);
        break;
    case SIM_HOST_DMA:
        sim__nic_dma_event(&h->nic, ev->ptr);
        break;
    case SIM_HOST_QP_REORDER:
        sim__nic_reorder_event(&h->nic, ev->ptr);
        break;
    case SIM_HOST_TCP_RTO:
        sim__tcp_rto_event(ev->ptr);
        break;
    case SIM_HOST_TCP_DELACK:
        sim__tcp_delack_event(ev->ptr);
        break;
    case SIM_HOST_KERNEL_RX:
        sim__iw_kernel_event(&h->nic);
        break;
    case SIM_HOST_COPY:
        sim__pcie_copy_event(h, ev->ptr);
        break;
    case SIM_HOST_NVLINK:
        sim__pcie_nvlink_event(h);
        break;
    }
}

static void host_fini(struct sim_component *c)
{
    struct sim_host *h = (struct sim_host *)c;
    for (uint32_t i = 0; i < h->nic.nqps; i++) {
        if (h->nic.qps[i]->cc)
            free(h->nic.qps[i]->cc->sent);
        sim__hpcc_free(h->nic.qps[i]);
        free(h->nic.qps[i]->cc);
        sim__iw_free(h->nic.qps[i]);
        sim__qp_fini(h->nic.qps[i]);
    }
    free(h->nic.qps);
    free(h->nic.paced);
    while (h->kq_head) { /* frames the kernel had not taken when the run ended */
        struct sim_frame *f = h->kq_head;
        h->kq_head = f->next;
        sim__frame_free(&h->node.net->pool, f);
    }
    for (size_t i = 0; i < h->nmrs; i++)
        free(h->mrs[i].bytes);
    free(h->mrs);
    free(h->sends);
    free(h->recvs);
    free(h->node.ports);
    free(h);
}

static const char *const host_event_names[] = {
#define SIM__HOST_EV_NAME(name, str) str,
    SIM_HOST_EVENTS(SIM__HOST_EV_NAME)
#undef SIM__HOST_EV_NAME
};

static const struct sim_component_ops host_ops = {
    .type = "host",
    .event_names = host_event_names,
    .nevents = sizeof host_event_names / sizeof host_event_names[0],
    .init = host_init,
    .handle = host_handle,
    .fini = host_fini,
};

static const struct sim_node_ops host_node_ops = {
    .receive = sim__nic_receive,
    .tx_ready = sim__nic_tx_ready,
    .prefetch = sim__nic_prefetch,
};

struct sim_host *sim__host_create(struct sim_network *net, uint32_t index, uint32_t host)
{
    struct sim_host *h = sim__xcalloc(1, sizeof *h);
    h->node.nops = &host_node_ops;
    h->node.net = net;
    h->node.index = index;
    h->node.kind = CFG_HOST;
    h->host = host;
    h->next_va = UINT64_C(0x7f0000000000) + (uint64_t)host * UINT64_C(0x1000000000);
    struct sim_nic *nic = &h->nic;
    nic->host = h;
    uint8_t transport = net->cfg->nodes[index].nic.transport;
    nic->transport = net->cfg->ib.enable                     ? &sim__transport_ib
                     : transport == CFG_TRANSPORT_IWARP ? &sim__transport_iwarp
                     : transport == CFG_TRANSPORT_TCP   ? &sim__transport_tcp
                                                        : &sim__transport_rocev2;
    nic->dma = &sim__dma_instant;
    rdma_decode_config_init(&nic->dcfg);
    sim__opcodes_init(&nic->opc);
    sim__host_mac(host, nic->mac);
    sim__host_ip6(host, nic->ip6);
    nic->ip4 = sim__host_ip4(host);
    sim_component_add(net->sim, &h->node.comp, &host_ops, net->cfg->nodes[index].name);
    return h;
}

struct sim_qp *sim__host_add_qp(struct sim_host *h, uint32_t conn, uint32_t peer)
{
    struct sim_nic *nic = &h->nic;
    struct sim_qp *qp = sim__xcalloc(1, sizeof *qp);
    const struct cfg_node *cn = &h->node.net->cfg->nodes[h->node.index];
    nic->qps = sim__xrealloc(nic->qps, (nic->nqps + 1) * sizeof *nic->qps);
    nic->qps[nic->nqps] = qp;
    qp->nic = nic;
    qp->conn = conn;
    qp->qpn = SIM_QPN_BASE + nic->nqps++;
    qp->peer = peer;
    qp->p = &cn->nic;
    qp->data = h->node.net->cfg->payload_data;
    qp->retry_left = (uint8_t)cn->nic.retry_count;
    qp->rnr_left = (uint8_t)cn->nic.rnr_retry;
    qp->deadline = SIM_TIME_NEVER;
    sim_timer_init(&qp->timer);
    sim_timer_init(&qp->reorder);
    qp->wake_at = SIM_TIME_NEVER;
    qp->atomics = sim__xcalloc(cn->nic.max_rd_atomic, sizeof *qp->atomics);
    /* the send queue's first ring now, with the queue pair, rather than
     * when work is first posted: a large network's heap is put on huge
     * pages once set up (sim__huge_heap), and every packet sent reads it */
    qp->sq_cap = SQ_FIRST_RING;
    qp->sq = sim__xcalloc(qp->sq_cap, sizeof *qp->sq);
    return qp;
}

/* A work request is finished: it leaves the send queue now, and its
 * completion queue entry goes to the host through the DMA path. Work
 * requests complete in order, from the head of the queue. */
void sim__qp_completed(struct sim_qp *qp, struct sim_wqe *w, enum sim_msg_status st)
{
    bool counted = (int32_t)(qp->sq_next - qp->sq_head) > 0;
    if (counted && sim__wqe_is_rd_atomic(w) && qp->rd_outstanding)
        qp->rd_outstanding--;
    qp->sq_head++;
    if ((int32_t)(qp->sq_next - qp->sq_head) < 0) {
        qp->sq_next = qp->sq_head;
        qp->req_offset = 0;
    }
    if (st == SIM_MSG_OK) {
        qp->st.completed++;
        qp->st.bytes += w->len;
    }
    qp->nic->dma->complete(qp->nic, qp, w->msg, st);
}

void sim__msg_done(struct sim_network *net, uint32_t msg, enum sim_msg_status st, sim_time_t t)
{
    struct sim_msg *m = &net->msgs[msg];
    m->done = t;
    m->status = (uint8_t)st;
    sim__message_finished(net, msg);
}
