/* pfc.h - IEEE 802.1Qbb priority flow control at a port: the pauses it
 * obeys, the pauses it sends, and the trace source that reports both.
 *
 * PFC belongs to the Ethernet link layer: switches and NICs decide when a
 * priority is to be paused (their buffers), this file sends and obeys the
 * MAC control frames and runs their timers.
 */
#ifndef SIM_NET_PFC_H
#define SIM_NET_PFC_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"

/* ---- PFC (pfc.c) ------------------------------------------------------------
 * IEEE 802.1Qbb: MAC control frames to 01:80:C2:00:00:01, opcode 0x0101,
 * a class-enable vector and eight pause times in quanta of 512 bit times.
 * Received, they set and clear the port's `blocked` classes; the Ethernet
 * link layer (sim__link_ethernet) runs their timers. */
/* Set up a port's PFC: whether it obeys pauses, and what it sends. */
void sim__pfc_port_init(struct sim_port *p, bool honour, uint16_t quanta, sim_time_t refresh);
/* Start or stop pausing the peer of p for priority prio. */
void sim__pfc_xoff(struct sim_port *p, unsigned prio);
void sim__pfc_xon(struct sim_port *p, unsigned prio);
/* Time to send XOFF again where still paused (after the node had its
 * chance to XON: sim_node_ops.pfc_refresh). */
void sim__pfc_refresh(struct sim_port *p);
/* Report a watchdog action to the PFC trace source. */
void sim__pfc_log_watchdog(struct sim_port *p, unsigned prio, bool storm);

/* ---- the trace source ----------------------------------------------------------------- */
struct sim_pfc_row {
    sim_time_t t, duration;
    uint64_t key; /* the event's that logged it: orders the rows of ranks */
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

/* Called for every PFC event at any port, in time order. Observers embed
 * a hook and add it with sim__pfc_hook_add before the run (as ns-3 attaches
 * a TracedCallback): the model never calls a writer. */
struct sim_pfc_hook {
    void (*fn)(struct sim_pfc_hook *h, const struct sim_pfc_row *row);
    struct sim_pfc_hook *next;
};
void sim__pfc_hook_add(struct sim_network *net, struct sim_pfc_hook *h);

#endif
