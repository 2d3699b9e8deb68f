/* loader.h - what the configuration loader's files (config*.c) share, and
 * loader.c implements: the walk over libfyaml documents, typed values with
 * positions, and first-error-wins reporting as FILE:LINE:COL: message.
 */
#ifndef SIM_LOADER_H
#define SIM_LOADER_H

#include <libfyaml.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/cfg.h"

#define VALUE_MAX 4096 /* longest scalar value read */

struct name_index {
    uint32_t *slots; /* node index + 1; 0 is empty */
    size_t cap;
};

struct loader {
    struct sim_config *cfg;
    const struct sim_memory_costs *costs;
    struct fy_diag *diag;
    const char *file; /* the file of the document being walked */
    char *dir;        /* directory of the main file, for relative names */
    char *err;
    size_t errcap;
    bool failed;
    /* values that came from --set, and their text, for error messages */
    struct fy_node **set_nodes;
    const char **set_texts;
    size_t nset;
    struct name_index names;
    struct fy_node *trace; /* the top-level trace list, checked once nodes exist */
    const char *trace_file;
    uint64_t max_memory; /* max_memory, or 0: what the machine lets the process use */
    uint64_t data_bytes; /* memory the messages so far hold with payload: data */
    struct fy_node *routing_at; /* topology routing, when the file sets it */
};

