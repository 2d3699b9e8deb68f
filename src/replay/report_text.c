/* report_text.c - the analysis as a short report for people: a table per
 * section, the rows that matter most first, long tables cut at --top rows
 * (the JSON report has them all). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define EXAMPLES 3 /* occurrences described per anomaly row */

static void header(struct report *r, uint32_t nconv)
{
    FILE *o = r->out;
    char dur[32], speed[32];
    fmt_duration(dur, sizeof dur, r->tot->t_last);
    fmt_rate(speed, sizeof speed, r->opts->link_bps);
    fprintf(o, "rdmasim replay: %s\n", r->path);
    fprintf(o, "  %" PRIu64 " frames in %s: %" PRIu64 " RDMA, %" PRIu64 " other, %" PRIu64 " bad", r->tot->frames, dur,
            r->tot->rdma_frames, r->tot->other_frames, r->tot->bad_frames);
    if (r->tot->snapped_frames)
        fprintf(o, ", %" PRIu64 " cut by the snap length (ICRC not checked)", r->tot->snapped_frames);
    fprintf(o, "\n  %" PRIu32 " conversation%s, %" PRIu64 " message%s (%" PRIu64 " failed or unacknowledged), %" PRIu64
               " CM message%s\n",
            nconv, nconv == 1 ? "" : "s", r->tot->messages_done, r->tot->messages_done == 1 ? "" : "s",
            r->tot->messages_failed, r->tot->cm_messages, r->tot->cm_messages == 1 ? "" : "s");
    fprintf(o, "  link speed %s (--link-speed): a PFC pause quantum of 512 bit times is %.3g ns\n", speed,
            512e9 / (double)r->opts->link_bps);
    if (r->damaged)
        fprintf(o, "  the capture ends with a damaged record: later frames were not read\n");
    if (r->tot->capped_frames)
        fprintf(o,
                "  memory limit reached (--max-memory): only the first %" PRIu32 " flows were followed; %" PRIu64
                " frames of later flows were not analysed\n",
                r->tot->max_flows, r->tot->capped_frames);
}

static void endpoint(char *buf, size_t cap, const struct conv_end *e)
{
    if (e->tcp)
        snprintf(buf, cap, "%s", e->addr);
    else if (e->qpn_known)
        snprintf(buf, cap, "%s QP 0x%06" PRIx32, e->addr, e->qpn);
    else
        snprintf(buf, cap, "%s QP ?", e->addr);
}

static void connections(struct report *r)
{
    FILE *o = r->out;
    if (!r->nconns)
        return;
    fprintf(o, "\nConnections (CM): %" PRIu32 "\n", r->nconns);
    fprintf(o, "  %-4s %-34s %-34s %-9s %-9s %-5s %-26s %s\n", "#", "active", "passive", "PSN a>p", "PSN p>a",
            "MTU", "frames REQ/REP/RTU/DREQ/DREP", "setup");
    for (uint32_t i = 0; i < r->nconns && i < r->opts->top; i++) {
        const struct rdma_replay_conn *c = &r->conns[i];
        struct conv_end a = {.qpn = c->active_qpn, .qpn_known = true},
                        p = {.qpn = c->passive_qpn, .qpn_known = c->have_rep};
        rdma_replay_addr_format(&c->active_to_passive, false, a.addr, sizeof a.addr);
        rdma_replay_addr_format(&c->active_to_passive, true, p.addr, sizeof p.addr);
        char ea[96], ep[96], psn[16], frames[64], setup[32] = "-";
        endpoint(ea, sizeof ea, &a);
        endpoint(ep, sizeof ep, &p);
        if (c->have_rep)
            snprintf(psn, sizeof psn, "%" PRIu32, c->active_psn);
        else
            snprintf(psn, sizeof psn, "-");
        const uint64_t fr[] = {c->f_req, c->f_rep, c->f_rtu, c->f_dreq, c->f_drep};
        size_t n = 0;
        for (int k = 0; k < 5; k++)
            n += (size_t)snprintf(frames + n, sizeof frames - n, fr[k] ? "%s%" PRIu64 : "%s-", k ? "/" : "", fr[k]);
        if (c->f_rej)
            snprintf(frames + n, sizeof frames - n, " REJ %" PRIu64, c->f_rej);
        if (c->f_rtu)
            fmt_duration(setup, sizeof setup, c->t_rtu - c->t_req);
        fprintf(o, "  %-4" PRIu32 " %-34s %-34s %-9s %-9" PRIu32 " %-5" PRIu32 " %-26s %s\n", i + 1, ea, ep, psn,
                c->passive_psn, c->mtu, frames, setup);
    }
    if (r->nconns > r->opts->top)
        fprintf(o, "  ... and %" PRIu32 " more (--top, --json)\n", r->nconns - r->opts->top);
}

