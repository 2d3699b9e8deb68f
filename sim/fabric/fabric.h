/* fabric.h - the switch with its eight classes per port and its shared
 * buffer (switch.c, buffer.c), and ECN marking (ecn.c). PFC frames are the
 * link layer's (net/pfc.c); the switch decides when to send them.
 *
 *   ingress port --classify--> priority p --admit (buffer.c)--> egress queue (port, p)
 *        ^  PFC XOFF/XON when the (ingress port, p) group                |  ECN RED at enqueue (ecn.mark)
 *        |  crosses its threshold (net/pfc.c)                                v
 *   upstream                                  strict priority, then DWRR, skipping paused classes
 *                                                  |  ECN RED at dequeue (the default)
 *                                                  v  egress port
 */
#ifndef SIM_FABRIC_H
#define SIM_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "net/net.h"
#include "net/pfc.h"
#include "rdma_codec.h"

/* ---- ECN (ecn.c) -------------------------------------------------------------- */
struct sim_red {
    uint64_t kmin, kmax;
    double pmax;
};
/* The thresholds for a port of this rate under a switch's parameters. */
/* The thresholds for a port of this rate under a switch's parameters; a
 * scaled default stays within `cap`, the most its queue can hold. */
void sim__ecn_resolve(const struct cfg_switch *s, uint64_t rate, uint64_t cap, struct sim_red *red);
/* RED: whether a packet finding `qbytes` in its queue is marked. */
bool sim__ecn_decide(const struct sim_red *red, uint64_t qbytes, struct sim_rng *rng);
/* Set CE in an ECN-capable frame whose IP header starts at l3; false if it
 * is not ECN-capable (or already CE). */
bool sim__ecn_mark(uint8_t *l3, bool ipv6);

/* ---- the shared buffer (buffer.c) ---------------------------------------------
 * Ingress accounting per (port, priority) group, as Broadcom-style MMUs and
 * HPCC's ns-3 switch do: a group's bytes first fill its reserved space,
 * then the shared pool up to the XOFF threshold, then (lossless priorities
 * only) its PFC headroom. */
struct sim_pg {
    uint64_t bytes; /* in the buffer, from this port with this priority */
    uint64_t hdrm;  /* of which in headroom */
};

struct sim_mmu {
    bool shared;     /* false: each port has a fixed buffer of its own */
    uint64_t port_cap; /* without a shared buffer: bytes queued per port */
    uint64_t pool;   /* shared bytes: buffer - reserved - headroom */
    uint64_t used;   /* shared bytes in use */
    double alpha;
    uint64_t reserved, xoff, xon;
};

enum sim_admit {
    SIM_ADMIT_OK,
    SIM_ADMIT_HEADROOM,      /* admitted into the group's headroom */
    SIM_ADMIT_DROP,
    SIM_ADMIT_HEADROOM_FULL, /* dropped: the headroom is full */
};

static inline uint64_t sim__pg_shared(const struct sim_mmu *m, const struct sim_pg *g)
{
    uint64_t b = g->bytes - g->hdrm;
    return b > m->reserved ? b - m->reserved : 0;
}
/* headroom is read only when the group needs it: it lies on a line the
 * frames of a switch that does not pause never touch. */
enum sim_admit sim__mmu_admit(struct sim_mmu *m, struct sim_pg *g, uint64_t len, bool lossless,
                              const uint64_t *headroom, uint64_t egress_bytes, uint64_t port_bytes);
void sim__mmu_release(struct sim_mmu *m, struct sim_pg *g, uint64_t len);
bool sim__mmu_should_pause(const struct sim_mmu *m, const struct sim_pg *g);
bool sim__mmu_may_resume(const struct sim_mmu *m, const struct sim_pg *g);

/* ---- InfiniBand VL arbitration (vlarb.c) ---------------------------------------- */
struct sim_vlarb {
    uint8_t cur[2];     /* current entry of the high [0] and low [1] table */
    int32_t left[2];    /* bytes of weight the current entry has left */
    uint8_t table;      /* the table of the VL picked last */
    uint8_t high_vls, low_vls; /* VLs with a weight in each table */
    uint64_t high_sent; /* high-priority bytes sent while low priority waited */
};
void sim__vlarb_init(struct sim_vlarb *s, const struct cfg_vlarb *a);
/* The VL to send from among `ready`, or -1; then sim__vlarb_sent with the
 * packet's length. */
int sim__vlarb_pick(struct sim_vlarb *s, const struct cfg_vlarb *a, uint8_t ready);
void sim__vlarb_sent(struct sim_vlarb *s, uint32_t len);

