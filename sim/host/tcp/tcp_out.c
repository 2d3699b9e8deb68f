/* tcp_out.c - what a TCP endpoint sends next, and the frame that carries
 * it (RFC 9293 3.1 header, options per RFC 7323 and RFC 2018).
 *
 * Each time the NIC's port is free the endpoint is asked for one frame, in
 * this order:
 *   1. a SYN or SYN-ACK that is due;
 *   2. a record deemed lost and not yet sent again, lowest first, when
 *      cwnd - pipe leaves a segment's room (RFC 6675 5, NextSeg rule 1;
 *      without SACK the same holds the NewReno retransmission, RFC 6582);
 *   3. a new record within the peer's window and cwnd - pipe (rule 2);
 *   4. a pure ACK that is due (delayed ACK expired, out-of-order data, two
 *      full segments, RFC 5681 4.2).
 * Data segments carry the acknowledgement too, which ends any ACK delay.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/nic.h"
#include "host/tcp/tcp.h"
#include "rdma_bytes.h"

#define ETH_LEN 14
#define TCP_LEN 20
#define ECT0 2

sim_time_t sim__tcp_now(const struct sim_tcp *t) { return sim__qp_now(t->qp); }

void sim__tcp_kick(struct sim_tcp *t) { sim__nic_wake(t->qp->nic, t->qp); }

static uint32_t ip_len(const struct sim_tcp *t) { return t->qp->p->ipv6 ? 40 : 20; }

static struct sim_tcp_rec *rec_at(struct sim_tcp *t, uint32_t i)
{
    return &t->rec[i & (t->rec_cap - 1)];
}

static void rec_push(struct sim_tcp *t, uint32_t seq, uint32_t len, uint32_t tag)
{
    if (t->rec_tail - t->rec_head == t->rec_cap) {
        uint32_t cap = t->rec_cap ? 2 * t->rec_cap : 64;
        struct sim_tcp_rec *r = sim__xcalloc(cap, sizeof *r);
        for (uint32_t i = t->rec_head; i != t->rec_tail; i++)
            r[i & (cap - 1)] = *rec_at(t, i);
        free(t->rec);
        t->rec = r;
        t->rec_cap = cap;
    }
    *rec_at(t, t->rec_tail++) = (struct sim_tcp_rec){.seq = seq, .len = len, .tag = tag};
}

/* The window to announce: the receive buffer. It never shrinks (RFC 9293
 * 3.8.6.2.2 advises against it), so that ACKs beyond a hole stay
 * duplicates (RFC 5681 2: same window); segments held out of order count
 * against it on arrival (tcp_in.c). */
static uint16_t window(const struct sim_tcp *t, bool syn)
{
    uint32_t w = syn ? t->rcv_buf : t->rcv_buf >> t->rcv_wscale; /* RFC 7323 2.2: a SYN's is not scaled */
    return (uint16_t)(w > 0xffff ? 0xffff : w);
}

/* RFC 2018 4: the first block holds the segment that arrived last; the
 * others follow, highest first, as many as fit. */
static void sack_blocks(const struct sim_tcp *t, struct rdma_tcp_options *o)
{
    uint32_t n = t->nruns, first = n;
    for (uint32_t i = 0; i < n; i++)
        if (sim__seq_le(t->runs[i][0], t->last_ooo_seq) && sim__seq_lt(t->last_ooo_seq, t->runs[i][1]))
            first = i;
    if (first < n) {
        o->sack[o->nsack][0] = t->runs[first][0];
        o->sack[o->nsack++][1] = t->runs[first][1];
    }
    for (uint32_t i = n; i-- > 0 && o->nsack < RDMA_TCP_MAX_SACK;)
        if (i != first) {
            o->sack[o->nsack][0] = t->runs[i][0];
            o->sack[o->nsack++][1] = t->runs[i][1];
        }
}

