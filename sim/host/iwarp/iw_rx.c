/* iw_rx.c - what an iWARP queue pair does with the stream its TCP
 * endpoint hands up in order: the peer's MPA Request or Reply, then FPDUs
 * (rdma_fpdu_decode checks length, markers and CRC).
 *
 *   RDMA Write, Read Response   tagged: the STag and tagged offset must
 *                               name a valid region of this host that holds
 *                               the payload (RFC 5040 6.4), else Terminate
 *                               "Invalid STag" or "Base or bounds violation"
 *   Send, Send with Invalidate  untagged QN 0: placed at MO into the
 *                               receive at the head of the receive queue
 *                               (RFC 5041 5.3); none posted: Terminate (DDP,
 *                               untagged, "no buffer available"); the last
 *                               piece completes it and invalidates the STag
 *   Read Request                QN 1: the source region is checked as for a
 *                               Write, then answered (iw_tx.c)
 *   Terminate                   the peer found an error: this queue pair
 *                               fails (remote access error) and flushes
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/iwarp/iwarp.h"

/* RFC 5040 7.2: layer, error type, code */
#define T_RDMA 0
#define T_DDP 1
#define T_LLP 2
#define ET_PROTECTION 1
#define ET_UNTAGGED 2
#define C_INVALID_STAG 0
#define C_BOUNDS 1
#define C_NO_BUFFER 2
#define C_TOO_LONG 5
#define C_CRC 2

/* The region an STag names, or why not (Terminate code). */
static struct sim_mr *region(struct sim_qp *qp, uint32_t stag, uint64_t to, uint64_t len, uint8_t *code)
{
    struct sim_host *h = sim__host_of(qp);
    struct sim_mr *mr = sim__mr_lookup(h, stag, to, len);
    uint32_t idx = (stag >> 8) - 1;
    if (!mr)
        *code = (stag >> 8) && idx < h->nmrs && h->mrs[idx].rkey == stag && h->mrs[idx].valid
                    ? C_BOUNDS
                    : C_INVALID_STAG;
    return mr;
}

static uint32_t mr_index(struct sim_qp *qp, const struct sim_mr *mr)
{
    return (uint32_t)(mr - sim__host_of(qp)->mrs);
}

/* The oldest READ of the send queue whose data has not all arrived. */
static void read_done(struct sim_qp *qp)
{
    struct sim_iw *iw = qp->iw;
    if ((int32_t)(iw->rd_wait - qp->sq_head) < 0)
        iw->rd_wait = qp->sq_head;
    for (; iw->rd_wait != qp->sq_next; iw->rd_wait++) {
        struct sim_wqe *w = sim__wqe(qp, iw->rd_wait);
        if (w->op == SIM_OP_READ && w->npkts) {
            w->npkts = 0; /* over iWARP: its Read Response data is all placed */
            iw->rd_wait++;
            break;
        }
    }
    sim__iw_acked(qp, iw->tcp.snd_una);
}

static void push_read(struct sim_qp *qp, const struct sim_mr *mr, const struct rdma_rdmap_rr *rr)
{
    struct sim_iw *iw = qp->iw;
    if (iw->read_tail - iw->read_head == iw->read_cap) {
        uint32_t cap = iw->read_cap ? 2 * iw->read_cap : 16;
        struct sim_iw_read *n = sim__xcalloc(cap, sizeof *n);
        for (uint32_t i = iw->read_head; i != iw->read_tail; i++)
            n[i & (cap - 1)] = iw->reads[i & (iw->read_cap - 1)];
        free(iw->reads);
        iw->reads = n;
        iw->read_cap = cap;
    }
    iw->reads[iw->read_tail++ & (iw->read_cap - 1)] = (struct sim_iw_read){
        .mr = mr_index(qp, mr),
        .off = rr->srcto - mr->va,
        .len = rr->rdmardsz,
        .sink_stag = rr->sinkstag,
        .sink_to = rr->sinkto,
    };
    qp->nic->dma->ahead(qp->nic, qp, SIM_DMA_RESP); /* the DMA path may start reading it */
    sim__tcp_kick(&iw->tcp);
}

