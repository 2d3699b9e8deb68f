/* test_split.c - one model split over several engines fires every event in
 * the order one engine does.
 *
 * The model is a mesh of nodes that pass tokens over links whose delays
 * are multiples of 100 ps, so many tokens meet at a node at the same
 * picosecond; each node picks where a token goes next from its own random
 * stream and, now and then, schedules a second event for itself at the
 * same time. Run on one engine, then split over 2, 3 and 4 engines that
 * advance in conservative windows as long as the smallest delay of a cut
 * link (YAWNS: no event of a window can cause another in the same window
 * on another engine), exchanging the events for remote nodes between
 * windows: every node must see the same events, at the same times, in the
 * same order. This is the property an MPI run rests on; here the engines
 * share one process so the test needs no MPI. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "../check_run.h"

#define NODES 12
#define MAX_EVENTS 4000
#define HORIZON (200 * SIM_NS)
#define MAX_ENGINES 4

struct part;

struct node {
    struct sim_component comp;
    struct part *part;
    uint32_t log[MAX_EVENTS]; /* the token, then its time, per event */
    sim_time_t at[MAX_EVENTS];
    size_t n;
};

/* One engine of a split run and the nodes it holds (all are registered
 * everywhere, in the same order, so that ids agree; the others are
 * remote). */
struct part {
    struct sim *sim;
    struct node nodes[NODES];
};

struct split {
    struct part part[MAX_ENGINES];
    unsigned nparts;
    int owner[NODES];
    /* events for remote nodes, held until the window ends */
    struct sim_event out[1 << 16];
    uint32_t out_node[1 << 16];
    size_t nout;
};

enum { EV_TOKEN };
static const char *const names[] = {"token"};

/* Link delays between nodes: i and j are neighbours on a ring and across
 * it, each link 100 to 400 ps. */
static sim_time_t delay(unsigned i, unsigned j)
{
    unsigned lo = i < j ? i : j, hi = i < j ? j : i;
    return 100 * SIM_PS * (1 + (lo * 7 + hi * 3) % 4);
}

static unsigned neighbour(unsigned i, uint64_t r)
{
    switch (r % 3) {
    case 0: return (i + 1) % NODES;
    case 1: return (i + NODES - 1) % NODES;
    default: return (i + NODES / 2) % NODES;
    }
}

static void handle(struct sim_component *c, const struct sim_event *ev)
{
    struct node *nd = (struct node *)c;
    uint32_t token = (uint32_t)(uintptr_t)ev->ptr;
    if (nd->n < MAX_EVENTS) {
        nd->log[nd->n] = token;
        nd->at[nd->n++] = ev->time;
    }
    if (token & 0x80000000u)
        return; /* a node's note to itself */
    struct sim *sim = c->sim;
    uint64_t r = sim_rng_next(&c->rng);
    unsigned i = c->id, j = neighbour(i, r);
    if ((r >> 8) % 4 == 0)
        sim_schedule(sim, sim_now(sim), c, EV_TOKEN, (void *)(uintptr_t)(0x80000000u | token));
    if (sim_now(sim) + delay(i, j) <= HORIZON) {
        /* the target as this engine has it: on another engine's node the
         * event goes to the remote hook */
        sim_schedule(sim, sim_now(sim) + delay(i, j), &nd->part->nodes[j].comp, EV_TOKEN, ev->ptr);
    }
}

static const struct sim_component_ops node_ops = {
    .type = "node", .event_names = names, .nevents = 1, .handle = handle};

static void remote(void *arg, struct sim *sim, const struct sim_event *ev)
{
    (void)sim;
    struct split *s = arg;
    ck_assert_uint_lt(s->nout, sizeof s->out / sizeof s->out[0]);
    s->out_node[s->nout] = ev->target->id;
    s->out[s->nout++] = *ev;
}