static void conversations(struct report *r, const struct conv_view *v, uint32_t n)
{
    FILE *o = r->out;
    fprintf(o, "\nConversations (trouble first, then goodput)\n");
    fprintf(o, "  %-5s %-34s %-34s %-8s %-8s %-10s %-10s %-11s %-11s %-6s %s\n", "conv", "A", "B", "pairing",
            "packets", "goodput", "duration", "rate", "pkt/s", "msgs", "anomalies");
    for (uint32_t i = 0; i < n && i < r->opts->top; i++) {
        const struct conv_view *c = &v[i];
        struct conv_end a, b;
        conv_ends(c, &a, &b);
        char ea[96], eb[96], gp[24], dur[24], rate[24];
        endpoint(ea, sizeof ea, &a);
        endpoint(eb, sizeof eb, &b);
        uint64_t d = c->last_t - c->first_t;
        fmt_bytes(gp, sizeof gp, c->goodput);
        fmt_duration(dur, sizeof dur, d);
        if (d)
            fmt_rate(rate, sizeof rate, rate_per_s(c->goodput * 8, d));
        else
            snprintf(rate, sizeof rate, "-");
        char pps[24] = "-";
        if (d)
            snprintf(pps, sizeof pps, "%" PRIu64, rate_per_s(c->packets, d));
        fprintf(o, "  %-5" PRIu32 " %-34s %-34s %-8s %-8" PRIu64 " %-10s %-10s %-11s %-11s %-6" PRIu64 " %" PRIu64 "\n",
                c->id, ea, eb, rdma_replay_pairing_name(c->x->pairing), c->packets, gp, dur, rate, pps, c->messages,
                c->anomalies);
    }
    if (n > r->opts->top)
        fprintf(o, "  ... and %" PRIu32 " more (--top, --json)\n", n - r->opts->top);
}

static void message_kinds(struct report *r)
{
    FILE *o = r->out;
    struct rdma_replay_kind_stats all[RDMA_REPLAY_KINDS] = {0};
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct rdma_replay_kind_stats *ks = rdma_replay_flow(r->an, i)->ch.ks;
        for (unsigned k = 0; k < RDMA_REPLAY_KINDS; k++)
            rdma_replay_kind_stats_merge(&all[k], &ks[k]);
    }
    fprintf(o, "\nMessages\n");
    fprintf(o, "  %-34s %-8s %-7s %-10s %-8s %s\n", "kind", "count", "failed", "bytes", "packets",
            "latency min / avg / max");
    for (unsigned k = 0; k < RDMA_REPLAY_KINDS; k++) {
        const struct rdma_replay_kind_stats *s = &all[k];
        if (!s->count)
            continue;
        char b[24], lat[80] = "-";
        fmt_bytes(b, sizeof b, s->bytes);
        if (s->lat_n) {
            char mn[24], av[24], mx[24];
            fmt_duration(mn, sizeof mn, s->lat_min);
            fmt_duration(av, sizeof av, s->lat_sum / s->lat_n);
            fmt_duration(mx, sizeof mx, s->lat_max);
            snprintf(lat, sizeof lat, "%s / %s / %s", mn, av, mx);
        }
        fprintf(o, "  %-34s %-8" PRIu64 " %-7" PRIu64 " %-10s %-8" PRIu64 " %s\n", rdma_replay_kind_name(k), s->count,
                s->failed, b, s->packets, lat);
    }
}

static void slowest(struct report *r)
{
    FILE *o = r->out;
    struct slow_list *s = &r->slow;
    if (!s->n)
        return;
    slow_sort(s);
    fprintf(o, "\nSlowest messages\n");
    fprintf(o, "  %-5s %-26s %-9s %-15s %-8s %-10s %-30s %s\n", "conv", "kind", "PSN", "frames", "bytes",
            "latency", "remote address / key", "status");
    for (uint32_t i = 0; i < s->n; i++) {
        const struct rdma_replay_msg *m = &s->v[i].m;
        const struct rdma_replay_flow *f = rdma_replay_flow(r->an, s->v[i].flow);
        char frames[48], lat[24], remote[40] = "-", psn[16] = "-";
        snprintf(frames, sizeof frames, "%" PRIu64 "-%" PRIu64, m->f_first, m->f_done);
        fmt_duration(lat, sizeof lat, m->t_done - m->t_first);
        if (m->has_reth)
            snprintf(remote, sizeof remote, "0x%" PRIx64 " / 0x%" PRIx32, m->va, m->rkey);
        if (!f->iw) /* iWARP has no PSNs */
            snprintf(psn, sizeof psn, "%" PRIu32, m->psn);
        fprintf(o, "  %-5" PRIu32 " %-26s %-9s %-15s %-8" PRIu64 " %-10s %-30s %s\n", rdma_replay_conv_id(r->an, f),
                rdma_replay_kind_name(m->kind), psn, frames, m->bytes, lat, remote, rdma_replay_msg_status_name(m));
    }
}

