/* iwarp.c - iWARP in the analysis: every TCP segment goes through the
 * codec's stream decoder (codec/tcp_stream.c: TCP reassembled per connection
 * and direction, the MPA startup, markers and CRC32c, RFC 5044), and the
 * FPDUs it hands out are DDP segments (RFC 5041) assembled into RDMAP
 * messages (RFC 5040, RFC 7306).
 *
 *   segment of an MPA connection -> the flow of its direction (created with
 *                                   the other one as its conversation)
 *   MPA Request/Reply            -> the connection's startup; a rejecting
 *                                   Reply is an anomaly
 *   FPDU with a bad CRC          -> anomaly, not delivered (the receiving
 *                                   RNIC drops it and terminates, RFC 5044 8)
 *   malformed FPDU, stream error -> bad frame
 *   FPDU                         -> a DDP segment of the message open on
 *                                   its STag (tagged) or queue (untagged)
 *
 *   RDMA Write, Send (with Invalidate, with SE), Immediate Data: complete
 *     with the segment carrying the L flag
 *   RDMA Read Request: waits in the requester's flow for the Read Response
 *     to its sink STag, which completes it with its last segment; responses
 *     come in the order of the requests (RFC 5040 5.5)
 *   Atomic Request: waits for the Atomic Response that names its request
 *     identifier (RFC 7306 5.2.2)
 *   Terminate: an anomaly with its layer, error type and code
 *
 * A PDU goes to the flow of the direction it travelled, which the stream
 * decoder names (pdu->ends): nearly always the direction of the frame being
 * fed, but the frame carrying an MPA Reply also releases what the other
 * side sent behind its Request.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Frame times kept for PDUs that began in an earlier frame than the one
 * completing them (an FPDU spans at most 66 KB, 46 full segments). */
#define IW_TIMES 16384u
/* The notes codec/tcp_stream.c gives a segment that is not simply next. */
#define NOTE_RETRANSMISSION "retransmission"
#define NOTE_PARTIAL "partial retransmission"
#define NOTE_CONFLICT "retransmission with different data"
#define NOTE_OUT_OF_ORDER "out of order: held"
#define NOTE_GAP "capture gap: octets missing"

enum { UNMATCHED_READ = 1, UNMATCHED_ATOMIC = 2 };

/* Where a PDU lies in the capture: the frame its first octet came in, and
 * the frame that completed it. */
struct at {
    uint64_t first, t_first, last, t_last;
};

void replay__iw_flow_free(struct rdma_replay_flow *f)
{
    free(f->iw_state);
    f->iw_state = NULL;
    f->iw = NULL;
}

static bool setup(struct rdma_replay *r)
{
    if (r->iwarp)
        return true;
    r->iwarp = rdma_iwarp_stream_new();
    r->iw_times = calloc(IW_TIMES, sizeof *r->iw_times);
    if (!r->iwarp || !r->iw_times) {
        r->oom = true;
        return false;
    }
    /* the stream decoder's share of the memory limit */
    struct rdma_iwarp_limits lim = {r->cfg.max_conns ? (size_t)r->cfg.max_conns : r->flows.max_flows / 2 + 1,
                                    r->cfg.max_memory / 4, r->cfg.idle_ns};
    rdma_iwarp_stream_set_limits(r->iwarp, &lim);
    return true;
}

static uint64_t frame_time(const struct rdma_replay *r, uint64_t frame)
{
    if (frame <= r->frame && r->frame - frame < IW_TIMES)
        return r->iw_times[frame & (IW_TIMES - 1)];
    return r->t;
}

static void anomaly(struct rdma_replay *r, unsigned kind, unsigned code, const struct rdma_replay_flow *f, uint64_t f0,
                    uint64_t f1, uint64_t value, const char *text)
{
    struct rdma_replay_event ev = {.frame = {f0, f1, 0}, .t = r->t, .value = value, .text = text};
    if (!replay__anomaly_add(&r->anomalies, kind, code, f ? (int32_t)(f->id - 1) : -1, 1, &ev))
        r->oom = true;
}

