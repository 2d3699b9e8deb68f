/* iw_tx.c - the records an iWARP queue pair hands its TCP endpoint, one
 * FPDU each, sized so that the FPDU fills at most one segment (RFC 5044
 * 4.1: "FPDU alignment"), and the completions TCP's acknowledgements
 * bring.
 *
 * What goes next, in order: the MPA Request or Reply; a Terminate; Read
 * Response data for the oldest Read Request (responses before new
 * requests, as an RC responder answers first); the next piece of the send
 * queue's current work request:
 *   write     RDMA Write, tagged: sink STag and tagged offset (RFC 5040 4.1)
 *   read      RDMA Read Request on QN 1 (4.4), at most max_rd_atomic out
 *   send      Send on QN 0, MSN per message, MO per piece (RFC 5041 4.4)
 *   send_inv  Send with Invalidate, the STag to invalidate in the header
 *
 * An FPDU leaves only once its payload is in the NIC (the DMA seam: read
 * over PCIe when modelled). A Write or Send completes once TCP has every
 * octet of its last FPDU acknowledged (the peer's RNIC then has placed it:
 * it places in order); a Read once its last Read Response has been placed
 * (iw_rx.c). Work requests complete in order.
 *
 * Sockets (nic.transport: tcp): a record is bytes of the current message
 * alone, at most a segment's worth, and leaves once the kernel has copied
 * them from user memory: the host's CPU takes a message's send() system
 * call, then copies it at nic.host_cost.copy_rate, one message after the
 * other; a segment waits until its last byte is copied. A message
 * completes once TCP has its last byte acknowledged, as an iWARP Write.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/iwarp/iwarp.h"

#define MPA_FRAME_LEN RDMA_MPA_REQREP_LEN
#define MPA_LEN_FIELD 2

static struct sim_iw_rec *rec_at(struct sim_iw *iw, uint32_t tag)
{
    return &iw->recs[tag & (iw->rec_cap - 1)];
}

static uint32_t rec_push(struct sim_iw *iw, const struct sim_iw_rec *r)
{
    if (iw->rec_tail - iw->rec_head == iw->rec_cap) {
        uint32_t cap = iw->rec_cap ? 2 * iw->rec_cap : 64;
        struct sim_iw_rec *n = sim__xcalloc(cap, sizeof *n);
        for (uint32_t i = iw->rec_head; i != iw->rec_tail; i++)
            n[i & (cap - 1)] = *rec_at(iw, i);
        free(iw->recs);
        iw->recs = n;
        iw->rec_cap = cap;
    }
    *rec_at(iw, iw->rec_tail) = *r;
    return iw->rec_tail++;
}

static bool has_bytes(struct sim_qp *qp, uint32_t mr) { return sim__host_of(qp)->mrs[mr].bytes; }

static size_t encode(struct sim_qp *qp, const struct sim_iw_rec *r, uint32_t seq, uint8_t *out,
                     size_t cap)
{
    struct sim_iw *iw = qp->iw;
    size_t n = 0;
    if (r->kind == IW_STREAM) {
        if (r->len > cap)
            return 0;
        if (has_bytes(qp, r->mr))
            memcpy(out, sim__nic_payload(qp->nic, r->mr, r->off), r->len);
        else /* payload: none: the fill pattern, as often as it takes */
            for (uint32_t i = 0; i < r->len; i += SIM_MAX_PAYLOAD)
                memcpy(out + i, sim__nic_payload(qp->nic, r->mr, 0),
                       r->len - i < SIM_MAX_PAYLOAD ? r->len - i : SIM_MAX_PAYLOAD);
        return r->len;
    }
    if (r->kind != IW_FPDU) {
        struct rdma_mpa_frame m;
        memset(&m, 0, sizeof m);
        m.kind = r->kind == IW_MPA_REQUEST ? RDMA_MPA_REQUEST : RDMA_MPA_REPLY;
        m.hdr.marker_flag = iw->want_markers;
        m.hdr.crc_flag = 1;
        m.hdr.rev = 1;
        return rdma_mpa_frame_encode(&m, out, cap, &n) == RDMA_OK ? n : 0;
    }
    struct rdma_iwarp_fpdu f;
    rdma_fpdu_set_opcode(&f, r->opcode);
    f.ddp.last_flag = r->last;
    if (f.op->flags & RDMA_RDMAP_TAGGED) {
        f.ddp.stag = r->stag;
        f.ddp.tagged_offset = r->to;
    } else {
        f.ddp.qn = r->opcode == RDMA_RDMAP_READ_REQUEST ? SIM_IW_QN_READ
                   : r->opcode == RDMA_RDMAP_TERMINATE  ? SIM_IW_QN_TERM
                                                        : SIM_IW_QN_SEND;
        f.ddp.msn = r->msn;
        f.ddp.mo = r->mo;
    }
    if (f.op->flags & RDMA_RDMAP_INVALIDATE)
        f.rdmap.inval_stag = r->stag;
    if (f.op->flags & RDMA_RDMAP_HDR_RR)
        f.rr = r->rr;
    if (f.op->flags & RDMA_RDMAP_HDR_TERM) {
        f.term.term_layer = r->term_layer;
        f.term.term_etype = r->term_etype;
        f.term.term_errcode = r->term_code;
    }
    f.payload = r->len ? sim__nic_payload(qp->nic, r->mr, r->off) : NULL;
    f.payload_len = r->len;
    return rdma_fpdu_encode(&iw->tx_fr, seq, &f, out, cap, &n) == RDMA_OK ? n : 0;
}

