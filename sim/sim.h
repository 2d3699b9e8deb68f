/* sim.h - librdmasim: a discrete-event simulator of RDMA hosts, NICs, links
 * and switches whose every packet is a real frame built and parsed by
 * librdmacodec.
 *
 * Two layers are public: the engine (engine/engine.h: events, components,
 * random streams) and, here, the network: it loads a YAML configuration
 * (docs/config.md), builds hosts, switches and links on an engine, runs it
 * and writes the outputs. docs/architecture.md shows the layers between.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- network: configuration, run, outputs ------------------------------- */
struct sim_config;
struct sim_network;

/* Load and check a configuration. `sets` are KEY=VALUE overrides applied to
 * the document before it is checked (KEY is a dotted path: nic.mtu). On
 * error returns NULL and writes one line "FILE:LINE:COL: what is wrong"
 * (without newline) into err, or, when an override is at fault,
 * "override KEY=VALUE: what is wrong". A configuration whose run is
 * estimated to need more memory than the max_memory key allows (default:
 * what the machine allows) is an error too. Errors name configuration
 * keys, never a program's options. */
struct sim_config *sim_config_load(const char *path, const char *const *sets, size_t nsets,
                                   char *err, size_t errcap);
void sim_config_free(struct sim_config *cfg);

/* Build the network described by cfg on a new engine. cfg must outlive it. */
struct sim_network *sim_network_create(const struct sim_config *cfg);
/* The same, calling fn while it builds, at least once a second on large
 * networks: a program shows progress there, and may end itself there on
 * an interrupt (nothing is written before the run). */
struct sim_network *sim_network_create_watched(const struct sim_config *cfg, sim_setup_fn fn,
                                               void *arg);
/* Pcaps that sim_network_write did not complete are removed. */
void sim_network_destroy(struct sim_network *net);
struct sim *sim_network_engine(struct sim_network *net);
/* Run until every message is complete or failed, nothing is left to do, or
 * the configured stop time. False when a run split over MPI ranks was
 * interrupted (sim_stop) on one of them: then every rank stops. */
bool sim_network_run(struct sim_network *net);
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
    uint64_t unroutable;  /* frames a switch dropped: no route to their destination */
    sim_time_t end;       /* simulated time when the run ended */
    uint64_t pauses;      /* PFC frames that paused a priority */
    uint64_t ecn_marked;  /* frames switches marked CE */
    uint64_t cnps;        /* CNPs sent */
    uint64_t deadlocks;   /* PFC deadlocks found */
    uint64_t timeouts;    /* retransmission timeouts that fired */
    uint64_t timeouts_without_loss; /* of which the packet resent had arrived before */
};
void sim_network_totals(const struct sim_network *net, struct sim_totals *t);
/* The i-th PFC deadlock found, as one line of text: when, and the cycle of
 * paused ports. False past the last. */
bool sim_network_deadlock(const struct sim_network *net, size_t i, char *buf, size_t cap);

/* The i-th note on the run, as sentences: what a reader of the totals
 * should be told (retransmission timeouts that fired with nothing lost).
 * False past the last. */
bool sim_network_note(const struct sim_network *net, size_t i, char *buf, size_t cap);

/* Write summary.json, messages.csv, ports.csv and the traced ports' pcaps
 * into dir (created if missing). Each file is written under a temporary
 * name; all are renamed into place once complete, summary.json last.
 * The run owns dir's outputs: rdmasim-outputs.txt lists the files it
 * wrote, and what an earlier run listed there and this one did not write
 * is removed; files it did not list are never touched.
 * `wall_seconds` < 0 leaves wall time out of summary.json, which keeps it
 * identical across runs. Returns 0, or -1 with a message in err. */
int sim_network_write(struct sim_network *net, const char *dir, double wall_seconds,
                      char *err, size_t errcap);
/* Make dir if missing and take it for this run's outputs: it must not be a
 * symbolic link, and an exclusive lock (flock) on it, held until the
 * network is destroyed, refuses a second run into the same directory.
 * sim_network_open_traces and sim_network_write call it. Returns 0 or -1
 * with a message in err. */
int sim_network_claim_output(struct sim_network *net, const char *dir, char *err, size_t errcap);
/* Claim dir, then open pcap files for traced ports, before the run: frames
 * are written as they cross the ports. Returns 0 or -1 with a message in err. */
int sim_network_open_traces(struct sim_network *net, const char *dir, char *err, size_t errcap);
/* Before the run: about how many bytes the traced ports' pcap files will
 * take in all, from each message's frames along its path (retransmissions,
 * PFC frames and CNPs come on top), each file at most the trace_limit
 * key; *files is how many files there will be. */
uint64_t sim_network_trace_estimate(const struct sim_network *net, size_t *files);

/* ---- parallel runs over MPI (docs/parallel.md) --------------------------- */
/* Under mpirun with more than one rank, start MPI and say which rank this
 * process is of how many; otherwise *nranks is 1 and MPI is not touched.
 * -1: MPI failed to start, or this program was built without MPI and
 * started as several ranks. */
int sim_parallel_start(unsigned *rank, unsigned *nranks);
/* End MPI: with code 0 every rank finishes together; otherwise the whole
 * job ends with it at once (MPI_Abort). */
void sim_parallel_end(unsigned nranks, int code);
/* ok on every rank (a collective call: every rank makes it). */
bool sim_parallel_agree(unsigned nranks, bool ok);
/* Make this network rank `rank` of `nranks`: it runs the nodes of its
 * part and exchanges frames on cut links with the other ranks; rank 0
 * gathers what the outputs need and alone writes them (sim_network_write
 * writes nothing on the others). Every rank builds the same network
 * first. -1 with a message in err: a cut link without delay. */
int sim_network_split(struct sim_network *net, unsigned rank, unsigned nranks, char *err,
                      size_t errcap);
unsigned sim_network_rank(const struct sim_network *net);
/* What each rank of a split run did (after sim_network_run); NULL when the
 * network ran whole. */
struct sim_rank_stats {
    uint64_t events;               /* fired by this rank, the monitor's and faults' at rank 0 only */
    uint64_t frames_out, frames_in; /* frames that crossed to and from other ranks */
    uint64_t windows;              /* synchronisation windows */
    double busy_s, wait_s, run_s;  /* wall time firing events, in collective calls, in all */
};

struct sim_split_stats {
    unsigned here; /* this process's rank */
    unsigned nranks;
    sim_time_t lookahead;
    size_t cut_links;
    struct sim_rank_stats *rank;
};

const struct sim_split_stats *sim_network_split_stats(const struct sim_network *net);
/* The partition into nparts (nodes and cut links per part, lookahead),
 * as text for `rdmasim sim --check`. */
void sim_network_print_partition(const struct sim_network *net, unsigned nparts, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
