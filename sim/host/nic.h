/* nic.h - hosts, their memory, the NIC and its reliable connected queue
 * pairs (IBA vol. 1 rel. 1.4, chapter 9.7 "Reliable Service").
 *
 * The NIC has two seams where models plug in:
 *   - a transport (struct sim_transport_ops) turns the queue pair's
 *     transport packet (BTH and what follows) into a frame and back:
 *     RoCEv2 (roce.c) or native InfiniBand (ib.c);
 *   - a DMA path (struct sim_dma_ops) says when the NIC's work on memory is
 *     done: at once (sim__dma_instant), or as TLPs on the host's PCIe tree
 *     (sim__dma_pcie, dma_pcie.c over pcie/).
 *
 * Queue pairs follow Linux rxe's split into requester (req.c), responder
 * (resp.c) and completer (comp.c), each an explicit state machine.
 *
 *            post send                    frames
 *   host ---> [SQ] --req.c--> NIC --> transport --> port ...
 *   host <--- completion <--comp.c-- responses <-- transport <-- port
 *             [RQ] <--resp.c-- requests; responses queued in out[]
 */
#ifndef SIM_NIC_H
#define SIM_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "host/cc/cc.h"
#include "host/rxbuf.h"
#include "net/pfc.h"
#include "rdma_codec.h"

struct sim_host;
struct sim_nic;
struct sim_qp;
struct sim_iw;

/* ---- memory ---------------------------------------------------------------- */
struct sim_mr {
    uint64_t va;
    uint64_t len;
    uint8_t *bytes; /* NULL with payload: none */
    uint32_t rkey;
    bool valid;     /* false once invalidated (SEND with Invalidate) */
    uint16_t place; /* where it lives in the PCIe tree (PCIE_PLACE_*) */
    uint32_t msg;   /* the message whose buffer it is */
};

/* rkey = (index + 1) << 8 | key byte: a stale or forged key fails. */
struct sim_mr *sim__mr_lookup(struct sim_host *h, uint32_t rkey, uint64_t va, uint64_t len);

/* ---- the DMA path ------------------------------------------------------------
 * Bytes move between memory and the NIC when the NIC builds or parses a
 * frame (sim__nic_payload, sim__nic_place): nothing else writes a region
 * while a message uses it, so they are the bytes a transfer would carry. A
 * DMA path decides when each step is done. Where a queue pair has to wait,
 * the path wakes it (sim__nic_wake_at) once the step is done. */
enum sim_dma_stream {
    SIM_DMA_REQ, /* request payload, over the send queue's work requests */
    SIM_DMA_RESP /* READ response payload, over the responses queued */
};

struct sim_wqe;

struct sim_dma_ops {
    const char *name;
    /* The host posted w on qp's send queue: the doorbell, and the WQE
     * fetch. Returns when the NIC has the WQE, or SIM_TIME_NEVER when that
     * is not known yet: the path then sets ready_at of the send queue's
     * WQEs as it fetches them. */
    sim_time_t (*post_send)(struct sim_nic *nic, struct sim_qp *qp, const struct sim_wqe *w);
    /* The host posted a receive on qp. */
    void (*post_recv)(struct sim_nic *nic, struct sim_qp *qp);
    /* The next packet of stream s carries [off, off + len) of item `item`
     * (a send queue index, or an index of qp->out): true when those bytes
     * are in the NIC and the packet goes out now. Otherwise they are being
     * read, and qp is woken when they are in. */
    bool (*fetch)(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s, uint32_t item,
                  uint64_t off, uint32_t len);
    /* Stream s goes back or drops items (go-back-N, responses dropped after
     * a duplicate): what was read ahead is read again as it is needed. */
    void (*restart)(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s);
    /* New items on stream s: a path may start reading them. */
    void (*ahead)(struct sim_nic *nic, struct sim_qp *qp, enum sim_dma_stream s);
    /* Received payload for [off, off + len) of region mr (last: the
     * message's data is then complete): returns when the NIC is done with
     * it. */
    sim_time_t (*write)(struct sim_nic *nic, uint32_t mr, uint64_t off, uint32_t len, bool last);
    /* An atomic on 8 bytes of region mr at off: returns when the original
     * value is in the NIC. */
    sim_time_t (*atomic)(struct sim_nic *nic, uint32_t mr, uint64_t off);
    /* A receive of qp completed (SEND, WRITE with immediate). */
    void (*recv_done)(struct sim_nic *nic, struct sim_qp *qp);
    /* Work request `msg` of qp completed with status st: the completion
     * entry. The message is done (sim__msg_done) when the host can see it. */
    void (*complete)(struct sim_nic *nic, struct sim_qp *qp, uint32_t msg, enum sim_msg_status st);
    /* A wake asked for with sim__nic_wake_at is due (optional). */
    void (*event)(struct sim_nic *nic, struct sim_qp *qp);
};
extern const struct sim_dma_ops sim__dma_instant;
extern const struct sim_dma_ops sim__dma_pcie;
/* With PCIe modelled, how long nic's completion entry takes alone from
 * the NIC into memory (the ideal completion time, observe/ideal.c). */
