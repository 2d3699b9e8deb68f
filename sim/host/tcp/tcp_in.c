/* tcp_in.c - a TCP endpoint's receive side and its processing of ACKs.
 *
 * Receive (RFC 9293 3.10.7.4, RFC 5681 4.2): in-order octets go up at
 * once; segments beyond a hole wait, sorted by sequence number, and are
 * reported in SACK blocks; an ACK goes out at once for a segment out of
 * order, one that fills a hole, and every second full segment, otherwise
 * within the delayed-ACK time. A DCTCP receiver (RFC 8257 3.2) echoes CE in
 * ECE and acknowledges at once when the CE state of arriving data changes.
 *
 * ACKs (RFC 6675 with SACK, RFC 6582 without it):
 *   - a cumulative ACK releases records, takes an RTT sample from the
 *     newest record never sent twice (Karn), restarts the RTO (RFC 6298
 *     5.3) and grows the window, or inside recovery deflates it;
 *   - SACK blocks mark records; a record is lost once more than
 *     (DupThresh - 1) * SMSS octets above it are SACKed (IsLost, RFC 6675
 *     4); without SACK, the third duplicate ACK marks the first record and
 *     each partial ACK the next (RFC 6582 3.2);
 *   - recovery starts when the first record is lost or on the third
 *     duplicate ACK, at most once per window (RecoveryPoint), and ends
 *     when the cumulative ACK reaches it.
 */
#include "engine/util.h"
#include "host/nic.h"
#include "host/tcp/tcp.h"

static struct sim_tcp_rec *rec_at(struct sim_tcp *t, uint32_t i)
{
    return &t->rec[i & (t->rec_cap - 1)];
}

uint32_t sim__tcp_pipe(const struct sim_tcp *t)
{
    uint64_t out = (uint64_t)sim__tcp_flight(t) + t->rexmit_b;
    uint64_t gone = (uint64_t)t->sacked_b + t->lost_b + t->reno_sacked_b;
    return out > gone ? (uint32_t)(out - gone) : 0;
}

/* ---- receive ---------------------------------------------------------------------- */
static void deliver(struct sim_tcp *t, uint32_t seq, const uint8_t *p, uint32_t len)
{
    if (sim__seq_lt(seq, t->rcv_nxt)) { /* the part already received is skipped */
        uint32_t skip = t->rcv_nxt - seq;
        if (skip >= len)
            return;
        seq += skip;
        p += skip;
        len -= skip;
    }
    t->rcv_nxt = seq + len;
    t->ulp->deliver(t->qp, seq, p, len);
}

/* The runs again from the held segments (a new hole, or one filled). */
static void runs_rebuild(struct sim_tcp *t)
{
    t->nruns = 0;
    for (const struct sim_frame *f = t->ooo; f; f = f->next) {
        uint32_t seq = f->aux, end = seq + f->out;
        if (t->nruns && t->runs[t->nruns - 1][1] == seq) {
            t->runs[t->nruns - 1][1] = end;
        } else if (t->nruns < SIM_TCP_RUNS) {
            t->runs[t->nruns][0] = seq;
            t->runs[t->nruns++][1] = end;
        } else {
            break; /* the highest runs go unreported */
        }
    }
}

/* A segment [seq, end) joined the held ones: most often it extends a run. */
static void runs_add(struct sim_tcp *t, uint32_t seq, uint32_t end)
{
    for (uint32_t i = 0; i < t->nruns; i++) {
        bool after = t->runs[i][1] == seq, before = t->runs[i][0] == end;
        bool joins = i + 1 < t->nruns && t->runs[i + 1][0] == end;
        if (after && !joins) {
            t->runs[i][1] = end;
            return;
        }
        if (before && (i == 0 || t->runs[i - 1][1] != seq)) {
            t->runs[i][0] = seq;
            return;
        }
    }
    runs_rebuild(t);
}

static void hold(struct sim_tcp *t, struct sim_frame *f, uint32_t seq, const uint8_t *p,
                 uint32_t len, bool *kept)
{
    struct sim_frame **at = &t->ooo;
    /* segments after a hole mostly arrive in order: try the end first */
    if (t->ooo_last && sim__seq_lt(t->ooo_last->aux, seq))
        at = &t->ooo_last->next;
    while (*at && sim__seq_lt((*at)->aux, seq))
        at = &(*at)->next;
    t->last_ooo_seq = seq;
    if (*at && (*at)->aux == seq)
        return; /* held already */
    f->aux = seq;
    f->in = (uint16_t)(p - f->data);
    f->out = (uint16_t)len;
    f->next = *at;
    *at = f;
    if (!f->next)
        t->ooo_last = f;
    t->ooo_bytes += len;
    *kept = true;
    runs_add(t, seq, seq + len);
}

static void drain(struct sim_tcp *t)
{
    struct sim_frame_pool *pool = &sim__net_of(t->qp)->pool;
    while (t->ooo && sim__seq_le(t->ooo->aux, t->rcv_nxt)) {
        struct sim_frame *f = t->ooo;
        t->ooo = f->next;
        if (!t->ooo)
            t->ooo_last = NULL;
        t->ooo_bytes -= f->out;
        deliver(t, f->aux, f->data + f->in, f->out);
        sim__frame_free(pool, f);
    }
    runs_rebuild(t);
}

