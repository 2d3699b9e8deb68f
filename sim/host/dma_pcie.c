/* dma_pcie.c - the NIC's DMA path over the host's PCIe tree (pcie/pcie.h): what
 * each step of RDMA costs in TLPs, and when the queue pairs may go on.
 *
 *   post send   CPU --MWr doorbell (8 bytes; the 64-byte WQE when inline)--> NIC BAR
 *               NIC --MRd WQE (64 bytes)--> memory --CplD--> NIC     (unless inline)
 *   transmit    NIC --MRd payload, MRRS requests--> memory or GPU --CplD--> NIC
 *   receive     NIC --MWr payload, MPS TLPs--> memory or GPU
 *   atomic      NIC --MRd 8 bytes, then MWr 8 bytes--> memory or GPU
 *   complete    NIC --MWr completion entry (64 bytes)--> memory [--MWr MSI-X (4 bytes)]
 *   post recv   CPU --MWr doorbell--> NIC BAR
 *   recv done   NIC --MRd receive WQE (64 bytes)--> memory, and a completion
 *               entry, when a SEND or WRITE with immediate consumes a
 *               receive: off the critical path
 *
 * The application runs on the NIC's socket: its queues and completion
 * entries live in that socket's memory. Work requests posted on a queue
 * pair at one instant share one doorbell (a list posted at once). The NIC
 * fetches WQEs up to `wqe_prefetch` ahead of the one it sends, and reads
 * payload ahead of transmission, up to `prefetch` bytes per queue pair and
 * stream, one packet's worth per read; a packet goes on the wire once its
 * bytes are in. The responder acknowledges once the NIC is done writing
 * what it acknowledges (the writes are posted: it does not wait for them
 * to land), and a completion is done when its entry (and interrupt) has
 * reached memory. A write into a socket's memory is there the root
 * complex's write latency after its last TLP arrived (root complex and
 * DRAM time, `pcie.root.write_latency`).
 *
 * A message a GPU posts itself (post: gpu, GPUDirect Async kernel-initiated,
 * as DOCA GPUNetIO does it): the GPU writes its WQE into its own memory and
 * rings the doorbell with a peer-to-peer write, the NIC fetches the WQE
 * from the GPU and writes the completion entry there, where the GPU polls.
 *
 * Bounce buffers: a GPU region used without GPUDirect is staged in the
 * NIC's socket's memory. Before a message is posted, the GPU's DMA engine
 * writes it there; after the last of a message has landed there, the GPU's
 * DMA engine reads it into the GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/iwarp/iwarp.h"
#include "host/nic.h"
#include "pcie/pcie.h"

#define DOORBELL_BYTES 8
#define WQE_BYTES 64
#define CQE_BYTES 64
#define MSIX_BYTES 4

struct pcie_land {
    uint32_t item;
    uint64_t start, end;
    sim_time_t at; /* when the read is in */
};

struct pcie_stream {
    uint32_t item;  /* reads issued up to (item, off) */
    uint64_t off;
    uint32_t citem; /* packets sent up to (citem, coff) */
    uint64_t coff;
    uint64_t ahead; /* bytes read or being read, not yet sent */
    struct pcie_land *land; /* reads not yet sent, oldest first */
    uint32_t head, tail, cap;
};

struct pcie_cqe {
    uint32_t msg;
    uint8_t st;
    sim_time_t at;
};

struct sim_pcie_qp {
    struct pcie_stream s[2];
    uint32_t wqe_next;    /* the next WQE to fetch */
    sim_time_t wqe_ready; /* of the last WQE fetched: they reach the NIC in order */
    sim_time_t rung, rung_at; /* the last doorbell: when rung, when it arrived */
    struct pcie_cqe *cq;  /* completion entries on their way, in order */
    uint32_t cq_head, cq_tail, cq_cap;
};

static sim_time_t now_of(const struct sim_nic *nic) { return sim_now(nic->host->node.comp.sim); }

static struct sim_pcie_qp *pq_of(struct sim_nic *nic, const struct sim_qp *qp)
{
    return &nic->pcie->qps[qp->qpn - SIM_QPN_BASE];
}

