/* load_workload.c - the workload: explicit messages and the generators
 * incast (N -> 1), all-to-all, permutation, and random arrivals at a load
 * with sizes drawn from a CDF file.
 *
 * Generators are expanded here, at load time, with random streams derived
 * from the configuration's seed, so every message has an id, a position to
 * blame, and a row in messages.csv.
 *
 * CDF files hold one "SIZE PERCENT" pair per line, cumulative percent
 * nondecreasing up to 100 (the format of the WebSearch and Hadoop
 * distributions in examples/); sizes between points are interpolated
 * linearly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/units.h"
#include "engine/util.h"

/* What every message and generator shares, in this order. */
#define COMMON_KEYS "qp", "op", "size", "start", "repeat", "interval", "imm", "recv_at", \
                    "compare", "swap", "add", "initial", "src_mem", "dst_mem", "gpudirect", \
                    "solicited"
#define NCOMMON 16
enum { C_QP, C_OP, C_SIZE, C_START, C_REPEAT, C_INTERVAL, C_IMM, C_RECV_AT, C_COMPARE, C_SWAP,
       C_ADD, C_INITIAL, C_SRC_MEM, C_DST_MEM, C_GPUDIRECT, C_SOLICITED };

struct tmpl {
    struct cfg_msg m; /* src, dst unset */
    uint64_t repeat;
    sim_time_t interval;
    bool has_size;
};

static bool template(struct loader *L, struct fy_node *owner, struct fy_node **v, bool size_needed,
                     struct tmpl *t)
{
    *t = (struct tmpl){.m = {.qp = 1, .op = SIM_OP_WRITE}, .repeat = 1};
    t->m.pos = sim__pos(L, owner);
    if (v[C_QP] && !sim__get_u32(L, v[C_QP], "qp", 1, 65535, &t->m.qp))
        return false;
    if (v[C_OP]) {
        char op[32];
        if (!sim__scalar(L, v[C_OP], "op", op, sizeof op))
            return false;
        unsigned i;
        for (i = 0; i < SIM_OP_COUNT && strcmp(op, sim__op_name(i)); i++)
            ;
        if (i == SIM_OP_COUNT)
            return sim__fail(L, v[C_OP], "op: '%s' is not one of write, write_imm, read, send, "
                                         "send_imm, send_inv, cas, faa", op);
        t->m.op = (uint8_t)i;
    }
    bool atomic = sim__op_is_atomic(t->m.op);
    if (v[C_SIZE]) {
        if (!size_needed)
            return sim__fail(L, v[C_SIZE], "size: this generator draws sizes from its cdf");
        if (!sim__get_size(L, v[C_SIZE], "size", atomic ? 8 : 0, atomic ? 8 : CFG_MAX_MESSAGE,
                           &t->m.size))
            return false;
        t->has_size = true;
    } else if (atomic) {
        t->m.size = 8;
        t->has_size = true;
    } else if (size_needed) {
        return sim__fail(L, owner, "needs a 'size'");
    }
    if (v[C_START] && !sim__get_time(L, v[C_START], "start", &t->m.start))
        return false;
    if (v[C_REPEAT] && !sim__get_uint(L, v[C_REPEAT], "repeat", 1, CFG_MAX_MESSAGES, &t->repeat))
        return false;
    if (v[C_INTERVAL] && !sim__get_time(L, v[C_INTERVAL], "interval", &t->interval))
        return false;
    if (v[C_IMM]) {
        if (t->m.op != SIM_OP_WRITE_IMM && t->m.op != SIM_OP_SEND_IMM)
            return sim__fail(L, v[C_IMM], "imm: only write_imm and send_imm carry immediate data");
        uint64_t x;
        if (!sim__get_uint(L, v[C_IMM], "imm", 0, UINT32_MAX, &x))
            return false;
        t->m.imm = (uint32_t)x;
    }
    if (v[C_RECV_AT]) {
        if (!sim__op_uses_recv(t->m.op))
            return sim__fail(L, v[C_RECV_AT], "recv_at: only send, send_imm, send_inv and write_imm "
                                              "consume a receive");
        if (!sim__get_time(L, v[C_RECV_AT], "recv_at", &t->m.recv_at))
            return false;
    }
    if (v[C_SOLICITED]) {
        if (!sim__op_is_send(t->m.op))
            return sim__fail(L, v[C_SOLICITED], "solicited: only send, send_imm and send_inv ask "
                                                "for a solicited event");
        if (!sim__get_bool(L, v[C_SOLICITED], "solicited", &t->m.solicited))
            return false;
    }
    if ((v[C_COMPARE] || v[C_SWAP]) && t->m.op != SIM_OP_CAS)
        return sim__fail(L, v[C_COMPARE] ? v[C_COMPARE] : v[C_SWAP],
                         "compare and swap belong to op: cas");
    if (v[C_ADD] && t->m.op != SIM_OP_FAA)
        return sim__fail(L, v[C_ADD], "add belongs to op: faa");
    if (v[C_INITIAL] && !atomic)
        return sim__fail(L, v[C_INITIAL], "initial belongs to op: cas and op: faa");
    if (v[C_COMPARE] && !sim__get_uint(L, v[C_COMPARE], "compare", 0, UINT64_MAX, &t->m.compare))
        return false;
    if (v[C_SWAP] && !sim__get_uint(L, v[C_SWAP], "swap", 0, UINT64_MAX, &t->m.swap_add))
        return false;
    if (v[C_ADD] && !sim__get_uint(L, v[C_ADD], "add", 0, UINT64_MAX, &t->m.swap_add))
        return false;
    if (v[C_INITIAL] && !sim__get_uint(L, v[C_INITIAL], "initial", 0, UINT64_MAX, &t->m.initial))
        return false;
    /* where the buffers live (pcie.h), checked once the workload is known */
    if ((v[C_SRC_MEM] || v[C_DST_MEM] || v[C_GPUDIRECT]) &&
        !sim__pcie_mem(L, v[C_SRC_MEM], v[C_DST_MEM], v[C_GPUDIRECT], t->m.mem))
        return false;
    return true;
}

