/* load.c - load a configuration (docs/config.md) with libfyaml and check
 * it before anything runs.
 *
 * The document is walked key by key against the lists of valid keys below;
 * the first problem found ends the load with one line
 * FILE:LINE:COL: what is wrong, using libfyaml's marks. Included topology
 * and workload files are copied into the main document so that overrides can
 * reach into them; positions still name the file a value came from.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/units.h"
#include "engine/util.h"


const char *sim__op_name(unsigned op)
{
    static const char *const names[] = {
#define SIM__OP_NAME(name, str) str,
        SIM_OPS(SIM__OP_NAME)
#undef SIM__OP_NAME
    };
    return op < SIM_OP_COUNT ? names[op] : "?";
}

const char *sim__routing_name(unsigned r)
{
    static const char *const names[] = {
#define CFG__ROUTING_NAME(name, str) str,
        CFG_ROUTINGS(CFG__ROUTING_NAME)
#undef CFG__ROUTING_NAME
    };
    return r < CFG_ROUTING_COUNT ? names[r] : "?";
}

void sim__cfg_nic_defaults(struct cfg_nic *nic)
{
    *nic = (struct cfg_nic){
        .mtu = 4096,
        .ack_coalesce = 0,
        .ack_request_every = 64,
        .max_rd_atomic = 16,
        /* 4.096 us x 2^14, the IBA local ACK timeout code 14 that rdma-core's
         * ibv_rc_pingpong and perftest set by default */
        .timeout = CFG_DEFAULT_TIMEOUT,
        .ooo_window = CFG_DEFAULT_OOO_WINDOW,
        .retry_count = 7,
        .rnr_retry = 7,
        .rnr_timer = 1, /* 0.01 ms */
        .ipv6 = false,
        .ecn = 2,
        .dscp = 26,
    };
    sim__cfg_nic_fabric_defaults(&nic->fab);
    sim__cfg_nic_tcp_defaults(nic);
}

/* A 256-byte payload with the largest headers (IPv6, UDP, BTH, RETH and
 * ImmDt, ICRC) must fit in a link's IP MTU. */
#define MIN_LINK_MTU (40 + 8 + 12 + 16 + 4 + 256 + 4)

static const char *const link_param_keys[] = {"rate", "delay", "mtu", "loss", "ber", NULL};

static bool link_param_values(struct loader *L, struct fy_node **v, const char *what,
                              struct cfg_link_params *p)
{
    uint64_t x;
    char w[128];
    snprintf(w, sizeof w, "%s rate", what);
    if (v[0]) {
        char buf[32];
        if (!fy_node_is_scalar(v[0]) || !sim__scalar(L, v[0], w, buf, sizeof buf) ||
            !sim__ib_rate(buf, &p->rate, &p->lanes)) {
            p->lanes = 0;
            if (!sim__get_rate(L, v[0], w, &p->rate))
                return false;
        }
    }
    snprintf(w, sizeof w, "%s delay", what);
    if (v[1] && !sim__get_time(L, v[1], w, &p->delay))
        return false;
    snprintf(w, sizeof w, "%s mtu", what);
    if (v[2]) {
        if (!sim__get_size(L, v[2], w, MIN_LINK_MTU, 65535, &x))
            return false;
        p->mtu = (uint32_t)x;
    }
    snprintf(w, sizeof w, "%s loss", what);
    if (v[3] && !sim__get_prob(L, v[3], w, &p->loss))
        return false;
    snprintf(w, sizeof w, "%s ber", what);
    if (v[4] && !sim__get_prob(L, v[4], w, &p->ber))
        return false;
    if (p->loss >= 1)
        return sim__fail(L, v[3], "%s loss: a link that loses every frame carries nothing", what);
    if (p->ber >= 0.01)
        return sim__fail(L, v[4], "%s ber: a bit error rate of %g corrupts nearly every frame", what,
                         p->ber);
    return true;
}

bool sim__link_params(struct loader *L, struct fy_node *map, const char *what,
                      struct cfg_link_params *p)
{
    struct fy_node *v[6];
    return sim__fields(L, map, what, link_param_keys, v) && link_param_values(L, v, what, p);
}

