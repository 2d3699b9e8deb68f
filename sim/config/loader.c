/* loader.c - what the configuration loader's files share: positions from
 * libfyaml's marks, the first error as FILE:LINE:COL: message, values with
 * units, mappings checked against their valid keys (with the nearest one
 * suggested), and the index of node names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/loader.h"
#include "engine/units.h"
#include "engine/util.h"

/* ---- errors and positions ------------------------------------------------ */
const char *sim__intern_file(struct loader *L, const char *name)
{
    struct sim_config *cfg = L->cfg;
    for (size_t i = 0; i < cfg->nfiles; i++)
        if (!strcmp(cfg->files[i], name))
            return cfg->files[i];
    cfg->files = sim__xrealloc(cfg->files, (cfg->nfiles + 1) * sizeof *cfg->files);
    return cfg->files[cfg->nfiles++] = sim__xstrdup(name);
}

/* The override text (KEY=VALUE) a node came from, if any. */
static const char *set_origin(struct loader *L, struct fy_node *n)
{
    for (; n; n = fy_node_get_parent(n))
        for (size_t i = 0; i < L->nset; i++)
            if (L->set_nodes[i] == n)
                return L->set_texts[i];
    return NULL;
}

struct cfg_pos sim__pos(struct loader *L, struct fy_node *n)
{
    struct cfg_pos p = {L->file, 0, 0};
    const char *set = set_origin(L, n);
    if (set) {
        /* no line and column: errors name the override instead */
        char *name = sim__xasprintf("override %s", set);
        p.file = sim__intern_file(L, name);
        free(name);
        return p;
    }
    struct fy_node *m = n;
    for (int depth = 0; m && depth < 64; depth++) {
        if (fy_node_is_scalar(m)) {
            struct fy_token *t = fy_node_get_scalar_token(m);
            const struct fy_mark *mark = t ? fy_token_start_mark(t) : NULL;
            if (mark) {
                p.line = mark->line + 1;
                p.col = mark->column + 1;
                return p;
            }
            break;
        }
        if (fy_node_is_mapping(m)) {
            struct fy_node_pair *pair = fy_node_mapping_get_by_index(m, 0);
            m = pair ? fy_node_pair_key(pair) : NULL;
        } else if (fy_node_is_sequence(m)) {
            m = fy_node_sequence_get_by_index(m, 0);
        } else {
            break;
        }
    }
    /* Empty collections and aliases carry no scalar token: ask libfyaml to
     * report at the node and read the position back. */
    if (n) {
        fy_node_report(n, FYET_ERROR, "position");
        void *it = NULL;
        struct fy_diag_error *e, *last = NULL;
        while ((e = fy_diag_errors_iterate(L->diag, &it)))
            last = e;
        if (last) {
            p.line = last->line;
            p.col = last->column;
        }
    }
    return p;
}

static bool fail_v(struct loader *L, struct fy_node *at, struct fy_node *origin, const char *fmt,
                   va_list ap)
{
    if (L->failed)
        return false;
    L->failed = true;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *set = set_origin(L, at);
    if (!set && origin)
        set = set_origin(L, origin);
    if (set) {
        snprintf(L->err, L->errcap, "override %s: %s", set, msg);
    } else if (!at) {
        snprintf(L->err, L->errcap, "%s: %s", L->file, msg);
    } else {
        struct cfg_pos p = sim__pos(L, at);
        snprintf(L->err, L->errcap, "%s:%d:%d: %s", p.file, p.line, p.col, msg);
    }
    return false;
}

bool sim__fail(struct loader *L, struct fy_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(L, n, NULL, fmt, ap);
    va_end(ap);
    return false;
}

