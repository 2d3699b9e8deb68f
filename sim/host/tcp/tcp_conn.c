/* tcp_conn.c - a TCP endpoint's life: set-up, the three-way handshake
 * with its options (RFC 9293 3.5 and 3.7.1: MSS; RFC 7323 2: window scale;
 * RFC 2018 2: SACK-permitted; RFC 3168 6.1.1: ECN setup, offered when
 * DCTCP runs), and the dispatch of each arriving segment (RFC 9293
 * 3.10.7, for the states this model uses).
 *
 *   active:  CLOSED --SYN--> SYN-SENT --SYN,ACK / ACK--> ESTABLISHED
 *   passive: LISTEN --SYN / SYN,ACK--> SYN-RECEIVED --ACK--> ESTABLISHED
 *   closing first:   ESTABLISHED --FIN--> FIN-WAIT-1 --ACK--> FIN-WAIT-2
 *                    --FIN / ACK--> TIME-WAIT (FIN-WAIT-1 --FIN--> CLOSING)
 *   closing second:  ESTABLISHED --FIN / ACK--> CLOSE-WAIT --FIN--> LAST-ACK
 *                    --ACK--> CLOSED
 *
 * The FIN follows the last record once the ULP closes (tcp_out.c); a FIN
 * is taken when it arrives in order. TIME-WAIT has no timer: nothing
 * reuses the ports of a run.
 *
 * The model sends no RST: every segment a NIC receives belongs to a
 * connection it set up. After its retransmissions run out, an endpoint
 * stops (FAILED) and tells the protocol above.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "host/nic.h"
#include "host/tcp/tcp.h"

const char *sim__tcp_state_name(unsigned state)
{
    static const char *const names[] = {
#define SIM__TCP_STATE_NAME(name, str) str,
        SIM_TCP_STATES(SIM__TCP_STATE_NAME)
#undef SIM__TCP_STATE_NAME
    };
    return state < sizeof names / sizeof names[0] ? names[state] : "?";
}

void sim__tcp_init(struct sim_tcp *t, struct sim_qp *qp, const struct sim_tcp_ulp_ops *ulp,
                   bool active, uint16_t lport, uint16_t rport, uint32_t mss, uint32_t iss)
{
    t->qp = qp;
    t->ulp = ulp;
    t->p = &qp->p->tcp;
    t->active = active;
    t->lport = lport;
    t->rport = rport;
    t->mss = mss;
    t->iss = iss;
    t->snd_una = t->snd_nxt = t->snd_max = iss;
    t->recover = iss + 1;
    t->rcv_buf = (uint32_t)t->p->window;
    /* RFC 7323 2.3: the smallest shift that lets the buffer be announced */
    while (t->rcv_wscale < RDMA_TCP_MAX_WSCALE && (t->rcv_buf >> t->rcv_wscale) > 0xffff)
        t->rcv_wscale++;
    t->rto = t->p->initial_rto;
    t->rto_at = SIM_TIME_NEVER;
    t->syn_at = SIM_TIME_NEVER;
    sim_timer_init(&t->rto_timer);
    sim_timer_init(&t->delack_timer);
    sim__tcp_cc_init(t);
    t->state = active ? SIM_TCP_CLOSED : SIM_TCP_LISTEN;
}

void sim__tcp_fini(struct sim_tcp *t)
{
    struct sim_frame_pool *pool = &sim__net_of(t->qp)->pool;
    while (t->ooo) {
        struct sim_frame *f = t->ooo;
        t->ooo = f->next;
        sim__frame_free(pool, f);
    }
    free(t->rec);
}

void sim__tcp_open(struct sim_tcp *t)
{
    if (!t->active)
        return;
    t->state = SIM_TCP_SYN_SENT;
    t->syn_due = true;
    sim__tcp_kick(t);
}

/* No kick here: the ULP may close from inside the endpoint's own output
 * (its last record just built); the FIN then follows that record on the
 * NIC's next pull. */
void sim__tcp_close(struct sim_tcp *t) { t->fin_wanted = true; }

void sim__tcp_fin_acked(struct sim_tcp *t)
{
    if (t->state == SIM_TCP_FIN_WAIT_1)
        t->state = SIM_TCP_FIN_WAIT_2;
    else if (t->state == SIM_TCP_CLOSING)
        t->state = SIM_TCP_TIME_WAIT;
    else if (t->state == SIM_TCP_LAST_ACK)
        t->state = SIM_TCP_CLOSED;
}

