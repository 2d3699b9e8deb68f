/* load_generators.c - topology generators, so a large fabric needs no large file:
 * star, dumbbell, leaf-spine, the k-ary fat-tree of Al-Fares, Loukissas
 * and Vahdat ("A Scalable, Commodity Data Center Network Architecture",
 * SIGCOMM 2008, section 3.2), and the rail-optimised fabric of GPU
 * clusters (NVIDIA DGX SuperPOD reference architecture): NIC r of every
 * server on rail switch r, the rails joined by spines.
 *
 *   rail, 3 servers x 2 rails:    spine0 ... spineS-1
 *                                  |     \ /     |
 *                                rail0        rail1
 *                               /  |  \      /  |  \
 *                            s0n0 s1n0 s2n0  s0n1 s1n1 s2n1
 *
 *   fat-tree, k = 4:      core0   core1   core2   core3
 *                           |  \___  |  ___/ |  ___/|
 *                        agg0  agg1   ...   (k/2 per pod, k pods)
 *                           | X |
 *                       edge0  edge1  ...   (k/2 per pod)
 *                        /  \   /  \
 *                       h0  h1 h2  h3 ...   (k/2 per edge switch)
 *
 * Aggregation switch j of every pod connects to core switches
 * j*k/2 .. j*k/2 + k/2 - 1.
 */
#include <stdio.h>
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/util.h"

#define MAX_GENERATED_HOSTS 100000
/* Past k = 156 a fat-tree has more than CFG_MAX_NODES nodes; the bound only
 * keeps the counts below far from overflow, fits() does the refusing. */
#define MAX_FAT_TREE_K 65534

struct gen {
    struct loader *L;
    struct fy_node *at;
    const char *prefix;
    uint64_t buffer;
    struct cfg_pos pos;
};

static bool node(struct gen *g, enum cfg_node_kind kind, const char *base, uint64_t i, uint32_t *idx)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s%llu", g->prefix, base, (unsigned long long)i);
    if (!sim__add_node(g->L, name, kind, g->at, idx))
        return false;
    g->L->cfg->nodes[*idx].buffer = g->buffer;
    return true;
}

static void add_link(struct gen *g, uint32_t a, uint32_t b, const struct cfg_link_params *p)
{
    sim__add_link(g->L, a, b, p, &g->pos);
}

/* Before a generator adds anything: the fabric it would make, with what
 * exists already, must fit in memory and in the node limit. */
static bool fits(struct gen *g, const char *kind, uint64_t hosts, uint64_t switches, uint64_t links)
{
    struct sim_counts c;
    sim__config_counts(g->L, false, &c);
    c.hosts += hosts;
    c.switches += switches;
    c.links += links;
    if (!sim__memory_check(g->L, g->at, NULL, kind, &c))
        return false;
    if (c.hosts + c.switches > CFG_MAX_NODES)
        return sim__fail(g->L, g->at, "%s: %llu hosts and %llu switches make more than %d nodes", kind,
                         (unsigned long long)c.hosts, (unsigned long long)c.switches, CFG_MAX_NODES);
    return true;
}

static bool star(struct gen *g, struct fy_node **v, const struct cfg_link_params *link_p)
{
    uint64_t n;
    if (!v[0])
        return sim__fail(g->L, g->at, "star: needs 'hosts', the number of hosts");
    if (!sim__get_uint(g->L, v[0], "star hosts", 1, MAX_GENERATED_HOSTS, &n) ||
        !fits(g, "star", n, 1, n))
        return false;
    uint32_t sw, h;
    if (!node(g, CFG_SWITCH, "s", 0, &sw))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        if (!node(g, CFG_HOST, "h", i, &h))
            return false;
        add_link(g, h, sw, link_p);
    }
    return true;
}

static bool dumbbell(struct gen *g, struct fy_node **v, const struct cfg_link_params *host_p,
                     const struct cfg_link_params *bottleneck_p)
{
    uint64_t n;
    if (!v[0])
        return sim__fail(g->L, g->at, "dumbbell: needs 'hosts', the number of hosts on each side");
    if (!sim__get_uint(g->L, v[0], "dumbbell hosts", 1, MAX_GENERATED_HOSTS / 2, &n) ||
        !fits(g, "dumbbell", 2 * n, 2, 2 * n + 1))
        return false;
    uint32_t s[2], h;
    if (!node(g, CFG_SWITCH, "s", 0, &s[0]) || !node(g, CFG_SWITCH, "s", 1, &s[1]))
        return false;
    add_link(g, s[0], s[1], bottleneck_p);
    for (uint64_t i = 0; i < 2 * n; i++) {
        if (!node(g, CFG_HOST, "h", i, &h))
            return false;
        add_link(g, h, s[i >= n], host_p);
    }
    return true;
}

