/* net.h - the network model's shared types: frames, ports and links, nodes,
 * switches, routes, messages, and the network that owns them all.
 *
 * Nodes meet only through links: a node hands a frame to its port, the
 * port serializes it at the link rate, and the peer port receives it a
 * propagation delay later. No node reads another node's state; messages
 * and counters are written by the one node that owns each field and read
 * only after the run.
 *
 *   node A                         link                          node B
 *   [port] --serialize--> TX_DONE --delay--> ARRIVAL --> [port] -> receive()
 */
#ifndef SIM_NET_H
#define SIM_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/cfg.h"
#include "config/wire.h"
#include "engine/arena.h"
#include "engine/timer.h"
#include "engine/engine.h"
#include "rdma_codec.h"

/* The most payload a packet carries: the largest path MTU. */
#define SIM_MAX_PAYLOAD 4096

/* ---- frames ----------------------------------------------------------- */
#define SIM_FRAME_CLASSES 8

/* The fields from `in` on and the first 48 bytes of data share a cache
 * line (frame.c places frames so): all a switch reads of a frame, its
 * length and its Ethernet, IP and UDP headers (with a VLAN tag). */
struct sim_frame {
    struct sim_frame *next;
    uint32_t aux;     /* with SIM_FRAME_RTO: one past the highest PSN sent before the timeout;
                       * while a responder holds the frame out of order: its PSN */
    uint16_t bth_off; /* start of the BTH, where bit errors are placed */
    uint8_t cls;      /* size class, for the pool */
    uint8_t flags;    /* SIM_FRAME_*: bookkeeping that travels with the frame, never read by models */
    /* a switch's bookkeeping while the frame waits out its latency: ports,
     * priority and where the IP header starts */
    uint16_t in, out;
    uint8_t prio, l3;
    /* With payload: none, a frame holds its headers and its tail (pad and
     * CRCs) in data, and only says where its payload, the first fill_len
     * bytes of the fill pattern (sim_network.fill), lies between them:
     * bytes [fill_at, fill_at + fill_len) of the frame. fill_len 0: data
     * holds every byte. */
    uint16_t fill_at, fill_len;
    uint32_t len;
    uint8_t data[];
};
#define SIM_FRAME_LINE_AT offsetof(struct sim_frame, in) /* where the line a switch reads starts */
_Static_assert(offsetof(struct sim_frame, data) - SIM_FRAME_LINE_AT + 14 + 4 + 20 + 8 <= 64,
               "a switch reads one line of a frame");

/* A payload worth leaving out of the frame: shorter ones are stored, as
 * the bookkeeping would cost about what it saves. */
#define SIM_FILL_MIN 64
/* The most bytes a frame has on the wire (sim_frame_pool's largest class). */
#define SIM_FRAME_MAX 9216

/* The first request a queue pair resends after its retransmission timer
 * fired, carrying the PSN the requester had sent up to: the responder
 * counts the timeout as one without loss when it had received every packet
 * sent before it. Outputs read this; the models never act on it. */
#define SIM_FRAME_RTO 0x01
/* flags >> SIM_FRAME_RTO_SHIFT: how many timeouts fired before it left */
#define SIM_FRAME_RTO_SHIFT 1

struct sim_frame_pool {
    struct sim_frame *free[SIM_FRAME_CLASSES];
    void **chunks;
    size_t nchunks;
    char *chunk_at; /* the unused rest of the last chunk */
    size_t chunk_left;
    /* frames allocated and not freed, and their bytes (headers included):
     * now, and when there were the most at once */
    uint64_t live, live_bytes, peak, peak_bytes;
};

struct sim_frame *sim__frame_alloc(struct sim_frame_pool *pool, uint32_t cap);
void sim__frame_free(struct sim_frame_pool *pool, struct sim_frame *f);
uint32_t sim__frame_cap(const struct sim_frame *f);
void sim__pool_fini(struct sim_frame_pool *pool);
/* Bytes the pool has taken from the system for its frames. */
uint64_t sim__pool_bytes(const struct sim_frame_pool *pool);
/* A frame of the len bytes at `bytes`, whose bytes [fill_at, fill_at +
 * fill_len) are the fill pattern's first fill_len: it holds the others
 * only. NULL when even those do not fit a frame. */
struct sim_frame *sim__frame_without_fill(struct sim_frame_pool *pool, const uint8_t *bytes, uint32_t len,
                                          uint32_t fill_at, uint32_t fill_len);