static struct sim_pcie_stamps *stamps(struct sim_nic *nic, uint32_t msg)
{
    return &nic->host->node.net->pcie->stamps[msg];
}

static const struct cfg_pcie_node *nic_node(const struct sim_nic *nic)
{
    const struct cfg_pcie *t = nic->pcie->cfg;
    return &t->nodes[t->nic];
}

static const struct pcie_route *home(const struct sim_nic *nic)
{
    return &nic->pcie->nic_to[nic_node(nic)->socket];
}

static struct pcie_credits *nic_credits(struct sim_nic *nic)
{
    return &nic->pcie->credits[nic->pcie->cfg->nic];
}

static const struct pcie_route *mr_route(const struct sim_nic *nic, uint32_t mr)
{
    return sim__pcie_nic_route(nic->pcie, nic->host->mrs[mr].place);
}

/* The GPU that posted message msg itself (GPUDirect Async), whose memory
 * then holds its WQE and completion entry; UINT32_MAX when the CPU did. */
static uint32_t posting_gpu(const struct sim_nic *nic, uint32_t msg)
{
    const struct sim_network *net = nic->host->node.net;
    if (!net->cfg->msgs[msg].gpu_post)
        return UINT32_MAX;
    return nic->host->mrs[net->msgs[msg].lmr].place & PCIE_PLACE_NODE;
}

/* A write from the NIC into its socket's memory: a completion entry and
 * its interrupt. Returns when the host can see it. */
static sim_time_t completion_entry(struct sim_nic *nic, sim_time_t t)
{
    const struct pcie_route *r = home(nic);
    sim_time_t now = now_of(nic);
    sim_time_t at = sim__pcie_write(&r->out, now, t, CQE_BYTES, r->mps, NULL) + r->write_latency;
    if (nic_node(nic)->msix) {
        /* the interrupt goes to the CPU's interrupt controller, not memory */
        sim_time_t irq = sim__pcie_write(&r->out, now, t, MSIX_BYTES, r->mps, NULL);
        if (irq > at)
            at = irq;
    }
    return at;
}

/* ---- streams: payload read ahead of transmission ------------------------------ */
struct item {
    uint32_t mr;
    uint64_t len;
    sim_time_t ready;
};

/* An iWARP queue pair's responses are the Read Responses it owes, in the
 * order of their Read Requests (host/iwarp/iwarp.h). */
static bool iw_item_at(const struct sim_qp *qp, uint32_t i, struct item *it)
{
    const struct sim_iw_read *rd;
    if (!sim__iw_read_at(qp, i, &rd))
        return false;
    *it = (struct item){rd->mr, rd->len, 0};
    return true;
}

static bool item_at(const struct sim_qp *qp, enum sim_dma_stream s, uint32_t i, struct item *it)
{
    if (s == SIM_DMA_REQ) {
        if ((int32_t)(i - qp->sq_tail) >= 0)
            return false;
        const struct sim_wqe *w = &qp->sq[i & (qp->sq_cap - 1)];
        *it = (struct item){w->lmr, sim__wqe_is_rd_atomic(w) ? 0 : w->len, w->ready_at};
        return true;
    }
    if (qp->iw)
        return iw_item_at(qp, i, it);
    if ((int32_t)(i - qp->out_tail) >= 0)
        return false;
    const struct sim_resp_item *r = &qp->out[i & (qp->out_cap - 1)];
    *it = (struct item){r->mr, r->kind == RESP_READ ? r->len : 0, 0};
    return true;
}

static int cmp_pos(uint32_t ia, uint64_t oa, uint32_t ib, uint64_t ob)
{
    int32_t d = (int32_t)(ia - ib);
    if (d)
        return d < 0 ? -1 : 1;
    return (oa > ob) - (oa < ob);
}

/* Past the ends of items already sent in full (and of empty ones). */
static void normalize(const struct sim_qp *qp, enum sim_dma_stream s, uint32_t *item, uint64_t *off)
{
    struct item it;
    while (item_at(qp, s, *item, &it) && *off >= it.len) {
        (*item)++;
        *off = 0;
    }
}

