/* tcp.h - a TCP endpoint on a host's NIC (RFC 9293), for the transports
 * whose stream runs over TCP (iWARP). One endpoint per connection; its
 * segments are Ethernet / IPv4 or IPv6 / TCP frames built and parsed by the
 * codec, and it sends them through the NIC's port like any queue pair.
 *
 *   ULP (iWARP) --records--> [send records: seq, len, SACKed/lost/rexmit]
 *                               | tcp_out.c: new data within min(cwnd, rwnd),
 *                               |   RFC 6675 NextSeg, pure ACKs, SYN, FIN
 *                               v
 *                             frame --> NIC port ...
 *   ULP <--in-order octets-- tcp_in.c: reassembly, SACK blocks, delayed ACK;
 *                            ACK processing: RTT (RFC 6298), SACK
 *                            scoreboard, fast retransmit and recovery
 *                            (RFC 6675 with SACK, RFC 6582 NewReno without)
 *   tcp_conn.c: the three-way handshake and the close (RFC 9293 3.5-3.6);
 *   tcp_timer.c: RTO with backoff (RFC 6298), delayed-ACK timer;
 *   tcp_cc.c (NewReno, RFC 5681), cubic.c (RFC 9438), tcp_dctcp.c (RFC 8257).
 *
 * The send side holds records, never bytes: the ULP writes a record's
 * octets again whenever it is sent (the memory behind it does not change
 * while it is in flight), as an RNIC fetches retransmitted data by DMA. A
 * record is one segment (the ULP aligns its PDUs to segments, RFC 5044
 * 4.1), so retransmissions keep the boundaries of the first transmission.
 */
#ifndef SIM_HOST_TCP_H
#define SIM_HOST_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "config/cfg.h"
#include "engine/timer.h"
#include "rdma_iwarp.h"

struct sim_qp;
struct sim_frame;

/* Sequence-space comparisons (RFC 9293 3.4): modulo 2^32. */
static inline bool sim__seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool sim__seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

/* What the endpoint asks of the protocol above it. */
struct sim_tcp_ulp_ops {
    /* The next record to send at sequence seq, at most max octets: its
     * length (0: nothing to send now) and a tag for fill. */
    uint32_t (*next)(struct sim_qp *qp, uint32_t seq, uint32_t max, uint32_t *tag);
    /* Write the len octets of record `tag`, which starts at seq. */
    void (*fill)(struct sim_qp *qp, uint32_t tag, uint32_t seq, uint8_t *out, uint32_t len);
    /* Every octet before una is acknowledged. */
    void (*acked)(struct sim_qp *qp, uint32_t una);
    /* In-order octets arrived, starting at seq. */
    void (*deliver)(struct sim_qp *qp, uint32_t seq, const uint8_t *p, uint32_t len);
    /* The handshake completed; data may flow (its first octet is at seq). */
    void (*established)(struct sim_qp *qp, uint32_t snd_seq, uint32_t rcv_seq);
    /* The peer is unreachable (retransmissions exhausted). */
    void (*failed)(struct sim_qp *qp);
};

#define SIM_TCP_STATES(X)                                                      \
    X(CLOSED, "closed")                                                        \
    X(LISTEN, "listen")                                                        \
    X(SYN_SENT, "syn-sent")                                                    \
    X(SYN_RCVD, "syn-received")                                                \
    X(ESTABLISHED, "established")                                              \
    X(FIN_WAIT_1, "fin-wait-1")                                                \
    X(FIN_WAIT_2, "fin-wait-2")                                                \
    X(CLOSE_WAIT, "close-wait")                                                \
    X(CLOSING, "closing")                                                      \
    X(LAST_ACK, "last-ack")                                                    \
    X(TIME_WAIT, "time-wait")                                                  \
    X(FAILED, "failed")

enum sim_tcp_state {
#define SIM__TCP_STATE(name, str) SIM_TCP_##name,
    SIM_TCP_STATES(SIM__TCP_STATE)
#undef SIM__TCP_STATE
};

#define SIM_TCP_RUNS 16 /* runs of out-of-order data a receiver reports from */