static bool add_messages(struct loader *L, const struct tmpl *t, uint32_t src, uint32_t dst,
                         sim_time_t offset, uint64_t size)
{
    struct sim_config *cfg = L->cfg;
    for (uint64_t r = 0; r < t->repeat; r++) {
        if (cfg->nmsgs >= CFG_MAX_MESSAGES)
            return sim__fail_at(L, &t->m.pos, "more than %d messages", CFG_MAX_MESSAGES);
        sim_time_t start = t->m.start + offset + r * t->interval;
        if (start < t->m.start || (t->interval && r * t->interval / t->interval != r))
            return sim__fail_at(L, &t->m.pos, "start time overflows");
        /* each time the list is about to double, the workload so far and
         * what this entry still asks for must fit: a generator can ask for
         * billions of messages, and the refusal names how many */
        if (cfg->nmsgs == cfg->capmsgs) {
            struct sim_counts c;
            sim__config_counts(L, false, &c);
            uint64_t grown = cfg->nmsgs ? 2 * cfg->nmsgs : 8, asked = cfg->nmsgs + (t->repeat - r);
            c.messages = asked > grown ? asked : grown;
            if (!sim__memory_check(L, NULL, &t->m.pos, "the workload up to here", &c))
                return false;
        }
        bool atomic = sim__op_is_atomic(t->m.op);
        if (cfg->payload_data || atomic)
            L->data_bytes += 2 * (size ? size : 1);
        SIM_GROW(cfg->msgs, cfg->capmsgs, cfg->nmsgs);
        struct cfg_msg *m = &cfg->msgs[cfg->nmsgs++];
        *m = t->m;
        m->src = src;
        m->dst = dst;
        m->start = start;
        m->size = size;
        if (t->m.recv_at)
            m->recv_at = t->m.recv_at + offset + r * t->interval;
    }
    return true;
}

bool sim__workload_add(struct loader *L, const struct cfg_msg *m)
{
    struct tmpl t = {.m = *m, .repeat = 1, .has_size = true};
    return add_messages(L, &t, m->src, m->dst, 0, m->size);
}