static void reset(struct pcie_stream *st, uint32_t item, uint64_t off)
{
    st->item = st->citem = item;
    st->off = st->coff = off;
    st->ahead = 0;
    st->head = st->tail = 0;
}

static void push_land(struct pcie_stream *st, struct pcie_land l)
{
    if (st->tail - st->head == st->cap) {
        uint32_t cap = st->cap ? 2 * st->cap : 16;
        struct pcie_land *land = sim__xmalloc(cap * sizeof *land);
        for (uint32_t i = st->head; i != st->tail; i++)
            land[i & (cap - 1)] = st->land[i & (st->cap - 1)];
        free(st->land);
        st->land = land;
        st->cap = cap;
    }
    st->land[st->tail++ & (st->cap - 1)] = l;
}

/* Issue reads, one packet's worth each, while the stream is less than the
 * prefetch window ahead, and at least up to (need_item, need_off). Returns
 * when the WQE it stopped at reaches the NIC, SIM_TIME_NEVER if it did not
 * stop at one. */
static sim_time_t top_up(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s,
                         uint32_t need_item, uint64_t need_off)
{
    struct pcie_stream *st = &pq_of(nic, qp)->s[s];
    uint64_t window = nic_node(nic)->prefetch;
    sim_time_t now = now_of(nic);
    struct item it;
    while ((st->ahead < window || cmp_pos(st->item, st->off, need_item, need_off) < 0) &&
           item_at(qp, s, st->item, &it)) {
        if (it.ready > now)
            return it.ready;
        if (st->off >= it.len) {
            st->item++;
            st->off = 0;
            continue;
        }
        uint64_t n = qp->mtu - st->off % qp->mtu;
        if (n > it.len - st->off)
            n = it.len - st->off;
        sim_time_t at = sim__pcie_read(mr_route(nic, it.mr), nic_credits(nic), now, now, n);
        push_land(st, (struct pcie_land){st->item, st->off, st->off + n, at});
        st->off += n;
        st->ahead += n;
    }
    return SIM_TIME_NEVER;
}

/* Read ahead, and come back when a WQE the stream stopped at is in. */
static void read_ahead(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s)
{
    struct pcie_stream *st = &pq_of(nic, qp)->s[s];
    sim_time_t wqe = top_up(nic, qp, s, st->item, st->off);
    if (wqe != SIM_TIME_NEVER)
        sim__nic_wake_at(nic, qp, wqe);
}

/* Fetch the WQEs within wqe_prefetch of the one being sent, each once its
 * doorbell is in. */
static void fetch_wqes(struct sim_nic *nic, struct sim_qp *qp)
{
    struct sim_pcie_qp *pq = pq_of(nic, qp);
    const struct cfg_pcie_node *n = nic_node(nic);
    sim_time_t now = now_of(nic);
    while (pq->wqe_next != qp->sq_tail &&
           (int32_t)(pq->wqe_next - qp->sq_next) < (int32_t)n->wqe_prefetch) {
        struct sim_wqe *w = &qp->sq[pq->wqe_next++ & (qp->sq_cap - 1)];
        struct sim_pcie_stamps *ts = stamps(nic, w->msg);
        uint32_t g = posting_gpu(nic, w->msg);
        const struct pcie_route *wqe_at = g == UINT32_MAX ? home(nic) : &nic->pcie->nic_to[g];
        sim_time_t at = n->inline_wqe ? ts->doorbell
                                      : sim__pcie_read(wqe_at, nic_credits(nic), now,
                                                       ts->doorbell > now ? ts->doorbell : now,
                                                       WQE_BYTES);
        if (at < pq->wqe_ready)
            at = pq->wqe_ready;
        pq->wqe_ready = at;
        w->ready_at = ts->wqe = at;
        sim__nic_wake_at(nic, qp, at);
    }
}

