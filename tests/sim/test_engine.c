/* test_engine.c - Check suites for the simulator's engine (event order,
 * teardown, independence of simulations), random streams, units, the
 * frame pool, and the routes and paths of generated topologies. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/ideal.h"
#include "net/net.h"
#include "sim.h"
#include "engine/timer.h"
#include "engine/units.h"
#include "engine/util.h"
#include "../check_run.h"
#include "config_text.h"

/* ---- a component that records the order its events fire in ---------------- */
/* events carry a number in their pointer */
static void *tag(uint32_t v) { return (void *)(uintptr_t)v; }

#define MAX_LOG 1024

/* The order events fired in, across recorders that share one. */
struct order {
    uint32_t v[8];
    size_t n;
};

struct recorder {
    struct sim_component comp;
    struct order *order; /* or NULL */
    uint32_t log[MAX_LOG];
    sim_time_t at[MAX_LOG];
    size_t n;
    int finis;
    /* when handling event `spawn_on`, schedule `spawn` more at the same time */
    uint32_t spawn_on, spawn;
    /* events past MAX_LOG, or not at the clock's time, or of another kind:
     * counted here and asserted once after the run, since Check records
     * every passing assertion and a handler runs for every event */
    uint32_t overflow, wrong_time, wrong_kind;
};

/* A component numbers and names its own event kinds: the engine knows none. */
enum { EV_RECORD, EV_OTHER };
static const char *const rec_event_names[] = {"record", "other"};

static void rec_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct recorder *r = (struct recorder *)c;
    if (r->n >= MAX_LOG) {
        r->overflow++;
        return;
    }
    uint32_t v = (uint32_t)(uintptr_t)ev->ptr;
    r->log[r->n] = v;
    r->at[r->n++] = ev->time;
    if (r->order && r->order->n < sizeof r->order->v / sizeof r->order->v[0])
        r->order->v[r->order->n++] = v;
    r->wrong_time += ev->time != sim_now(c->sim);
    r->wrong_kind += sim_event_kind(ev) != EV_RECORD || strcmp(sim_event_name(ev), "record") != 0;
    if (r->spawn && v == r->spawn_on)
        for (uint32_t i = 0; i < r->spawn; i++)
            sim_schedule(c->sim, ev->time, c, EV_RECORD, tag(1000 + i));
}

static void rec_fini(struct sim_component *c) { ((struct recorder *)c)->finis++; }

static void rec_check(const struct recorder *r)
{
    ck_assert_uint_eq(r->overflow, 0);
    ck_assert_uint_eq(r->wrong_time, 0);
    ck_assert_uint_eq(r->wrong_kind, 0);
}

static const struct sim_component_ops rec_ops = {
    .type = "recorder",
    .event_names = rec_event_names,
    .nevents = 2,
    .handle = rec_handle,
    .fini = rec_fini,
};

START_TEST(equal_times_fire_in_schedule_order)
{
    struct sim *sim = sim_create(1);
    struct recorder r = {0};
    sim_component_add(sim, &r.comp, &rec_ops, "r");
    /* 200 events over 4 timestamps, scheduled in a scrambled time order */
    for (uint32_t i = 0; i < 200; i++)
        sim_schedule(sim, (sim_time_t)((i * 7) % 4) * 10, &r.comp, EV_RECORD, tag(i));
    ck_assert_uint_eq(sim_events_pending(sim), 200);
    ck_assert_uint_eq(sim_run(sim, SIM_TIME_NEVER), 200);
    rec_check(&r);
    size_t disorder = 0, first = 0;
    for (size_t k = 1; k < r.n; k++) {
        /* in time order; at equal times, scheduled earlier fires first */
        if (r.at[k - 1] > r.at[k] || (r.at[k - 1] == r.at[k] && r.log[k - 1] >= r.log[k]))
            if (!disorder++)
                first = k;
    }
    ck_assert_msg(disorder == 0, "%zu events out of order, the first at %zu", disorder, first);
    ck_assert_uint_eq(sim_events_pending(sim), 0);
    sim_destroy(sim);
    ck_assert_int_eq(r.finis, 1);
    /* names come from the target's component; unknown kinds are "?" */
    struct sim_event ev = {.key = EV_OTHER, .target = &r.comp};
    ck_assert_str_eq(sim_event_name(&ev), "other");
    ev.key = 2;
    ck_assert_str_eq(sim_event_name(&ev), "?");
}
END_TEST