static bool leaf_spine(struct gen *g, struct fy_node **v, const struct cfg_link_params *host_p,
                       const struct cfg_link_params *fabric_p)
{
    uint64_t leaves, spines, per_leaf;
    if (!v[0] || !v[1] || !v[2])
        return sim__fail(g->L, g->at, "leaf-spine: needs 'leaves', 'spines' and 'hosts_per_leaf'");
    if (!sim__get_uint(g->L, v[0], "leaf-spine leaves", 1, 4096, &leaves) ||
        !sim__get_uint(g->L, v[1], "leaf-spine spines", 1, 4096, &spines) ||
        !sim__get_uint(g->L, v[2], "leaf-spine hosts_per_leaf", 1, 4096, &per_leaf))
        return false;
    if (leaves * per_leaf > MAX_GENERATED_HOSTS)
        return sim__fail(g->L, v[2], "leaf-spine: more than %d hosts", MAX_GENERATED_HOSTS);
    if (!fits(g, "leaf-spine", leaves * per_leaf, leaves + spines, leaves * spines + leaves * per_leaf))
        return false;
    uint32_t first_leaf = 0, first_spine = 0, idx;
    for (uint64_t i = 0; i < leaves; i++) {
        if (!node(g, CFG_SWITCH, "leaf", i, &idx))
            return false;
        if (!i)
            first_leaf = idx;
    }
    for (uint64_t j = 0; j < spines; j++) {
        if (!node(g, CFG_SWITCH, "spine", j, &idx))
            return false;
        if (!j)
            first_spine = idx;
    }
    for (uint64_t i = 0; i < leaves; i++)
        for (uint64_t j = 0; j < spines; j++)
            add_link(g, first_leaf + (uint32_t)i, first_spine + (uint32_t)j, fabric_p);
    for (uint64_t i = 0; i < leaves * per_leaf; i++) {
        if (!node(g, CFG_HOST, "h", i, &idx))
            return false;
        add_link(g, idx, first_leaf + (uint32_t)(i / per_leaf), host_p);
    }
    return true;
}

static bool fat_tree(struct gen *g, struct fy_node **v, const struct cfg_link_params *host_p,
                     const struct cfg_link_params *fabric_p)
{
    uint64_t k;
    if (!v[0])
        return sim__fail(g->L, g->at, "fat-tree: needs 'k', the number of ports per switch");
    if (!sim__get_uint(g->L, v[0], "fat-tree k", 2, MAX_FAT_TREE_K, &k))
        return false;
    if (k % 2)
        return sim__fail(g->L, v[0], "fat-tree k: %llu is odd; k must be even",
                         (unsigned long long)k);
    uint64_t half = k / 2, pods = k;
    /* k^3/4 hosts; k^2/4 core, k^2/2 aggregation and k^2/2 edge switches;
     * k^3/4 links at each of the three levels */
    if (!fits(g, "fat-tree", pods * half * half, 5 * half * half, 3 * pods * half * half))
        return false;
    uint32_t core0 = 0, agg0 = 0, edge0 = 0, idx;
    for (uint64_t i = 0; i < half * half; i++) {
        if (!node(g, CFG_SWITCH, "core", i, &idx))
            return false;
        if (!i)
            core0 = idx;
    }
    for (uint64_t i = 0; i < pods * half; i++) {
        if (!node(g, CFG_SWITCH, "agg", i, &idx))
            return false;
        if (!i)
            agg0 = idx;
    }
    for (uint64_t i = 0; i < pods * half; i++) {
        if (!node(g, CFG_SWITCH, "edge", i, &idx))
            return false;
        if (!i)
            edge0 = idx;
    }
    for (uint64_t p = 0; p < pods; p++) {
        for (uint64_t j = 0; j < half; j++) {
            uint32_t agg = agg0 + (uint32_t)(p * half + j);
            for (uint64_t c = 0; c < half; c++)
                add_link(g, agg, core0 + (uint32_t)(j * half + c), fabric_p);
            for (uint64_t e = 0; e < half; e++)
                add_link(g, edge0 + (uint32_t)(p * half + e), agg, fabric_p);
        }
    }
    for (uint64_t i = 0; i < pods * half * half; i++) {
        if (!node(g, CFG_HOST, "h", i, &idx))
            return false;
        add_link(g, idx, edge0 + (uint32_t)(i / half), host_p);
    }
    return true;
}