void sim__tcp_data(struct sim_tcp *t, struct sim_frame *f, uint32_t seq, const uint8_t *p,
                   uint32_t len, bool ce, bool *kept)
{
    if (t->ecn_ok && ce != t->cc.ce_state) {
        /* RFC 8257 3.2: the CE state changed: acknowledge what came before
         * with the old state at once, then echo the new one */
        t->cc.ce_state = ce;
        t->ack_now = true;
    }
    t->ece_echo = t->ecn_ok && t->cc.ce_state;
    uint32_t end = seq + len;
    if (sim__seq_le(end, t->rcv_nxt)) {
        t->ack_now = true; /* a duplicate: tell the sender where we are */
        return;
    }
    uint32_t avail = t->rcv_buf > t->ooo_bytes ? t->rcv_buf - t->ooo_bytes : 0;
    if (sim__seq_lt(t->rcv_nxt + avail, end) && sim__seq_lt(t->rcv_nxt, seq)) {
        t->ack_now = true; /* beyond the window: dropped (RFC 9293 3.10.7.4) */
        return;
    }
    if (sim__seq_lt(t->rcv_nxt, seq)) {
        hold(t, f, seq, p, len, kept);
        t->ack_now = true; /* RFC 5681 4.2: out of order, at once */
        return;
    }
    bool hole = t->ooo != NULL;
    deliver(t, seq, p, len);
    if (hole) {
        drain(t);
        t->ack_now = true; /* it filled (part of) a hole */
        return;
    }
    /* RFC 5681 4.2: at least every second full-sized segment */
    if (++t->unacked_segs >= 2)
        t->ack_now = true;
    else
        sim__tcp_arm_delack(t);
}

/* ---- ACKs --------------------------------------------------------------------------- */
static void mark_lost(struct sim_tcp *t, uint32_t i)
{
    struct sim_tcp_rec *r = rec_at(t, i);
    if (r->flags & (SIM_TCP_SACKED | SIM_TCP_LOST))
        return;
    r->flags |= SIM_TCP_LOST;
    t->lost_b += r->len;
    if (r->flags & SIM_TCP_REXMIT) { /* the retransmission was lost too */
        r->flags &= (uint8_t)~SIM_TCP_REXMIT;
        t->rexmit_b -= r->len;
    }
    if ((int32_t)(i - t->lost_hint) < 0)
        t->lost_hint = i;
}

static void mark_sacked(struct sim_tcp *t, struct sim_tcp_rec *r)
{
    if (r->flags & SIM_TCP_SACKED)
        return;
    if (r->flags & SIM_TCP_LOST)
        t->lost_b -= r->len;
    if (r->flags & SIM_TCP_REXMIT)
        t->rexmit_b -= r->len;
    r->flags = (uint8_t)((r->flags & SIM_TCP_EVER_RETX) | SIM_TCP_SACKED);
    t->sacked_b += r->len;
}