static bool pcie_fetch(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s, uint32_t item,
                       uint64_t off, uint32_t len)
{
    struct pcie_stream *st = &pq_of(nic, qp)->s[s];
    sim_time_t now = now_of(nic);
    uint32_t ci = st->citem, ai = item;
    uint64_t co = st->coff, ao = off;
    normalize(qp, s, &ci, &co);
    normalize(qp, s, &ai, &ao);
    if (ci != ai || co != ao) /* out of order: a go-back-N or a flush */
        reset(st, item, off);
    uint64_t end = off + len;
    if (s == SIM_DMA_REQ)
        fetch_wqes(nic, qp);
    sim_time_t wqe = top_up(nic, qp, s, item, end);
    if (wqe != SIM_TIME_NEVER)
        sim__nic_wake_at(nic, qp, wqe);
    sim_time_t in = now;
    for (uint32_t i = st->head; i != st->tail; i++) {
        const struct pcie_land *l = &st->land[i & (st->cap - 1)];
        if (cmp_pos(l->item, l->start, item, end) >= 0)
            break;
        if (l->at > in)
            in = l->at;
    }
    if (in > now) {
        sim__nic_wake_at(nic, qp, in);
        return false;
    }
    while (st->head != st->tail) {
        const struct pcie_land *l = &st->land[st->head & (st->cap - 1)];
        if (cmp_pos(l->item, l->end, item, end) > 0)
            break;
        st->ahead -= l->end - l->start;
        st->head++;
    }
    st->citem = item;
    st->coff = end;
    normalize(qp, s, &st->citem, &st->coff);
    if (s == SIM_DMA_REQ && off == 0) {
        struct sim_pcie_stamps *ts = stamps(nic, qp->sq[item & (qp->sq_cap - 1)].msg);
        if (ts->first_tx == SIM_TIME_NEVER)
            ts->first_tx = now;
    }
    read_ahead(nic, qp, s);
    return true;
}

static void pcie_restart(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s)
{
    struct pcie_stream *st = &pq_of(nic, qp)->s[s];
    reset(st, st->citem, st->coff);
}

static void pcie_ahead(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s)
{
    read_ahead(nic, qp, s);
}

/* ---- posting work ------------------------------------------------------------- */
/* The CPU writes `bytes` into the NIC's BAR at t: when they are in. Work
 * posted on a queue pair at one instant shares the doorbell. */
static sim_time_t doorbell(struct sim_nic *nic, struct sim_pcie_qp *pq, sim_time_t t, uint32_t bytes)
{
    sim_time_t now = now_of(nic);
    if (bytes == DOORBELL_BYTES && t == now && pq->rung == now)
        return pq->rung_at;
    sim_time_t at = sim__pcie_write(&nic->pcie->mmio, now, t, bytes, home(nic)->mps, NULL);
    if (t == now) {
        pq->rung = now;
        pq->rung_at = at;
    }
    return at;
}

static sim_time_t pcie_post_send(struct sim_nic *nic, struct sim_qp *qp, const struct sim_wqe *w)
{
    struct sim_pcie_host *ph = nic->pcie;
    struct sim_pcie_stamps *ts = stamps(nic, w->msg);
    const struct sim_mr *mr = &nic->host->mrs[w->lmr];
    sim_time_t now = now_of(nic), t = now;
    if ((mr->place & PCIE_PLACE_BOUNCE) && !sim__wqe_is_rd_atomic(w) && w->len) {
        /* the GPU's DMA engine copies the message into the bounce buffer */
        uint32_t g = mr->place & PCIE_PLACE_NODE;
        const struct pcie_route *r = &ph->gpu_mem[g];
        t = sim__pcie_write(&r->out, now, now + ph->cfg->nodes[g].copy_latency, w->len, r->mps, NULL) +
            r->write_latency;
        ts->copied = t;
    }
    uint32_t bytes = nic_node(nic)->inline_wqe ? WQE_BYTES : DOORBELL_BYTES;
    uint32_t g = posting_gpu(nic, w->msg);
    /* a GPU rings the doorbell with a peer-to-peer write of its own */
    ts->doorbell = g == UINT32_MAX ? doorbell(nic, pq_of(nic, qp), t, bytes)
                                   : sim__pcie_write(&ph->gpu_mmio[g], now, t, bytes,
                                                     home(nic)->mps, NULL);
    fetch_wqes(nic, qp);
    return w->ready_at;
}

static void pcie_post_recv(struct sim_nic *nic, struct sim_qp *qp)
{
    doorbell(nic, pq_of(nic, qp), now_of(nic), DOORBELL_BYTES);
}

