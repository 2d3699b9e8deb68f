/* sim.h - librdmasim: a discrete-event simulator of RDMA hosts, NICs, links
 * and switches whose every packet is a real frame built and parsed by
 * librdmacodec.
 *
 * Two layers are public. The engine (events, components, random streams)
 * has no global state: everything hangs off a struct sim, so two
 * simulations can run in one process. The network layer loads a YAML
 * configuration (docs/config.md), builds hosts, switches and links on an
 * engine, runs it and writes the outputs.
 *
 * Time is an integer count of picoseconds: a byte at 400 Gb/s is 20 ps, and
 * a uint64_t holds 213 days of it.
 */
#ifndef SIM_H
#define SIM_H

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
#define SIM_EVENT_KINDS(X)                                                     \
    X(TX_DONE, "tx-done")     /* a port finished serializing a frame */      \
    X(ARRIVAL, "arrival")     /* the last bit of a frame reached a port */   \
    X(POST_SEND, "post-send") /* a host posts a send work request */         \
    X(POST_RECV, "post-recv") /* a host posts a receive work request */      \
    X(QP_TIMEOUT, "qp-timeout") /* a queue pair's retransmission timer */    \
    X(QP_RNR, "qp-rnr")       /* a queue pair's RNR delay is over */         \
    X(PFC_EXPIRE, "pfc-expire") /* a pause a port obeys runs out */          \
    X(PFC_REFRESH, "pfc-refresh") /* time to send XOFF again */              \
    X(PFC_WATCHDOG, "pfc-watchdog") /* has a class been paused too long? */  \
    X(NIC_WAKE, "nic-wake")   /* a paced queue pair may send again */        \
    X(NIC_RX, "nic-rx")       /* the NIC took a frame from its buffer */     \
    X(DCQCN, "dcqcn")         /* a DCQCN rate or alpha timer */              \
    X(LINK_FAULT, "link-fault") /* a link goes down or comes up */           \
    X(SAMPLE, "sample")       /* sample queues and rates */                  \
    X(DEADLOCK_CHECK, "deadlock-check") /* look for a PFC deadlock */        \
    X(DMA, "dma")             /* a DMA step a queue pair waits for is done */ \
    X(USER, "user")           /* for components outside the network model */

enum sim_event_kind {
#define SIM__EV_ENUM(name, str) SIM_EV_##name,
    SIM_EVENT_KINDS(SIM__EV_ENUM)
#undef SIM__EV_ENUM
    SIM_EV_COUNT
};
const char *sim_event_kind_name(unsigned kind);

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

/* What every simulated thing implements. `init` runs once when the
 * simulation starts, after every component exists; `fini` runs at
 * sim_destroy, in reverse order of registration. Each function receives the
 * base struct and downcasts to its own type. */
struct sim_component_ops {
    const char *type;
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

/* Ask sim_run to return after the event being handled. */
void sim_stop(struct sim *sim);

/* Initialize components (first call only), then fire events until none is
 * left, the next one lies after `until`, or sim_stop was called. Returns
 * the number of events fired. */
uint64_t sim_run(struct sim *sim, sim_time_t until);

/* ---- network: configuration, run, outputs ------------------------------- */
struct sim_config;
struct sim_network;

/* Load and check a configuration. `sets` are KEY=VALUE overrides applied to
 * the document before it is checked (KEY is a dotted path: nic.mtu). On
 * error returns NULL and writes one line "FILE:LINE:COL: what is wrong"
 * (without newline) into err. A configuration whose run is estimated to
 * need more memory than max_memory (default: what the machine allows) is
 * an error too. */
struct sim_config *sim_config_load(const char *path, const char *const *sets, size_t nsets,
                                   char *err, size_t errcap);
void sim_config_free(struct sim_config *cfg);

/* Build the network described by cfg on a new engine. cfg must outlive it. */
struct sim_network *sim_network_create(const struct sim_config *cfg);
/* Pcaps that sim_network_write did not complete are removed. */
void sim_network_destroy(struct sim_network *net);
struct sim *sim_network_engine(struct sim_network *net);
/* Run until every message is complete or failed, nothing is left to do, or
 * the configured stop time. */
void sim_network_run(struct sim_network *net);
/* How far the run is, from 0 to 1, for progress estimates: the simulated
 * time over the stop time when there is one, else the share of messages
 * finished. */
double sim_network_progress(const struct sim_network *net);

struct sim_totals {
    uint64_t messages;
    uint64_t completed;   /* completed without error */
    uint64_t failed;      /* completed with an error status */
    uint64_t verified;    /* destination bytes compared equal to the source */
    uint64_t corrupted;   /* destination bytes that differ from the source */
    uint64_t bytes;       /* message bytes completed */
    uint64_t frames;      /* frames put on links */
    uint64_t retransmitted; /* request packets sent again */
    uint64_t dropped;     /* tail drops in switches */
    uint64_t lost;        /* frames lost on links */
    uint64_t bad_frames;  /* frames a receiver dropped: bad ICRC or malformed */
    sim_time_t end;       /* simulated time when the run ended */
    uint64_t pauses;      /* PFC frames that paused a priority */
    uint64_t ecn_marked;  /* frames switches marked CE */
    uint64_t cnps;        /* CNPs sent */
    uint64_t deadlocks;   /* PFC deadlocks found */
};
void sim_network_totals(const struct sim_network *net, struct sim_totals *t);
/* The i-th PFC deadlock found, as one line of text: when, and the cycle of
 * paused ports. False past the last. */
bool sim_network_deadlock(const struct sim_network *net, size_t i, char *buf, size_t cap);

/* Write summary.json, messages.csv, ports.csv and the traced ports' pcaps
 * into dir (created if missing). Each file is written under a temporary
 * name; all are renamed into place once complete, summary.json last.
 * `wall_seconds` < 0 leaves wall time out of summary.json, which keeps it
 * identical across runs. Returns 0, or -1 with a message in err. */
int sim_network_write(struct sim_network *net, const char *dir, double wall_seconds,
                      char *err, size_t errcap);
/* Open pcap files for traced ports, before the run: frames are written as
 * they cross the ports. Returns 0 or -1 with a message in err. */
int sim_network_open_traces(struct sim_network *net, const char *dir, char *err, size_t errcap);

#ifdef __cplusplus
}
#endif
#endif