/* ---- the switch (switch.c) --------------------------------------------------------- */
struct sw_item {
    struct sim_frame *f;
    uint32_t len;
    uint16_t in; /* ingress port index */
    uint8_t prio;
    uint8_t l3;  /* offset of the IP header (SW_L3_OFF), SW_L3_V6, SW_L3_ECT;
                  * InfiniBand: the VL it came in on */
};
#define SW_L3_OFF 0x3f
#define SW_L3_ECT 0x40 /* ECT(0) or ECT(1): RED may mark it */
#define SW_L3_V6 0x80

/* One class of a port: its egress queue, and the port as ingress of
 * that class (the buffer's group, `pg`). A frame reads its class on the
 * way out and on the way in, so each fills one cache line: on a large
 * fabric every line a hop touches is a miss. */
struct sw_queue {
    struct sw_item *ring;
    uint32_t cap, head, tail; /* free-running; index & (cap - 1) */
    uint32_t quantum; /* DWRR: bytes a turn adds (a weight times the largest frame) */
    uint64_t bytes;
    uint32_t sent;   /* frames dequeued, for deadlock detection (which asks whether it moved) */
    bool xoff;       /* this port as ingress paused its peer for the class, as far as the
                      * switch knows: the port's pfc.xoff, far from this line, is read only then */
    int64_t deficit; /* DWRR */
    struct sim_pg pg; /* this port as ingress */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct sw_queue) == 64, "a class fills one cache line");

/* The first line holds what every frame leaving the port reads; the
 * classes follow, each on a line of its own (allocated aligned). */
struct sw_port {
    uint8_t busy;   /* classes with frames queued */
    uint8_t rr;     /* DWRR: the class whose turn it is */
    uint8_t storm;  /* classes the watchdog is dropping */
    uint64_t bytes; /* queued, all classes */
    uint64_t headroom;
    uint64_t max_queue; /* the port's st.max_queue, on this line: written there when it grows */
    struct sim_red red;
    struct sw_queue q[SIM_PRIOS];
    sim_time_t storm_since[SIM_PRIOS];
    struct sim_timer watchdog; /* PFC_WATCHDOG: has a class been paused too long? */
    struct sim_vlarb vlarb;    /* InfiniBand: classes are VLs */
    uint32_t ibcc_count;       /* InfiniBand CC: packets since the last FECN mark */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct sw_port, q) == 64, "a port's own fields fill one cache line");

struct sim_switch {
    struct sim_node node;
    struct rdma_decode_config dcfg;
    const struct cfg_switch *p;
    struct sim_mmu mmu;
    struct sw_port *sp; /* per port */
};

static inline struct sim_switch *sim__switch_of(struct sim_node *n) { return (struct sim_switch *)n; }

/* In-band telemetry (telemetry.c): the switch's data into the frame's IOAM
 * trace of the HPCC namespace, if it carries one, as it leaves `port`. */
void sim__telemetry_add(struct sim_switch *sw, struct sim_port *port, const struct sw_item *it);

/* The queues both kinds of switch keep (switch.c). */
/* A switch's state for its n ports, zeroed, each starting a cache line;
 * the network unmaps it (net->switch_ports). */
struct sw_port *sim__sw_ports(struct sim_network *net, uint32_t n);
void sim__swq_push(struct sim_network *net, struct sw_queue *q, struct sw_item it);
/* What a switch reads of a frame's headers to forward it. */
struct sw_headers {
    uint32_t src, dst; /* host indexes */
    uint16_t sport;    /* the flow's entropy for ECMP */
    unsigned prio;
    uint8_t l3; /* as struct sw_item's */
};
/* The frame nearly every hop carries, RoCEv2 or any UDP over IPv4 without
 * options on untagged Ethernet, unfragmented, its checksum right and its
 * total length within the frame, for a host of the network: *h from its
 * bytes, without the codec's dispatch from header to header. false for
 * any other frame, which sim__sw_decoded_headers reads; where this one
 * says true, that one says the same (tests/sim/test_switch_headers.c). */
bool sim__sw_plain_headers(const struct sim_switch *sw, const struct sim_frame *f, struct sw_headers *h);
/* Any frame's, decoded by the codec; false for one a switch cannot
 * forward (malformed, or for no host of the network). */
bool sim__sw_decoded_headers(const struct sim_switch *sw, const struct sim_frame *f, struct sw_headers *h);

/* Take the head of class c of a port (its buffer is the caller's). */
struct sw_item sim__swq_pop(struct sw_port *sp, unsigned c);
void sim__switch_fini(struct sim_component *c);

/* An InfiniBand switch (ib_switch.c): the same queues, forwarding by LFT,
 * credits instead of a shared buffer and PFC, VL arbitration, IB CC. */
struct sim_node *sim__ib_switch_create(struct sim_network *net, uint32_t index);

#endif