/* ---- NIC ------------------------------------------------------------------ */
static bool nic_params(struct loader *L, struct fy_node *map, const char *what, struct cfg_nic *nic)
{
    static const char *const keys[] = {"mtu", "ack_coalesce", "ack_request_every", "max_rd_atomic",
                                       "timeout", "retry_count", "rnr_retry", "rnr_timer",
                                       "ipv6", "ecn", "dscp", "ooo", "ooo_window", "tx_latency",
                                       "rx_latency", "sl", SIM_NIC_FABRIC_KEYS, SIM_NIC_TCP_KEYS, NULL};
    struct fy_node *v[17 + SIM_NNIC_FABRIC_KEYS + SIM_NNIC_TCP_KEYS];
    if (!sim__fields(L, map, what, keys, v))
        return false;
    uint64_t x;
    if (v[0]) {
        if (!sim__get_size(L, v[0], "nic mtu", 256, 4096, &x))
            return false;
        if (x & (x - 1))
            return sim__fail(L, v[0], "nic mtu: %llu is not one of 256, 512, 1024, 2048, 4096",
                             (unsigned long long)x);
        nic->mtu = (uint32_t)x;
    }
    if (v[1] && !sim__get_u32(L, v[1], "nic ack_coalesce", 0, 1u << 20, &nic->ack_coalesce))
        return false;
    if (v[2] && !sim__get_u32(L, v[2], "nic ack_request_every", 0, 1u << 20, &nic->ack_request_every))
        return false;
    if (v[3] && !sim__get_u32(L, v[3], "nic max_rd_atomic", 1, 255, &nic->max_rd_atomic))
        return false;
    if (v[4]) {
        if (!sim__get_time(L, v[4], "nic timeout", &nic->timeout))
            return false;
        if (nic->timeout < SIM_NS || nic->timeout > 10 * SIM_S)
            return sim__fail(L, v[4], "nic timeout: must lie between 1ns and 10s");
    }
    if (v[5] && !sim__get_u32(L, v[5], "nic retry_count", 0, 7, &nic->retry_count))
        return false;
    if (v[6] && !sim__get_u32(L, v[6], "nic rnr_retry", 0, 7, &nic->rnr_retry))
        return false;
    if (v[7] && !sim__get_u32(L, v[7], "nic rnr_timer", 0, 31, &nic->rnr_timer))
        return false;
    if (v[8] && !sim__get_bool(L, v[8], "nic ipv6", &nic->ipv6))
        return false;
    if (v[9]) {
        char buf[32];
        if (!sim__scalar(L, v[9], "nic ecn", buf, sizeof buf))
            return false;
        static const char *const names[] = {"not-ect", "ect1", "ect0", "ce"};
        size_t i;
        for (i = 0; i < 4 && strcmp(buf, names[i]); i++)
            ;
        if (i == 4)
            return sim__fail(L, v[9], "nic ecn: '%s' is not one of not-ect, ect0, ect1, ce", buf);
        nic->ecn = (uint8_t)i;
    }
    if (v[10]) {
        uint32_t d;
        if (!sim__get_u32(L, v[10], "nic dscp", 0, 63, &d))
            return false;
        nic->dscp = (uint8_t)d;
    }
    if (v[11] && !sim__get_bool(L, v[11], "nic ooo", &nic->ooo))
        return false;
    if (v[12]) {
        if (!sim__get_time(L, v[12], "nic ooo_window", &nic->ooo_window))
            return false;
        if (nic->ooo_window < SIM_NS || nic->ooo_window > 10 * SIM_S)
            return sim__fail(L, v[12], "nic ooo_window: must lie between 1ns and 10s");
    }
    sim_time_t *lat[] = {&nic->tx_latency, &nic->rx_latency};
    const char *latn[] = {"nic tx_latency", "nic rx_latency"};
    for (int i = 0; i < 2; i++) {
        if (!v[13 + i])
            continue;
        if (!sim__get_time(L, v[13 + i], latn[i], lat[i]))
            return false;
        if (*lat[i] > SIM_MS)
            return sim__fail(L, v[13 + i], "%s: must lie between 0 and 1ms", latn[i]);
    }
    if (v[15]) {
        uint32_t sl;
        if (!sim__get_u32(L, v[15], "nic sl", 0, CFG_IB_SLS - 1, &sl))
            return false;
        nic->sl = (uint8_t)sl;
    }
    return sim__nic_fabric(L, v + 16, &nic->fab) &&
           sim__nic_tcp(L, v + 16 + SIM_NNIC_FABRIC_KEYS, nic);
}