static bool fail_in(struct loader *L, struct fy_node *at, struct fy_node *origin, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail_in(struct loader *L, struct fy_node *at, struct fy_node *origin, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(L, at, origin, fmt, ap);
    va_end(ap);
    return false;
}

bool sim__fail_at(struct loader *L, const struct cfg_pos *pos, const char *fmt, ...)
{
    if (L->failed)
        return false;
    L->failed = true;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (pos->line)
        snprintf(L->err, L->errcap, "%s:%d:%d: %s", pos->file, pos->line, pos->col, msg);
    else
        snprintf(L->err, L->errcap, "%s: %s", pos->file, msg);
    return false;
}

size_t sim__edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return la > lb ? la : lb;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

FILE *sim__open_regular(const char *path, const char **why)
{
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        *why = "not a regular file";
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !(f = fdopen(fd, "r")))
        *why = strerror(errno);
    if (!f)
        close(fd);
    return f;
}

size_t sim__text_check(const uint8_t *p, size_t n, const char **why)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (!c) {
            *why = "holds a NUL byte: not a text file";
            return i;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        /* RFC 3629 section 4: the length from the lead byte, then the
         * ranges that exclude overlong forms, surrogates and > U+10FFFF */
        size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        uint8_t hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        bool ok = len && i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
        for (size_t k = 2; ok && k < len; k++)
            ok = p[i + k] >= 0x80 && p[i + k] <= 0xbf;
        if (!ok) {
            *why = "is not UTF-8 text";
            return i;
        }
        i += len;
    }
    return n;
}

/* ---- typed values --------------------------------------------------------- */
static bool plain(struct loader *L, struct fy_node *n, const char *what)
{
    if (fy_node_is_alias(n))
        return sim__fail(L, n, "%s: aliases (*name) are not supported", what);
    return true;
}

bool sim__expect_seq(struct loader *L, struct fy_node *n, const char *what)
{
    if (!plain(L, n, what))
        return false;
    if (!fy_node_is_sequence(n))
        return sim__fail(L, n, "%s must be a list", what);
    return true;
}

bool sim__expect_map(struct loader *L, struct fy_node *n, const char *what)
{
    if (!plain(L, n, what))
        return false;
    if (!fy_node_is_mapping(n))
        return sim__fail(L, n, "%s must be a mapping of keys to values", what);
    return true;
}

bool sim__scalar(struct loader *L, struct fy_node *n, const char *what, char *buf, size_t cap)
{
    if (!plain(L, n, what))
        return false;
    if (!fy_node_is_scalar(n))
        return sim__fail(L, n, "%s must be a single value, not a %s", what,
                         fy_node_is_sequence(n) ? "list" : "mapping");
    size_t len;
    const char *s = fy_node_get_scalar(n, &len);
    if (!s)
        return sim__fail(L, n, "%s has no value", what);
    if (len >= cap)
        return sim__fail(L, n, "%s is too long", what);
    if (memchr(s, 0, len))
        return sim__fail(L, n, "%s holds a NUL character", what);
    memcpy(buf, s, len);
    buf[len] = 0;
    if (!len)
        return sim__fail(L, n, "%s has no value", what);
    return true;
}

#define TYPED(fn, parse, type)                                                 \
    bool fn(struct loader *L, struct fy_node *n, const char *what, type *v)     \
    {                                                                          \
        char buf[VALUE_MAX];                                                   \
        if (!sim__scalar(L, n, what, buf, sizeof buf))                         \
            return false;                                                      \
        const char *e = parse(buf, v);                                         \
        return e ? sim__fail(L, n, "%s: '%s' is %s", what, buf, e) : true;     \
    }

TYPED(sim__get_time, sim__parse_time, sim_time_t)
TYPED(sim__get_rate, sim__parse_rate, uint64_t)
TYPED(sim__get_prob, sim__parse_prob, double)
#undef TYPED

/* The parsers' messages read "'x' is not a time: ..."; these two say "is". */
bool sim__get_size(struct loader *L, struct fy_node *n, const char *what, uint64_t min,
                   uint64_t max, uint64_t *v)
{
    char buf[VALUE_MAX];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    const char *e = sim__parse_size(buf, v);
    if (e)
        return sim__fail(L, n, "%s: '%s' is %s", what, buf, e);
    if (*v < min || *v > max)
        return sim__fail(L, n, "%s: %s is out of range (%llu to %llu bytes)", what, buf,
                         (unsigned long long)min, (unsigned long long)max);
    return true;
}

