/* report_json.c - the analysis as one JSON document.
 *
 * Messages are written as they complete, so the document opens with them
 * and the sections that need the whole capture follow. Counts and times are
 * integers (times in ns since the first frame, small enough for jq's
 * doubles); addresses, keys and the capture start are strings, since they
 * can exceed 2^53.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

void report_json_begin(struct report *r)
{
    FILE *o = r->out;
    fputs("{\"file\":", o);
    rdma_json_fputs(r->path, o);
    fputs(",\"messages\":[", o);
}

static void endpoint_addr(FILE *o, const struct rdma_replay_key *k, bool dst)
{
    char a[RDMA_REPLAY_ADDR_TEXT_MAX];
    rdma_replay_addr_format_ip(k, dst, a, sizeof a);
    rdma_json_fputs(a, o);
}

/* An iWARP message: DDP segments for packets, STag and tagged offset or
 * queue and MSN for PSNs, and no completion for a Write or Send, which
 * nothing above TCP acknowledges. */
static void iwarp_message(FILE *o, const struct rdma_replay_msg *m)
{
    bool answered = m->kind == RDMA_REPLAY_KIND_IW_READ || m->kind == RDMA_REPLAY_KIND_IW_ATOMIC;
    fprintf(o, ",\"first_frame\":%" PRIu64 ",\"last_request_frame\":%" PRIu64, m->f_first, m->f_req_last);
    if (m->has_latency)
        fprintf(o, ",\"completion_frame\":%" PRIu64 ",\"latency_ns\":%" PRIu64, m->f_done, m->t_done - m->t_first);
    else
        fputs(",\"completion_frame\":null,\"latency_ns\":null", o);
    fprintf(o, ",\"last_frame\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"request_segments\":%" PRIu32
               ",\"response_segments\":%" PRIu32 ",\"bytes\":%" PRIu64,
            answered && m->resp_packets ? m->f_done : m->f_req_last, m->t_first, m->req_packets, m->resp_packets,
            m->bytes);
    if (m->kind != RDMA_REPLAY_KIND_IW_WRITE)
        fprintf(o, ",\"queue\":%" PRIu32 ",\"msn\":%" PRIu32, m->qn, m->msn);
    if (m->has_reth)
        fprintf(o, ",\"stag\":\"0x%08" PRIx32 "\",\"tagged_offset\":\"0x%016" PRIx64 "\"", m->rkey, m->va);
    if (m->kind == RDMA_REPLAY_KIND_IW_READ)
        fprintf(o,
                ",\"read_size\":%" PRIu32 ",\"sink_stag\":\"0x%08" PRIx32 "\",\"sink_tagged_offset\":\"0x%016" PRIx64
                "\"",
                m->dmalen, m->sink_stag, m->sink_to);
    if (m->kind == RDMA_REPLAY_KIND_IW_ATOMIC)
        fprintf(o, ",\"request_id\":%" PRIu32, m->atomic_id);
    if (m->has_ieth)
        fprintf(o, ",\"invalidate_stag\":\"0x%08" PRIx32 "\"", m->rkey);
}