sim_time_t sim__dma_pcie_completion_alone(const struct sim_nic *nic);
/* Build every host's tree and switch its NIC to the PCIe DMA path, when
 * the configuration models PCIe; net->pcie stays NULL otherwise. */
void sim__pcie_create(struct sim_network *net);
void sim__pcie_destroy(struct sim_network *net);
/* A server's NVSwitch (nvswitch.c): one per cfg->nvswitches, built when
 * a message goes over NVLink (cfg_msg.nvlink). */
struct sim_nvswitch;
void sim__nvswitches_create(struct sim_network *net);
/* The NVSwitch of host node `node`'s server; NULL: none. */
struct sim_nvswitch *sim__nvswitch_of(const struct sim_network *net, uint32_t node);
/* Message msg leaves its source GPU over the NVSwitch now. */
void sim__nvswitch_send(struct sim_nvswitch *sw, uint32_t msg);
/* The host's COPY event: NVLink copy ptr (in net->pcie->copies) starts. */
void sim__pcie_copy_event(struct sim_host *h, void *ptr);
/* The host's NVLINK event: transfers through by now end. */
void sim__pcie_nvlink_event(struct sim_host *h);

/* ---- the transport ---------------------------------------------------------- */
struct sim_transport_ops {
    const char *name;
    /* Bytes a frame adds around the BTH and what follows (headers, ICRC). */
    uint32_t (*overhead)(const struct sim_nic *nic);
    /* Wrap the transport packet in pkt (opcode, BTH, extended headers and
     * payload set) for the queue pair's peer. Packets stay within the path
     * MTU, so this succeeds. */
    struct sim_frame *(*frame)(struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt);
    /* Parse a received frame; false if it is to be dropped (bad ICRC,
     * malformed, not for this NIC). */
    bool (*parse)(struct sim_nic *nic, const struct sim_frame *f, struct rdma_pkt *pkt);
    /* Whether a parsed packet arrived marked as congestion experienced
     * (RoCEv2: ECN CE in the IP header), for the notification point. */
    bool (*congested)(const struct rdma_pkt *pkt);
    /* A congestion notification (DCQCN) for the queue pair's peer. */
    struct sim_frame *(*cnp)(struct sim_nic *nic, const struct sim_qp *qp);
};
/* What the wire formats share: a frame of at least cap bytes from the pool
 * holding pkt as rdma_encode writes it, its BTH at bth_off (NULL when the
 * packet does not encode); and a CNP's transport packet (annex A17.9.3,
 * and IB CC's in annex A10: BECN, 16 reserved bytes) for qp's peer. */
struct sim_frame *sim__nic_encode(struct sim_nic *nic, const struct rdma_pkt *pkt, uint32_t cap,
                                  uint16_t bth_off);
/* rdma_decode of a received frame, one that leaves out its fill (net/net.h)
 * included: its payload is then the fill pattern, and its ICRC checked
 * all the same. */
enum rdma_status sim__nic_decode(struct sim_nic *nic, unsigned linktype, const struct sim_frame *f,
                                 struct rdma_pkt *pkt);
void sim__nic_cnp_packet(const struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt);
extern const struct sim_transport_ops sim__transport_rocev2;
extern const struct sim_transport_ops sim__transport_ib; /* ib.c */

/* ---- queue pairs --------------------------------------------------------------- */
struct sim_wqe {
    uint32_t msg;
    uint8_t op; /* enum sim_op */
    bool started; /* first_psn assigned */
    uint32_t len;
    uint32_t lmr;   /* local memory region index */
    uint64_t rva;
    uint32_t rkey;
    uint32_t imm, inv_rkey;
    uint64_t compare, swap_add;
    uint32_t first_psn, npkts;
    sim_time_t ready_at; /* when the NIC has it (doorbell and WQE fetch), SIM_TIME_NEVER: unknown */
    bool copying;        /* tcp: the kernel copies it from user memory ... */
    sim_time_t copy_at;  /* ... from then on, at nic.host_cost.copy_rate */
};

enum sim_resp_kind { RESP_ACK, RESP_READ, RESP_ATOMIC };

