/* load_pcie.c - the pcie sections of a configuration (docs/config.md):
 * the network-wide one, each host's own, and where messages' buffers live
 * (src_mem, dst_mem, gpudirect).
 *
 * A host's pcie mapping is read as if its keys replaced the same keys of
 * the top-level one: a host that names `gpus` has its own list, and still
 * takes `sockets` or `link_defaults` from the top level unless it names
 * them too. Placements are checked once the workload is known; GPUDirect
 * between a NIC and a GPU on different sockets is refused unless
 * cross_socket_p2p allows it, with the region, the GPU and the NIC named.
 */
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/util.h"

#define LINK_KEYS "gen", "width", "mps", "mrrs", "rcb", "completions", "delay"
enum { L_GEN, L_WIDTH, L_MPS, L_MRRS, L_RCB, L_COMPLETIONS, L_DELAY, NLINK };

static const char *const tree_keys[] = {"model", "sockets", "socket_link", "root",
                                        "cross_socket_p2p", "link_defaults", "switches", "nic",
                                        "gpus", "nvlink", "cxl", NULL};
enum { K_MODEL, K_SOCKETS, K_SOCKET_LINK, K_ROOT, K_CROSS, K_LINK_DEFAULTS, K_SWITCHES, K_NIC,
       K_GPUS, K_NVLINK, K_CXL, NKEYS };

static struct sim_pcie_config *config_of(struct loader *L)
{
    if (!L->cfg->pcie) {
        L->cfg->pcie = sim__xcalloc(1, sizeof *L->cfg->pcie);
        L->cfg->pcie->model = true;
    }
    return L->cfg->pcie;
}

/* ---- defaults ------------------------------------------------------------------- */
static void link_defaults(struct cfg_pcie_link *l)
{
    *l = (struct cfg_pcie_link){
        .gen = PCIE_DEFAULT_GEN,
        .width = PCIE_DEFAULT_WIDTH,
        .mps = PCIE_DEFAULT_MPS,
        .mrrs = PCIE_DEFAULT_MRRS,
        .rcb = PCIE_DEFAULT_RCB,
    };
}

static uint32_t add_node(struct cfg_pcie *t, const char *name, enum pcie_node_kind kind,
                         uint32_t parent, const struct cfg_pcie_link *link)
{
    t->nodes = sim__xrealloc(t->nodes, (t->nnodes + 1) * sizeof *t->nodes);
    uint32_t i = t->nnodes++;
    struct cfg_pcie_node *n = &t->nodes[i];
    *n = (struct cfg_pcie_node){
        .name = sim__xstrdup(name),
        .kind = (uint8_t)kind,
        .parent = kind == PCIE_ROOT ? i : parent,
        .socket = kind == PCIE_ROOT ? i : t->nodes[parent].socket,
        .link = *link,
        .latency = PCIE_DEFAULT_SWITCH_LATENCY,
        .read_latency = PCIE_DEFAULT_GPU_READ_LATENCY,
        .copy_latency = PCIE_DEFAULT_COPY_LATENCY,
        .read_credits = PCIE_DEFAULT_READ_CREDITS,
        .prefetch = PCIE_DEFAULT_PREFETCH,
        .wqe_prefetch = PCIE_DEFAULT_WQE_PREFETCH,
    };
    return i;
}

static void tree_scalars(struct cfg_pcie *t)
{
    *t = (struct cfg_pcie){
        .sockets = 1,
        .socket_rate = PCIE_DEFAULT_SOCKET_RATE,
        .socket_delay = PCIE_DEFAULT_SOCKET_DELAY,
        .rc_latency = PCIE_DEFAULT_RC_LATENCY,
        .rc_read_latency = PCIE_DEFAULT_RC_READ_LATENCY,
        .rc_write_latency = PCIE_DEFAULT_RC_WRITE_LATENCY,
        .peer_read_factor = PCIE_DEFAULT_PEER_READ_FACTOR,
    };
}

static void add_roots(struct cfg_pcie *t, const struct cfg_pcie_link *link)
{
    for (uint32_t s = 0; s < t->sockets; s++) {
        char name[24];
        snprintf(name, sizeof name, "socket%u", s);
        add_node(t, name, PCIE_ROOT, 0, link);
    }
}

