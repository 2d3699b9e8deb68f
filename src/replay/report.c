/* report.c - what both reports show, in the order they show it:
 * conversations (trouble first, then volume) and anomalies (most severe
 * first, then most frequent). */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static uint64_t kind_total(const struct rdma_replay_chan *c, uint64_t *failed)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < RDMA_REPLAY_KINDS; k++) {
        n += c->ks[k].count;
        *failed += c->ks[k].failed;
    }
    return n;
}

static int conv_order(const void *pa, const void *pb)
{
    const struct conv_view *a = pa, *b = pb;
    if (a->serious != b->serious)
        return a->serious > b->serious ? -1 : 1;
    if (a->goodput != b->goodput)
        return a->goodput > b->goodput ? -1 : 1;
    if (a->packets != b->packets)
        return a->packets > b->packets ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* What both reports read of the finished analysis. */
void report_load(struct report *r)
{
    r->tot = rdma_replay_totals(r->an);
    r->nflows = rdma_replay_flow_count(r->an);
    r->anom = rdma_replay_anomalies(r->an, &r->nanom);
    r->conns = rdma_replay_conns(r->an, &r->nconns);
    r->pfc = rdma_replay_pfc(r->an, &r->npfc);
}

struct conv_view *conv_views(const struct report *r, uint32_t *count)
{
    uint32_t nflows = r->nflows;
    uint32_t n = 0;
    struct conv_view *v = calloc(nflows ? nflows : 1, sizeof *v);
    uint32_t *slot = calloc(nflows ? nflows : 1, sizeof *slot);
    if (!v || !slot) {
        free(v);
        free(slot);
        *count = 0;
        return NULL;
    }
    for (uint32_t i = 0; i < nflows; i++) {
        const struct rdma_replay_flow *f = rdma_replay_flow(r->an, i);
        const struct rdma_replay_flow *p = f->peer >= 0 ? rdma_replay_flow(r->an, (uint32_t)f->peer) : NULL;
        if (p && p->id < f->id)
            continue;
        struct conv_view *c = &v[n];
        c->x = f;
        c->y = p;
        c->id = n + 1; /* conversations in order of first appearance, as rdma_replay_conv_id() numbers them */
        slot[i] = n + 1;
        if (p)
            slot[p->id - 1] = n + 1;
        n++;
        for (int s = 0; s < 2; s++) {
            const struct rdma_replay_flow *g = s ? p : f;
            if (!g)
                continue;
            c->packets += g->packets;
            c->goodput += g->goodput_bytes;
            c->messages += kind_total(&g->ch, &c->failed);
            if (g->packets && (!c->first_t_set || g->first_t < c->first_t)) {
                c->first_t = g->first_t;
                c->first_t_set = true;
            }
            if (g->last_t > c->last_t)
                c->last_t = g->last_t;
        }
    }
    for (uint32_t i = 0; i < r->nanom; i++) {
        const struct rdma_replay_anomaly *a = &r->anom[i];
        if (a->flow < 0 || !slot[a->flow])
            continue;
        struct conv_view *c = &v[slot[a->flow] - 1];
        c->anomalies += a->count;
        if (rdma_replay_anomaly_severity(a->kind) <= 2)
            c->serious += a->count;
    }
    free(slot);
    qsort(v, n, sizeof *v, conv_order);
    *count = n;
    return v;
}

/* The two ends of a conversation: x runs from end a to end b. */
void conv_ends(const struct conv_view *c, struct conv_end *a, struct conv_end *b)
{
    rdma_replay_addr_format(&c->x->key, false, a->addr, sizeof a->addr);
    rdma_replay_addr_format(&c->x->key, true, b->addr, sizeof b->addr);
    a->tcp = b->tcp = c->x->iw != NULL;
    if (a->tcp) {
        a->qpn_known = b->qpn_known = false;
        return;
    }
    b->qpn = rdma_replay_key_qpn(&c->x->key);
    b->qpn_known = true;
    a->qpn = c->y ? rdma_replay_key_qpn(&c->y->key) : c->x->src_qpn;
    a->qpn_known = c->y || c->x->src_qpn_known;
}

static int anom_order(const void *pa, const void *pb, void *ctx)
{
    const struct rdma_replay_anomaly *all = ctx;
    const struct rdma_replay_anomaly *a = &all[*(const uint32_t *)pa], *b = &all[*(const uint32_t *)pb];
    unsigned sa = rdma_replay_anomaly_severity(a->kind), sb = rdma_replay_anomaly_severity(b->kind);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->first_frame != b->first_frame)
        return a->first_frame < b->first_frame ? -1 : 1;
    return a->code < b->code ? -1 : a->code > b->code;
}