static void untagged(struct sim_qp *qp, const struct rdma_iwarp_fpdu *f)
{
    struct sim_host *h = sim__host_of(qp);
    if (qp->rq_head == qp->rq_tail) {
        sim__iw_terminate(qp, T_DDP, ET_UNTAGGED, C_NO_BUFFER);
        return;
    }
    struct sim_recv *rv = &qp->rq[qp->rq_head & (qp->rq_cap - 1)];
    struct sim_mr *mr = &h->mrs[rv->mr];
    if ((uint64_t)f->ddp.mo + f->payload_len > mr->len) {
        sim__iw_terminate(qp, T_DDP, ET_UNTAGGED, C_TOO_LONG);
        return;
    }
    sim__nic_place(qp->nic, rv->mr, f->ddp.mo, f->payload, f->payload_len, f->ddp.last_flag);
    if (!f->ddp.last_flag)
        return;
    if (f->op->flags & RDMA_RDMAP_INVALIDATE) {
        uint32_t stag = f->rdmap.inval_stag, idx = (stag >> 8) - 1;
        if ((stag >> 8) && idx < h->nmrs && h->mrs[idx].rkey == stag)
            h->mrs[idx].valid = false;
    }
    qp->rq_head++;
    qp->nic->dma->recv_done(qp->nic, qp);
}

static void fpdu(struct sim_qp *qp, const struct rdma_iwarp_fpdu *f)
{
    uint8_t code = 0;
    struct sim_mr *mr;
    if (f->status != RDMA_OK) {
        sim__iw_terminate(qp, T_LLP, 0, C_CRC);
        return;
    }
    switch (f->rdmap.opcode) {
    case RDMA_RDMAP_WRITE:
    case RDMA_RDMAP_READ_RESPONSE:
        if (!(mr = region(qp, f->ddp.stag, f->ddp.tagged_offset, f->payload_len, &code))) {
            sim__iw_terminate(qp, T_RDMA, ET_PROTECTION, code);
            return;
        }
        sim__nic_place(qp->nic, mr_index(qp, mr), f->ddp.tagged_offset - mr->va, f->payload,
                       f->payload_len, f->ddp.last_flag);
        if (f->rdmap.opcode == RDMA_RDMAP_READ_RESPONSE && f->ddp.last_flag)
            read_done(qp);
        return;
    case RDMA_RDMAP_READ_REQUEST:
        if (!(mr = region(qp, f->rr.srcstag, f->rr.srcto, f->rr.rdmardsz, &code)))
            sim__iw_terminate(qp, T_RDMA, ET_PROTECTION, code);
        else
            push_read(qp, mr, &f->rr);
        return;
    case RDMA_RDMAP_TERMINATE:
        qp->iw->term_sent = true; /* the stream is over both ways */
        sim__iw_error(qp, f->term.term_etype == ET_PROTECTION ? SIM_MSG_REMOTE_ACCESS
                                                              : SIM_MSG_REMOTE_OPERATIONAL);
        return;
    default:
        untagged(qp, f);
        return;
    }
}

static void mpa(struct sim_qp *qp, const struct rdma_mpa_frame *m, uint32_t origin)
{
    struct sim_iw *iw = qp->iw;
    bool want = iw->tcp.active ? m->kind == RDMA_MPA_REPLY : m->kind == RDMA_MPA_REQUEST;
    if (!want || m->hdr.rej_flag) {
        sim__iw_error(qp, SIM_MSG_REMOTE_OPERATIONAL);
        return;
    }
    iw->rx_fr = (struct rdma_mpa_framing){.markers = iw->want_markers, .crc = true, .origin = origin};
    iw->tx_fr.markers = m->hdr.marker_flag; /* the peer's wish for what it receives */
    if (iw->rx_fr.markers && !iw->scratch)
        iw->scratch = sim__xmalloc(RDMA_MPA_MAX_FPDU);
    iw->rx_ready = true;
    if (iw->tcp.active) {
        iw->tx_ready = true;
        sim__iw_maybe_close(qp);
    } else {
        iw->mpa_tx_due = true;
    }
    sim__tcp_kick(&iw->tcp);
}

