/* replay.c - the analysis as the library's users see it: made, finished
 * at the end of the capture, read, freed; fed one decoded frame at a time
 * in between (ingest.c). */
#include <stdlib.h>

#include "internal.h"

struct rdma_replay *rdma_replay_new(const struct rdma_replay_config *cfg, const struct rdma_replay_callbacks *cb)
{
    struct rdma_replay *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->cfg = *cfg;
    if (!r->cfg.max_memory)
        r->cfg.max_memory = RDMA_REPLAY_DEFAULT_MAX_MEMORY;
    uint64_t flows = r->cfg.max_memory / RDMA_REPLAY_FLOW_COST;
    r->flows.max_flows = r->tot.max_flows = flows > UINT32_MAX - 1 ? UINT32_MAX - 1 : flows ? (uint32_t)flows : 1;
    if (cb)
        r->cb = *cb;
    r->timeline = r->cfg.interval_ns && (r->cb.flow_interval || r->cb.pfc_interval);
    return r;
}

bool rdma_replay_finish(struct rdma_replay *r)
{
    if (r->oom)
        return false;
    replay__iwarp_finish(r);
    replay__timeline_flush(r);
    replay__pfc_finish(r);
    replay__finish_flows(r);
    return !r->oom;
}

void rdma_replay_free(struct rdma_replay *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->flows.n; i++) {
        struct rdma_replay_flow *f = flow_at(&r->flows, i);
        replay__chan_free(&f->ch);
        replay__iw_flow_free(f);
    }
    replay__flow_table_free(&r->flows);
    replay__anomalies_free(&r->anomalies);
    replay__conns_free(&r->conns);
    replay__pfc_free(&r->pfc);
    free(r->tl_active);
    rdma_iwarp_stream_free(r->iwarp);
    free(r->iw_times);
    free(r);
}

const struct rdma_replay_totals *rdma_replay_totals(const struct rdma_replay *r)
{
    return &r->tot;
}

const struct rdma_replay_config *rdma_replay_config(const struct rdma_replay *r)
{
    return &r->cfg;
}

uint32_t rdma_replay_flow_count(const struct rdma_replay *r)
{
    return r->flows.n;
}

const struct rdma_replay_flow *rdma_replay_flow(const struct rdma_replay *r, uint32_t i)
{
    return i < r->flows.n ? flow_at(&r->flows, i) : NULL;
}

uint32_t rdma_replay_conv_id(const struct rdma_replay *r, const struct rdma_replay_flow *f)
{
    return replay__flow_conv(&r->flows, f);
}

const struct rdma_replay_anomaly *rdma_replay_anomalies(const struct rdma_replay *r, uint32_t *n)
{
    *n = r->anomalies.n;
    return r->anomalies.v;
}

uint64_t rdma_replay_anomaly_total(const struct rdma_replay *r, unsigned kind)
{
    return kind < RDMA_REPLAY_ANOM_COUNT ? r->anomalies.per_kind[kind] : 0;
}

const struct rdma_replay_conn *rdma_replay_conns(const struct rdma_replay *r, uint32_t *n)
{
    *n = r->conns.n;
    return r->conns.v;
}

const struct rdma_replay_pfc *rdma_replay_pfc(const struct rdma_replay *r, uint32_t *n)
{
    *n = r->pfc.n;
    return r->pfc.v;
}