/* NCCL's own cost model charges an NVLink ring step 0.47 us of hardware
 * latency with its LL protocol (src/graph/tuning.cc, hwLat, NVLink, ring):
 * a slice crossing the NVSwitch from one GPU's memory to another's. */
#define NVLINK_STEP_LATENCY (470 * SIM_NS)

/* Each NIC of a server is a host of its own, s{server}n{rail}, on its
 * own link to its rail switch; with server: gpu8 each gets the PCIe tree
 * of its place in an 8-GPU server, the first half of the rails on
 * socket0, the rest on socket1. The GPUs beside a server's NICs share
 * its NVSwitch (nvlink: a generation; 4 by default with gpu8, none with
 * plain), which hierarchical collectives use between them. */
static bool rail(struct gen *g, struct fy_node **v, const struct cfg_link_params *host_p,
                 const struct cfg_link_params *fabric_p)
{
    uint64_t servers, rails, spines = 1;
    if (!v[0] || !v[1])
        return sim__fail(g->L, g->at, "rail: needs 'servers' and 'rails'");
    if (!sim__get_uint(g->L, v[0], "rail servers", 1, 4096, &servers) ||
        !sim__get_uint(g->L, v[1], "rail rails", 1, 64, &rails) ||
        (v[2] && !sim__get_uint(g->L, v[2], "rail spines", 0, 4096, &spines)))
        return false;
    bool gpu8 = false;
    if (v[3]) {
        char buf[16];
        if (!sim__scalar(g->L, v[3], "rail server", buf, sizeof buf))
            return false;
        if (strcmp(buf, "gpu8") && strcmp(buf, "plain"))
            return sim__fail(g->L, v[3], "rail server: '%s' is not gpu8 or plain", buf);
        gpu8 = !strcmp(buf, "gpu8");
    }
    uint32_t generation = gpu8 ? 4 : 0;
    struct cfg_nvswitch nvs = {.latency = NVLINK_STEP_LATENCY, .ports = (uint32_t)rails};
    if ((v[6] && !sim__get_u32(g->L, v[6], "rail nvlink", 3, 5, &generation)) ||
        (v[7] && !sim__get_time(g->L, v[7], "rail nvlink_latency", &nvs.latency)))
        return false;
    if (v[7] && !generation)
        return sim__fail(g->L, v[7], "rail nvlink_latency: the servers have no NVLink (give "
                                     "nvlink: 3, 4 or 5, or server: gpu8)");
    nvs.rate = sim__nvlink_rate(generation);
    if (servers * rails > MAX_GENERATED_HOSTS)
        return sim__fail(g->L, v[0], "rail: more than %d hosts", MAX_GENERATED_HOSTS);
    if (!fits(g, "rail", servers * rails, rails + spines, rails * spines + servers * rails))
        return false;
    uint32_t rail0 = 0, spine0 = 0, idx;
    for (uint64_t r = 0; r < rails; r++) {
        if (!node(g, CFG_SWITCH, "rail", r, &idx))
            return false;
        if (!r)
            rail0 = idx;
    }
    for (uint64_t j = 0; j < spines; j++) {
        if (!node(g, CFG_SWITCH, "spine", j, &idx))
            return false;
        if (!j)
            spine0 = idx;
    }
    for (uint64_t r = 0; r < rails; r++)
        for (uint64_t j = 0; j < spines; j++)
            add_link(g, rail0 + (uint32_t)r, spine0 + (uint32_t)j, fabric_p);
    struct sim_config *cfg = g->L->cfg;
    for (uint64_t i = 0; i < servers; i++) {
        if (generation) {
            SIM_GROW(cfg->nvswitches, cfg->capnvswitches, cfg->nnvswitches);
            cfg->nvswitches[cfg->nnvswitches++] = nvs;
        }
        for (uint64_t r = 0; r < rails; r++) {
            char name[256];
            snprintf(name, sizeof name, "%ss%llun%llu", g->prefix, (unsigned long long)i,
                     (unsigned long long)r);
            if (!sim__add_node(g->L, name, CFG_HOST, g->at, &idx))
                return false;
            add_link(g, idx, rail0 + (uint32_t)r, host_p);
            if (gpu8)
                sim__pcie_gpu_server_nic(g->L, idx, 2 * r >= rails);
            if (generation) {
                cfg->nodes[idx].nvswitch = (uint32_t)cfg->nnvswitches;
                cfg->nodes[idx].nvlink_port = (uint32_t)r;
            }
        }
    }
    return true;
}

