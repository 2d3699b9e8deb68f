/* replay.h - what the files of `rdmasim replay` share: flows, messages,
 * anomalies and the analysis state they hang off.
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
 * and both ports), joined as one conversation from the start; iwarp.c
 * assembles their RDMAP messages from the DDP segments the codec's stream
 * decoder hands out. A message is kept in the flow of the side that asked
 * for it (the sender of a Send or Write, the requester of a Read), as for
 * RoCE; the message and anomaly layers below take no position on the
 * transport underneath beyond the kinds they name.
 *
 * Time is integer nanoseconds from the capture (libpcap opened with
 * PCAP_TSTAMP_PRECISION_NANO); frame numbers count from 1, as Wireshark's.
 */
#ifndef RDMASIM_REPLAY_H
#define RDMASIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rdma_codec.h"
#include "rdma_iwarp.h"

#define PSN_MASK 0xffffffu

/* Signed distance a - b in the 24-bit PSN space (IBA 9.7.1: PSNs compare
 * modulo 2^24, half the space ahead, half behind). */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/* ---- message kinds: for RoCE and InfiniBand one base operation from the
 * opcode flags, with or without immediate data or invalidate; for iWARP
 * the RDMAP messages of RFC 5040 and RFC 7306 by their own names ---------- */
enum { KIND_BASE_SEND, KIND_BASE_WRITE, KIND_BASE_READ, KIND_BASE_ATOMIC, KIND_BASES };
enum { KIND_MOD_NONE, KIND_MOD_IMM, KIND_MOD_INV, KIND_MODS };
#define NKINDS_IB (KIND_BASES * KIND_MODS)

#define IWARP_KINDS(X)                                                         \
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
    KIND_IW_BEFORE = NKINDS_IB - 1,
#define IW_KIND_ENUM(name, text) KIND_IW_##name,
    IWARP_KINDS(IW_KIND_ENUM)
#undef IW_KIND_ENUM
    NKINDS
};
unsigned kind_of_flags(uint32_t opflags);
const char *kind_name(unsigned kind);

/* ---- anomalies (name, text, severity: lower sorts first) ---------------- */
#define ANOMALY_KINDS(X)                                                       \
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
    X(FECN, "FECN marked", 5)

enum anomaly_kind {
#define ANOM_ENUM(name, text, sev) ANOM_##name,
    ANOMALY_KINDS(ANOM_ENUM)
#undef ANOM_ENUM
    ANOM_COUNT
};
const char *anomaly_name(unsigned kind);
unsigned anomaly_severity(unsigned kind);

/* What started a go-back-N episode. */
#define GBN_TRIGGERS(X)                                                        \
    X(TIMEOUT, "timeout (no NAK seen)")                                        \
    X(NAK_SEQ, "NAK PSN sequence error")                                       \
    X(RNR, "RNR NAK")

enum gbn_trigger {
#define GBN_ENUM(name, text) GBN_##name,
    GBN_TRIGGERS(GBN_ENUM)
#undef GBN_ENUM
};
const char *gbn_trigger_name(unsigned t);

/* One occurrence kept as an example: up to three frames (0 = none). A
 * go-back-N episode keeps its first and last resent frame and the frame
 * that preceded it (the NAK, the RNR NAK, or the last request before a
 * timeout). */
struct anom_event {
    uint64_t frame[3];
    uint64_t t;        /* ns since the first frame */
    uint64_t value;    /* kind-specific: missing PSNs, timer ns, pause ns, ... */
    uint32_t psn, psn_end;
    const char *text;  /* static text (decoder reason), or NULL */
};

#define ANOM_SAMPLES 16

/* Occurrences of one kind, with one code, in one flow (flow -1: none, as for
 * bad frames and PFC). Counts are exact; the first ANOM_SAMPLES occurrences
 * are kept with their frames. */
struct anomaly {
    uint8_t kind;
    uint16_t code;     /* NAK code, GBN trigger, PFC priority, decoder status */
    int32_t flow;
    uint64_t count;
    uint64_t packets;  /* frames involved in all occurrences */
    uint64_t first_frame, last_frame;
    uint64_t value_sum, value_min, value_max;
    uint32_t nsamples;
    struct anom_event ev[ANOM_SAMPLES];
};

