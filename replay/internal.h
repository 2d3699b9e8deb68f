/* internal.h - what the files of the replay analysis share: the tables
 * behind the public types of rdma_replay.h, the analysis state they hang
 * off, and the functions of each stage (replay__*). Nothing here is seen
 * by the library's users.
 *
 * The stages: ingest.c sorts a decoded frame; RoCE, InfiniBand and PFC
 * frames go to requests.c, responses.c, cm.c and pfc.c through the flow
 * table (flows.c, endpoint.c, pairing.c); iWARP goes through the codec's
 * TCP stream decoder (iwarp.c), which assembles RDMAP messages from the
 * DDP segments it hands out. Both feed the message layer (messages.c) and
 * the anomaly table (anomaly.c), which take no position on the transport
 * underneath beyond the kinds they name; timeline.c closes intervals.
 */
#ifndef RDMASIM_REPLAY_INTERNAL_H
#define RDMASIM_REPLAY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rdma_codec.h"
#include "rdma_iwarp.h"
#include "rdma_replay.h"

/* The operation a packet belongs to, from its rdma_opcodes[] flags. */
unsigned replay__kind_of_flags(uint32_t opflags);

/* ---- anomalies --------------------------------------------------------------- */
struct anomalies {
    struct rdma_replay_anomaly *v;
    uint32_t n, cap;
    uint32_t *slots;   /* open addressing on (kind, code, flow): index + 1 */
    uint32_t nslots;
    uint64_t per_kind[RDMA_REPLAY_ANOM_COUNT];
};

void replay__anomalies_free(struct anomalies *a);
/* Count one occurrence; `ev` is kept as an example while there is room.
 * Returns false when memory ran out. */
bool replay__anomaly_add(struct anomalies *a, unsigned kind, unsigned code, int32_t flow, uint64_t packets,
                         const struct rdma_replay_event *ev);

/* ---- iWARP stream state of one direction ---------------------------------- */
/* A message whose DDP segments are arriving: segments of a message carry
 * consecutive tagged offsets (one STag) or message offsets (one queue and
 * MSN), the last with the L flag (RFC 5041 4.2-4.4). */
struct iw_open {
    struct rdma_replay_msg m;
    bool active;
    bool matched;          /* Read Response: its Read Request was found */
    uint8_t opcode;
    uint32_t stag;
    uint64_t next_off;     /* the TO or MO that continues the message */
};

/* RDMAP sends untagged messages on queues 0-3 (RFC 5040 5.1, RFC 7306). */
#define IW_QUEUES 4

/* A flow's iWARP state: what the reports read, and the messages whose
 * segments are arriving. */
struct replay__iw_flow {
    struct rdma_replay_iwarp st;
    struct iw_open tagged, untagged[IW_QUEUES];
};

/* ---- flows ------------------------------------------------------------------ */
/* Kinds of address in a key (see struct rdma_replay_key). */
enum addr_kind { ADDR_IP, ADDR_LID, ADDR_TCP };

#define FLOW_CHUNK_SHIFT 10
#define FLOW_CHUNK (1u << FLOW_CHUNK_SHIFT)

/* The flows with one (source, destination) address pair. */
struct pair_bucket {
    uint64_t w[4];      /* source and destination address */
    uint64_t kinds;
    uint32_t head;      /* first flow, index + 1, linked by pair_next */
    uint32_t n;         /* flows in the list */
    uint32_t gen;
    uint64_t credit;    /* pairing searches' budget (pairing.c) */
    bool used;
};

/* Open-addressing hash of flows. Flows live in fixed chunks, so a
 * struct rdma_replay_flow * stays valid while new flows are added. */
struct flow_table {
    struct rdma_replay_flow **chunks;
    uint32_t nchunks, n;
    uint64_t *slots;        /* hash high bits << 32 | index + 1; 0: empty */
    uint32_t nslots;
    /* flows grouped by (source, destination) address pair, for pairing by ACK */
    struct pair_bucket *pairs;
    uint32_t npairs, pairs_used;
    uint32_t max_flows;     /* from the memory limit: no flow is added past it */
    bool full;              /* a flow was refused for it */
    /* Conversations are numbered 1, 2, ... in the order they first appear:
     * a conversation's number counts the flows up to its first that lead
     * one (unpaired, or paired with itself or a later flow). A Fenwick tree over the
     * flows' indices holds those marks, so a number is found in log n as
     * pairings change. */
    uint32_t *lead;
    uint32_t lead_cap;
};

static inline struct rdma_replay_flow *flow_at(const struct flow_table *t, uint32_t i)
{
    return &t->chunks[i >> FLOW_CHUNK_SHIFT][i & (FLOW_CHUNK - 1)];
}

void replay__flow_table_free(struct flow_table *t);
/* Find or create; NULL only when memory ran out. *created tells which. */
struct rdma_replay_flow *replay__flow_get(struct flow_table *t, const struct rdma_replay_key *k, bool *created);
struct rdma_replay_flow *replay__flow_find(const struct flow_table *t, const struct rdma_replay_key *k);
/* The address-pair generation: bumped when an unpaired flow of the pair gets
 * a new outstanding message, so failed pairing searches are not repeated
 * until something changed. */
uint32_t *replay__flow_pair_gen(struct flow_table *t, const struct rdma_replay_key *k);
/* The bucket of the flows whose source and destination are k's, NULL if
 * there are none. */