static void bad(struct rdma_replay *r, const struct rdma_replay_flow *f, enum rdma_status st, const char *reason,
                uint64_t frame)
{
    if (f)
        f->iw->malformed++;
    r->tot.bad_frames++;
    anomaly(r, RDMA_REPLAY_ANOM_BAD_FRAME, st, f, frame, r->frame, 0, reason);
}

/* ---- flows ------------------------------------------------------------ */

static struct rdma_replay_flow *tcp_flow(struct rdma_replay *r, const struct rdma_replay_key *k)
{
    bool created;
    struct rdma_replay_flow *f = replay__flow_get(&r->flows, k, &created);
    if (!f) {
        if (!r->flows.full)
            r->oom = true;
        return NULL;
    }
    if (!created)
        return f;
    f->proto = RDMA_PROTO_IWARP;
    if (!(f->iw_state = calloc(1, sizeof *f->iw_state))) {
        r->oom = true;
        return NULL;
    }
    f->iw = &f->iw_state->st;
    struct rdma_replay_key back;
    replay__flow_key_reverse(k, 0, &back);
    struct rdma_replay_flow *b = replay__flow_find(&r->flows, &back);
    if (b)
        replay__flows_join(&r->flows, f, b, RDMA_REPLAY_PAIR_TCP);
    else
        f->pairing = RDMA_REPLAY_PAIR_TCP; /* the other side has sent nothing yet */
    return f;
}

/* The flow of the direction a segment travels, with the segment counted. */
static struct rdma_replay_flow *segment(struct rdma_replay *r, const struct rdma_pkt *pkt,
                                        const struct rdma_iwarp_seg *seg)
{
    struct rdma_replay_key k;
    replay__flow_key_from_tcp(pkt, &seg->hdr, &k);
    struct rdma_replay_flow *f = tcp_flow(r, &k);
    if (!f)
        return NULL;
    if (!f->packets) {
        f->first_t = r->t;
        f->first_frame = r->frame;
    }
    replay__flow_count_frame(r, f, pkt);
    const char *n = seg->note;
    if (!n)
        return f;
    if (!strcmp(n, NOTE_RETRANSMISSION) || !strcmp(n, NOTE_PARTIAL) || !strcmp(n, NOTE_CONFLICT)) {
        f->retransmits++;
        f->tl_retrans++;
        f->iw->tcp_retrans++;
        unsigned code = !strcmp(n, NOTE_PARTIAL) ? 1 : !strcmp(n, NOTE_CONFLICT) ? 2 : 0;
        anomaly(r, RDMA_REPLAY_ANOM_TCP_RETRANSMIT, code, f, r->frame, 0, seg->payload_len, NULL);
    } else if (!strcmp(n, NOTE_OUT_OF_ORDER)) {
        f->iw->tcp_ooo++;
        anomaly(r, RDMA_REPLAY_ANOM_TCP_OUT_OF_ORDER, 0, f, r->frame, 0, seg->payload_len, NULL);
    } else if (!strcmp(n, NOTE_GAP)) {
        f->iw->tcp_gaps++;
        anomaly(r, RDMA_REPLAY_ANOM_TCP_GAP, 0, f, r->frame, 0, 0, NULL);
    }
    return f;
}

/* The flow of the direction a PDU travelled; NULL when that direction has
 * not carried a frame of its own. */
static struct rdma_replay_flow *flow_of_pdu(struct rdma_replay *r, const struct rdma_iwarp_pdu *pdu)
{
    struct rdma_replay_key k;
    replay__flow_key_from_ends(&pdu->ends, &k);
    return replay__flow_find(&r->flows, &k);
}

static struct rdma_replay_flow *peer_of(struct rdma_replay *r, const struct rdma_replay_flow *f)
{
    return f->peer >= 0 ? flow_at(&r->flows, (uint32_t)f->peer) : NULL;
}

/* ---- messages ----------------------------------------------------------- */