/* One occurrence in a few words, with its frames. */
static void describe(char *buf, size_t cap, const struct rdma_replay_anomaly *a, const struct rdma_replay_event *ev)
{
    char v[24];
    size_t n = 0;
    switch (a->kind) {
    case RDMA_REPLAY_ANOM_PSN_GAP:
        n = (size_t)snprintf(buf, cap, "PSN %" PRIu32 "-%" PRIu32 " missing", ev->psn, ev->psn_end);
        break;
    case RDMA_REPLAY_ANOM_GO_BACK_N:
        fmt_duration(v, sizeof v, ev->value);
        snprintf(buf, cap,
                 "PSN %" PRIu32 "-%" PRIu32 " resent in frames %" PRIu64 "-%" PRIu64 ", %s after frame %" PRIu64,
                 ev->psn, ev->psn_end, ev->frame[0], ev->frame[1], v, ev->frame[2]);
        return;
    case RDMA_REPLAY_ANOM_RNR_NAK:
        fmt_duration(v, sizeof v, ev->value);
        n = (size_t)snprintf(buf, cap, "PSN %" PRIu32 ", wait %s", ev->psn, v);
        break;
    case RDMA_REPLAY_ANOM_OUT_OF_ORDER:
    case RDMA_REPLAY_ANOM_UNMATCHED:
        if (a->code) /* iWARP: no PSN */
            break;
        /* fall through */
    case RDMA_REPLAY_ANOM_ONE_WAY:
    case RDMA_REPLAY_ANOM_NAK:
    case RDMA_REPLAY_ANOM_MISSING_ACK:
    case RDMA_REPLAY_ANOM_DUPLICATE:
    case RDMA_REPLAY_ANOM_RETRANSMIT:
    case RDMA_REPLAY_ANOM_BAD_ICRC:
        n = (size_t)snprintf(buf, cap, "PSN %" PRIu32, ev->psn);
        break;
    case RDMA_REPLAY_ANOM_PFC_PAUSE:
        fmt_duration(v, sizeof v, ev->value);
        n = (size_t)snprintf(buf, cap, "%s", v);
        break;
    case RDMA_REPLAY_ANOM_BAD_FRAME:
        n = (size_t)snprintf(buf, cap, "%s", ev->text ? ev->text : "?");
        break;
    case RDMA_REPLAY_ANOM_TERMINATE:
        if (ev->text)
            n = (size_t)snprintf(buf, cap, "%s terminated", ev->text);
        break;
    case RDMA_REPLAY_ANOM_BAD_MPA_CRC:
        n = (size_t)snprintf(buf, cap, "%s, %" PRIu64 " octets", ev->text ? ev->text : "FPDU", ev->value);
        break;
    case RDMA_REPLAY_ANOM_TCP_RETRANSMIT:
    case RDMA_REPLAY_ANOM_TCP_OUT_OF_ORDER:
        n = (size_t)snprintf(buf, cap, "%" PRIu64 " bytes", ev->value);
        break;
    case RDMA_REPLAY_ANOM_INCOMPLETE:
        n = (size_t)snprintf(buf, cap, "%" PRIu64 " segment%s seen", ev->value, ev->value == 1 ? "" : "s");
        break;
    }
    if (!n && cap)
        buf[0] = 0;
    if (n >= cap)
        return;
    uint64_t fr[3];
    int nf = 0;
    for (int k = 0; k < 3; k++)
        if (ev->frame[k] && (!nf || fr[nf - 1] != ev->frame[k]))
            fr[nf++] = ev->frame[k];
    /* after a description the frames go in parentheses, else alone */
    bool alone = !n;
    for (int i = 0; i < nf && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s%" PRIu64, i ? ", " : alone ? "" : " (",
                              i ? "" : nf > 1 ? "frames " : "frame ", fr[i]);
    if (nf && n < cap && !alone)
        snprintf(buf + n, cap - n, ")");
}

/* The time priority prio (8: PAUSE, all of them) was held paused, summed
 * over the senders that paused it. */
static uint64_t pfc_paused_ns(const struct report *r, unsigned prio)
{
    uint64_t ns = 0;
    for (uint32_t i = 0; i < r->npfc; i++)
        if (r->pfc[i].prio == prio)
            ns += r->pfc[i].paused_ns;
    return ns;
}

static void anomalies(struct report *r)
{
    FILE *o = r->out;
    uint32_t *idx = anomaly_order(r);
    if (!idx) {
        r->oom = true;
        return;
    }
    fprintf(o, "\nAnomalies (most severe first)\n");
    if (!r->nanom)
        fprintf(o, "  none\n");
    else
        fprintf(o, "  %-26s %-48s %-5s %-7s %s\n", "kind", "detail", "conv", "count", "occurrences");
    uint32_t rows = r->opts->top * 2;
    for (uint32_t i = 0; i < r->nanom && i < rows; i++) {
        const struct rdma_replay_anomaly *a = &r->anom[idx[i]];
        char code[128], conv[16] = "-", what[512];
        anomaly_code_text(a, code, sizeof code);
        if (a->flow >= 0)
            snprintf(conv, sizeof conv, "%" PRIu32,
                     rdma_replay_conv_id(r->an, rdma_replay_flow(r->an, (uint32_t)a->flow)));
        size_t n = 0;
        what[0] = 0;
        if (a->kind == RDMA_REPLAY_ANOM_CNP || a->kind == RDMA_REPLAY_ANOM_ECN_CE || a->kind == RDMA_REPLAY_ANOM_FECN) {
            n = (size_t)snprintf(what, sizeof what, "frames %" PRIu64 "-%" PRIu64, a->first_frame, a->last_frame);
            if (a->kind == RDMA_REPLAY_ANOM_CNP && a->count > 1) {
                char g[24];
                fmt_duration(g, sizeof g, rdma_replay_flow(r->an, (uint32_t)a->flow)->cnp_min_gap);
                snprintf(what + n, sizeof what - n, ", closest %s apart", g);
            }
        } else if (a->kind == RDMA_REPLAY_ANOM_PFC_PAUSE) {
            /* paused: the time the priority was held, as --json has it;
             * requested: the sum of every frame's pause time, which
             * overlapping and resumed pauses make far larger */
            char paused[24], tot[24];
            fmt_duration(paused, sizeof paused, pfc_paused_ns(r, a->code));
            fmt_duration(tot, sizeof tot, a->value_sum);
            snprintf(what, sizeof what, "%s paused (%s requested), frames %" PRIu64 "-%" PRIu64, paused, tot,
                     a->first_frame, a->last_frame);
        } else {
            for (uint32_t e = 0; e < a->nsamples && e < EXAMPLES && n < sizeof what; e++) {
                char one[160];
                describe(one, sizeof one, a, &a->ev[e]);
                n += (size_t)snprintf(what + n, sizeof what - n, "%s%s", e ? "; " : "", one);
            }
            if (a->count > EXAMPLES && n < sizeof what)
                snprintf(what + n, sizeof what - n, "; ...");
        }
        fprintf(o, "  %-26s %-48s %-5s %-7" PRIu64 " %s\n", rdma_replay_anomaly_name(a->kind), code, conv, a->count,
                what);
    }
    if (r->nanom > rows)
        fprintf(o, "  ... and %" PRIu32 " more rows (--top, --json)\n", r->nanom - rows);
    free(idx);
}

static void pfc(struct report *r)
{
    FILE *o = r->out;
    if (!r->npfc)
        return;
    char speed[24];
    fmt_rate(speed, sizeof speed, r->opts->link_bps);
    fprintf(o, "\nPFC pauses (durations at %s)\n", speed);
    fprintf(o, "  %-18s %-5s %-7s %-7s %-10s %-10s %-10s %s\n", "source", "prio", "frames", "resume", "paused",
            "longest", "requested", "frames");
    for (uint32_t i = 0; i < r->npfc; i++) {
        const struct rdma_replay_pfc *e = &r->pfc[i];
        char prio[8], paused[24], longest[24], req[24];
        snprintf(prio, sizeof prio, e->prio < 8 ? "%u" : "all", e->prio);
        fmt_duration(paused, sizeof paused, e->paused_ns);
        fmt_duration(longest, sizeof longest, e->longest_ns);
        fmt_duration(req, sizeof req, e->requested_ns);
        fprintf(o, "  %02x:%02x:%02x:%02x:%02x:%02x  %-5s %-7" PRIu64 " %-7" PRIu64 " %-10s %-10s %-10s %" PRIu64
                   "-%" PRIu64 "\n",
                e->mac[0], e->mac[1], e->mac[2], e->mac[3], e->mac[4], e->mac[5], prio, e->frames, e->xon, paused,
                longest, req, e->first_frame, e->last_frame);
    }
}

void report_text(struct report *r)
{
    uint32_t n = 0;
    struct conv_view *v = conv_views(r, &n);
    if (!v) {
        r->oom = true;
        return;
    }
    header(r, n);
    connections(r);
    conversations(r, v, n);
    message_kinds(r);
    slowest(r);
    anomalies(r);
    pfc(r);
    free(v);
}