sim_time_t sim__dma_pcie_completion_alone(const struct sim_nic *nic)
{
    const struct pcie_route *r = home(nic);
    return sim__pcie_tlp_alone(&r->out, CQE_BYTES) + r->write_latency;
}

/* ---- receiving ---------------------------------------------------------------- */
static sim_time_t pcie_write(struct sim_nic *nic, uint32_t mr, uint64_t off, uint32_t len, bool last)
{
    (void)off;
    const struct sim_mr *r = &nic->host->mrs[mr];
    const struct pcie_route *rt = mr_route(nic, mr);
    sim_time_t now = now_of(nic), left;
    sim_time_t landed = sim__pcie_write(&rt->out, now, now, len, rt->mps, &left) + rt->write_latency;
    if (last) {
        struct sim_pcie_stamps *ts = stamps(nic, r->msg);
        ts->arrived = now;
        ts->left = left;
        ts->delivered = landed;
        if (r->place & PCIE_PLACE_BOUNCE) {
            /* the GPU's DMA engine reads the message out of the bounce buffer */
            struct sim_pcie_host *ph = nic->pcie;
            uint32_t g = r->place & PCIE_PLACE_NODE;
            uint64_t size = nic->host->node.net->cfg->msgs[r->msg].size;
            ts->delivered = sim__pcie_read(&ph->gpu_mem[g], &ph->credits[g], now,
                                           landed + ph->cfg->nodes[g].copy_latency, size);
        }
    }
    return left;
}

static sim_time_t pcie_atomic(struct sim_nic *nic, uint32_t mr, uint64_t off)
{
    (void)off;
    const struct pcie_route *r = mr_route(nic, mr);
    sim_time_t now = now_of(nic);
    sim_time_t orig = sim__pcie_read(r, nic_credits(nic), now, now, 8);
    sim__pcie_write(&r->out, now, orig, 8, r->mps, NULL);
    return orig;
}

static void pcie_recv_done(struct sim_nic *nic, struct sim_qp *qp)
{
    (void)qp;
    sim_time_t now = now_of(nic);
    sim__pcie_read(home(nic), nic_credits(nic), now, now, WQE_BYTES);
    completion_entry(nic, now);
}

/* ---- completions ---------------------------------------------------------------- */
static void pcie_complete(struct sim_nic *nic, struct sim_qp *qp, uint32_t msg,
                          enum sim_msg_status st)
{
    struct sim_pcie_qp *pq = pq_of(nic, qp);
    sim_time_t now = now_of(nic);
    stamps(nic, msg)->acked = now;
    uint32_t g = posting_gpu(nic, msg);
    /* a posting GPU polls its completion queue in its own memory, no interrupt */
    const struct pcie_route *to_gpu = g == UINT32_MAX ? NULL : &nic->pcie->nic_to[g];
    sim_time_t at = to_gpu ? sim__pcie_write(&to_gpu->out, now, now, CQE_BYTES, to_gpu->mps, NULL) +
                                 to_gpu->write_latency
                           : completion_entry(nic, now);
    if (pq->cq_tail - pq->cq_head == pq->cq_cap) {
        uint32_t cap = pq->cq_cap ? 2 * pq->cq_cap : 8;
        struct pcie_cqe *cq = sim__xmalloc(cap * sizeof *cq);
        for (uint32_t i = pq->cq_head; i != pq->cq_tail; i++)
            cq[i & (cap - 1)] = pq->cq[i & (pq->cq_cap - 1)];
        free(pq->cq);
        pq->cq = cq;
        pq->cq_cap = cap;
    }
    pq->cq[pq->cq_tail++ & (pq->cq_cap - 1)] = (struct pcie_cqe){msg, (uint8_t)st, at};
    sim__nic_wake_at(nic, qp, at);
}

