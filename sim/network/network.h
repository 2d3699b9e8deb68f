/* network.h - the network builder's own parts, beside the public API
 * (sim.h).
 */
#ifndef SIM_NETWORK_H
#define SIM_NETWORK_H

#include "config/cfg.h"
#include "sim.h"

/* What each configuration item costs once it runs. */
void sim__memory_costs(struct sim_memory_costs *k);

#endif
