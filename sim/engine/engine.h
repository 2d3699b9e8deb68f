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

/* Events fire in (time, key) order. The key says where the event goes and
 * who scheduled it, never where it was queued: the domain of its target
 * (sim_component_set_domain), a turn drawn from the scheduling
 * component's id and the event's time, then how many events that component
 * had scheduled before, then the kind. Components whose state one handler
 * may touch share a domain (a network node and its ports); different
 * domains hear each other only through events, so the order of their
 * equal-time events changes no result, and ordering those by domain walks
 * a large network's memory in sequence rather than at random. (A
 * component that reaches into all the others, a monitor, takes a domain
 * at one end: it sees all of their events at its picosecond, or none.)
 * Within a domain, a component's own events at equal times fire in the
 * order it scheduled them; equal-time events of different components fire
 * in an order that changes from one picosecond to the next but not with
 * which other components share the engine, so a network split over
 * several engines (one per MPI rank) fires every event in the order one
 * engine would. Equal keys fall back on the target's id. 32 bytes, two to
 * a cache line: the queue is the hottest data of a run. */
#define SIM_KEY_DOMAIN_BITS 16
#define SIM_KEY_TURN_BITS 12
#define SIM_KEY_SEQ_BITS 28
#define SIM_MAX_COMPONENTS (UINT32_C(1) << 30)
struct sim_event {
    sim_time_t time;
    uint64_t key; /* domain (16 bits) << 48 | turn (12) << 36 | the source's seq (28) << 8 | kind */
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
#define SIM_PREFETCH_STEPS 4
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
    /* Optional: start fetching what handling ev will read beyond the
     * first lines of the component and of ev->ptr, which the engine
     * fetches itself. Called SIM_PREFETCH_STEPS times as ev comes near,
     * two events apart, by step: step 0 from addresses alone (the
     * component's lines are likely still on their way, and reading them
     * would wait): its other hot lines; each later step may read what the
     * step before fetched, to find what the event leads to (a structure
     * that one points to). Only a hint: it must change nothing. */
    void (*prefetch)(const struct sim_component *c, const struct sim_event *ev, unsigned step);
};

struct sim_component {
    const struct sim_component_ops *ops;
    struct sim *sim;
    const char *name; /* owned by the caller, lives as long as the sim */
    struct sim_rng rng;
    uint32_t id;  /* registration order */
    uint32_t seq; /* events it has scheduled: its part of the key, modulo 2^SIM_KEY_SEQ_BITS */
};

struct sim *sim_create(uint64_t seed);
/* Calls every component's fini and frees all pending events. */
void sim_destroy(struct sim *sim);
uint64_t sim_seed(const struct sim *sim);

/* Register a component; derives its random stream from the seed and name.
 * Its domain is its id until set. */
void sim_component_add(struct sim *sim, struct sim_component *c,
                       const struct sim_component_ops *ops, const char *name);
/* Put c in a domain (see struct sim_event): before any event is scheduled
 * for it. Components that share state must share a domain; sharing one
 * when they need not only costs the locality of a large run. */
void sim_component_set_domain(struct sim_component *c, uint32_t domain);

/* Schedule an event for `target` at absolute time `at` (>= sim_now()). */
void sim_schedule(struct sim *sim, sim_time_t at, struct sim_component *target,
                  unsigned kind, void *ptr);
/* The same, from a caller that knows its target's id without reading the
 * target (a port, its peer's): in a network larger than the caches, the
 * target's lines would be fetched here for the id alone, long before its
 * event comes near. */
void sim_schedule_id(struct sim *sim, sim_time_t at, struct sim_component *target, uint32_t target_id,
                     unsigned kind, void *ptr);

sim_time_t sim_now(const struct sim *sim);
uint64_t sim_events_pending(const struct sim *sim);
uint64_t sim_events_processed(const struct sim *sim);

/* Whether to call the components' prefetch hooks (off at first): they
 * pay only where the components' state outgrows the cache, and cost
 * instructions where it does not. Outputs do not depend on it. */
void sim_set_prefetch(struct sim *sim, bool on);

/* Called every `every` events while sim_run runs. */
typedef void (*sim_progress_fn)(void *arg, const struct sim *sim);
void sim_set_progress(struct sim *sim, sim_progress_fn fn, void *arg, uint64_t every);
/* Called now and then while a model is built, before any event: what is
 * being built ("routes") and how far, from 0 to 1. */
typedef void (*sim_setup_fn)(void *arg, const char *stage, double done);

/* An event for a remote component: a network split across engines sends
 * it to the engine that owns the target (sim_schedule_event there). The
 * hook is called from sim_schedule with the full event, key included. */
typedef void (*sim_remote_fn)(void *arg, struct sim *sim, const struct sim_event *ev);
void sim_set_remote(struct sim *sim, sim_remote_fn fn, void *arg);
/* Another engine handles c's events: those a component here schedules for
 * it go to the remote hook; what was queued for it before, and what it
 * schedules itself (its init runs here too, to keep its state a copy of
 * the owner's at the start), is dropped. */
void sim_component_set_remote(struct sim *sim, const struct sim_component *c);
bool sim_component_remote(const struct sim *sim, const struct sim_component *c);
/* Queue an event another engine scheduled, with its key. */
void sim_schedule_event(struct sim *sim, const struct sim_event *ev);
/* The earliest pending event's time, SIM_TIME_NEVER if none. */
sim_time_t sim_next_time(struct sim *sim);
/* Fire events up to and including the one ordered (time, key); returns
 * the number fired. Ends a run that several engines share at the event
 * one engine would have stopped after. */
uint64_t sim_run_through(struct sim *sim, sim_time_t time, uint64_t key);
/* Whether the last sim_run returned because sim_stop was called. */
bool sim_stopped(const struct sim *sim);
/* Move the clock on to t (not back): the time a run split over engines
 * ended, on the engines whose last event came earlier. */
void sim_advance(struct sim *sim, sim_time_t t);
/* Count n events other engines of a split run fired into this one's
 * total (sim_events_processed). */
void sim_count_events(struct sim *sim, uint64_t n);
/* The component whose event is being handled, NULL outside a handler. */
struct sim_component *sim_current(const struct sim *sim);
/* The key of the event fired last: with sim_now, where a run stopped. */
uint64_t sim_last_key(const struct sim *sim);

/* Ask sim_run to return after the event being handled. */
void sim_stop(struct sim *sim);

/* Initialize components, on the first call only (sim_run calls it). */
void sim_start(struct sim *sim);
/* Initialize components (first call only), then fire events until none is
 * left, the next one lies after `until`, or sim_stop was called. Returns
 * the number of events fired. */
uint64_t sim_run(struct sim *sim, sim_time_t until);

#ifdef __cplusplus
}
#endif
#endif