/* ---- topology -------------------------------------------------------------- */
static bool node_entry(struct loader *L, struct fy_node *item, enum cfg_node_kind kind,
                       uint64_t buffer)
{
    const char *what = kind == CFG_HOST ? "host" : "switch";
    char name[VALUE_MAX];
    uint32_t idx;
    struct fy_node *v[4 + SIM_NSWITCH_FABRIC_KEYS] = {0};
    if (fy_node_is_scalar(item) && !fy_node_is_alias(item)) {
        if (!sim__scalar(L, item, what, name, sizeof name) || !sim__add_node(L, name, kind, item, &idx))
            return false;
    } else {
        static const char *const host_keys[] = {"name", "trace", "nic", "pcie", NULL};
        static const char *const switch_keys[] = {"name", "trace", "buffer", SIM_SWITCH_FABRIC_KEYS,
                                                  NULL};
        if (!sim__fields(L, item, what, kind == CFG_HOST ? host_keys : switch_keys, v))
            return false;
        if (!v[0])
            return sim__fail(L, item, "%s: needs a name", what);
        if (!sim__scalar(L, v[0], "name", name, sizeof name) ||
            !sim__add_node(L, name, kind, v[0], &idx))
            return false;
    }
    struct cfg_node *nd = &L->cfg->nodes[idx];
    nd->buffer = buffer;
    if (v[1] && !sim__get_bool(L, v[1], "trace", &nd->trace))
        return false;
    if (kind == CFG_HOST && v[3] && !sim__pcie_host(L, idx, v[3]))
        return false;
    if (kind == CFG_HOST && v[2])
        return nic_params(L, v[2], "host nic", &nd->nic);
    if (kind == CFG_SWITCH && v[2] &&
        !sim__get_size(L, v[2], "switch buffer", 0, UINT64_C(1) << 40, &nd->buffer))
        return false;
    return kind != CFG_SWITCH || sim__switch_fabric_own(L, v + 3, &nd->swp);
}

static bool node_list(struct loader *L, struct fy_node *seq, enum cfg_node_kind kind, uint64_t buffer)
{
    if (!sim__expect_seq(L, seq, kind == CFG_HOST ? "hosts" : "switches"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it)))
        if (!node_entry(L, item, kind, buffer))
            return false;
    return true;
}

