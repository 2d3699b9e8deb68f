/* write.c - the comparison table as text, CSV and JSON, and a figure of
 * it as SVG, all from the numbers measure.c read. The first transport is
 * the reference: every other one's value comes with its difference from
 * the reference (value - reference) and, where the reference is not zero,
 * their ratio (value / reference). */
#include <math.h>
#include <string.h>

#include "compare.h"
#include "rdma_text.h"

/* ---- differences ------------------------------------------------------- */

static bool diff(const struct cmp_run *runs, size_t i, enum cmp_metric m, double *d)
{
    if (!runs[i].has[m] || !runs[0].has[m])
        return false;
    *d = runs[i].value[m] - runs[0].value[m];
    return true;
}

static bool ratio(const struct cmp_run *runs, size_t i, enum cmp_metric m, double *r)
{
    if (!runs[i].has[m] || !runs[0].has[m] || runs[0].value[m] == 0)
        return false;
    *r = runs[i].value[m] / runs[0].value[m];
    return true;
}

/* ---- text ---------------------------------------------------------------- */

/* A value rounded for reading: whole numbers as they are, others to three
 * significant digits or one decimal. */
static void readable(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, cap, "%.0f", v);
    else if (fabs(v) >= 100)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.3g", v);
}

#define CELL 22

void cmp_write_text(FILE *f, const char *config, const struct cmp_run *runs, size_t n)
{
    fprintf(f, "rdmasim compare %s\n", config);
    fprintf(f, "(in brackets: the ratio to %s, or the difference where %s has zero)\n\n", runs[0].transport,
            runs[0].transport);
    fprintf(f, "%-24s", "");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %-*s", CELL, runs[i].transport);
    fprintf(f, "\n%-24s", "exit status");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %-*d", CELL, runs[i].status);
    fputc('\n', f);
    for (int m = 0; m < CMP_NMETRICS; m++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s%s%s", cmp_metrics[m].name, *cmp_metrics[m].unit ? " (" : "",
                 cmp_metrics[m].unit, *cmp_metrics[m].unit ? ")" : "");
        fprintf(f, "%-24s", name);
        for (size_t i = 0; i < n; i++) {
            char cell[96] = "-", v[32], d[32];
            double x;
            if (runs[i].has[m]) {
                readable(v, sizeof v, runs[i].value[m]);
                if (i && ratio(runs, i, (enum cmp_metric)m, &x)) {
                    snprintf(d, sizeof d, "%.2f", x);
                    snprintf(cell, sizeof cell, "%s (x%s)", v, d);
                } else if (i && diff(runs, i, (enum cmp_metric)m, &x)) {
                    readable(d, sizeof d, x);
                    snprintf(cell, sizeof cell, "%s (%s%s)", v, x >= 0 ? "+" : "", d);
                } else {
                    snprintf(cell, sizeof cell, "%s", v);
                }
            }
            fprintf(f, " %-*s", CELL, cell);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nEach transport's own outputs: ");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? ", " : "", runs[i].dir);
    fputc('\n', f);
}

/* ---- CSV and JSON ---------------------------------------------------------- */

/* Exact enough to read back: 17 significant digits round-trip a double. */
static void number(FILE *f, bool has, double v, const char *none)
{
    if (has)
        fprintf(f, "%.17g", v);
    else
        fputs(none, f);
}

void cmp_write_csv(FILE *f, const struct cmp_run *runs, size_t n)
{
    fputs("transport,metric,unit,value,diff,ratio\n", f);
    for (size_t i = 0; i < n; i++)
        for (int m = 0; m < CMP_NMETRICS; m++) {
            double d = 0, r = 0;
            fprintf(f, "%s,%s,%s,", runs[i].transport, cmp_metrics[m].name, cmp_metrics[m].unit);
            number(f, runs[i].has[m], runs[i].value[m], "");
            fputc(',', f);
            number(f, diff(runs, i, (enum cmp_metric)m, &d), d, "");
            fputc(',', f);
            number(f, ratio(runs, i, (enum cmp_metric)m, &r), r, "");
            fputc('\n', f);
        }
}

/* {"metric": value or null, ...} of one transport */
static void json_values(FILE *f, const struct cmp_run *runs, size_t i, int kind)
{
    fputc('{', f);
    for (int m = 0; m < CMP_NMETRICS; m++) {
        double v = runs[i].value[m];
        bool has = kind == 0   ? runs[i].has[m]
                   : kind == 1 ? diff(runs, i, (enum cmp_metric)m, &v)
                               : ratio(runs, i, (enum cmp_metric)m, &v);
        fprintf(f, "%s\"%s\": ", m ? ", " : "", cmp_metrics[m].name);
        number(f, has, v, "null");
    }
    fputc('}', f);
}

void cmp_write_json(FILE *f, const char *config, const struct cmp_run *runs, size_t n)
{
    fputs("{\n  \"config\": ", f);
    rdma_json_fputs(config, f);
    fputs(",\n  \"reference\": ", f);
    rdma_json_fputs(runs[0].transport, f);
    fputs(",\n  \"metrics\": [", f);
    for (int m = 0; m < CMP_NMETRICS; m++) {
        fprintf(f, "%s\n    {\"name\": \"%s\", \"unit\": \"%s\", \"what\": ", m ? "," : "", cmp_metrics[m].name,
                cmp_metrics[m].unit);
        rdma_json_fputs(cmp_metrics[m].what, f);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"transports\": [", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        rdma_json_fputs(runs[i].transport, f);
        fputs(", \"dir\": ", f);
        rdma_json_fputs(runs[i].dir, f);
        fprintf(f, ", \"status\": %d,\n     \"values\": ", runs[i].status);
        json_values(f, runs, i, 0);
        fputs(",\n     \"diff\": ", f);
        json_values(f, runs, i, 1);
        fputs(",\n     \"ratio\": ", f);
        json_values(f, runs, i, 2);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}

/* ---- SVG ------------------------------------------------------------------------ */

#define SVG_W 900
#define PANEL_H 230
#define TOP 60

static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};

static const char *color(size_t i) { return colors[i % (sizeof colors / sizeof colors[0])]; }

static void text(FILE *f, double x, double y, const char *anchor, int size, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
    for (; *s; s++) /* the config's name may hold markup characters */
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    fputs("</text>\n", f);
}

/* One panel: a group of bars per metric, a bar per transport, the value
 * above each bar; a metric no run has gets no group. Heights are
 * log10(1 + value), since transports differ by orders of magnitude (drops,
 * CPU time) and a linear bar would hide all but the largest. */
static void panel(FILE *f, double y0, const char *title, const enum cmp_metric *ms, const char *const *labels,
                  size_t nm, const struct cmp_run *runs, size_t n)
{
    double max = 0;
    size_t groups = 0;
    for (size_t k = 0; k < nm; k++) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            if (runs[i].has[ms[k]]) {
                any = true;
                max = fmax(max, log10(1 + fmax(runs[i].value[ms[k]], 0)));
            }
        groups += any;
    }
    const double left = 60, right = SVG_W - 20, top = y0 + 42, bottom = y0 + PANEL_H - 40;
    text(f, left, y0 + 18, "start", 14, title);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n", left, bottom, right,
            bottom);
    if (!groups) {
        text(f, (left + right) / 2, (top + bottom) / 2, "middle", 12, "no run has these numbers");
        return;
    }
    double gw = (right - left) / (double)groups, bw = gw * 0.8 / (double)n;
    size_t g = 0;
    for (size_t k = 0; k < nm; k++) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= runs[i].has[ms[k]];
        if (!any)
            continue;
        double gx = left + gw * (double)g++ + gw * 0.1;
        for (size_t i = 0; i < n; i++) {
            char v[32] = "-";
            double h = 0;
            if (runs[i].has[ms[k]]) {
                h = max > 0 ? log10(1 + fmax(runs[i].value[ms[k]], 0)) / max * (bottom - top) : 0;
                readable(v, sizeof v, runs[i].value[ms[k]]);
            }
            double x = gx + bw * (double)i;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x,
                    bottom - h, bw * 0.9, h, color(i));
            text(f, x + bw * 0.45, bottom - h - 3, "middle", 9, v);
        }
        text(f, gx + gw * 0.4, bottom + 16, "middle", 11, labels[k]);
    }
}