/* A record of the send side: one segment's worth of stream. */
#define SIM_TCP_SACKED 0x01 /* the receiver reported it (RFC 2018) */
#define SIM_TCP_LOST 0x02   /* deemed lost: to be sent again */
#define SIM_TCP_REXMIT 0x04 /* sent again since it was deemed lost */
#define SIM_TCP_EVER_RETX 0x08 /* ever sent twice: no RTT sample (Karn) */

struct sim_tcp_rec {
    uint32_t seq, len, tag;
    uint8_t flags;
    sim_time_t sent_at;
};

/* Congestion control state: NewReno's window with the extra state CUBIC
 * and DCTCP keep. */
struct sim_tcp_cc {
    uint32_t cwnd, ssthresh; /* octets */
    uint32_t acked_ca;       /* octets acknowledged toward the next MSS in avoidance */
    /* CUBIC (RFC 9438 4): W_max, the epoch start, K, the Reno-friendly window */
    double w_max, k, w_est;
    sim_time_t epoch;
    /* DCTCP (RFC 8257 3.3): alpha and the octets of the current window */
    double alpha;
    uint64_t bytes_acked, bytes_marked;
    uint32_t window_end, cut_end;
    bool dctcp_started;
    bool ce_state; /* receiver: the last data segment arrived CE-marked */
};

struct sim_tcp_stats {
    uint64_t segs_out, data_segs_out, retrans, segs_in, dupacks;
    uint64_t fast_retrans; /* recoveries entered on duplicate ACKs or SACK */
    uint64_t rto_events;   /* retransmission timeouts */
    uint64_t sack_recoveries;
    uint64_t ecn_cuts;
};

struct sim_tcp {
    struct sim_qp *qp; /* the queue pair whose stream it carries */
    const struct sim_tcp_ulp_ops *ulp;
    const struct cfg_tcp *p;
    uint8_t state; /* enum sim_tcp_state */
    bool active;   /* it opens the connection */
    uint16_t lport, rport;
    uint32_t mss;  /* octets of payload a segment may carry */

    /* send side */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd;
    uint8_t snd_wscale, rcv_wscale;
    bool sack_ok, ecn_ok;
    struct sim_tcp_rec *rec; /* [rec_head, rec_tail): sent and not acknowledged */
    uint32_t rec_cap, rec_head, rec_tail; /* free-running; index & (cap - 1) */
    uint32_t lost_hint; /* no record below it waits to be sent again */
    uint32_t sacked_b, lost_b, rexmit_b; /* octets of records in each state */
    uint32_t dupacks;
    uint32_t reno_sacked_b; /* without SACK: a segment's worth per duplicate ACK (left the network) */
    bool in_recovery;
    uint32_t recover;   /* RecoveryPoint (RFC 6675) / recover (RFC 6582) */
    uint32_t high_sacked; /* one past the highest octet SACKed */
    bool syn_due;       /* a SYN or SYN-ACK is to go out */
    bool fin_wanted;    /* the ULP closed: a FIN follows the last record */
    bool fin_sent, fin_due; /* sent; to be sent again (its timeout) */
    uint32_t fin_seq;   /* the FIN's sequence number */
    bool cwr_due;       /* DCTCP sender: the next data segment carries CWR */
    struct sim_tcp_cc cc;

    /* retransmission timer (RFC 6298) */
    sim_time_t srtt, rttvar, rto;
    bool rtt_valid;
    uint32_t backoff;
    sim_time_t syn_at;    /* when the SYN (or SYN-ACK) left: the first RTT sample */
    sim_time_t rto_at;    /* the deadline, SIM_TIME_NEVER when nothing is in flight */
    struct sim_timer rto_timer; /* at rto_at or before it */

