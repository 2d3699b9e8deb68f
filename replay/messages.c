/* messages.c - the outstanding messages of a flow, kept oldest first in a
 * ring that grows with the send queue depth the capture shows (not with the
 * capture), and what happens when a message completes: kind statistics,
 * anomalies for those that failed, and the caller's message callback.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A requester with this many messages unanswered has lost its peer or the
 * capture lost a direction; the oldest is then reported as unacknowledged
 * rather than letting memory follow the capture. */
#define MAX_OUTSTANDING 65536u

struct rdma_replay_msg *replay__chan_msg(struct rdma_replay_chan *c, uint32_t i)
{
    return &c->ring[(c->head + i) & (c->cap - 1)];
}

void replay__chan_free(struct rdma_replay_chan *c)
{
    free(c->ring);
    c->ring = NULL;
    c->cap = c->n = c->head = 0;
}

static bool chan_grow(struct rdma_replay_chan *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 2;
    struct rdma_replay_msg *v = malloc(cap * sizeof *v);
    if (!v)
        return false;
    for (uint32_t i = 0; i < c->n; i++)
        v[i] = *replay__chan_msg(c, i);
    free(c->ring);
    c->ring = v;
    c->cap = cap;
    c->head = 0;
    return true;
}

/* How a message that was never acknowledged ends: if the capture has no
 * frame at all going back between the two addresses, it saw one direction
 * only and cannot tell (a trace of one switch port, where the
 * acknowledgements took another path); else the acknowledgement is
 * missing. */
static enum rdma_replay_msg_status unacknowledged(struct rdma_replay *r, const struct rdma_replay_flow *f,
                                                  const struct rdma_replay_msg *m)
{
    if (f->iw)
        return RDMA_REPLAY_MSG_NO_RESPONSE;
    if (!m->req_done)
        return RDMA_REPLAY_MSG_INCOMPLETE;
    struct rdma_replay_key back;
    replay__flow_key_reverse(&f->key, 0, &back);
    if (f->peer < 0 && !replay__flow_pair(&r->flows, &back))
        return RDMA_REPLAY_MSG_ONE_WAY;
    return RDMA_REPLAY_MSG_NO_ACK;
}

struct rdma_replay_msg *replay__chan_push(struct rdma_replay *r, struct rdma_replay_flow *f)
{
    struct rdma_replay_chan *c = &f->ch;
    if (c->n == MAX_OUTSTANDING) {
        struct rdma_replay_msg *oldest = replay__chan_msg(c, 0);
        replay__msg_finish(r, f, oldest, unacknowledged(r, f, oldest));
        replay__chan_pop_done(r, f);
    }
    if (c->n == c->cap && !chan_grow(c)) {
        r->oom = true;
        return NULL;
    }
    struct rdma_replay_msg *m = replay__chan_msg(c, c->n++);
    memset(m, 0, sizeof *m);
    return m;
}

/* A message for a PSN inside the outstanding range that the capture never
 * showed (a hole after a PSN gap, filled by a retransmission): placed so
 * that the ring stays in PSN order. */
struct rdma_replay_msg *replay__chan_insert(struct rdma_replay *r, struct rdma_replay_flow *f, uint32_t psn)
{
    struct rdma_replay_chan *c = &f->ch;
    struct rdma_replay_msg *m = replay__chan_push(r, f);
    if (!m)
        return NULL;
    uint32_t i = c->n - 1;
    for (; i > 0 && rdma_psn_diff(replay__chan_msg(c, i - 1)->psn, psn) > 0; i--) {
        struct rdma_replay_msg t = *replay__chan_msg(c, i - 1);
        *replay__chan_msg(c, i - 1) = *replay__chan_msg(c, i);
        *replay__chan_msg(c, i) = t;
    }
    return replay__chan_msg(c, i);
}

/* Drop finished messages from the head; messages may finish out of order
 * (an ACK completes a WRITE behind a READ still waiting for responses).
 * An empty ring starts again at its first slot: a QP with one message
 * outstanding at a time then keeps reusing one slot, which stays in the
 * cache, rather than walking the whole ring. */
void replay__chan_pop_done(struct rdma_replay *r, struct rdma_replay_flow *f)
{
    (void)r;
    struct rdma_replay_chan *c = &f->ch;
    while (c->n && replay__chan_msg(c, 0)->f_done) {
        c->head = (c->head + 1) & (c->cap - 1);
        c->n--;
    }
    if (!c->n)
        c->head = 0;
}

static void stats_add(struct rdma_replay_kind_stats *s, const struct rdma_replay_msg *m)
{
    s->count++;
    s->bytes += m->bytes;
    s->packets += m->req_packets + m->resp_packets;
    if (m->status == RDMA_REPLAY_MSG_ONE_WAY)
        return; /* not failed, and no latency to add */
    if (m->status != RDMA_REPLAY_MSG_OK) {
        s->failed++;
        return;
    }
    if (!m->has_latency)
        return;
    uint64_t lat = m->t_done - m->t_first;
    if (!s->lat_n || lat < s->lat_min)
        s->lat_min = lat;
    if (lat > s->lat_max)
        s->lat_max = lat;
    s->lat_n++;
    s->lat_sum += lat;
}

/* Finish m with a status. For RDMA_REPLAY_MSG_OK the caller has set t_done/f_done when
 * an acknowledgement completed it; otherwise f_done is set here so that the
 * message leaves the ring. */