struct anomalies {
    struct anomaly *v;
    uint32_t n, cap;
    uint32_t *slots;   /* open addressing on (kind, code, flow): index + 1 */
    uint32_t nslots;
    uint64_t per_kind[ANOM_COUNT];
};

void anomalies_free(struct anomalies *a);
/* Count one occurrence; `ev` is kept as an example while there is room.
 * Returns false when memory ran out. */
bool anomaly_add(struct anomalies *a, unsigned kind, unsigned code, int32_t flow,
                 uint64_t packets, const struct anom_event *ev);

/* ---- messages ------------------------------------------------------------ */
/* MSG_NO_RESPONSE and MSG_SEGMENTS_MISSING are iWARP's: a Read or Atomic
 * Request never answered, a message whose last DDP segment never came. */
enum msg_status { MSG_OK, MSG_NAK, MSG_NO_ACK, MSG_INCOMPLETE, MSG_NO_RESPONSE, MSG_SEGMENTS_MISSING };

struct msg {
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
    uint8_t status;        /* enum msg_status */
    uint8_t nak_code;
    bool has_reth, has_imm, has_ieth;
    bool req_done;         /* the LAST/ONLY request packet was seen */
    bool span_known;       /* npsn is final */
    bool partial;          /* the capture starts after its first packet */
    bool has_latency;      /* t_done is the acknowledgement that completed it */
};

struct kind_stats {
    uint64_t count, failed, bytes, packets;
    uint64_t lat_n, lat_sum, lat_min, lat_max;
};

/* The requests addressed to one QP and what the capture shows of the
 * responses to them. */
struct chan {
    struct msg *ring;      /* outstanding messages, oldest at head */
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
    struct kind_stats ks[NKINDS];
};

/* ---- iWARP stream state of one direction ---------------------------------- */
/* A message whose DDP segments are arriving: segments of a message carry
 * consecutive tagged offsets (one STag) or message offsets (one queue and
 * MSN), the last with the L flag (RFC 5041 4.2-4.4). */
struct iw_open {
    struct msg m;
    bool active;
    bool matched;          /* Read Response: its Read Request was found */
    uint8_t opcode;
    uint32_t stag;
    uint64_t next_off;     /* the TO or MO that continues the message */
};

/* RDMAP sends untagged messages on queues 0-3 (RFC 5040 5.1, RFC 7306). */
#define IW_QUEUES 4

struct iw_flow {
    struct iw_open tagged, untagged[IW_QUEUES];
    uint64_t segments, bad_crc, malformed, terminates;
    uint64_t tcp_retrans, tcp_ooo, tcp_gaps;
    /* the MPA Request or Reply this side sent */
    uint64_t mpa_frame, mpa_t;
    uint8_t mpa_kind;      /* enum rdma_mpa_frame_kind, 0: none seen */
    uint8_t mpa_rev;
    bool mpa_markers, mpa_crc, mpa_reject;
};

/* ---- flows ----------------------------------------------------------------- */
/* src[16] dst[16], then QPN | src kind << 24 | dst kind << 32; a TCP
 * connection's direction has kind ADDR_TCP, its destination port where
 * the QPN is and its source port from bit 40. */
struct flow_key {
    uint64_t w[5];
};

enum addr_kind { ADDR_IP, ADDR_LID, ADDR_TCP };
enum pairing { PAIR_NONE, PAIR_ACK, PAIR_DETH, PAIR_CM, PAIR_TCP };

struct flow {
    struct flow_key key;
    uint32_t id;            /* 1-based, in order of first appearance */
    int32_t peer;           /* flow index of the other direction, -1 if unknown */
    uint32_t pair_next;     /* next flow of the same address pair, index + 1 */
    uint32_t searched_gen;  /* address-pair generation of the last failed pairing */
    int32_t conn;           /* CM connection index, -1 if none */
    uint8_t pairing;        /* enum pairing */
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
    struct iw_flow *iw;     /* iWARP: the direction's stream state, else NULL */
    struct chan ch;
};

#define FLOW_CHUNK_SHIFT 10
#define FLOW_CHUNK (1u << FLOW_CHUNK_SHIFT)

/* Open-addressing hash of flows. Flows live in fixed chunks, so a
 * struct flow * stays valid while new flows are added. */
