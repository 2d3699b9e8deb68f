/* iwarp.h - an iWARP RNIC's queue pair: RDMAP (RFC 5040) over DDP (RFC
 * 5041) over MPA (RFC 5044) over one TCP connection (host/tcp/).
 *
 * The queue pair keeps its send and receive queues (struct sim_qp) and
 * the host's memory regions; the RC state machines of RoCE do not run.
 * Instead:
 *   iw_conn.c  MPA Request/Reply (revision 1, CRC on, markers as
 *              nic.mpa_markers asks), the queue pair's TCP endpoint, the
 *              frames in and out of the NIC;
 *   iw_tx.c    the records TCP sends: one FPDU each, aligned to a segment
 *              (RFC 5044 4.1): RDMA Write, Read Request, Read Response,
 *              Send and Send with Invalidate, Terminate; completion of
 *              Writes and Sends once TCP has them acknowledged;
 *   iw_rx.c    the FPDUs arriving in order: tagged placement by STag and
 *              offset, untagged placement into the posted receive by MSN
 *              and MO, Read Requests answered, Terminate on an invalid
 *              STag or an offset out of range (RFC 5040 7).
 *
 * Untagged queues (RFC 5040 5.1): QN 0 Sends, QN 1 Read Requests, QN 2
 * Terminate; each has its own MSN, starting at 1 (RFC 5041 5.1).
 *
 * The same queue pair also stands for a pair of plain TCP sockets
 * (nic.transport: tcp, `sockets` set): no MPA, DDP or RDMAP, each message
 * its bytes on the stream, written by send() and read by recv() at the
 * other end, which knows from the application the messages to expect.
 * The sending host's kernel copies a message from user memory at
 * nic.host_cost's copy rate after a system call, and a segment leaves
 * only once its bytes are copied.
 */
#ifndef SIM_HOST_IWARP_H
#define SIM_HOST_IWARP_H

#include "host/nic.h"
#include "host/tcp/tcp.h"

#define SIM_IW_QUEUES 3
enum { SIM_IW_QN_SEND = 0, SIM_IW_QN_READ = 1, SIM_IW_QN_TERM = 2 };

/* What a record carries: enough to build its octets again. */
enum sim_iw_rec_kind { IW_MPA_REQUEST, IW_MPA_REPLY, IW_FPDU, IW_STREAM /* sockets: bytes alone */ };

struct sim_iw_rec {
    uint8_t kind;   /* enum sim_iw_rec_kind */
    uint8_t opcode; /* RDMAP */
    bool last;
    uint32_t mr;    /* source region (payload), UINT32_MAX: none */
    uint64_t off;
    uint32_t len;   /* payload octets */
    uint32_t stag;  /* tagged: sink STag; Send with Invalidate: the STag to invalidate */
    uint64_t to;    /* tagged offset */
    uint32_t msn, mo;
    struct rdma_rdmap_rr rr; /* Read Request */
    uint8_t term_layer, term_etype, term_code;
    uint32_t wire; /* octets in the stream */
    uint32_t msg;  /* the message a request piece belongs to, UINT32_MAX: none */
    uint32_t sent; /* times its octets were written for a segment */
};

/* A Read Request being answered. */
struct sim_iw_read {
    uint32_t mr;
    uint64_t off;
    uint32_t len, sent;
    uint32_t sink_stag;
    uint64_t sink_to;
};

/* Sockets: a message the peer's application sends, as this one expects
 * it: where its bytes go. */
struct sim_iw_in {
    uint32_t mr;
    uint64_t off; /* in the region */
    uint32_t len;
};