void replay__msg_finish(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_msg *m,
                        enum rdma_replay_msg_status st)
{
    m->status = (uint8_t)st;
    if (!m->f_done) {
        m->f_done = r->frame ? r->frame : 1;
        m->t_done = r->t;
        m->has_latency = false;
    }
    if (m->has_latency && m->t_done < m->t_first) /* timestamps that step back */
        m->t_done = m->t_first;
    stats_add(&f->ch.ks[m->kind], m);
    r->tot.messages_done++;
    if (st != RDMA_REPLAY_MSG_OK && st != RDMA_REPLAY_MSG_ONE_WAY)
        r->tot.messages_failed++;
    if (st == RDMA_REPLAY_MSG_NO_ACK || st == RDMA_REPLAY_MSG_INCOMPLETE) {
        struct rdma_replay_event ev = {.frame = {m->f_first, m->f_req_last, 0},
                                       .t = m->t_first,
                                       .psn = m->psn,
                                       .psn_end = rdma_psn_add(m->psn, (m->npsn ? m->npsn : 1) - 1),
                                       .value = m->req_packets,
                                       .text = st == RDMA_REPLAY_MSG_INCOMPLETE ? "request packets missing" : NULL};
        if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_MISSING_ACK, st == RDMA_REPLAY_MSG_INCOMPLETE,
                                 (int32_t)(f->id - 1), m->req_packets, &ev))
            r->oom = true;
    } else if (st == RDMA_REPLAY_MSG_ONE_WAY) {
        struct rdma_replay_event ev = {.frame = {m->f_first, m->f_req_last, 0}, .t = m->t_first, .psn = m->psn,
                                       .value = m->req_packets};
        if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_ONE_WAY, 0, (int32_t)(f->id - 1),
                                 m->req_packets, &ev))
            r->oom = true;
    } else if (st == RDMA_REPLAY_MSG_NO_RESPONSE || st == RDMA_REPLAY_MSG_SEGMENTS_MISSING) {
        /* iWARP: the code is the message kind; value the segments seen */
        struct rdma_replay_event ev = {
            .frame = {m->f_first, m->f_req_last, 0}, .t = m->t_first, .value = m->req_packets + m->resp_packets};
        unsigned kind = st == RDMA_REPLAY_MSG_NO_RESPONSE ? RDMA_REPLAY_ANOM_UNANSWERED : RDMA_REPLAY_ANOM_INCOMPLETE;
        if (!replay__anomaly_add(&r->anomalies, kind, m->kind, (int32_t)(f->id - 1), ev.value, &ev))
            r->oom = true;
    }
    if (r->cb.message && !r->cb.message(r->cb.ctx, r, f, m))
        r->oom = true;
}

/* Close the go-back-N episode in progress, recording it. */
void replay__chan_close_gbn(struct rdma_replay *r, struct rdma_replay_flow *f)
{
    struct rdma_replay_chan *c = &f->ch;
    if (!c->in_gbn)
        return;
    c->in_gbn = false;
    struct rdma_replay_event ev = {.frame = {c->gbn_first, c->gbn_last, c->gbn_trigger_frame},
                                   .t = c->gbn_t,
                                   .psn = c->gbn_psn,
                                   .psn_end = c->gbn_end,
                                   .value = c->gbn_wait};
    if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_GO_BACK_N, c->gbn_trigger, (int32_t)(f->id - 1),
                             c->gbn_packets, &ev))
        r->oom = true;
}

/* End of capture: what is still outstanding was never acknowledged (in the
 * capture), episodes in progress end. */
void replay__finish_flows(struct rdma_replay *r)
{
    for (uint32_t i = 0; i < r->flows.n; i++) {
        struct rdma_replay_flow *f = flow_at(&r->flows, i);
        struct rdma_replay_chan *c = &f->ch;
        replay__chan_close_gbn(r, f);
        for (uint32_t j = 0; j < c->n; j++) {
            struct rdma_replay_msg *m = replay__chan_msg(c, j);
            if (!m->f_done)
                replay__msg_finish(r, f, m, unacknowledged(r, f, m));
        }
        replay__chan_pop_done(r, f);
    }
}

/* The outstanding message whose PSN range holds psn. Messages sit in PSN
 * order; a READ whose span is not known yet reaches up to the next message
 * (or, as the newest, to the largest span its length allows). */
struct rdma_replay_msg *replay__chan_find(struct rdma_replay_chan *c, uint32_t psn)
{
    for (uint32_t i = 0; i < c->n; i++) {
        struct rdma_replay_msg *m = replay__chan_msg(c, i);
        int32_t d = rdma_psn_diff(psn, m->psn);
        if (d < 0)
            return NULL;
        uint32_t span = m->npsn ? m->npsn : 1;
        if (!m->span_known && m->kind / RDMA_REPLAY_KIND_MODS == RDMA_REPLAY_KIND_BASE_READ) {
            if (i + 1 < c->n)
                span = (uint32_t)rdma_psn_diff(replay__chan_msg(c, i + 1)->psn, m->psn);
            else if (c->read_open)
                span = (uint32_t)rdma_psn_diff(c->read_hi, m->psn);
        }
        if ((uint32_t)d < span)
            return m;
    }
    return NULL;
}

void rdma_replay_kind_stats_merge(struct rdma_replay_kind_stats *into, const struct rdma_replay_kind_stats *s)
{
    if (s->lat_n && (!into->lat_n || s->lat_min < into->lat_min))
        into->lat_min = s->lat_min;
    if (s->lat_max > into->lat_max)
        into->lat_max = s->lat_max;
    into->count += s->count;
    into->failed += s->failed;
    into->bytes += s->bytes;
    into->packets += s->packets;
    into->lat_n += s->lat_n;
    into->lat_sum += s->lat_sum;
}