static unsigned untagged_kind(uint8_t opcode)
{
    switch (opcode) {
    case RDMA_RDMAP_SEND_INVALIDATE: return RDMA_REPLAY_KIND_IW_SEND_INV;
    case RDMA_RDMAP_SEND_SE: return RDMA_REPLAY_KIND_IW_SEND_SE;
    case RDMA_RDMAP_SEND_SE_INVALIDATE: return RDMA_REPLAY_KIND_IW_SEND_SE_INV;
    case RDMA_RDMAP_IMMEDIATE: return RDMA_REPLAY_KIND_IW_IMMEDIATE;
    case RDMA_RDMAP_IMMEDIATE_SE: return RDMA_REPLAY_KIND_IW_IMMEDIATE_SE;
    case RDMA_RDMAP_READ_REQUEST: return RDMA_REPLAY_KIND_IW_READ;
    case RDMA_RDMAP_ATOMIC_REQUEST: return RDMA_REPLAY_KIND_IW_ATOMIC;
    default: return RDMA_REPLAY_KIND_IW_SEND;
    }
}

static void begin(struct iw_open *o, uint8_t opcode, unsigned kind, const struct at *at)
{
    memset(&o->m, 0, sizeof o->m);
    o->active = true;
    o->matched = false;
    o->opcode = opcode;
    o->m.kind = (uint8_t)kind;
    o->m.f_first = at->first;
    o->m.t_first = at->t_first;
}

static void request_segment(struct rdma_replay_msg *m, const struct at *at)
{
    m->req_packets++;
    m->f_req_last = at->last;
    m->t_req_last = at->t_last;
}

static void sent_segment(struct rdma_replay_flow *f, struct iw_open *o, uint32_t payload, const struct at *at)
{
    request_segment(&o->m, at);
    o->m.bytes += payload;
    f->goodput_bytes += payload;
    f->tl_bytes += payload;
}

/* A Write, Send or Immediate Data whose last segment arrived: there is no
 * acknowledgement to wait for above TCP. */
static void complete_sent(struct rdma_replay *r, struct rdma_replay_flow *f, struct iw_open *o)
{
    struct rdma_replay_msg *m = &o->m;
    o->active = false;
    m->req_done = true;
    m->f_done = m->f_req_last;
    m->t_done = m->t_req_last;
    replay__msg_finish(r, f, m, RDMA_REPLAY_MSG_OK);
}

/* The oldest unanswered Read of the requester's flow for a sink STag, and
 * whether an older unanswered Read stands before it. */
static struct rdma_replay_msg *find_read(struct rdma_replay_flow *req, uint32_t stag, bool *skipped)
{
    struct rdma_replay_chan *c = &req->ch;
    *skipped = false;
    for (uint32_t i = 0; i < c->n; i++) {
        struct rdma_replay_msg *m = replay__chan_msg(c, i);
        if (m->f_done || m->kind != RDMA_REPLAY_KIND_IW_READ)
            continue;
        if (m->sink_stag == stag)
            return m;
        *skipped = true;
    }
    return NULL;
}

static void finish_read(struct rdma_replay *r, struct rdma_replay_flow *req, struct rdma_replay_msg *m,
                        enum rdma_replay_msg_status st, const struct at *at)
{
    if (st == RDMA_REPLAY_MSG_OK) {
        m->f_done = at->last;
        m->t_done = at->t_last;
        m->has_latency = !m->partial;
    }
    replay__msg_finish(r, req, m, st);
    replay__chan_pop_done(r, req);
}

/* A message cut short by a segment that does not continue it, or by the
 * end of the capture. */
static void interrupted(struct rdma_replay *r, struct rdma_replay_flow *f, struct iw_open *o)
{
    o->active = false;
    if (o->opcode != RDMA_RDMAP_READ_RESPONSE) {
        replay__msg_finish(r, f, &o->m, RDMA_REPLAY_MSG_SEGMENTS_MISSING);
        return;
    }
    struct rdma_replay_flow *req = peer_of(r, f);
    bool skipped;
    struct rdma_replay_msg *m = o->matched && req ? find_read(req, o->stag, &skipped) : NULL;
    if (m)
        finish_read(r, req, m, RDMA_REPLAY_MSG_SEGMENTS_MISSING, NULL);
}

static void queue_request(struct rdma_replay *r, struct rdma_replay_flow *f, struct iw_open *o)
{
    o->active = false;
    o->m.req_done = true;
    f->ch.requests++;
    struct rdma_replay_msg *q = replay__chan_push(r, f);
    if (q)
        *q = o->m;
}