/* DDP and RDMAP header octets of an opcode (RFC 5041 4.2-4.4, RFC 5040 4). */
static uint32_t hdr_len(uint8_t opcode)
{
    uint32_t flags = rdma_rdmap_opcodes[opcode].flags;
    uint32_t hdr = flags & RDMA_RDMAP_TAGGED ? RDMA_DDP_TAGGED_LEN : RDMA_DDP_UNTAGGED_LEN;
    if (flags & RDMA_RDMAP_HDR_RR)
        hdr += RDMA_RDMAP_RR_LEN;
    if (flags & RDMA_RDMAP_HDR_TERM)
        hdr += RDMA_RDMAP_TERM_LEN;
    return hdr;
}

/* The octets in the stream of an FPDU starting at seq with hdr octets of
 * headers and n of payload (RFC 5044 4): ULPDU_Length, the ULPDU, pad to a
 * multiple of four, the CRC, and a marker at every position
 * origin + 512 k it covers (4.3), counted until the count stands. */
static uint32_t fpdu_octets(const struct sim_iw *iw, uint32_t seq, uint32_t hdr, uint32_t n)
{
    uint32_t base = ((MPA_LEN_FIELD + hdr + n + 3) & ~3u) + RDMA_MPA_CRC_LEN;
    if (!iw->tx_fr.markers)
        return base;
    uint32_t first = (iw->tx_fr.origin - seq) % RDMA_MPA_MARKER_INTERVAL, m = 0;
    for (;;) {
        uint32_t w = base + RDMA_MPA_MARKER_LEN * m;
        uint32_t count = first < w ? (w - first - 1) / RDMA_MPA_MARKER_INTERVAL + 1 : 0;
        if (count == m)
            return w;
        m = count;
    }
}

/* n payload octets, or four fewer when the FPDU would end just where a
 * marker is due. RFC 5044 4.3 puts that marker before the next FPDU's
 * header, and so does rdmasim decode; tshark 4.0 counts it into the FPDU
 * that ends there (packet-iwarp-mpa.c, number_of_markers) and then loses
 * the stream, so a sender that wants its traces read avoids the case,
 * as it may: any FPDU size up to the MSS is aligned. */
static uint32_t fit(const struct sim_iw *iw, uint32_t seq, uint32_t hdr, uint32_t n)
{
    if (!iw->tx_fr.markers || n < 4)
        return n;
    uint32_t end = seq + fpdu_octets(iw, seq, hdr, n);
    return (end - iw->tx_fr.origin) % RDMA_MPA_MARKER_INTERVAL ? n : n - 4;
}

/* The octets of a record in the stream: a Request or Reply is its
 * 20-octet frame (RFC 5044 7.1), an FPDU as fpdu_octets counts. */
static uint32_t wire_len(struct sim_qp *qp, const struct sim_iw_rec *r, uint32_t seq)
{
    if (r->kind == IW_STREAM)
        return r->len;
    if (r->kind != IW_FPDU)
        return MPA_FRAME_LEN;
    return fpdu_octets(qp->iw, seq, hdr_len(r->opcode), r->len);
}