bool sim__get_uint(struct loader *L, struct fy_node *n, const char *what, uint64_t min,
                   uint64_t max, uint64_t *v)
{
    char buf[VALUE_MAX];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    const char *e = sim__parse_uint(buf, UINT64_MAX, v);
    if (e)
        return sim__fail(L, n, "%s: '%s' is %s", what, buf, e);
    if (*v < min || *v > max)
        return sim__fail(L, n, "%s: %s is out of range (%llu to %llu)", what, buf,
                         (unsigned long long)min, (unsigned long long)max);
    return true;
}

bool sim__get_u32(struct loader *L, struct fy_node *n, const char *what, uint32_t min,
                  uint32_t max, uint32_t *v)
{
    uint64_t x;
    if (!sim__get_uint(L, n, what, min, max, &x))
        return false;
    *v = (uint32_t)x;
    return true;
}

bool sim__get_bool(struct loader *L, struct fy_node *n, const char *what, bool *v)
{
    char buf[VALUE_MAX];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    int b;
    const char *e = sim__parse_bool(buf, &b);
    if (e)
        return sim__fail(L, n, "%s: '%s' is %s", what, buf, e);
    *v = b;
    return true;
}

bool sim__fields(struct loader *L, struct fy_node *map, const char *what,
                 const char *const *keys, struct fy_node **vals)
{
    size_t nkeys = 0;
    while (keys[nkeys])
        vals[nkeys++] = NULL;
    if (!sim__expect_map(L, map, what))
        return false;
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(map, &it))) {
        struct fy_node *k = fy_node_pair_key(pair), *v = fy_node_pair_value(pair);
        char key[256];
        if (!k || !fy_node_is_scalar(k) || fy_node_is_alias(k))
            return fail_in(L, k ? k : map, map, "%s: keys must be plain names", what);
        size_t len;
        const char *ks = fy_node_get_scalar(k, &len);
        if (!ks || len >= sizeof key || memchr(ks, 0, len))
            return fail_in(L, k, map, "%s: keys must be plain names", what);
        memcpy(key, ks, len);
        key[len] = 0;
        size_t i, best = 0, bestd = SIZE_MAX;
        for (i = 0; i < nkeys; i++) {
            if (!strcmp(key, keys[i]))
                break;
            size_t d = sim__edit_distance(key, keys[i]);
            if (d < bestd) {
                bestd = d;
                best = i;
            }
        }
        if (i == nkeys) {
            if (nkeys && bestd <= (strlen(key) > 4 ? 3 : 2))
                return fail_in(L, k, map, "%s: unknown key '%s' (did you mean '%s'?)", what, key,
                               keys[best]);
            char valid[512];
            size_t n = 0;
            for (size_t j = 0; j < nkeys && n < sizeof valid; j++)
                n += (size_t)snprintf(valid + n, sizeof valid - n, "%s%s", j ? ", " : "", keys[j]);
            return fail_in(L, k, map, "%s: unknown key '%s' (valid keys: %s)", what, key, valid);
        }
        if (!v)
            return fail_in(L, k, map, "%s: '%s' has no value", what, key);
        vals[i] = v;
    }
    return true;
}

/* ---- nodes ---------------------------------------------------------------- */
static size_t name_slot(const struct name_index *ix, const struct sim_config *cfg, const char *name)
{
    size_t mask = ix->cap - 1, i = sim__hash_str(name) & mask;
    while (ix->slots[i] && strcmp(cfg->nodes[ix->slots[i] - 1].name, name))
        i = (i + 1) & mask;
    return i;
}

int64_t sim__find_node(struct loader *L, const char *name)
{
    if (!L->names.cap)
        return -1;
    uint32_t s = L->names.slots[name_slot(&L->names, L->cfg, name)];
    return s ? (int64_t)s - 1 : -1;
}