/* The peer's FIN arrived in order (RFC 9293 3.10.7.4, eighth). */
static void fin_received(struct sim_tcp *t)
{
    t->ack_now = true;
    if (t->fin_rcvd)
        return; /* sent again: our ACK was lost */
    t->fin_rcvd = true;
    t->rcv_nxt++;
    if (t->state == SIM_TCP_ESTABLISHED)
        t->state = SIM_TCP_CLOSE_WAIT;
    else if (t->state == SIM_TCP_FIN_WAIT_1)
        t->state = SIM_TCP_CLOSING;
    else if (t->state == SIM_TCP_FIN_WAIT_2)
        t->state = SIM_TCP_TIME_WAIT;
}

/* The options of the peer's SYN or SYN-ACK decide what both sides use. */
static void negotiate(struct sim_tcp *t, const struct rdma_tcp *th, const struct rdma_tcp_options *o)
{
    if (o->mss && o->mss < t->mss)
        t->mss = o->mss;
    t->sack_ok = t->p->sack && o->sack_perm;
    if (o->has_wscale) {
        t->snd_wscale = o->wscale > RDMA_TCP_MAX_WSCALE ? RDMA_TCP_MAX_WSCALE : o->wscale;
    } else {
        /* RFC 7323 2.2: scaling needs both sides' option */
        t->snd_wscale = 0;
        t->rcv_wscale = 0;
        if (t->rcv_buf > 0xffff)
            t->rcv_buf = 0xffff;
    }
    /* RFC 3168 6.1.1: a SYN with ECE and CWR, answered by a SYN-ACK with ECE alone */
    bool ece = th->flags & RDMA_TCP_ECE, cwr = th->flags & RDMA_TCP_CWR;
    t->ecn_ok = t->p->cc == CFG_TCP_CC_DCTCP && ece && (t->active ? !cwr : cwr);
    t->snd_wnd = th->window_size_value; /* never scaled in a SYN (RFC 7323 2.2) */
    t->irs = th->seq_raw;
    t->rcv_nxt = th->seq_raw + 1;
    sim__tcp_cc_init(t); /* the MSS is final now */
}

static void established(struct sim_tcp *t)
{
    t->state = SIM_TCP_ESTABLISHED;
    t->snd_una = t->iss + 1;
    t->snd_nxt = t->snd_max = t->snd_una;
    t->backoff = 0;
    t->rto_at = SIM_TIME_NEVER;
    /* RFC 6298 2.2: the handshake's round trip is the first sample, when
     * the SYN was not sent again (Karn) */
    if (t->syn_at != SIM_TIME_NEVER)
        sim__tcp_rtt_sample(t, sim__tcp_now(t) - t->syn_at);
    t->ulp->established(t->qp, t->snd_una, t->rcv_nxt);
}

void sim__tcp_input(struct sim_tcp *t, struct sim_frame *f, const struct rdma_pkt *pkt,
                    const struct rdma_tcp *th, const struct rdma_tcp_options *opt,
                    const uint8_t *payload, uint32_t len, bool *kept)
{
    bool syn = th->flags & RDMA_TCP_SYN, ack = th->flags & RDMA_TCP_ACK;
    t->st.segs_in++;
    *kept = false;
    if (th->flags & RDMA_TCP_RST)
        return;
    switch (t->state) {
    case SIM_TCP_CLOSED:
    case SIM_TCP_FAILED:
        return;
    case SIM_TCP_LISTEN:
        if (!syn || ack)
            return;
        negotiate(t, th, opt);
        t->state = SIM_TCP_SYN_RCVD;
        t->syn_due = true;
        sim__tcp_kick(t);
        return;
    case SIM_TCP_SYN_SENT:
        if (!syn || !ack || th->ack_raw != t->iss + 1)
            return;
        negotiate(t, th, opt);
        established(t);
        t->ack_now = true;
        sim__tcp_kick(t);
        return;
    case SIM_TCP_SYN_RCVD:
        if (syn && !ack) { /* our SYN-ACK was lost: the SYN came again */
            t->syn_due = true;
            sim__tcp_kick(t);
            return;
        }
        if (!ack || th->ack_raw != t->iss + 1)
            return;
        established(t);
        break;
    default:
        if (syn) { /* a SYN-ACK again: our ACK was lost */
            t->ack_now = true;
            sim__tcp_kick(t);
            return;
        }
        break;
    }
    if (ack)
        sim__tcp_ack(t, th, opt, len);
    if (len) {
        unsigned ecn = pkt->present & RDMA_HDR_IP ? pkt->ip.dsfield_ecn : pkt->ipv6.tclass & 3u;
        sim__tcp_data(t, f, th->seq_raw, payload, len, ecn == 3, kept);
    }
    if ((th->flags & RDMA_TCP_FIN) && th->seq_raw + len + t->fin_rcvd == t->rcv_nxt)
        fin_received(t);
    sim__tcp_kick(t);
}