START_TEST(events_a_component_schedules_now_fire_after_its_own_already_due)
{
    struct sim *sim = sim_create(1);
    struct recorder r = {.spawn_on = 0, .spawn = 3};
    sim_component_add(sim, &r.comp, &rec_ops, "r");
    sim_schedule(sim, 5, &r.comp, EV_RECORD, tag(0));
    sim_schedule(sim, 5, &r.comp, EV_RECORD, tag(1));
    sim_schedule(sim, 6, &r.comp, EV_RECORD, tag(2));
    sim_run(sim, SIM_TIME_NEVER);
    rec_check(&r);
    ck_assert_uint_eq(r.n, 6);
    /* 1 (set-up's) and the three r scheduled take turns by their sources'
     * draw for the time; r's own fire in the order r scheduled them */
    ck_assert_uint_eq(r.log[0], 0);
    ck_assert_uint_eq(r.log[5], 2);
    uint32_t spawned[3], n = 0;
    for (size_t j = 1; j < 5; j++)
        if (r.log[j] != 1)
            spawned[n++] = r.log[j];
    ck_assert_uint_eq(n, 3);
    for (uint32_t i = 0; i < 3; i++)
        ck_assert_uint_eq(spawned[i], 1000 + i);
    sim_destroy(sim);
}
END_TEST

/* Equal-time events fire by their target's domain first; within a
 * domain, the sources of equal-time events take turns that change with
 * the time, and one source's own fire in the order it scheduled them. */
#define TURNS 256

struct sender {
    struct sim_component comp;
    struct sim_component *to;
    uint32_t number;
};

static void sender_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sender *s = (struct sender *)c;
    sim_schedule(c->sim, ev->time + 100, s->to, EV_RECORD, tag(s->number));
}

static const struct sim_component_ops sender_ops = {.type = "sender", .handle = sender_handle};

START_TEST(equal_times_fire_by_domain_then_by_turn)
{
    struct sim *sim = sim_create(7);
    struct order order = {0};
    struct recorder a = {.order = &order}, b = {.order = &order}, c = {.order = &order};
    sim_component_add(sim, &a.comp, &rec_ops, "a");
    sim_component_add(sim, &b.comp, &rec_ops, "b");
    sim_component_add(sim, &c.comp, &rec_ops, "c");
    struct sender x = {.to = &b.comp, .number = 1}, y = {.to = &b.comp, .number = 2};
    sim_component_add(sim, &x.comp, &sender_ops, "x");
    sim_component_add(sim, &y.comp, &sender_ops, "y");
    /* a registered first, but in the last domain; b and c share one */
    sim_component_set_domain(&a.comp, 9);
    sim_component_set_domain(&b.comp, 4);
    sim_component_set_domain(&c.comp, 4);
    /* at time 0: c, a, b in that schedule order, by one source (set-up) */
    sim_schedule(sim, 0, &c.comp, EV_RECORD, tag(10));
    sim_schedule(sim, 0, &a.comp, EV_RECORD, tag(11));
    sim_schedule(sim, 0, &b.comp, EV_RECORD, tag(12));
    for (uint32_t i = 0; i < TURNS; i++) {
        sim_schedule(sim, 1000 * (i + 1), &x.comp, EV_RECORD, NULL);
        sim_schedule(sim, 1000 * (i + 1), &y.comp, EV_RECORD, NULL);
    }
    sim_run(sim, SIM_TIME_NEVER);
    rec_check(&a);
    rec_check(&b);
    rec_check(&c);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(b.n, 1 + 2 * TURNS);
    /* at time 0, domain 4 (c, then b: the source's order) before domain 9 */
    ck_assert_uint_ge(order.n, 3);
    ck_assert_uint_eq(order.v[0], 10);
    ck_assert_uint_eq(order.v[1], 12);
    ck_assert_uint_eq(order.v[2], 11);
    /* x and y reach b at the same picosecond TURNS times: each goes
     * first at some, neither at all */
    uint32_t x_first = 0;
    for (uint32_t i = 0; i < TURNS; i++) {
        ck_assert_uint_eq(b.at[1 + 2 * i], b.at[2 + 2 * i]);
        ck_assert_uint_ne(b.log[1 + 2 * i], b.log[2 + 2 * i]);
        x_first += b.log[1 + 2 * i] == 1;
    }
    ck_assert_uint_ge(x_first, TURNS / 4);
    ck_assert_uint_le(x_first, 3 * TURNS / 4);
    sim_destroy(sim);
}
END_TEST

/* Events near and far (the wheel and the heap), many at equal times,
 * scheduled before and during the run: they fire in (time, seq) order. */
struct chaos {
    struct sim_component comp;
    struct sim_rng rng;
    sim_time_t last_time;
    uint64_t last_key, fired, spawned;
    uint64_t disorder, first_disorder; /* asserted after the run */
};

static sim_time_t chaos_delay(struct sim_rng *rng)
{
    switch (sim_rng_below(rng, 5)) {
    case 0:
        return 0;
    case 1:
        return sim_rng_below(rng, 4) * 512; /* slot boundaries */
    case 2:
        return sim_rng_below(rng, 3 * SIM_US);
    case 3:
        return sim_rng_below(rng, SIM_MS);
    default:
        return 2 * SIM_US + sim_rng_below(rng, 3) * 1024; /* about the wheel's edge */
    }
}

