/* compare.h - what `rdmasim compare` measures in each transport's run,
 * and the files it writes from those measurements. */
#ifndef RDMASIM_COMPARE_H
#define RDMASIM_COMPARE_H

#include <stdbool.h>
#include <stdio.h>

/* Messages of at most this many bytes are "small": their completion time
 * is the latency row. */
#define CMP_SMALL_BYTES 4096

/* Every number of the table: name (a CSV column and JSON member), unit,
 * what it is. Read from the run's own files (measure.c): messages.csv for
 * completion times, sizes and slowdowns of the messages that ended `ok`;
 * summary.json for the counters. Percentiles are nearest-rank, as
 * summary.json's own: p50 the ceil(n/2)-th smallest, p99 the
 * ceil(0.99 n)-th. */
#define CMP_METRICS(X)                                                                                  \
    X(messages_ok, "", "messages completed")                                                              \
    X(small_p50_us, "us", "completion time of messages <= 4 KiB, p50")                                   \
    X(small_p99_us, "us", "completion time of messages <= 4 KiB, p99")                                   \
    X(fct_p50_us, "us", "completion time of every message, p50")                                         \
    X(fct_p99_us, "us", "completion time of every message, p99")                                         \
    X(goodput_gbps, "Gb/s", "bytes completed x 8 / (last end - first start)")                            \
    X(slowdown_le_4KiB_p50, "", "slowdown of messages <= 4 KiB, p50")                                    \
    X(slowdown_le_4KiB_p99, "", "slowdown of messages <= 4 KiB, p99")                                    \
    X(slowdown_le_64KiB_p50, "", "slowdown of messages 4 KiB < size <= 64 KiB, p50")                     \
    X(slowdown_le_64KiB_p99, "", "slowdown of messages 4 KiB < size <= 64 KiB, p99")                     \
    X(slowdown_le_1MiB_p50, "", "slowdown of messages 64 KiB < size <= 1 MiB, p50")                      \
    X(slowdown_le_1MiB_p99, "", "slowdown of messages 64 KiB < size <= 1 MiB, p99")                      \
    X(slowdown_gt_1MiB_p50, "", "slowdown of messages > 1 MiB, p50")                                     \
    X(slowdown_gt_1MiB_p99, "", "slowdown of messages > 1 MiB, p99")                                     \
    X(tail_drops, "", "frames dropped by full queues (totals.tail_drops)")                                \
    X(link_losses, "", "frames lost on links (totals.link_losses)")                                      \
    X(pfc_pauses, "", "PFC pause frames sent (fabric.pauses_sent)")                                      \
    X(paused_us, "us", "time priorities were paused, summed over ports (fabric.paused_ps)")              \
    X(credit_blocked_us, "us", "InfiniBand: time ports waited for credits (fabric.credit_blocked_ps)")  \
    X(retransmitted, "", "packets or segments sent again (totals.retransmitted)")                        \
    X(timeouts, "", "retransmission timeouts (totals.timeouts)")                                         \
    X(cpu_us_per_GB, "us", "host CPU time per GB delivered (host_cpu.cpu_ps / host_cpu.bytes)")         \
    X(copies_per_byte, "", "octets copied by host CPUs per octet delivered (host_cpu.copied_bytes / bytes)")

enum cmp_metric {
#define CMP_ENUM(name, unit, what) CMP_##name,
    CMP_METRICS(CMP_ENUM)
#undef CMP_ENUM
    CMP_NMETRICS
};

struct cmp_metric_info {
    const char *name, *unit, *what;
};
extern const struct cmp_metric_info cmp_metrics[CMP_NMETRICS];

/* One transport's run and what was read from it. A metric the run has no
 * data for (no small message, a counter another transport does not keep)
 * is absent: "-" in the text, empty in the CSV, null in the JSON. */
struct cmp_run {
    const char *transport;
    char *dir;     /* OUT/TRANSPORT */
    int status;    /* rdmasim sim's exit status */
    bool measured; /* summary.json and messages.csv were read */
    double value[CMP_NMETRICS];
    bool has[CMP_NMETRICS];
};

/* measure.c: read DIR/summary.json and DIR/messages.csv into run; 0, or
 * -1 having said why on stderr. */
int cmp_measure(struct cmp_run *run);

/* write.c: the table as text (compare.txt, and stdout), CSV, JSON and an
 * SVG figure; runs[0] is the reference each difference is taken from. */
void cmp_write_text(FILE *f, const char *config, const struct cmp_run *runs, size_t n);
void cmp_write_csv(FILE *f, const struct cmp_run *runs, size_t n);
void cmp_write_json(FILE *f, const char *config, const struct cmp_run *runs, size_t n);
void cmp_write_svg(FILE *f, const char *config, const struct cmp_run *runs, size_t n);

#endif
