/* deadlock.c - finding PFC deadlock: a cycle of switch egress queues,
 * each paused by the switch at the other end of its link because that
 * switch's buffer holds frames from the link, which wait in the next
 * queue of the cycle, itself paused (Hu et al., "Deadlocks in Datacenter
 * Networks: Why Do They Form, and How to Avoid Them", HotNets 2016).
 *
 *   s0:q(to s1) --paused by--> s1, whose frames from s0 wait in
 *   s1:q(to s2) --paused by--> s2 ... --> back to s0:q(to s1)
 *
 * A queue is a vertex when its class is paused, it holds frames, and it
 * sent nothing since the last check (a queue that moves is not dead). An
 * edge leads from (port P, class c) to (port F of P's peer switch, class
 * c) when F's queue holds a frame that came in over P's link. A depth-first
 * search finds the cycles; each is reported once, with the time of the
 * check that found it, until one of its queues moves again.
 *
 * A check first takes a view of the switches (each vertex, and the ports
 * its queue holds frames from), then searches the view. A run split over
 * MPI ranks keeps each rank's views of its own switches, and rank 0
 * searches them together after the run (sim__deadlock_replay): the search
 * only reports, so when it runs does not change the run.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "observe/observe.h"

struct dfs {
    struct sim_monitor *mon;
    sim_time_t t;
    uint8_t *vertex, *state; /* state: 0 new, 1 on the stack, 2 done */
    const uint32_t **held;   /* per vertex: its entry in the view */
    uint32_t *stack, *cursor;
    uint32_t depth;
};

/* Whether vertex w's queue holds a frame from its switch's port `in`. */
static bool holds_from(const struct dfs *d, uint32_t w, uint32_t in)
{
    const uint32_t *e = d->held[w];
    for (uint32_t i = 0; i < e[1]; i++)
        if (e[2 + i] == in)
            return true;
    return false;
}

/* The next neighbour of vertex v from *cursor on, or UINT32_MAX. */
static uint32_t next_edge(struct dfs *d, uint32_t v, uint32_t *cursor)
{
    struct sim_network *net = d->mon->net;
    unsigned c = v % SIM_PRIOS;
    const struct sim_port *peer = net->ports[v / SIM_PRIOS].peer;
    struct sim_node *b = peer->node;
    if (b->kind != CFG_SWITCH)
        return UINT32_MAX;
    for (; *cursor < b->nports; (*cursor)++) {
        uint32_t w = (uint32_t)(b->ports[*cursor] - net->ports) * SIM_PRIOS + c;
        if (d->vertex[w] && holds_from(d, w, peer->index)) {
            (*cursor)++;
            return w;
        }
    }
    return UINT32_MAX;
}

static void report(struct dfs *d, uint32_t from)
{
    struct sim_monitor *mon = d->mon;
    uint32_t first = d->depth;
    while (d->stack[first - 1] != from)
        first--;
    first--;
    bool fresh = false;
    for (uint32_t i = first; i < d->depth; i++)
        fresh |= !mon->in_deadlock[d->stack[i]];
    if (!fresh)
        return;
    SIM_GROW(mon->deadlocks, mon->capdeadlocks, mon->ndeadlocks);
    struct sim_deadlock *dl = &mon->deadlocks[mon->ndeadlocks++];
    dl->t = d->t;
    dl->n = d->depth - first;
    dl->ports = sim__xmalloc(dl->n * sizeof *dl->ports);
    dl->prios = sim__xmalloc(dl->n);
    for (uint32_t i = 0; i < dl->n; i++) {
        uint32_t v = d->stack[first + i];
        mon->in_deadlock[v] = 1;
        dl->ports[i] = v / SIM_PRIOS;
        dl->prios[i] = (uint8_t)(v % SIM_PRIOS);
    }
}

static void search(struct dfs *d, uint32_t root)
{
    d->depth = 0;
    d->stack[d->depth] = root;
    d->cursor[d->depth++] = 0;
    d->state[root] = 1;
    while (d->depth) {
        uint32_t u = d->stack[d->depth - 1];
        uint32_t w = next_edge(d, u, &d->cursor[d->depth - 1]);
        if (w == UINT32_MAX) {
            d->state[u] = 2;
            d->depth--;
        } else if (d->state[w] == 1) {
            report(d, w);
        } else if (d->state[w] == 0) {
            d->state[w] = 1;
            d->stack[d->depth] = w;
            d->cursor[d->depth++] = 0;
        }
    }
}

/* Search the view of one check at time t, given in parts (one per rank,
 * or one): entries {vertex, n, n port indices}. */