static void chaos_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct chaos *x = (struct chaos *)c;
    /* an event scheduled for the time now (ptr set) fires next whatever
     * its key; the others fire in (time, key) order */
    bool now = ev->ptr != NULL;
    if (x->fired && (ev->time < x->last_time ||
                     (!now && ev->time == x->last_time && x->last_key != UINT64_MAX &&
                      ev->key <= x->last_key)))
        if (!x->disorder++)
            x->first_disorder = x->fired;
    if (!x->fired || ev->time != x->last_time)
        x->last_key = UINT64_MAX;
    x->last_time = ev->time;
    if (!now)
        x->last_key = ev->key;
    x->fired++;
    for (uint64_t n = sim_rng_below(&x->rng, 3); n && x->spawned < 100000; n--, x->spawned++) {
        sim_time_t d = chaos_delay(&x->rng);
        sim_schedule(c->sim, ev->time + d, c, EV_RECORD, d ? NULL : x);
    }
}

static const struct sim_component_ops chaos_ops = {.type = "chaos", .handle = chaos_handle};

START_TEST(near_and_far_events_fire_in_order)
{
    struct sim *sim = sim_create(3);
    struct chaos x = {0};
    sim_component_add(sim, &x.comp, &chaos_ops, "chaos");
    sim_rng_seed(&x.rng, 3, "test");
    for (int i = 0; i < 2000; i++, x.spawned++)
        sim_schedule(sim, chaos_delay(&x.rng), &x.comp, EV_RECORD, NULL);
    sim_run(sim, SIM_TIME_NEVER);
    ck_assert_uint_eq(x.fired, x.spawned);
    ck_assert_msg(x.disorder == 0, "%" PRIu64 " events out of (time, seq) order, the first the %" PRIu64 "th",
                  x.disorder, x.first_disorder);
    ck_assert_uint_eq(sim_events_pending(sim), 0);
    sim_destroy(sim);
}
END_TEST

/* Many sources, their events scheduled as the run starts: slots of a
 * few events and of hundreds, times spread inside a slot and at its
 * edges, and one source's several events at one time. The engine sorts a
 * slot by a shortened key and puts the rest right after; what fires must
 * be in (time, key, target) order exactly. */
#define SOURCES 400
#define PER_SOURCE 6

struct fired {
    sim_time_t time;
    uint64_t key;
    uint32_t target;
};

struct source {
    struct sim_component comp;
    struct source *all; /* the SOURCES of them */
    struct fired *log;
    size_t *nlog;
};

static void source_init(struct sim_component *c)
{
    struct source *s = (struct source *)c;
    static const sim_time_t times[] = {0, 0, 1, 300, 511, 512, 513, 4096, 4096, 9000, 2 * SIM_US + 7, SIM_MS};
    for (int i = 0; i < PER_SOURCE; i++) {
        sim_time_t t = times[sim_rng_below(&c->rng, sizeof times / sizeof times[0])];
        /* the first sources keep the later times to themselves: some slots stay short */
        if (c->id < 8)
            t += 50 * SIM_US;
        struct source *to = &s->all[sim_rng_below(&c->rng, c->id < 8 ? 8 : SOURCES)];
        sim_schedule(c->sim, t, &to->comp, EV_RECORD, NULL);
    }
}

static void source_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct source *s = (struct source *)c;
    s->log[(*s->nlog)++] = (struct fired){ev->time, ev->key, c->id};
}

static const struct sim_component_ops source_ops = {.type = "source", .init = source_init, .handle = source_handle};

START_TEST(many_sources_fire_in_key_order)
{
    struct sim *sim = sim_create(5);
    static struct source all[SOURCES];
    static struct fired log[SOURCES * PER_SOURCE];
    size_t nlog = 0;
    char names[SOURCES][8];
    for (int i = 0; i < SOURCES; i++) {
        snprintf(names[i], sizeof names[i], "s%d", i);
        all[i] = (struct source){.all = all, .log = log, .nlog = &nlog};
        sim_component_add(sim, &all[i].comp, &source_ops, names[i]);
    }
    sim_run(sim, SIM_TIME_NEVER);
    ck_assert_uint_eq(nlog, SOURCES * PER_SOURCE);
    size_t disorder = 0, first = 0;
    for (size_t k = 1; k < nlog; k++) {
        const struct fired *a = &log[k - 1], *b = &log[k];
        bool ordered = a->time < b->time ||
                       (a->time == b->time && (a->key < b->key || (a->key == b->key && a->target <= b->target)));
        if (!ordered && !disorder++)
            first = k;
    }
    ck_assert_msg(disorder == 0, "%zu events out of (time, key, target) order, the first the %zuth", disorder, first);
    sim_destroy(sim);
}
END_TEST