static void read_response(struct rdma_replay *r, struct rdma_replay_flow *f, struct iw_open *o,
                          const struct rdma_iwarp_fpdu *fp, bool first, const struct at *at)
{
    struct rdma_replay_flow *req = peer_of(r, f);
    bool skipped;
    struct rdma_replay_msg *m = req ? find_read(req, fp->ddp.stag, &skipped) : NULL;
    if (first) {
        o->matched = m != NULL;
        if (!m)
            anomaly(r, RDMA_REPLAY_ANOM_UNMATCHED, UNMATCHED_READ, f, at->first, at->last, 0, NULL);
        else if (skipped)
            anomaly(r, RDMA_REPLAY_ANOM_OUT_OF_ORDER, 1, f, at->first, m->f_first, 0, NULL);
    }
    f->goodput_bytes += fp->payload_len;
    f->tl_bytes += fp->payload_len;
    if (!o->matched || !m)
        return;
    m->resp_packets++;
    m->bytes += fp->payload_len;
    if (fp->ddp.last_flag) {
        o->active = false;
        finish_read(r, req, m, RDMA_REPLAY_MSG_OK, at);
    }
}

static void tagged(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_iwarp_fpdu *fp,
                   const struct at *at)
{
    struct iw_open *o = &f->iw_state->tagged;
    uint8_t op = fp->rdmap.opcode;
    bool cont = o->active && o->opcode == op && o->stag == fp->ddp.stag && o->next_off == fp->ddp.tagged_offset;
    if (o->active && !cont)
        interrupted(r, f, o);
    if (!cont) {
        begin(o, op, op == RDMA_RDMAP_WRITE ? RDMA_REPLAY_KIND_IW_WRITE : RDMA_REPLAY_KIND_IW_READ, at);
        o->stag = fp->ddp.stag;
        o->m.va = fp->ddp.tagged_offset;
        o->m.rkey = fp->ddp.stag;
        o->m.has_reth = true;
    }
    o->next_off = fp->ddp.tagged_offset + fp->payload_len;
    if (op == RDMA_RDMAP_READ_RESPONSE) {
        read_response(r, f, o, fp, !cont, at);
        if (fp->ddp.last_flag)
            o->active = false;
        return;
    }
    sent_segment(f, o, fp->payload_len, at);
    if (fp->ddp.last_flag)
        complete_sent(r, f, o);
}

static void atomic_response(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_iwarp_fpdu *fp,
                            const struct at *at)
{
    struct rdma_replay_flow *req = peer_of(r, f);
    uint32_t id = fp->atomic_resp.original_request_identifier;
    struct rdma_replay_chan *c = req ? &req->ch : NULL;
    for (uint32_t i = 0; c && i < c->n; i++) {
        struct rdma_replay_msg *m = replay__chan_msg(c, i);
        if (!m->f_done && m->kind == RDMA_REPLAY_KIND_IW_ATOMIC && m->atomic_id == id) {
            m->resp_packets++;
            finish_read(r, req, m, RDMA_REPLAY_MSG_OK, at);
            return;
        }
    }
    anomaly(r, RDMA_REPLAY_ANOM_UNMATCHED, UNMATCHED_ATOMIC, f, at->first, at->last, 0, NULL);
}

/* Layer, error type and code in one anomaly code: 4, 4 and 8 bits. */
static void terminate(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_iwarp_fpdu *fp,
                      const struct at *at)
{
    const struct rdma_rdmap_term *t = &fp->term;
    const char *what = NULL;
    if (fp->present & RDMA_IW_TERM_DDP)
        what = rdma_rdmap_opcodes[fp->term_rdmap.opcode & 0xf].name;
    f->iw->terminates++;
    anomaly(r, RDMA_REPLAY_ANOM_TERMINATE,
            (unsigned)(t->term_layer & 0xf) << 12 | (unsigned)(t->term_etype & 0xf) << 8 | t->term_errcode, f,
            at->first, at->last, 0, what);
}