/* ---- explicit messages ---------------------------------------------------- */
static bool messages(struct loader *L, struct fy_node *seq)
{
    static const char *const keys[] = {"src", "dst", COMMON_KEYS, "post", NULL};
    if (!sim__expect_seq(L, seq, "messages"))
        return false;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        struct fy_node *v[2 + NCOMMON + 2];
        if (!sim__fields(L, item, "message", keys, v))
            return false;
        if (!v[0] || !v[1])
            return sim__fail(L, item, "message: needs 'src' and 'dst'");
        uint32_t src, dst;
        struct tmpl t;
        if (!sim__get_host(L, v[0], "src", &src) || !sim__get_host(L, v[1], "dst", &dst) ||
            !template(L, item, v + 2, true, &t))
            return false;
        if (src == dst)
            return sim__fail(L, v[1], "dst: a message from '%s' to itself", L->cfg->nodes[src].name);
        struct fy_node *post = v[2 + NCOMMON];
        if (post) {
            char by[16];
            if (!sim__scalar(L, post, "post", by, sizeof by))
                return false;
            if (strcmp(by, "cpu") && strcmp(by, "gpu"))
                return sim__fail(L, post, "post: '%s' is not cpu or gpu", by);
            t.m.gpu_post = !strcmp(by, "gpu");
            if (t.m.gpu_post && !t.m.mem[0])
                return sim__fail(L, post, "post: gpu needs src_mem, the GPU that posts it");
        }
        if (!add_messages(L, &t, src, dst, 0, t.m.size))
            return false;
    }
    return true;
}

/* ---- host lists ------------------------------------------------------------- */
struct hosts {
    uint32_t *v;
    size_t n;
};

static bool host_list(struct loader *L, struct fy_node *n, const char *what, struct hosts *h);

bool sim__host_list(struct loader *L, struct fy_node *n, const char *what, uint32_t **v, size_t *nv)
{
    struct hosts h = {0};
    bool ok = host_list(L, n, what, &h);
    *v = h.v;
    *nv = h.n;
    return ok;
}

static bool host_list(struct loader *L, struct fy_node *n, const char *what, struct hosts *h)
{
    struct sim_config *cfg = L->cfg;
    h->v = sim__xcalloc(cfg->nnodes, sizeof *h->v);
    h->n = 0;
    if (!n || (fy_node_is_scalar(n) && !fy_node_is_alias(n))) {
        if (n) {
            char buf[16];
            if (!sim__scalar(L, n, what, buf, sizeof buf))
                return false;
            if (strcmp(buf, "all"))
                return sim__fail(L, n, "%s: write 'all' or a list of host names", what);
        }
        for (size_t i = 0; i < cfg->nnodes; i++)
            if (cfg->nodes[i].kind == CFG_HOST)
                h->v[h->n++] = (uint32_t)i;
        return true;
    }
    if (!sim__expect_seq(L, n, what))
        return false;
    bool *seen = sim__xcalloc(cfg->nnodes, sizeof *seen);
    void *it = NULL;
    struct fy_node *item;
    bool ok = true;
    while (ok && (item = fy_node_sequence_iterate(n, &it))) {
        uint32_t idx;
        ok = sim__get_host(L, item, what, &idx);
        if (ok && seen[idx])
            ok = sim__fail(L, item, "%s: '%s' is listed twice", what, cfg->nodes[idx].name);
        if (ok) {
            seen[idx] = true;
            h->v[h->n++] = idx;
        }
    }
    free(seen);
    return ok;
}

/* ---- CDF files -------------------------------------------------------------- */
struct cdf {
    double *size, *pct;
    size_t n;
    double mean;
};

