/* parallel.c - one network run by several MPI ranks, with the outputs of
 * the sequential run (docs/parallel.md).
 *
 * Every rank builds the whole network, the same way, so that components
 * have the same ids everywhere; each runs the nodes of its part
 * (partition.c) and marks the others remote. A frame for a port on
 * another rank leaves through the engine's remote hook: its bytes, the
 * bookkeeping that travels with it, and its event's (time, key), which
 * the owner queues as they are. Since the key names the component that
 * scheduled the event and never where it was queued (engine.c), every
 * node sees its events in the order of the sequential run.
 *
 * Conservative synchronisation in windows (YAWNS, Nicol 1993): all ranks
 * agree on the earliest pending event T; each runs every event before
 * T + L, L the lookahead; no frame sent in the window can arrive before
 * T + L, so the frames exchanged at its end (MPI_Alltoall of the sizes,
 * MPI_Alltoallv of the bytes) are all in time.
 *
 * The end: the sequential run stops right after the event that finishes
 * the last message or NVLink copy. A message finishes at its source host
 * and a copy at its host, so each rank knows how many finish on it, and
 * pauses after its own last one. While any rank has paused, the others'
 * windows run first; a rank that has not finished at the end of the
 * window tells the paused ones the run goes on past it, and they run the
 * window too. Once all have finished,
 * the last of their pause points is the end, and every rank runs up to
 * it and no further.
 *
 * After the run, rank 0 collects what the outputs read of the nodes it
 * does not run: port, queue pair and TCP counters, messages (and when
 * each reached its destination's memory), the PCIe model's counters and
 * stamps, NVLink copies' ends, the monitor's samples and PFC log, the
 * deadlock checks' views of each rank's switches (searched there), and
 * verdicts on the data; then it alone writes the outputs.
 */
#define _GNU_SOURCE /* qsort_r */
#ifdef HAVE_CONFIG_H /* the build's; the fuzz targets compile the library without MPI */
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/cfg_pcie.h"
#include "engine/util.h"
#include "host/cc/cc.h"
#include "host/iwarp/iwarp.h"
#include "host/nic.h"
#include "network/network.h"
#include "observe/observe.h"
#include "pcie/pcie.h"
#include "sim.h"

/* How many ranks mpirun started (Open MPI, or MPICH's PMI), 1 without it. */
static int launched_ranks(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (!size)
        size = getenv("PMI_SIZE");
    return size ? atoi(size) : 1;
}

#ifdef HAVE_MPI
#include <mpi.h>

struct buf {
    uint8_t *p;
    size_t n, cap;
};

struct sim_split {
    unsigned rank, nranks;
    struct sim_partition pt;
    struct buf *out; /* by destination rank */
    sim_time_t out_min; /* the earliest frame in out */
    uint64_t local_msgs; /* messages whose source host is here */
    uint64_t transfers;  /* NVLink copies over all ranks (net->transfers_left keeps this rank's) */
    bool interrupted;    /* the engine was stopped from outside (sim_stop) */
    struct sim_split_stats *stats;
};

/* A frame on its way to another rank: its event, its port, the bytes it
 * holds (all of them, or all but its fill: net/net.h). */