uint32_t *anomaly_order(const struct report *r)
{
    uint32_t n = r->nanom;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, anom_order, (void *)r->anom);
    return idx;
}

/* A Terminate's layer, error type and code (RFC 5040 7.2) by the names the
 * codec gives them: "DDP / Tagged Buffer Error / Invalid STag". */
static void terminate_text(unsigned packed, char *buf, size_t cap)
{
    unsigned layer = packed >> 12, etype = packed >> 8 & 0xf, code = packed & 0xff;
    const char *l = rdma_term_layer_name(layer), *t = rdma_term_etype_name(layer, etype),
               *e = rdma_term_error_name(layer, etype, code);
    char lb[24], tb[24], eb[24];
    if (!l)
        snprintf(lb, sizeof lb, "layer %u", layer);
    if (!t)
        snprintf(tb, sizeof tb, "type %u", etype);
    if (!e)
        snprintf(eb, sizeof eb, "code 0x%02x", code);
    snprintf(buf, cap, "%s / %s / %s", l ? l : lb, t ? t : tb, e ? e : eb);
}

/* What the code of an anomaly means, for its kind. */
void anomaly_code_text(const struct rdma_replay_anomaly *a, char *buf, size_t cap)
{
    const char *s;
    buf[0] = 0;
    switch (a->kind) {
    case RDMA_REPLAY_ANOM_NAK:
        s = rdma_nak_code_name(a->code);
        snprintf(buf, cap, "%s", s ? s : "reserved NAK code");
        break;
    case RDMA_REPLAY_ANOM_RNR_NAK:
        snprintf(buf, cap, "timer %u", a->code);
        break;
    case RDMA_REPLAY_ANOM_GO_BACK_N:
        snprintf(buf, cap, "%s", rdma_replay_gbn_trigger_name(a->code));
        break;
    case RDMA_REPLAY_ANOM_PSN_GAP:
        snprintf(buf, cap, "%s", a->code ? "READ responses" : "requests");
        break;
    case RDMA_REPLAY_ANOM_TERMINATE:
        terminate_text(a->code, buf, cap);
        break;
    case RDMA_REPLAY_ANOM_UNANSWERED:
    case RDMA_REPLAY_ANOM_INCOMPLETE:
        snprintf(buf, cap, "%s", rdma_replay_kind_name(a->code));
        break;
    case RDMA_REPLAY_ANOM_TCP_RETRANSMIT:
        snprintf(buf, cap, "%s", a->code == 2 ? "different data" : a->code ? "partly new data" : "");
        break;
    case RDMA_REPLAY_ANOM_UNMATCHED:
    case RDMA_REPLAY_ANOM_OUT_OF_ORDER:
        if (a->code)
            snprintf(buf, cap, "%s", a->code == 1 ? "iWARP Read Response" : "iWARP Atomic Response");
        break;
    case RDMA_REPLAY_ANOM_DUPLICATE:
        snprintf(buf, cap, "%s", a->code ? "answer to a retransmission" : "exact copy");
        break;
    case RDMA_REPLAY_ANOM_MISSING_ACK:
        snprintf(buf, cap, "%s", a->code ? "request packets missing" : "no response");
        break;
    case RDMA_REPLAY_ANOM_ONE_WAY:
        snprintf(buf, cap, "unacknowledged: no frame goes back");
        break;
    case RDMA_REPLAY_ANOM_BAD_FRAME:
    case RDMA_REPLAY_ANOM_BAD_ICRC:
        snprintf(buf, cap, "%s", rdma_status_name((enum rdma_status)a->code));
        break;
    case RDMA_REPLAY_ANOM_PFC_PAUSE:
        if (a->code < 8)
            snprintf(buf, cap, "priority %u", a->code);
        else
            snprintf(buf, cap, "802.3x PAUSE (all priorities)");
        break;
    case RDMA_REPLAY_ANOM_CM_REJ:
        snprintf(buf, cap, "reason %u", a->code);
        break;
    }
}
