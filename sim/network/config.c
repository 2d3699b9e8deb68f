/* config.c - sim_config_load: the configuration layer parses and checks the
 * files, against what this layer knows each item will cost in memory.
 */
#include "network/network.h"

struct sim_config *sim_config_load(const char *path, const char *const *sets, size_t nsets,
                                   char *err, size_t errcap)
{
    struct sim_memory_costs costs;
    sim__memory_costs(&costs);
    return sim__config_parse(path, sets, nsets, &costs, err, errcap);
}

void sim_config_free(struct sim_config *cfg) { sim__config_free(cfg); }
