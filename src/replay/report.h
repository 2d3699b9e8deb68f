/* report.h - what the files of `rdmasim replay` share: its options, the
 * report being written and the views both reports take of the analysis
 * (rdma_replay.h). */
#ifndef RDMASIM_REPLAY_REPORT_H
#define RDMASIM_REPLAY_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rdma_iwarp.h"
#include "rdma_replay.h"
#include "rdma_text.h"

struct replay_opts {
    bool json;
    const char *timeline;
    uint64_t interval_ns;
    uint64_t link_bps;
    uint32_t top;
    uint64_t max_memory;   /* bytes, 0: the library's default */
    uint64_t timeline_max; /* bytes the timeline may take */
    uint64_t max_conns;    /* --max-connections, 0: the library's default */
    uint64_t idle_ns;      /* --idle-timeout, 0: the library's default */
    struct rdma_decode_config cfg;
};

struct slow_list { /* the slowest completed messages, a min-heap on latency */
    struct slow_entry {
        struct rdma_replay_msg m;
        uint32_t flow;
    } *v;
    uint32_t n, cap;
};

struct report {
    const struct replay_opts *opts;
    const char *path;
    struct rdma_replay *an;  /* the analysis */
    FILE *out;               /* the report */
    FILE *timeline;          /* the CSV, or NULL */
    uint64_t timeline_bytes; /* written to it */
    bool timeline_over;      /* it would have grown past --timeline-max */
    struct slow_list slow;
    bool oom;
    bool first_message_out;  /* JSON: a message was written already */
    bool damaged;            /* libpcap stopped at a damaged record */
    /* read from the analysis once it is finished (report_load) */
    const struct rdma_replay_totals *tot;
    const struct rdma_replay_anomaly *anom;
    const struct rdma_replay_conn *conns;
    const struct rdma_replay_pfc *pfc;
    uint32_t nflows, nanom, nconns, npfc;
};

struct conv_view {
    const struct rdma_replay_flow *x, *y; /* x: the flow with the smaller id; y: its peer or NULL */
    uint32_t id;
    uint64_t packets, goodput, messages, failed;
    uint64_t anomalies, serious;
    uint64_t first_t, last_t;
    bool first_t_set;
};

struct conv_end {
    char addr[RDMA_REPLAY_ADDR_TEXT_MAX]; /* with the port for a TCP connection */
    uint32_t qpn;
    bool qpn_known;
    bool tcp;                 /* iWARP: no QPN */
};

/* report.c */
void report_load(struct report *r);
/* Conversations sorted for reading (caller frees), anomaly indices sorted
 * likewise. NULL when memory ran out. */
struct conv_view *conv_views(const struct report *r, uint32_t *count);
void conv_ends(const struct conv_view *c, struct conv_end *a, struct conv_end *b);
uint32_t *anomaly_order(const struct report *r);
void anomaly_code_text(const struct rdma_replay_anomaly *a, char *buf, size_t cap);
/* slowest.c */
void slow_offer(struct report *r, const struct rdma_replay_msg *m, uint32_t flow);
void slow_sort(struct slow_list *s);
/* timeline_csv.c: the --timeline CSV */
void timeline_header(struct report *r);
bool timeline_flow_row(void *ctx, const struct rdma_replay *an, uint64_t start_ns, const struct rdma_replay_flow *f);
bool timeline_pfc_row(void *ctx, const struct rdma_replay *an, uint64_t start_ns, const struct rdma_replay_pfc *e,
                      uint64_t paused_ns);
/* report_text.c, report_json.c */
void report_text(struct report *r);
void report_json_begin(struct report *r);
void report_json_message(struct report *r, const struct rdma_replay_flow *f, const struct rdma_replay_msg *m);
void report_json_end(struct report *r);
/* format.c */
void fmt_duration(char *buf, size_t cap, uint64_t ns);
void fmt_rate(char *buf, size_t cap, uint64_t bits_per_s);
void fmt_bytes(char *buf, size_t cap, uint64_t bytes);
uint64_t rate_per_s(uint64_t amount, uint64_t ns);

#endif
