/* fabric.h - what the lossless-fabric files share: the switch with its
 * eight classes per port and its shared buffer (switch.c, buffer.c), PFC
 * (pfc.c), ECN marking (ecn.c), DCQCN (dcqcn.c), the NIC's receive buffer
 * (rxbuf.c), link faults (fault.c), and the monitor that samples queues
 * and rates and looks for PFC deadlock (monitor.c, deadlock.c).
 *
 *   ingress port --classify--> priority p --admit (buffer.c)--> egress queue (port, p)
 *        ^  PFC XOFF/XON when the (ingress port, p) group                |  ECN RED at enqueue
 *        |  crosses its threshold (pfc.c)                                v
 *   upstream                                  strict priority, then DWRR, skipping paused classes
 */
#ifndef SIM_FABRIC_H
#define SIM_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net.h"
#include "rdma_codec.h"

/* ---- PFC (pfc.c) ------------------------------------------------------------
 * IEEE 802.1Qbb: MAC control frames to 01:80:C2:00:00:01, opcode 0x0101,
 * a class-enable vector and eight pause times in quanta of 512 bit times. */
#define SIM_PFC_FRAME_WIRE (60 + SIM_ETH_WIRE_EXTRA)

/* Bytes that may still arrive on a link after its receiver decides to
 * pause it; see pfc.c for the derivation. */
uint64_t sim__pfc_headroom(const struct cfg_link_params *lp);
/* Largest frame a link carries: IP MTU, Ethernet header and one VLAN tag. */
static inline uint64_t sim__max_frame(const struct cfg_link_params *lp) { return lp->mtu + 18u; }

/* Set up a port's PFC: whether it obeys pauses, and what it sends. */
void sim__pfc_port_init(struct sim_port *p, bool honour, uint16_t quanta, sim_time_t refresh);
/* A MAC control frame arrived on p (link.c hands them over). */
void sim__pfc_receive(struct sim_port *p, struct sim_frame *f);
/* Events targeting the port: PFC_EXPIRE. */
void sim__pfc_expire(struct sim_port *p);
/* Start or stop pausing the peer of p for priority prio. */
void sim__pfc_xoff(struct sim_port *p, unsigned prio);
void sim__pfc_xon(struct sim_port *p, unsigned prio);
/* The node's PFC_REFRESH event for p, after it had its chance to XON. */
void sim__pfc_refresh(struct sim_port *p);
/* The link of p went down: pauses received on it are void. */
void sim__pfc_link_down(struct sim_port *p);
/* Close the pause intervals still open at the end of the run. */
void sim__pfc_settle(struct sim_port *p);
/* Note a watchdog action in pfc.csv. */
void sim__pfc_log_watchdog(struct sim_port *p, unsigned prio, bool storm);

/* ---- ECN (ecn.c) -------------------------------------------------------------- */
struct sim_red {
    uint64_t kmin, kmax;
    double pmax;
};
/* The thresholds for a port of this rate under a switch's parameters. */
void sim__ecn_resolve(const struct cfg_switch *s, uint64_t rate, struct sim_red *red);
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
enum sim_admit sim__mmu_admit(struct sim_mmu *m, struct sim_pg *g, uint64_t len, bool lossless,
                              uint64_t headroom, uint64_t egress_bytes, uint64_t port_bytes);
void sim__mmu_release(struct sim_mmu *m, struct sim_pg *g, uint64_t len);
bool sim__mmu_should_pause(const struct sim_mmu *m, const struct sim_pg *g);
bool sim__mmu_may_resume(const struct sim_mmu *m, const struct sim_pg *g);

/* ---- the switch (switch.c) --------------------------------------------------------- */
struct sw_item {
    struct sim_frame *f;
    uint32_t len;
    uint16_t in; /* ingress port index */
    uint8_t prio;
};

struct sw_queue {
    struct sw_item *ring;
    uint32_t cap, head, tail; /* free-running; index & (cap - 1) */
    uint64_t bytes;
    uint64_t sent;   /* frames dequeued, for deadlock detection */
    int64_t deficit; /* DWRR */
};

struct sw_port {
    struct sw_queue q[SIM_PRIOS];
    uint8_t busy;   /* classes with frames queued */
    uint8_t rr;     /* DWRR: the class whose turn it is */
    uint8_t storm;  /* classes the watchdog is dropping */
    uint64_t bytes; /* queued, all classes */
    struct sim_pg pg[SIM_PRIOS]; /* this port as ingress */
    uint64_t headroom;
    uint64_t quantum[SIM_PRIOS];
    struct sim_red red;
    sim_time_t storm_since[SIM_PRIOS];
    sim_time_t watchdog_at; /* pending PFC_WATCHDOG event */
};

struct sim_switch {
    struct sim_node node;
    struct rdma_decode_config dcfg;
    const struct cfg_switch *p;
    struct sim_mmu mmu;
    struct sw_port *sp; /* per port */
};

static inline struct sim_switch *sim__switch_of(struct sim_node *n) { return (struct sim_switch *)n; }