/* The bytes the frame holds: all of them, or those before the fill. */
static inline uint32_t sim__frame_head(const struct sim_frame *f)
{
    return f->fill_len ? f->fill_at : f->len;
}
/* The frame's byte at offset off, where it is held (off outside the fill). */
static inline uint8_t *sim__frame_byte(struct sim_frame *f, uint32_t off)
{
    return &f->data[off >= (uint32_t)f->fill_at + f->fill_len ? off - f->fill_len : off];
}
/* The first n bytes of the frame in one piece: its data, or, when it
 * leaves out its fill, assembled into buf (room for n bytes) from what it
 * holds and the pattern `fill`. */
const uint8_t *sim__frame_bytes(const struct sim_frame *f, const uint8_t *fill, uint8_t *buf, uint32_t n);
/* The frame with every byte held (a bit error is about to change one of
 * its fill's): f itself, or a copy that replaces it (f is freed). */
struct sim_frame *sim__frame_whole(struct sim_frame_pool *pool, struct sim_frame *f, const uint8_t *fill);
/* The CRC-32 of the fill pattern's first len bytes. Lengths share a slot
 * by len mod SIM_FILL_CRC_SLOTS: a run carries full MTU-sized payloads
 * and the last packet of each message size, a handful of lengths. */
#define SIM_FILL_CRC_SLOTS 64
struct sim_network;
const struct rdma_crc32_part *sim__fill_crc(struct sim_network *net, uint32_t len);

/* ---- ports and links ---------------------------------------------------- */
struct sim_port_stats {
    /* the counters every frame updates come first (struct sim_port) */
    uint64_t tx_frames, tx_bytes;
    uint64_t rx_frames, rx_bytes;
    sim_time_t busy;    /* time spent serializing */
    uint64_t drops;     /* tail drops: the queue was full */
    uint64_t lost;      /* lost on the link leaving this port */
    uint64_t corrupted; /* bit errors put in frames leaving this port */
    uint64_t max_queue; /* bytes */
    /* the fabric (fabric.h) */
    uint64_t headroom;       /* PFC headroom of each lossless priority, bytes */
    uint64_t max_headroom;   /* the most of it a priority used */
    uint64_t headroom_drops; /* lossless frames beyond the PFC headroom */
    uint64_t watchdog_drops; /* frames the PFC watchdog dropped */
    uint64_t pauses_sent, resumes_sent, pauses_received, resumes_received;
    sim_time_t paused;       /* time priorities were paused, summed over priorities */
    uint64_t ecn_marked, cnps_sent, cnps_received;
    /* InfiniBand flow control (net/ib.h) */
    uint64_t fc_sent, fc_received; /* flow control packets */
    uint64_t credit_overruns;      /* packets that arrived beyond the credit granted: never, if all is well */
    sim_time_t credit_blocked;     /* time VLs had no credit for the largest packet, summed over VLs */
};

/* ---- the link-layer seam -------------------------------------------------
 * What a port's link layer adds below the frames the nodes exchange: what
 * a frame costs on the wire beyond its bytes, the control frames only the
 * link layer reads, and link-level flow control, which it reports in the
 * port's `blocked` mask (classes whose frames may not start now). Nodes
 * read the mask and pull again when told (sim_node_ops.tx_ready); they never
 * ask the link layer how it decided. Ethernet with PFC (pfc.c) is one link
 * layer; InfiniBand's credits (ib_link.c) are another.
 *
 *   node --frame--> [port: serialize len + wire_extra] --> link --> [port] --receive?--> node
 *                         ^ blocked (per class)                      link layer's own frames */