START_TEST(run_stops_at_the_horizon_and_resumes)
{
    struct sim *sim = sim_create(1);
    struct recorder r = {0};
    sim_component_add(sim, &r.comp, &rec_ops, "r");
    for (uint32_t i = 0; i < 10; i++)
        sim_schedule(sim, i * SIM_US, &r.comp, EV_RECORD, tag(i));
    ck_assert_uint_eq(sim_run(sim, 4 * SIM_US), 5);
    ck_assert_uint_eq(sim_now(sim), 4 * SIM_US);
    ck_assert_uint_eq(sim_events_pending(sim), 5);
    ck_assert_uint_eq(sim_run(sim, SIM_TIME_NEVER), 5);
    ck_assert_uint_eq(sim_events_pending(sim), 0);
    ck_assert_uint_eq(sim_events_processed(sim), 10);
    sim_destroy(sim);
}
END_TEST

START_TEST(teardown_with_pending_events_runs_fini_and_frees_them)
{
    struct sim *sim = sim_create(1);
    struct recorder a = {0}, b = {0};
    sim_component_add(sim, &a.comp, &rec_ops, "a");
    sim_component_add(sim, &b.comp, &rec_ops, "b");
    for (uint32_t i = 0; i < 1000; i++)
        sim_schedule(sim, i, i % 2 ? &a.comp : &b.comp, EV_RECORD, tag(i));
    sim_run(sim, 99);
    ck_assert_uint_eq(sim_events_pending(sim), 900);
    sim_destroy(sim); /* the leak checker of the sanitizer build sees the rest */
    ck_assert_int_eq(a.finis, 1);
    ck_assert_int_eq(b.finis, 1);
}
END_TEST

START_TEST(two_simulations_in_one_process_are_independent)
{
    struct sim *s1 = sim_create(42), *s2 = sim_create(42);
    struct recorder r1 = {0}, r2 = {0};
    sim_component_add(s1, &r1.comp, &rec_ops, "r");
    sim_component_add(s2, &r2.comp, &rec_ops, "r");
    /* same seed and name: same stream; drawing from one leaves the other */
    uint64_t x1 = sim_rng_next(&r1.comp.rng);
    uint64_t x2 = sim_rng_next(&r2.comp.rng);
    ck_assert_uint_eq(x1, x2);
    for (uint32_t i = 0; i < 50; i++) {
        sim_schedule(s1, i, &r1.comp, EV_RECORD, tag(i));
        sim_schedule(s2, 100 - i, &r2.comp, EV_RECORD, tag(i));
    }
    sim_run(s1, 10);
    ck_assert_uint_eq(sim_events_pending(s2), 50);
    ck_assert_uint_eq(sim_now(s2), 0);
    sim_run(s2, SIM_TIME_NEVER);
    sim_run(s1, SIM_TIME_NEVER);
    ck_assert_uint_eq(r1.n, 50);
    ck_assert_uint_eq(r2.n, 50);
    ck_assert_uint_eq(r2.log[0], 49);
    sim_destroy(s1);
    sim_destroy(s2);
}
END_TEST

START_TEST(random_streams_depend_on_seed_and_name)
{
    struct sim_rng a, b, c;
    sim_rng_seed(&a, 1, "h0-0");
    sim_rng_seed(&b, 1, "h0-1");
    sim_rng_seed(&c, 2, "h0-0");
    uint64_t va = sim_rng_next(&a);
    ck_assert_uint_ne(va, sim_rng_next(&b));
    ck_assert_uint_ne(va, sim_rng_next(&c));
    uint64_t hist[10] = {0}, out_of_range = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = sim_rng_below(&a, 10);
        if (v < 10)
            hist[v]++;
        double u = sim_rng_unit(&a);
        out_of_range += v >= 10 || !(u >= 0 && u < 1);
    }
    ck_assert_uint_eq(out_of_range, 0);
    for (int i = 0; i < 10; i++) /* 10000 expected; 5 sigma is 475 */
        ck_assert(hist[i] > 9500 && hist[i] < 10500);
}
END_TEST

/* ---- units ------------------------------------------------------------------------- */
START_TEST(units_are_exact)
{
    uint64_t v;
    double p;
    ck_assert_ptr_null(sim__parse_time("1.5us", &v));
    ck_assert_uint_eq(v, 1500000);
    ck_assert_ptr_null(sim__parse_time("250ns", &v));
    ck_assert_uint_eq(v, 250000);
    ck_assert_ptr_null(sim__parse_time("2s", &v));
    ck_assert_uint_eq(v, 2 * SIM_S);
    ck_assert_ptr_null(sim__parse_time("1e-6s", &v));
    ck_assert_uint_eq(v, SIM_US);
    ck_assert_ptr_null(sim__parse_rate("100Gbps", &v));
    ck_assert_uint_eq(v, UINT64_C(100000000000));
    ck_assert_ptr_null(sim__parse_rate("2.5Gbps", &v));
    ck_assert_uint_eq(v, UINT64_C(2500000000));
    ck_assert_ptr_null(sim__parse_size("64KiB", &v));
    ck_assert_uint_eq(v, 65536);
    ck_assert_ptr_null(sim__parse_size("4096", &v));
    ck_assert_uint_eq(v, 4096);
    ck_assert_ptr_null(sim__parse_size("1.5KB", &v));
    ck_assert_uint_eq(v, 1500);
    ck_assert_ptr_null(sim__parse_prob("1e-6", &p));
    ck_assert(p == 1e-6);
    ck_assert_ptr_null(sim__parse_prob("0.5%", &p));
    ck_assert(p == 0.005);
    ck_assert_ptr_null(sim__parse_uint("0x1234", UINT64_MAX, &v));
    ck_assert_uint_eq(v, 0x1234);
}
END_TEST