/* ---- DCQCN (dcqcn.c) ------------------------------------------------------------------ */
struct sim_qp;
struct sim_dcqcn {
    double rc, rt, alpha; /* current and target rate (bits/s), alpha */
    uint64_t bytes;       /* sent since the last byte-counter step */
    uint32_t t, bc;       /* timer and byte-counter steps since the last cut */
    bool limited;         /* below line rate: timers run */
    sim_time_t rate_at, alpha_at, timer_at; /* deadlines, and the pending event */
    sim_time_t last_cnp;  /* notification point: last CNP sent, SIM_TIME_NEVER if none */
    uint64_t cuts;
};
void sim__dcqcn_init(struct sim_qp *qp);
/* Notification point: a CE-marked packet arrived for qp. */
void sim__dcqcn_ce(struct sim_qp *qp);
/* Reaction point: a CNP arrived for qp. */
void sim__dcqcn_cnp(struct sim_qp *qp);
/* qp put a rate-limited frame of `wire` bytes on the wire: pacing and the
 * byte counter. */
void sim__dcqcn_sent(struct sim_qp *qp, uint64_t wire);
void sim__dcqcn_timer(struct sim_qp *qp, sim_time_t at);
double sim__dcqcn_rate(const struct sim_qp *qp);

/* ---- the NIC's receive buffer (rxbuf.c) ------------------------------------------------ */
struct sim_nic;
struct sim_rxbuf {
    struct sim_frame *head, *tail;
    uint64_t bytes, cap, xoff, xon, rate;
    bool busy;
};
void sim__rxbuf_init(struct sim_nic *nic);
/* A frame arrived: queue it, or drop it when the buffer is full. */
void sim__rxbuf_put(struct sim_nic *nic, struct sim_frame *f);
/* NIC_RX: the frame at the head has been taken in. */
void sim__rxbuf_done(struct sim_nic *nic);

/* ---- faults, monitor and deadlock ------------------------------------------------------ */
struct sim_pfc_row {
    sim_time_t t, duration;
    uint32_t port;
    uint16_t quanta;
    uint8_t prio, event; /* enum sim_pfc_event */
};

#define SIM_PFC_EVENTS(X)                                                      \
    X(PAUSE, "pause")       /* first XOFF of a pause */                       \
    X(REFRESH, "refresh")   /* XOFF sent again before the last one expires */ \
    X(RESUME, "resume")     /* XON: pause time 0 */                           \
    X(STORM, "watchdog-drop") /* the watchdog drops a class paused too long */ \
    X(RESTORE, "watchdog-restore")

enum sim_pfc_event {
#define SIM__PFC_EV(name, str) SIM_PFC_##name,
    SIM_PFC_EVENTS(SIM__PFC_EV)
#undef SIM__PFC_EV
};

struct sim_qlen_row {
    sim_time_t t;
    uint32_t port;
    uint32_t q[SIM_PRIOS];
};

struct sim_rate_row {
    sim_time_t t;
    uint32_t conn;
    uint8_t side;
    double rate, target, alpha, throughput;
};

struct sim_deadlock {
    sim_time_t t;
    uint32_t *ports; /* the cycle: egress ports, each paused by the next */
    uint8_t *prios;
    uint32_t n;
};

struct sim_fault_action {
    uint32_t link;
    bool up;
};

struct sim_fabric {
    struct sim_component monitor; /* SAMPLE, DEADLOCK_CHECK; first, for the downcast */
    struct sim_component faults;  /* LINK_FAULT */
    struct sim_network *net;
    struct sim_pfc_row *pfc;
    size_t npfc, cappfc;
    struct sim_qlen_row *qlen;
    size_t nqlen, capqlen;
    struct sim_rate_row *rates;
    size_t nrates, caprates;
    struct sim_deadlock *deadlocks;
    size_t ndeadlocks, capdeadlocks;
    uint8_t *qlen_shown;    /* per port: a row was written at the last sample */
    uint64_t *last_bytes;   /* per queue pair side: bytes sent at the last sample */
    uint64_t *last_sent;    /* deadlock: per (port, class) frames sent at the last check */
    uint8_t *in_deadlock;   /* per (port, class): part of a deadlock already reported */
    bool check_deadlock;    /* some switch runs PFC */
    struct sim_fault_action *actions;
};

void sim__fabric_create(struct sim_network *net);
void sim__fabric_destroy(struct sim_network *net);
void sim__fabric_pfc_log(struct sim_network *net, const struct sim_pfc_row *row);
/* deadlock.c: look for a cycle of paused, stalled switch queues. */
void sim__deadlock_check(struct sim_fabric *fab);
/* fault.c: the faults component's init schedules every fault */
void sim__faults_init(struct sim_component *c);
void sim__fault_apply(struct sim_fabric *fab, uint32_t link, bool up);

/* Outputs (fabric_out.c): pfc.csv, qlen.csv, rates.csv, and the fabric's
 * parts of summary.json. */
void sim__fabric_port_json(FILE *f, const struct sim_port *p);
void sim__fabric_summary_json(FILE *f, struct sim_network *net);
int sim__fabric_write(struct sim_network *net, const char *dir, char *err, size_t errcap);

#endif