static bool link_list(struct loader *L, struct fy_node *seq, const struct cfg_link_params *defaults)
{
    static const char *const keys[] = {"a", "b", "rate", "delay", "mtu", "loss", "ber", "trace", NULL};
    if (!sim__expect_seq(L, seq, "links"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[9];
        if (!sim__fields(L, item, "link", keys, v))
            return false;
        if (!v[0] || !v[1])
            return sim__fail(L, item, "link: needs both ends, 'a' and 'b'");
        uint32_t a, b;
        if (!sim__get_node(L, v[0], "link a", &a) || !sim__get_node(L, v[1], "link b", &b))
            return false;
        if (a == b)
            return sim__fail(L, v[1], "link: connects '%s' to itself", L->cfg->nodes[a].name);
        struct cfg_link_params p = *defaults;
        if (!link_param_values(L, v + 2, "link", &p))
            return false;
        struct cfg_pos pos = sim__pos(L, item);
        sim__add_link(L, a, b, &p, &pos);
        if (v[7] && !sim__get_bool(L, v[7], "link trace", &L->cfg->links[L->cfg->nlinks - 1].trace))
            return false;
    }
    return true;
}

static bool topology(struct loader *L, struct fy_node *map)
{
    static const char *const keys[] = {"link_defaults", "switch_defaults", "hosts", "switches",
                                       "links", "generate", "routing", "fabric", NULL};
    struct fy_node *v[9];
    if (!sim__fields(L, map, "topology", keys, v))
        return false;
    if (v[7]) {
        char buf[32];
        if (!sim__scalar(L, v[7], "topology fabric", buf, sizeof buf))
            return false;
        if (strcmp(buf, "roce") && strcmp(buf, "infiniband"))
            return sim__fail(L, v[7], "topology fabric: '%s' is not roce or infiniband", buf);
        L->cfg->ib.enable = !strcmp(buf, "infiniband");
    }
    if (v[6]) {
        char buf[32];
        if (!sim__scalar(L, v[6], "topology routing", buf, sizeof buf))
            return false;
        unsigned r;
        for (r = 0; r < CFG_ROUTING_COUNT && strcmp(buf, sim__routing_name(r)); r++)
            ;
        if (r == CFG_ROUTING_COUNT)
            return sim__fail(L, v[6], "topology routing: '%s' is not one of ecmp, dmodk, spray, "
                                      "adaptive (RoCE), minhop, ftree (InfiniBand)", buf);
        L->cfg->routing = (uint8_t)r;
        L->routing_at = v[6];
    }
    struct cfg_link_params defaults = {
        .rate = CFG_DEFAULT_RATE, .delay = CFG_DEFAULT_DELAY, .mtu = CFG_DEFAULT_LINK_MTU,
    };
    uint64_t buffer = CFG_DEFAULT_BUFFER;
    if (v[0] && !sim__link_params(L, v[0], "link_defaults", &defaults))
        return false;
    if (v[1]) {
        static const char *const skeys[] = {"buffer", SIM_SWITCH_FABRIC_KEYS, NULL};
        struct fy_node *sv[2 + SIM_NSWITCH_FABRIC_KEYS];
        if (!sim__fields(L, v[1], "switch_defaults", skeys, sv))
            return false;
        if (sv[0] && !sim__get_size(L, sv[0], "switch buffer", 0, UINT64_C(1) << 40, &buffer))
            return false;
        if (!sim__switch_fabric(L, sv + 1, &L->cfg->fabric.sw[0]))
            return false;
    }
    if (v[5]) {
        if (fy_node_is_mapping(v[5])) {
            if (!sim__topology_generator(L, v[5], &defaults, buffer))
                return false;
        } else {
            if (!sim__expect_seq(L, v[5], "generate"))
                return false;
            void *it = NULL;
            struct fy_node *g;
            while ((g = fy_node_sequence_iterate(v[5], &it)))
                if (!sim__topology_generator(L, g, &defaults, buffer))
                    return false;
        }
    }
    if (v[2] && !node_list(L, v[2], CFG_HOST, buffer))
        return false;
    if (v[3] && !node_list(L, v[3], CFG_SWITCH, buffer))
        return false;
    if (v[4] && !link_list(L, v[4], &defaults))
        return false;
    if (!L->cfg->nnodes)
        return sim__fail(L, map, "topology: no hosts");
    return true;
}

static bool trace_list(struct loader *L, struct fy_node *seq)
{
    if (!sim__expect_seq(L, seq, "trace"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        uint32_t idx;
        if (!sim__get_node(L, item, "trace", &idx))
            return false;
        L->cfg->nodes[idx].trace = true;
    }
    return true;
}

/* partition: lists of nodes, each list run by one MPI rank (list i on rank
 * i mod the number of ranks); every node in exactly one list. */
static bool partition_lists(struct loader *L, struct fy_node *seq)
{
    struct sim_config *cfg = L->cfg;
    if (!sim__expect_seq(L, seq, "partition"))
        return false;
    cfg->partition = sim__xcalloc(cfg->nnodes, sizeof *cfg->partition);
    for (size_t i = 0; i < cfg->nnodes; i++)
        cfg->partition[i] = UINT32_MAX;
    void *it = NULL;
    struct fy_node *list;
    while ((list = fy_node_sequence_iterate(seq, &it))) {
        if (!sim__expect_seq(L, list, "partition"))
            return false;
        void *jt = NULL;
        struct fy_node *item;
        while ((item = fy_node_sequence_iterate(list, &jt))) {
            uint32_t idx;
            if (!sim__get_node(L, item, "partition", &idx))
                return false;
            if (cfg->partition[idx] != UINT32_MAX)
                return sim__fail(L, item, "partition: node '%s' is in two lists", cfg->nodes[idx].name);
            cfg->partition[idx] = cfg->npartition;
        }
        cfg->npartition++;
    }
    for (size_t i = 0; i < cfg->nnodes; i++)
        if (cfg->partition[i] == UINT32_MAX)
            return sim__fail(L, seq, "partition: node '%s' is in no list; list every node",
                             cfg->nodes[i].name);
    return true;
}

/* Hosts have one NIC port: exactly one link each. */
static bool check_hosts(struct loader *L)
{
    struct sim_config *cfg = L->cfg;
    uint32_t *seen = sim__xcalloc(cfg->nnodes, sizeof *seen);
    bool ok = true;
    for (size_t i = 0; ok && i < cfg->nlinks; i++) {
        const struct cfg_link *l = &cfg->links[i];
        uint32_t ends[2] = {l->a, l->b};
        for (int e = 0; ok && e < 2; e++) {
            const struct cfg_node *n = &cfg->nodes[ends[e]];
            if (n->kind == CFG_HOST && ++seen[ends[e]] == 2)
                ok = sim__fail_at(L, &l->pos, "host '%s' has %u links; a host has one NIC port, "
                                              "so one link", n->name, n->nlinks);
        }
    }
    free(seen);
    for (size_t i = 0; ok && i < cfg->nnodes; i++) {
        const struct cfg_node *n = &cfg->nodes[i];
        if (n->kind == CFG_HOST && n->nlinks == 0)
            ok = sim__fail_at(L, &n->pos, "host '%s' has no link", n->name);
    }
    return ok;
}

/* ---- includes and overrides -------------------------------------------------- */
#define MAX_FILE_BYTES (UINT64_C(1) << 30)

struct doc_list {
    struct fy_document **docs;
    size_t n;
};

/* The whole file, checked to be text before libfyaml sees it; NULL after
 * reporting why not. A file that never ends (a pipe fed forever) stops at
 * MAX_FILE_BYTES. */
static char *read_text(struct loader *L, const char *path, FILE *f, size_t *len)
{
    struct cfg_pos pos = {sim__intern_file(L, path), 0, 0};
    size_t n = 0, cap = 0, got;
    char *buf = NULL;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = sim__xrealloc(buf, cap);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got && n < MAX_FILE_BYTES && !memchr(buf + n - got, 0, got)); /* /dev/zero stops */
    const char *why = NULL;
    if (ferror(f)) {
        sim__fail_at(L, &pos, "cannot read: %s", strerror(errno));
    } else if (n >= MAX_FILE_BYTES) {
        sim__fail_at(L, &pos, "cannot read: larger than 1GiB");
    } else {
        size_t bad = sim__text_check((const uint8_t *)buf, n, &why);
        if (bad == n) {
            *len = n;
            return buf;
        }
        pos.line = pos.col = 1;
        for (size_t i = 0; i < bad; i++) {
            pos.col++;
            if (buf[i] == '\n') {
                pos.line++;
                pos.col = 1;
            }
        }
        sim__fail_at(L, &pos, "the file %s", why);
    }
    free(buf);
    return NULL;
}

static struct fy_document *parse_file(struct loader *L, const char *path, struct doc_list *docs)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        const char *saved = L->file;
        L->file = sim__intern_file(L, path);
        sim__fail(L, NULL, "cannot read: %s", strerror(errno));
        L->file = saved;
        return NULL;
    }
    size_t len;
    char *text = read_text(L, path, f, &len);
    fclose(f);
    if (!text)
        return NULL;
    struct fy_parse_cfg pc = {
        .flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2,
        .diag = L->diag,
    };
    /* the document owns text from here on, even when building fails */
    struct fy_document *fyd = fy_document_build_from_malloc_string(&pc, text, len);
    if (!fyd || !fy_document_root(fyd)) {
        void *it = NULL;
        struct fy_diag_error *e = fy_diag_errors_iterate(L->diag, &it);
        struct cfg_pos pos = {sim__intern_file(L, path), e ? e->line : 1, e ? e->column : 1};
        sim__fail_at(L, &pos, "%s", e ? e->msg : "no configuration: the file is empty or holds only comments");
        fy_document_destroy(fyd);
        return NULL;
    }
    docs->docs = sim__xrealloc(docs->docs, (docs->n + 1) * sizeof *docs->docs);
    docs->docs[docs->n++] = fyd;
    return fyd;
}