static void pcie_event(struct sim_nic *nic, struct sim_qp *qp)
{
    struct sim_pcie_qp *pq = pq_of(nic, qp);
    sim_time_t now = now_of(nic);
    while (pq->cq_head != pq->cq_tail) {
        const struct pcie_cqe *c = &pq->cq[pq->cq_head & (pq->cq_cap - 1)];
        if (c->at > now) {
            sim__nic_wake_at(nic, qp, c->at);
            break;
        }
        pq->cq_head++;
        sim__msg_done(nic->host->node.net, c->msg, (enum sim_msg_status)c->st, c->at);
    }
    fetch_wqes(nic, qp);
    read_ahead(nic, qp, SIM_DMA_REQ);
    read_ahead(nic, qp, SIM_DMA_RESP);
}

const struct sim_dma_ops sim__dma_pcie = {
    .name = "pcie",
    .post_send = pcie_post_send,
    .post_recv = pcie_post_recv,
    .fetch = pcie_fetch,
    .restart = pcie_restart,
    .ahead = pcie_ahead,
    .write = pcie_write,
    .atomic = pcie_atomic,
    .recv_done = pcie_recv_done,
    .complete = pcie_complete,
    .event = pcie_event,
};

/* ---- building ------------------------------------------------------------------ */
static int cmp_cxl_run(const void *a, const void *b)
{
    const struct sim_cxl_run *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->access != y->access)
        return x->access < y->access ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* CXL loads and stores, like copies placed before the run, in the order
 * they start. */
static void run_cxl(struct sim_network *net)
{
    const struct sim_pcie_config *pc = net->cfg->pcie;
    size_t n = 0;
    for (size_t i = 0; i < pc->ncxl; i++)
        n += pc->cxl[i].count;
    struct sim_cxl_run *runs = sim__xcalloc(n ? n : 1, sizeof *runs);
    n = 0;
    for (size_t i = 0; i < pc->ncxl; i++)
        for (uint64_t k = 0; k < pc->cxl[i].count; k++)
            runs[n++] = (struct sim_cxl_run){
                .access = (uint32_t)i,
                .k = k,
                .start = pc->cxl[i].start + k * pc->cxl[i].interval,
            };
    qsort(runs, n, sizeof *runs, cmp_cxl_run);
    for (size_t r = 0; r < n; r++) {
        const struct cfg_cxl_access *a = &pc->cxl[runs[r].access];
        struct sim_host *h = (struct sim_host *)net->nodes[a->host];
        runs[r].end = sim__cxl_access(h->nic.pcie, a->dev, a->store, runs[r].start, &runs[r].parts);
    }
    net->pcie->cxl = runs;
    net->pcie->ncxl = n;
}