START_TEST(bad_units_are_refused)
{
    uint64_t v;
    double p;
    const char *bad_times[] = {"10", "1.5", "us", "1.5 parsecs", "0.1ps", "-1us", "1e99s", ""};
    for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++)
        ck_assert_ptr_nonnull(sim__parse_time(bad_times[i], &v));
    const char *bad_rates[] = {"100", "100Gbs", "100GB", "0Gbps", "1.5bps"};
    for (size_t i = 0; i < sizeof bad_rates / sizeof *bad_rates; i++)
        ck_assert_ptr_nonnull(sim__parse_rate(bad_rates[i], &v));
    const char *bad_sizes[] = {"1.5", "64Kib", "x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++)
        ck_assert_ptr_nonnull(sim__parse_size(bad_sizes[i], &v));
    ck_assert_ptr_nonnull(sim__parse_prob("1.5", &p));
    ck_assert_ptr_nonnull(sim__parse_prob("nan", &p));
    ck_assert_ptr_nonnull(sim__parse_prob("101%", &p));
    ck_assert_ptr_nonnull(sim__parse_uint("12a", UINT64_MAX, &v));
    ck_assert_ptr_nonnull(sim__parse_uint("300", 255, &v));
}
END_TEST

START_TEST(serialization_time_rounds_up)
{
    ck_assert_uint_eq(sim__ser_time(1, UINT64_C(100000000000)), 80);
    ck_assert_uint_eq(sim__ser_time(1, UINT64_C(400000000000)), 20);
    ck_assert_uint_eq(sim__ser_time(1, UINT64_C(3000000000)), 2667); /* 2666.67 */
}
END_TEST

/* ---- the frame pool ------------------------------------------------------------------ */
/* Enough frames of the largest sizes to take several 2 MiB chunks, mixed
 * with small ones: every frame holds what it was asked for, has the part
 * a switch reads (SIM_FRAME_LINE_AT on) start a cache line, and shares no
 * byte with another. */
#define POOL_FRAMES 3000

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

START_TEST(frame_pool_frames_are_distinct_and_reused)
{
    static const uint32_t caps[] = {60, 4221, 100, 9216, 1500, 4221, 300};
    struct sim_frame_pool pool = {0};
    struct sim_frame **f = calloc(POOL_FRAMES, sizeof *f);
    size_t chunks = 0;
    ck_assert_ptr_nonnull(f);
    for (int round = 0; round < 2; round++) {
        size_t small = 0, misaligned = 0, overwritten = 0;
        for (size_t i = 0; i < POOL_FRAMES; i++) {
            uint32_t cap = caps[i % (sizeof caps / sizeof caps[0])];
            f[i] = sim__frame_alloc(&pool, cap);
            if (!f[i])
                ck_abort_msg("frame %zu of %u bytes not allocated", i, cap);
            small += sim__frame_cap(f[i]) < cap;
            misaligned += ((uintptr_t)f[i] + SIM_FRAME_LINE_AT) % 64 != 0;
            memset(f[i]->data, (int)(i % 251), sim__frame_cap(f[i]));
        }
        for (size_t i = 0; i < POOL_FRAMES; i++)
            overwritten += !all_bytes(f[i]->data, sim__frame_cap(f[i]), (uint8_t)(i % 251));
        ck_assert_uint_eq(small, 0);
        ck_assert_uint_eq(misaligned, 0);
        ck_assert_uint_eq(overwritten, 0);
        /* the second round takes the frames back from the free lists */
        if (round == 0)
            chunks = pool.nchunks;
        else
            ck_assert_uint_eq(pool.nchunks, chunks);
        for (size_t i = 0; i < POOL_FRAMES; i++)
            sim__frame_free(&pool, f[i]);
    }
    ck_assert_ptr_null(sim__frame_alloc(&pool, 9217));
    sim__pool_fini(&pool);
    free(f);
}
END_TEST

/* A queue's ring keeps its items in order as it grows from a first ring
 * in the arena to malloc's, with its head wrapped around the end; many
 * first rings share the arena's chunks, each on its own lines. */