struct sim_port;
struct sim_link_layer_ops {
    const char *name;
    uint8_t wire_extra; /* bytes a frame costs on the wire beyond its own */
    /* wire bytes a cut-through switch takes in before it forwards a frame */
    uint8_t cut_through_bytes;
    /* A frame arrived at p: true when it is the link layer's own (it then
     * owns it); otherwise it goes to the node. */
    bool (*receive)(struct sim_port *p, struct sim_frame *f);
    /* Whether a frame is the link layer's own (optional: none are). Its
     * own frames end at the port and skip the node's forwarding latency,
     * unless `own_in_order`: then they wait it out too, to reach the port
     * after the frames sent before them, whose arrival the model delays by
     * that latency (InfiniBand: a flow control packet's FCTBS counts the
     * packets before it, and would count them twice if it overtook them). */
    bool (*own)(const struct sim_frame *f);
    bool own_in_order;
    /* The port's LINK_TIMER event with the ptr the link layer gave it. */
    void (*timer)(struct sim_port *p, void *which);
    /* A frame (not the link layer's own) starts leaving p (optional):
     * flow control counts what it sends. */
    void (*sent)(struct sim_port *p, const struct sim_frame *f, uint32_t len);
    /* The link went down: what it carried about flow control is void. */
    void (*link_down)(struct sim_port *p);
    /* The link came up again (optional): flow control starts afresh. */
    void (*link_up)(struct sim_port *p);
    /* The run ended: close the intervals still open in the counters. */
    void (*settle)(struct sim_port *p);
};
extern const struct sim_link_layer_ops sim__link_ethernet;

/* PFC at a port (pfc.c): pauses it obeys (the port's `blocked` mask) and
 * pauses it sends. */
struct sim_port_pfc {
    uint8_t xoff;       /* priorities this port is pausing its peer for */
    bool honour;        /* obey pauses (a NIC may be told not to) */
    uint16_t quanta;    /* pause time it sends */
    sim_time_t quantum; /* 512 bit times at the port's rate */
    sim_time_t refresh; /* XOFF is sent again this often */
    sim_time_t until[SIM_PRIOS], since[SIM_PRIOS]; /* pauses received */
    sim_time_t xoff_since[SIM_PRIOS];              /* pauses sent */
    struct sim_timer expire_timer, refresh_timer;  /* a pause obeyed ends; XOFF again */
};

struct sim_node;

/* An observer of the frames crossing a port (observe/pcap.c writes them
 * into a capture): told as a frame starts leaving and once it has arrived.
 * Observers embed it and chain it on the port before the run. */
struct sim_tap {
    void (*frame)(struct sim_tap *tap, sim_time_t t, const struct sim_frame *f);
    struct sim_tap *next;
};

/* The events a port handles. */
#define SIM_PORT_EVENTS(X)                                                     \
    X(TX_DONE, "tx-done")       /* it finished serializing a frame */         \
    X(ARRIVAL, "arrival")       /* the last bit of a frame reached it */      \
    X(LINK_TIMER, "link-timer") /* a timer of its link layer (ptr: which) */

enum sim_port_event {
#define SIM__PORT_EV(name, str) SIM_PORT_##name,
    SIM_PORT_EVENTS(SIM__PORT_EV)
#undef SIM__PORT_EV
};

struct sim_queued {
    struct sim_frame *f;
    uint32_t len;
};

/* Each frame touches a port's component (the engine calls it) and the
 * fields up to and including the first counters of `st`: they fill the
 * two cache lines after the component, and ports start on a cache line
 * (network.c allocates them aligned), so a hop costs three lines a port. */
/* What every frame reads or writes lies in the first three cache lines
 * (the component, then lines 1 and 2): a large fabric's ports are far
 * past the caches, and each line more is a miss more per hop. */
struct sim_port {
    struct sim_component comp; /* handles enum sim_port_event */
    struct sim_node *node;
    struct sim_port *peer;
    struct sim_frame *sending;
    sim_time_t tx_start;  /* when the frame being sent started */
    const struct sim_link_layer_ops *ll;
    struct sim_tap *tap; /* observers of its frames, usually none */
    uint64_t ps_per_byte; /* when the rate makes it whole (10, 25, 100, 400 Gb/s...), else 0 */
    sim_time_t peer_latency; /* the peer switch's forwarding latency, added as frames arrive */
    sim_time_t delay; /* p.delay, with the NIC pipelines at either end */
    uint32_t ring_head, ring_tail; /* free-running; index & (ring_cap - 1) */
    uint32_t index; /* on its node: a switch finds its state for the port by it */
    bool down : 1;  /* the link is down (fault.c) */
    bool went_down : 1; /* it has been down: down_at says when it last went */
    bool noisy : 1; /* p.loss or p.ber is not zero */
    bool cut_through : 1; /* the peer is a cut-through switch: frames reach it once their header has */
    bool early : 1;       /* the frame being sent was handed to the peer at its header */
    bool quiet : 1; /* its node has nothing queued for it (a switch says so): no tx_ready until it has */
    uint8_t blocked; /* classes whose frames may not start now (the link layer's flow control) */
    uint8_t wire_extra; /* ll->wire_extra, read with every frame (fits the padding here) */
    uint8_t cut_bytes;  /* ll->cut_through_bytes, likewise */
    struct sim_port_stats st;
    sim_time_t down_at;   /* when it last went down (went_down), SIM_TIME_NEVER if never */
    /* Frames the node pushed (MAC control frames), sent before the node is
     * asked for its next one: a ring of frames with their lengths. The
     * nodes keep their own queues and hand frames over one at a time. */
    struct sim_queued *ring;
    uint32_t ring_cap;
    uint32_t link;  /* configuration link index */
    struct cfg_link_params p;
    double corrupt_log; /* log(1 - ber), for P(frame has a bit error) */
    char *name; /* NODE-PORT */
    struct sim_port_pfc pfc;
    struct sim_port_ib *ib; /* InfiniBand flow control (net/ib.h); NULL on Ethernet */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct sim_port, st) + offsetof(struct sim_port_stats, busy) +
                       sizeof(sim_time_t) <= 3 * 64,
               "a port's fields of every frame fit three cache lines");