void sim__pcie_create(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    if (!cfg->pcie || !cfg->pcie->present || !cfg->pcie->model)
        return;
    net->pcie = sim__xcalloc(1, sizeof *net->pcie);
    net->pcie->stamps = sim__xmalloc((net->nmsgs ? net->nmsgs : 1) * sizeof *net->pcie->stamps);
    memset(net->pcie->stamps, 0xff, net->nmsgs * sizeof *net->pcie->stamps); /* SIM_TIME_NEVER */
    for (uint32_t h = 0; h < net->nhosts; h++) {
        uint32_t node = net->host_node[h];
        struct sim_host *host = (struct sim_host *)net->nodes[node];
        struct sim_nic *nic = &host->nic;
        nic->pcie = sim__pcie_host_new(sim__pcie_tree(cfg, node), net->sim, cfg->nodes[node].name);
        nic->pcie->nqps = nic->nqps;
        nic->pcie->qps = sim__xcalloc(nic->nqps ? nic->nqps : 1, sizeof *nic->pcie->qps);
        for (uint32_t q = 0; q < nic->nqps; q++)
            nic->pcie->qps[q].rung = SIM_TIME_NEVER;
        nic->dma = &sim__dma_pcie;
    }
    /* Copies over PCIe are placed on the links before the run, in the
     * order they start: messages' bursts fill the gaps they leave. NVLink
     * copies run as events, sharing the GPUs' NVLinks while they overlap:
     * each starts its GPU's copy_latency after it is asked for. */
    const struct sim_pcie_config *pc = cfg->pcie;
    net->pcie->copies = sim__xcalloc(pc->ncopies ? pc->ncopies : 1, sizeof *net->pcie->copies);
    size_t *order = sim__xcalloc(pc->ncopies ? pc->ncopies : 1, sizeof *order);
    for (size_t i = 0; i < pc->ncopies; i++) {
        size_t j = i;
        for (; j && pc->copies[order[j - 1]].start > pc->copies[i].start; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (size_t k = 0; k < pc->ncopies; k++) {
        const struct cfg_pcie_copy *c = &pc->copies[order[k]];
        struct sim_host *h = (struct sim_host *)net->nodes[c->host];
        struct sim_pcie_copy_time *run = &net->pcie->copies[order[k]];
        run->start = c->start;
        if (c->via == PCIE_COPY_NVLINK) {
            net->transfers_left++;
            sim_schedule(net->sim, c->start + h->nic.pcie->cfg->nodes[c->from].copy_latency,
                         &h->node.comp, SIM_HOST_COPY, run);
        } else {
            run->end = sim__pcie_copy(h->nic.pcie, c->via, c->from, c->to, c->start, c->size);
        }
    }
    free(order);
    run_cxl(net);
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        const struct sim_msg *msg = &net->msgs[i];
        struct sim_host *src = (struct sim_host *)net->nodes[m->src];
        struct sim_host *dst = (struct sim_host *)net->nodes[m->dst];
        struct sim_mr *l = &src->mrs[msg->lmr], *r = &dst->mrs[msg->rmr];
        /* checked when the configuration was loaded */
        sim__pcie_place(cfg, src->nic.pcie->cfg, m->mem[0], &l->place);
        sim__pcie_place(cfg, dst->nic.pcie->cfg, m->mem[1], &r->place);
        l->msg = r->msg = (uint32_t)i;
    }
}

static void arm_nvlink(struct sim_host *h)
{
    struct sim_pcie_host *ph = h->nic.pcie;
    sim_time_t next = sim__nvlink_next(ph->nvlink);
    if (next != SIM_TIME_NEVER)
        sim_timer_arm(&ph->nvlink_end, h->node.comp.sim, next, &h->node.comp, SIM_HOST_NVLINK, NULL);
}

void sim__pcie_copy_event(struct sim_host *h, void *ptr)
{
    struct sim_network *net = h->node.net;
    uint32_t id = (uint32_t)((struct sim_pcie_copy_time *)ptr - net->pcie->copies);
    const struct cfg_pcie_copy *c = &net->cfg->pcie->copies[id];
    struct sim_pcie_host *ph = h->nic.pcie;
    sim__nvlink_start(ph->nvlink, sim_now(h->node.comp.sim), id, c->from, c->to, c->size);
    /* the shares changed, so the end armed before may now come later */
    sim_timer_cancel(&ph->nvlink_end);
    arm_nvlink(h);
}

void sim__pcie_nvlink_event(struct sim_host *h)
{
    struct sim_network *net = h->node.net;
    struct sim_pcie_host *ph = h->nic.pcie;
    sim_time_t now = sim_now(h->node.comp.sim);
    if (!sim_timer_fire(&ph->nvlink_end, now))
        return;
    uint32_t done[64];
    size_t n;
    while ((n = sim__nvlink_finish(ph->nvlink, now, done, sizeof done / sizeof done[0]))) {
        for (size_t i = 0; i < n; i++) {
            net->pcie->copies[done[i]].end = now;
            sim__transfer_finished(net);
        }
        if (n < sizeof done / sizeof done[0])
            break;
    }
    arm_nvlink(h);
}

void sim__pcie_destroy(struct sim_network *net)
{
    if (!net->pcie)
        return;
    for (uint32_t h = 0; h < net->nhosts; h++) {
        struct sim_nic *nic = &((struct sim_host *)net->nodes[net->host_node[h]])->nic;
        struct sim_pcie_host *ph = nic->pcie;
        for (uint32_t q = 0; q < ph->nqps; q++) {
            free(ph->qps[q].s[0].land);
            free(ph->qps[q].s[1].land);
            free(ph->qps[q].cq);
        }
        sim__pcie_host_free(ph);
        nic->pcie = NULL;
    }
    free(net->pcie->stamps);
    free(net->pcie->copies);
    free(net->pcie->cxl);
    free(net->pcie);
    net->pcie = NULL;
}