struct pair_bucket *replay__flow_pair(struct flow_table *t, const struct rdma_replay_key *k);
/* The number of the conversation f belongs to (rdma_replay_conv_id). */
uint32_t replay__flow_conv(const struct flow_table *t, const struct rdma_replay_flow *f);
void replay__flows_join(struct flow_table *t, struct rdma_replay_flow *a, struct rdma_replay_flow *b,
                        enum rdma_replay_pairing how);

/* ---- endpoints ----------------------------------------------------------------- */
/* Fill the key of the flow a decoded packet belongs to. False if the packet
 * has no addresses the analysis can use. */
bool replay__flow_key_from_pkt(const struct rdma_pkt *pkt, struct rdma_replay_key *k);
/* The key of the direction of a TCP connection a segment travels. */
void replay__flow_key_from_tcp(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp, struct rdma_replay_key *k);
void replay__flow_key_from_ends(const struct rdma_tcp_ends *e, struct rdma_replay_key *k);
bool replay__flow_key_is_tcp(const struct rdma_replay_key *k);
void replay__flow_key_reverse(const struct rdma_replay_key *k, uint32_t qpn, struct rdma_replay_key *out);
uint64_t replay__flow_key_hash(const struct rdma_replay_key *k);

/* ---- CM connections (cm.c) and PFC senders (pfc.c) ---------------------------- */
struct conns {
    struct rdma_replay_conn *v;
    uint32_t n, cap;
};

struct pfc_table {
    struct rdma_replay_pfc *v;
    uint32_t n, cap;
};

/* ---- the whole analysis ------------------------------------------------------- */
struct rdma_replay {
    struct rdma_replay_config cfg;
    struct rdma_replay_callbacks cb;
    struct flow_table flows;
    struct anomalies anomalies;
    struct conns conns;
    struct pfc_table pfc;
    struct rdma_replay_totals tot;
    bool oom;               /* memory ran out or a callback stopped the analysis */
    bool timeline;          /* intervals are reported */
    /* the frame being analysed */
    uint64_t frame, t;
    bool have_t0;
    uint64_t t0;
    /* iWARP: the stream decoder (created at the first TCP segment) and the
     * times of recent frames, for PDUs that began in an earlier frame */
    struct rdma_iwarp_stream *iwarp;
    uint64_t *iw_times;
    /* timeline */
    uint64_t tl_interval;   /* index of the open interval */
    uint32_t *tl_active;    /* flows active in it */
    uint32_t tl_n, tl_cap;
};

/* ingest.c (which also holds rdma_replay_frame()): one more frame of flow
 * f, its packets, bytes, first and last seen, and the timeline's interval. */
void replay__flow_count_frame(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt);
/* iwarp.c */
/* A TCP segment: the flow of its direction when it belongs to an MPA
 * connection, else NULL (plain TCP, or memory ran out: r->oom). */
struct rdma_replay_flow *replay__iwarp_frame(struct rdma_replay *r, struct rdma_pkt *pkt, const uint8_t *data);
/* End of capture: what the stream still holds, messages cut short, and
 * requests never answered. */
void replay__iwarp_finish(struct rdma_replay *r);
void replay__iw_flow_free(struct rdma_replay_flow *f);
/* requests.c / responses.c */
void replay__chan_request(struct rdma_replay *r, struct rdma_replay_flow *f, const struct rdma_pkt *pkt);
void replay__chan_response(struct rdma_replay *r, struct rdma_replay_flow *rf, const struct rdma_pkt *pkt);
/* messages.c */
struct rdma_replay_msg *replay__chan_push(struct rdma_replay *r, struct rdma_replay_flow *f);
struct rdma_replay_msg *replay__chan_insert(struct rdma_replay *r, struct rdma_replay_flow *f, uint32_t psn);
struct rdma_replay_msg *replay__chan_msg(struct rdma_replay_chan *c, uint32_t i);
struct rdma_replay_msg *replay__chan_find(struct rdma_replay_chan *c, uint32_t psn);
void replay__chan_learn_mtu(struct rdma_replay_chan *c, const struct rdma_pkt *pkt);
void replay__chan_pop_done(struct rdma_replay *r, struct rdma_replay_flow *f);
void replay__msg_finish(struct rdma_replay *r, struct rdma_replay_flow *f, struct rdma_replay_msg *m,
                        enum rdma_replay_msg_status st);
void replay__chan_close_gbn(struct rdma_replay *r, struct rdma_replay_flow *f);
void replay__finish_flows(struct rdma_replay *r);
void replay__chan_free(struct rdma_replay_chan *c);
/* pairing.c */
struct rdma_replay_flow *replay__flow_responder_of(struct rdma_replay *r, struct rdma_replay_flow *rf,
                                                   const struct rdma_pkt *pkt);
/* cm.c */
void replay__cm_message(struct rdma_replay *r, const struct rdma_pkt *pkt, const struct rdma_replay_key *mad_key);
void replay__conns_free(struct conns *c);
/* pfc.c */
void replay__pfc_frame(struct rdma_replay *r, const struct rdma_pkt *pkt);
void replay__pfc_finish(struct rdma_replay *r);
void replay__pfc_free(struct pfc_table *t);
uint64_t replay__pfc_quanta_ns(const struct rdma_replay *r, uint64_t quanta);
/* Paused time of a priority inside [lo, hi) for the open timeline interval. */
uint64_t replay__pfc_interval_paused(const struct rdma_replay_pfc *e, uint64_t lo, uint64_t hi);
/* timeline.c */
void replay__timeline_touch(struct rdma_replay *r, struct rdma_replay_flow *f);
void replay__timeline_advance(struct rdma_replay *r);
void replay__timeline_flush(struct rdma_replay *r);

#endif
