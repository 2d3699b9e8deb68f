/* ideal.h - paths through the network and the completion time a message
 * would have on an otherwise empty network. */
#ifndef SIM_IDEAL_H
#define SIM_IDEAL_H

#include "net/net.h"

struct sim_hop {
    uint64_t rate;
    sim_time_t delay;  /* propagation, with the NICs' pipelines at either end */
    uint32_t mtu;
    /* the switch the hop leads to (0 and false for a host) */
    sim_time_t latency;
    bool cut_through;
    uint8_t cut_bytes; /* wire bytes the switch takes in before forwarding (cut-through) */
    const struct sim_port *port; /* the port the hop leaves from */
};

struct sim_path {
    struct sim_hop *hop;
    uint32_t n;
};

/* The links a frame from host src to host dst with UDP source port sport
 * (on InfiniBand: the sender's path bits) crosses, as the switches' routes
 * send it. */
void sim__path(const struct sim_network *net, uint32_t src, uint32_t dst, uint16_t sport,
               struct sim_path *path);
void sim__path_free(struct sim_path *path);

/* From posting to completion, alone on the network: every packet's
 * serialization and propagation on every hop (store and forward), then
 * the acknowledgement or the responses coming back. */
sim_time_t sim__ideal_time(const struct sim_network *net, uint32_t msg);
/* The base RTT of side `side` of connection `conn`: a request of a full
 * MTU out and its acknowledgement back, alone on the network. */
sim_time_t sim__base_rtt(const struct sim_network *net, uint32_t conn, int side);

#endif
