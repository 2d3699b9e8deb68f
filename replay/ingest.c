/* ingest.c - one decoded frame into the analysis: what kind of frame it is,
 * which flow it belongs to, and whether its transport is a request, a
 * response, a CNP or a management datagram, all from the opcode table's
 * flags.
 *
 *   PFC / PAUSE             -> pfc.c
 *   RoCEv1, RoCEv2, IB      -> replay_transport(): flow, then requests.c,
 *                              responses.c, cm.c
 *   TCP over IPv4/IPv6      -> iwarp.c: the codec's stream decoder, then per
 *                              connection direction the MPA startup and the
 *                              RDMAP messages of its DDP segments; TCP that
 *                              is not MPA counts as other traffic
 *   anything else           -> counted as other traffic
 */
#include "internal.h"

#define ECN_CE 3
#define QP1 1

static void bad_frame(struct rdma_replay *r, const char *reason, enum rdma_status st)
{
    r->tot.bad_frames++;
    struct rdma_replay_event ev = {.frame = {r->frame, 0, 0}, .t = r->t, .text = reason};
    if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_BAD_FRAME, st, -1, 1, &ev))
        r->oom = true;
}

static bool congestion_experienced(const struct rdma_pkt *pkt)
{
    if (pkt->present & RDMA_HDR_IP)
        return pkt->ip.dsfield_ecn == ECN_CE;
    if (pkt->present & RDMA_HDR_IPV6)
        return (pkt->ipv6.tclass & 3) == ECN_CE;
    if (pkt->proto == RDMA_PROTO_ROCEV1)
        return (pkt->grh.tclass & 3) == ECN_CE;
    return false;
}

static void note(struct rdma_replay *r, unsigned kind, struct rdma_replay_flow *f, uint64_t value)
{
    struct rdma_replay_event ev = {.frame = {r->frame, 0, 0}, .t = r->t, .value = value};
    if (!replay__anomaly_add(&r->anomalies, kind, 0, (int32_t)(f->id - 1), 1, &ev))
        r->oom = true;
}

/* A CNP is addressed to the QP whose sending is to slow down. */
static void cnp(struct rdma_replay *r, struct rdma_replay_flow *f)
{
    uint64_t gap = f->cnp ? (r->t > f->cnp_last_t ? r->t - f->cnp_last_t : 0) : 0;
    if (f->cnp && (f->cnp == 1 || gap < f->cnp_min_gap))
        f->cnp_min_gap = gap;
    f->cnp++;
    f->cnp_last_t = r->t;
    f->tl_cnp++;
    note(r, RDMA_REPLAY_ANOM_CNP, f, gap);
}

void replay__flow_count_frame(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt)
{
    f->packets++;
    f->wire_bytes += pkt->wire_len - pkt->pseudo_len;
    f->last_t = r->t;
    f->last_frame = r->frame;
    f->tl_packets++;
    replay__timeline_touch(r, f);
}

static void replay_transport(struct rdma_replay *r, const struct rdma_pkt *pkt)
{
    struct rdma_replay_key k;
    if (!replay__flow_key_from_pkt(pkt, &k)) {
        r->tot.other_frames++;
        return;
    }
    bool created;
    struct rdma_replay_flow *f = replay__flow_get(&r->flows, &k, &created);
    if (!f) {
        if (r->flows.full)
            r->tot.capped_frames++; /* past max_memory: not followed */
        else
            r->oom = true;
        return;
    }
    const struct rdma_opcode_info *op = pkt->op;
    if (created || !f->packets) {
        f->transport = op->transport;
        f->proto = pkt->proto;
        f->first_t = r->t;
        f->first_frame = r->frame;
    } else if (f->transport == RDMA_TRANSPORT_CNP) {
        f->transport = op->transport; /* the flow began with a CNP */
    }
    replay__flow_count_frame(r, f, pkt);
    if (pkt->status == RDMA_BAD_ICRC || pkt->status == RDMA_BAD_VCRC) {
        /* The receiving adapter drops it: count it, do not deliver it. */
        f->bad_icrc++;
        struct rdma_replay_event ev = {
            .frame = {r->frame, 0, 0}, .t = r->t, .psn = pkt->bth.psn, .psn_end = pkt->bth.psn, .text = pkt->reason};
        if (!replay__anomaly_add(&r->anomalies, RDMA_REPLAY_ANOM_BAD_ICRC, pkt->status, (int32_t)(f->id - 1), 1, &ev))
            r->oom = true;
        return;
    }
    if (congestion_experienced(pkt)) {
        f->ecn_ce++;
        f->tl_ce++;
        note(r, RDMA_REPLAY_ANOM_ECN_CE, f, 0);
    }
    if (pkt->bth.fecn) {
        f->fecn++;
        note(r, RDMA_REPLAY_ANOM_FECN, f, 0);
    }
    if (op->flags & RDMA_OPF_CNP) {
        cnp(r, f);
        return;
    }
    if ((pkt->present & RDMA_HDR_DETH) && !f->src_qpn_known) {
        f->src_qpn = pkt->deth.srcqp;
        f->src_qpn_known = true;
        if (f->peer < 0) {
            struct rdma_replay_key back;
            replay__flow_key_reverse(&k, f->src_qpn, &back);
            struct rdma_replay_flow *b = replay__flow_find(&r->flows, &back);
            if (b && b->peer < 0 && b->src_qpn_known && b->src_qpn == rdma_replay_key_qpn(&k))
                replay__flows_join(&r->flows, f, b, RDMA_REPLAY_PAIR_DETH);
        }
    }
    if (pkt->present & RDMA_HDR_MAD) {
        /* Management datagrams (QP0, QP1) are the fabric's, not messages
         * of the applications: counted, and CM read for pairing. */
        r->tot.mgmt_frames++;
        if (pkt->present & RDMA_HDR_CM)
            replay__cm_message(r, pkt, &k);
        return;
    }
    if (op->flags & RDMA_OPF_REQUEST)
        replay__chan_request(r, f, pkt);
    else if (op->flags & RDMA_OPF_RESPONSE)
        replay__chan_response(r, f, pkt);
}