void report_json_message(struct report *r, const struct rdma_replay_flow *f, const struct rdma_replay_msg *m)
{
    FILE *o = r->out;
    fputs(r->first_message_out ? ",\n" : "\n", o);
    r->first_message_out = true;
    fprintf(o, "{\"flow\":%" PRIu32 ",\"conversation\":%" PRIu32 ",\"protocol\":\"%s\",\"kind\":\"%s\",\"requester\":",
            f->id, rdma_replay_conv_id(r->an, f), rdma_proto_name((enum rdma_proto)f->proto),
            rdma_replay_kind_name(m->kind));
    endpoint_addr(o, &f->key, false);
    fputs(",\"responder\":", o);
    endpoint_addr(o, &f->key, true);
    if (f->iw) {
        fprintf(o, ",\"requester_port\":%u,\"responder_port\":%u", rdma_replay_key_port(&f->key, false),
                rdma_replay_key_port(&f->key, true));
        iwarp_message(o, m);
        fprintf(o, ",\"partial\":%s,\"status\":\"%s\"}", m->partial ? "true" : "false", rdma_replay_msg_status_name(m));
        return;
    }
    fprintf(o,
            ",\"responder_qpn\":%" PRIu32 ",\"psn\":%" PRIu32 ",\"psn_count\":%" PRIu32 ",\"first_frame\":%" PRIu64
            ",\"last_request_frame\":%" PRIu64,
            rdma_replay_key_qpn(&f->key), m->psn, m->npsn, m->f_first, m->f_req_last);
    if (m->has_latency)
        fprintf(o, ",\"completion_frame\":%" PRIu64 ",\"latency_ns\":%" PRIu64, m->f_done, m->t_done - m->t_first);
    else
        fputs(",\"completion_frame\":null,\"latency_ns\":null", o);
    fprintf(o,
            ",\"start_ns\":%" PRIu64 ",\"request_packets\":%" PRIu32 ",\"response_packets\":%" PRIu32
            ",\"retransmitted_packets\":%" PRIu32 ",\"bytes\":%" PRIu64,
            m->t_first, m->req_packets, m->resp_packets, m->retransmits, m->bytes);
    if (m->has_reth)
        fprintf(o, ",\"remote_address\":\"0x%016" PRIx64 "\",\"rkey\":\"0x%08" PRIx32 "\",\"dma_length\":%" PRIu32,
                m->va, m->rkey, m->dmalen);
    if (m->has_imm)
        fprintf(o, ",\"immediate\":\"0x%08" PRIx32 "\"", m->imm);
    if (m->has_ieth)
        fprintf(o, ",\"invalidate_rkey\":\"0x%08" PRIx32 "\"", m->rkey);
    fprintf(o, ",\"partial\":%s,\"status\":\"%s\"}", m->partial ? "true" : "false", rdma_replay_msg_status_name(m));
}

static void kind_stats(FILE *o, const struct rdma_replay_kind_stats *ks, const char *requester, bool *first)
{
    for (unsigned k = 0; k < RDMA_REPLAY_KINDS; k++) {
        const struct rdma_replay_kind_stats *s = &ks[k];
        if (!s->count)
            continue;
        fprintf(o, "%s{\"kind\":\"%s\",", *first ? "" : ",", rdma_replay_kind_name(k));
        *first = false;
        if (requester)
            fprintf(o, "\"requester\":\"%s\",", requester);
        fprintf(o, "\"count\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"packets\":%" PRIu64,
                s->count, s->failed, s->bytes, s->packets);
        if (s->lat_n)
            fprintf(o,
                    ",\"latency_ns\":{\"count\":%" PRIu64 ",\"min\":%" PRIu64 ",\"avg\":%" PRIu64 ",\"max\":%" PRIu64
                    "}",
                    s->lat_n, s->lat_min, s->lat_sum / s->lat_n, s->lat_max);
        else
            fputs(",\"latency_ns\":null", o);
        fputc('}', o);
    }
}

static void flow_json(FILE *o, const struct rdma_replay_flow *f, const char *from, const char *to)
{
    fprintf(o,
            "{\"id\":%" PRIu32 ",\"from\":\"%s\",\"to\":\"%s\",\"packets\":%" PRIu64 ",\"wire_bytes\":%" PRIu64
            ",\"goodput_bytes\":%" PRIu64 ",\"first_frame\":%" PRIu64 ",\"last_frame\":%" PRIu64
            ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"cnp\":%" PRIu64,
            f->id, from, to, f->packets, f->wire_bytes, f->goodput_bytes, f->first_frame, f->last_frame, f->first_t,
            f->last_t, f->ch.requests, f->cnp);
    if (f->cnp > 1)
        fprintf(o, ",\"cnp_min_gap_ns\":%" PRIu64, f->cnp_min_gap);
    fprintf(o,
            ",\"ecn_ce\":%" PRIu64 ",\"fecn\":%" PRIu64 ",\"bad_icrc\":%" PRIu64 ",\"retransmitted_packets\":%" PRIu64
            ",\"duplicate_packets\":%" PRIu64 ",\"unmatched_responses\":%" PRIu64 ",\"outstanding_at_end\":%" PRIu32
            ",\"path_mtu\":%" PRIu32 "}",
            f->ecn_ce, f->fecn, f->bad_icrc, f->retransmits, f->duplicates, f->unmatched, f->ch.n, f->ch.mtu);
}