void sim__cfg_pcie_defaults(struct cfg_pcie *t)
{
    struct cfg_pcie_link link;
    link_defaults(&link);
    tree_scalars(t);
    add_roots(t, &link);
    t->nic = add_node(t, "nic", PCIE_NIC, 0, &link);
}

/* ---- values ---------------------------------------------------------------------- */
static bool pow2_between(struct loader *L, struct fy_node *n, const char *what, uint64_t lo,
                         uint64_t hi, uint16_t *v)
{
    uint64_t x;
    if (!sim__get_size(L, n, what, lo, hi, &x))
        return false;
    if (x & (x - 1))
        return sim__fail(L, n, "%s: %llu is not a power of two", what, (unsigned long long)x);
    *v = (uint16_t)x;
    return true;
}

static bool link_values(struct loader *L, struct fy_node **v, const char *what, struct cfg_pcie_link *l)
{
    char w[128];
    uint32_t x;
    snprintf(w, sizeof w, "%s gen", what);
    if (v[L_GEN]) {
        if (!sim__get_u32(L, v[L_GEN], w, 1, 6, &x))
            return false;
        l->gen = (uint8_t)x;
    }
    snprintf(w, sizeof w, "%s width", what);
    if (v[L_WIDTH]) {
        if (!sim__get_u32(L, v[L_WIDTH], w, 1, 32, &x))
            return false;
        if (x & (x - 1))
            return sim__fail(L, v[L_WIDTH], "%s: x%u is not one of x1, x2, x4, x8, x16, x32", w, x);
        l->width = (uint8_t)x;
    }
    snprintf(w, sizeof w, "%s mps", what);
    if (v[L_MPS] && !pow2_between(L, v[L_MPS], w, 128, 4096, &l->mps))
        return false;
    snprintf(w, sizeof w, "%s mrrs", what);
    if (v[L_MRRS] && !pow2_between(L, v[L_MRRS], w, 128, 4096, &l->mrrs))
        return false;
    snprintf(w, sizeof w, "%s rcb", what);
    if (v[L_RCB] && !pow2_between(L, v[L_RCB], w, 64, 512, &l->rcb))
        return false;
    if (v[L_COMPLETIONS]) {
        char buf[16];
        snprintf(w, sizeof w, "%s completions", what);
        if (!sim__scalar(L, v[L_COMPLETIONS], w, buf, sizeof buf))
            return false;
        if (strcmp(buf, "mps") && strcmp(buf, "rcb"))
            return sim__fail(L, v[L_COMPLETIONS], "%s: '%s' is not 'mps' or 'rcb'", w, buf);
        l->rcb_completions = !strcmp(buf, "rcb");
    }
    snprintf(w, sizeof w, "%s delay", what);
    return !v[L_DELAY] || sim__get_time(L, v[L_DELAY], w, &l->delay);
}

static bool valid_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

static int64_t find(const struct cfg_pcie *t, const char *name)
{
    for (uint32_t i = 0; i < t->nnodes; i++)
        if (!strcmp(t->nodes[i].name, name))
            return i;
    return -1;
}

static bool node_name(struct loader *L, struct fy_node *n, const char *what, const struct cfg_pcie *t,
                      char *buf, size_t cap)
{
    if (!n)
        return sim__fail(L, NULL, "%s: needs a name", what);
    if (!sim__scalar(L, n, what, buf, cap))
        return false;
    if (!valid_name(buf))
        return sim__fail(L, n, "%s: '%s' is not a name (letters, digits, _, - and .)", what, buf);
    if (!strcmp(buf, "nic") || !strcmp(buf, "host") || find(t, buf) >= 0)
        return sim__fail(L, n, "%s: the name '%s' is taken", what, buf);
    return true;
}

