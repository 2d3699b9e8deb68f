/* report.h - views shared by the text and JSON reports. */
#ifndef RDMASIM_REPLAY_REPORT_H
#define RDMASIM_REPLAY_REPORT_H

#include "replay.h"

struct conv_view {
    struct flow *x, *y; /* x: the flow with the smaller id; y: its peer or NULL */
    uint32_t id;
    uint64_t packets, goodput, messages, failed;
    uint64_t anomalies, serious;
    uint64_t first_t, last_t;
    bool first_t_set;
};

struct conv_end {
    char addr[ADDR_TEXT_MAX]; /* with the port for a TCP connection */
    uint32_t qpn;
    bool qpn_known;
    bool tcp;                 /* iWARP: no QPN */
};

/* Conversations sorted for reading (caller frees), anomaly indices sorted
 * likewise. NULL when memory ran out. */
struct conv_view *conv_views(const struct replay *r, uint32_t *count);
void conv_ends(const struct conv_view *c, struct conv_end *a, struct conv_end *b);
uint32_t *anomaly_order(const struct replay *r);
void anomaly_code_text(const struct anomaly *a, char *buf, size_t cap);

#endif