/* Keys every kind shares come first: kind, prefix, then the kind's own. */
static const char *const star_keys[] = {"hosts", "link", "kind", "prefix", NULL};
static const char *const dumbbell_keys[] = {"hosts", "host_link", "bottleneck", "kind", "prefix", NULL};
static const char *const leaf_spine_keys[] = {"leaves", "spines", "hosts_per_leaf", "host_link",
                                              "fabric_link", "kind", "prefix", NULL};
static const char *const fat_tree_keys[] = {"k", "host_link", "fabric_link", "kind", "prefix", NULL};
static const char *const rail_keys[] = {"servers", "rails", "spines", "server", "host_link",
                                        "fabric_link", "nvlink", "nvlink_latency", "kind",
                                        "prefix", NULL};

static size_t nkeys(const char *const *keys)
{
    size_t n = 0;
    while (keys[n])
        n++;
    return n;
}

bool sim__topology_generator(struct loader *L, struct fy_node *gen,
                             const struct cfg_link_params *defaults, uint64_t buffer)
{
    if (!sim__expect_map(L, gen, "generate"))
        return false;
    struct fy_node *kind_n = fy_node_mapping_lookup_value_by_string(gen, "kind", FY_NT);
    if (!kind_n)
        return sim__fail(L, gen, "generate: needs a 'kind': star, dumbbell, leaf-spine, fat-tree or rail");
    char kind[64];
    if (!sim__scalar(L, kind_n, "generate kind", kind, sizeof kind))
        return false;
    const char *const *keys;
    if (!strcmp(kind, "star"))
        keys = star_keys;
    else if (!strcmp(kind, "dumbbell"))
        keys = dumbbell_keys;
    else if (!strcmp(kind, "leaf-spine"))
        keys = leaf_spine_keys;
    else if (!strcmp(kind, "fat-tree"))
        keys = fat_tree_keys;
    else if (!strcmp(kind, "rail"))
        keys = rail_keys;
    else
        return sim__fail(L, kind_n, "generate kind: '%s' is not star, dumbbell, leaf-spine, fat-tree "
                                    "or rail", kind);
    struct fy_node *v[11];
    if (!sim__fields(L, gen, kind, keys, v))
        return false;
    size_t n = nkeys(keys);
    struct gen g = {.L = L, .at = gen, .prefix = "", .buffer = buffer, .pos = sim__pos(L, gen)};
    char prefix[128];
    if (v[n - 1]) {
        if (!sim__scalar(L, v[n - 1], "generate prefix", prefix, sizeof prefix))
            return false;
        g.prefix = prefix;
    }
    /* link parameter mappings follow the counts in each key list */
    struct cfg_link_params p1 = *defaults, p2 = *defaults;
    if (keys == star_keys)
        return (!v[1] || sim__link_params(L, v[1], "star link", &p1)) && star(&g, v, &p1);
    if (keys == dumbbell_keys)
        return (!v[1] || sim__link_params(L, v[1], "dumbbell host_link", &p1)) &&
               (!v[2] || sim__link_params(L, v[2], "dumbbell bottleneck", &p2)) &&
               dumbbell(&g, v, &p1, &p2);
    if (keys == leaf_spine_keys)
        return (!v[3] || sim__link_params(L, v[3], "leaf-spine host_link", &p1)) &&
               (!v[4] || sim__link_params(L, v[4], "leaf-spine fabric_link", &p2)) &&
               leaf_spine(&g, v, &p1, &p2);
    if (keys == rail_keys)
        return (!v[4] || sim__link_params(L, v[4], "rail host_link", &p1)) &&
               (!v[5] || sim__link_params(L, v[5], "rail fabric_link", &p2)) &&
               rail(&g, v, &p1, &p2);
    return (!v[1] || sim__link_params(L, v[1], "fat-tree host_link", &p1)) &&
           (!v[2] || sim__link_params(L, v[2], "fat-tree fabric_link", &p2)) &&
           fat_tree(&g, v, &p1, &p2);
}
