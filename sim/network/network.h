/* network.h - the network builder's own parts, beside the public API
 * (sim.h).
 */
#ifndef SIM_NETWORK_H
#define SIM_NETWORK_H

#include "config/cfg.h"
#include "sim.h"

/* What each configuration item costs once it runs. */
void sim__memory_costs(struct sim_memory_costs *k);

/* ---- parallel runs (docs/parallel.md) ---------------------------------------- */
/* Which part (MPI rank) runs each node, and how far parts may run ahead of
 * each other: the smallest delay of a link between two parts. */
struct sim_partition {
    unsigned nparts;
    uint32_t *node_part; /* by node index */
    sim_time_t lookahead; /* SIM_TIME_NEVER when no link is cut */
    size_t cut_ports;     /* ports whose peer is in another part: two per cut link */
};
/* The configuration's partition key, or the automatic one (partition.c).
 * A cut link without delay is refused: -1 with "FILE:LINE:COL: ..." in err. */
int sim__partition(const struct sim_network *net, unsigned nparts, struct sim_partition *pt,
                   char *err, size_t errcap);
void sim__partition_free(struct sim_partition *pt);

/* The part of a split run this process runs (parallel.c); NULL when the
 * network runs whole. */
struct sim_split;
/* Run this rank's part; false when a rank was interrupted. */
bool sim__split_run(struct sim_network *net);
void sim__split_free(struct sim_network *net);

#endif