const char *sim__nearest_node(struct loader *L, const char *name)
{
    const char *best = NULL;
    size_t bestd = strlen(name) > 4 ? 3 : 2;
    /* small configurations only: a long scan helps nobody in a fat-tree */
    if (L->cfg->nnodes > 4096)
        return NULL;
    for (size_t i = 0; i < L->cfg->nnodes; i++) {
        size_t d = sim__edit_distance(name, L->cfg->nodes[i].name);
        if (d < bestd || (d == bestd && !best)) {
            if (d < bestd || d <= 1) {
                bestd = d;
                best = L->cfg->nodes[i].name;
            }
        }
    }
    return best;
}

static bool valid_name(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

bool sim__add_node(struct loader *L, const char *name, enum cfg_node_kind kind,
                   struct fy_node *at, uint32_t *index)
{
    struct sim_config *cfg = L->cfg;
    if (!valid_name(name))
        return sim__fail(L, at, "name '%s' may hold only letters, digits, '_', '-' and '.', "
                                "and may not start with '-' or '.'", name);
    if (strlen(name) > 200)
        return sim__fail(L, at, "name '%s' is too long", name);
    if (cfg->nnodes >= CFG_MAX_NODES)
        return sim__fail(L, at, "more than %d nodes", CFG_MAX_NODES);
    int64_t old = sim__find_node(L, name);
    if (old >= 0) {
        const struct cfg_pos *p = &cfg->nodes[old].pos;
        char where[64] = "";
        if (p->line)
            snprintf(where, sizeof where, ":%d:%d", p->line, p->col);
        return sim__fail(L, at, "duplicate name '%s' (first defined at %s%s)", name, p->file, where);
    }
    if (2 * (cfg->nnodes + 1) > L->names.cap) {
        size_t cap = L->names.cap ? L->names.cap * 2 : 64;
        while (2 * (cfg->nnodes + 1) > cap)
            cap *= 2;
        free(L->names.slots);
        L->names.slots = sim__xcalloc(cap, sizeof *L->names.slots);
        L->names.cap = cap;
        for (size_t i = 0; i < cfg->nnodes; i++)
            L->names.slots[name_slot(&L->names, cfg, cfg->nodes[i].name)] = (uint32_t)i + 1;
    }
    SIM_GROW(cfg->nodes, cfg->capnodes, cfg->nnodes);
    struct cfg_node *nd = &cfg->nodes[cfg->nnodes];
    *nd = (struct cfg_node){
        .name = sim__xstrdup(name),
        .kind = (uint8_t)kind,
        .buffer = CFG_DEFAULT_BUFFER,
        .nic = cfg->nic,
        .pos = sim__pos(L, at),
    };
    *index = (uint32_t)cfg->nnodes++;
    L->names.slots[name_slot(&L->names, cfg, name)] = *index + 1;
    return true;
}

bool sim__get_node(struct loader *L, struct fy_node *n, const char *what, uint32_t *index)
{
    char buf[VALUE_MAX];
    if (!sim__scalar(L, n, what, buf, sizeof buf))
        return false;
    int64_t i = sim__find_node(L, buf);
    if (i < 0) {
        const char *near = sim__nearest_node(L, buf);
        if (near)
            return sim__fail(L, n, "%s: unknown node '%s' (did you mean '%s'?)", what, buf, near);
        return sim__fail(L, n, "%s: unknown node '%s'", what, buf);
    }
    *index = (uint32_t)i;
    return true;
}

bool sim__get_host(struct loader *L, struct fy_node *n, const char *what, uint32_t *index)
{
    if (!sim__get_node(L, n, what, index))
        return false;
    if (L->cfg->nodes[*index].kind != CFG_HOST)
        return sim__fail(L, n, "%s: '%s' is a switch, not a host", what, L->cfg->nodes[*index].name);
    return true;
}

void sim__add_link(struct loader *L, uint32_t a, uint32_t b, const struct cfg_link_params *p,
                   const struct cfg_pos *pos)
{
    struct sim_config *cfg = L->cfg;
    SIM_GROW(cfg->links, cfg->caplinks, cfg->nlinks);
    cfg->links[cfg->nlinks++] = (struct cfg_link){.a = a, .b = b, .p = *p, .pos = *pos};
    cfg->nodes[a].nlinks++;
    cfg->nodes[b].nlinks++;
}

