/* measure.c - one transport's numbers, read back from the files its run
 * wrote (docs/config.md, Outputs): nothing here comes from the simulator's
 * memory, so whatever `rdmasim compare` prints can be checked against
 * DIR/TRANSPORT/summary.json and messages.csv, and is what `rdmasim report`
 * and `rdmasim replay` of the same directory see. */
#include <errno.h>
#include <libfyaml.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

const struct cmp_metric_info cmp_metrics[CMP_NMETRICS] = {
#define CMP_INFO(name, unit, what) {#name, unit, what},
    CMP_METRICS(CMP_INFO)
#undef CMP_INFO
};

/* What one completed message contributes. */
struct msg {
    uint64_t bytes, start, end, fct;
    double slowdown;
};

/* Size classes of the slowdown rows, by their upper bound in bytes. */
static const struct {
    uint64_t max;
    enum cmp_metric p50, p99;
} classes[] = {
    {CMP_SMALL_BYTES, CMP_slowdown_le_4KiB_p50, CMP_slowdown_le_4KiB_p99},
    {64 << 10, CMP_slowdown_le_64KiB_p50, CMP_slowdown_le_64KiB_p99},
    {1 << 20, CMP_slowdown_le_1MiB_p50, CMP_slowdown_le_1MiB_p99},
    {UINT64_MAX, CMP_slowdown_gt_1MiB_p50, CMP_slowdown_gt_1MiB_p99},
};

static void set(struct cmp_run *run, enum cmp_metric m, double v)
{
    run->value[m] = v;
    run->has[m] = true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile q/100 of n sorted values: the
 * ceil(q n / 100)-th smallest, as summary.json takes its own. */
static double rank(const double *v, size_t n, unsigned q)
{
    return v[(n * q + 99) / 100 - 1];
}

/* p50 and p99 of v[0..n) (sorted here) into two metrics, when n > 0. */
static void percentiles(struct cmp_run *run, double *v, size_t n, enum cmp_metric p50,
                        enum cmp_metric p99)
{
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    set(run, p50, rank(v, n, 50));
    set(run, p99, rank(v, n, 99));
}

/* The index of each wanted column in the header line, or -1 with the
 * missing one named. */
static int columns(char *header, const char *const *want, int *col, size_t nwant, const char **missing)
{
    for (size_t i = 0; i < nwant; i++)
        col[i] = -1;
    int c = 0;
    for (char *tok = strtok(header, ",\r\n"); tok; tok = strtok(NULL, ",\r\n"), c++)
        for (size_t i = 0; i < nwant; i++)
            if (!strcmp(tok, want[i]))
                col[i] = c;
    for (size_t i = 0; i < nwant; i++)
        if (col[i] < 0) {
            *missing = want[i];
            return -1;
        }
    return 0;
}

enum { C_BYTES, C_START, C_END, C_FCT, C_SLOWDOWN, C_STATUS, NCOLS };

/* The completed messages of messages.csv, in *msgs (malloc'd); their
 * number, or -1 having said why. */
static long read_messages(const char *path, struct msg **msgs)
{
    static const char *const names[NCOLS] = {"bytes", "start_ps", "end_ps", "fct_ps", "slowdown", "status"};
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rdmasim compare: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int col[NCOLS];
    const char *missing = NULL;
    if (!fgets(line, sizeof line, f) || columns(line, names, col, NCOLS, &missing)) {
        fprintf(stderr, "rdmasim compare: %s: no %s column\n", path, missing ? missing : "header");
        fclose(f);
        return -1;
    }
    size_t n = 0, cap = 0;
    struct msg *v = NULL;
    while (fgets(line, sizeof line, f)) {
        char *field[32];
        int nf = 0;
        for (char *p = line, *tok; nf < 32 && (tok = strsep(&p, ",\r\n"));)
            field[nf++] = tok;
        if (nf <= col[C_STATUS] || strcmp(field[col[C_STATUS]], "ok"))
            continue; /* failed or pending: no completion time */
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            struct msg *g = realloc(v, cap * sizeof *v);
            if (!g) {
                free(v);
                fclose(f);
                fprintf(stderr, "rdmasim compare: out of memory\n");
                return -1;
            }
            v = g;
        }
        v[n++] = (struct msg){.bytes = strtoull(field[col[C_BYTES]], NULL, 10),
                              .start = strtoull(field[col[C_START]], NULL, 10),
                              .end = strtoull(field[col[C_END]], NULL, 10),
                              .fct = strtoull(field[col[C_FCT]], NULL, 10),
                              .slowdown = strtod(field[col[C_SLOWDOWN]], NULL)};
    }
    fclose(f);
    *msgs = v;
    return (long)n;
}