/* Something the responder has to send, in PSN order. */
struct sim_resp_item {
    uint8_t kind;     /* enum sim_resp_kind */
    uint8_t syndrome; /* AETH */
    uint32_t psn, msn;
    uint32_t mr;      /* READ: region index, offset, length, bytes sent */
    uint64_t off;
    uint32_t len, sent;
    uint64_t orig; /* atomic: the value before the operation */
    sim_time_t ready_at; /* ACK: the data it acknowledges is written; atomic: executed */
};

struct sim_recv {
    uint32_t mr;
    uint32_t msg;
};

struct sim_atomic_result {
    uint32_t psn;
    uint64_t orig;
};

/* Where the responder is inside a multi-packet message. */
enum sim_resp_msg { RMSG_NONE, RMSG_WRITE, RMSG_SEND };

struct sim_qp_stats {
    uint64_t tx_packets, retransmitted, rx_packets;
    uint64_t acks, naks_seq, rnr_naks, naks_other; /* sent by the responder */
    uint64_t timeouts, rewinds;
    uint64_t ooo_held; /* responder: requests that arrived beyond a gap and were held */
    uint64_t rto_dups; /* responder: the peer's timeouts after which everything it had sent had arrived */
    uint64_t completed, bytes;
    uint64_t tx_bytes; /* frame bytes sent */
};

struct sim_qp {
    struct sim_nic *nic;
    uint32_t conn;
    uint32_t qpn, dest_qpn;
    uint32_t peer;  /* peer host index */
    uint32_t mtu;
    uint16_t sport; /* UDP source port: per-QP entropy for ECMP */
    const struct cfg_nic *p;
    bool in_ring;
    struct sim_qp *ring_next;
    bool error;
    bool data; /* payload: data */

    /* requester and completer: sq[head..next) sent, [next..tail) not yet */
    struct sim_wqe *sq;
    uint32_t sq_cap, sq_head, sq_next, sq_tail; /* free-running; index & (cap - 1) */
    uint32_t req_offset; /* bytes of sq[next] already sent in this pass */
    uint32_t next_psn;   /* PSN of the next packet to send */
    uint32_t una_psn;    /* oldest PSN not yet acknowledged */
    uint32_t max_psn;    /* one past the highest PSN ever sent */
    sim_time_t hpcc_t;   /* HPCC's base RTT T, set when the network is built */
    uint32_t rd_outstanding;
    uint32_t since_ackreq;
    uint8_t retry_left, rnr_left;
    bool retrying; /* a go-back-N from una_psn is under way */
    uint8_t rto_resend; /* timeouts since the last request frame: flag the next (SIM_FRAME_RTO) */
    bool ce_echo;    /* DCTCP responder: a request arrived CE-marked since the last ACK */
    sim_time_t rnr_until;
    sim_time_t wake_at;  /* the DMA wake pending, SIM_TIME_NEVER if none */
    sim_time_t deadline; /* retransmission timeout, SIM_TIME_NEVER when idle */
    struct sim_timer timer; /* the pending QP_TIMEOUT, at the deadline or before it */

    /* responder */
    uint32_t epsn, msn;
    bool nak_sent;
    uint8_t rmsg; /* enum sim_resp_msg */
    uint32_t rmsg_mr;
    uint64_t rmsg_off;
    uint64_t rmsg_left; /* WRITE: bytes the RETH announced and not yet placed */
    uint32_t unacked;
    struct sim_frame *ooo;  /* with nic.ooo: requests beyond epsn, by PSN (frame aux) */
    uint32_t nooo, ooo_epsn; /* how many; the epsn whose gap the reorder timer watches */
    sim_time_t ooo_deadline;  /* when the gap at ooo_epsn earns a NAK */
    struct sim_timer reorder; /* QP_REORDER, at ooo_deadline or before it */
    sim_time_t written_at; /* when the NIC is done writing the data received so far */
    struct sim_recv *rq;
    uint32_t rq_cap, rq_head, rq_tail;
    struct sim_resp_item *out;
    uint32_t out_cap, out_head, out_tail;
    struct sim_atomic_result *atomics; /* the last max_rd_atomic results */
    uint32_t natomics;

    /* congestion control */
    struct sim_dcqcn *cc; /* NULL when DCQCN is off */
    sim_time_t next_tx;   /* paced: no rate-limited frame before this */
    bool in_heap;         /* waiting in the NIC's pacing heap */

    struct sim_qp_stats st;
    struct sim_iw *iw; /* over iWARP (host/iwarp/): its connection; NULL over RoCE */
};