struct wire_frame {
    uint64_t time, key;
    uint32_t port, len;
    uint32_t aux;
    uint16_t bth_off, in, out, fill_at, fill_len;
    uint8_t flags, prio, l3, pad[3];
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 65536;
        while (b->n + n > b->cap)
            b->cap *= 2;
        b->p = sim__xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static bool node_here(const struct sim_network *net, uint32_t node)
{
    return net->split->pt.node_part[node] == net->split->rank;
}

/* The engine's remote hook: only frames cross, as port arrivals. */
static void send_frame(void *arg, struct sim *sim, const struct sim_event *ev)
{
    (void)sim;
    struct sim_network *net = arg;
    struct sim_port *to = (struct sim_port *)ev->target;
    size_t id = (size_t)(to - net->ports);
    if (id >= net->nports || sim_event_kind(ev) != SIM_PORT_ARRIVAL) {
        /* a model reached into another node without a link: a bug */
        fprintf(stderr, "rdmasim: event '%s' for %s crosses ranks outside a link\n",
                sim_event_name(ev), ev->target->name);
        MPI_Abort(MPI_COMM_WORLD, 70);
    }
    struct sim_frame *f = ev->ptr;
    struct wire_frame w = {.time = ev->time, .key = ev->key, .port = (uint32_t)id, .len = f->len,
                           .aux = f->aux, .bth_off = f->bth_off, .in = f->in, .out = f->out,
                           .fill_at = f->fill_at, .fill_len = f->fill_len,
                           .flags = f->flags, .prio = f->prio, .l3 = f->l3};
    struct sim_split *s = net->split;
    struct buf *b = &s->out[s->pt.node_part[to->node->index]];
    put(b, &w, sizeof w);
    put(b, f->data, f->len - f->fill_len);
    if (ev->time < s->out_min)
        s->out_min = ev->time;
    s->stats->rank[s->rank].frames_out++;
    sim__frame_free(&net->pool, f);
}

static void receive_frames(struct sim_network *net, const uint8_t *p, size_t n)
{
    while (n >= sizeof(struct wire_frame)) {
        struct wire_frame w;
        memcpy(&w, p, sizeof w);
        uint32_t held = w.len - w.fill_len;
        struct sim_frame *f = sim__frame_alloc(&net->pool, held);
        f->len = w.len;
        f->fill_at = w.fill_at;
        f->fill_len = w.fill_len;
        f->aux = w.aux;
        f->bth_off = w.bth_off;
        f->in = w.in;
        f->out = w.out;
        f->flags = w.flags;
        f->prio = w.prio;
        f->l3 = w.l3;
        memcpy(f->data, p + sizeof w, held);
        struct sim_event ev = {.time = w.time, .key = w.key, .target = &net->ports[w.port].comp, .ptr = f};
        sim_schedule_event(net->sim, &ev);
        p += sizeof w + held;
        n -= sizeof w + held;
        net->split->stats->rank[net->split->rank].frames_in++;
    }
}

/* What every rank tells every other at the end of a window. */
enum { H_BYTES, H_NEXT, H_DONE, H_INTERRUPTED, H_N };

struct round {
    sim_time_t next; /* the earliest event anywhere, frames in flight included */
    bool all_done, any_done, interrupted;
};

/* One round of the window's end: headers to all (MPI_Alltoall), then the
 * frames, point to point between the ranks that have any for each other;
 * what arrives is queued. */
static struct round exchange(struct sim_network *net, bool done)
{
    struct sim_split *s = net->split;
    unsigned n = s->nranks;
    double t0 = wall();
    uint64_t *h = sim__xcalloc(2 * (size_t)n * H_N, sizeof *h), *rh = h + (size_t)n * H_N;
    /* every pending event is in a queue or in a frame sent now */
    sim_time_t next = sim_next_time(net->sim);
    if (s->out_min < next)
        next = s->out_min;
    for (unsigned r = 0; r < n; r++) {
        h[r * H_N + H_BYTES] = s->out[r].n;
        h[r * H_N + H_NEXT] = next;
        h[r * H_N + H_DONE] = done;
        h[r * H_N + H_INTERRUPTED] = s->interrupted;
    }
    MPI_Alltoall(h, H_N, MPI_UINT64_T, rh, H_N, MPI_UINT64_T, MPI_COMM_WORLD);
    struct round rd = {.next = SIM_TIME_NEVER, .all_done = true};
    MPI_Request *req = sim__xcalloc(2 * (size_t)n, sizeof *req);
    uint8_t **in = sim__xcalloc(n, sizeof *in);
    int nreq = 0;
    for (unsigned r = 0; r < n; r++) {
        const uint64_t *x = &rh[r * H_N];
        if (x[H_NEXT] < rd.next)
            rd.next = x[H_NEXT];
        rd.all_done &= x[H_DONE] != 0;
        rd.any_done |= x[H_DONE] != 0;
        rd.interrupted |= x[H_INTERRUPTED] != 0;
        if (x[H_BYTES] > INT32_MAX || s->out[r].n > INT32_MAX) {
            fprintf(stderr, "rdmasim: more than 2 GiB of frames between two ranks in one window\n");
            MPI_Abort(MPI_COMM_WORLD, 70);
        }
        if (x[H_BYTES]) {
            in[r] = sim__xmalloc(x[H_BYTES]);
            MPI_Irecv(in[r], (int)x[H_BYTES], MPI_BYTE, (int)r, 0, MPI_COMM_WORLD, &req[nreq++]);
        }
        if (s->out[r].n)
            MPI_Isend(s->out[r].p, (int)s->out[r].n, MPI_BYTE, (int)r, 0, MPI_COMM_WORLD, &req[nreq++]);
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    s->stats->rank[s->rank].wait_s += wall() - t0;
    for (unsigned r = 0; r < n; r++) {
        if (in[r])
            receive_frames(net, in[r], rh[r * H_N + H_BYTES]);
        free(in[r]);
        s->out[r].n = 0;
    }
    s->out_min = SIM_TIME_NEVER;
    free(in);
    free(req);
    free(h);
    return rd;
}

/* Run events before `limit` (inclusive); true if this rank finished its
 * last message on the way and paused there. */
static bool run_window(struct sim_network *net, sim_time_t limit, bool *done, sim_time_t *done_t,
                       uint64_t *done_k)
{
    struct sim *sim = net->sim;
    double t0 = wall();
    sim_run(sim, limit);
    net->split->stats->rank[net->split->rank].busy_s += wall() - t0;
    if (!sim_stopped(sim))
        return false;
    if (!*done && net->finished == net->nmsgs && !net->transfers_left) {
        *done = true;
        *done_t = sim_now(sim);
        *done_k = sim_last_key(sim);
        return true;
    }
    net->split->interrupted = true; /* stopped from outside: an interrupt */
    return false;
}

/* The window loop; returns false when a rank was interrupted. */
static bool run_windows(struct sim_network *net)
{
    struct sim_split *s = net->split;
    struct sim *sim = net->sim;
    sim_time_t stop = net->cfg->stop, L = s->pt.lookahead;
    /* the rank pauses (sim_stop, message.c) once its own messages and
     * copies are done */
    net->finished = net->nmsgs - s->local_msgs;
    bool done = s->local_msgs == 0 && !net->transfers_left;
    sim_time_t done_t = 0;
    uint64_t done_k = 0;
    if (!net->nmsgs && !s->transfers)
        return true; /* as the sequential run: nothing runs */
    sim_start(sim);
    struct round rd = exchange(net, done);
    for (;;) {
        if (rd.interrupted)
            return false;
        if (rd.all_done)
            break; /* every rank has finished its messages */
        sim_time_t start = rd.next;
        if (start == SIM_TIME_NEVER || start > stop)
            return true; /* nothing left before the stop time */
        sim_time_t limit = L == SIM_TIME_NEVER || start > SIM_TIME_NEVER - L ? SIM_TIME_NEVER : start + L - 1;
        if (limit > stop)
            limit = stop;
        s->stats->rank[s->rank].windows++;
        if (!done)
            run_window(net, limit, &done, &done_t, &done_k);
        rd = exchange(net, done);
        if (rd.interrupted)
            return false;
        if (rd.all_done)
            break; /* all finished inside this window */
        /* a rank that has finished runs the window only now that a rank
         * that has not went through the whole of it: the run goes on past
         * the window, and nothing in it is after the end */
        if (rd.any_done) {
            if (done)
                run_window(net, limit, &done, &done_t, &done_k);
            rd = exchange(net, done);
        }
    }
    /* the end: the last pause point over the ranks, in (time, key) order */
    uint64_t *points = sim__xcalloc(2 * (size_t)s->nranks, sizeof *points);
    uint64_t mine[2] = {done_t, done_k};
    MPI_Allgather(mine, 2, MPI_UINT64_T, points, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    sim_time_t end_t = 0;
    uint64_t end_k = 0;
    for (unsigned i = 0; i < s->nranks; i++)
        if (points[2 * i] > end_t || (points[2 * i] == end_t && points[2 * i + 1] > end_k))
            end_t = points[2 * i], end_k = points[2 * i + 1];
    free(points);
    double t0 = wall();
    sim_run_through(sim, end_t, end_k);
    s->stats->rank[s->rank].busy_s += wall() - t0;
    return true;
}

/* ---- what rank 0 writes, from every rank ----------------------------------------- */
/* Gather each rank's bytes at rank 0 in rank order, and free them: *all,
 * *counts (by rank, then each rank's offset) and the *total (if wanted). */
static uint8_t *gather(struct sim_split *s, struct buf *b, int **counts, size_t *total_out)
{
    int n = (int)b->n;
    int *cnt = s->rank == 0 ? sim__xcalloc(2 * (size_t)s->nranks, sizeof *cnt) : NULL;
    MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    uint8_t *all = NULL;
    if (s->rank == 0) {
        size_t total = 0;
        for (unsigned r = 0; r < s->nranks; r++) {
            cnt[s->nranks + r] = (int)total;
            total += (size_t)cnt[r];
        }
        all = sim__xmalloc(total ? total : 1);
    }
    MPI_Gatherv(b->p, n, MPI_BYTE, all, cnt, s->rank == 0 ? cnt + s->nranks : NULL, MPI_BYTE, 0,
                MPI_COMM_WORLD);
    free(b->p);
    *b = (struct buf){0};
    *counts = cnt;
    if (total_out)
        *total_out = s->rank == 0 ? (size_t)cnt[2 * s->nranks - 1] + (size_t)cnt[s->nranks - 1] : 0;
    return all;
}

/* Ports, nodes, queue pairs and messages of each rank, in a fixed order
 * that rank 0 walks again to put each where it belongs. */
static void collect_state(struct sim_network *net)
{
    struct sim_split *s = net->split;
    struct buf b = {0};
    for (size_t i = 0; i < net->nports; i++)
        if (node_here(net, net->ports[i].node->index))
            put(&b, &net->ports[i].st, sizeof net->ports[i].st);
    for (size_t i = 0; i < net->cfg->nnodes; i++)
        if (node_here(net, (uint32_t)i)) {
            put(&b, &net->nodes[i]->bad_frames, sizeof net->nodes[i]->bad_frames);
            put(&b, &net->nodes[i]->unroutable, sizeof net->nodes[i]->unroutable);
        }
    for (size_t i = 0; i < net->nconns; i++)
        for (int side = 0; side < 2; side++)
            if (node_here(net, net->conns[i].host[side])) {
                const struct sim_qp *qp = net->conns[i].qp[side];
                put(&b, &qp->st, sizeof qp->st);
                if (qp->cc)
                    put(&b, &qp->cc->cuts, sizeof qp->cc->cuts);
                if (qp->iw) { /* what summary.json says of its TCP connection */
                    const struct sim_tcp *t = &qp->iw->tcp;
                    put(&b, &t->st, sizeof t->st);
                    put(&b, &t->state, sizeof t->state);
                    put(&b, &t->mss, sizeof t->mss);
                    put(&b, &t->cc.cwnd, sizeof t->cc.cwnd);
                    put(&b, &t->srtt, sizeof t->srtt);
                    put(&b, &t->rto, sizeof t->rto);
                }
            }
    /* a frame lost on a link that went down under it is counted at the
     * sending port by the receiving one (net/port.c), maybe on another
     * rank: those counts are added to the owner's */
    uint64_t *lost = sim__xcalloc(net->nports + 1, sizeof *lost);
    for (size_t i = 0; i < net->nports; i++)
        if (!node_here(net, net->ports[i].node->index))
            lost[i] = net->ports[i].st.lost;
    MPI_Reduce(s->rank ? lost : MPI_IN_PLACE, lost, (int)net->nports, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int *cnt;
    uint8_t *all = gather(s, &b, &cnt, NULL);
    if (s->rank == 0) {
        for (unsigned r = 1; r < s->nranks; r++) {
            const uint8_t *p = all + cnt[s->nranks + r];
#define TAKE(dst) (memcpy(&(dst), p, sizeof(dst)), p += sizeof(dst))
            for (size_t i = 0; i < net->nports; i++)
                if (s->pt.node_part[net->ports[i].node->index] == r)
                    TAKE(net->ports[i].st);
            for (size_t i = 0; i < net->cfg->nnodes; i++)
                if (s->pt.node_part[i] == r) {
                    TAKE(net->nodes[i]->bad_frames);
                    TAKE(net->nodes[i]->unroutable);
                }
            for (size_t i = 0; i < net->nconns; i++)
                for (int side = 0; side < 2; side++)
                    if (s->pt.node_part[net->conns[i].host[side]] == r) {
                        struct sim_qp *qp = net->conns[i].qp[side];
                        TAKE(qp->st);
                        if (qp->cc)
                            TAKE(qp->cc->cuts);
                        if (qp->iw) {
                            struct sim_tcp *t = &qp->iw->tcp;
                            TAKE(t->st);
                            TAKE(t->state);
                            TAKE(t->mss);
                            TAKE(t->cc.cwnd);
                            TAKE(t->srtt);
                            TAKE(t->rto);
                        }
                    }
#undef TAKE
        }
        for (size_t i = 0; i < net->nports; i++)
            net->ports[i].st.lost += lost[i];
    }
    free(lost);
    free(all);
    free(cnt);
}

/* The PCIe model's counters of one link direction, as the outputs read
 * them at the end of the run. */
struct pcie_counts {
    uint64_t busy, tlps[PCIE_TLP_TYPES], payload, wire;
};

static void put_pcie_dir(struct buf *b, const struct pcie_dir *d, sim_time_t end)
{
    struct pcie_counts c = {.busy = d->busy - sim__pcie_busy_after(d, end), .payload = d->payload, .wire = d->wire};
    memcpy(c.tlps, d->tlps, sizeof c.tlps);
    put(b, &c, sizeof c);
}

static const uint8_t *take_pcie_dir(const uint8_t *p, struct pcie_dir *d)
{
    struct pcie_counts c;
    memcpy(&c, p, sizeof c);
    d->busy = c.busy;
    memcpy(d->tlps, c.tlps, sizeof c.tlps);
    d->payload = c.payload;
    d->wire = c.wire;
    d->lo = d->n; /* the busy time after the end is left out already */
    return p + sizeof c;
}

static struct sim_pcie_host *pcie_of(const struct sim_network *net, uint32_t h)
{
    return ((struct sim_host *)net->nodes[net->host_node[h]])->nic.pcie;
}

/* The PCIe model's outputs: each host's link counters from the rank that
 * ran it, and each message's stamps: a stamp is set by the one host that
 * saw its step, or kept from the first of two (first_tx, which the
 * responder of a READ sets later), and the other ranks hold
 * SIM_TIME_NEVER, the largest time: the earliest over ranks is the
 * sequential run's. Copies and CXL accesses are placed before the run,
 * alike on every rank. */
static void collect_pcie(struct sim_network *net)
{
    struct sim_split *s = net->split;
    if (!net->pcie)
        return;
    sim_time_t end = sim_now(net->sim);
    struct buf b = {0};
    for (uint32_t h = 0; h < net->nhosts; h++) {
        const struct sim_pcie_host *ph = pcie_of(net, h);
        for (uint32_t i = 0; node_here(net, net->host_node[h]) && i < ph->nlinks; i++) {
            put_pcie_dir(&b, &ph->links[i].up, end);
            put_pcie_dir(&b, &ph->links[i].down, end);
        }
    }
    int *cnt;
    uint8_t *all = gather(s, &b, &cnt, NULL);
    for (unsigned r = 1; s->rank == 0 && r < s->nranks; r++) {
        const uint8_t *p = all + cnt[s->nranks + r];
        for (uint32_t h = 0; h < net->nhosts; h++) {
            struct sim_pcie_host *ph = pcie_of(net, h);
            for (uint32_t i = 0; s->pt.node_part[net->host_node[h]] == r && i < ph->nlinks; i++) {
                p = take_pcie_dir(p, &ph->links[i].up);
                p = take_pcie_dir(p, &ph->links[i].down);
            }
        }
    }
    free(all);
    free(cnt);
    size_t words = net->nmsgs * sizeof *net->pcie->stamps / sizeof(uint64_t);
    MPI_Reduce(s->rank ? net->pcie->stamps : MPI_IN_PLACE, net->pcie->stamps, (int)words, MPI_UINT64_T, MPI_MIN,
               0, MPI_COMM_WORLD);
    /* an NVLink copy's end is set by its host's rank, 0 elsewhere; the
     * others' ends are alike on every rank */
    size_t ncopies = net->cfg->pcie->ncopies;
    uint64_t *ends = sim__xcalloc(ncopies + 1, sizeof *ends);
    for (size_t i = 0; i < ncopies; i++)
        ends[i] = net->pcie->copies[i].end;
    MPI_Reduce(s->rank ? ends : MPI_IN_PLACE, ends, (int)ncopies, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    for (size_t i = 0; s->rank == 0 && i < ncopies; i++)
        net->pcie->copies[i].end = ends[i];
    free(ends);
}

/* Messages finish at their source, and are in their destination's memory
 * (delivered: collectives_csv.c) at the destination: every rank learns
 * them all, since the data is checked where it was written. */
static void share_messages(struct sim_network *net)
{
    struct sim_msg *mine = sim__xcalloc(net->nmsgs + 1, sizeof *mine);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &net->cfg->msgs[i];
        if (node_here(net, m->src))
            mine[i] = net->msgs[i];
        else if (node_here(net, m->dst))
            mine[i].delivered = net->msgs[i].delivered;
    }
    /* each message is all zeros but at its source (its delivery time but
     * at its destination): OR them together */
    MPI_Allreduce(mine, net->msgs, (int)(net->nmsgs * sizeof *mine), MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    free(mine);
}

static bool op_writes_source(uint8_t op) { return op == SIM_OP_READ; }

/* sim__verify on every rank, each message judged where its destination
 * bytes were written (the source buffer for a READ); an atomic writes
 * both ends, whose first 8 bytes every rank is given first. */
static void verify(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    uint64_t *atom = sim__xcalloc(2 * net->nmsgs + 1, sizeof *atom);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        if (!sim__op_is_atomic(m->op))
            continue;
        struct sim_host *src = (struct sim_host *)net->nodes[m->src];
        struct sim_host *dst = (struct sim_host *)net->nodes[m->dst];
        if (node_here(net, m->src))
            memcpy(&atom[2 * i], src->mrs[net->msgs[i].lmr].bytes, 8);
        if (node_here(net, m->dst))
            memcpy(&atom[2 * i + 1], dst->mrs[net->msgs[i].rmr].bytes, 8);
    }
    MPI_Allreduce(MPI_IN_PLACE, atom, (int)(2 * net->nmsgs), MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        if (!sim__op_is_atomic(m->op))
            continue;
        memcpy(((struct sim_host *)net->nodes[m->src])->mrs[net->msgs[i].lmr].bytes, &atom[2 * i], 8);
        memcpy(((struct sim_host *)net->nodes[m->dst])->mrs[net->msgs[i].rmr].bytes, &atom[2 * i + 1], 8);
    }
    free(atom);
    sim__verify(net);
    /* the verdict (-1, 0, 1) + 1 from the rank that judges it, 0 elsewhere */
    uint8_t *v = sim__xcalloc(net->nmsgs + 1, 1);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        uint32_t judge = op_writes_source(m->op) || sim__op_is_atomic(m->op) ? m->src : m->dst;
        if (node_here(net, judge))
            v[i] = (uint8_t)(net->msgs[i].data_ok + 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, v, (int)net->nmsgs, MPI_UINT8_T, MPI_MAX, MPI_COMM_WORLD);
    for (size_t i = 0; i < net->nmsgs; i++)
        net->msgs[i].data_ok = (int8_t)(v[i] - 1);
    free(v);
}

/* The monitor's samples: each rank sampled its own switches and queue
 * pairs; rank 0 merges them in the order of the sequential run. */
static int cmp_qlen(const void *a, const void *b, void *arg)
{
    const struct sim_qlen_row *x = a, *y = b;
    const struct sim_network *net = arg;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    const struct sim_port *p = &net->ports[x->port], *q = &net->ports[y->port];
    if (p->node->index != q->node->index)
        return p->node->index < q->node->index ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

static int cmp_rate(const void *a, const void *b, void *arg)
{
    (void)arg;
    const struct sim_rate_row *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->conn != y->conn)
        return x->conn < y->conn ? -1 : 1;
    return (x->side > y->side) - (x->side < y->side);
}

/* A log's rows on every rank, those spilled to disk included, gathered
 * on rank 0 (NULL elsewhere); `what` names the log in the error. */
static uint8_t *read_back_and_gather(struct sim_split *s, struct sim_spill *spill, const void *rows, size_t n,
                                     size_t size, const char *what, int **cnt, size_t *total)
{
    struct buf b = {0};
    if (sim__spill_read_all(spill, rows, n, size, &b.p, &b.n)) {
        fprintf(stderr, "rdmasim: %s could not be read back\n", what);
        MPI_Abort(MPI_COMM_WORLD, 74);
    }
    return gather(s, &b, cnt, total);
}

static void merge_rows(struct sim_network *net, void **rows, size_t *n, size_t *cap, size_t size,
                       struct sim_spill *spill, int (*cmp)(const void *, const void *, void *))
{
    struct sim_split *s = net->split;
    int *cnt;
    size_t total;
    uint8_t *all = read_back_and_gather(s, spill, *rows, *n, size, "the monitor's rows", &cnt, &total);
    if (s->rank == 0) {
        free(*rows);
        *rows = all;
        *n = total / size;
        *cap = *n;
        qsort_r(*rows, *n, size, cmp, net);
        all = NULL;
    }
    free(all);
    free(cnt);
}

/* The PFC log: each rank's rows are in the order its events fired, and
 * the rows of one event are on one rank, so merging the runs by the
 * (time, key) of their events gives the sequential run's order. */
static int cmp_pfc(const struct sim_pfc_row *x, const struct sim_pfc_row *y)
{
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static void merge_pfc(struct sim_network *net)
{
    struct sim_monitor *mon = net->monitor;
    struct sim_split *s = net->split;
    int *cnt;
    size_t total;
    uint8_t *all = read_back_and_gather(s, &mon->spill_pfc, mon->pfc, mon->npfc, sizeof *mon->pfc, "the PFC log",
                                        &cnt, &total);
    if (s->rank == 0) {
        size_t n = total / sizeof *mon->pfc, *at = sim__xcalloc(s->nranks, sizeof *at);
        struct sim_pfc_row *rows = sim__xmalloc((n ? n : 1) * sizeof *rows);
        for (size_t i = 0; i < n; i++) {
            const struct sim_pfc_row *best = NULL;
            unsigned from = 0;
            for (unsigned r = 0; r < s->nranks; r++) {
                if (at[r] * sizeof *rows >= (size_t)cnt[r])
                    continue;
                const struct sim_pfc_row *x = (const struct sim_pfc_row *)(all + cnt[s->nranks + r]) + at[r];
                if (!best || cmp_pfc(x, best) < 0)
                    best = x, from = r;
            }
            memcpy(&rows[i], best, sizeof *rows);
            at[from]++;
        }
        free(at);
        free(mon->pfc);
        mon->pfc = rows;
        mon->npfc = mon->cappfc = n;
    }
    free(all);
    free(cnt);
}

/* Each rank's deadlock checks of its own switches, searched at rank 0. */
static void merge_deadlock_views(struct sim_network *net)
{
    struct sim_monitor *mon = net->monitor;
    struct sim_split *s = net->split;
    struct buf b = {.p = (uint8_t *)mon->views->w, .n = mon->views->n * sizeof *mon->views->w};
    *mon->views = (struct sim_deadlock_views){0};
    int *cnt;
    uint8_t *all = gather(s, &b, &cnt, NULL);
    if (s->rank == 0) {
        struct sim_deadlock_views *per = sim__xcalloc(s->nranks, sizeof *per);
        for (unsigned r = 0; r < s->nranks; r++) {
            per[r].n = (size_t)cnt[r] / sizeof *per[r].w;
            per[r].w = sim__xmalloc((per[r].n ? per[r].n : 1) * sizeof *per[r].w);
            memcpy(per[r].w, all + cnt[s->nranks + r], (size_t)cnt[r]);
        }
        sim__deadlock_replay(mon, per, s->nranks);
        for (unsigned r = 0; r < s->nranks; r++)
            free(per[r].w);
        free(per);
    }
    free(all);
    free(cnt);
}

static void merge_monitor(struct sim_network *net)
{
    struct sim_monitor *mon = net->monitor;
    merge_pfc(net);
    merge_deadlock_views(net);
    merge_rows(net, (void **)&mon->qlen, &mon->nqlen, &mon->capqlen, sizeof *mon->qlen, &mon->spill_qlen,
               cmp_qlen);
    merge_rows(net, (void **)&mon->rates, &mon->nrates, &mon->caprates, sizeof *mon->rates,
               &mon->spill_rates, cmp_rate);
    /* the monitor and the faults ran on every rank: their events count once */
    struct sim_split *s = net->split;
    uint64_t events = sim_events_processed(net->sim) - (s->rank ? mon->fired + sim__faults_fired(net) : 0);
    s->stats->rank[s->rank].events = events;
    uint64_t *per = sim__xcalloc(s->nranks, sizeof *per);
    MPI_Allgather(&events, 1, MPI_UINT64_T, per, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t total = 0;
    for (unsigned r = 0; r < s->nranks; r++)
        total += per[r];
    free(per);
    sim_count_events(net->sim, total - sim_events_processed(net->sim));
}

/* Each traced port's capture, from the rank that ran it, into rank 0's. */
static void collect_captures(struct sim_network *net)
{
    struct sim_split *s = net->split;
    struct buf b = {0};
    /* a collective call: every rank makes it, with captures or without */
    for (size_t i = 0; s->rank && net->pcaps && i < net->nports; i++) {
        uint8_t *bytes;
        uint64_t rec[3] = {i, 0, 0};
        size_t n;
        if (!net->pcaps[i])
            continue;
        if (sim__pcap_take(net->pcaps[i], &bytes, &n, &rec[1])) {
            fprintf(stderr, "rdmasim: rank %u: the capture of %s could not be read back\n", s->rank,
                    net->ports[i].name);
            MPI_Abort(MPI_COMM_WORLD, 74);
        }
        rec[2] = n;
        put(&b, rec, sizeof rec);
        put(&b, bytes, n);
        free(bytes);
    }
    int *cnt;
    size_t total;
    uint8_t *all = gather(s, &b, &cnt, &total);
    if (s->rank == 0) {
        for (size_t off = 0; off < total;) {
            uint64_t rec[3];
            memcpy(rec, all + off, sizeof rec);
            off += sizeof rec;
            if (sim__pcap_replace(net->pcaps[rec[0]], all + off, rec[2], rec[1])) {
                fprintf(stderr, "rdmasim: the capture of %s could not be written\n", net->ports[rec[0]].name);
                MPI_Abort(MPI_COMM_WORLD, 74);
            }
            off += rec[2];
        }
    }
    free(all);
    free(cnt);
}

/* The statistics of every rank, at every rank. */
static void share_stats(struct sim_split *s)
{
    struct sim_rank_stats mine = s->stats->rank[s->rank];
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, s->stats->rank, (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
}

bool sim__split_run(struct sim_network *net)
{
    struct sim_split *s = net->split;
    double t0 = wall();
    if (!run_windows(net))
        return false;
    /* every rank ends at the time the sequential run ends */
    uint64_t end = sim_now(net->sim);
    MPI_Allreduce(MPI_IN_PLACE, &end, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    sim_advance(net->sim, end);
    for (size_t i = 0; i < net->nports; i++)
        if (node_here(net, net->ports[i].node->index))
            sim__port_settle(&net->ports[i]);
    share_messages(net);
    verify(net);
    collect_state(net);
    collect_pcie(net);
    collect_captures(net);
    merge_monitor(net);
    s->stats->rank[s->rank].run_s = wall() - t0;
    share_stats(s);
    return true;
}

int sim_parallel_start(unsigned *rank, unsigned *nranks)
{
    *rank = 0;
    *nranks = 1;
    if (launched_ranks() <= 1)
        return 0;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    *rank = (unsigned)r;
    *nranks = (unsigned)n;
    return 0;
}

void sim_parallel_end(unsigned nranks, int code)
{
    if (nranks <= 1)
        return;
    if (code)
        MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Finalize();
}

/* Every rank agrees, or all fail together: the AND of ok over ranks. */
bool sim_parallel_agree(unsigned nranks, bool ok)
{
    if (nranks <= 1)
        return ok;
    int v = ok;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return v;
}

#else /* no MPI: every run is whole */

bool sim__split_run(struct sim_network *net)
{
    (void)net;
    return false;
}

int sim_parallel_start(unsigned *rank, unsigned *nranks)
{
    *rank = 0;
    *nranks = 1;
    /* several copies started by mpirun would each run the whole network
     * and write the same outputs */
    return launched_ranks() > 1 ? -1 : 0;
}

void sim_parallel_end(unsigned nranks, int code)
{
    (void)nranks;
    (void)code;
}

bool sim_parallel_agree(unsigned nranks, bool ok)
{
    (void)nranks;
    return ok;
}
#endif

int sim_network_split(struct sim_network *net, unsigned rank, unsigned nranks, char *err, size_t errcap)
{
#ifndef HAVE_MPI
    (void)rank;
    (void)nranks;
    snprintf(err, errcap, "%s: this rdmasim was built without MPI", net->cfg->path);
    return -1;
#else
    struct sim_split *s = sim__xcalloc(1, sizeof *s);
    if (sim__partition(net, nranks, &s->pt, err, errcap)) {
        free(s);
        return -1;
    }
    s->rank = rank;
    s->nranks = nranks;
    s->out = sim__xcalloc(nranks, sizeof *s->out);
    s->out_min = SIM_TIME_NEVER;
    s->stats = sim__xcalloc(1, sizeof *s->stats);
    s->stats->here = rank;
    s->stats->nranks = nranks;
    s->stats->lookahead = s->pt.lookahead;
    s->stats->cut_links = s->pt.cut_ports / 2;
    s->stats->rank = sim__xcalloc(nranks, sizeof *s->stats->rank);
    net->split = s;
    net->split_stats = s->stats;
    for (size_t i = 0; i < net->nmsgs; i++)
        s->local_msgs += node_here(net, net->cfg->msgs[i].src);
    /* an NVLink copy runs on its host's rank (dma_pcie.c): the others do
     * not wait for it */
    s->transfers = net->transfers_left;
    for (size_t i = 0; net->pcie && i < net->cfg->pcie->ncopies; i++) {
        const struct cfg_pcie_copy *c = &net->cfg->pcie->copies[i];
        if (c->via == PCIE_COPY_NVLINK && !node_here(net, c->host))
            net->transfers_left--;
    }
    for (size_t i = 0; i < net->cfg->nnodes; i++)
        if (!node_here(net, (uint32_t)i))
            sim_component_set_remote(net->sim, &net->nodes[i]->comp);
    for (size_t i = 0; i < net->nports; i++)
        if (!node_here(net, net->ports[i].node->index))
            sim_component_set_remote(net->sim, &net->ports[i].comp);
    sim_set_remote(net->sim, send_frame, net);
    /* deadlock checks keep their views of this rank's switches */
    net->monitor->views = sim__xcalloc(1, sizeof *net->monitor->views);
    return 0;
#endif
}

void sim__split_free(struct sim_network *net)
{
    struct sim_split *s = net->split;
    if (!s)
        return;
#ifdef HAVE_MPI
    for (unsigned r = 0; r < s->nranks; r++)
        free(s->out[r].p);
    free(s->out);
    sim__partition_free(&s->pt);
    free(s->stats->rank);
    free(s->stats);
#endif
    free(s);
    net->split = NULL;
    net->split_stats = NULL;
}

unsigned sim_network_rank(const struct sim_network *net)
{
#ifdef HAVE_MPI
    return net->split ? net->split->rank : 0;
#else
    (void)net;
    return 0;
#endif
}

const struct sim_split_stats *sim_network_split_stats(const struct sim_network *net)
{
    return net->split_stats;
}