static char *relative_path(struct loader *L, const char *name)
{
    if (name[0] == '/' || !L->dir)
        return sim__xstrdup(name);
    return sim__xasprintf("%s/%s", L->dir, name);
}

/* topology: FILE and workload: FILE name documents of their own. */
static bool resolve_include(struct loader *L, struct fy_document *main, struct fy_node *root,
                            const char *key, struct doc_list *docs, const char **file)
{
    *file = L->file;
    struct fy_node_pair *pair = fy_node_mapping_lookup_pair_by_string(root, key, FY_NT);
    if (!pair)
        return true;
    struct fy_node *v = fy_node_pair_value(pair);
    if (!v || !fy_node_is_scalar(v) || fy_node_is_alias(v))
        return true;
    char name[VALUE_MAX];
    if (!sim__scalar(L, v, key, name, sizeof name))
        return false;
    char *path = relative_path(L, name);
    const char *why;
    FILE *f = sim__open_regular(path, &why);
    if (!f) {
        sim__fail(L, v, "%s: cannot read '%s': %s", key, path, why);
        free(path);
        return false;
    }
    struct stat inc_st, main_st;
    bool itself = !fstat(fileno(f), &inc_st) && !stat(L->cfg->path, &main_st) &&
                  inc_st.st_dev == main_st.st_dev && inc_st.st_ino == main_st.st_ino;
    fclose(f);
    if (itself) {
        sim__fail(L, v, "%s: '%s' is this configuration itself; name a file that holds the %s "
                        "mapping", key, name, key);
        free(path);
        return false;
    }
    struct fy_document *inc = parse_file(L, path, docs);
    if (!inc) {
        free(path);
        return false;
    }
    *file = sim__intern_file(L, path);
    free(path);
    struct fy_node *copy = fy_node_copy(main, fy_document_root(inc));
    if (!copy || fy_node_pair_set_value(pair, copy))
        return sim__fail(L, v, "%s: cannot include '%s'", key, name);
    return true;
}

