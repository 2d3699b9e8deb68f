/* rdma_replay.h - the replay analysis as a library: decoded frames in, one
 * at a time; out, the queue-pair conversations of a capture, their messages
 * with latencies, per-interval rates and anomalies.
 *
 * Vocabulary. A *flow* is every packet addressed to one queue pair from one
 * source: the key is (source address, destination address, destination QPN),
 * addresses being IPv4 (held as IPv4-mapped IPv6), GIDs or LIDs. A
 * *conversation* is two flows in opposite directions joined once the capture
 * proves they belong together: a CM REQ/REP exchange naming both QPNs, a UD
 * DETH naming the source QP, or an acknowledgement whose PSN matches an
 * outstanding request. Requests arriving at a QP and the responses the same
 * QP receives for its own requests travel in different flows, so a message
 * lives in the flow its requests use and is completed by packets of the
 * paired flow.
 *
 * iWARP flows are the two directions of a TCP connection (key: addresses
 * and both ports), joined as one conversation from the start. A message is
 * kept in the flow of the side that asked for it (the sender of a Send or
 * Write, the requester of a Read), as for RoCE.
 *
 * Use: rdma_replay_new(), then rdma_replay_frame() for every frame of the
 * capture in order, as rdma_decode() left it, then rdma_replay_finish().
 * What happens on the way is told through callbacks (a message done, an
 * interval of the timeline closed); what the whole capture showed is read
 * afterwards through the accessors at the end of this file. The library
 * prints nothing: reports are the caller's.
 *
 * Time is integer nanoseconds since the first frame; frame numbers count
 * from 1, as Wireshark's.
 */
#ifndef RDMA_REPLAY_H
#define RDMA_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdma_codec.h"

/* ---- message kinds: for RoCE and InfiniBand one base operation from the
 * opcode flags, with or without immediate data or invalidate; for iWARP
 * the RDMAP messages of RFC 5040 and RFC 7306 by their own names ---------- */
enum {
    RDMA_REPLAY_KIND_BASE_SEND,
    RDMA_REPLAY_KIND_BASE_WRITE,
    RDMA_REPLAY_KIND_BASE_READ,
    RDMA_REPLAY_KIND_BASE_ATOMIC,
    RDMA_REPLAY_KIND_BASES
};
enum { RDMA_REPLAY_KIND_MOD_NONE, RDMA_REPLAY_KIND_MOD_IMM, RDMA_REPLAY_KIND_MOD_INV, RDMA_REPLAY_KIND_MODS };
#define RDMA_REPLAY_KINDS_IB (RDMA_REPLAY_KIND_BASES * RDMA_REPLAY_KIND_MODS)

#define RDMA_REPLAY_IWARP_KINDS(X)                                             \
    X(WRITE, "iWARP RDMA Write")                                               \
    X(READ, "iWARP RDMA Read")                                                 \
    X(SEND, "iWARP Send")                                                      \
    X(SEND_INV, "iWARP Send with Invalidate")                                  \
    X(SEND_SE, "iWARP Send with SE")                                           \
    X(SEND_SE_INV, "iWARP Send with SE and Invalidate")                        \
    X(IMMEDIATE, "iWARP Immediate Data")                                       \
    X(IMMEDIATE_SE, "iWARP Immediate Data with SE")                            \
    X(ATOMIC, "iWARP Atomic")

enum {
    RDMA_REPLAY_KIND_IW_BEFORE = RDMA_REPLAY_KINDS_IB - 1,
#define RDMA__REPLAY_IW_ENUM(name, text) RDMA_REPLAY_KIND_IW_##name,
    RDMA_REPLAY_IWARP_KINDS(RDMA__REPLAY_IW_ENUM)
#undef RDMA__REPLAY_IW_ENUM
    RDMA_REPLAY_KINDS
};
const char *rdma_replay_kind_name(unsigned kind);

