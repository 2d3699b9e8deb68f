/* engine.h - the discrete-event engine: integer picosecond time, events
 * ordered by (time, seq), components that handle them, and one random
 * stream per component. It knows no model: components name their own event
 * kinds.
 *
 * No global state: everything hangs off a struct sim, so two simulations
 * can run in one process. Time is an integer count of picoseconds: a byte
 * at 400 Gb/s is 20 ps, and a uint64_t holds 213 days of it.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t sim_time_t;

#define SIM_PS UINT64_C(1)
#define SIM_NS UINT64_C(1000)
#define SIM_US UINT64_C(1000000)
#define SIM_MS UINT64_C(1000000000)
#define SIM_S UINT64_C(1000000000000)
#define SIM_TIME_NEVER UINT64_MAX

/* ---- random streams ------------------------------------------------------
 * xoshiro256** (Blackman and Vigna), seeded through splitmix64. Every
 * component owns one stream derived from the simulation seed and its name,
 * so adding a component never shifts the numbers another one draws. */
struct sim_rng {
    uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *rng, uint64_t seed, const char *name);
uint64_t sim_rng_next(struct sim_rng *rng);
double sim_rng_unit(struct sim_rng *rng);                /* [0, 1) */
uint64_t sim_rng_below(struct sim_rng *rng, uint64_t n); /* [0, n), n > 0 */

/* ---- engine --------------------------------------------------------------- */
struct sim;
struct sim_component;

/* Events fire in (time, seq) order; seq counts schedule calls, so events at
 * equal times fire in the order they were scheduled. 32 bytes, two to a
 * cache line: the queue is the hottest data of a run. */
struct sim_event {
    sim_time_t time;
    uint64_t key; /* seq << 8 | kind */
    struct sim_component *target;
    void *ptr;
};

static inline unsigned sim_event_kind(const struct sim_event *ev) { return (unsigned)(ev->key & 0xff); }
/* The name its target's component gives the event's kind, "?" if none. */
const char *sim_event_name(const struct sim_event *ev);

/* What every simulated thing implements. `init` runs once when the
 * simulation starts, after every component exists; `fini` runs at
 * sim_destroy, in reverse order of registration. Each function receives the
 * base struct and downcasts to its own type. */
struct sim_component_ops {
    const char *type;
    /* The names of the event kinds it handles, indexed by kind: each
     * component numbers its own kinds from 0 (at most 256), so a new model
     * never edits the engine. */
    const char *const *event_names;
    unsigned nevents;
    void (*init)(struct sim_component *c);
    void (*handle)(struct sim_component *c, const struct sim_event *ev);
    void (*fini)(struct sim_component *c);
};

struct sim_component {
    const struct sim_component_ops *ops;
    struct sim *sim;
    const char *name; /* owned by the caller, lives as long as the sim */
    struct sim_rng rng;
    uint32_t id; /* registration order */
};

struct sim *sim_create(uint64_t seed);
/* Calls every component's fini and frees all pending events. */
void sim_destroy(struct sim *sim);
uint64_t sim_seed(const struct sim *sim);

/* Register a component; derives its random stream from the seed and name. */
void sim_component_add(struct sim *sim, struct sim_component *c,
                       const struct sim_component_ops *ops, const char *name);

/* Schedule an event for `target` at absolute time `at` (>= sim_now()). */
void sim_schedule(struct sim *sim, sim_time_t at, struct sim_component *target,
                  unsigned kind, void *ptr);

sim_time_t sim_now(const struct sim *sim);
uint64_t sim_events_pending(const struct sim *sim);
uint64_t sim_events_processed(const struct sim *sim);

/* Called every `every` events while sim_run runs. */
typedef void (*sim_progress_fn)(void *arg, const struct sim *sim);
void sim_set_progress(struct sim *sim, sim_progress_fn fn, void *arg, uint64_t every);
/* Called now and then while a model is built, before any event: what is
 * being built ("routes") and how far, from 0 to 1. */
typedef void (*sim_setup_fn)(void *arg, const char *stage, double done);

/* Ask sim_run to return after the event being handled. */
void sim_stop(struct sim *sim);

/* Initialize components (first call only), then fire events until none is
 * left, the next one lies after `until`, or sim_stop was called. Returns
 * the number of events fired. */
uint64_t sim_run(struct sim *sim, sim_time_t until);

#ifdef __cplusplus
}
#endif
#endif