static void untagged(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_iwarp_fpdu *fp,
                     const struct at *at)
{
    uint8_t op = fp->rdmap.opcode;
    if (op == RDMA_RDMAP_TERMINATE) {
        terminate(r, f, fp, at);
        return;
    }
    if (op == RDMA_RDMAP_ATOMIC_RESPONSE) {
        atomic_response(r, f, fp, at);
        return;
    }
    const struct rdma_ddp *d = &fp->ddp;
    struct iw_open *o = &f->iw_state->untagged[d->qn % IW_QUEUES];
    bool cont = o->active && o->opcode == op && o->m.qn == d->qn && o->m.msn == d->msn && o->next_off == d->mo;
    if (o->active && !cont)
        interrupted(r, f, o);
    if (!cont) {
        begin(o, op, untagged_kind(op), at);
        o->m.qn = d->qn;
        o->m.msn = d->msn;
        o->m.partial = d->mo != 0;
    }
    o->next_off = (uint64_t)d->mo + fp->payload_len;
    struct rdma_replay_msg *m = &o->m;
    if (op == RDMA_RDMAP_READ_REQUEST) {
        const struct rdma_rdmap_rr *rr = &fp->rr;
        request_segment(m, at);
        m->va = rr->srcto;
        m->rkey = rr->srcstag;
        m->dmalen = rr->rdmardsz;
        m->sink_stag = rr->sinkstag;
        m->sink_to = rr->sinkto;
        m->has_reth = true;
        if (d->last_flag)
            queue_request(r, f, o);
        return;
    }
    if (op == RDMA_RDMAP_ATOMIC_REQUEST) {
        const struct rdma_rdmap_atomic_add *a = &fp->atomic.add; /* the common fields lead both forms */
        request_segment(m, at);
        m->va = a->remote_tagged_offset;
        m->rkey = a->remote_stag;
        m->dmalen = 8;
        m->bytes = 8; /* the operand: an atomic carries no other payload */
        m->atomic_id = a->request_identifier;
        m->has_reth = true;
        if (d->last_flag)
            queue_request(r, f, o);
        return;
    }
    if (fp->op->flags & RDMA_RDMAP_INVALIDATE) {
        m->rkey = fp->rdmap.inval_stag;
        m->has_ieth = true;
    }
    sent_segment(f, o, fp->payload_len, at);
    if (d->last_flag)
        complete_sent(r, f, o);
}

/* ---- PDUs ----------------------------------------------------------------- */

static void mpa(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_mpa_frame *m)
{
    struct rdma_replay_iwarp *iw = f->iw;
    iw->mpa_kind = m->kind;
    iw->mpa_frame = r->frame;
    iw->mpa_t = r->t;
    iw->mpa_rev = m->hdr.rev;
    iw->mpa_markers = m->hdr.marker_flag;
    iw->mpa_crc = m->hdr.crc_flag;
    iw->mpa_reject = m->kind == RDMA_MPA_REPLY && m->hdr.rej_flag;
    if (iw->mpa_reject) {
        const struct rdma_replay_flow *p = peer_of(r, f);
        uint64_t req = p && p->iw->mpa_kind == RDMA_MPA_REQUEST ? p->iw->mpa_frame : 0;
        anomaly(r, RDMA_REPLAY_ANOM_MPA_REJECT, 0, f, r->frame, req, 0, NULL);
    }
}

/* An FPDU of direction f, which the frame of direction fed completed. The
 * other direction's FPDUs come out only when a handshake frame released
 * what it held: all their octets had come by that direction's last frame. */
static void fpdu(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_replay_flow *fed,
                 const struct rdma_iwarp_pdu *pdu)
{
    const struct rdma_iwarp_fpdu *fp = &pdu->fpdu;
    struct at at = {pdu->frame, frame_time(r, pdu->frame), r->frame, r->t};
    if (f != fed) {
        at.last = f->last_frame;
        at.t_last = f->last_t;
    }
    if (fp->status == RDMA_BAD_CHECKSUM) {
        f->iw->bad_crc++;
        anomaly(r, RDMA_REPLAY_ANOM_BAD_MPA_CRC, 0, f, at.first, at.last, fp->wire_len, fp->op ? fp->op->name : NULL);
        return;
    }
    if (fp->status != RDMA_OK) {
        bad(r, f, (enum rdma_status)fp->status, fp->reason, at.first);
        return;
    }
    f->iw->segments++;
    if (fp->ddp.tagged_flag)
        tagged(r, f, fp, &at);
    else
        untagged(r, f, fp, &at);
}

