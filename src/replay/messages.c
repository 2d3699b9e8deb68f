/* messages.c - the outstanding messages of a flow, kept oldest first in a
 * ring that grows with the send queue depth the capture shows (not with the
 * capture), and what happens when a message completes: kind statistics, the
 * slowest-message list, and the JSON message stream.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* A requester with this many messages unanswered has lost its peer or the
 * capture lost a direction; the oldest is then reported as unacknowledged
 * rather than letting memory follow the capture. */
#define MAX_OUTSTANDING 65536u

struct msg *chan_msg(struct chan *c, uint32_t i)
{
    return &c->ring[(c->head + i) & (c->cap - 1)];
}

void chan_free(struct chan *c)
{
    free(c->ring);
    c->ring = NULL;
    c->cap = c->n = c->head = 0;
}

static bool chan_grow(struct chan *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 8;
    struct msg *v = malloc(cap * sizeof *v);
    if (!v)
        return false;
    for (uint32_t i = 0; i < c->n; i++)
        v[i] = *chan_msg(c, i);
    free(c->ring);
    c->ring = v;
    c->cap = cap;
    c->head = 0;
    return true;
}

struct msg *chan_push(struct replay *r, struct flow *f)
{
    struct chan *c = &f->ch;
    if (c->n == MAX_OUTSTANDING) {
        msg_finish(r, f, chan_msg(c, 0), f->iw ? MSG_NO_RESPONSE : MSG_NO_ACK);
        chan_pop_done(r, f);
    }
    if (c->n == c->cap && !chan_grow(c)) {
        r->oom = true;
        return NULL;
    }
    struct msg *m = chan_msg(c, c->n++);
    memset(m, 0, sizeof *m);
    return m;
}

/* A message for a PSN inside the outstanding range that the capture never
 * showed (a hole after a PSN gap, filled by a retransmission): placed so
 * that the ring stays in PSN order. */
struct msg *chan_insert(struct replay *r, struct flow *f, uint32_t psn)
{
    struct chan *c = &f->ch;
    struct msg *m = chan_push(r, f);
    if (!m)
        return NULL;
    uint32_t i = c->n - 1;
    for (; i > 0 && psn_diff(chan_msg(c, i - 1)->psn, psn) > 0; i--) {
        struct msg t = *chan_msg(c, i - 1);
        *chan_msg(c, i - 1) = *chan_msg(c, i);
        *chan_msg(c, i) = t;
    }
    return chan_msg(c, i);
}

/* Drop finished messages from the head; messages may finish out of order
 * (an ACK completes a WRITE behind a READ still waiting for responses).
 * An empty ring starts again at its first slot: a QP with one message
 * outstanding at a time then keeps reusing one slot, which stays in the
 * cache, rather than walking the whole ring. */
void chan_pop_done(struct replay *r, struct flow *f)
{
    (void)r;
    struct chan *c = &f->ch;
    while (c->n && chan_msg(c, 0)->f_done) {
        c->head = (c->head + 1) & (c->cap - 1);
        c->n--;
    }
    if (!c->n)
        c->head = 0;
}

static void stats_add(struct kind_stats *s, const struct msg *m)
{
    s->count++;
    s->bytes += m->bytes;
    s->packets += m->req_packets + m->resp_packets;
    if (m->status != MSG_OK) {
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

/* Finish m with a status. For MSG_OK the caller has set t_done/f_done when
 * an acknowledgement completed it; otherwise f_done is set here so that the
 * message leaves the ring. */
void msg_finish(struct replay *r, struct flow *f, struct msg *m, enum msg_status st)
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
    r->messages_done++;
    if (st != MSG_OK)
        r->messages_failed++;
    if (st == MSG_NO_ACK || st == MSG_INCOMPLETE) {
        struct anom_event ev = {.frame = {m->f_first, m->f_req_last, 0},
                                .t = m->t_first,
                                .psn = m->psn,
                                .psn_end = (m->psn + (m->npsn ? m->npsn : 1) - 1) & PSN_MASK,
                                .value = m->req_packets,
                                .text = st == MSG_INCOMPLETE ? "request packets missing" : NULL};
        if (!anomaly_add(&r->anomalies, ANOM_MISSING_ACK, st == MSG_INCOMPLETE, (int32_t)(f->id - 1), m->req_packets, &ev))
            r->oom = true;
    } else if (st == MSG_NO_RESPONSE || st == MSG_SEGMENTS_MISSING) {
        /* iWARP: the code is the message kind; value the segments seen */
        struct anom_event ev = {.frame = {m->f_first, m->f_req_last, 0}, .t = m->t_first,
                                .value = m->req_packets + m->resp_packets};
        unsigned kind = st == MSG_NO_RESPONSE ? ANOM_UNANSWERED : ANOM_INCOMPLETE;
        if (!anomaly_add(&r->anomalies, kind, m->kind, (int32_t)(f->id - 1), ev.value, &ev))
            r->oom = true;
    }
    if (r->opts->json)
        report_json_message(r, f, m);
    else if (m->has_latency)
        slow_offer(r, m, f->id - 1);
}

/* Close the go-back-N episode in progress, recording it. */
void chan_close_gbn(struct replay *r, struct flow *f)
{
    struct chan *c = &f->ch;
    if (!c->in_gbn)
        return;
    c->in_gbn = false;
    struct anom_event ev = {.frame = {c->gbn_first, c->gbn_last, c->gbn_trigger_frame},
                            .t = c->gbn_t,
                            .psn = c->gbn_psn,
                            .psn_end = c->gbn_end,
                            .value = c->gbn_wait};
    if (!anomaly_add(&r->anomalies, ANOM_GO_BACK_N, c->gbn_trigger, (int32_t)(f->id - 1), c->gbn_packets, &ev))
        r->oom = true;
}

/* End of capture: what is still outstanding was never acknowledged (in the
 * capture), episodes in progress end. */
void replay_finish_flows(struct replay *r)
{
    for (uint32_t i = 0; i < r->flows.n; i++) {
        struct flow *f = flow_at(&r->flows, i);
        struct chan *c = &f->ch;
        chan_close_gbn(r, f);
        for (uint32_t j = 0; j < c->n; j++) {
            struct msg *m = chan_msg(c, j);
            if (!m->f_done)
                msg_finish(r, f, m, m->req_done ? MSG_NO_ACK : MSG_INCOMPLETE);
        }
        chan_pop_done(r, f);
    }
}

/* The outstanding message whose PSN range holds psn. Messages sit in PSN
 * order; a READ whose span is not known yet reaches up to the next message
 * (or, as the newest, to the largest span its length allows). */
struct msg *chan_find(struct chan *c, uint32_t psn)
{
    for (uint32_t i = 0; i < c->n; i++) {
        struct msg *m = chan_msg(c, i);
        int32_t d = psn_diff(psn, m->psn);
        if (d < 0)
            return NULL;
        uint32_t span = m->npsn ? m->npsn : 1;
        if (!m->span_known && m->kind / KIND_MODS == KIND_BASE_READ) {
            if (i + 1 < c->n)
                span = (uint32_t)psn_diff(chan_msg(c, i + 1)->psn, m->psn);
            else if (c->read_open)
                span = (uint32_t)psn_diff(c->read_hi, m->psn);
        }
        if ((uint32_t)d < span)
            return m;
    }
    return NULL;
}

void kind_stats_merge(struct kind_stats *into, const struct kind_stats *s)
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