static bool set_fail(struct loader *L, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool set_fail(struct loader *L, const char *text, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(L->err, L->errcap, "override %s: %s", text, msg);
    L->failed = true;
    return false;
}

/* The pair of map whose key is the plain text key[0..len). libfyaml's own
 * lookup parses the key as YAML, and prints to stderr when it is not. */
static struct fy_node_pair *find_pair(struct fy_node *map, const char *key, size_t len)
{
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(map, &it))) {
        struct fy_node *k = fy_node_pair_key(pair);
        size_t kl;
        const char *ks = k && fy_node_is_scalar(k) ? fy_node_get_scalar(k, &kl) : NULL;
        if (ks && kl == len && !memcmp(ks, key, len))
            return pair;
    }
    return NULL;
}

/* A node an override made: errors at it name the override. */
static void set_node(struct loader *L, struct fy_node *n, const char *text)
{
    L->set_nodes = sim__xrealloc(L->set_nodes, (L->nset + 1) * sizeof *L->set_nodes);
    L->set_texts = sim__xrealloc(L->set_texts, (L->nset + 1) * sizeof *L->set_texts);
    L->set_nodes[L->nset] = n;
    L->set_texts[L->nset++] = text;
}

/* An override that could not be put into the document: its nodes belong
 * to the document but not to its tree, so destroying the document would
 * not free them. */
static bool cannot_apply(struct loader *L, const char *text, struct fy_node *a, struct fy_node *b)
{
    if (a)
        fy_node_free(a);
    if (b)
        fy_node_free(b);
    return set_fail(L, text, "the value could not be put into the configuration");
}