    /* receive side */
    uint32_t irs, rcv_nxt, rcv_buf;
    /* segments beyond rcv_nxt, by sequence (aux: seq, in: payload offset,
     * out: payload length), and the last of them */
    struct sim_frame *ooo, *ooo_last;
    /* the contiguous runs of them, lowest first (the SACK blocks to send) */
    uint32_t runs[SIM_TCP_RUNS][2];
    uint32_t nruns;
    uint32_t ooo_bytes;
    uint32_t last_ooo_seq; /* the most recent out-of-order segment: first SACK block */
    uint32_t unacked_segs;
    bool ack_now, fin_rcvd;
    bool ece_echo; /* DCTCP receiver: ECE on the ACKs it sends */
    struct sim_timer delack_timer;

    struct sim_tcp_stats st;
};

/* The NIC's TCP ports: endpoint i of a NIC uses SIM_TCP_PORT_BASE + i. */
#define SIM_TCP_PORT_BASE 1024
#define SIM_TCP_DUPTHRESH 3 /* RFC 5681 3.2, RFC 6675 2 */
/* The largest segment payload: a 9000-byte IP MTU less IPv4 and TCP. */
#define SIM_TCP_MAX_SEGMENT 8960

/* tcp_conn.c */
const char *sim__tcp_state_name(unsigned state);
void sim__tcp_init(struct sim_tcp *t, struct sim_qp *qp, const struct sim_tcp_ulp_ops *ulp,
                   bool active, uint16_t lport, uint16_t rport, uint32_t mss, uint32_t iss);
void sim__tcp_fini(struct sim_tcp *t);
/* Start the connection: the active side sends its SYN. */
void sim__tcp_open(struct sim_tcp *t);
/* No more data will be sent: a FIN follows the last record. */
void sim__tcp_close(struct sim_tcp *t);
/* The peer acknowledged our FIN. */
void sim__tcp_fin_acked(struct sim_tcp *t);
/* A segment for this endpoint arrived (its frame stays the caller's
 * unless it is kept out of order: then *kept is set). */
void sim__tcp_input(struct sim_tcp *t, struct sim_frame *f, const struct rdma_pkt *pkt,
                    const struct rdma_tcp *th, const struct rdma_tcp_options *opt,
                    const uint8_t *payload, uint32_t len, bool *kept);

/* tcp_out.c: the next frame this endpoint sends, or NULL. */
struct sim_frame *sim__tcp_output(struct sim_tcp *t);
/* Ask the NIC to pull from this endpoint. */
void sim__tcp_kick(struct sim_tcp *t);
sim_time_t sim__tcp_now(const struct sim_tcp *t);

/* tcp_in.c */
void sim__tcp_data(struct sim_tcp *t, struct sim_frame *f, uint32_t seq, const uint8_t *p,
                   uint32_t len, bool ce, bool *kept);
void sim__tcp_ack(struct sim_tcp *t, const struct rdma_tcp *th, const struct rdma_tcp_options *opt,
                  uint32_t len);
uint32_t sim__tcp_pipe(const struct sim_tcp *t);
static inline uint32_t sim__tcp_flight(const struct sim_tcp *t) { return t->snd_nxt - t->snd_una; }

/* tcp_timer.c */
void sim__tcp_rtt_sample(struct sim_tcp *t, sim_time_t rtt);
void sim__tcp_arm_rto(struct sim_tcp *t);
void sim__tcp_rto_event(struct sim_tcp *t);
void sim__tcp_arm_delack(struct sim_tcp *t);
void sim__tcp_delack_event(struct sim_tcp *t);

/* tcp_cc.c: the window rules, dispatched on p->cc */
void sim__tcp_cc_init(struct sim_tcp *t);
/* acked octets newly acknowledged by an ACK outside recovery */
void sim__tcp_cc_ack(struct sim_tcp *t, uint32_t acked);
/* a loss was detected: the window after the cut goes in ssthresh */
void sim__tcp_cc_loss(struct sim_tcp *t);
void sim__tcp_cc_rto(struct sim_tcp *t);
/* cubic.c (RFC 9438) */
void sim__cubic_ack(struct sim_tcp *t, uint32_t acked);
void sim__cubic_loss(struct sim_tcp *t);
/* tcp_dctcp.c (RFC 8257): an ACK of acked octets, with ECE or not */
void sim__dctcp_tcp_ack(struct sim_tcp *t, uint32_t acked, bool ece);

#endif