/* Payload octets an FPDU with hdr octets of DDP/RDMAP headers may carry in
 * max octets of stream: ULPDU_Length and CRC around it, no pad (a multiple
 * of four), and room for every marker it can meet. */
static uint32_t room(const struct sim_iw *iw, uint32_t max, uint32_t hdr, bool fill_only)
{
    uint32_t over = MPA_LEN_FIELD + hdr + RDMA_MPA_CRC_LEN;
    if (iw->tx_fr.markers)
        over += RDMA_MPA_MARKER_LEN * (max / RDMA_MPA_MARKER_INTERVAL + 1);
    uint32_t r = max > over ? (max - over) & ~3u : 0;
    /* payload: none reads the fill pattern, one largest payload long */
    if (fill_only && r > SIM_MAX_PAYLOAD)
        r = SIM_MAX_PAYLOAD;
    return r;
}

/* Sockets: when the first `bytes` octets of w are in kernel memory. The
 * copy starts with the message's first segment, after the system call
 * and the copies the host's CPU was already given. */
static sim_time_t copied_at(struct sim_qp *qp, struct sim_wqe *w, uint64_t bytes)
{
    struct sim_host *h = sim__host_of(qp);
    const struct cfg_host_cost *c = &qp->p->cost;
    if (!w->copying) {
        sim_time_t now = sim__qp_now(qp);
        w->copying = true;
        w->copy_at = (h->cpu_free > now ? h->cpu_free : now) + c->syscall;
        h->cpu_free = copied_at(qp, w, w->len);
    }
    return w->copy_at + sim__iw_copy_time(bytes, c->copy_rate);
}

/* The work request to send from, once it is in the NIC (doorbell and WQE
 * fetch: the NIC looks again then); NULL if none. */
static struct sim_wqe *next_wqe(struct sim_qp *qp)
{
    if (qp->error || qp->sq_next == qp->sq_tail)
        return NULL;
    struct sim_wqe *w = sim__wqe(qp, qp->sq_next);
    if (w->ready_at > sim__qp_now(qp)) {
        sim__nic_wake_at(qp->nic, qp, w->ready_at);
        return NULL;
    }
    return w;
}

/* Sockets: the next bytes of the current message, once copied. */
static bool stream(struct sim_qp *qp, uint32_t max, struct sim_iw_rec *r, uint32_t *done)
{
    struct sim_wqe *w = next_wqe(qp);
    if (!w)
        return false;
    uint64_t off = qp->req_offset;
    uint32_t n = (uint32_t)(w->len - off);
    if (n > max)
        n = max;
    if (!n && w->len)
        return false;
    sim_time_t t = copied_at(qp, w, off + n);
    if (t > sim__qp_now(qp)) {
        sim__nic_wake_at(qp->nic, qp, t);
        return false;
    }
    if (n && !qp->nic->dma->fetch(qp->nic, qp, SIM_DMA_REQ, qp->sq_next, off, n))
        return false;
    *r = (struct sim_iw_rec){.kind = IW_STREAM, .mr = w->lmr, .off = off, .len = n, .msg = w->msg,
                             .last = off + n == w->len};
    *done = n;
    return true;
}