static inline int32_t sim__psn_diff(uint32_t a, uint32_t b) { return rdma_psn_diff(a, b); }
static inline uint32_t sim__psn_add(uint32_t a, uint32_t n) { return rdma_psn_add(a, n); }

static inline struct sim_wqe *sim__wqe(struct sim_qp *qp, uint32_t i)
{
    return &qp->sq[i & (qp->sq_cap - 1)];
}
static inline uint32_t sim__wqe_last_psn(const struct sim_wqe *w)
{
    return sim__psn_add(w->first_psn, w->npkts - 1);
}
static inline bool sim__wqe_is_rd_atomic(const struct sim_wqe *w)
{
    return w->op == SIM_OP_READ || sim__op_is_atomic(w->op);
}

/* requester (req.c): build the next request packet into pkt, if any. */
bool sim__req_next(struct sim_qp *qp, struct rdma_pkt *pkt);
/* Restart sending at psn (go-back-N). */
void sim__req_rewind(struct sim_qp *qp, uint32_t psn);
/* responder (resp.c) */
void sim__resp_receive(struct sim_qp *qp, const struct rdma_pkt *pkt);
/* The gap at epsn is real: NAK it (PSN sequence error), once per gap. */
void sim__resp_nak_gap(struct sim_qp *qp);
/* QP_REORDER: with nic.ooo, a gap has stayed open for the reorder window. */
void sim__nic_reorder_event(struct sim_nic *nic, struct sim_qp *qp);
bool sim__resp_next(struct sim_qp *qp, struct rdma_pkt *pkt);
/* completer (comp.c) */
void sim__comp_receive(struct sim_qp *qp, const struct rdma_pkt *pkt);
void sim__comp_timer(struct sim_qp *qp);
void sim__comp_arm(struct sim_qp *qp);
void sim__qp_fini(struct sim_qp *qp);

/* ---- opcodes ------------------------------------------------------------------------
 * Which BTH opcode each operation uses at each position of a message,
 * looked up once in the codec's opcode table (no second list here). */
enum sim_pos { SIM_POS_ONLY, SIM_POS_FIRST, SIM_POS_MIDDLE, SIM_POS_LAST };

struct sim_opcodes {
    uint8_t req[SIM_OP_COUNT][4];
    uint8_t read_resp[4];
    uint8_t ack, atomic_ack;
    uint8_t cnp;
};
void sim__opcodes_init(struct sim_opcodes *o);
static inline enum sim_pos sim__pos_of(bool first, bool last)
{
    return first ? (last ? SIM_POS_ONLY : SIM_POS_FIRST) : (last ? SIM_POS_LAST : SIM_POS_MIDDLE);
}

/* ---- NIC and host ----------------------------------------------------------------- */
struct sim_pcie_host;

struct sim_nic {
    struct sim_host *host;
    struct sim_port *port;
    const struct sim_transport_ops *transport;
    const struct sim_dma_ops *dma;
    struct sim_pcie_host *pcie; /* with sim__dma_pcie */
    struct rdma_decode_config dcfg;
    struct sim_qp **qps; /* by qpn - SIM_QPN_BASE */
    uint32_t nqps;
    struct sim_qp *ring_head, *ring_tail; /* queue pairs with something to send */
    uint8_t mac[6];
    uint8_t ip6[16];
    uint32_t ip4;
    struct sim_opcodes opc;
    /* the fabric: priorities, CNPs waiting, paced queue pairs, receive buffer */
    uint8_t prio, cnp_prio;
    struct sim_frame *cnp_head, *cnp_tail;
    struct sim_qp **paced; /* min-heap by next_tx */
    uint32_t npaced, cappaced;
    struct sim_timer wake; /* NIC_WAKE: the first paced queue pair may send */
    struct sim_rxbuf rx;
};

#define SIM_QPN_BASE 0x100

/* Something may have become sendable on qp: put it in the round-robin
 * ring and start the port if it is idle. */
void sim__nic_wake(struct sim_nic *nic, struct sim_qp *qp);
/* The host node's side of its port: frames in, and room to send. */
void sim__nic_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f);
void sim__nic_tx_ready(struct sim_node *n, struct sim_port *port);
/* What those will read (sim_node_ops' prefetch): the queue pair a frame
 * is for, or the one that sends next. */
void sim__nic_prefetch(const struct sim_node *n, const struct sim_port *port, const struct sim_frame *f,
                       unsigned step);
