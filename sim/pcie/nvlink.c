/* nvlink.c - the GPUs of a host joined by NVLink through an NVSwitch, as
 * bandwidth that transfers in flight share while they run:
 *
 *   gpu0 ==out==>  NVSwitch  ==in==> gpu1      each GPU has a sending and
 *   gpu2 ==out==>  (no limit ==in==> gpu3      a receiving side at its
 *   ...            of its own)                 generation's one-way rate
 *
 * A transfer holds its source's sending side and its destination's
 * receiving side. The sides are shared max-min fairly, found by
 * progressive filling (Bertsekas and Gallager, "Data Networks", 2nd ed.,
 * section 6.5.2): every transfer's rate grows together until a side is
 * full, the transfers through it keep what they have, the others go on
 * growing. Two copies out of one GPU to two others thus get half its rate
 * each, and a copy that finishes gives its share back to the others at
 * that moment. Transfers between the same two GPUs go one after the
 * other, in the order they started, as a copy engine's queue and a NCCL
 * connection's slots take them. The NVSwitch itself does not limit: it is
 * non-blocking (NVIDIA, "NVLink and NVSwitch": every GPU talks to every
 * other at full bandwidth).
 *
 * Rates change only when a transfer starts or ends, so the host needs one
 * event, at the next end (sim__nvlink_next). Bytes left are kept as
 * doubles between those moments; time stays in integer picoseconds, a
 * transfer ending at the first picosecond by which its bytes are through.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "pcie/pcie.h"

struct nvlink_xfer {
    uint32_t id, from, to;
    double left; /* bytes */
    double rate; /* bytes per picosecond */
    bool frozen; /* while filling: on a full side */
};

/* Transfers waiting behind the one in flight between the same two GPUs. */
struct nvlink_queue {
    struct nvlink_xfer *x;
    size_t head, n, cap; /* [head, n) wait, oldest first */
    bool busy;           /* one is in flight */
};

struct sim_nvlink {
    double side_rate;  /* bytes per picosecond, one way, per GPU */
    uint32_t ngpus;    /* tree nodes: a side per node, used by GPUs only */
    struct nvlink_xfer *x; /* in flight, at most one per pair of GPUs */
    size_t n, cap;
    struct nvlink_queue *pair; /* by from * ngpus + to */
    sim_time_t at;     /* when `left` was last brought up to date */
    double *room;      /* per side (sending sides, then receiving): rate not yet given */
    uint32_t *users;   /* per side: transfers on it not yet frozen */
};

struct sim_nvlink *sim__nvlink_new(uint32_t nodes, uint64_t rate_bps)
{
    struct sim_nvlink *nv = sim__xcalloc(1, sizeof *nv);
    nv->side_rate = (double)rate_bps / 8 / 1e12;
    nv->ngpus = nodes;
    nv->room = sim__xcalloc(2 * (size_t)nodes, sizeof *nv->room);
    nv->users = sim__xcalloc(2 * (size_t)nodes, sizeof *nv->users);
    nv->pair = sim__xcalloc(nodes ? (size_t)nodes * nodes : 1, sizeof *nv->pair);
    return nv;
}

void sim__nvlink_free(struct sim_nvlink *nv)
{
    if (!nv)
        return;
    free(nv->x);
    for (size_t p = 0; p < (size_t)nv->ngpus * nv->ngpus; p++)
        free(nv->pair[p].x);
    free(nv->pair);
    free(nv->room);
    free(nv->users);
    free(nv);
}

static void advance(struct sim_nvlink *nv, sim_time_t now)
{
    double dt = (double)(now - nv->at);
    for (size_t i = 0; i < nv->n; i++)
        nv->x[i].left -= nv->x[i].rate * dt;
    nv->at = now;
}

/* Progressive filling: raise every unfrozen transfer by the smallest fair
 * share left on any side, then freeze the transfers on the sides that
 * share filled, until all are frozen. */
static void share(struct sim_nvlink *nv)
{
    uint32_t sides = 2 * nv->ngpus;
    for (uint32_t s = 0; s < sides; s++)
        nv->room[s] = nv->side_rate;
    for (size_t i = 0; i < nv->n; i++) {
        nv->x[i].rate = 0;
        nv->x[i].frozen = false;
    }
    for (size_t left = nv->n; left;) {
        for (uint32_t s = 0; s < sides; s++)
            nv->users[s] = 0;
        for (size_t i = 0; i < nv->n; i++)
            if (!nv->x[i].frozen) {
                nv->users[nv->x[i].from]++;
                nv->users[nv->ngpus + nv->x[i].to]++;
            }
        double step = nv->side_rate;
        for (uint32_t s = 0; s < sides; s++)
            if (nv->users[s] && nv->room[s] / nv->users[s] < step)
                step = nv->room[s] / nv->users[s];
        for (uint32_t s = 0; s < sides; s++)
            nv->room[s] -= step * nv->users[s];
        /* a side is full once what is left would not move a byte in a
         * second: rounding, not bandwidth */
        double full = nv->side_rate * 1e-12;
        for (size_t i = 0; i < nv->n; i++) {
            struct nvlink_xfer *x = &nv->x[i];
            if (x->frozen)
                continue;
            x->rate += step;
            if (nv->room[x->from] <= full || nv->room[nv->ngpus + x->to] <= full) {
                x->frozen = true;
                left--;
            }
        }
    }
}

void sim__nvlink_start(struct sim_nvlink *nv, sim_time_t now, uint32_t id, uint32_t from,
                       uint32_t to, uint64_t len)
{
    advance(nv, now);
    struct nvlink_xfer x = {.id = id, .from = from, .to = to, .left = (double)len};
    struct nvlink_queue *q = &nv->pair[(size_t)from * nv->ngpus + to];
    if (q->busy) {
        if (q->head == q->n) /* empty: start over at the front */
            q->head = q->n = 0;
        SIM_GROW(q->x, q->cap, q->n);
        q->x[q->n++] = x;
        return;
    }
    q->busy = true;
    SIM_GROW(nv->x, nv->cap, nv->n);
    nv->x[nv->n++] = x;
    share(nv);
}

sim_time_t sim__nvlink_next(const struct sim_nvlink *nv)
{
    sim_time_t next = SIM_TIME_NEVER;
    for (size_t i = 0; i < nv->n; i++) {
        const struct nvlink_xfer *x = &nv->x[i];
        double ps = x->left > 0 ? x->left / x->rate : 0;
        sim_time_t end = nv->at + (sim_time_t)ps + ((double)(sim_time_t)ps < ps);
        if (end < next)
            next = end;
    }
    return next;
}

size_t sim__nvlink_finish(struct sim_nvlink *nv, sim_time_t now, uint32_t *done, size_t max)
{
    advance(nv, now);
    size_t k = 0, kept = 0, n = nv->n;
    for (size_t i = 0; i < n; i++) {
        struct nvlink_xfer x = nv->x[i];
        /* less than a picosecond's worth left: through by now */
        if (x.left >= x.rate || k == max) {
            nv->x[kept++] = x;
            continue;
        }
        done[k++] = x.id;
        struct nvlink_queue *q = &nv->pair[(size_t)x.from * nv->ngpus + x.to];
        if (q->head < q->n)
            nv->x[kept++] = q->x[q->head++]; /* the next between the two: at most one taken per slot freed */
        else
            q->busy = false;
    }
    nv->n = kept;
    if (k)
        share(nv);
    return k;
}