void cmp_write_svg(FILE *f, const char *config, const struct cmp_run *runs, size_t n)
{
    static const enum cmp_metric lat[] = {CMP_small_p50_us, CMP_small_p99_us, CMP_fct_p50_us, CMP_fct_p99_us};
    static const char *const lat_l[] = {"<= 4 KiB p50", "<= 4 KiB p99", "all p50", "all p99"};
    static const enum cmp_metric gp[] = {CMP_goodput_gbps};
    static const char *const gp_l[] = {"bytes completed x 8 / (last end - first start)"};
    static const enum cmp_metric sd[] = {
        CMP_slowdown_le_4KiB_p50, CMP_slowdown_le_4KiB_p99, CMP_slowdown_le_64KiB_p50,
        CMP_slowdown_le_64KiB_p99, CMP_slowdown_le_1MiB_p50, CMP_slowdown_le_1MiB_p99,
        CMP_slowdown_gt_1MiB_p50, CMP_slowdown_gt_1MiB_p99};
    static const char *const sd_l[] = {"<=4K p50", "<=4K p99", "<=64K p50", "<=64K p99",
                                       "<=1M p50", "<=1M p99", ">1M p50",   ">1M p99"};
    static const enum cmp_metric ev[] = {CMP_tail_drops, CMP_link_losses, CMP_pfc_pauses, CMP_retransmitted,
                                         CMP_timeouts};
    static const char *const ev_l[] = {"tail drops", "link losses", "PFC pauses", "retransmitted",
                                       "timeouts"};
    static const enum cmp_metric cpu[] = {CMP_cpu_us_per_GB};
    static const char *const cpu_l[] = {"host CPU time per GB delivered"};
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
            SVG_W, TOP + 5 * PANEL_H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    char title[512];
    snprintf(title, sizeof title, "rdmasim compare %s", config);
    text(f, 20, 22, "start", 16, title);
    for (size_t i = 0; i < n; i++) {
        double x = 20 + 130 * (double)i;
        fprintf(f, "<rect x=\"%.1f\" y=\"34\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, color(i));
        text(f, x + 16, 45, "start", 12, runs[i].transport);
    }
    panel(f, TOP, "Message completion time (us, log scale)", lat, lat_l, 4, runs, n);
    panel(f, TOP + PANEL_H, "Goodput (Gb/s, log scale)", gp, gp_l, 1, runs, n);
    panel(f, TOP + 2 * PANEL_H, "Completion-time slowdown by message size (log scale)", sd, sd_l, 8, runs, n);
    panel(f, TOP + 3 * PANEL_H, "Drops, pauses and retransmissions (log scale)", ev, ev_l, 5, runs, n);
    panel(f, TOP + 4 * PANEL_H, "Host CPU (us per GB, log scale)", cpu, cpu_l, 1, runs, n);
    fputs("</svg>\n", f);
}