/* Send a frame now, or after the frames already pushed; a port whose link
 * is down loses it. len is f->len, from the caller: a frame that waited
 * in a queue is out of cache, and need not be read before it arrives. */
void sim__port_send(struct sim_port *port, struct sim_frame *f, uint32_t len);
/* Whether a's link is faster than b's, from the fields every frame reads
 * when both rates are whole picoseconds a byte. */
static inline bool sim__port_faster(const struct sim_port *a, const struct sim_port *b)
{
    if (a->ps_per_byte && b->ps_per_byte)
        return a->ps_per_byte < b->ps_per_byte;
    return a->p.rate > b->p.rate;
}
/* Wire bytes a cut-through Ethernet switch takes in before it forwards a
 * frame: preamble and start delimiter, and the first 64 bytes (Ethernet,
 * IP and UDP headers with room for tags). */
#define SIM_CUT_THROUGH_BYTES (8 + 64)
/* A queue's first ring of frames (a port's, a switch class's), which
 * doubles when full. Most queues hold a frame or two at a time, and a
 * ring is read around its whole length: a first ring of 64 spread each
 * queue over 16 lines (40 MB in all at k=32), where 8 keep it in 2. */
#define SIM_FIRST_RING 8
struct sim_network;
/* A full ring of items of `size` bytes, [head, tail) in use at index &
 * (*cap - 1), grown: the first (none yet, *cap 0) of SIM_FIRST_RING from
 * the network's arena, on huge pages with the other first rings, each
 * later one twice the last from malloc. Returns it with *cap updated. */
void *sim__ring_grow(struct sim_network *net, void *ring, uint32_t *cap, uint32_t head, uint32_t tail,
                     size_t size);
/* A ring at teardown: a first one goes with the arena. */
void sim__ring_free(void *ring, uint32_t cap);
/* Lose the frames pushed and not yet sent (the link went down). */
void sim__port_flush(struct sim_port *port);
static inline bool sim__port_idle(const struct sim_port *p)
{
    return !p->sending && p->ring_head == p->ring_tail;
}
/* Give the port its link layer (before the run). */
void sim__port_set_link_layer(struct sim_port *p, const struct sim_link_layer_ops *ll);
/* The link layer unblocked classes of p: the node may pull again. */
void sim__port_unblocked(struct sim_port *p);
/* The link went down or up, or the run ended: see sim_link_layer_ops. */
static inline void sim__port_link_down(struct sim_port *p) { p->ll->link_down(p); }
static inline void sim__port_link_up(struct sim_port *p)
{
    if (p->ll->link_up)
        p->ll->link_up(p);
}
static inline void sim__port_settle(struct sim_port *p) { p->ll->settle(p); }
extern const struct sim_component_ops sim__port_ops;

/* ---- nodes ----------------------------------------------------------------- */
struct sim_network;

