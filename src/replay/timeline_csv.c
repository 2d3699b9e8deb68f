/* timeline_csv.c - the --timeline CSV: one row per interval for every flow
 * that carried packets in it, and for every PFC priority paused or pausing
 * in it, written as the analysis closes each interval (replay/timeline.c).
 * Intervals without a row for a flow had no packets of that flow (goodput
 * zero).
 */
#include <inttypes.h>

#include "report.h"

/* Count what a row took; past --timeline-max the analysis stops. */
static bool counted(struct report *r, int n)
{
    if (n > 0)
        r->timeline_bytes += (uint64_t)n;
    if (r->timeline_bytes > r->opts->timeline_max) {
        r->timeline_over = true;
        return false;
    }
    return true;
}

void timeline_header(struct report *r)
{
    fprintf(r->timeline, "start_ns,interval_ns,kind,id,conversation,label,packets,goodput_bytes,"
                         "goodput_bps,packets_per_s,cnp,ecn_ce,nak,retransmits,pause_frames,paused_ns\n");
}

bool timeline_flow_row(void *ctx, const struct rdma_replay *an, uint64_t lo, const struct rdma_replay_flow *f)
{
    struct report *r = ctx;
    uint64_t iv = r->opts->interval_ns;
    char src[RDMA_REPLAY_ADDR_TEXT_MAX], dst[RDMA_REPLAY_ADDR_TEXT_MAX], to[16] = "TCP";
    rdma_replay_addr_format(&f->key, false, src, sizeof src);
    rdma_replay_addr_format(&f->key, true, dst, sizeof dst);
    if (!f->iw)
        snprintf(to, sizeof to, "QP 0x%06" PRIx32, rdma_replay_key_qpn(&f->key));
    int n = fprintf(r->timeline,
            "%" PRIu64 ",%" PRIu64 ",flow,%" PRIu32 ",%" PRIu32 ",%s > %s %s,%" PRIu64
            ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",0,0\n",
            lo, iv, f->id, rdma_replay_conv_id(an, f), src, dst, to, f->tl_packets, f->tl_bytes,
            rate_per_s(f->tl_bytes * 8, iv), rate_per_s(f->tl_packets, iv), f->tl_cnp, f->tl_ce, f->tl_nak,
            f->tl_retrans);
    return counted(r, n);
}

bool timeline_pfc_row(void *ctx, const struct rdma_replay *an, uint64_t lo, const struct rdma_replay_pfc *e,
                      uint64_t paused)
{
    struct report *r = ctx;
    (void)an;
    char prio[8];
    if (e->prio < 8)
        snprintf(prio, sizeof prio, "%u", e->prio);
    else
        snprintf(prio, sizeof prio, "all");
    int n = fprintf(r->timeline,
            "%" PRIu64 ",%" PRIu64
            ",pfc,%s,,PFC priority %s from %02x:%02x:%02x:%02x:%02x:%02x,0,0,0,0,0,0,0,0,%" PRIu64 ",%" PRIu64 "\n",
            lo, r->opts->interval_ns, prio, prio, e->mac[0], e->mac[1], e->mac[2], e->mac[3], e->mac[4], e->mac[5],
            e->tl_frames, paused);
    return counted(r, n);
}
