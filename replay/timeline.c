/* timeline.c - intervals of the timeline: the flows that carried packets in
 * each and the PFC priorities paused or pausing in it, told to the caller
 * (flow_interval, pfc_interval) as each interval closes, so that memory
 * stays with the flows, not the capture. Intervals a flow had no packets
 * in are not told (its goodput there is zero). An iWARP flow is one
 * direction of a TCP connection; its retransmissions are TCP's, and it has
 * no CNPs or NAKs.
 */
#include <stdlib.h>

#include "internal.h"

void replay__timeline_touch(struct rdma_replay *r, struct rdma_replay_flow *f)
{
    if (!r->timeline || f->tl_active)
        return;
    if (r->tl_n == r->tl_cap) {
        uint32_t cap = r->tl_cap ? r->tl_cap * 2 : 256;
        uint32_t *v = realloc(r->tl_active, cap * sizeof *v);
        if (!v) {
            r->oom = true;
            return;
        }
        r->tl_active = v;
        r->tl_cap = cap;
    }
    r->tl_active[r->tl_n++] = f->id - 1;
    f->tl_active = true;
}

static void emit(struct rdma_replay *r, uint64_t idx)
{
    uint64_t iv = r->cfg.interval_ns, lo = idx * iv;
    for (uint32_t i = 0; i < r->tl_n; i++) {
        struct rdma_replay_flow *f = flow_at(&r->flows, r->tl_active[i]);
        if (r->cb.flow_interval && !r->cb.flow_interval(r->cb.ctx, r, lo, f))
            r->oom = true;
        f->tl_packets = f->tl_bytes = f->tl_cnp = f->tl_ce = f->tl_nak = f->tl_retrans = 0;
        f->tl_active = false;
    }
    r->tl_n = 0;
    for (uint32_t i = 0; i < r->pfc.n; i++) {
        struct rdma_replay_pfc *e = &r->pfc.v[i];
        uint64_t paused = replay__pfc_interval_paused(e, lo, lo + iv);
        if ((e->tl_frames || paused) && r->cb.pfc_interval && !r->cb.pfc_interval(r->cb.ctx, r, lo, e, paused))
            r->oom = true;
        e->tl_frames = 0;
        e->tl_paused_ns = 0;
    }
}

/* Is some priority paused during interval idx? Then the interval is told
 * even though no frame falls in it: a pause is what empties it. */
static bool paused_in(const struct rdma_replay *r, uint64_t idx)
{
    uint64_t lo = idx * r->cfg.interval_ns;
    for (uint32_t i = 0; i < r->pfc.n; i++)
        if (r->pfc.v[i].paused && r->pfc.v[i].paused_until > lo)
            return true;
    return false;
}

/* Before a frame at r->t: close the intervals it has passed. Timestamps
 * that step back stay in the open interval. */
void replay__timeline_advance(struct rdma_replay *r)
{
    if (!r->timeline)
        return;
    uint64_t idx = r->t / r->cfg.interval_ns;
    if (idx <= r->tl_interval)
        return;
    emit(r, r->tl_interval);
    for (uint64_t i = r->tl_interval + 1; i < idx && !r->oom && paused_in(r, i); i++)
        emit(r, i);
    r->tl_interval = idx;
}

void replay__timeline_flush(struct rdma_replay *r)
{
    if (!r->timeline)
        return;
    emit(r, r->tl_interval);
    for (uint64_t i = r->tl_interval + 1; !r->oom && paused_in(r, i); i++) {
        r->tl_interval = i;
        emit(r, i);
    }
}