/* One segment: flags, sequence, the payload the ULP writes (record r), ECN. */
static struct sim_frame *segment(struct sim_tcp *t, uint16_t flags, uint32_t seq,
                                 const struct sim_tcp_rec *r, bool ect)
{
    struct sim_nic *nic = t->qp->nic;
    struct sim_network *net = sim__net_of(t->qp);
    const struct cfg_nic *p = t->qp->p;
    struct rdma_pkt pkt;
    struct rdma_tcp th;
    struct rdma_tcp_options o;
    uint8_t opts[RDMA_TCP_MAX_OPTIONS], payload[SIM_TCP_MAX_SEGMENT];
    memset(&pkt, 0, sizeof pkt);
    memset(&th, 0, sizeof th);
    memset(&o, 0, sizeof o);
    pkt.linktype = RDMA_LINKTYPE_ETHERNET;
    pkt.present = RDMA_HDR_ETH | (p->ipv6 ? RDMA_HDR_IPV6 : RDMA_HDR_IP);
    memcpy(pkt.eth.src, nic->mac, 6);
    sim__host_mac(t->qp->peer, pkt.eth.dst);
    uint8_t ecn = ect ? ECT0 : 0;
    if (p->ipv6) {
        pkt.ipv6.tclass = (uint8_t)(p->dscp << 2 | ecn);
        pkt.ipv6.flow = ((uint32_t)t->lport << 4 ^ t->rport) & 0xfffff;
        pkt.ipv6.hlim = 64;
        memcpy(pkt.ipv6.src, nic->ip6, 16);
        sim__host_ip6(t->qp->peer, pkt.ipv6.dst);
    } else {
        pkt.ip.dsfield_dscp = p->dscp;
        pkt.ip.dsfield_ecn = ecn;
        pkt.ip.flags = 2; /* don't fragment: the MSS keeps segments within the path MTU */
        pkt.ip.ttl = 64;
        rdma_put_be32(pkt.ip.src, nic->ip4);
        rdma_put_be32(pkt.ip.dst, sim__host_ip4(t->qp->peer));
    }
    th.srcport = t->lport;
    th.dstport = t->rport;
    th.seq_raw = seq;
    th.flags = flags;
    if (flags & RDMA_TCP_ACK)
        th.ack_raw = t->rcv_nxt;
    th.window_size_value = window(t, flags & RDMA_TCP_SYN);
    if (flags & RDMA_TCP_SYN) {
        o.mss = (uint16_t)t->mss;
        o.sack_perm = t->p->sack;
        o.has_wscale = true;
        o.wscale = t->rcv_wscale;
    } else if (t->sack_ok && t->ooo) {
        sack_blocks(t, &o);
    }
    uint32_t len = r ? r->len : 0;
    /* the MSS leaves no room for options (RFC 9293 3.7.1): a full data
     * segment carries only the SACK blocks that still fit the MTU */
    while (o.nsack && len + 4 + 8 * o.nsack > t->mss)
        o.nsack--;
    size_t optlen = rdma_tcp_options_encode(&o, opts);
    if (r)
        t->ulp->fill(t->qp, r->tag, r->seq, payload, len);
    uint32_t l4 = ETH_LEN + ip_len(t);
    struct sim_frame *f = sim__frame_alloc(&net->pool, l4 + TCP_LEN + (uint32_t)optlen + len + 64);
    size_t flen;
    if (!f)
        return NULL;
    if (rdma_tcp_encode_opts(&pkt, &th, opts, optlen, payload, len, f->data, sim__frame_cap(f),
                             &flen) != RDMA_OK) {
        sim__frame_free(&net->pool, f);
        return NULL;
    }
    f->len = (uint32_t)flen;
    f->bth_off = (uint16_t)l4; /* bit errors land in the TCP header and payload */
    t->st.segs_out++;
    if (flags & RDMA_TCP_ACK) {
        /* this segment acknowledges everything received */
        t->ack_now = false;
        t->unacked_segs = 0;
        sim_timer_cancel(&t->delack_timer);
    }
    return f;
}

/* The lowest record deemed lost and not yet sent again. */
static struct sim_tcp_rec *next_lost(struct sim_tcp *t)
{
    if (!t->lost_b)
        return NULL;
    if (sim__seq_lt(t->lost_hint, t->rec_head))
        t->lost_hint = t->rec_head;
    for (uint32_t i = t->lost_hint; i != t->rec_tail; i++) {
        struct sim_tcp_rec *r = rec_at(t, i);
        if ((r->flags & (SIM_TCP_LOST | SIM_TCP_REXMIT | SIM_TCP_SACKED)) == SIM_TCP_LOST) {
            t->lost_hint = i;
            return r;
        }
    }
    t->lost_hint = t->rec_tail;
    return NULL;
}

