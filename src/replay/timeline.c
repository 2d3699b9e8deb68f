/* timeline.c - the --timeline CSV: one row per interval for every flow that
 * carried packets in it, and for every PFC priority paused or pausing in it.
 * Intervals without a row for a flow had no packets of that flow (goodput
 * zero). Rows are written as intervals close, so memory stays with the
 * flows, not the capture. An iWARP flow is one direction of a TCP
 * connection; its retransmissions are TCP's, and it has no CNPs or NAKs.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "replay.h"

void timeline_header(struct replay *r)
{
    fprintf(r->timeline, "start_ns,interval_ns,kind,id,conversation,label,packets,goodput_bytes,"
                         "goodput_bps,packets_per_s,cnp,ecn_ce,nak,retransmits,pause_frames,paused_ns\n");
}

void timeline_touch(struct replay *r, struct flow *f)
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

static void flow_row(struct replay *r, uint64_t lo, struct flow *f)
{
    uint64_t iv = r->opts->interval_ns;
    char src[ADDR_TEXT_MAX], dst[ADDR_TEXT_MAX], to[16] = "TCP";
    addr_format(&f->key, false, src, sizeof src);
    addr_format(&f->key, true, dst, sizeof dst);
    if (!f->iw)
        snprintf(to, sizeof to, "QP 0x%06" PRIx32, flow_key_qpn(&f->key));
    fprintf(r->timeline,
            "%" PRIu64 ",%" PRIu64 ",flow,%" PRIu32 ",%" PRIu32 ",%s > %s %s,%" PRIu64
            ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",0,0\n",
            lo, iv, f->id, conv_id(r, f), src, dst, to, f->tl_packets, f->tl_bytes,
            rate_per_s(f->tl_bytes * 8, iv), rate_per_s(f->tl_packets, iv), f->tl_cnp, f->tl_ce, f->tl_nak,
            f->tl_retrans);
    f->tl_packets = f->tl_bytes = f->tl_cnp = f->tl_ce = f->tl_nak = f->tl_retrans = 0;
    f->tl_active = false;
}

static void pfc_row(struct replay *r, uint64_t lo, struct pfc_prio *e, uint64_t paused)
{
    char prio[8];
    if (e->prio < 8)
        snprintf(prio, sizeof prio, "%u", e->prio);
    else
        snprintf(prio, sizeof prio, "all");
    fprintf(r->timeline,
            "%" PRIu64 ",%" PRIu64 ",pfc,%s,,PFC priority %s from %02x:%02x:%02x:%02x:%02x:%02x,0,0,0,0,0,0,0,0,%" PRIu64
            ",%" PRIu64 "\n",
            lo, r->opts->interval_ns, prio, prio, e->mac[0], e->mac[1], e->mac[2], e->mac[3], e->mac[4],
            e->mac[5], e->tl_frames, paused);
}

static void emit(struct replay *r, uint64_t idx)
{
    uint64_t iv = r->opts->interval_ns, lo = idx * iv;
    for (uint32_t i = 0; i < r->tl_n; i++)
        flow_row(r, lo, flow_at(&r->flows, r->tl_active[i]));
    r->tl_n = 0;
    for (uint32_t i = 0; i < r->pfc.n; i++) {
        struct pfc_prio *e = &r->pfc.v[i];
        uint64_t paused = pfc_interval_paused(e, lo, lo + iv);
        if (e->tl_frames || paused)
            pfc_row(r, lo, e, paused);
        e->tl_frames = 0;
        e->tl_paused_ns = 0;
    }
}

/* Is some priority paused during interval idx? Then the interval gets rows
 * even though no frame falls in it: a pause is what empties it. */
static bool paused_in(const struct replay *r, uint64_t idx)
{
    uint64_t lo = idx * r->opts->interval_ns;
    for (uint32_t i = 0; i < r->pfc.n; i++)
        if (r->pfc.v[i].paused && r->pfc.v[i].paused_until > lo)
            return true;
    return false;
}

/* Before a frame at r->t: close the intervals it has passed. Timestamps
 * that step back stay in the open interval. */
void timeline_advance(struct replay *r)
{
    if (!r->timeline)
        return;
    uint64_t idx = r->t / r->opts->interval_ns;
    if (idx <= r->tl_interval)
        return;
    emit(r, r->tl_interval);
    for (uint64_t i = r->tl_interval + 1; i < idx && paused_in(r, i); i++)
        emit(r, i);
    r->tl_interval = idx;
}

void timeline_flush(struct replay *r)
{
    if (!r->timeline)
        return;
    emit(r, r->tl_interval);
    for (uint64_t i = r->tl_interval + 1; paused_in(r, i); i++) {
        r->tl_interval = i;
        emit(r, i);
    }
}