struct sim_node_ops {
    /* A frame arrived on `in`; the node now owns it. */
    void (*receive)(struct sim_node *n, struct sim_port *in, struct sim_frame *f);
    /* `port` finished a frame and its queue is empty, or a pause on it
     * ended: a chance to pull (optional). */
    void (*tx_ready)(struct sim_node *n, struct sim_port *port);
    /* The peer of `port` paused priority `prio` (optional; the PFC watchdog). */
    void (*paused)(struct sim_node *n, struct sim_port *port, unsigned prio);
    /* The link of `port` went down (optional): what waits for it is lost. */
    void (*link_down)(struct sim_node *n, struct sim_port *port);
    /* `port` is about to send XOFF again for the priorities it pauses
     * (optional): a chance to resume those that may. */
    void (*pfc_refresh)(struct sim_node *n, struct sim_port *port);
    /* f will arrive on `port` shortly, or (f NULL) the port will end a
     * frame and may call tx_ready (optional): start fetching what the
     * node will read for it beyond the frame's first two lines and the
     * node's first three, in two steps (engine.h's: step 1 may read what
     * step 0 fetched). Only a hint: it must change nothing. */
    void (*prefetch)(const struct sim_node *n, const struct sim_port *port, const struct sim_frame *f,
                     unsigned step);
};

/* The engine's domains (engine.h): each node's is one past its index,
 * shared by its ports; but the hosts of a server whose GPUs an NVSwitch
 * joins are one machine that meets there and not only through links, so
 * they and their switch share one, after the nodes' (host/nvswitch.c).
 * The components that reach into every node take the ends: link faults
 * the first domain (a link that fails at t has failed for every frame of
 * t), the monitor the last (a sample at t sees what every node did at t);
 * so in networks of fewer nodes than domains. */
#define SIM_DOMAIN_FIRST 0
#define SIM_DOMAIN_LAST UINT16_MAX
static inline uint32_t sim__nvswitch_domain(const struct sim_config *cfg, uint32_t k)
{
    return (uint32_t)cfg->nnodes + 1 + k;
}
static inline uint32_t sim__node_domain(const struct sim_config *cfg, uint32_t node)
{
    uint32_t k = cfg->nodes[node].nvswitch; /* 1 + its index, 0: none */
    return k ? sim__nvswitch_domain(cfg, k - 1) : node + 1;
}

struct sim_node {
    struct sim_component comp;
    const struct sim_node_ops *nops;
    struct sim_network *net;
    uint32_t index; /* configuration node index */
    uint8_t kind;   /* enum cfg_node_kind */
    struct sim_port **ports;
    uint32_t nports;
    uint64_t bad_frames; /* received frames that failed to parse or check */
    uint64_t unroutable; /* received frames a switch had no way to forward */
};

/* ---- routes ---------------------------------------------------------------------
 * Shortest paths by hop count. For each switch and destination host, the
 * set of ports on a shortest path; equal-cost sets are shared, so a switch
 * stores one 2-byte code per host, never a table per pair of ports: below
 * the switch's port count, the one port; above, the switch's code-th set
 * of several ports (of those in `multi` from its multi_base on). The
 * table of switches x hosts is what large fabrics spend most memory on
 * (1.25 GiB at k=64 with 4-byte set ids); a hop reads its entry unless
 * the switch has a rule (below). */
#define SIM_ROUTE_NONE UINT16_MAX
struct sim_port_set {
    uint32_t off, n; /* into route_ports */
};

/* A switch's row of codes as arithmetic, where it fits: hosts in [lo, lo
 * + span) lie below it and take code down_base + (h - lo) / down_div,
 * the others an up code, up_base + h / up_div % up_n. On a fat-tree
 * (dmodk or ecmp) every row fits: a hop reads the switch's rule, a few
 * bytes that stay in cache, instead of its entry in a table of switches
 * x hosts (21 MB at k=32) that does not. */
struct sim_route_rule {
    uint32_t lo, span, down_div;
    uint32_t up_div, up_n;
    uint16_t down_base, up_base;
    bool fits; /* false: read code_of */
};

static inline uint16_t sim__route_rule_code(const struct sim_route_rule *u, uint32_t h)
{
    if (h - u->lo < u->span)
        return (uint16_t)(u->down_base + (h - u->lo) / u->down_div);
    return (uint16_t)(u->up_base + h / u->up_div % u->up_n);
}

struct sim_routes {
    uint16_t *code_of;         /* [switch slot * nhosts + host] -> code, SIM_ROUTE_NONE: no path */
    struct sim_route_rule *rule; /* per switch slot */
    struct sim_port_set *sets; /* per switch, consecutive */
    uint32_t *ports;
    uint32_t *sets_base;       /* the set id of each switch slot's port 0 */
    uint32_t *multi;           /* set ids of the several-port sets, per switch slot */
    uint32_t *multi_base;      /* where each switch slot's start in multi */
    uint32_t *slot_of_node;    /* node -> switch slot */
};

