/* memory_costs.c - what each item of a configuration costs in memory once
 * it runs, from the run-time structs themselves: the configuration's memory
 * check (config/memory.c) counts the items and multiplies.
 */
#include "config/cfg.h"
#include "fabric/fabric.h"
#include "host/nic.h"
#include "network/network.h"
#include "pcie/pcie.h"

#define BASE_BYTES (UINT64_C(32) << 20) /* the program, its libraries, pools */
#define ALLOC_BYTES 16                  /* malloc's own bookkeeping per block */
#define NAME_BYTES 32                   /* a node or port name */

void sim__memory_costs(struct sim_memory_costs *k)
{
    /* per node: its configuration entry, the network's node tables, the
     * name index, and the per-node arrays of route building and work setup */
    uint64_t node = sizeof(struct cfg_node) + NAME_BYTES + 3 * sizeof(uint32_t) +
                          2 * sizeof(void *) + 2 * sizeof(uint32_t) + 3 * sizeof(uint32_t) +
                          6 * sizeof(size_t) + 2 * ALLOC_BYTES;
    uint64_t host = node + sizeof(struct sim_host) + ALLOC_BYTES;
    uint64_t sw = node + sizeof(struct sim_switch) + ALLOC_BYTES + sizeof(uint32_t);
    /* per link: two ports, each with a name, a slot in its node's port
     * array, a first egress ring, its own route set, a switch's per-port
     * queues and counters, and the monitor's per-priority state */
    uint64_t port = sizeof(struct sim_port) + NAME_BYTES + sizeof(void *) * 2 +
                          SIM_FIRST_RING * sizeof(struct sw_item) + sizeof(struct sw_port) + 2 * ALLOC_BYTES +
                          sizeof(struct sim_port_set) + sizeof(uint32_t) +
                          SIM_PRIOS * (sizeof(uint64_t) + 1) + 1;
    uint64_t link = sizeof(struct cfg_link) + 2 * port;
    /* per connection: a queue pair on each host with its first send,
     * receive, response and atomic-result queues */
    uint64_t qp = sizeof(struct sim_qp) + 16 * sizeof(struct sim_wqe) +
                        16 * sizeof(struct sim_recv) + 8 * sizeof(struct sim_resp_item) +
                        16 * sizeof(struct sim_atomic_result) + sizeof(void *) + 5 * ALLOC_BYTES;
    uint64_t conn = 2 * (qp + sizeof(struct sim_dcqcn) + sizeof(uint64_t)) +
                          sizeof(struct sim_conn) + 2 * sizeof(uint32_t);
    /* per message: its configuration and run state, two memory regions,
     * its place in the hosts' work lists, the four (time, connection,
     * message) entries that sort them, and its completion time and
     * slowdown in the summary */
    uint64_t work = sizeof(sim_time_t) + 2 * sizeof(uint32_t);
    /* with PCIe modelled, per host: its tree, where each node has an
     * uplink with a first set of reservations each way, routes to and
     * from it, and read credits; per message: its latency breakdown */
    uint64_t pcie_node = sizeof(struct pcie_link_rt) + 2 * 64 * sizeof(struct pcie_slot) +
                               2 * sizeof(struct pcie_route) + sizeof(struct pcie_credits) +
                               16 * sizeof(sim_time_t) + 6 * ALLOC_BYTES;
    uint64_t msg = sizeof(struct cfg_msg) + sizeof(struct sim_msg) + 2 * sizeof(struct sim_mr) +
                         3 * sizeof(uint32_t) + 2 * sizeof(sim_time_t) + 4 * work +
                         2 * sizeof(uint64_t);
    *k = (struct sim_memory_costs){
        .base = BASE_BYTES,
        .host = host,
        .sw = sw,
        .link = link,
        .route_entry = sizeof(uint16_t),
        .conn = conn,
        .msg = msg,
        .pcie_host = sizeof(struct sim_pcie_host),
        .pcie_node = pcie_node,
        .pcie_msg = sizeof(struct sim_pcie_stamps),
    };
}
