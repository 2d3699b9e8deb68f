/* anomaly.c - anomalies counted per (kind, code, flow), each with the first
 * occurrences kept as examples, so memory follows the number of flows and
 * kinds, never the number of occurrences.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void replay__anomalies_free(struct anomalies *a)
{
    for (uint32_t i = 0; i < a->n; i++)
        for (uint32_t k = 0; k < a->v[i].nsamples; k++)
            free((char *)a->v[i].ev[k].text);
    free(a->v);
    free(a->slots);
    memset(a, 0, sizeof *a);
}

static uint32_t slot_hash(unsigned kind, unsigned code, int32_t flow)
{
    uint64_t h = ((uint64_t)kind << 48 | (uint64_t)code << 32 | (uint32_t)flow) * 0x9e3779b97f4a7c15u;
    return (uint32_t)(h >> 32);
}

static uint32_t *slot_of(const struct anomalies *a, unsigned kind, unsigned code, int32_t flow)
{
    uint32_t mask = a->nslots - 1;
    for (uint32_t i = slot_hash(kind, code, flow) & mask;; i = (i + 1) & mask) {
        uint32_t v = a->slots[i];
        if (!v)
            return &a->slots[i];
        const struct rdma_replay_anomaly *x = &a->v[v - 1];
        if (x->kind == kind && x->code == code && x->flow == flow)
            return &a->slots[i];
    }
}

static bool grow(struct anomalies *a)
{
    uint32_t cap = a->cap ? a->cap * 2 : 64;
    struct rdma_replay_anomaly *v = realloc(a->v, cap * sizeof *v);
    if (!v)
        return false;
    a->v = v;
    a->cap = cap;
    uint32_t *slots = calloc(cap * 2, sizeof *slots);
    if (!slots)
        return false;
    free(a->slots);
    a->slots = slots;
    a->nslots = cap * 2;
    for (uint32_t i = 0; i < a->n; i++)
        *slot_of(a, a->v[i].kind, a->v[i].code, a->v[i].flow) = i + 1;
    return true;
}

bool replay__anomaly_add(struct anomalies *a, unsigned kind, unsigned code, int32_t flow, uint64_t packets,
                 const struct rdma_replay_event *ev)
{
    if (a->n == a->cap && !grow(a))
        return false;
    uint32_t *slot = slot_of(a, kind, code, flow);
    struct rdma_replay_anomaly *x;
    if (*slot) {
        x = &a->v[*slot - 1];
    } else {
        x = &a->v[a->n];
        memset(x, 0, sizeof *x);
        x->kind = (uint8_t)kind;
        x->code = (uint16_t)code;
        x->flow = flow;
        x->first_frame = ev->frame[0];
        x->value_min = ev->value;
        *slot = ++a->n;
    }
    x->count++;
    x->packets += packets;
    x->last_frame = ev->frame[0];
    x->value_sum += ev->value;
    if (ev->value < x->value_min)
        x->value_min = ev->value;
    if (ev->value > x->value_max)
        x->value_max = ev->value;
    if (x->nsamples < RDMA_REPLAY_SAMPLES) {
        /* a reason may live only as long as the call that gave it (one
         * with numbers in it, written into the reassembler's buffer): the
         * example keeps a copy of its own */
        char *text = NULL;
        if (ev->text && !(text = strdup(ev->text)))
            return false;
        x->ev[x->nsamples] = *ev;
        x->ev[x->nsamples++].text = text;
    }
    a->per_kind[kind]++;
    return true;
}