/* A PDU the frame of flow fed released. */
static void pdu_in(struct rdma_replay *r, struct rdma_replay_flow *fed, const struct rdma_iwarp_pdu *pdu)
{
    struct rdma_replay_flow *f = flow_of_pdu(r, pdu);
    if (!f)
        f = fed;
    switch (pdu->kind) {
    case RDMA_IWARP_PDU_MPA:
        mpa(r, f, &pdu->mpa);
        break;
    case RDMA_IWARP_PDU_FPDU:
        fpdu(r, f, fed, pdu);
        break;
    default:
        bad(r, f, (enum rdma_status)pdu->status, pdu->reason, pdu->frame);
        break;
    }
}

struct rdma_replay_flow *replay__iwarp_frame(struct rdma_replay *r, struct rdma_pkt *pkt, const uint8_t *data)
{
    if (!setup(r))
        return NULL;
    struct rdma_iwarp_seg seg;
    struct rdma_iwarp_pdu pdu;
    r->iw_times[r->frame & (IW_TIMES - 1)] = r->t;
    rdma_iwarp_stream_set_time(r->iwarp, r->t);
    rdma_iwarp_feed(r->iwarp, pkt, data, r->frame, &seg);
    struct rdma_replay_flow *f = NULL;
    /* A flow past the memory limit is not followed, but the decoder's PDUs
     * are still taken: they point into this frame. */
    bool unfollowed = false;
    if (pkt->proto == RDMA_PROTO_IWARP && !(f = segment(r, pkt, &seg))) {
        if (r->oom)
            return NULL;
        unfollowed = true;
    }
    while (rdma_iwarp_next(r->iwarp, &pdu)) {
        if (pdu.aged) { /* another connection left the decoder's table */
            bad(r, flow_of_pdu(r, &pdu), (enum rdma_status)pdu.status, pdu.reason, pdu.frame);
            continue;
        }
        /* the handshake that makes a connection MPA marks the frame now */
        if (pkt->proto != RDMA_PROTO_IWARP || unfollowed)
            continue; /* plain TCP: not ours to report */
        if (!f && !(f = segment(r, pkt, &seg))) {
            if (r->oom)
                return NULL;
            unfollowed = true;
            continue;
        }
        pdu_in(r, f, &pdu);
    }
    return f;
}

void replay__iwarp_finish(struct rdma_replay *r)
{
    if (!r->iwarp)
        return;
    struct rdma_iwarp_pdu pdu;
    while (rdma_iwarp_finish(r->iwarp, &pdu))
        if (pdu.status != RDMA_UNSUPPORTED) /* a stream that never showed MPA */
            bad(r, flow_of_pdu(r, &pdu), (enum rdma_status)pdu.status, pdu.reason, pdu.frame);
    for (uint32_t i = 0; i < r->flows.n; i++) {
        struct rdma_replay_flow *f = flow_at(&r->flows, i);
        if (!f->iw)
            continue;
        if (f->iw_state->tagged.active)
            interrupted(r, f, &f->iw_state->tagged);
        for (unsigned q = 0; q < IW_QUEUES; q++)
            if (f->iw_state->untagged[q].active)
                interrupted(r, f, &f->iw_state->untagged[q]);
    }
    for (uint32_t i = 0; i < r->flows.n; i++) {
        struct rdma_replay_flow *f = flow_at(&r->flows, i);
        if (!f->iw)
            continue;
        for (uint32_t j = 0; j < f->ch.n; j++) {
            struct rdma_replay_msg *m = replay__chan_msg(&f->ch, j);
            if (!m->f_done)
                replay__msg_finish(r, f, m, RDMA_REPLAY_MSG_NO_RESPONSE);
        }
        replay__chan_pop_done(r, f);
    }
    rdma_iwarp_stream_free(r->iwarp);
    r->iwarp = NULL;
}