/* The next piece of the current work request, or false. */
static bool request(struct sim_qp *qp, uint32_t seq, uint32_t max, struct sim_iw_rec *r,
                    uint32_t *done)
{
    struct sim_iw *iw = qp->iw;
    struct sim_host *h = sim__host_of(qp);
    struct sim_wqe *w = next_wqe(qp);
    if (!w)
        return false;
    uint64_t off = qp->req_offset;
    uint32_t left = (uint32_t)(w->len - off);
    r->kind = IW_FPDU;
    r->mr = w->lmr;
    r->off = off;
    r->msg = w->msg;
    switch (w->op) {
    case SIM_OP_READ:
        if (qp->rd_outstanding >= qp->p->max_rd_atomic || room(iw, max, RDMA_DDP_UNTAGGED_LEN + RDMA_RDMAP_RR_LEN, false) == 0)
            return false;
        r->opcode = RDMA_RDMAP_READ_REQUEST;
        r->last = true;
        r->mr = UINT32_MAX;
        r->msn = iw->msn_tx[SIM_IW_QN_READ]++;
        r->rr = (struct rdma_rdmap_rr){.sinkstag = h->mrs[w->lmr].rkey, .sinkto = h->mrs[w->lmr].va,
                                       .rdmardsz = w->len, .srcstag = w->rkey, .srcto = w->rva};
        qp->rd_outstanding++;
        *done = 0;
        return true;
    case SIM_OP_WRITE: {
        uint32_t n = room(iw, max, RDMA_DDP_TAGGED_LEN, !has_bytes(qp, w->lmr));
        if (!n && left)
            return false;
        r->opcode = RDMA_RDMAP_WRITE;
        r->len = fit(iw, seq, RDMA_DDP_TAGGED_LEN, left < n ? left : n);
        r->stag = w->rkey;
        r->to = w->rva + off;
        break;
    }
    default: { /* send, send_inv: the configuration allows no others */
        uint32_t n = room(iw, max, RDMA_DDP_UNTAGGED_LEN, !has_bytes(qp, w->lmr));
        if (!n && left)
            return false;
        bool inv = w->op == SIM_OP_SEND_INV;
        /* RFC 5040 4.3: every DDP segment of the message carries its opcode */
        if (sim__net_of(qp)->cfg->msgs[w->msg].solicited)
            r->opcode = inv ? RDMA_RDMAP_SEND_SE_INVALIDATE : RDMA_RDMAP_SEND_SE;
        else
            r->opcode = inv ? RDMA_RDMAP_SEND_INVALIDATE : RDMA_RDMAP_SEND;
        r->len = fit(iw, seq, RDMA_DDP_UNTAGGED_LEN, left < n ? left : n);
        r->stag = inv ? w->inv_rkey : 0;
        r->msn = iw->msn_tx[SIM_IW_QN_SEND];
        r->mo = (uint32_t)off;
        break;
    }
    }
    /* the payload must be in the NIC (read over PCIe when modelled; the
     * DMA path wakes the queue pair when it is) */
    if (r->len && !qp->nic->dma->fetch(qp->nic, qp, SIM_DMA_REQ, qp->sq_next, off, r->len))
        return false;
    r->last = off + r->len == w->len;
    if (r->last && w->op != SIM_OP_WRITE)
        iw->msn_tx[SIM_IW_QN_SEND]++;
    *done = r->len;
    return true;
}

/* The next piece of the oldest Read Request's answer, or false. */
static bool response(struct sim_qp *qp, uint32_t seq, uint32_t max, struct sim_iw_rec *r)
{
    struct sim_iw *iw = qp->iw;
    if (iw->read_head == iw->read_tail)
        return false;
    struct sim_iw_read *rd = &iw->reads[iw->read_head & (iw->read_cap - 1)];
    uint32_t left = rd->len - rd->sent, n = room(iw, max, RDMA_DDP_TAGGED_LEN, !has_bytes(qp, rd->mr));
    if (!n && left)
        return false;
    r->kind = IW_FPDU;
    r->opcode = RDMA_RDMAP_READ_RESPONSE;
    r->mr = rd->mr;
    r->off = rd->off + rd->sent;
    r->len = fit(iw, seq, RDMA_DDP_TAGGED_LEN, left < n ? left : n);
    if (r->len && !qp->nic->dma->fetch(qp->nic, qp, SIM_DMA_RESP, iw->read_head, rd->sent, r->len))
        return false;
    r->stag = rd->sink_stag;
    r->to = rd->sink_to + rd->sent;
    rd->sent += r->len;
    r->last = rd->sent == rd->len;
    if (r->last) {
        iw->read_head++;
        iw->reads_answered++;
    }
    return true;
}