static bool apply_set(struct loader *L, struct fy_document *fyd, const char *text)
{
    const char *eq = strchr(text, '='), *why;
    if (sim__text_check((const uint8_t *)text, strlen(text), &why) < strlen(text))
        return set_fail(L, text, "the override %s", why);
    if (!eq || eq == text)
        return set_fail(L, text, "expected KEY=VALUE");
    struct fy_node *cur = fy_document_root(fyd);
    const char *seg = text;
    for (;;) {
        const char *dot = memchr(seg, '.', (size_t)(eq - seg));
        const char *end = dot ? dot : eq;
        size_t len = (size_t)(end - seg);
        if (!len || len > 200)
            return set_fail(L, text, "empty or overlong key");
        char key[256];
        memcpy(key, seg, len);
        key[len] = 0;
        if (fy_node_is_sequence(cur)) {
            uint64_t idx;
            if (sim__parse_uint(key, UINT64_MAX, &idx) ||
                idx >= (uint64_t)fy_node_sequence_item_count(cur))
                return set_fail(L, text, "'%s' is not an index of that list", key);
            if (!dot)
                return set_fail(L, text, "name a key of the list item, not the item");
            cur = fy_node_sequence_get_by_index(cur, (int)idx);
            seg = dot + 1;
            continue;
        }
        if (!fy_node_is_mapping(cur))
            return set_fail(L, text, "'%s' lies inside a single value", key);
        struct fy_node_pair *pair = find_pair(cur, key, len);
        if (dot) {
            if (!pair) {
                struct fy_node *k = fy_node_create_scalar_copy(fyd, key, len);
                struct fy_node *m = fy_node_create_mapping(fyd);
                if (!k || !m || fy_node_mapping_append(cur, k, m))
                    return cannot_apply(L, text, k, m);
                set_node(L, k, text);
                set_node(L, m, text);
                cur = m;
            } else {
                cur = fy_node_pair_value(pair);
                if (!cur) {
                    struct fy_node *m = fy_node_create_mapping(fyd);
                    if (!m || fy_node_pair_set_value(pair, m))
                        return cannot_apply(L, text, m, NULL);
                    cur = m;
                }
            }
            seg = dot + 1;
            continue;
        }
        const char *value = eq + 1;
        struct fy_node *k = NULL;
        struct fy_node *v = *value ? fy_node_build_from_string(fyd, value, FY_NT) : NULL;
        if (!v)
            return set_fail(L, text, "the value is not valid YAML");
        if (pair) {
            if (fy_node_pair_set_value(pair, v))
                return cannot_apply(L, text, v, NULL);
        } else {
            k = fy_node_create_scalar_copy(fyd, key, len);
            if (!k || fy_node_mapping_append(cur, k, v))
                return cannot_apply(L, text, k, v);
        }
        set_node(L, v, text);
        if (k)
            set_node(L, k, text);
        return true;
    }
}

/* ---- the whole file ----------------------------------------------------------- */
static bool top_level(struct loader *L, struct fy_node *root, const char *topo_file,
                      const char *work_file)
{
    static const char *const keys[] = {"seed", "stop", "payload", "snaplen", "trace", "nic",
                                       "topology", "workload", SIM_TOP_FABRIC_KEYS, "pcie",
                                       "max_memory", "trace_limit", "infiniband", "partition", NULL};
    enum { PCIE = 8 + SIM_NTOP_FABRIC_KEYS, MAX_MEMORY, TRACE_LIMIT, INFINIBAND, PARTITION };
    struct fy_node *v[PARTITION + 1];
    struct sim_config *cfg = L->cfg;
    if (!sim__fields(L, root, "configuration", keys, v))
        return false;
    if (v[0] && !sim__get_uint(L, v[0], "seed", 0, UINT64_MAX, &cfg->seed))
        return false;
    if (v[1] && !sim__get_time(L, v[1], "stop", &cfg->stop))
        return false;
    if (v[2]) {
        char buf[32];
        if (!sim__scalar(L, v[2], "payload", buf, sizeof buf))
            return false;
        if (strcmp(buf, "data") && strcmp(buf, "none"))
            return sim__fail(L, v[2], "payload: '%s' is not 'data' or 'none'", buf);
        cfg->payload_data = !strcmp(buf, "data");
    }
    if (v[3] && !sim__get_u32(L, v[3], "snaplen", 64, 262144, &cfg->snaplen))
        return false;
    if (v[5] && !nic_params(L, v[5], "nic", &cfg->nic))
        return false;
    if (v[TRACE_LIMIT] && !sim__get_size(L, v[TRACE_LIMIT], "trace_limit", 1024, UINT64_MAX,
                                         &cfg->trace_limit))
        return false;
    if (v[MAX_MEMORY] && !sim__get_size(L, v[MAX_MEMORY], "max_memory", UINT64_C(1) << 20,
                                        UINT64_MAX, &L->max_memory))
        return false;
    if (v[PCIE] && !sim__pcie_top(L, v[PCIE]))
        return false;
    if (!v[6])
        return sim__fail(L, root, "configuration: no 'topology'");
    L->file = topo_file;
    if (!topology(L, v[6]))
        return false;
    L->file = cfg->path;
    if (v[INFINIBAND] && !sim__ib_top(L, v[INFINIBAND]))
        return false;
    if (!sim__check_ib(L, v[6]))
        return false;
    if (v[4] && !trace_list(L, v[4]))
        return false;
    if (v[PARTITION] && !partition_lists(L, v[PARTITION]))
        return false;
    if (!check_hosts(L) || !sim__top_fabric(L, v + 8) || !sim__check_fabric(L))
        return false;
    if (!v[7])
        return sim__fail(L, root, "configuration: no 'workload'");
    L->file = work_file;
    if (!sim__workload(L, v[7]))
        return false;
    struct sim_counts counts;
    sim__config_counts(L, true, &counts);
    if (!sim__memory_check(L, v[7], NULL, "workload", &counts))
        return false;
    return sim__check_paths(L) && sim__pcie_check(L) && sim__check_iwarp(L);
}