static void iwarp_flow_json(FILE *o, const struct rdma_replay_flow *f, const char *from, const char *to)
{
    const struct rdma_replay_iwarp *iw = f->iw;
    fprintf(o,
            "{\"id\":%" PRIu32 ",\"from\":\"%s\",\"to\":\"%s\",\"packets\":%" PRIu64 ",\"wire_bytes\":%" PRIu64
            ",\"goodput_bytes\":%" PRIu64 ",\"first_frame\":%" PRIu64 ",\"last_frame\":%" PRIu64
            ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"ddp_segments\":%" PRIu64 ",\"requests\":%" PRIu64
            ",\"ecn_ce\":%" PRIu64 ",\"bad_mpa_crc\":%" PRIu64 ",\"bad_pdus\":%" PRIu64 ",\"terminates\":%" PRIu64
            ",\"tcp_retransmissions\":%" PRIu64 ",\"tcp_out_of_order\":%" PRIu64 ",\"tcp_gaps\":%" PRIu64
            ",\"outstanding_at_end\":%" PRIu32 "}",
            f->id, from, to, f->packets, f->wire_bytes, f->goodput_bytes, f->first_frame, f->last_frame, f->first_t,
            f->last_t, iw->segments, f->ch.requests, f->ecn_ce, iw->bad_crc, iw->malformed, iw->terminates,
            iw->tcp_retrans, iw->tcp_ooo, iw->tcp_gaps, f->ch.n);
}

static void one_flow(FILE *o, const struct rdma_replay_flow *f, const char *from, const char *to)
{
    if (f->iw)
        iwarp_flow_json(o, f, from, to);
    else
        flow_json(o, f, from, to);
}

/* The MPA startup of an iWARP conversation: the Request and Reply each
 * side sent (RFC 5044 7.1). */
static void mpa_json(FILE *o, const struct conv_view *c)
{
    const struct rdma_replay_iwarp *req = NULL, *rep = NULL;
    for (int s = 0; s < 2; s++) {
        const struct rdma_replay_flow *g = s ? c->y : c->x;
        if (g && g->iw->mpa_kind == RDMA_MPA_REQUEST)
            req = g->iw;
        else if (g && g->iw->mpa_kind == RDMA_MPA_REPLY)
            rep = g->iw;
    }
    const struct rdma_replay_iwarp *both[2] = {req, rep};
    static const char *const names[2] = {"request", "reply"};
    fputs(",\"mpa\":{", o);
    for (int k = 0; k < 2; k++) {
        const struct rdma_replay_iwarp *w = both[k];
        fprintf(o, "%s\"%s\":", k ? "," : "", names[k]);
        if (!w) {
            fputs("null", o);
            continue;
        }
        fprintf(o, "{\"frame\":%" PRIu64 ",\"from\":\"%s\",\"revision\":%u,\"markers\":%s,\"crc\":%s", w->mpa_frame,
                w == c->x->iw ? "a" : "b", w->mpa_rev, w->mpa_markers ? "true" : "false",
                w->mpa_crc ? "true" : "false");
        if (k)
            fprintf(o, ",\"rejected\":%s", w->mpa_reject ? "true" : "false");
        fputc('}', o);
    }
    if (req && rep)
        fprintf(o, ",\"setup_ns\":%" PRIu64, rep->mpa_t >= req->mpa_t ? rep->mpa_t - req->mpa_t : 0);
    fputc('}', o);
}

