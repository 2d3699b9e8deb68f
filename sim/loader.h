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

#include "cfg.h"

#define VALUE_MAX 4096 /* longest scalar value read */

struct name_index {
    uint32_t *slots; /* node index + 1; 0 is empty */
    size_t cap;
};

struct loader {
    struct sim_config *cfg;
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

/* Topology generators (config_gen.c) and the workload (config_workload.c). */
bool sim__topology_generator(struct loader *L, struct fy_node *gen,
                             const struct cfg_link_params *defaults, uint64_t buffer);
bool sim__workload(struct loader *L, struct fy_node *workload);
/* After the workload: every message's hosts are connected. */
bool sim__check_paths(struct loader *L);

/* Levenshtein distance, for "did you mean". */
size_t sim__edit_distance(const char *a, const char *b);

#endif