/* Record the first error at node n (NULL: no position) and return false. */
bool sim__fail(struct loader *L, struct fy_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool sim__fail_at(struct loader *L, const struct cfg_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct cfg_pos sim__pos(struct loader *L, struct fy_node *n);
/* Keep a file name for positions to refer to. */
const char *sim__intern_file(struct loader *L, const char *name);

/* Split mapping `map` into the values of `keys` (a NULL-terminated list);
 * vals[i] is NULL for a key that is absent. Unknown keys are errors naming
 * the nearest valid key. */
bool sim__fields(struct loader *L, struct fy_node *map, const char *what,
                 const char *const *keys, struct fy_node **vals);

/* The text of a scalar, NUL-terminated in buf. */
bool sim__scalar(struct loader *L, struct fy_node *n, const char *what, char *buf, size_t cap);
bool sim__get_time(struct loader *L, struct fy_node *n, const char *what, sim_time_t *v);
bool sim__get_rate(struct loader *L, struct fy_node *n, const char *what, uint64_t *v);
bool sim__get_size(struct loader *L, struct fy_node *n, const char *what, uint64_t min,
                   uint64_t max, uint64_t *v);
bool sim__get_uint(struct loader *L, struct fy_node *n, const char *what, uint64_t min,
                   uint64_t max, uint64_t *v);
bool sim__get_u32(struct loader *L, struct fy_node *n, const char *what, uint32_t min,
                  uint32_t max, uint32_t *v);
bool sim__get_prob(struct loader *L, struct fy_node *n, const char *what, double *v);
bool sim__get_bool(struct loader *L, struct fy_node *n, const char *what, bool *v);
bool sim__get_node(struct loader *L, struct fy_node *n, const char *what, uint32_t *index);
bool sim__get_host(struct loader *L, struct fy_node *n, const char *what, uint32_t *index);
bool sim__expect_seq(struct loader *L, struct fy_node *n, const char *what);
bool sim__expect_map(struct loader *L, struct fy_node *n, const char *what);

/* Nodes and links. sim__add_node fails on a duplicate name. */
bool sim__add_node(struct loader *L, const char *name, enum cfg_node_kind kind,
                   struct fy_node *at, uint32_t *index);
int64_t sim__find_node(struct loader *L, const char *name);
const char *sim__nearest_node(struct loader *L, const char *name);
void sim__add_link(struct loader *L, uint32_t a, uint32_t b, const struct cfg_link_params *p,
                   const struct cfg_pos *pos);
bool sim__link_params(struct loader *L, struct fy_node *map, const char *what,
                      struct cfg_link_params *p);

/* Topology generators (load_generators.c) and the workload (load_workload.c). */
bool sim__topology_generator(struct loader *L, struct fy_node *gen,
                             const struct cfg_link_params *defaults, uint64_t buffer);
bool sim__workload(struct loader *L, struct fy_node *workload);
/* One message more, as m gives it (load_workload.c); a host list as the
 * generators read it (`all` or names; *v allocated even on failure). */
bool sim__workload_add(struct loader *L, const struct cfg_msg *m);
bool sim__host_list(struct loader *L, struct fy_node *n, const char *what, uint32_t **v, size_t *nv);
/* A collective generator of kind `kind` (load_collective.c). */
bool sim__collective(struct loader *L, struct fy_node *gen, unsigned kind);
/* After the workload: every message's hosts are connected. */
bool sim__check_paths(struct loader *L);

/* Open a file a configuration names; only regular files, since a device
 * or a pipe (/dev/zero, /dev/stdin) may never end. NULL with a reason in
 * *why when it cannot be read. */
FILE *sim__open_regular(const char *path, const char **why);
/* YAML is Unicode text (YAML 1.2 section 5.1), and libfyaml 0.7 loops
 * forever on some invalid UTF-8: the offset of the first byte that is not
 * UTF-8 or is NUL, with what is wrong in *why, or n if all is well. */
size_t sim__text_check(const uint8_t *p, size_t n, const char **why);

/* What a run's memory grows with, and the estimate made from it (memory.c). */
struct sim_counts {
    uint64_t hosts, switches, links, qps, messages, data_bytes;
    uint64_t pcie_nodes; /* PCIe tree nodes per host, 0 when PCIe is not modelled */
};
uint64_t sim__memory_estimate(const struct sim_counts *c, const struct sim_memory_costs *k);
/* The least of physical memory, the cgroup's memory.max and ulimit -v;
 * *source says which. */
uint64_t sim__memory_available(const char **source);
/* The configuration's counts; queue pairs (distinct host pairs and qp
 * numbers) only when count_qps, as that takes a sort of the messages. */
void sim__config_counts(const struct loader *L, bool count_qps, struct sim_counts *c);
/* Fail at `at` (or pos) with the estimate when c does not fit the limit. */
bool sim__memory_check(struct loader *L, struct fy_node *at, const struct cfg_pos *pos,
                       const char *what, const struct sim_counts *c);

/* Levenshtein distance, for "did you mean". */
size_t sim__edit_distance(const char *a, const char *b);

/* ---- the fabric's keys (load_fabric.c) -------------------------------------------
 * Switch buffers, scheduling, PFC and ECN; the NIC's VLAN tag, PFC, receive
 * buffer and DCQCN; the priority map, the monitor and link faults
 * (docs/config.md, "The fabric"). Each group of keys is listed here so the
 * mapping that holds them can accept them alongside its own. */
/* keys of a switch or of switch_defaults */
#define SIM_SWITCH_FABRIC_KEYS "shared_buffer", "alpha", "reserved", "scheduler", "pfc", "ecn", \
    "latency", "forwarding"
#define SIM_NSWITCH_FABRIC_KEYS 8
/* keys of nic */
#define SIM_NIC_FABRIC_KEYS "vlan", "pfc", "rx_rate", "rx_buffer", "dcqcn", "cc", "dctcp", "timely", "hpcc"
#define SIM_NNIC_FABRIC_KEYS 9
/* top-level keys */
#define SIM_TOP_FABRIC_KEYS "qos", "monitor", "faults"
#define SIM_NTOP_FABRIC_KEYS 3

/* v holds the values of the keys above, NULL where absent. */
bool sim__switch_fabric(struct loader *L, struct fy_node **v, struct cfg_switch *s);
/* A switch with any of its own fabric keys gets a parameter set of its
 * own, starting from switch_defaults; sets *swp to its index. */
bool sim__switch_fabric_own(struct loader *L, struct fy_node **v, uint32_t *swp);
bool sim__nic_fabric(struct loader *L, struct fy_node **v, struct cfg_nic_fabric *n);

/* The NIC keys of the transports over TCP (load_tcp.c). */
#define SIM_NIC_TCP_KEYS "transport", "mpa_markers", "tcp", "host_cost"
#define SIM_NNIC_TCP_KEYS 4
bool sim__nic_tcp(struct loader *L, struct fy_node **v, struct cfg_nic *nic);
bool sim__check_iwarp(struct loader *L);
/* After the topology: the top-level keys, and checks that need the links
 * (buffers that hold their ports' headroom). */
bool sim__top_fabric(struct loader *L, struct fy_node **v);
bool sim__check_fabric(struct loader *L);

/* ---- InfiniBand (load_ib.c) ---------------------------------------------------------- */
/* A rate by its IB name ("4xEDR", "EDR" for one lane): data bits per
 * second and lanes; false when s is not one. */
bool sim__ib_rate(const char *s, uint64_t *bps, uint8_t *lanes);
/* The top-level `infiniband` mapping. */
bool sim__ib_top(struct loader *L, struct fy_node *map);
/* After the topology, when the fabric is InfiniBand (errors point at `at`). */
bool sim__check_ib(struct loader *L, struct fy_node *at);

#endif