static bool cdf_load(struct loader *L, struct fy_node *at, const char *path, struct cdf *c)
{
    const char *why;
    FILE *f = sim__open_regular(path, &why);
    if (!f)
        return sim__fail(L, at, "cdf: cannot read '%s': %s", path, why);
    struct cfg_pos pos = {sim__intern_file(L, path), 0, 1};
    char line[512];
    size_t cap = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        pos.line++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char a[128], b[128], extra[2];
        int n = sscanf(line, "%127s %127s %1s", a, b, extra);
        if (n <= 0)
            continue;
        pos.col = (int)(strspn(line, " \t") + 1);
        if (n != 2) {
            ok = sim__fail_at(L, &pos, "expected SIZE PERCENT");
            break;
        }
        uint64_t size;
        double pct;
        /* The errors point at the value but do not quote it: a cdf key
         * naming some other file must not print that file's contents. */
        const char *e = sim__parse_size(a, &size);
        if (e) {
            ok = sim__fail_at(L, &pos, "expected SIZE PERCENT; SIZE is %s", e);
            break;
        }
        char *end;
        pct = strtod(b, &end);
        if (*end || !isfinite(pct) || pct < 0 || pct > 100) {
            pos.col = (int)(strstr(line + pos.col - 1 + strlen(a), b) - line + 1);
            ok = sim__fail_at(L, &pos, "expected SIZE PERCENT; PERCENT is not a number from 0 to 100");
            break;
        }
        if (size > CFG_MAX_MESSAGE) {
            ok = sim__fail_at(L, &pos, "expected SIZE PERCENT; SIZE is larger than a message can be (1GiB)");
            break;
        }
        if (c->n && (pct < c->pct[c->n - 1] || (double)size < c->size[c->n - 1])) {
            ok = sim__fail_at(L, &pos, "sizes and percentages must not decrease");
            break;
        }
        SIM_GROW(c->size, cap, c->n);
        c->pct = sim__xrealloc(c->pct, cap * sizeof *c->pct);
        c->size[c->n] = (double)size;
        c->pct[c->n++] = pct;
    }
    fclose(f);
    if (!ok)
        return false;
    if (!c->n || c->pct[c->n - 1] != 100) {
        pos.col = 1;
        return sim__fail_at(L, &pos, "the last line must reach 100 percent");
    }
    c->mean = c->size[0] * c->pct[0] / 100;
    for (size_t i = 1; i < c->n; i++)
        c->mean += (c->pct[i] - c->pct[i - 1]) / 100 * (c->size[i] + c->size[i - 1]) / 2;
    if (c->mean < 1) {
        pos.col = 1;
        return sim__fail_at(L, &pos, "the mean size is below one byte");
    }
    return true;
}

static uint64_t cdf_sample(const struct cdf *c, struct sim_rng *rng)
{
    double u = sim_rng_unit(rng) * 100, s = c->size[0];
    for (size_t i = 1; i < c->n; i++) {
        if (u <= c->pct[i]) {
            if (c->pct[i] > c->pct[i - 1] && u > c->pct[i - 1])
                s = c->size[i - 1] + (c->size[i] - c->size[i - 1]) * (u - c->pct[i - 1]) /
                                         (c->pct[i] - c->pct[i - 1]);
            else if (u > c->pct[i - 1])
                s = c->size[i];
            break;
        }
    }
    uint64_t v = (uint64_t)llround(s);
    return v ? v : 1;
}

/* ---- generators ------------------------------------------------------------ */
static const char *const incast_keys[] = {"to", "from", COMMON_KEYS, "kind", NULL};
static const char *const all_to_all_keys[] = {"hosts", COMMON_KEYS, "kind", NULL};
static const char *const permutation_keys[] = {"hosts", COMMON_KEYS, "kind", NULL};
static const char *const random_keys[] = {"hosts", "load", "cdf", "duration", COMMON_KEYS, "kind", NULL};

static bool incast(struct loader *L, struct fy_node *gen, struct fy_node **v)
{
    uint32_t to;
    struct tmpl t;
    if (!v[0])
        return sim__fail(L, gen, "incast: needs 'to', the receiving host");
    if (!sim__get_host(L, v[0], "incast to", &to) || !template(L, gen, v + 2, true, &t))
        return false;
    struct hosts from;
    bool ok = host_list(L, v[1], "incast from", &from);
    size_t senders = 0;
    for (size_t i = 0; ok && i < from.n; i++) {
        if (from.v[i] == to) {
            if (v[1] && !fy_node_is_scalar(v[1]))
                ok = sim__fail(L, v[1], "incast from: lists the receiver '%s'", L->cfg->nodes[to].name);
            continue;
        }
        ok = add_messages(L, &t, from.v[i], to, 0, t.m.size);
        senders++;
    }
    if (ok && !senders)
        ok = sim__fail(L, gen, "incast: no senders");
    free(from.v);
    return ok;
}

