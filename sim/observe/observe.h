/* observe.h - what the run's observers share: the monitor that records the
 * PFC trace, samples queues and rates and looks for PFC deadlock
 * (monitor.c, deadlock.c), and the writers of the output files (output.c,
 * fabric_csv.c, pcie_csv.c, pcap.c).
 *
 * Observers sit above the models: they read model state after the run or
 * at their own sample events, and hear of what happens during the run only
 * through the models' trace sources (a port's frame taps, the PFC hook).
 * No model calls into this layer.
 */
#ifndef SIM_OBSERVE_H
#define SIM_OBSERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net/net.h"
#include "net/pfc.h"

/* ---- the monitor ---------------------------------------------------------------- */
struct sim_qlen_row {
    sim_time_t t;
    uint32_t port;
    uint32_t q[SIM_PRIOS];
};

struct sim_rate_row {
    sim_time_t t;
    uint32_t conn;
    uint8_t side;
    double rate, target, alpha, throughput;
};

struct sim_deadlock {
    sim_time_t t;
    uint32_t *ports; /* the cycle: egress ports, each paused by the next */
    uint8_t *prios;
    uint32_t n;
};

/* What deadlock checks saw of the switches one process runs, as words: per
 * check its time (high, low), the length of its entries, and the entries,
 * one per vertex {vertex, n, the n ports its queue holds frames from}. */
struct sim_deadlock_views {
    uint32_t *w;
    size_t n, cap;
};

/* Rows a monitor table moved out of memory: past SIM_SPILL_ROWS rows in
 * memory, they are appended to an unnamed temporary file (tmpfile(3)), and
 * read back when the CSV is written, so memory stays bounded however long
 * the simulated time or however many PFC events. */
#define SIM_SPILL_ROWS 65536
struct sim_spill {
    FILE *f;
    uint64_t rows;  /* in the file */
    int err;        /* errno of the first failure: rows were lost */
};

struct sim_monitor {
    struct sim_component comp; /* SAMPLE, DEADLOCK_CHECK; first, for the downcast */
    struct sim_network *net;
    struct sim_pfc_hook pfc_hook; /* records every PFC event into pfc */
    struct sim_pfc_row *pfc;
    size_t npfc, cappfc;
    struct sim_qlen_row *qlen;
    size_t nqlen, capqlen;
    struct sim_rate_row *rates;
    size_t nrates, caprates;
    struct sim_spill spill_pfc, spill_qlen, spill_rates; /* older rows of each */
    struct sim_deadlock *deadlocks;
    size_t ndeadlocks, capdeadlocks;
    uint8_t *qlen_shown;    /* per port: a row was written at the last sample */
    uint64_t *last_bytes;   /* per queue pair side: bytes sent at the last sample */
    uint64_t *last_sent;    /* deadlock: per (port, class) frames sent at the last check */
    uint8_t *in_deadlock;   /* per (port, class): part of a deadlock already reported */
    struct sim_deadlock_views *views; /* a split run: checks kept, searched after the run */
    bool check_deadlock;    /* some switch runs PFC */
    uint64_t fired;         /* its events */
};
/* Every row of a table, those spilled first, into *out (malloc'd, *nout
 * bytes); the spill file is closed and forgotten. -1 when rows were lost. */
int sim__spill_read_all(struct sim_spill *s, const void *rows, size_t n, size_t size, uint8_t **out,
                        size_t *nout);

/* The monitor exists for every run: it records the PFC trace always, and
 * samples queues and rates or looks for deadlock when configured to. */
void sim__monitor_create(struct sim_network *net);
void sim__monitor_destroy(struct sim_network *net);
/* deadlock.c: look for a cycle of paused, stalled switch queues. */
void sim__deadlock_check(struct sim_monitor *mon);
/* Search, at rank 0 after a split run, the checks every rank kept of its
 * own switches (mon->views), as one process would have during the run. */
void sim__deadlock_replay(struct sim_monitor *mon, const struct sim_deadlock_views *per_rank, unsigned nranks);

/* Outputs (fabric_csv.c): pfc.csv, qlen.csv, rates.csv, and the fabric's
 * parts of summary.json. */