static void build(struct part *p)
{
    static char node_names[NODES][8];
    p->sim = sim_create(42);
    for (unsigned i = 0; i < NODES; i++) {
        snprintf(node_names[i], sizeof node_names[i], "n%u", i);
        p->nodes[i].part = p;
        sim_component_add(p->sim, &p->nodes[i].comp, &node_ops, node_names[i]);
    }
    /* every node starts with two tokens at time 0: the same on any split,
     * since set-up runs the same everywhere */
    for (unsigned i = 0; i < NODES; i++)
        for (unsigned k = 0; k < 2; k++)
            sim_schedule(p->sim, 0, &p->nodes[i].comp, EV_TOKEN, (void *)(uintptr_t)(i * 2 + k));
}

/* Run the model split over n engines (node i on engine i * n / NODES). */
static void run_split(struct split *s, unsigned n)
{
    memset(s, 0, sizeof *s);
    s->nparts = n;
    sim_time_t lookahead = SIM_TIME_NEVER;
    for (unsigned i = 0; i < NODES; i++)
        s->owner[i] = (int)(i * n / NODES);
    for (unsigned i = 0; i < NODES; i++)
        for (unsigned j = 0; j < NODES; j++)
            if (s->owner[i] != s->owner[j] && delay(i, j) < lookahead)
                lookahead = delay(i, j);
    for (unsigned e = 0; e < n; e++) {
        build(&s->part[e]);
        for (unsigned i = 0; i < NODES; i++)
            if (s->owner[i] != (int)e)
                sim_component_set_remote(s->part[e].sim, &s->part[e].nodes[i].comp);
        sim_set_remote(s->part[e].sim, remote, s);
    }
    for (;;) {
        sim_time_t start = SIM_TIME_NEVER;
        for (unsigned e = 0; e < n; e++) {
            sim_time_t t = sim_next_time(s->part[e].sim);
            if (t < start)
                start = t;
        }
        if (start == SIM_TIME_NEVER)
            break;
        /* no engine can cause an event elsewhere before start + lookahead */
        for (unsigned e = 0; e < n; e++)
            sim_run(s->part[e].sim, n > 1 ? start + lookahead - 1 : SIM_TIME_NEVER);
        for (size_t k = 0; k < s->nout; k++) {
            struct part *to = &s->part[s->owner[s->out_node[k]]];
            struct sim_event ev = s->out[k];
            ck_assert_uint_ge(ev.time, start + lookahead);
            ev.target = &to->nodes[s->out_node[k]].comp;
            sim_schedule_event(to->sim, &ev);
        }
        s->nout = 0;
    }
}

static struct split one, many;

START_TEST(a_split_run_fires_the_events_of_one_engine)
{
    run_split(&one, 1);
    size_t total = 0;
    for (unsigned i = 0; i < NODES; i++)
        total += one.part[0].nodes[i].n;
    /* enough traffic, and tokens meet: equal times at one node */
    ck_assert_uint_gt(total, 2000);
    size_t ties = 0;
    for (unsigned i = 0; i < NODES; i++)
        for (size_t k = 1; k < one.part[0].nodes[i].n; k++)
            ties += one.part[0].nodes[i].at[k] == one.part[0].nodes[i].at[k - 1];
    ck_assert_uint_gt(ties, 100);
    for (unsigned n = 2; n <= MAX_ENGINES; n++) {
        run_split(&many, n);
        for (unsigned i = 0; i < NODES; i++) {
            const struct node *a = &one.part[0].nodes[i];
            const struct node *b = &many.part[many.owner[i]].nodes[i];
            ck_assert_uint_eq(a->n, b->n);
            ck_assert_mem_eq(a->log, b->log, a->n * sizeof a->log[0]);
            ck_assert_mem_eq(a->at, b->at, a->n * sizeof a->at[0]);
        }
        for (unsigned e = 0; e < n; e++)
            sim_destroy(many.part[e].sim);
    }
    sim_destroy(one.part[0].sim);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split");
    TCase *t = tcase_create("split");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, a_split_run_fires_the_events_of_one_engine);
    suite_add_tcase(s, t);
    return check_run(s);
}