/* The port a switch forwards to for a destination host and flow hash. */
uint32_t sim__route(const struct sim_network *net, const struct sim_node *sw, uint32_t host,
                    uint32_t hash);
/* The equal-cost ports (n of them) towards a host, for per-packet choices;
 * NULL when there is no path. */
const uint32_t *sim__route_set(const struct sim_network *net, const struct sim_node *sw,
                               uint32_t host, uint32_t *n);
void sim__routes_build(struct sim_network *net);
/* dmodk's choice: the index among n equal-cost ports of a switch `tier`
 * hops above its nearest host, for destination h. */
uint32_t sim__dmodk(uint32_t h, uint32_t n, uint32_t tier);
/* Hops from each node to its nearest host (hosts are not transit); queue
 * is scratch space of one entry per node. */
void sim__route_tiers(const struct sim_network *net, uint32_t *tier, uint32_t *queue);
void sim__routes_free(struct sim_routes *r);
/* A switch's code for a host from its table, never from its rule: what
 * the rules are checked against. */
uint16_t sim__route_table_code(const struct sim_network *net, const struct sim_node *sw, uint32_t host);
/* ECMP hash of a flow, as switches compute it from the frame's addresses
 * and UDP source port; salted per switch. */
uint32_t sim__flow_hash(uint32_t src_host, uint32_t dst_host, uint16_t sport, uint32_t salt);

/* ---- switches ---------------------------------------------------------------- */
/* Output-queued, eight classes per port, a shared buffer, PFC and ECN
 * (fabric.h). */
struct sim_node *sim__switch_create(struct sim_network *net, uint32_t index);

/* ---- messages ---------------------------------------------------------------- */
#define SIM_MSG_STATUSES(X)                                                    \
    X(PENDING, "pending")                                                      \
    X(OK, "ok")                                                                \
    X(RETRY_EXCEEDED, "retry-exceeded")                                        \
    X(RNR_RETRY_EXCEEDED, "rnr-retry-exceeded")                                \
    X(REMOTE_ACCESS, "remote-access-error")                                    \
    X(REMOTE_INVALID, "remote-invalid-request")                                \
    X(REMOTE_OPERATIONAL, "remote-operational-error")                          \
    X(FLUSHED, "flushed")

enum sim_msg_status {
#define SIM__MS_ENUM(name, str) SIM_MSG_##name,
    SIM_MSG_STATUSES(SIM__MS_ENUM)
#undef SIM__MS_ENUM
};
const char *sim__msg_status_name(unsigned st);

struct sim_msg {
    uint32_t conn;
    uint32_t lmr, rmr; /* memory regions on the requester and the responder */
    uint64_t rva;      /* the remote region, as connection setup told the requester */
    uint32_t rkey;
    sim_time_t posted, done, ideal;
    uint32_t retx; /* request packets sent again */
    uint8_t status;
    int8_t data_ok; /* -1: not compared (payload: none), 0: differs, 1: equal */
    /* Messages posted once this one is in its destination's memory
     * (cfg_msg.after, after2): the first + 1, then each one's next_waiter
     * + 1 (next_waiter2 where this one is the waiter's after2). */
    uint32_t waiter, next_waiter, next_waiter2;
    uint8_t waiting; /* of after and after2, how many have not arrived */
    sim_time_t delivered; /* a receive completion's data in memory; 0: not (yet) */
};

/* A reliable connection: one queue pair on each of two hosts. */
struct sim_qp;
struct sim_conn {
    uint32_t host[2]; /* node indexes; host[0] < host[1] */
    uint32_t qp_id;   /* the configuration's qp number */
    struct sim_qp *qp[2];
    uint32_t path_mtu;
};

/* ---- the network ---------------------------------------------------------------- */
struct sim_pcie_net;
struct sim_nvswitch;
struct sim_monitor;
struct sim_faults;
struct sim_pfc_hook;
struct sim_pcap;