static bool all_to_all(struct loader *L, struct fy_node *gen, struct fy_node **v)
{
    struct tmpl t;
    struct hosts h;
    if (!template(L, gen, v + 1, true, &t))
        return false;
    bool ok = host_list(L, v[0], "all-to-all hosts", &h);
    if (ok && h.n < 2)
        ok = sim__fail(L, gen, "all-to-all: needs at least two hosts");
    for (size_t i = 0; ok && i < h.n; i++)
        for (size_t j = 0; ok && j < h.n; j++)
            if (i != j)
                ok = add_messages(L, &t, h.v[i], h.v[j], 0, t.m.size);
    free(h.v);
    return ok;
}

static bool permutation(struct loader *L, struct fy_node *gen, struct fy_node **v, size_t index)
{
    struct tmpl t;
    struct hosts h;
    if (!template(L, gen, v + 1, true, &t))
        return false;
    bool ok = host_list(L, v[0], "permutation hosts", &h);
    if (ok && h.n < 2)
        ok = sim__fail(L, gen, "permutation: needs at least two hosts");
    if (ok) {
        char name[64];
        snprintf(name, sizeof name, "workload.generate.%zu", index);
        struct sim_rng rng;
        sim_rng_seed(&rng, L->cfg->seed, name);
        /* Sattolo's shuffle makes one cycle through all hosts: nobody sends
         * to itself and everybody receives exactly once. */
        uint32_t *dst = sim__xmalloc(h.n * sizeof *dst);
        memcpy(dst, h.v, h.n * sizeof *dst);
        for (size_t i = h.n - 1; i > 0; i--) {
            size_t j = (size_t)sim_rng_below(&rng, i);
            uint32_t x = dst[i];
            dst[i] = dst[j];
            dst[j] = x;
        }
        for (size_t i = 0; ok && i < h.n; i++)
            ok = add_messages(L, &t, h.v[i], dst[i], 0, t.m.size);
        free(dst);
    }
    free(h.v);
    return ok;
}

static bool random_arrivals(struct loader *L, struct fy_node *gen, struct fy_node **v, size_t index)
{
    struct tmpl t;
    double load;
    sim_time_t duration;
    if (!v[1] || !v[2] || !v[3])
        return sim__fail(L, gen, "random: needs 'load', 'cdf' and 'duration'");
    if (!template(L, gen, v + 4, false, &t) || !sim__get_prob(L, v[1], "random load", &load) ||
        !sim__get_time(L, v[3], "random duration", &duration))
        return false;
    if (load <= 0)
        return sim__fail(L, v[1], "random load: must be above zero");
    if (sim__op_is_atomic(t.m.op))
        return sim__fail(L, gen, "random: atomics have a fixed size; use messages or incast");
    if (t.repeat != 1)
        return sim__fail(L, gen, "random: repeat does not apply; arrivals are random");
    char name[4096];
    if (!sim__scalar(L, v[2], "random cdf", name, sizeof name))
        return false;
    char *path = name[0] == '/' || !L->dir ? sim__xstrdup(name) : sim__xasprintf("%s/%s", L->dir, name);
    struct cdf c = {0};
    struct hosts h = {0};
    bool ok = cdf_load(L, v[2], path, &c) && host_list(L, v[0], "random hosts", &h);
    free(path);
    if (ok && h.n < 2)
        ok = sim__fail(L, gen, "random: needs at least two hosts");
    char rname[64];
    snprintf(rname, sizeof rname, "workload.generate.%zu", index);
    struct sim_rng rng;
    sim_rng_seed(&rng, L->cfg->seed, rname);
    for (size_t i = 0; ok && i < h.n; i++) {
        /* Poisson arrivals: the host's link rate times the load, in mean
         * message sizes per second. */
        uint64_t rate = 0;
        for (size_t l = 0; l < L->cfg->nlinks && !rate; l++)
            if (L->cfg->links[l].a == h.v[i] || L->cfg->links[l].b == h.v[i])
                rate = L->cfg->links[l].p.rate;
        double mean_gap_ps = c.mean * 8 / (load * (double)rate) * 1e12;
        double at = 0;
        for (;;) {
            at += -log1p(-sim_rng_unit(&rng)) * mean_gap_ps;
            if (at >= (double)duration)
                break;
            size_t d = (size_t)sim_rng_below(&rng, h.n - 1);
            uint32_t dst = h.v[d >= i ? d + 1 : d];
            if (!(ok = add_messages(L, &t, h.v[i], dst, (sim_time_t)at, cdf_sample(&c, &rng))))
                break;
        }
    }
    free(c.size);
    free(c.pct);
    free(h.v);
    return ok;
}