START_TEST(queue_rings_keep_their_order_as_they_grow)
{
    struct sim_network net = {0};
    uint32_t *ring = NULL, cap = 0, head = 0, tail = 0, popped = 0;
    for (uint32_t pushed = 0; pushed < 1000; pushed++) {
        if (tail - head == cap)
            ring = sim__ring_grow(&net, ring, &cap, head, tail, sizeof *ring);
        ring[tail++ & (cap - 1)] = pushed;
        /* take one back every third push: the head moves round the ring */
        if (pushed % 3 == 0)
            ck_assert_uint_eq(ring[head++ & (cap - 1)], popped++);
    }
    ck_assert_uint_eq(cap, 1024);
    while (head != tail)
        ck_assert_uint_eq(ring[head++ & (cap - 1)], popped++);
    ck_assert_uint_eq(popped, 1000);
    sim__ring_free(ring, cap);
    /* first rings: distinct, line-aligned, from few chunks */
    uint64_t *first[4096];
    for (size_t i = 0; i < 4096; i++) {
        uint32_t c = 0;
        first[i] = sim__ring_grow(&net, NULL, &c, 0, 0, sizeof **first);
        ck_assert_uint_eq(c, SIM_FIRST_RING);
        ck_assert_uint_eq((uintptr_t)first[i] % 64, 0);
        for (size_t k = 0; k < SIM_FIRST_RING; k++)
            first[i][k] = i;
    }
    for (size_t i = 0; i < 4096; i++)
        for (size_t k = 0; k < SIM_FIRST_RING; k++)
            ck_assert_uint_eq(first[i][k], i);
    ck_assert_uint_le(net.rings.nchunks, 2);
    sim__arena_free(&net.rings);
    ck_assert_uint_eq(net.rings.nchunks, 0);
}
END_TEST