/* ---- anomalies (name, text, severity: lower sorts first) ---------------- */
#define RDMA_REPLAY_ANOMALY_KINDS(X)                                           \
    X(NAK, "NAK", 0)                                                           \
    X(MISSING_ACK, "missing acknowledgement", 1)                               \
    X(GO_BACK_N, "go-back-N episode", 1)                                       \
    X(PSN_GAP, "PSN gap", 1)                                                   \
    X(RNR_NAK, "RNR NAK", 2)                                                   \
    X(OUT_OF_ORDER, "out-of-order response", 2)                                \
    X(BAD_ICRC, "bad ICRC", 2)                                                 \
    X(BAD_FRAME, "bad frame", 2)                                               \
    X(CM_REJ, "CM REJ", 2)                                                     \
    X(TERMINATE, "iWARP Terminate", 0)                                         \
    X(UNANSWERED, "unanswered request", 1)                                     \
    X(TCP_GAP, "TCP capture gap", 1)                                           \
    X(BAD_MPA_CRC, "bad MPA CRC", 2)                                           \
    X(INCOMPLETE, "incomplete message", 2)                                     \
    X(MPA_REJECT, "MPA reject", 2)                                             \
    X(RETRANSMIT, "retransmitted packets", 3)                                  \
    X(TCP_RETRANSMIT, "TCP retransmission", 3)                                 \
    X(TCP_OUT_OF_ORDER, "TCP out of order", 3)                                 \
    X(DUPLICATE, "duplicate packets", 3)                                       \
    X(UNMATCHED, "response without request", 3)                                \
    X(PFC_PAUSE, "PFC pause", 4)                                               \
    X(CNP, "CNP", 4)                                                           \
    X(ECN_CE, "ECN-CE marked", 5)                                              \
    X(FECN, "FECN marked", 5)                                                  \
    X(ONE_WAY, "one direction only", 4)

enum rdma_replay_anomaly_kind {
#define RDMA_REPLAY_ANOM_ENUM(name, text, sev) RDMA_REPLAY_ANOM_##name,
    RDMA_REPLAY_ANOMALY_KINDS(RDMA_REPLAY_ANOM_ENUM)
#undef RDMA_REPLAY_ANOM_ENUM
    RDMA_REPLAY_ANOM_COUNT
};
const char *rdma_replay_anomaly_name(unsigned kind);
unsigned rdma_replay_anomaly_severity(unsigned kind);

/* What started a go-back-N episode. */
#define RDMA_REPLAY_GBN_TRIGGERS(X)                                            \
    X(TIMEOUT, "timeout (no NAK seen)")                                        \
    X(NAK_SEQ, "NAK PSN sequence error")                                       \
    X(RNR, "RNR NAK")

enum rdma_replay_gbn_trigger {
#define RDMA_REPLAY_GBN_ENUM(name, text) RDMA_REPLAY_GBN_##name,
    RDMA_REPLAY_GBN_TRIGGERS(RDMA_REPLAY_GBN_ENUM)
#undef RDMA_REPLAY_GBN_ENUM
};
const char *rdma_replay_gbn_trigger_name(unsigned t);

/* One occurrence kept as an example: up to three frames (0 = none). A
 * go-back-N episode keeps its first and last resent frame and the frame
 * that preceded it (the NAK, the RNR NAK, or the last request before a
 * timeout). */
struct rdma_replay_event {
    uint64_t frame[3];
    uint64_t t;        /* ns since the first frame */
    uint64_t value;    /* kind-specific: missing PSNs, timer ns, pause ns, ... */
    uint32_t psn, psn_end;
    const char *text;  /* a reason (the decoder's), or NULL; valid during a callback, and
                        * for the anomalies' examples until rdma_replay_free */
};

#define RDMA_REPLAY_SAMPLES 16

/* Occurrences of one kind, with one code, in one flow (flow -1: none, as for
 * bad frames and PFC). Counts are exact; the first RDMA_REPLAY_SAMPLES
 * occurrences are kept with their frames. */
struct rdma_replay_anomaly {
    uint8_t kind;
    uint16_t code;     /* NAK code, GBN trigger, PFC priority, decoder status */
    int32_t flow;
    uint64_t count;
    uint64_t packets;  /* frames involved in all occurrences */
    uint64_t first_frame, last_frame;
    uint64_t value_sum, value_min, value_max;
    uint32_t nsamples;
    struct rdma_replay_event ev[RDMA_REPLAY_SAMPLES];
};

/* ---- messages ------------------------------------------------------------ */
/* RDMA_REPLAY_MSG_NO_RESPONSE and RDMA_REPLAY_MSG_SEGMENTS_MISSING are
 * iWARP's: a Read or Atomic Request never answered, a message whose last
 * DDP segment never came. RDMA_REPLAY_MSG_ONE_WAY: unacknowledged in a
 * capture that holds no frame of the other direction between the two
 * addresses (one switch port, the acknowledgements on another path):
 * nothing is known to have failed. */
enum rdma_replay_msg_status {
    RDMA_REPLAY_MSG_OK,
    RDMA_REPLAY_MSG_NAK,
    RDMA_REPLAY_MSG_NO_ACK,
    RDMA_REPLAY_MSG_INCOMPLETE,
    RDMA_REPLAY_MSG_NO_RESPONSE,
    RDMA_REPLAY_MSG_SEGMENTS_MISSING,
    RDMA_REPLAY_MSG_ONE_WAY
};