/* Take what whole PDUs p holds; returns the octets used. */
static uint32_t consume(struct sim_qp *qp, uint32_t seq, const uint8_t *p, uint32_t len)
{
    struct sim_iw *iw = qp->iw;
    uint32_t at = 0;
    while (at < len && !iw->term_sent && !iw->term_due) {
        size_t used = 0;
        if (!iw->rx_ready) {
            struct rdma_mpa_frame m;
            enum rdma_status st = rdma_mpa_frame_decode(p + at, len - at, &m, &used);
            if (st == RDMA_TRUNCATED)
                break;
            if (st != RDMA_OK) {
                sim__iw_error(qp, SIM_MSG_REMOTE_OPERATIONAL);
                return len;
            }
            mpa(qp, &m, seq + at + (uint32_t)used);
        } else {
            struct rdma_iwarp_fpdu f;
            enum rdma_status st =
                rdma_fpdu_decode(&iw->rx_fr, seq + at, p + at, len - at, iw->scratch, &f, &used);
            if (st == RDMA_TRUNCATED && (!used || used > len - at))
                break;
            fpdu(qp, &f);
        }
        at += (uint32_t)used;
    }
    return at;
}

/* Sockets: the stream's bytes into the expected messages' buffers, in
 * order. The application copies them out of the kernel on the core that
 * took the segment, after the kernel's work on it (and its ACK): the
 * next segment waits for the copy too, so that one receiving core
 * carries segment work and copy, as Cai et al. (SIGCOMM 2021) measure
 * it. */
static void receive(struct sim_qp *qp, const uint8_t *p, uint32_t len)
{
    struct sim_iw *iw = qp->iw;
    struct sim_host *h = sim__host_of(qp);
    sim_time_t now = sim__qp_now(qp);
    h->kernel_free = (h->kernel_free > now ? h->kernel_free : now) + sim__iw_copy_time(len, qp->p->cost.copy_rate);
    while (len && iw->in_next < iw->nin) {
        const struct sim_iw_in *m = &iw->in[iw->in_next];
        uint32_t n = m->len - iw->in_off < len ? m->len - iw->in_off : len;
        if (h->mrs[m->mr].bytes)
            memcpy(h->mrs[m->mr].bytes + m->off + iw->in_off, p, n);
        p += n;
        len -= n;
        iw->in_off += n;
        if (iw->in_off == m->len) {
            iw->in_next++;
            iw->in_off = 0;
        }
    }
}

void sim__iw_deliver(struct sim_qp *qp, uint32_t seq, const uint8_t *p, uint32_t len)
{
    struct sim_iw *iw = qp->iw;
    if (iw->sockets) {
        receive(qp, p, len);
        return;
    }
    if (!iw->acc_len) {
        uint32_t used = consume(qp, seq, p, len);
        p += used;
        len -= used;
        seq += used;
        iw->acc_seq = seq;
        if (!len)
            return;
    }
    if (iw->acc_len + len > iw->acc_cap) {
        iw->acc_cap = iw->acc_len + len > 2 * iw->acc_cap ? iw->acc_len + len : 2 * iw->acc_cap;
        iw->acc = sim__xrealloc(iw->acc, iw->acc_cap);
    }
    memcpy(iw->acc + iw->acc_len, p, len);
    iw->acc_len += len;
    uint32_t used = consume(qp, iw->acc_seq, iw->acc, iw->acc_len);
    memmove(iw->acc, iw->acc + used, iw->acc_len - used);
    iw->acc_len -= used;
    iw->acc_seq += used;
}