static uint16_t data_flags(struct sim_tcp *t)
{
    uint16_t flags = RDMA_TCP_ACK | RDMA_TCP_PSH;
    if (t->ece_echo)
        flags |= RDMA_TCP_ECE;
    return flags;
}

static struct sim_frame *send_rec(struct sim_tcp *t, struct sim_tcp_rec *r, bool again)
{
    uint16_t flags = data_flags(t);
    if (!again && t->cwr_due) {
        flags |= RDMA_TCP_CWR; /* RFC 3168 6.1.2: the window was reduced */
        t->cwr_due = false;
    }
    /* RFC 3168 6.1.5: retransmissions are not ECN-capable */
    struct sim_frame *f = segment(t, flags, r->seq, r, t->ecn_ok && !again);
    if (!f)
        return NULL;
    r->sent_at = sim__tcp_now(t);
    t->st.data_segs_out++;
    t->qp->st.tx_packets++;
    if (again) {
        r->flags |= SIM_TCP_REXMIT | SIM_TCP_EVER_RETX;
        t->rexmit_b += r->len;
        t->st.retrans++;
        t->qp->st.retransmitted++;
    }
    if (t->rto_at == SIM_TIME_NEVER)
        sim__tcp_arm_rto(t); /* RFC 6298 5.1 */
    return f;
}

/* The FIN after the last record (RFC 9293 3.6), or again after its
 * timeout: it takes one sequence number. */
static struct sim_frame *fin(struct sim_tcp *t)
{
    if (!t->fin_sent) {
        t->fin_sent = true;
        t->fin_seq = t->snd_nxt++;
        t->snd_max = t->snd_nxt;
        t->state = t->state == SIM_TCP_CLOSE_WAIT ? SIM_TCP_LAST_ACK : SIM_TCP_FIN_WAIT_1;
    }
    t->fin_due = false;
    if (t->rto_at == SIM_TIME_NEVER)
        sim__tcp_arm_rto(t);
    return segment(t, (data_flags(t) & ~RDMA_TCP_PSH) | RDMA_TCP_FIN, t->fin_seq, NULL, false);
}

struct sim_frame *sim__tcp_output(struct sim_tcp *t)
{
    if (t->state == SIM_TCP_CLOSED || t->state == SIM_TCP_FAILED || t->state == SIM_TCP_LISTEN)
        return NULL;
    if (t->syn_due) {
        uint16_t flags = RDMA_TCP_SYN;
        if (t->state == SIM_TCP_SYN_RCVD)
            flags |= RDMA_TCP_ACK | (t->ecn_ok ? RDMA_TCP_ECE : 0);
        else if (t->p->cc == CFG_TCP_CC_DCTCP)
            flags |= RDMA_TCP_ECE | RDMA_TCP_CWR;
        t->syn_due = false;
        /* Karn: a SYN sent again gives no RTT sample */
        t->syn_at = t->backoff ? SIM_TIME_NEVER : sim__tcp_now(t);
        sim__tcp_arm_rto(t);
        return segment(t, flags, t->iss, NULL, false);
    }
    if (t->state >= SIM_TCP_ESTABLISHED && t->state != SIM_TCP_FAILED) {
        uint32_t pipe = sim__tcp_pipe(t), cwnd = t->cc.cwnd;
        bool room = pipe + t->mss <= cwnd || pipe == 0;
        struct sim_tcp_rec *r = next_lost(t);
        if (r && room)
            return send_rec(t, r, true);
        uint32_t in_wnd = t->snd_wnd > sim__tcp_flight(t) ? t->snd_wnd - sim__tcp_flight(t) : 0;
        uint32_t max = in_wnd < t->mss ? in_wnd : t->mss;
        uint32_t tag, len;
        if (!t->fin_sent && room && max && (len = t->ulp->next(t->qp, t->snd_nxt, max, &tag)) != 0) {
            rec_push(t, t->snd_nxt, len, tag);
            t->snd_nxt += len;
            t->snd_max = t->snd_nxt;
            return send_rec(t, rec_at(t, t->rec_tail - 1), false);
        }
        if (!r && ((t->fin_wanted && !t->fin_sent) || t->fin_due))
            return fin(t);
    }
    if (t->ack_now)
        return segment(t, data_flags(t) & ~RDMA_TCP_PSH, t->snd_nxt, NULL, false);
    return NULL;
}