struct rdma_replay_msg {
    uint64_t va;
    uint64_t t_first, t_req_last, t_done; /* ns since the first frame */
    uint64_t f_first, f_req_last, f_done;
    uint64_t bytes;        /* payload: requests for SEND/WRITE, responses for READ */
    uint32_t rkey, dmalen, imm;
    uint32_t psn;          /* first PSN */
    uint32_t npsn;         /* PSNs the message occupies (READ: once known) */
    uint32_t req_packets, resp_packets, retransmits;
    uint32_t resp_next;    /* READ: the response PSN expected next */
    /* iWARP: va/rkey are the tagged offset and STag of a Write or Atomic and
     * the data source of a Read; untagged messages have a queue and MSN */
    uint64_t sink_to;      /* Read: where the responses go */
    uint32_t sink_stag;
    uint32_t qn, msn;
    uint32_t atomic_id;    /* Atomic Request identifier */
    uint8_t kind;
    uint8_t status;        /* enum rdma_replay_msg_status */
    uint8_t nak_code;
    bool has_reth, has_imm, has_ieth;
    bool req_done;         /* the LAST/ONLY request packet was seen */
    bool span_known;       /* npsn is final */
    bool partial;          /* the capture starts after its first packet */
    bool has_latency;      /* t_done is the acknowledgement that completed it */
};

struct rdma_replay_kind_stats {
    uint64_t count, failed, bytes, packets;
    uint64_t lat_n, lat_sum, lat_min, lat_max;
};

/* The requests addressed to one QP and what the capture shows of the
 * responses to them. */
struct rdma_replay_chan {
    struct rdma_replay_msg *ring;      /* outstanding messages, oldest at head */
    uint32_t cap, head, n;
    uint32_t mtu;          /* path MTU once known (CM or packet sizes), else 0 */
    uint32_t epsn;         /* next request PSN expected */
    bool psn_valid;
    bool psn_from_cm;      /* epsn is the CM starting PSN, no request seen yet */
    bool read_open;        /* last request was a READ of unknown PSN span */
    uint32_t read_lo, read_hi; /* then: next request PSN lies in [lo, hi] */
    /* the previous request packet, to tell duplicates */
    uint32_t last_psn, last_icrc;
    uint8_t last_opcode;
    uint64_t last_t, last_frame;
    /* go-back-N episode in progress */
    bool in_gbn;
    uint8_t gbn_trigger;
    uint32_t gbn_psn, gbn_next, gbn_end, gbn_packets;
    uint64_t gbn_first, gbn_last, gbn_trigger_frame, gbn_wait, gbn_t;
    /* the last NAK or RNR NAK, until a retransmission answers it */
    bool nak_pending;
    uint8_t nak_kind;
    uint32_t nak_psn;
    uint64_t nak_frame, nak_t;
    /* responses */
    bool resp_valid;
    uint32_t resp_hi;      /* highest PSN acknowledged or responded to */
    uint32_t resp_last_psn, resp_last_icrc;
    uint8_t resp_last_opcode;
    uint64_t resp_last_t, resp_last_frame;
    bool retransmitted_since_resp;
    uint64_t requests, responses;
    struct rdma_replay_kind_stats ks[RDMA_REPLAY_KINDS];
};


/* ---- flows ----------------------------------------------------------------- */
/* What an iWARP flow (one direction of a TCP connection) showed. */
struct rdma_replay_iwarp {
    uint64_t segments, bad_crc, malformed, terminates;
    uint64_t tcp_retrans, tcp_ooo, tcp_gaps;
    /* the MPA Request or Reply this side sent */
    uint64_t mpa_frame, mpa_t;
    uint8_t mpa_kind;      /* enum rdma_mpa_frame_kind, 0: none seen */
    uint8_t mpa_rev;
    bool mpa_markers, mpa_crc, mpa_reject;
};

struct replay__iw_flow; /* the messages an iWARP flow is assembling: the library's own */

/* src[16] dst[16], then QPN | src kind << 24 | dst kind << 32; a TCP
 * connection's direction has a kind of its own, its destination port where
 * the QPN is and its source port from bit 40. */
struct rdma_replay_key {
    uint64_t w[5];
};

enum rdma_replay_pairing {
    RDMA_REPLAY_PAIR_NONE,
    RDMA_REPLAY_PAIR_ACK,
    RDMA_REPLAY_PAIR_DETH,
    RDMA_REPLAY_PAIR_CM,
    RDMA_REPLAY_PAIR_TCP
};

