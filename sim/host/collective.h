/* collective.h - a host's side of the collectives (config/load_collective.c
 * expands them into messages): a step is posted once the steps it waits for
 * (one, or a tree's two children's) are in the host's memory, and its
 * source then holds what the ring or tree algorithm sends, the arrived
 * data forwarded or with the rank's own contribution added.
 */
#ifndef SIM_COLLECTIVE_H
#define SIM_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "host/nic.h"

/* Element elem (a 32-bit integer) of rank's contribution to collective
 * coll (cfg_msg.coll), the same in every run with the same seed. */
uint32_t sim__coll_element(uint64_t seed, uint32_t coll, uint32_t rank, uint64_t elem);
/* Message msg's data is in h's memory at `at`: post what waits for it. */
void sim__host_delivered(struct sim_host *h, uint32_t msg, sim_time_t at);
/* With payload: data, fill the source of collective step msg as its
 * combine says, just before the host posts it. */
void sim__coll_source(struct sim_host *h, uint32_t msg);
/* Whether collective step msg's destination holds the sums its data
 * should be (cfg_msg.sum_from, sum_count): an oracle apart from the
 * combining above. */
bool sim__coll_check(const struct sim_network *net, uint32_t msg);

#endif