struct sim_config *sim__config_parse(const char *path, const char *const *sets, size_t nsets,
                                     const struct sim_memory_costs *costs, char *err,
                                     size_t errcap)
{
    struct sim_config *cfg = sim__xcalloc(1, sizeof *cfg);
    cfg->stop = SIM_TIME_NEVER;
    cfg->payload_data = true;
    cfg->snaplen = CFG_DEFAULT_SNAPLEN;
    sim__cfg_nic_defaults(&cfg->nic);
    sim__cfg_fabric_init(&cfg->fabric);
    sim__cfg_ib_defaults(&cfg->ib);

    struct loader L = {.cfg = cfg, .costs = costs, .err = err, .errcap = errcap};
    if (errcap)
        err[0] = 0;
    cfg->path = sim__xstrdup(path);
    L.file = sim__intern_file(&L, path);
    const char *slash = strrchr(path, '/');
    if (slash)
        L.dir = sim__xasprintf("%.*s", (int)(slash - path), path);

    struct fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = NULL;
    dc.output_fn = NULL;
    dc.colorize = false;
    L.diag = fy_diag_create(&dc);
    struct doc_list docs = {0};
    bool ok = L.diag != NULL;
    if (ok)
        fy_diag_set_collect_errors(L.diag, true);
    else
        snprintf(err, errcap, "%s: cannot set up the YAML parser", path);

    struct fy_document *fyd = ok ? parse_file(&L, path, &docs) : NULL;
    struct fy_node *root = fyd ? fy_document_root(fyd) : NULL;
    ok = ok && root;
    if (ok && !fy_node_is_mapping(root))
        ok = sim__fail(&L, root, "the configuration must be a mapping with keys such as "
                                 "topology and workload");
    const char *topo_file = L.file, *work_file = L.file;
    ok = ok && resolve_include(&L, fyd, root, "topology", &docs, &topo_file) &&
         resolve_include(&L, fyd, root, "workload", &docs, &work_file);
    for (size_t i = 0; ok && i < nsets; i++)
        ok = apply_set(&L, fyd, sets[i]);
    ok = ok && top_level(&L, root, topo_file, work_file);

    for (size_t i = 0; i < docs.n; i++)
        fy_document_destroy(docs.docs[i]);
    free(docs.docs);
    if (L.diag)
        fy_diag_destroy(L.diag);
    free(L.names.slots);
    free(L.set_nodes);
    free(L.set_texts);
    free(L.dir);
    if (!ok) {
        /* one line, whatever the file held: control characters from
         * values or names become '?' */
        for (char *c = err; errcap && *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        sim__config_free(cfg);
        return NULL;
    }
    return cfg;
}

void sim__config_free(struct sim_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->nnodes; i++)
        free(cfg->nodes[i].name);
    for (size_t i = 0; i < cfg->nfiles; i++)
        free(cfg->files[i]);
    free(cfg->files);
    free(cfg->path);
    free(cfg->partition);
    free(cfg->nodes);
    free(cfg->links);
    free(cfg->msgs);
    for (size_t i = 0; i < cfg->ncolls; i++)
        free(cfg->colls[i].ranks);
    free(cfg->colls);
    free(cfg->nvswitches);
    sim__cfg_fabric_free(&cfg->fabric);
    sim__pcie_config_free(cfg->pcie);
    free(cfg);
}