struct rdma_replay_flow {
    struct rdma_replay_key key;
    uint32_t id;            /* 1-based, in order of first appearance */
    int32_t peer;           /* flow index of the other direction, -1 if unknown */
    uint32_t pair_next;     /* next flow of the same address pair, index + 1 */
    uint32_t searched_gen;  /* address-pair generation of the last failed pairing */
    int32_t conn;           /* CM connection index, -1 if none */
    uint8_t pairing;        /* enum rdma_replay_pairing */
    uint8_t transport;      /* enum rdma_transport of the first packet */
    uint8_t proto;          /* enum rdma_proto */
    bool src_qpn_known;
    uint32_t src_qpn;       /* the sending QP when the capture names it */
    uint64_t packets, wire_bytes, goodput_bytes;
    uint64_t first_t, last_t, first_frame, last_frame;
    uint64_t cnp, ecn_ce, fecn, bad_icrc, retransmits, duplicates, unmatched;
    uint64_t cnp_last_t, cnp_min_gap;
    /* timeline: counters of the current interval */
    uint64_t tl_interval;
    bool tl_active;
    uint64_t tl_packets, tl_bytes, tl_cnp, tl_ce, tl_nak, tl_retrans;
    struct rdma_replay_iwarp *iw;       /* iWARP: what the direction showed, else NULL */
    struct replay__iw_flow *iw_state;   /* and its state in the analysis */
    struct rdma_replay_chan ch;
};

uint16_t rdma_replay_key_port(const struct rdma_replay_key *k, bool dst);
uint32_t rdma_replay_key_qpn(const struct rdma_replay_key *k);
/* Address as text: dotted quad for IPv4-mapped, IPv6/GID, or "LID n";
 * with ":port" (IPv6 in brackets) for a TCP connection. */
void rdma_replay_addr_format(const struct rdma_replay_key *k, bool dst, char *buf, size_t cap);
/* The same without the port. */
void rdma_replay_addr_format_ip(const struct rdma_replay_key *k, bool dst, char *buf, size_t cap);
#define RDMA_REPLAY_ADDR_TEXT_MAX 64

/* ---- CM connections ------------------------------------------------------------- */
struct rdma_replay_conn {
    struct rdma_replay_key active_to_passive; /* key with the passive QPN */
    uint32_t active_qpn, passive_qpn;
    uint32_t active_comm, passive_comm;
    uint32_t active_psn, passive_psn;  /* first request PSN each side sends */
    uint32_t mtu;
    uint8_t transport;                 /* REQ transport service type */
    uint64_t f_req, f_rep, f_rtu, f_dreq, f_drep, f_rej;
    uint64_t t_req, t_rep, t_rtu;
    uint16_t rej_reason;
    bool have_rep;
};


/* ---- PFC --------------------------------------------------------------------------- */
struct rdma_replay_pfc {
    uint8_t mac[6];
    uint8_t prio;
    uint64_t frames, xon, quanta;
    uint64_t requested_ns, paused_ns, longest_ns;
    uint64_t paused_until, run_start, run_end; /* ns since the first frame; run_end: of the last run */
    bool paused;
    uint64_t first_frame, last_frame;
    uint64_t tl_frames, tl_paused_ns;
};


/* ---- the analysis ---------------------------------------------------------- */
struct rdma_replay;

/* What the analysis holds grows with the queue pairs and TCP connections
 * of the capture, not its length: about RDMA_REPLAY_FLOW_COST bytes per
 * flow (one direction of a QP or connection, with its first outstanding
 * messages and an anomaly row), 144 more per message outstanding at once.
 * Past max_memory no new flow is followed: their frames are counted in
 * rdma_replay_totals.capped_frames and the rest is analysed as usual. */
#define RDMA_REPLAY_FLOW_COST 4096u
#define RDMA_REPLAY_DEFAULT_MAX_MEMORY ((uint64_t)1 << 30)

struct rdma_replay_config {
    uint64_t link_bps;    /* link speed: a PFC pause quantum is 512 bit times */
    uint64_t interval_ns; /* timeline interval: intervals are told to the
                           * callbacks when this is not 0 and one is given */
    uint64_t max_memory;  /* bytes; 0: RDMA_REPLAY_DEFAULT_MAX_MEMORY */
    /* iWARP's TCP reassembly (rdma_iwarp_limits): connections tracked at
     * once (0: as many as half the flows max_memory holds), and the
     * capture time without a segment after which a connection ages out
     * (0: RDMA_IWARP_DEFAULT_IDLE_NS, RDMA_IWARP_NEVER: never) */
    uint64_t max_conns;
    uint64_t idle_ns;
};