static int measure_messages(struct cmp_run *run, const char *path)
{
    struct msg *m = NULL;
    long n = read_messages(path, &m);
    if (n < 0)
        return -1;
    set(run, CMP_messages_ok, (double)n);
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    if (!v) {
        free(m);
        return -1;
    }
    size_t k = 0;
    for (long i = 0; i < n; i++)
        if (m[i].bytes <= CMP_SMALL_BYTES)
            v[k++] = (double)m[i].fct / 1e6;
    percentiles(run, v, k, CMP_small_p50_us, CMP_small_p99_us);
    for (long i = 0; i < n; i++)
        v[i] = (double)m[i].fct / 1e6;
    percentiles(run, v, (size_t)n, CMP_fct_p50_us, CMP_fct_p99_us);
    for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++) {
        uint64_t lo = c ? classes[c - 1].max : 0;
        k = 0;
        for (long i = 0; i < n; i++)
            if (m[i].bytes > lo && m[i].bytes <= classes[c].max)
                v[k++] = m[i].slowdown;
        if (!c) /* zero-byte messages belong to the smallest class */
            for (long i = 0; i < n; i++)
                if (!m[i].bytes)
                    v[k++] = m[i].slowdown;
        percentiles(run, v, k, classes[c].p50, classes[c].p99);
    }
    if (n) {
        uint64_t first = UINT64_MAX, last = 0;
        long double bytes = 0;
        for (long i = 0; i < n; i++) {
            first = m[i].start < first ? m[i].start : first;
            last = m[i].end > last ? m[i].end : last;
            bytes += m[i].bytes;
        }
        if (last > first) /* bits per picosecond x 1000 = Gb/s */
            set(run, CMP_goodput_gbps, (double)(bytes * 8 * 1000 / (last - first)));
    }
    free(v);
    free(m);
    return 0;
}

/* summary.json's number at a path ("/totals/tail_drops"), when present. */
static bool number(struct fy_node *root, const char *path, double *v)
{
    struct fy_node *n = fy_node_by_path(root, path, FY_NT, FYNWF_DONT_FOLLOW);
    const char *s = n && fy_node_is_scalar(n) ? fy_node_get_scalar0(n) : NULL;
    char *end;
    if (!s || !*s)
        return false;
    *v = strtod(s, &end);
    return !*end;
}

static int measure_summary(struct cmp_run *run, const char *path)
{
    struct fy_parse_cfg pc = {.flags = FYPCF_QUIET | FYPCF_JSON_FORCE};
    struct fy_document *doc = fy_document_build_from_file(&pc, path);
    if (!doc) {
        fprintf(stderr, "rdmasim compare: %s: cannot read it as JSON\n", path);
        return -1;
    }
    static const struct {
        const char *path;
        enum cmp_metric m;
        double scale;
    } counters[] = {
        {"/totals/tail_drops", CMP_tail_drops, 1},
        {"/totals/link_losses", CMP_link_losses, 1},
        {"/fabric/pauses_sent", CMP_pfc_pauses, 1},
        {"/fabric/paused_ps", CMP_paused_us, 1e6},
        {"/fabric/credit_blocked_ps", CMP_credit_blocked_us, 1e6},
        {"/totals/retransmitted", CMP_retransmitted, 1},
        {"/totals/timeouts", CMP_timeouts, 1},
    };
    struct fy_node *root = fy_document_root(doc);
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        double v;
        if (number(root, counters[i].path, &v))
            set(run, counters[i].m, v / counters[i].scale);
    }
    double bytes, cpu_ps, copied;
    if (number(root, "/host_cpu/bytes", &bytes) && bytes > 0 && number(root, "/host_cpu/cpu_ps", &cpu_ps) &&
        number(root, "/host_cpu/copied_bytes", &copied)) {
        set(run, CMP_cpu_us_per_GB, cpu_ps / 1e6 / (bytes / 1e9));
        set(run, CMP_copies_per_byte, copied / bytes);
    }
    fy_document_destroy(doc);
    return 0;
}

int cmp_measure(struct cmp_run *run)
{
    size_t n = strlen(run->dir) + sizeof "/messages.csv";
    char *path = malloc(n);
    if (!path)
        return -1;
    snprintf(path, n, "%s/summary.json", run->dir);
    int rc = measure_summary(run, path);
    snprintf(path, n, "%s/messages.csv", run->dir);
    if (!rc)
        rc = measure_messages(run, path);
    free(path);
    run->measured = !rc;
    return rc;
}