void sim__fabric_port_json(FILE *f, const struct sim_port *p);
void sim__fabric_summary_json(FILE *f, struct sim_network *net);
int sim__fabric_write(struct sim_network *net, const char *dir, char *err, size_t errcap);

/* ---- pcap traces (pcap.c) ------------------------------------------------------- */
/* subnet.txt: the InfiniBand subnet as its manager set it up, in the forms
 * of ibnetdiscover and ibroute (subnet_txt.c). */
void sim__subnet_write(const struct sim_network *net, FILE *f);
/* What libpcap writes: a file header, and a header before each frame. */
#define PCAP_FILE_HEADER 24
#define PCAP_RECORD_HEADER 16
/* What a pcap holds: Ethernet frames; InfiniBand packets as Endace ERF
 * records, with or without the link's flow control packets. */
enum sim_pcap_kind { SIM_PCAP_ETHERNET, SIM_PCAP_ERF, SIM_PCAP_ERF_DATA };
/* A pcap file at path, of frames cut to snaplen bytes, that stops growing
 * at limit bytes (0: no limit). Frames that leave out their fill are
 * written whole, with the pattern `fill` (sim_network.fill). */
struct sim_pcap *sim__pcap_open(const char *path, uint32_t snaplen, uint64_t limit, enum sim_pcap_kind kind,
                                const uint8_t *fill, char *err, size_t errcap);
/* The tap that writes every frame crossing a port into the pcap. */
struct sim_tap *sim__pcap_tap(struct sim_pcap *pc);
/* Close and, with keep, rename into place (returns 0 or -1); without keep
 * remove the temporary file: a run that did not finish leaves no pcap. */
int sim__pcap_close(struct sim_pcap *pc, bool keep);
/* A run split over MPI ranks writes each port's capture on the rank that
 * runs the port: there, detach the file (keep a descriptor that reads it,
 * and remove its name: a rank however it ends leaves no file behind), and
 * at the end take its bytes (malloc'd) and the frames cut at the size
 * limit; at rank 0, which holds an empty capture of every traced port,
 * put them in its place. 0, or -1 on an I/O error. */
int sim__pcap_detach(struct sim_pcap *pc);
int sim__pcap_take(struct sim_pcap *pc, uint8_t **bytes, size_t *n, uint64_t *cut);
int sim__pcap_replace(struct sim_pcap *pc, const uint8_t *bytes, size_t n, uint64_t cut);
/* Close every port's pcap; see sim__pcap_close. Returns 0, or -1 with the
 * first failing port's name in err. */
int sim__traces_close(struct sim_network *net, bool keep, char *err, size_t errcap);
/* How many pcap files reached the trace limit, and the frames they left out. */
void sim__traces_cut(const struct sim_network *net, uint64_t *files, uint64_t *frames);

/* ---- outputs (output.c, pcie_csv.c) ---------------------------------------------- */
/* Forget the output directories the run made; unless keep, remove those
 * that are empty (the run ended without writing its outputs). */
void sim__output_dirs_release(struct sim_network *net, bool keep);
/* Compare completed messages' destination bytes with their source. */
void sim__verify(struct sim_network *net);
/* The TCP members of an iWARP NIC's configuration and of one side of an
 * iWARP connection in summary.json (tcp_json.c), each starting ", ". */
void sim__tcp_nic_json(FILE *f, const struct cfg_nic *n);
void sim__tcp_side_json(FILE *f, const struct sim_qp *qp);
/* summary.json's host_cpu member, starting ",\n" (host_cpu.c). */
void sim__host_cpu_json(FILE *f, const struct sim_network *net);
void sim__pcie_write_csv(const struct sim_network *net, FILE *f);
void sim__pcie_write_copies(const struct sim_network *net, FILE *f);
void sim__pcie_write_cxl(const struct sim_network *net, FILE *f);
/* collectives.csv and collectives.txt (collectives_csv.c). */
void sim__coll_write_csv(const struct sim_network *net, FILE *f);
void sim__coll_write_table(const struct sim_network *net, FILE *f);
void sim__pcie_write_json(const struct sim_network *net, FILE *f);
/* messages.csv's columns of the PCIe breakdown, and one message's values. */
void sim__pcie_message_header(FILE *f);
void sim__pcie_message_row(const struct sim_network *net, size_t msg, FILE *f);

#endif