/* What the analysis tells as it goes. Each callback returns false to stop
 * it (as when memory runs out): rdma_replay_frame() and rdma_replay_finish()
 * then return false. Any may be NULL. A message is the analysis's until the
 * callback returns (copy what is to be kept); a flow stays where it is
 * until rdma_replay_free(). */
struct rdma_replay_callbacks {
    void *ctx;
    /* A message completed, failed, or was given up at the end of the
     * capture (its status says which). */
    bool (*message)(void *ctx, const struct rdma_replay *r, const struct rdma_replay_flow *f,
                    const struct rdma_replay_msg *m);
    /* The timeline's interval starting at start_ns closed: a flow carried
     * packets in it (its tl_* counters), or a PFC priority paused or was
     * paused in it (tl_frames, and paused_ns of the interval). */
    bool (*flow_interval)(void *ctx, const struct rdma_replay *r, uint64_t start_ns,
                          const struct rdma_replay_flow *f);
    bool (*pfc_interval)(void *ctx, const struct rdma_replay *r, uint64_t start_ns,
                         const struct rdma_replay_pfc *p, uint64_t paused_ns);
};

/* NULL when memory ran out; cb may be NULL. */
struct rdma_replay *rdma_replay_new(const struct rdma_replay_config *cfg,
                                    const struct rdma_replay_callbacks *cb);
/* One frame, at sec.nsec as the capture gives it, decoded by rdma_decode()
 * from data, its captured bytes (pkt, and st, what rdma_decode() returned).
 * False when the analysis stopped: memory ran out or a callback said so;
 * later frames are then ignored. */
bool rdma_replay_frame(struct rdma_replay *r, int64_t sec, int64_t nsec, struct rdma_pkt *pkt,
                       enum rdma_status st, const uint8_t *data);
/* End of the capture: what is still open closes (messages never
 * acknowledged, episodes in progress, the last intervals, pauses). False
 * as for rdma_replay_frame(). */
bool rdma_replay_finish(struct rdma_replay *r);
void rdma_replay_free(struct rdma_replay *r);

/* What the capture held, counted as it was read. */
struct rdma_replay_totals {
    uint64_t frames, rdma_frames, other_frames, bad_frames, snapped_frames, wire_bytes;
    uint64_t cm_messages, mgmt_frames;
    uint64_t messages_done, messages_failed;
    uint64_t t0_sec, t0_nsec; /* the time of the first frame: (int64_t)t0_sec seconds
                               * (negative before 1970) plus t0_nsec (0..999999999) */
    uint64_t t_last;          /* the latest frame, ns since the first */
    /* frames of flows not followed because max_memory was reached, and the
     * flows followed at most */
    uint64_t capped_frames;
    uint32_t max_flows;
};

const struct rdma_replay_totals *rdma_replay_totals(const struct rdma_replay *r);
const struct rdma_replay_config *rdma_replay_config(const struct rdma_replay *r);
/* Flows by index (id - 1), in order of first appearance. */
uint32_t rdma_replay_flow_count(const struct rdma_replay *r);
const struct rdma_replay_flow *rdma_replay_flow(const struct rdma_replay *r, uint32_t i);
/* The number of the conversation a flow belongs to: conversations are
 * numbered 1, 2, ... in the order of their first frame. A pairing found
 * late (by acknowledgement, after a flow's first frames) may move the
 * numbers of conversations that appeared after it; once the capture is
 * read they are final. */
uint32_t rdma_replay_conv_id(const struct rdma_replay *r, const struct rdma_replay_flow *f);
/* Anomaly rows, one per (kind, code, flow), in order of first occurrence;
 * and the occurrences of one kind. */
const struct rdma_replay_anomaly *rdma_replay_anomalies(const struct rdma_replay *r, uint32_t *n);
uint64_t rdma_replay_anomaly_total(const struct rdma_replay *r, unsigned kind);
/* CM connections, in order of their REQ. */
const struct rdma_replay_conn *rdma_replay_conns(const struct rdma_replay *r, uint32_t *n);
/* PFC and PAUSE senders by source MAC and priority, in order of appearance. */
const struct rdma_replay_pfc *rdma_replay_pfc(const struct rdma_replay *r, uint32_t *n);

/* into += s: counts, bytes and latencies of one kind of message */
void rdma_replay_kind_stats_merge(struct rdma_replay_kind_stats *into, const struct rdma_replay_kind_stats *s);
const char *rdma_replay_pairing_name(unsigned p);
const char *rdma_replay_msg_status_name(const struct rdma_replay_msg *m);

#endif