/* `at`: a socket or a switch named before. */
static bool parent_of(struct loader *L, struct fy_node *n, const char *what, const struct cfg_pcie *t,
                      uint32_t *parent)
{
    char buf[128];
    if (!n) {
        *parent = 0;
        return true;
    }
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    int64_t i = find(t, buf);
    if (i < 0 || (t->nodes[i].kind != PCIE_ROOT && t->nodes[i].kind != PCIE_SWITCH))
        return sim__fail(L, n, "%s: '%s' is not a socket or a switch listed before", what, buf);
    *parent = (uint32_t)i;
    return true;
}

/* ---- one tree ---------------------------------------------------------------------- */
struct origin {
    const char *top, *host; /* the files the top-level and the host's mappings come from */
    bool from_top[NKEYS];
};

static void file_of(struct loader *L, const struct origin *o, int key)
{
    L->file = o->from_top[key] ? o->top : o->host;
}

static bool switches(struct loader *L, struct fy_node *seq, const struct cfg_pcie_link *dl,
                     struct cfg_pcie *t)
{
    static const char *const keys[] = {LINK_KEYS, "name", "at", "latency", NULL};
    if (!sim__expect_seq(L, seq, "pcie switches"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[NLINK + 4];
        char name[128];
        uint32_t parent;
        struct cfg_pcie_link link = *dl;
        if (!sim__fields(L, item, "pcie switch", keys, v))
            return false;
        if (!v[NLINK])
            return sim__fail(L, item, "pcie switch: needs a name");
        if (!node_name(L, v[NLINK], "pcie switch name", t, name, sizeof name) ||
            !parent_of(L, v[NLINK + 1], "pcie switch at", t, &parent) ||
            !link_values(L, v, "pcie switch", &link))
            return false;
        if (t->nnodes + 2 >= PCIE_MAX_NODES)
            return sim__fail(L, item, "pcie: more than %d switches and GPUs", PCIE_MAX_NODES - 10);
        uint32_t i = add_node(t, name, PCIE_SWITCH, parent, &link);
        if (v[NLINK + 2] && !sim__get_time(L, v[NLINK + 2], "pcie switch latency", &t->nodes[i].latency))
            return false;
    }
    return true;
}

static bool read_credits(struct loader *L, struct fy_node *n, const char *what, uint32_t *v)
{
    return !n || sim__get_u32(L, n, what, 1, 4096, v);
}

static bool nic(struct loader *L, struct fy_node *map, const struct cfg_pcie_link *dl,
                struct cfg_pcie *t)
{
    static const char *const keys[] = {LINK_KEYS, "at", "read_credits", "prefetch", "wqe", "msix",
                                       "wqe_prefetch", NULL};
    struct fy_node *v[NLINK + 7] = {0};
    uint32_t parent = 0;
    struct cfg_pcie_link link = *dl;
    if (map && (!sim__fields(L, map, "pcie nic", keys, v) ||
                !parent_of(L, v[NLINK], "pcie nic at", t, &parent) ||
                !link_values(L, v, "pcie nic", &link)))
        return false;
    t->nic = add_node(t, "nic", PCIE_NIC, parent, &link);
    struct cfg_pcie_node *n = &t->nodes[t->nic];
    if (!read_credits(L, v[NLINK + 1], "pcie nic read_credits", &n->read_credits))
        return false;
    if (v[NLINK + 2] && !sim__get_size(L, v[NLINK + 2], "pcie nic prefetch", 0, CFG_MAX_MESSAGE,
                                       &n->prefetch))
        return false;
    if (v[NLINK + 3]) {
        char buf[16];
        if (!sim__scalar(L, v[NLINK + 3], "pcie nic wqe", buf, sizeof buf))
            return false;
        if (strcmp(buf, "fetch") && strcmp(buf, "inline"))
            return sim__fail(L, v[NLINK + 3], "pcie nic wqe: '%s' is not 'fetch' or 'inline'", buf);
        n->inline_wqe = !strcmp(buf, "inline");
    }
    if (v[NLINK + 4] && !sim__get_bool(L, v[NLINK + 4], "pcie nic msix", &n->msix))
        return false;
    return !v[NLINK + 5] ||
           sim__get_u32(L, v[NLINK + 5], "pcie nic wqe_prefetch", 1, 65536, &n->wqe_prefetch);
}

static bool gpus(struct loader *L, struct fy_node *seq, const struct cfg_pcie_link *dl,
                 struct cfg_pcie *t)
{
    static const char *const keys[] = {LINK_KEYS, "name", "at", "read_latency", "copy_latency",
                                       "read_credits", NULL};
    if (!sim__expect_seq(L, seq, "pcie gpus"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[NLINK + 6];
        char name[128];
        uint32_t parent;
        struct cfg_pcie_link link = *dl;
        if (!sim__fields(L, item, "pcie gpu", keys, v))
            return false;
        if (!v[NLINK])
            return sim__fail(L, item, "pcie gpu: needs a name");
        if (!node_name(L, v[NLINK], "pcie gpu name", t, name, sizeof name) ||
            !parent_of(L, v[NLINK + 1], "pcie gpu at", t, &parent) ||
            !link_values(L, v, "pcie gpu", &link))
            return false;
        if (t->nnodes + 1 >= PCIE_MAX_NODES)
            return sim__fail(L, item, "pcie: more than %d switches and GPUs", PCIE_MAX_NODES - 10);
        uint32_t i = add_node(t, name, PCIE_GPU, parent, &link);
        struct cfg_pcie_node *n = &t->nodes[i];
        if ((v[NLINK + 2] &&
             !sim__get_time(L, v[NLINK + 2], "pcie gpu read_latency", &n->read_latency)) ||
            (v[NLINK + 3] &&
             !sim__get_time(L, v[NLINK + 3], "pcie gpu copy_latency", &n->copy_latency)) ||
            !read_credits(L, v[NLINK + 4], "pcie gpu read_credits", &n->read_credits))
            return false;
    }
    return true;
}

static struct cfg_pcie *tree(struct loader *L, struct fy_node **v, const struct origin *o)
{
    struct cfg_pcie *t = sim__xcalloc(1, sizeof *t);
    struct cfg_pcie_link dl;
    tree_scalars(t);
    link_defaults(&dl);
    bool ok = true;
    if (ok && v[K_SOCKETS]) {
        file_of(L, o, K_SOCKETS);
        ok = sim__get_u32(L, v[K_SOCKETS], "pcie sockets", 1, PCIE_MAX_SOCKETS, &t->sockets);
    }
    if (ok && v[K_SOCKET_LINK]) {
        static const char *const keys[] = {"rate", "delay", NULL};
        struct fy_node *sv[3];
        file_of(L, o, K_SOCKET_LINK);
        ok = sim__fields(L, v[K_SOCKET_LINK], "pcie socket_link", keys, sv) &&
             (!sv[0] || sim__get_rate(L, sv[0], "pcie socket_link rate", &t->socket_rate)) &&
             (!sv[1] || sim__get_time(L, sv[1], "pcie socket_link delay", &t->socket_delay));
    }
    if (ok && v[K_ROOT]) {
        static const char *const keys[] = {"read_latency", "latency", "peer_read_factor", "write_latency",
                                           NULL};
        struct fy_node *rv[5];
        file_of(L, o, K_ROOT);
        ok = sim__fields(L, v[K_ROOT], "pcie root", keys, rv) &&
             (!rv[0] || sim__get_time(L, rv[0], "pcie root read_latency", &t->rc_read_latency)) &&
             (!rv[1] || sim__get_time(L, rv[1], "pcie root latency", &t->rc_latency)) &&
             (!rv[2] || sim__get_prob(L, rv[2], "pcie root peer_read_factor", &t->peer_read_factor)) &&
             (!rv[3] || sim__get_time(L, rv[3], "pcie root write_latency", &t->rc_write_latency));
        if (ok && t->peer_read_factor <= 0)
            ok = sim__fail(L, rv[2], "pcie root peer_read_factor: must be above zero");
    }
    if (ok && v[K_CROSS]) {
        char buf[16];
        file_of(L, o, K_CROSS);
        ok = sim__scalar(L, v[K_CROSS], "pcie cross_socket_p2p", buf, sizeof buf);
        if (ok && strcmp(buf, "allow") && strcmp(buf, "refuse"))
            ok = sim__fail(L, v[K_CROSS], "pcie cross_socket_p2p: '%s' is not 'allow' or 'refuse'", buf);
        t->cross_socket_p2p = ok && !strcmp(buf, "allow");
    }
    if (ok && v[K_LINK_DEFAULTS]) {
        static const char *const keys[] = {LINK_KEYS, NULL};
        struct fy_node *lv[NLINK + 1];
        file_of(L, o, K_LINK_DEFAULTS);
        ok = sim__fields(L, v[K_LINK_DEFAULTS], "pcie link_defaults", keys, lv) &&
             link_values(L, lv, "pcie link_defaults", &dl);
    }
    if (ok)
        add_roots(t, &dl);
    if (ok && v[K_SWITCHES]) {
        file_of(L, o, K_SWITCHES);
        ok = switches(L, v[K_SWITCHES], &dl, t);
    }
    if (ok) {
        file_of(L, o, K_NIC);
        ok = nic(L, v[K_NIC], &dl, t);
    }
    if (ok && v[K_GPUS]) {
        file_of(L, o, K_GPUS);
        ok = gpus(L, v[K_GPUS], &dl, t);
    }
    if (ok && v[K_NVLINK]) {
        uint32_t gen;
        file_of(L, o, K_NVLINK);
        ok = sim__get_u32(L, v[K_NVLINK], "pcie nvlink", 3, 5, &gen);
        t->nvlink_rate = sim__nvlink_rate(gen);
    }
    if (ok && v[K_CXL]) {
        file_of(L, o, K_CXL);
        ok = sim__cxl_devices(L, v[K_CXL], t);
    }
    L->file = o->host;
    if (!ok) {
        sim__cfg_pcie_free(t);
        return NULL;
    }
    return t;
}

bool sim__pcie_top(struct loader *L, struct fy_node *map)
{
    struct sim_pcie_config *pc = config_of(L);
    struct fy_node *v[NKEYS + 1];
    struct origin o = {.top = L->file, .host = L->file};
    for (int k = 0; k < NKEYS; k++)
        o.from_top[k] = true;
    if (!sim__fields(L, map, "pcie", tree_keys, v))
        return false;
    if (v[K_MODEL] && !sim__get_bool(L, v[K_MODEL], "pcie model", &pc->model))
        return false;
    pc->present = true;
    pc->deflt = tree(L, v, &o);
    return pc->deflt != NULL;
}

/* NVIDIA's figures per GPU, both directions together (nvidia.com, "NVLink
 * and NVSwitch": third generation 600 GB/s (A100), fourth 900 GB/s (H100),
 * fifth 1,800 GB/s (Blackwell)); a copy one way gets half. */
uint64_t sim__nvlink_rate(unsigned generation)
{
    static const uint64_t gbytes_both_ways[] = {[3] = 600, [4] = 900, [5] = 1800};
    if (generation < 3 || generation > 5)
        return 0;
    return gbytes_both_ways[generation] / 2 * 8 * UINT64_C(1000000000);
}

const char *sim__pcie_via_name(unsigned via)
{
    static const char *const names[] = {
#define PCIE__VIA_NAME(name, str) str,
        PCIE_COPY_VIAS(PCIE__VIA_NAME)
#undef PCIE__VIA_NAME
    };
    return via < PCIE_COPY_VIA_COUNT ? names[via] : "?";
}

bool sim__pcie_copies(struct loader *L, struct fy_node *seq)
{
    static const char *const keys[] = {"host", "src", "dst", "size", "via", "start", NULL};
    struct sim_pcie_config *pc = config_of(L);
    if (!sim__expect_seq(L, seq, "copies"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[7];
        if (!sim__fields(L, item, "copy", keys, v))
            return false;
        if (!v[0] || !v[1] || !v[2] || !v[3])
            return sim__fail(L, item, "copy: needs 'host', 'src', 'dst' and 'size'");
        struct cfg_pcie_copy c = {.via = PCIE_COPY_NVLINK, .pos = sim__pos(L, item)};
        char src[128], dst[128];
        if (!sim__get_host(L, v[0], "copy host", &c.host) ||
            !sim__scalar(L, v[1], "copy src", src, sizeof src) ||
            !sim__scalar(L, v[2], "copy dst", dst, sizeof dst) ||
            !sim__get_size(L, v[3], "copy size", 1, CFG_MAX_MESSAGE, &c.size) ||
            (v[5] && !sim__get_time(L, v[5], "copy start", &c.start)))
            return false;
        if (v[4]) {
            char via[16];
            if (!sim__scalar(L, v[4], "copy via", via, sizeof via))
                return false;
            unsigned k;
            for (k = 0; k < PCIE_COPY_VIA_COUNT && strcmp(via, sim__pcie_via_name(k)); k++)
                ;
            if (k == PCIE_COPY_VIA_COUNT)
                return sim__fail(L, v[4], "copy via: '%s' is not nvlink, p2p or bounce", via);
            c.via = (uint8_t)k;
        }
        if (!strcmp(src, dst))
            return sim__fail(L, v[2], "copy dst: the same GPU as src");
        c.src = sim__xstrdup(src);
        c.dst = sim__xstrdup(dst);
        SIM_GROW(pc->copies, pc->capcopies, pc->ncopies);
        pc->copies[pc->ncopies++] = c;
    }
    return true;
}

/* A copy's GPUs exist in its host's tree, and its way is open. */
static bool check_copy(struct loader *L, struct cfg_pcie_copy *c)
{
    const struct sim_config *cfg = L->cfg;
    const struct cfg_pcie *t = sim__pcie_tree(cfg, c->host);
    const char *host = cfg->nodes[c->host].name;
    if (!cfg->pcie->present || !cfg->pcie->model)
        return sim__fail_at(L, &c->pos, "copy: needs PCIe modelled (a pcie section, model: true)");
    const char *names[2] = {c->src, c->dst};
    uint32_t *at[2] = {&c->from, &c->to};
    for (int side = 0; side < 2; side++) {
        int64_t i = find(t, names[side]);
        if (i < 0 || t->nodes[i].kind != PCIE_GPU)
            return sim__fail_at(L, &c->pos, "copy %s: '%s' is not a GPU of host '%s'",
                                side ? "dst" : "src", names[side], host);
        *at[side] = (uint32_t)i;
    }
    if (c->via == PCIE_COPY_NVLINK && !t->nvlink_rate)
        return sim__fail_at(L, &c->pos, "copy via nvlink: host '%s' has no NVLink (pcie nvlink: 3, "
                                        "4 or 5)", host);
    if (c->via == PCIE_COPY_P2P && t->nodes[c->from].socket != t->nodes[c->to].socket &&
        !t->cross_socket_p2p)
        return sim__fail_at(L, &c->pos, "copy via p2p: '%s' and '%s' of host '%s' are on different "
                                        "sockets, and cross-socket peer-to-peer is refused (pcie "
                                        "cross_socket_p2p: refuse)", c->src, c->dst, host);
    return true;
}

static void set_host_tree(struct sim_pcie_config *pc, uint32_t node, struct cfg_pcie *t)
{
    pc->present = true;
    if (node >= pc->nhost) {
        size_t n = node + 1 > 2 * pc->nhost ? node + 1 : 2 * pc->nhost;
        pc->host = sim__xrealloc(pc->host, n * sizeof *pc->host);
        memset(pc->host + pc->nhost, 0, (n - pc->nhost) * sizeof *pc->host);
        pc->nhost = n;
    }
    pc->host[node] = t;
}

void sim__pcie_gpu_server_nic(struct loader *L, uint32_t node, uint32_t socket)
{
    struct cfg_pcie *t = sim__xcalloc(1, sizeof *t);
    struct cfg_pcie_link link;
    tree_scalars(t);
    t->sockets = 2;
    link_defaults(&link);
    link.gen = 5;
    add_roots(t, &link);
    uint32_t sw = add_node(t, "plx", PCIE_SWITCH, socket, &link);
    t->nic = add_node(t, "nic", PCIE_NIC, sw, &link);
    add_node(t, "gpu0", PCIE_GPU, sw, &link);
    set_host_tree(config_of(L), node, t);
}

bool sim__pcie_host(struct loader *L, uint32_t node, struct fy_node *map)
{
    struct sim_pcie_config *pc = config_of(L);
    struct fy_node *hv[NKEYS + 1], *tv[NKEYS + 1] = {0}, *v[NKEYS + 1];
    struct origin o = {.top = L->cfg->path, .host = L->file};
    if (!sim__fields(L, map, "host pcie", tree_keys, hv))
        return false;
    if (hv[K_MODEL])
        return sim__fail(L, hv[K_MODEL], "host pcie model: PCIe is modelled in every host or in "
                                         "none; set model in the top-level pcie section");
    struct fy_node *root = fy_document_root(fy_node_document(map));
    struct fy_node *top = root ? fy_node_mapping_lookup_by_string(root, "pcie", FY_NT) : NULL;
    if (top && fy_node_is_mapping(top)) {
        const char *saved = L->file;
        L->file = o.top;
        bool ok = sim__fields(L, top, "pcie", tree_keys, tv);
        L->file = saved;
        if (!ok)
            return false;
    }
    for (int k = 0; k < NKEYS; k++) {
        v[k] = hv[k] ? hv[k] : tv[k];
        o.from_top[k] = !hv[k];
    }
    struct cfg_pcie *t = tree(L, v, &o);
    if (!t)
        return false;
    set_host_tree(pc, node, t);
    return true;
}

/* ---- where buffers live ---------------------------------------------------------- */
static uint16_t add_mem(struct loader *L, struct sim_pcie_config *pc, struct fy_node *n,
                        const char *key, const char *name, bool gpudirect)
{
    /* one entry per place it is written; past 65535 of them, equal texts share */
    if (pc->nmems >= UINT16_MAX) {
        for (size_t i = 0; i < pc->nmems; i++)
            if (pc->mems[i].gpudirect == gpudirect && !strcmp(pc->mems[i].name, name))
                return (uint16_t)(i + 1);
        sim__fail(L, n, "%s: more than %u different memory placements", key, UINT16_MAX);
        return 0;
    }
    SIM_GROW(pc->mems, pc->capmems, pc->nmems);
    pc->mems[pc->nmems] = (struct cfg_pcie_mem){sim__xstrdup(name), gpudirect, sim__pos(L, n), key};
    return (uint16_t)++pc->nmems;
}

bool sim__pcie_mem(struct loader *L, struct fy_node *src, struct fy_node *dst,
                   struct fy_node *gpudirect, uint16_t mem[2])
{
    struct sim_pcie_config *pc = config_of(L);
    bool direct = true;
    if (gpudirect && !sim__get_bool(L, gpudirect, "gpudirect", &direct))
        return false;
    struct fy_node *n[2] = {src, dst};
    static const char *const keys[2] = {"src_mem", "dst_mem"};
    for (int side = 0; side < 2; side++) {
        char name[128];
        mem[side] = 0;
        if (!n[side])
            continue;
        if (!sim__scalar(L, n[side], keys[side], name, sizeof name))
            return false;
        mem[side] = add_mem(L, pc, n[side], keys[side], name, direct);
        if (!mem[side])
            return false;
    }
    return true;
}

const struct cfg_pcie *sim__pcie_tree(const struct sim_config *cfg, uint32_t node)
{
    const struct sim_pcie_config *pc = cfg->pcie;
    return node < pc->nhost && pc->host[node] ? pc->host[node] : pc->deflt;
}

const char *sim__pcie_place(const struct sim_config *cfg, const struct cfg_pcie *t, uint16_t mem,
                            uint16_t *place)
{
    uint32_t home = t->nodes[t->nic].socket;
    *place = (uint16_t)home;
    if (!mem)
        return NULL;
    const struct cfg_pcie_mem *m = &cfg->pcie->mems[mem - 1];
    if (!strcmp(m->name, "host"))
        return NULL;
    unsigned s;
    char extra;
    if (sscanf(m->name, "socket%u%c", &s, &extra) == 1) {
        if (s >= t->sockets)
            return "is not one of its sockets";
        *place = (uint16_t)s;
        return NULL;
    }
    int64_t i = find(t, m->name);
    if (i < 0 || t->nodes[i].kind != PCIE_GPU)
        return "is not host, socketN or one of its GPUs";
    *place = (uint16_t)(PCIE_PLACE_GPU | (uint32_t)i | (m->gpudirect ? 0 : PCIE_PLACE_BOUNCE));
    return NULL;
}

static bool pushes_data(unsigned op) { return op != SIM_OP_READ && !sim__op_is_atomic(op); }

bool sim__pcie_check(struct loader *L)
{
    struct sim_config *cfg = L->cfg;
    struct sim_pcie_config *pc = cfg->pcie;
    if (!pc)
        return true;
    if (!pc->deflt) {
        pc->deflt = sim__xcalloc(1, sizeof *pc->deflt);
        sim__cfg_pcie_defaults(pc->deflt);
    }
    for (size_t i = 0; i < pc->ncopies; i++)
        if (!check_copy(L, &pc->copies[i]))
            return false;
    if (!sim__cxl_check(L))
        return false;
    static const char *const side_name[2] = {"src", "dst"};
    for (size_t i = 0; i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        for (int side = 0; side < 2; side++) {
            if (!m->mem[side])
                continue;
            uint32_t node = side ? m->dst : m->src;
            const char *host = cfg->nodes[node].name;
            const struct cfg_pcie *t = sim__pcie_tree(cfg, node);
            const struct cfg_pcie_mem *spec = &pc->mems[m->mem[side] - 1];
            uint16_t place;
            const char *e = sim__pcie_place(cfg, t, m->mem[side], &place);
            if (e)
                return sim__fail_at(L, &spec->pos, "%s: on host '%s', '%s' %s", spec->key, host,
                                    spec->name, e);
            if (!side && m->gpu_post && (!(place & PCIE_PLACE_GPU) || (place & PCIE_PLACE_BOUNCE)))
                return sim__fail_at(L, &spec->pos, "post: gpu needs the message's source in a GPU "
                                                   "reached by GPUDirect; '%s' of host '%s' is not",
                                    spec->name, host);
            if (!(place & PCIE_PLACE_GPU))
                continue;
            const struct cfg_pcie_node *gpu = &t->nodes[place & PCIE_PLACE_NODE];
            uint32_t nic_socket = t->nodes[t->nic].socket;
            if ((place & PCIE_PLACE_BOUNCE) && !pushes_data(m->op))
                return sim__fail_at(L, &spec->pos, "%s: memory region 'msg%zu.%s' in GPU '%s' "
                                                   "without GPUDirect: bounce buffers carry write "
                                                   "and send messages, not %s",
                                    spec->key, i, side_name[side], gpu->name, sim__op_name(m->op));
            if (!(place & PCIE_PLACE_BOUNCE) && gpu->socket != nic_socket && !t->cross_socket_p2p)
                return sim__fail_at(L, &spec->pos, "%s: memory region 'msg%zu.%s' of host '%s' "
                                                   "lies in GPU '%s' on socket %u, but the NIC "
                                                   "'nic' of '%s' is on socket %u, and cross-socket "
                                                   "peer-to-peer is refused (pcie cross_socket_p2p: "
                                                   "refuse)",
                                    spec->key, i, side_name[side], host, gpu->name, gpu->socket,
                                    host, nic_socket);
        }
    }
    return true;
}

void sim__cfg_pcie_free(struct cfg_pcie *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i].name);
    free(t->nodes);
    for (uint32_t i = 0; i < t->ncxl; i++)
        free(t->cxl[i].name);
    free(t->cxl);
    free(t);
}

void sim__pcie_config_free(struct sim_pcie_config *pc)
{
    if (!pc)
        return;
    for (size_t i = 0; i < pc->nhost; i++)
        sim__cfg_pcie_free(pc->host[i]);
    sim__cfg_pcie_free(pc->deflt);
    for (size_t i = 0; i < pc->nmems; i++)
        free(pc->mems[i].name);
    free(pc->mems);
    for (size_t i = 0; i < pc->ncopies; i++) {
        free(pc->copies[i].src);
        free(pc->copies[i].dst);
    }
    free(pc->copies);
    sim__cxl_free(pc);
    free(pc->host);
    free(pc);
}