uint32_t sim__iw_next(struct sim_qp *qp, uint32_t seq, uint32_t max, uint32_t *tag)
{
    struct sim_iw *iw = qp->iw;
    struct sim_iw_rec r;
    memset(&r, 0, sizeof r);
    r.msg = UINT32_MAX;
    uint32_t done = 0;
    bool req = false;
    if (iw->mpa_tx_due) {
        if (max < MPA_FRAME_LEN)
            return 0;
        r.kind = iw->tcp.active ? IW_MPA_REQUEST : IW_MPA_REPLY;
        r.mr = UINT32_MAX;
        iw->mpa_tx_due = false;
        iw->tx_fr.crc = true;
        iw->tx_fr.origin = seq + MPA_FRAME_LEN;
        if (!iw->tcp.active) {
            iw->tx_ready = true; /* the responder may follow its Reply with FPDUs */
            sim__iw_maybe_close(qp);
        }
    } else if (!iw->tx_ready || iw->term_sent) {
        return 0;
    } else if (iw->term_due) {
        r.kind = IW_FPDU;
        r.opcode = RDMA_RDMAP_TERMINATE;
        r.last = true;
        r.mr = UINT32_MAX;
        r.msn = iw->msn_tx[SIM_IW_QN_TERM]++;
        r.term_layer = iw->term_layer;
        r.term_etype = iw->term_etype;
        r.term_code = iw->term_code;
        iw->term_due = false;
        iw->term_sent = true;
    } else if (iw->sockets) {
        if (!stream(qp, max, &r, &done))
            return 0;
        req = true;
    } else if (!response(qp, seq, max, &r)) {
        if (!request(qp, seq, max, &r, &done))
            return 0;
        req = true;
    }
    r.wire = wire_len(qp, &r, seq);
    *tag = rec_push(iw, &r);
    if (req) {
        struct sim_wqe *w = sim__wqe(qp, qp->sq_next);
        qp->req_offset += done;
        if (r.last) {
            /* every FPDU of it is built: it completes once TCP has them */
            w->started = true;
            w->first_psn = seq + r.wire;
            qp->sq_next++;
            qp->req_offset = 0;
        }
    }
    return r.wire;
}

void sim__iw_fill(struct sim_qp *qp, uint32_t tag, uint32_t seq, uint8_t *out, uint32_t len)
{
    struct sim_iw *iw = qp->iw;
    struct sim_iw_rec *r = rec_at(iw, tag);
    size_t n = encode(qp, r, seq, out, len);
    assert(n == len); /* wire_len said so */
    (void)n;
    /* sent again: the same octets, built anew from memory */
    if (r->sent++ && r->msg != UINT32_MAX)
        sim__net_of(qp)->msgs[r->msg].retx++;
}

void sim__iw_acked(struct sim_qp *qp, uint32_t una)
{
    struct sim_iw *iw = qp->iw;
    /* one record here per TCP record: those TCP released are done */
    while (iw->rec_head != iw->rec_tail) {
        uint32_t n = iw->tcp.rec_tail - iw->tcp.rec_head; /* TCP's records still out */
        if (iw->rec_tail - iw->rec_head <= n)
            break;
        iw->rec_head++;
    }
    while (qp->sq_head != qp->sq_next) {
        struct sim_wqe *w = sim__wqe(qp, qp->sq_head);
        bool done = w->op == SIM_OP_READ ? w->npkts == 0 : w->started && sim__seq_le(w->first_psn, una);
        if (!done)
            break;
        iw->own_done++;
        sim__qp_completed(qp, w, SIM_MSG_OK);
    }
    sim__iw_maybe_close(qp);
    sim__tcp_kick(&iw->tcp);
}

void sim__iw_maybe_close(struct sim_qp *qp)
{
    struct sim_iw *iw = qp->iw;
    if (iw->closed || qp->error || !iw->tx_ready || !iw->rx_ready || iw->own_done != iw->expect_own ||
        iw->reads_answered != iw->expect_reads)
        return;
    iw->closed = true;
    sim__tcp_close(&iw->tcp);
}

void sim__iw_error(struct sim_qp *qp, enum sim_msg_status st)
{
    if (qp->error)
        return;
    qp->error = true;
    while (qp->sq_head != qp->sq_tail) {
        sim__qp_completed(qp, sim__wqe(qp, qp->sq_head), st);
        st = SIM_MSG_FLUSHED;
    }
}

void sim__iw_terminate(struct sim_qp *qp, uint8_t layer, uint8_t etype, uint8_t code)
{
    struct sim_iw *iw = qp->iw;
    if (iw->term_due || iw->term_sent)
        return;
    iw->term_due = true;
    iw->term_layer = layer;
    iw->term_etype = etype;
    iw->term_code = code;
    sim__iw_error(qp, SIM_MSG_FLUSHED);
    sim__tcp_kick(&iw->tcp);
}