static void conv_end_json(FILE *o, const struct conv_view *c, const struct conv_end *e, bool dst)
{
    fputs("{\"address\":", o);
    if (!e->tcp) {
        rdma_json_fputs(e->addr, o);
        if (e->qpn_known)
            fprintf(o, ",\"qpn\":%" PRIu32 "}", e->qpn);
        else
            fputs(",\"qpn\":null}", o);
        return;
    }
    endpoint_addr(o, &c->x->key, dst);
    fprintf(o, ",\"port\":%u}", rdma_replay_key_port(&c->x->key, dst));
}

static void conversations(struct report *r, const struct conv_view *v, uint32_t n)
{
    FILE *o = r->out;
    fputs(",\"conversations\":[", o);
    for (uint32_t i = 0; i < n; i++) {
        const struct conv_view *c = &v[i];
        struct conv_end a, b;
        conv_ends(c, &a, &b);
        uint64_t dur = c->last_t - c->first_t;
        fprintf(o, "%s\n{\"id\":%" PRIu32 ",\"pairing\":\"%s\",\"transport\":\"%s\",\"protocol\":\"%s\",\"a\":",
                i ? "," : "", c->id, rdma_replay_pairing_name(c->x->pairing),
                c->x->iw ? "TCP" : rdma_transport_name(c->x->transport), rdma_proto_name((enum rdma_proto)c->x->proto));
        conv_end_json(o, c, &a, false);
        fputs(",\"b\":", o);
        conv_end_json(o, c, &b, true);
        fputs(",\"connection\":", o);
        if (c->x->conn >= 0)
            fprintf(o, "%" PRId32, c->x->conn + 1);
        else
            fputs("null", o);
        if (c->x->iw)
            mpa_json(o, c);
        fprintf(o,
                ",\"packets\":%" PRIu64 ",\"goodput_bytes\":%" PRIu64 ",\"duration_ns\":%" PRIu64
                ",\"goodput_bps\":%" PRIu64 ",\"packets_per_s\":%" PRIu64 ",\"messages\":%" PRIu64
                ",\"messages_failed\":%" PRIu64 ",\"anomalies\":%" PRIu64 ",\"flows\":[",
                c->packets, c->goodput, dur, rate_per_s(c->goodput * 8, dur), rate_per_s(c->packets, dur), c->messages,
                c->failed, c->anomalies);
        one_flow(o, c->x, "a", "b");
        if (c->y) {
            fputc(',', o);
            one_flow(o, c->y, "b", "a");
        }
        fputs("],\"message_kinds\":[", o);
        bool first = true;
        kind_stats(o, c->x->ch.ks, "a", &first);
        if (c->y)
            kind_stats(o, c->y->ch.ks, "b", &first);
        fputs("]}", o);
    }
    fputs("]", o);
}

