/* flows.c - the flow table: open addressing with linear probing on a 64-bit
 * hash, flows stored in fixed-size chunks so pointers to them stay valid,
 * and a second table grouping flows by address pair for pairing by ACK.
 *
 * No allocation happens per packet: only when a new flow appears and, rarely,
 * when a table doubles.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The table only: what its users hung off the flows is theirs to free. */
void replay__flow_table_free(struct flow_table *t)
{
    for (uint32_t c = 0; c < t->nchunks; c++)
        free(t->chunks[c]);
    free(t->chunks);
    free(t->slots);
    free(t->pairs);
    free(t->lead);
    memset(t, 0, sizeof *t);
}

/* A flow leads its conversation unless paired with an earlier flow (a
 * flow whose reverse is itself, QP0 of one LID to itself, is paired with
 * itself and leads). */
static bool leads(const struct rdma_replay_flow *f)
{
    return f->peer < 0 || (uint32_t)f->peer >= f->id - 1;
}

static void lead_add(struct flow_table *t, uint32_t i, int32_t delta)
{
    for (uint32_t j = i + 1; j <= t->lead_cap; j += j & -j)
        t->lead[j - 1] += (uint32_t)delta;
}

/* Room in the tree for flow index i; rebuilt from the flows when it grows. */
static bool lead_room(struct flow_table *t, uint32_t i)
{
    if (i < t->lead_cap)
        return true;
    uint32_t cap = t->lead_cap ? 2 * t->lead_cap : 1024;
    uint32_t *v = realloc(t->lead, cap * sizeof *v);
    if (!v)
        return false;
    t->lead = v;
    t->lead_cap = cap;
    memset(v, 0, cap * sizeof *v);
    for (uint32_t k = 0; k < t->n; k++)
        if (leads(flow_at(t, k)))
            lead_add(t, k, 1);
    return true;
}

uint32_t replay__flow_conv(const struct flow_table *t, const struct rdma_replay_flow *f)
{
    uint32_t i = f->id - 1;
    if (f->peer >= 0 && (uint32_t)f->peer < i)
        i = (uint32_t)f->peer;
    uint32_t n = 0;
    for (uint32_t j = i + 1; j; j -= j & -j)
        n += t->lead[j - 1];
    return n;
}

/* Pair f with the flow at index peer (-1: none), keeping the marks. */
static void set_peer(struct flow_table *t, struct rdma_replay_flow *f, int32_t peer)
{
    bool was = leads(f);
    f->peer = peer;
    if (leads(f) != was)
        lead_add(t, f->id - 1, was ? -1 : 1);
}

static bool key_eq(const struct rdma_replay_key *a, const struct rdma_replay_key *b)
{
    return a->w[0] == b->w[0] && a->w[1] == b->w[1] && a->w[2] == b->w[2] &&
           a->w[3] == b->w[3] && a->w[4] == b->w[4];
}

