/* pfc.c - 802.1Qbb priority flow control and 802.3x PAUSE frames: how long
 * each priority of each sending port was paused.
 *
 * A pause time is in quanta of 512 bit times, so its duration depends on the
 * link speed (5.12 ns per quantum at 100 Gb/s), which the capture does not
 * record: the configuration's link_bps gives it. A new frame for a priority
 * restarts its timer (it replaces, not adds to, the time left) and a zero
 * time resumes at once (802.1Q-2018 36.1.3.2), so the time paused is the
 * union of the [t, t + duration) intervals cut short by later frames.
 * PAUSE frames stop every priority; they are kept as priority "all".
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PFC_PRIORITIES 8
#define QUANTUM_BITS 512u

void replay__pfc_free(struct pfc_table *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

static struct rdma_replay_pfc *entry(struct rdma_replay *r, const uint8_t mac[6], unsigned prio)
{
    struct pfc_table *t = &r->pfc;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->v[i].prio == prio && !memcmp(t->v[i].mac, mac, 6))
            return &t->v[i];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        struct rdma_replay_pfc *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    struct rdma_replay_pfc *e = &t->v[t->n++];
    memset(e, 0, sizeof *e);
    memcpy(e->mac, mac, 6);
    e->prio = (uint8_t)prio;
    e->first_frame = r->frame;
    return e;
}

uint64_t replay__pfc_quanta_ns(const struct rdma_replay *r, uint64_t quanta)
{
    return quanta * QUANTUM_BITS * 1000000000u / r->cfg.link_bps;
}

/* Part of [a, b) inside [lo, hi). */
static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
    uint64_t s = a > lo ? a : lo, e = b < hi ? b : hi;
    return e > s ? e - s : 0;
}

/* End the pause run at `end` (its timer ran out, or a frame cut it). */
static void run_end(struct rdma_replay *r, struct rdma_replay_pfc *e, uint64_t end)
{
    uint64_t len = end > e->run_start ? end - e->run_start : 0;
    e->paused_ns += len;
    if (len > e->longest_ns)
        e->longest_ns = len;
    e->paused = false;
    if (end > e->run_end)
        e->run_end = end;
    if (r->timeline) {
        uint64_t lo = r->tl_interval * r->cfg.interval_ns;
        e->tl_paused_ns += overlap(e->run_start, end, lo, lo + r->cfg.interval_ns);
    }
}

static void pause(struct rdma_replay *r, const uint8_t mac[6], unsigned prio, uint16_t quanta)
{
    struct rdma_replay_pfc *e = entry(r, mac, prio);
    if (!e) {
        r->oom = true;
        return;
    }
    uint64_t t = r->t, ns = replay__pfc_quanta_ns(r, quanta);
    e->frames++;
    e->last_frame = r->frame;
    e->tl_frames++;
    if (e->paused && t >= e->paused_until)
        run_end(r, e, e->paused_until);
    if (!quanta) {
        e->xon++;
        if (e->paused)
            run_end(r, e, t);
        return;
    }
    e->quanta += quanta;
    e->requested_ns += ns;
    if (!e->paused) {
        /* A capture whose timestamps step back can start a run inside the
         * last one: the time paused is a union, so the run starts where
         * that one ended. */
        e->paused = true;
        e->run_start = t > e->run_end ? t : e->run_end;
    }
    e->paused_until = t + ns;
    struct rdma_replay_event ev = {.frame = {r->frame, 0, 0}, .t = t, .value = ns, .psn = quanta};
    if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_PFC_PAUSE, prio, -1, 1, &ev))
        r->oom = true;
}

void replay__pfc_frame(struct rdma_replay *r, const struct rdma_pkt *pkt)
{
    static const uint8_t none[6];
    const uint8_t *mac = pkt->present & RDMA_HDR_ETH ? pkt->eth.src
                         : pkt->present & RDMA_HDR_SLL ? pkt->sll.src
                                                       : none;
    const struct rdma_pfc *p = &pkt->pfc;
    if (pkt->proto == RDMA_PROTO_PAUSE) {
        pause(r, mac, PFC_PRIORITIES, p->pause_time[0]);
        return;
    }
    for (unsigned i = 0; i < PFC_PRIORITIES; i++)
        if (p->enbv >> i & 1)
            pause(r, mac, i, p->pause_time[i]);
}

/* The paused time of the open interval [lo, hi) for runs still going. */
uint64_t replay__pfc_interval_paused(const struct rdma_replay_pfc *e, uint64_t lo, uint64_t hi)
{
    uint64_t in = e->tl_paused_ns;
    if (e->paused)
        in += overlap(e->run_start, e->paused_until, lo, hi);
    return in;
}

/* End of capture: a pause in force runs to the end of its timer. */
void replay__pfc_finish(struct rdma_replay *r)
{
    for (uint32_t i = 0; i < r->pfc.n; i++)
        if (r->pfc.v[i].paused)
            run_end(r, &r->pfc.v[i], r->pfc.v[i].paused_until);
}