struct flow_table {
    struct flow **chunks;
    uint32_t nchunks, n;
    uint64_t *slots;        /* hash high bits << 32 | index + 1; 0: empty */
    uint32_t nslots;
    /* flows grouped by (source, destination) address pair, for pairing by ACK */
    struct pair_bucket *pairs;
    uint32_t npairs, pairs_used;
};

static inline struct flow *flow_at(const struct flow_table *t, uint32_t i)
{
    return &t->chunks[i >> FLOW_CHUNK_SHIFT][i & (FLOW_CHUNK - 1)];
}

void flow_table_free(struct flow_table *t);
/* Find or create; NULL only when memory ran out. *created tells which. */
struct flow *flow_get(struct flow_table *t, const struct flow_key *k, bool *created);
struct flow *flow_find(const struct flow_table *t, const struct flow_key *k);
/* The address-pair generation: bumped when an unpaired flow of the pair gets
 * a new outstanding message, so failed pairing searches are not repeated
 * until something changed. */
uint32_t *flow_pair_gen(struct flow_table *t, const struct flow_key *k);
/* First flow (index + 1, 0 if none) whose source and destination are the
 * given flow's destination and source; walk on with f->pair_next. */
uint32_t flow_pair_first(const struct flow_table *t, const struct flow_key *reverse_of);
void flows_join(struct flow_table *t, struct flow *a, struct flow *b, enum pairing how);

/* ---- endpoints ----------------------------------------------------------------- */
/* Fill the key of the flow a decoded packet belongs to. False if the packet
 * has no addresses the analysis can use. */
bool flow_key_from_pkt(const struct rdma_pkt *pkt, struct flow_key *k);
/* The key of the direction of a TCP connection a segment travels. */
void flow_key_from_tcp(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp, struct flow_key *k);
void flow_key_from_ends(const struct rdma_tcp_ends *e, struct flow_key *k);
bool flow_key_is_tcp(const struct flow_key *k);
uint16_t flow_key_port(const struct flow_key *k, bool dst);
void flow_key_reverse(const struct flow_key *k, uint32_t qpn, struct flow_key *out);
uint32_t flow_key_qpn(const struct flow_key *k);
/* Address as text: dotted quad for IPv4-mapped, IPv6/GID, or "LID n";
 * with ":port" (IPv6 in brackets) for a TCP connection. */
void addr_format(const struct flow_key *k, bool dst, char *buf, size_t cap);
/* The same without the port. */
void addr_format_ip(const struct flow_key *k, bool dst, char *buf, size_t cap);
#define ADDR_TEXT_MAX 64
uint64_t flow_key_hash(const struct flow_key *k);