/* Set up PFC, pacing, DCQCN and the receive buffer once the network exists. */
void sim__nic_init_fabric(struct sim_nic *nic);
/* Handle a frame the NIC has taken in. */
void sim__nic_take(struct sim_nic *nic, struct sim_frame *f);
/* Send a CNP ahead of the queue pairs' frames. */
void sim__nic_push_cnp(struct sim_nic *nic, struct sim_frame *f);
/* NIC_WAKE: a paced queue pair may be allowed to send. */
void sim__nic_wake_event(struct sim_nic *nic);
/* Wake qp at time t (a DMA step it waits for is done then). */
void sim__nic_wake_at(struct sim_nic *nic, struct sim_qp *qp, sim_time_t t);
/* The wake is due: the host's SIM_EV_DMA. */
void sim__nic_dma_event(struct sim_nic *nic, struct sim_qp *qp);
/* Payload of a region for the encoder: the region's bytes, or the fill
 * pattern (sim_network.fill) with payload: none. */
const uint8_t *sim__nic_payload(struct sim_nic *nic, uint32_t mr, uint64_t off);
/* Place received payload into a region; returns when the DMA path is done
 * with it (last: the message's data is then complete). */
sim_time_t sim__nic_place(struct sim_nic *nic, uint32_t mr, uint64_t off, const uint8_t *src,
                          uint32_t len, bool last);

/* The events a host handles. */
#define SIM_HOST_EVENTS(X)                                                     \
    X(POST_SEND, "post-send")   /* it posts a send work request */          \
    X(POST_RECV, "post-recv")   /* it posts a receive work request */       \
    X(POST_AFTER, "post-after") /* it posts a send that waited for an arrival */ \
    X(QP_TIMEOUT, "qp-timeout") /* a queue pair's retransmission timer */   \
    X(QP_RNR, "qp-rnr")         /* a queue pair's RNR delay is over */      \
    X(NIC_WAKE, "nic-wake")     /* a paced queue pair may send again */     \
    X(NIC_RX, "nic-rx")         /* the NIC took a frame from its buffer */  \
    X(DCQCN, "dcqcn")           /* a DCQCN rate or alpha timer */           \
    X(DMA, "dma")               /* a DMA step a queue pair waits for is done */ \
    X(QP_REORDER, "qp-reorder") /* a gap in requests stayed open (nic.ooo) */ \
    X(TCP_RTO, "tcp-rto")       /* a TCP endpoint's retransmission timer (iWARP) */ \
    X(TCP_DELACK, "tcp-delack") /* a TCP endpoint's delayed ACK is due (iWARP) */ \
    X(KERNEL_RX, "kernel-rx")   /* the kernel has processed a TCP segment (tcp) */ \
    X(COPY, "copy")             /* a GPU's DMA engine starts an NVLink copy */ \
    X(NVLINK, "nvlink")         /* the next NVLink transfer in flight ends */

enum sim_host_event {
#define SIM__HOST_EV(name, str) SIM_HOST_##name,
    SIM_HOST_EVENTS(SIM__HOST_EV)
#undef SIM__HOST_EV
};

struct sim_host {
    struct sim_node node; /* handles enum sim_host_event */
    uint32_t host;        /* host index */
    struct sim_nic nic;
    struct sim_mr *mrs;
    size_t nmrs, capmrs;
    uint64_t next_va;
    /* work posted during the run, in time order, one pending event each */
    uint32_t *sends;
    size_t nsends, next_send;
    struct { sim_time_t at; uint32_t msg; } *recvs;
    size_t nrecvs, next_recv;
    /* tcp: when the application's core has done the system calls and
     * copies it was given; the receiving core: when it is free, and the
     * frames waiting for it, oldest first */
    sim_time_t cpu_free, kernel_free;
    struct sim_frame *kq_head, *kq_tail;
    bool kernel_busy;
};

struct sim_host *sim__host_create(struct sim_network *net, uint32_t index, uint32_t host);
uint32_t sim__host_add_mr(struct sim_host *h, uint64_t len, bool bytes);
/* A queue pair towards host `peer`; the caller sets its MTU and PSNs. */
struct sim_qp *sim__host_add_qp(struct sim_host *h, uint32_t conn, uint32_t peer);
static inline struct sim_host *sim__host_of(struct sim_qp *qp) { return qp->nic->host; }
static inline struct sim_network *sim__net_of(struct sim_qp *qp) { return qp->nic->host->node.net; }
static inline sim_time_t sim__qp_now(struct sim_qp *qp) { return sim_now(qp->nic->host->node.comp.sim); }

/* The requester finished a work request (either way). */
void sim__qp_completed(struct sim_qp *qp, struct sim_wqe *w, enum sim_msg_status st);
/* Its completion entry reached the host at t: the message is done. */
void sim__msg_done(struct sim_network *net, uint32_t msg, enum sim_msg_status st, sim_time_t t);

#endif