static void search_view(struct sim_monitor *mon, sim_time_t t, const uint32_t *const *part,
                        const size_t *len, unsigned nparts)
{
    size_t nv = mon->net->nports * SIM_PRIOS;
    struct dfs d = {
        .mon = mon,
        .t = t,
        .vertex = sim__xcalloc(nv + 1, 1),
        .state = sim__xcalloc(nv + 1, 1),
        .held = sim__xcalloc(nv + 1, sizeof *d.held),
        .stack = sim__xmalloc((nv + 1) * sizeof *d.stack),
        .cursor = sim__xmalloc((nv + 1) * sizeof *d.cursor),
    };
    for (unsigned r = 0; r < nparts; r++)
        for (size_t i = 0; i < len[r]; i += 2 + part[r][i + 1]) {
            d.vertex[part[r][i]] = 1;
            d.held[part[r][i]] = &part[r][i];
        }
    /* a queue that moved, or is no longer paused, ends its deadlocks */
    for (size_t v = 0; v < nv; v++)
        if (!d.vertex[v])
            mon->in_deadlock[v] = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (d.vertex[v] && !d.state[v])
            search(&d, v);
    free(d.vertex);
    free(d.state);
    free(d.held);
    free(d.stack);
    free(d.cursor);
}

static void put_word(struct sim_deadlock_views *v, uint32_t w)
{
    SIM_GROW(v->w, v->cap, v->n);
    v->w[v->n++] = w;
}

/* Append the vertices of the switches this process runs to v. */
static void take_view(struct sim_monitor *mon, struct sim_deadlock_views *v)
{
    struct sim_network *net = mon->net;
    for (size_t i = 0; i < net->cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        if (n->kind != CFG_SWITCH || sim_component_remote(net->sim, &n->comp))
            continue;
        const struct sim_switch *sw = sim__switch_of(n);
        for (uint32_t k = 0; k < n->nports; k++) {
            const struct sim_port *p = n->ports[k];
            size_t base = (size_t)(p - net->ports) * SIM_PRIOS;
            for (unsigned c = 0; c < SIM_PRIOS; c++) {
                const struct sw_queue *q = &sw->sp[k].q[c];
                bool vertex = (p->blocked & (1u << c)) && q->head != q->tail &&
                              q->sent == mon->last_sent[base + c];
                mon->last_sent[base + c] = q->sent;
                if (!vertex)
                    continue;
                put_word(v, (uint32_t)(base + c));
                size_t count = v->n;
                put_word(v, 0);
                /* the ports its frames came in from, each once, in port order */
                for (uint32_t in = 0; in < n->nports; in++)
                    for (uint32_t j = q->head; j != q->tail; j++)
                        if (q->ring[j & (q->cap - 1)].in == in) {
                            put_word(v, in);
                            v->w[count]++;
                            break;
                        }
            }
        }
    }
}

void sim__deadlock_check(struct sim_monitor *mon)
{
    sim_time_t t = sim_now(mon->net->sim);
    if (mon->views) {
        /* a split run: the time and the length, then the entries */
        struct sim_deadlock_views *v = mon->views;
        put_word(v, (uint32_t)(t >> 32));
        put_word(v, (uint32_t)t);
        size_t at = v->n;
        put_word(v, 0);
        take_view(mon, v);
        v->w[at] = (uint32_t)(v->n - at - 1);
        return;
    }
    struct sim_deadlock_views v = {0};
    take_view(mon, &v);
    const uint32_t *part = v.w;
    search_view(mon, t, &part, &v.n, 1);
    free(v.w);
}

void sim__deadlock_replay(struct sim_monitor *mon, const struct sim_deadlock_views *per_rank, unsigned nranks)
{
    const uint32_t **part = sim__xcalloc(nranks, sizeof *part);
    size_t *len = sim__xcalloc(nranks, sizeof *len), *at = sim__xcalloc(nranks, sizeof *at);
    /* every rank checked at the same times: the monitor runs on each */
    while (at[0] < per_rank[0].n) {
        sim_time_t t = (sim_time_t)per_rank[0].w[at[0]] << 32 | per_rank[0].w[at[0] + 1];
        for (unsigned r = 0; r < nranks; r++) {
            len[r] = per_rank[r].w[at[r] + 2];
            part[r] = &per_rank[r].w[at[r] + 3];
            at[r] += 3 + len[r];
        }
        search_view(mon, t, part, len, nranks);
    }
    free(part);
    free(len);
    free(at);
}