/* ---- CM connections ------------------------------------------------------------- */
struct conn {
    struct flow_key active_to_passive; /* key with the passive QPN */
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

struct conns {
    struct conn *v;
    uint32_t n, cap;
};

/* ---- PFC --------------------------------------------------------------------------- */
struct pfc_prio {
    uint8_t mac[6];
    uint8_t prio;
    uint64_t frames, xon, quanta;
    uint64_t requested_ns, paused_ns, longest_ns;
    uint64_t paused_until, run_start; /* ns since the first frame */
    bool paused;
    uint64_t first_frame, last_frame;
    uint64_t tl_frames, tl_paused_ns;
};

struct pfc_table {
    struct pfc_prio *v;
    uint32_t n, cap;
};

/* ---- options and the whole analysis --------------------------------------------- */
struct replay_opts {
    bool json;
    const char *timeline;
    uint64_t interval_ns;
    uint64_t link_bps;
    uint32_t top;
    struct rdma_decode_config cfg;
};

struct slow_list { /* the slowest completed messages, a min-heap on latency */
    struct slow_entry {
        struct msg m;
        uint32_t flow;
    } *v;
    uint32_t n, cap;
};

struct replay {
    const struct replay_opts *opts;
    const char *path;
    struct flow_table flows;
    struct anomalies anomalies;
    struct conns conns;
    struct pfc_table pfc;
    struct slow_list slow;
    FILE *out;              /* the report */
    FILE *timeline;         /* the CSV, or NULL */
    bool oom;
    bool first_message_out; /* JSON: a message was written already */
    /* the frame being analysed */
    uint64_t frame, t, t0_sec, t0_nsec;
    bool have_t0;
    uint64_t t_last;
    /* capture totals */
    uint64_t frames, rdma_frames, other_frames, bad_frames, snapped_frames, wire_bytes;
    uint64_t cm_messages, mgmt_frames;
    int linktype;
    bool damaged;           /* libpcap stopped at a damaged record */
    uint64_t messages_done, messages_failed;
    /* iWARP: the stream decoder (created at the first TCP segment) and the
     * times of recent frames, for PDUs that began in an earlier frame */
    struct rdma_iwarp_stream *iwarp;
    uint64_t *iw_times;
    /* timeline */
    uint64_t tl_interval;   /* index of the open interval */
    uint32_t *tl_active;    /* flows active in it */
    uint32_t tl_n, tl_cap;
};

/* ingest.c: one decoded frame (and its bytes) into the analysis */
void replay_frame(struct replay *r, struct rdma_pkt *pkt, enum rdma_status st, const uint8_t *data);
/* One more frame of flow f: packets, bytes, first and last seen, and the
 * timeline's interval. */
void flow_count_frame(struct replay *r, struct flow *f, const struct rdma_pkt *pkt);
/* iwarp.c */
/* A TCP segment: the flow of its direction when it belongs to an MPA
 * connection, else NULL (plain TCP, or memory ran out: r->oom). */
struct flow *iwarp_frame(struct replay *r, struct rdma_pkt *pkt, const uint8_t *data);
/* End of capture: what the stream still holds, messages cut short, and
 * requests never answered. */
void iwarp_finish(struct replay *r);
void iw_flow_free(struct flow *f);
/* requests.c / responses.c */
void chan_request(struct replay *r, struct flow *f, const struct rdma_pkt *pkt);
void chan_response(struct replay *r, struct flow *rf, const struct rdma_pkt *pkt);
/* messages.c */
struct msg *chan_push(struct replay *r, struct flow *f);
struct msg *chan_insert(struct replay *r, struct flow *f, uint32_t psn);
struct msg *chan_msg(struct chan *c, uint32_t i);
struct msg *chan_find(struct chan *c, uint32_t psn);
void chan_learn_mtu(struct chan *c, const struct rdma_pkt *pkt);
void chan_pop_done(struct replay *r, struct flow *f);
void msg_finish(struct replay *r, struct flow *f, struct msg *m, enum msg_status st);
void chan_close_gbn(struct replay *r, struct flow *f);
void replay_finish_flows(struct replay *r);
void chan_free(struct chan *c);
void kind_stats_merge(struct kind_stats *into, const struct kind_stats *s);
/* pairing.c */
struct flow *flow_responder_of(struct replay *r, struct flow *rf, const struct rdma_pkt *pkt);
/* cm.c */
void cm_message(struct replay *r, const struct rdma_pkt *pkt, const struct flow_key *mad_key);
void conns_free(struct conns *c);
/* pfc.c */
void pfc_frame(struct replay *r, const struct rdma_pkt *pkt);
void pfc_finish(struct replay *r);
void pfc_free(struct pfc_table *t);
uint64_t pfc_quanta_ns(const struct replay *r, uint64_t quanta);
/* Paused time of a priority inside [lo, hi) for the open timeline interval. */
uint64_t pfc_interval_paused(const struct pfc_prio *e, uint64_t lo, uint64_t hi);
/* timeline.c */
void timeline_header(struct replay *r);
void timeline_touch(struct replay *r, struct flow *f);
void timeline_advance(struct replay *r);
void timeline_flush(struct replay *r);
/* slowest.c */
void slow_offer(struct replay *r, const struct msg *m, uint32_t flow);
void slow_sort(struct slow_list *s);
/* report_text.c, report_json.c */
void report_text(struct replay *r);
void report_json_begin(struct replay *r);
void report_json_message(struct replay *r, const struct flow *f, const struct msg *m);
void report_json_end(struct replay *r);
/* format.c */
void fmt_duration(char *buf, size_t cap, uint64_t ns);
void fmt_rate(char *buf, size_t cap, uint64_t bits_per_s);
void fmt_bytes(char *buf, size_t cap, uint64_t bytes);
uint64_t rate_per_s(uint64_t amount, uint64_t ns);
/* The conversation a flow belongs to: the smaller flow id of the pair. */
uint32_t conv_id(const struct replay *r, const struct flow *f);
const char *pairing_name(unsigned p);
const char *msg_status_name(const struct msg *m);

#endif