static void connections(struct report *r)
{
    FILE *o = r->out;
    fputs(",\"connections\":[", o);
    for (uint32_t i = 0; i < r->nconns; i++) {
        const struct rdma_replay_conn *c = &r->conns[i];
        char a[RDMA_REPLAY_ADDR_TEXT_MAX], p[RDMA_REPLAY_ADDR_TEXT_MAX];
        rdma_replay_addr_format(&c->active_to_passive, false, a, sizeof a);
        rdma_replay_addr_format(&c->active_to_passive, true, p, sizeof p);
        fprintf(o, "%s\n{\"id\":%" PRIu32 ",\"active\":", i ? "," : "", i + 1);
        rdma_json_fputs(a, o);
        fprintf(o, ",\"active_qpn\":%" PRIu32 ",\"passive\":", c->active_qpn);
        rdma_json_fputs(p, o);
        if (c->have_rep)
            fprintf(o, ",\"passive_qpn\":%" PRIu32 ",\"active_start_psn\":%" PRIu32, c->passive_qpn, c->active_psn);
        else
            fputs(",\"passive_qpn\":null,\"active_start_psn\":null", o);
        fprintf(o, ",\"passive_start_psn\":%" PRIu32 ",\"path_mtu\":%" PRIu32, c->passive_psn, c->mtu);
        const uint64_t fr[] = {c->f_req, c->f_rep, c->f_rtu, c->f_dreq, c->f_drep, c->f_rej};
        static const char *const names[] = {"req", "rep", "rtu", "dreq", "drep", "rej"};
        fputs(",\"frames\":{", o);
        for (int k = 0; k < 6; k++) {
            fprintf(o, "%s\"%s\":", k ? "," : "", names[k]);
            if (fr[k])
                fprintf(o, "%" PRIu64, fr[k]);
            else
                fputs("null", o);
        }
        fputc('}', o);
        if (c->f_rtu)
            fprintf(o, ",\"setup_ns\":%" PRIu64, c->t_rtu - c->t_req);
        if (c->f_rej)
            fprintf(o, ",\"reject_reason\":%u", c->rej_reason);
        fputc('}', o);
    }
    fputs("]", o);
}

static void anomalies(struct report *r)
{
    FILE *o = r->out;
    uint32_t *idx = anomaly_order(r);
    fputs(",\"anomalies\":[", o);
    for (uint32_t i = 0; idx && i < r->nanom; i++) {
        const struct rdma_replay_anomaly *a = &r->anom[idx[i]];
        char code[128];
        anomaly_code_text(a, code, sizeof code);
        fprintf(o, "%s\n{\"kind\":\"%s\",\"code\":%u,\"detail\":", i ? "," : "", rdma_replay_anomaly_name(a->kind),
                a->code);
        rdma_json_fputs(code, o);
        if (a->flow >= 0) {
            const struct rdma_replay_flow *f = rdma_replay_flow(r->an, (uint32_t)a->flow);
            fprintf(o, ",\"conversation\":%" PRIu32 ",\"flow\":%" PRIu32, rdma_replay_conv_id(r->an, f), f->id);
        }
        fprintf(o,
                ",\"count\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"first_frame\":%" PRIu64 ",\"last_frame\":%" PRIu64
                ",\"value_sum\":%" PRIu64 ",\"value_min\":%" PRIu64 ",\"value_max\":%" PRIu64 ",\"events\":[",
                a->count, a->packets, a->first_frame, a->last_frame, a->value_sum, a->value_min, a->value_max);
        for (uint32_t e = 0; e < a->nsamples; e++) {
            const struct rdma_replay_event *ev = &a->ev[e];
            fprintf(o, "%s{\"frames\":[", e ? "," : "");
            for (int k = 0, n = 0; k < 3; k++)
                if (ev->frame[k] && (!k || ev->frame[k] != ev->frame[k - 1]))
                    fprintf(o, "%s%" PRIu64, n++ ? "," : "", ev->frame[k]);
            fprintf(o, "],\"t_ns\":%" PRIu64 ",\"psn\":%" PRIu32 ",\"psn_end\":%" PRIu32 ",\"value\":%" PRIu64, ev->t,
                    ev->psn, ev->psn_end, ev->value);
            if (ev->text) {
                fputs(",\"text\":", o);
                rdma_json_fputs(ev->text, o);
            }
            fputc('}', o);
        }
        fputs("]}", o);
    }
    fputs("],\"anomaly_totals\":{", o);
    for (unsigned k = 0; k < RDMA_REPLAY_ANOM_COUNT; k++)
        fprintf(o, "%s\"%s\":%" PRIu64, k ? "," : "", rdma_replay_anomaly_name(k), rdma_replay_anomaly_total(r->an, k));
    fputc('}', o);
    free(idx);
}