/* ---- routes in generated topologies -------------------------------------------------- */
START_TEST(fat_tree_paths_have_the_expected_lengths)
{
    struct sim_config *cfg = config_text_load(
        "payload: none\n"
        "topology: {generate: {kind: fat-tree, k: 4}}\n"
        "workload: {messages: [{src: h0, dst: h15, size: 1}]}\n");
    struct sim_network *net = sim_network_create(cfg);
    ck_assert_uint_eq(net->nhosts, 16);
    /* k = 4: 2 hosts per edge switch, 4 per pod */
    for (uint32_t a = 0; a < net->nhosts; a++) {
        for (uint32_t b = 0; b < net->nhosts; b++) {
            if (a == b)
                continue;
            uint32_t want = a / 2 == b / 2 ? 2 : a / 4 == b / 4 ? 4 : 6;
            for (uint16_t sport = 0xc000; sport < 0xc010; sport++) {
                struct sim_path p;
                sim__path(net, a, b, sport, &p);
                if (p.n != want) /* no passing assertion per path: Check would record each */
                    ck_abort_msg("h%u to h%u, port 0x%x: %u hops, want %u", a, b, sport, p.n, want);
                sim__path_free(&p);
            }
        }
    }
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

START_TEST(equal_cost_paths_are_all_used)
{
    struct sim_config *cfg = config_text_load(
        "payload: none\n"
        "topology: {generate: {kind: leaf-spine, leaves: 2, spines: 4, hosts_per_leaf: 1}}\n"
        "workload: {messages: [{src: h0, dst: h1, size: 1}]}\n");
    struct sim_network *net = sim_network_create(cfg);
    /* every spine carries some of 64 flows from h0 to h1 */
    bool seen[4] = {false};
    const struct sim_node *leaf = net->nodes[0];
    for (uint16_t sport = 0xc000; sport < 0xc040; sport++) {
        uint32_t port = sim__route(net, leaf, 1, sim__flow_hash(0, 1, sport, leaf->index));
        ck_assert_uint_lt(port, leaf->nports);
        const struct sim_node *spine = leaf->ports[port]->peer->node;
        ck_assert_int_eq(strncmp(net->cfg->nodes[spine->index].name, "spine", 5), 0);
        seen[spine->index - 2] = true;
    }
    for (int i = 0; i < 4; i++)
        ck_assert(seen[i]);
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

/* The node a switch's route to host h leads to, by name. */
static const char *next_hop(const struct sim_network *net, const struct sim_node *sw, uint32_t h)
{
    uint32_t port = sim__route(net, sw, h, 0);
    ck_assert_uint_lt(port, sw->nports);
    return net->cfg->nodes[sw->ports[port]->peer->node->index].name;
}

/* A switch's rule (net.h) gives the code its table holds, for every
 * switch and destination; with dmodk the port is the one Al-Fares et al.
 * (SIGCOMM 2008, section 3.4) pick: an edge switch sends up to the
 * aggregation switch dst mod k/2 of its pod, an aggregation switch up to
 * its core (dst / (k/2)) mod k/2, a core down to the destination's pod. */
static void check_fat_tree_rules(unsigned k, const char *routing)
{
    char text[256];
    snprintf(text, sizeof text,
             "payload: none\n"
             "topology: {routing: %s, generate: {kind: fat-tree, k: %u}}\n"
             "workload: {messages: [{src: h0, dst: h1, size: 1}]}\n",
             routing, k);
    struct sim_config *cfg = config_text_load(text);
    struct sim_network *net = sim_network_create(cfg);
    uint32_t half = k / 2, bad = 0, wrong = 0;
    ck_assert_uint_eq(net->nhosts, k * k * k / 4);
    for (uint32_t i = 0; i < cfg->nnodes; i++) {
        const struct sim_node *sw = net->nodes[i];
        if (sw->kind != CFG_SWITCH)
            continue;
        const struct sim_route_rule *u = &net->routes.rule[net->routes.slot_of_node[i]];
        ck_assert_msg(u->fits, "%s has no rule", cfg->nodes[i].name);
        unsigned at;
        char want[32];
        for (uint32_t h = 0; h < net->nhosts; h++) {
            if (sim__route_rule_code(u, h) != sim__route_table_code(net, sw, h))
                bad++;
            if (strcmp(routing, "dmodk"))
                continue;
            uint32_t pod = h / (half * half), edge = h / half;
            if (sscanf(cfg->nodes[i].name, "edge%u", &at) == 1) {
                if (at == edge)
                    snprintf(want, sizeof want, "h%u", h);
                else
                    snprintf(want, sizeof want, "agg%u", at / half * half + h % half);
            } else if (sscanf(cfg->nodes[i].name, "agg%u", &at) == 1) {
                if (at / half == pod)
                    snprintf(want, sizeof want, "edge%u", edge);
                else
                    snprintf(want, sizeof want, "core%u", at % half * half + h / half % half);
            } else {
                ck_assert_int_eq(sscanf(cfg->nodes[i].name, "core%u", &at), 1);
                snprintf(want, sizeof want, "agg%u", pod * half + at / half);
            }
            if (strcmp(next_hop(net, sw, h), want)) /* no passing assertion per pair: Check records each */
                wrong++;
        }
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(wrong, 0);
    sim_network_destroy(net);
    sim_config_free(cfg);
}

START_TEST(fat_tree_rules_give_the_tables_routes)
{
    check_fat_tree_rules(4, "dmodk");
    check_fat_tree_rules(8, "dmodk");
    check_fat_tree_rules(4, "ecmp");
    check_fat_tree_rules(8, "ecmp");
}
END_TEST

/* A timer has at most one live event: arming later keeps the earlier
 * event, arming earlier supersedes it, cancelling makes it stale. */
struct timed {
    struct sim_component comp;
    struct sim_timer timer;
    sim_time_t fired[8];
    unsigned nfired;
};

static void timed_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct timed *t = (struct timed *)c;
    if (sim_timer_fire(&t->timer, ev->time))
        t->fired[t->nfired++] = ev->time;
}

static const struct sim_component_ops timed_ops = {.type = "timed", .handle = timed_handle};

START_TEST(timers_fire_once_at_their_earliest_deadline)
{
    struct sim *sim = sim_create(1);
    struct timed t = {0};
    sim_timer_init(&t.timer);
    sim_component_add(sim, &t.comp, &timed_ops, "t");
    ck_assert(!sim_timer_armed(&t.timer));
    sim_timer_arm(&t.timer, sim, 50, &t.comp, 0, NULL);
    sim_timer_arm(&t.timer, sim, 80, &t.comp, 0, NULL); /* later: keeps 50 */
    ck_assert_uint_eq(sim_events_pending(sim), 1);
    sim_timer_arm(&t.timer, sim, 20, &t.comp, 0, NULL); /* earlier: 50 goes stale */
    ck_assert_uint_eq(sim_events_pending(sim), 2);
    sim_run(sim, SIM_TIME_NEVER);
    ck_assert_uint_eq(t.nfired, 1);
    ck_assert_uint_eq(t.fired[0], 20);
    ck_assert(!sim_timer_armed(&t.timer));

    sim_timer_arm(&t.timer, sim, 100, &t.comp, 0, NULL);
    sim_timer_cancel(&t.timer);
    sim_timer_arm(&t.timer, sim, 120, &t.comp, 0, NULL); /* after a cancel: schedules anew */
    sim_run(sim, SIM_TIME_NEVER);
    ck_assert_uint_eq(t.nfired, 2);
    ck_assert_uint_eq(t.fired[1], 120);
    sim_destroy(sim);
}
END_TEST

/* ---- prefetch hooks ----------------------------------------------------------- */
/* The hook's calls, in order: the event's tag, the step, and how many
 * events had fired then. */
#define PF_EVENTS 400
static struct {
    uint32_t tag[4 * PF_EVENTS], step[4 * PF_EVENTS], fired_before[4 * PF_EVENTS];
    size_t n;
    uint32_t order[PF_EVENTS]; /* tags in the order they fired */
    size_t fired;
} pf;

static void pf_prefetch(const struct sim_component *c, const struct sim_event *ev, unsigned step)
{
    (void)c;
    if (pf.n < 4 * PF_EVENTS) {
        pf.tag[pf.n] = (uint32_t)(uintptr_t)ev->ptr;
        pf.step[pf.n] = step;
        pf.fired_before[pf.n++] = (uint32_t)pf.fired;
    }
}

static void pf_handle(struct sim_component *c, const struct sim_event *ev)
{
    (void)c;
    if (pf.fired < PF_EVENTS)
        pf.order[pf.fired++] = (uint32_t)(uintptr_t)ev->ptr;
}

static const struct sim_component_ops pf_ops = {.type = "pf", .handle = pf_handle, .prefetch = pf_prefetch};

/* 200 events spread over slots of a few each, then 200 for one picosecond
 * (one slot, sorted at once); returns how many fired. */
static size_t pf_run(bool prefetch)
{
    memset(&pf, 0, sizeof pf);
    struct sim *sim = sim_create(3);
    struct sim_component a, b;
    sim_component_add(sim, &a, &pf_ops, "a");
    sim_component_add(sim, &b, &pf_ops, "b");
    sim_set_prefetch(sim, prefetch);
    for (uint32_t i = 0; i < PF_EVENTS / 2; i++)
        sim_schedule(sim, (sim_time_t)(i * 37 % 97) * 100, i % 2 ? &a : &b, 0, tag(i));
    for (uint32_t i = PF_EVENTS / 2; i < PF_EVENTS; i++)
        sim_schedule(sim, SIM_US, i % 3 ? &a : &b, 0, tag(i));
    sim_run(sim, SIM_TIME_NEVER);
    sim_destroy(sim);
    return pf.fired;
}

START_TEST(prefetch_hooks_see_events_in_steps_before_they_fire)
{
    ck_assert_uint_eq(pf_run(false), PF_EVENTS);
    ck_assert_uint_eq(pf.n, 0);
    uint32_t order[PF_EVENTS];
    memcpy(order, pf.order, sizeof order);
    ck_assert_uint_eq(pf_run(true), PF_EVENTS);
    /* a hint: the events fire in the same order */
    ck_assert_mem_eq(order, pf.order, sizeof order);
    uint32_t at[PF_EVENTS]; /* where each tag fired */
    for (uint32_t i = 0; i < PF_EVENTS; i++)
        at[pf.order[i]] = i;
    uint32_t last_step[PF_EVENTS], whole = 0;
    memset(last_step, 0xff, sizeof last_step);
    for (size_t k = 0; k < pf.n; k++) {
        uint32_t t = pf.tag[k];
        /* before the event fired, step after step */
        ck_assert_uint_lt(pf.fired_before[k], at[t]);
        ck_assert(last_step[t] == UINT32_MAX ? 1 : pf.step[k] == last_step[t] + 1);
        last_step[t] = pf.step[k];
        whole += pf.step[k] == SIM_PREFETCH_STEPS - 1 && at[t] >= PF_EVENTS / 2;
    }
    /* the picosecond's slot: every event but its first has the last step
     * (the next event's), all but the first few every step */
    ck_assert_uint_eq(whole, PF_EVENTS / 2 - 1);
    uint32_t all_steps = 0;
    for (uint32_t i = PF_EVENTS / 2; i < PF_EVENTS; i++) {
        uint32_t t = pf.order[i], steps = 0;
        for (size_t k = 0; k < pf.n; k++)
            steps += pf.tag[k] == t;
        all_steps += steps == SIM_PREFETCH_STEPS;
    }
    ck_assert_uint_ge(all_steps, PF_EVENTS / 2 - 2 * SIM_PREFETCH_STEPS);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sim");
    TCase *t = tcase_create("engine");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, equal_times_fire_in_schedule_order);
    tcase_add_test(t, events_a_component_schedules_now_fire_after_its_own_already_due);
    tcase_add_test(t, near_and_far_events_fire_in_order);
    tcase_add_test(t, many_sources_fire_in_key_order);
    tcase_add_test(t, equal_times_fire_by_domain_then_by_turn);
    tcase_add_test(t, run_stops_at_the_horizon_and_resumes);
    tcase_add_test(t, teardown_with_pending_events_runs_fini_and_frees_them);
    tcase_add_test(t, two_simulations_in_one_process_are_independent);
    tcase_add_test(t, random_streams_depend_on_seed_and_name);
    tcase_add_test(t, timers_fire_once_at_their_earliest_deadline);
    tcase_add_test(t, prefetch_hooks_see_events_in_steps_before_they_fire);
    suite_add_tcase(s, t);
    t = tcase_create("units");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, units_are_exact);
    tcase_add_test(t, bad_units_are_refused);
    tcase_add_test(t, serialization_time_rounds_up);
    suite_add_tcase(s, t);
    t = tcase_create("frames");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, frame_pool_frames_are_distinct_and_reused);
    tcase_add_test(t, queue_rings_keep_their_order_as_they_grow);
    suite_add_tcase(s, t);
    t = tcase_create("routes");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, fat_tree_paths_have_the_expected_lengths);
    tcase_add_test(t, equal_cost_paths_are_all_used);
    tcase_add_test(t, fat_tree_rules_give_the_tables_routes);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