/* The first record whose end lies beyond seq. */
static uint32_t rec_find(struct sim_tcp *t, uint32_t seq)
{
    uint32_t lo = t->rec_head, n = t->rec_tail - t->rec_head;
    while (n) {
        uint32_t half = n / 2;
        const struct sim_tcp_rec *r = rec_at(t, lo + half);
        if (sim__seq_le(r->seq + r->len, seq)) {
            lo += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
    return lo;
}

static bool apply_sack(struct sim_tcp *t, const struct rdma_tcp_options *o)
{
    bool news = false;
    for (unsigned b = 0; b < o->nsack; b++) {
        uint32_t l = o->sack[b][0], r = o->sack[b][1];
        if (!sim__seq_lt(l, r) || sim__seq_le(r, t->snd_una) || sim__seq_lt(t->snd_max, r))
            continue; /* below the cumulative ACK (a D-SACK) or bogus */
        for (uint32_t i = rec_find(t, l); i != t->rec_tail; i++) {
            struct sim_tcp_rec *x = rec_at(t, i);
            if (sim__seq_lt(r, x->seq + x->len))
                break;
            if (sim__seq_le(l, x->seq) && !(x->flags & SIM_TCP_SACKED)) {
                mark_sacked(t, x);
                news = true;
            }
        }
        if (sim__seq_lt(t->high_sacked, r))
            t->high_sacked = r;
    }
    return news;
}

/* IsLost (RFC 6675 4) for the records below the highest SACKed octet,
 * from the top down: below a lost record every record is lost or SACKed,
 * so the walk stops at the first one already marked. */
static void update_lost(struct sim_tcp *t)
{
    uint32_t above = 0, limit = (SIM_TCP_DUPTHRESH - 1) * t->mss;
    if (!t->sacked_b)
        return;
    for (uint32_t i = rec_find(t, t->high_sacked - 1) + 1; i-- != t->rec_head;) {
        struct sim_tcp_rec *r = rec_at(t, i);
        if (i == t->rec_tail)
            continue;
        if (r->flags & SIM_TCP_SACKED)
            above += r->len;
        else if (r->flags & SIM_TCP_LOST)
            break;
        else if (above > limit)
            mark_lost(t, i);
    }
}

static void release(struct sim_tcp *t, uint32_t ack, sim_time_t *sample_at)
{
    while (t->rec_head != t->rec_tail) {
        struct sim_tcp_rec *r = rec_at(t, t->rec_head);
        if (sim__seq_lt(ack, r->seq + r->len))
            break;
        if (r->flags & SIM_TCP_SACKED)
            t->sacked_b -= r->len;
        if (r->flags & SIM_TCP_LOST)
            t->lost_b -= r->len;
        if (r->flags & SIM_TCP_REXMIT)
            t->rexmit_b -= r->len;
        if (!(r->flags & SIM_TCP_EVER_RETX))
            *sample_at = r->sent_at;
        t->rec_head++;
    }
}

static void enter_recovery(struct sim_tcp *t)
{
    t->in_recovery = true;
    t->recover = t->snd_max;
    sim__tcp_cc_loss(t);
    mark_lost(t, t->rec_head);
    t->st.fast_retrans++;
    if (t->sack_ok)
        t->st.sack_recoveries++;
}

void sim__tcp_ack(struct sim_tcp *t, const struct rdma_tcp *th, const struct rdma_tcp_options *opt,
                  uint32_t len)
{
    uint32_t ack = th->ack_raw;
    if (sim__seq_lt(t->snd_max, ack) || sim__seq_lt(ack, t->snd_una))
        return; /* acknowledges nothing sent, or old */
    uint32_t wnd = (uint32_t)th->window_size_value << t->snd_wscale;
    bool same_wnd = wnd == t->snd_wnd;
    t->snd_wnd = wnd;
    bool ece = t->ecn_ok && (th->flags & RDMA_TCP_ECE);
    bool sacked = t->sack_ok && apply_sack(t, opt);
    if (sim__seq_lt(t->snd_una, ack)) {
        uint32_t acked = ack - t->snd_una;
        sim_time_t sample_at = SIM_TIME_NEVER;
        release(t, ack, &sample_at);
        t->snd_una = ack;
        t->dupacks = 0;
        t->backoff = 0;
        if (sample_at != SIM_TIME_NEVER)
            sim__tcp_rtt_sample(t, sim__tcp_now(t) - sample_at);
        if (t->reno_sacked_b) { /* beyond the hole, what the duplicates stood for */
            uint32_t beyond = acked > t->mss ? acked - t->mss : 0;
            t->reno_sacked_b = beyond >= t->reno_sacked_b ? 0 : t->reno_sacked_b - beyond;
        }
        if (t->p->cc == CFG_TCP_CC_DCTCP)
            sim__dctcp_tcp_ack(t, acked, ece);
        if (t->in_recovery && sim__seq_le(t->recover, ack)) {
            /* RFC 6582 3.2 step 3 (full acknowledgement), option 1:
             * min(ssthresh, max(FlightSize, SMSS) + SMSS) */
            t->in_recovery = false;
            uint32_t flight = sim__tcp_flight(t) > t->mss ? sim__tcp_flight(t) : t->mss;
            t->cc.cwnd = t->cc.ssthresh < flight + t->mss ? t->cc.ssthresh : flight + t->mss;
            t->reno_sacked_b = 0;
        } else if (t->in_recovery) {
            if (!t->sack_ok && t->rec_head != t->rec_tail)
                mark_lost(t, t->rec_head); /* RFC 6582 3.2 step 4: a partial ACK */
        } else {
            sim__tcp_cc_ack(t, acked);
        }
        /* RFC 6298 5.2, 5.3 */
        t->rto_at = SIM_TIME_NEVER;
        if (sim__tcp_flight(t))
            sim__tcp_arm_rto(t);
        if (t->fin_sent && ack == t->fin_seq + 1)
            sim__tcp_fin_acked(t);
        t->ulp->acked(t->qp, ack);
    } else if (!len && same_wnd && sim__tcp_flight(t) &&
               !(th->flags & (RDMA_TCP_SYN | RDMA_TCP_FIN))) { /* RFC 5681 2: a duplicate ACK */
        t->dupacks++;
        t->st.dupacks++;
        if (!t->sack_ok && t->reno_sacked_b + 2 * t->mss <= sim__tcp_flight(t))
            t->reno_sacked_b += t->mss; /* a segment left the network */
    }
    if (t->rec_head == t->rec_tail)
        return;
    if (sacked)
        update_lost(t);
    bool first_lost = rec_at(t, t->rec_head)->flags & SIM_TCP_LOST;
    if (!t->in_recovery && sim__seq_le(t->recover, t->snd_una) &&
        (t->dupacks >= SIM_TCP_DUPTHRESH || (t->sack_ok && first_lost)))
        enter_recovery(t);
}