static bool generator(struct loader *L, struct fy_node *gen, size_t index)
{
    if (!sim__expect_map(L, gen, "generate"))
        return false;
    struct fy_node *kind_n = fy_node_mapping_lookup_value_by_string(gen, "kind", FY_NT);
    if (!kind_n)
        return sim__fail(L, gen, "generate: needs a 'kind': incast, all-to-all, permutation, random, "
                                 "all-reduce, reduce-scatter, all-gather, broadcast or alltoall");
    char kind[64];
    if (!sim__scalar(L, kind_n, "generate kind", kind, sizeof kind))
        return false;
    struct fy_node *v[4 + NCOMMON + 2];
    for (unsigned k = 0; k < CFG_COLL_COUNT; k++)
        if (!strcmp(kind, sim__coll_name(k)))
            return sim__collective(L, gen, k);
    if (!strcmp(kind, "incast"))
        return sim__fields(L, gen, kind, incast_keys, v) && incast(L, gen, v);
    if (!strcmp(kind, "all-to-all"))
        return sim__fields(L, gen, kind, all_to_all_keys, v) && all_to_all(L, gen, v);
    if (!strcmp(kind, "permutation"))
        return sim__fields(L, gen, kind, permutation_keys, v) && permutation(L, gen, v, index);
    if (!strcmp(kind, "random"))
        return sim__fields(L, gen, kind, random_keys, v) && random_arrivals(L, gen, v, index);
    return sim__fail(L, kind_n, "generate kind: '%s' is not incast, all-to-all, permutation, random, "
                                "all-reduce, reduce-scatter, all-gather, broadcast or alltoall", kind);
}

bool sim__workload(struct loader *L, struct fy_node *map)
{
    static const char *const keys[] = {"messages", "generate", "copies", "cxl", NULL};
    struct fy_node *v[5];
    if (!sim__fields(L, map, "workload", keys, v))
        return false;
    if (v[0] && !messages(L, v[0]))
        return false;
    if (v[2] && !sim__pcie_copies(L, v[2]))
        return false;
    if (v[3] && !sim__cxl_accesses(L, v[3]))
        return false;
    if (v[1] && fy_node_is_mapping(v[1])) {
        if (!generator(L, v[1], 0))
            return false;
    } else if (v[1]) {
        if (!sim__expect_seq(L, v[1], "generate"))
            return false;
        void *it = NULL;
        struct fy_node *g;
        size_t i = 0;
        while ((g = fy_node_sequence_iterate(v[1], &it)))
            if (!generator(L, g, i++))
                return false;
    }
    if (!L->cfg->nmsgs && !(L->cfg->pcie && (L->cfg->pcie->ncopies || L->cfg->pcie->ncxl)))
        return sim__fail(L, map, "workload: no messages");
    return true;
}

/* ---- whole-network checks ----------------------------------------------------- */
static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

bool sim__check_paths(struct loader *L)
{
    struct sim_config *cfg = L->cfg;
    uint32_t *parent = sim__xmalloc(cfg->nnodes * sizeof *parent);
    for (size_t i = 0; i < cfg->nnodes; i++)
        parent[i] = (uint32_t)i;
    for (size_t i = 0; i < cfg->nlinks; i++)
        parent[find(parent, cfg->links[i].a)] = find(parent, cfg->links[i].b);
    bool ok = true;
    uint64_t data = 0;
    for (size_t i = 0; ok && i < cfg->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        if (find(parent, m->src) != find(parent, m->dst))
            ok = sim__fail_at(L, &m->pos, "no path from '%s' to '%s': they are not connected",
                              cfg->nodes[m->src].name, cfg->nodes[m->dst].name);
        data += 2 * m->size;
        if (ok && cfg->payload_data && data > CFG_MAX_DATA_BYTES)
            ok = sim__fail_at(L, &m->pos, "with payload: data the messages up to here need more "
                                          "than 4GiB of simulated memory; set payload: none");
    }
    free(parent);
    return ok;
}