static uint64_t pair_hash(const uint64_t w[4], uint64_t kinds)
{
    uint64_t h = 0x13198a2e03707344u ^ kinds;
    for (int i = 0; i < 4; i++) {
        h = (h ^ w[i]) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    return h;
}

static struct pair_bucket *pair_lookup(const struct flow_table *t, const uint64_t w[4],
                                       uint64_t kinds)
{
    if (!t->npairs)
        return NULL;
    uint32_t mask = t->npairs - 1;
    for (uint32_t i = (uint32_t)pair_hash(w, kinds) & mask;; i = (i + 1) & mask) {
        struct pair_bucket *b = &t->pairs[i];
        if (!b->used)
            return b;
        if (b->kinds == kinds && !memcmp(b->w, w, sizeof b->w))
            return b;
    }
}

static bool pairs_grow(struct flow_table *t)
{
    uint32_t n = t->npairs ? t->npairs * 2 : 64;
    struct pair_bucket *old = t->pairs;
    uint32_t oldn = t->npairs;
    t->pairs = calloc(n, sizeof *t->pairs);
    if (!t->pairs) {
        t->pairs = old;
        return false;
    }
    t->npairs = n;
    for (uint32_t i = 0; i < oldn; i++)
        if (old[i].used)
            *pair_lookup(t, old[i].w, old[i].kinds) = old[i];
    free(old);
    return true;
}

static uint64_t key_kinds(const struct rdma_replay_key *k)
{
    return k->w[4] >> 24;
}

/* The bucket of the flow's own (source, destination), created if needed. */
static struct pair_bucket *pair_of(struct flow_table *t, const struct rdma_replay_key *k)
{
    if ((t->pairs_used + 1) * 2 > t->npairs && !pairs_grow(t))
        return NULL;
    struct pair_bucket *b = pair_lookup(t, k->w, key_kinds(k));
    if (!b->used) {
        memcpy(b->w, k->w, sizeof b->w);
        b->kinds = key_kinds(k);
        b->used = true;
        t->pairs_used++;
    }
    return b;
}

uint32_t *replay__flow_pair_gen(struct flow_table *t, const struct rdma_replay_key *k)
{
    struct pair_bucket *b = replay__flow_pair(t, k);
    return b ? &b->gen : NULL;
}

struct pair_bucket *replay__flow_pair(struct flow_table *t, const struct rdma_replay_key *k)
{
    struct pair_bucket *b = pair_lookup(t, k->w, key_kinds(k));
    return b && b->used ? b : NULL;
}

static bool slots_grow(struct flow_table *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 1024;
    uint64_t *s = calloc(n, sizeof *s);
    if (!s)
        return false;
    for (uint32_t i = 0; i < t->nslots; i++) {
        uint64_t v = t->slots[i];
        if (!v)
            continue;
        const struct rdma_replay_flow *f = flow_at(t, (uint32_t)v - 1);
        uint32_t j = (uint32_t)replay__flow_key_hash(&f->key) & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = v;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return true;
}

struct rdma_replay_flow *replay__flow_find(const struct flow_table *t, const struct rdma_replay_key *k)
{
    if (!t->nslots)
        return NULL;
    uint64_t h = replay__flow_key_hash(k);
    uint32_t mask = t->nslots - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        uint64_t v = t->slots[i];
        if (!v)
            return NULL;
        if (v >> 32 == h >> 32) {
            struct rdma_replay_flow *f = flow_at(t, (uint32_t)v - 1);
            if (key_eq(&f->key, k))
                return f;
        }
    }
}

static struct rdma_replay_flow *flow_new(struct flow_table *t, const struct rdma_replay_key *k)
{
    if (t->max_flows && t->n >= t->max_flows) {
        t->full = true;
        return NULL;
    }
    if (t->n == t->nchunks * FLOW_CHUNK) {
        struct rdma_replay_flow **c = realloc(t->chunks, (t->nchunks + 1) * sizeof *c);
        if (!c)
            return NULL;
        t->chunks = c;
        if (!(c[t->nchunks] = malloc(FLOW_CHUNK * sizeof **c)))
            return NULL;
        t->nchunks++;
    }
    struct pair_bucket *b = pair_of(t, k);
    if (!b || !lead_room(t, t->n))
        return NULL;
    struct rdma_replay_flow *f = flow_at(t, t->n);
    memset(f, 0, sizeof *f);
    f->key = *k;
    f->id = ++t->n;
    f->peer = -1;
    lead_add(t, f->id - 1, 1);
    f->conn = -1;
    f->pair_next = b->head;
    b->head = f->id;
    b->n++;
    return f;
}

struct rdma_replay_flow *replay__flow_get(struct flow_table *t, const struct rdma_replay_key *k, bool *created)
{
    *created = false;
    if ((t->n + 1) * 2 > t->nslots && !slots_grow(t))
        return NULL;
    uint64_t h = replay__flow_key_hash(k);
    uint32_t mask = t->nslots - 1;
    uint32_t i = (uint32_t)h & mask;
    for (;; i = (i + 1) & mask) {
        uint64_t v = t->slots[i];
        if (!v)
            break;
        if (v >> 32 == h >> 32) {
            struct rdma_replay_flow *f = flow_at(t, (uint32_t)v - 1);
            if (key_eq(&f->key, k))
                return f;
        }
    }
    struct rdma_replay_flow *f = flow_new(t, k);
    if (!f)
        return NULL;
    t->slots[i] = (h >> 32) << 32 | f->id;
    *created = true;
    return f;
}

void replay__flows_join(struct flow_table *t, struct rdma_replay_flow *a, struct rdma_replay_flow *b,
                        enum rdma_replay_pairing how)
{
    struct rdma_replay_flow *both[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct rdma_replay_flow *f = both[i], *other = both[1 - i];
        if (f->peer >= 0 && (uint32_t)f->peer != other->id - 1) {
            struct rdma_replay_flow *old = flow_at(t, (uint32_t)f->peer);
            set_peer(t, old, -1);
            old->pairing = RDMA_REPLAY_PAIR_NONE;
        }
        set_peer(t, f, (int32_t)(other->id - 1));
        f->pairing = (uint8_t)how;
    }
    a->src_qpn_known = b->src_qpn_known = true;
    a->src_qpn = rdma_replay_key_qpn(&b->key);
    b->src_qpn = rdma_replay_key_qpn(&a->key);
}