static void pfc(struct report *r)
{
    FILE *o = r->out;
    fputs(",\"pfc\":[", o);
    for (uint32_t i = 0; i < r->npfc; i++) {
        const struct rdma_replay_pfc *e = &r->pfc[i];
        fprintf(o, "%s\n{\"source\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"priority\":", i ? "," : "", e->mac[0],
                e->mac[1], e->mac[2], e->mac[3], e->mac[4], e->mac[5]);
        if (e->prio < 8)
            fprintf(o, "%u", e->prio);
        else
            fputs("\"all\"", o);
        fprintf(o,
                ",\"frames\":%" PRIu64 ",\"resume_frames\":%" PRIu64 ",\"quanta\":%" PRIu64 ",\"requested_ns\":%" PRIu64
                ",\"paused_ns\":%" PRIu64 ",\"longest_pause_ns\":%" PRIu64 ",\"first_frame\":%" PRIu64
                ",\"last_frame\":%" PRIu64 "}",
                e->frames, e->xon, e->quanta, e->requested_ns, e->paused_ns, e->longest_ns, e->first_frame,
                e->last_frame);
    }
    fputs("]", o);
}

void report_json_end(struct report *r)
{
    FILE *o = r->out;
    uint32_t n = 0;
    struct conv_view *v = conv_views(r, &n);
    if (!v)
        r->oom = true;
    /* seconds and nanoseconds as decode writes them: -0.5 s is -0.500000000 */
    int64_t t0 = (int64_t)r->tot->t0_sec;
    uint64_t t0_ns = r->tot->t0_nsec, t0_whole = (uint64_t)t0;
    const char *t0_sign = "";
    if (t0 < 0) {
        t0_sign = "-";
        t0_whole = 0 - (uint64_t)t0 - (t0_ns ? 1 : 0);
        t0_ns = t0_ns ? 1000000000 - t0_ns : 0;
    }
    fprintf(o,
            "],\n\"capture_start\":\"%s%" PRIu64 ".%09" PRIu64 "\",\"link_speed_bps\":%" PRIu64
            ",\"interval_ns\":%" PRIu64 ",\"summary\":{\"frames\":%" PRIu64 ",\"rdma_frames\":%" PRIu64
            ",\"other_frames\":%" PRIu64 ",\"bad_frames\":%" PRIu64 ",\"snapped_frames\":%" PRIu64
            ",\"wire_bytes\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"conversations\":%" PRIu32 ",\"flows\":%" PRIu32
            ",\"messages\":%" PRIu64 ",\"messages_failed\":%" PRIu64 ",\"cm_messages\":%" PRIu64
            ",\"management_frames\":%" PRIu64 ",\"connections\":%" PRIu32 ",\"damaged_record\":%s"
            ",\"memory_limit_flows\":%" PRIu32 ",\"unanalysed_frames\":%" PRIu64 "}",
            t0_sign, t0_whole, t0_ns, r->opts->link_bps, r->opts->interval_ns, r->tot->frames,
            r->tot->rdma_frames, r->tot->other_frames, r->tot->bad_frames, r->tot->snapped_frames, r->tot->wire_bytes,
            r->tot->t_last, n, r->nflows, r->tot->messages_done, r->tot->messages_failed, r->tot->cm_messages,
            r->tot->mgmt_frames, r->nconns, r->damaged ? "true" : "false", r->tot->max_flows,
            r->tot->capped_frames);
    fputs(",\"message_kinds\":[", o);
    struct rdma_replay_kind_stats all[RDMA_REPLAY_KINDS] = {0};
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct rdma_replay_kind_stats *ks = rdma_replay_flow(r->an, i)->ch.ks;
        for (unsigned k = 0; k < RDMA_REPLAY_KINDS; k++)
            rdma_replay_kind_stats_merge(&all[k], &ks[k]);
    }
    bool first = true;
    kind_stats(o, all, NULL, &first);
    fputs("]", o);
    connections(r);
    conversations(r, v, n);
    anomalies(r);
    pfc(r);
    fputs("}\n", o);
    free(v);
}
