/* cm.c - InfiniBand Communication Manager exchanges (IBA vol. 1 ch. 12),
 * which name both QPNs of a connection and the PSN each side starts at.
 *
 *   active                       passive
 *     REQ  (local QPN, starting PSN, path MTU)  ->
 *     <-  REP  (local QPN, starting PSN)
 *     RTU ->                     ... DREQ/DREP, or REJ instead of REP
 *
 * The Starting PSN of a REQ or REP is the PSN its sender expects to receive
 * first, i.e. the peer's first request PSN: Linux drivers/infiniband/core/
 * cm.c sets the active side's rq_psn from its REQ and the passive side's
 * rq_psn from its REP, and the rxe and native InfiniBand captures in
 * pcaps/real/ show the active side's first request carrying the REP's PSN.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void replay__conns_free(struct conns *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* CM messages are few; the newest connection is the likeliest match. */
static struct rdma_replay_conn *find(struct conns *cs, uint32_t active_comm, uint32_t passive_comm, bool need_passive)
{
    for (uint32_t i = cs->n; i-- > 0;) {
        struct rdma_replay_conn *c = &cs->v[i];
        if (c->active_comm == active_comm && (!need_passive || (c->have_rep && c->passive_comm == passive_comm)))
            return c;
    }
    return NULL;
}

/* Either side may disconnect: try both orders of the communication IDs. */
static struct rdma_replay_conn *find_either(struct conns *cs, uint32_t local, uint32_t remote)
{
    struct rdma_replay_conn *c = find(cs, local, remote, true);
    return c ? c : find(cs, remote, local, true);
}

/* Path MTU code (IBA table 224 / 9.6.2: 1 = 256 ... 5 = 4096). */
static uint32_t mtu_bytes(unsigned code)
{
    return code >= 1 && code <= 5 ? 128u << code : 0;
}

static void req(struct rdma_replay *r, const struct rdma_cm_req *m, const struct rdma_replay_key *k)
{
    struct conns *cs = &r->conns;
    if (find(cs, m->localcommid, 0, false))
        return; /* a REQ resent by the CM's own retry timer */
    if (cs->n == cs->cap) {
        uint32_t cap = cs->cap ? cs->cap * 2 : 16;
        struct rdma_replay_conn *v = realloc(cs->v, cap * sizeof *v);
        if (!v) {
            r->oom = true;
            return;
        }
        cs->v = v;
        cs->cap = cap;
    }
    struct rdma_replay_conn *c = &cs->v[cs->n++];
    memset(c, 0, sizeof *c);
    c->active_to_passive = *k;
    c->active_qpn = m->localqpn;
    c->active_comm = m->localcommid;
    c->passive_psn = m->startpsn;
    c->mtu = mtu_bytes(m->pppmtu);
    c->transport = m->transpsvctype;
    c->f_req = r->frame;
    c->t_req = r->t;
}

static void expect(struct rdma_replay_flow *f, uint32_t psn, uint32_t mtu, unsigned transport, int32_t conn)
{
    struct rdma_replay_chan *ch = &f->ch;
    if (!ch->requests) {
        ch->epsn = psn;
        ch->psn_valid = true;
        ch->psn_from_cm = true;
    }
    if (!ch->mtu)
        ch->mtu = mtu;
    if (!f->packets)
        f->transport = (uint8_t)transport;
    f->conn = conn;
}

static void rep(struct rdma_replay *r, const struct rdma_cm_rep *m, const struct rdma_replay_key *k)
{
    struct rdma_replay_conn *c = find(&r->conns, m->remotecommid, 0, false);
    if (!c || c->have_rep)
        return;
    c->have_rep = true;
    c->passive_qpn = m->localqpn;
    c->passive_comm = m->localcommid;
    c->active_psn = m->startpsn;
    c->f_rep = r->frame;
    c->t_rep = r->t;
    /* IBA transport service types 0 RC, 1 UC, 2 RD; the opcode table's
     * transports count the same way. */
    unsigned transport = c->transport <= 2 ? c->transport : RDMA_TRANSPORT_RC;
    struct rdma_replay_key to_passive, to_active;
    replay__flow_key_reverse(k, c->passive_qpn, &to_passive);
    replay__flow_key_reverse(&c->active_to_passive, c->active_qpn, &to_active);
    c->active_to_passive = to_passive;
    bool created;
    struct rdma_replay_flow *a = replay__flow_get(&r->flows, &to_passive, &created);
    struct rdma_replay_flow *p = a ? replay__flow_get(&r->flows, &to_active, &created) : NULL;
    if (!p) {
        if (!r->flows.full)
            r->oom = true;
        return;
    }
    int32_t idx = (int32_t)(c - r->conns.v);
    expect(a, c->active_psn, c->mtu, transport, idx);
    expect(p, c->passive_psn, c->mtu, transport, idx);
    replay__flows_join(&r->flows, a, p, RDMA_REPLAY_PAIR_CM);
}

static void rej(struct rdma_replay *r, const struct rdma_cm_rej *m)
{
    /* The passive side rejects a REQ (remote ID = the active's), or the
     * active side rejects a REP. */
    struct rdma_replay_conn *c = find(&r->conns, m->remotecommid, 0, false);
    if (!c)
        c = find(&r->conns, m->localcommid, 0, false);
    struct rdma_replay_event ev = {.frame = {r->frame, c ? c->f_req : 0, 0}, .t = r->t, .value = m->reason};
    if (c) {
        c->f_rej = r->frame;
        c->rej_reason = m->reason;
    }
    if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_CM_REJ, m->reason, -1, 1, &ev))
        r->oom = true;
}

void replay__cm_message(struct rdma_replay *r, const struct rdma_pkt *pkt, const struct rdma_replay_key *k)
{
    const struct rdma_cm *cm = &pkt->cm;
    struct rdma_replay_conn *c;
    r->tot.cm_messages++;
    switch (cm->attr) {
    case RDMA_CM_REQ:
        req(r, &cm->u.req, k);
        break;
    case RDMA_CM_REP:
        rep(r, &cm->u.rep, k);
        break;
    case RDMA_CM_REJ:
        rej(r, &cm->u.rej);
        break;
    case RDMA_CM_RTU:
        if ((c = find(&r->conns, cm->u.rtu.localcommid, cm->u.rtu.remotecommid, true)) && !c->f_rtu) {
            c->f_rtu = r->frame;
            c->t_rtu = r->t;
        }
        break;
    case RDMA_CM_DREQ:
        if ((c = find_either(&r->conns, cm->u.dreq.localcommid, cm->u.dreq.remotecommid)) && !c->f_dreq)
            c->f_dreq = r->frame;
        break;
    case RDMA_CM_DREP:
        if ((c = find_either(&r->conns, cm->u.drep.localcommid, cm->u.drep.remotecommid)) && !c->f_drep)
            c->f_drep = r->frame;
        break;
    }
}