/* A TCP segment, behind IPv6 extension headers too: the codec says. */
static bool carries_tcp(const struct rdma_pkt *pkt, const uint8_t *data)
{
    if (pkt->present & RDMA_HDR_IP)
        return pkt->ip.proto == RDMA_IP_PROTO_TCP;
    struct rdma_tcp tcp;
    const uint8_t *payload;
    uint32_t len;
    return (pkt->present & RDMA_HDR_IPV6) &&
           (pkt->ipv6.nxt == RDMA_IP_PROTO_TCP || rdma_tcp_decode(pkt, data, &tcp, &payload, &len));
}

static void tcp_segment(struct rdma_replay *r, struct rdma_pkt *pkt, const uint8_t *data)
{
    struct rdma_replay_flow *f = replay__iwarp_frame(r, pkt, data);
    if (!f) {
        if (r->flows.full && pkt->proto == RDMA_PROTO_IWARP)
            r->tot.capped_frames++;
        else
            r->tot.other_frames++;
        return;
    }
    r->tot.rdma_frames++;
    if (congestion_experienced(pkt)) {
        f->ecn_ce++;
        f->tl_ce++;
        note(r, RDMA_REPLAY_ANOM_ECN_CE, f, 0);
    }
}

/* Only the payload missing: a capture with a snap length. The headers are
 * all there, so the frame is analysed; only its ICRC cannot be checked. */
static bool snapped(const struct rdma_pkt *pkt)
{
    return pkt->op && pkt->op->name && (pkt->present & pkt->op->headers) == pkt->op->headers &&
           pkt->payload && pkt->frame_len < pkt->wire_len;
}

static void ingest(struct rdma_replay *r, struct rdma_pkt *pkt, enum rdma_status st, const uint8_t *data)
{
    r->tot.frames++;
    r->tot.wire_bytes += pkt->wire_len - pkt->pseudo_len;
    replay__timeline_advance(r);
    switch (pkt->proto) {
    case RDMA_PROTO_OTHER:
        /* cut or broken before it could be recognised: still a bad frame */
        if (st == RDMA_TRUNCATED || st == RDMA_MALFORMED || st == RDMA_BAD_CHECKSUM)
            bad_frame(r, pkt->reason, st);
        else if (st == RDMA_OK && carries_tcp(pkt, data))
            tcp_segment(r, pkt, data);
        else
            r->tot.other_frames++;
        return;
    case RDMA_PROTO_IB:
        if (!(pkt->present & RDMA_HDR_IBFC))
            break;
        /* an InfiniBand flow control packet: the link's, no queue pair's */
        r->tot.rdma_frames++;
        if (st != RDMA_OK)
            bad_frame(r, pkt->reason, st);
        return;
    case RDMA_PROTO_PFC:
    case RDMA_PROTO_PAUSE:
        r->tot.rdma_frames++;
        if (st != RDMA_OK)
            bad_frame(r, pkt->reason, st);
        else
            replay__pfc_frame(r, pkt);
        return;
    default:
        break;
    }
    r->tot.rdma_frames++;
    if (st == RDMA_TRUNCATED && snapped(pkt)) {
        r->tot.snapped_frames++;
    } else if (st == RDMA_BAD_ICRC || st == RDMA_BAD_VCRC) {
        /* replay_transport() attributes it to its flow */
    } else if (st != RDMA_OK) {
        bad_frame(r, pkt->reason, st);
        return;
    }
    if (!pkt->op || !pkt->op->name) {
        bad_frame(r, "reserved BTH opcode", RDMA_MALFORMED);
        return;
    }
    replay_transport(r, pkt);
}

bool rdma_replay_frame(struct rdma_replay *r, int64_t sec, int64_t nsec, struct rdma_pkt *pkt,
                       enum rdma_status st, const uint8_t *data)
{
    if (r->oom)
        return false;
    /* The widths libpcap gives them: seconds signed (a time may lie before
     * 1970), the fraction below 1e9 but of either sign. As nanoseconds,
     * saturated, then offset by 2^63 so that unsigned order is time order. */
    sec += nsec / 1000000000;
    nsec %= 1000000000;
    if (nsec < 0) {
        nsec += 1000000000;
        sec--;
    }
    const int64_t lim = INT64_MAX / 1000000000 - 1;
    int64_t ts = sec > lim ? INT64_MAX : sec < -lim ? INT64_MIN : sec * 1000000000 + nsec;
    uint64_t t = (uint64_t)ts ^ (UINT64_C(1) << 63);
    if (!r->have_t0) {
        r->have_t0 = true;
        r->t0 = t;
        r->tot.t0_sec = (uint64_t)sec; /* two's complement: read it as int64_t */
        r->tot.t0_nsec = (uint64_t)nsec;
    }
    r->frame++;
    r->t = t > r->t0 ? t - r->t0 : 0;
    if (r->t > r->tot.t_last)
        r->tot.t_last = r->t;
    ingest(r, pkt, st, data);
    return !r->oom;
}
