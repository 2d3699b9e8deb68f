/* tcp_dctcp.c - DCTCP at the TCP sender (RFC 8257 3.3).
 *
 * Per ACK: bytes_acked += acked, and bytes_marked += acked when it carries
 * ECE. When the cumulative ACK passes the end of the observation window
 * (one window of data): M = bytes_marked / bytes_acked,
 * alpha = (1 - g) alpha + g M (g: nic.dctcp.g, 1/16 by default), and a new
 * window starts at the highest octet sent. On ECE, at most once per
 * window of data: cwnd = cwnd (1 - alpha / 2), ssthresh = cwnd (3.3 step
 * 8), and the next data segment carries CWR (RFC 3168 6.1.2). Losses are
 * handled as NewReno handles them. alpha starts at 1 (RFC 8257 3.3,
 * conservative) per Linux's dctcp_alpha_on_init default.
 */
#include "host/nic.h"
#include "host/tcp/tcp.h"

void sim__dctcp_tcp_ack(struct sim_tcp *t, uint32_t acked, bool ece)
{
    struct sim_tcp_cc *c = &t->cc;
    if (!c->dctcp_started) {
        c->dctcp_started = true;
        c->alpha = 1;
        c->window_end = t->snd_max;
        c->cut_end = t->snd_una;
    }
    c->bytes_acked += acked;
    if (ece)
        c->bytes_marked += acked;
    if (sim__seq_le(c->window_end, t->snd_una)) {
        double g = t->qp->p->fab.dctcp.g;
        double m = c->bytes_acked ? (double)c->bytes_marked / (double)c->bytes_acked : 0;
        c->alpha = (1 - g) * c->alpha + g * m;
        c->bytes_acked = c->bytes_marked = 0;
        c->window_end = t->snd_max;
    }
    if (ece && sim__seq_le(c->cut_end, t->snd_una)) {
        uint32_t w = (uint32_t)(c->cwnd * (1 - c->alpha / 2));
        c->cwnd = w > 2 * t->mss ? w : 2 * t->mss;
        c->ssthresh = c->cwnd;
        c->cut_end = t->snd_max;
        t->cwr_due = true;
        t->st.ecn_cuts++;
    }
}