struct sim_network {
    struct sim *sim;
    const struct sim_config *cfg;
    struct sim_node **nodes;
    struct sim_port *ports;
    size_t nports;
    /* The switches' state per port (fabric/switch.c), one mapping for
     * all on huge pages, handed out a switch at a time. */
    void *switch_ports;
    size_t switch_ports_size, switch_ports_used;
    uint32_t nhosts;
    uint32_t *host_node; /* host index -> node index */
    uint32_t *node_host; /* node index -> host index, UINT32_MAX for switches */
    struct sim_routes routes;
    struct sim_subnet *subnet; /* InfiniBand LIDs and forwarding tables (net/ib.h); NULL on RoCE */
    struct sim_msg *msgs;
    size_t nmsgs;
    struct sim_conn *conns;
    size_t nconns;
    struct sim_frame_pool pool;
    struct sim_arena rings; /* queues' first rings (sim__ring_grow) */
    /* The payload of frames with payload: none, one copy for every NIC so
     * that it stays in cache: byte i is i mod 256. */
    uint8_t fill[SIM_MAX_PAYLOAD];
    /* CRC-32s of the fill's first n bytes, cached by n (sim__fill_crc):
     * a frame that leaves out its fill has its ICRC computed and checked
     * from its headers and these, never from the pattern again. */
    struct rdma_crc32_part fill_crc[SIM_FILL_CRC_SLOTS];
    /* Where a receiving node assembles a frame that leaves out its fill
     * (sim__frame_bytes), to decode it: one at a time, as nodes receive
     * one frame at a time. */
    uint8_t rx_bytes[SIM_FRAME_MAX];
    /* Where a NIC encodes a frame before keeping all but its fill. */
    uint8_t tx_bytes[SIM_FRAME_MAX];
    uint64_t finished; /* messages completed or failed */
    uint64_t transfers_left; /* workload work beside messages still running (NVLink copies) */
    struct sim_nvswitch **nvswitches; /* per cfg->nvswitches, when messages use them; else NULL */
    struct sim_monitor *monitor; /* the monitor and its records (observe/observe.h) */
    struct sim_faults *faults;   /* link faults (fault.c); NULL without */
    struct sim_pfc_hook *pfc_hooks; /* observers of PFC events (pfc.h) */
    struct sim_pcap **pcaps;     /* per port, its capture or NULL (observe/pcap.c) */
    uint64_t pcap_cut_files, pcap_cut_frames; /* of closed captures: trace_limit reached */
    struct sim_pcie_net *pcie; /* PCIe inside the hosts (pcie/pcie.h); NULL: DMA takes no time */
    /* Directories this run made for its outputs, in the order made: a run
     * that ends without its outputs removes them again if they are empty. */
    char **made_dirs;
    size_t nmade_dirs;
    /* The outputs' directory, open and locked (flock) while the run owns
     * it, as descriptor + 1; 0: not yet (observe/output.c). */
    int out_lock;
    /* Set-up progress (sim_network_create_watched); NULL after set-up. */
    sim_setup_fn setup_fn;
    void *setup_arg;
    /* A run split over MPI ranks (network/parallel.c): this rank's part,
     * and what each rank did, for summary.json; NULL when run whole. */
    struct sim_split *split;
    struct sim_split_stats *split_stats;
    /* The process's CPU seconds in sim_network_run: the run without its
     * set-up, for summary.json under --wall-time. */
    double run_cpu_s;
};

static inline void sim__setup_progress(const struct sim_network *net, const char *stage, double done)
{
    if (net->setup_fn)
        net->setup_fn(net->setup_arg, stage, done);
}

/* A message finished (either way); ends the run after the last one. */
void sim__message_finished(struct sim_network *net, uint32_t msg);
/* Work beside the messages (net->transfers_left) finished; ends the run
 * if it was the last of everything. */
void sim__transfer_finished(struct sim_network *net);

/* ---- link faults (fault.c) -------------------------------------------------------- */
/* A component that takes links down and up at the configured times. */
void sim__faults_create(struct sim_network *net);
void sim__faults_destroy(struct sim_network *net);
/* The fault events fired so far: a run split over MPI ranks fires each on
 * every rank, and counts it once. */
uint64_t sim__faults_fired(const struct sim_network *net);

/* Addresses: host h is 10.0.0.0 + h + 1, fd00::h+1, MAC 02:00:00 + h + 1. */
static inline uint32_t sim__host_ip4(uint32_t h) { return UINT32_C(0x0a000000) + h + 1; }
void sim__host_mac(uint32_t h, uint8_t mac[6]);
void sim__host_ip6(uint32_t h, uint8_t ip6[16]);

#endif
