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
 */
#include <stdlib.h>

#include "engine/util.h"
#include "fabric/fabric.h"
#include "observe/observe.h"

struct dfs {
    struct sim_monitor *mon;
    uint8_t *vertex, *state; /* state: 0 new, 1 on the stack, 2 done */
    uint32_t *stack, *cursor;
    uint32_t depth;
};

static bool holds_from(const struct sw_queue *q, uint32_t in)
{
    for (uint32_t i = q->head; i != q->tail; i++)
        if (q->ring[i & (q->cap - 1)].in == in)
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
    const struct sim_switch *sw = sim__switch_of(b);
    for (; *cursor < b->nports; (*cursor)++) {
        uint32_t w = (uint32_t)(b->ports[*cursor] - net->ports) * SIM_PRIOS + c;
        if (d->vertex[w] && holds_from(&sw->sp[*cursor].q[c], peer->index)) {
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
    dl->t = sim_now(mon->net->sim);
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

void sim__deadlock_check(struct sim_monitor *mon)
{
    struct sim_network *net = mon->net;
    size_t nv = net->nports * SIM_PRIOS;
    struct dfs d = {
        .mon = mon,
        .vertex = sim__xcalloc(nv + 1, 1),
        .state = sim__xcalloc(nv + 1, 1),
        .stack = sim__xmalloc((nv + 1) * sizeof *d.stack),
        .cursor = sim__xmalloc((nv + 1) * sizeof *d.cursor),
    };
    for (size_t i = 0; i < net->cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        if (n->kind != CFG_SWITCH)
            continue;
        const struct sim_switch *sw = sim__switch_of(n);
        for (uint32_t k = 0; k < n->nports; k++) {
            const struct sim_port *p = n->ports[k];
            size_t base = (size_t)(p - net->ports) * SIM_PRIOS;
            for (unsigned c = 0; c < SIM_PRIOS; c++) {
                const struct sw_queue *q = &sw->sp[k].q[c];
                d.vertex[base + c] = (p->blocked & (1u << c)) && q->head != q->tail &&
                                     q->sent == mon->last_sent[base + c];
                mon->last_sent[base + c] = q->sent;
                if (!d.vertex[base + c])
                    mon->in_deadlock[base + c] = 0;
            }
        }
    }
    for (uint32_t v = 0; v < nv; v++)
        if (d.vertex[v] && !d.state[v])
            search(&d, v);
    free(d.vertex);
    free(d.state);
    free(d.stack);
    free(d.cursor);
}