struct sim_iw {
    struct sim_tcp tcp;
    bool sockets; /* plain TCP sockets, not iWARP */
    bool mpa_tx_due;  /* our Request (active) or Reply (passive) is to go */
    bool tx_ready;    /* FPDUs may go: the handshake allows it (RFC 5044 7.1) */
    bool rx_ready;    /* the peer's Request or Reply arrived */
    bool want_markers;
    struct rdma_mpa_framing tx_fr, rx_fr;
    uint32_t msn_tx[SIM_IW_QUEUES], msn_rx[SIM_IW_QUEUES];
    /* records in flight, by tag (free-running) */
    struct sim_iw_rec *recs;
    uint32_t rec_cap, rec_head, rec_tail;
    /* Read Requests to answer, in order */
    struct sim_iw_read *reads;
    uint32_t read_cap, read_head, read_tail;
    uint32_t rd_wait; /* send queue index of the oldest READ awaiting its data */
    /* a Terminate to send, then nothing more */
    bool term_due, term_sent;
    uint8_t term_layer, term_etype, term_code;
    /* the octets of a partly arrived FPDU */
    uint8_t *acc;
    uint32_t acc_len, acc_cap, acc_seq;
    uint8_t *scratch; /* markers removed (rdma_fpdu_decode), with markers only */
    /* closing (RFC 5040 5.5's orderly close): the messages this side
     * posts and the Read Requests it answers in the whole run, as the
     * applications at both ends know; once all are done, TCP closes */
    uint32_t expect_own, expect_reads, own_done, reads_answered;
    bool closed;
    /* sockets: the messages to receive, in order, and how far the
     * current one has arrived */
    struct sim_iw_in *in;
    uint32_t nin, in_cap, in_next, in_off;
};

extern const struct sim_transport_ops sim__transport_iwarp, sim__transport_tcp;

/* tcp: the time a host's CPU takes to copy n octets between user and
 * kernel memory at rate bits per second, rounded up to the picosecond. */
static inline sim_time_t sim__iw_copy_time(uint64_t n, uint64_t rate)
{
    return (sim_time_t)(((unsigned __int128)n * 8 * SIM_S + rate - 1) / rate);
}

/* iw_conn.c */
/* Make qp an iWARP queue pair; the active side opens the connection. */
/* The Read Response owed at free-running index i, or false past the last
 * Read Request received: the DMA path reads ahead along them. */
static inline bool sim__iw_read_at(const struct sim_qp *qp, uint32_t i, const struct sim_iw_read **rd)
{
    const struct sim_iw *iw = qp->iw;
    if ((int32_t)(i - iw->read_tail) >= 0)
        return false;
    *rd = &iw->reads[i & (iw->read_cap - 1)];
    return true;
}

void sim__iw_attach(struct sim_qp *qp, bool active, uint16_t lport, uint16_t rport, uint32_t mss,
                    uint32_t iss);
void sim__iw_start(struct sim_qp *qp);
/* Sockets: the next message the peer sends on this connection lands in
 * region mr at off. */
void sim__iw_expect(struct sim_qp *qp, uint32_t mr, uint64_t off, uint32_t len);
void sim__iw_free(struct sim_qp *qp);
struct sim_frame *sim__iw_pull(struct sim_qp *qp);
void sim__iw_take(struct sim_nic *nic, struct sim_frame *f);
/* tcp: the receiving core has processed the oldest frame waiting for it,
 * which goes to its TCP endpoint. */
void sim__iw_kernel_event(struct sim_nic *nic);

/* iw_tx.c */
uint32_t sim__iw_next(struct sim_qp *qp, uint32_t seq, uint32_t max, uint32_t *tag);
void sim__iw_fill(struct sim_qp *qp, uint32_t tag, uint32_t seq, uint8_t *out, uint32_t len);
void sim__iw_acked(struct sim_qp *qp, uint32_t una);
/* Fail the queue pair: the work still queued ends with status st. */
void sim__iw_error(struct sim_qp *qp, enum sim_msg_status st);
/* Send a Terminate (RFC 5040 5.6), and take nothing more from the peer. */
void sim__iw_terminate(struct sim_qp *qp, uint8_t layer, uint8_t etype, uint8_t code);
/* Close the connection once this side's part of the run is done. */
void sim__iw_maybe_close(struct sim_qp *qp);

/* iw_rx.c */
void sim__iw_deliver(struct sim_qp *qp, uint32_t seq, const uint8_t *p, uint32_t len);

#endif
