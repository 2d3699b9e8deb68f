/* load_collective.c - the collective generators: all-reduce, reduce-scatter,
 * all-gather and broadcast over a ring of hosts, and alltoall, expanded
 * into the messages NCCL's ring algorithm sends (docs/config.md, "Collectives").
 *
 * A rank's buffer of `size` bytes is cut into n chunks, one per rank, and
 * every chunk into slices of at most `slice` bytes. At step k rank r sends
 * slice j of chunk (r - k) mod n to rank r + 1, as soon as slice j of step
 * k - 1 has arrived from rank r - 1:
 *
 *   reduce-scatter  n - 1 steps, each adding the rank's own contribution
 *   all-gather      n - 1 steps, each forwarding what arrived
 *   all-reduce      a reduce-scatter, then an all-gather: 2(n - 1) steps
 *
 *   rank:      0        1        2        3
 *   step 0:  c0 ->   c1 ->    c2 ->    c3 -> (rank 0)
 *   step 1:  c3+0 -> c0+1 ->  c1+2 ->  c2+3 -> ...
 *
 * Broadcast forwards the first rank's buffer along the chain of ranks the
 * same way, slice by slice; alltoall sends chunk d of every rank's buffer
 * to rank d directly.
 *
 * All-reduce with algorithm: tree goes up and down NCCL's two binary
 * trees instead (tree_all_reduce below); with algorithm: hierarchical it
 * goes over NVLink inside each server and one ring per rail between them
 * (hierarchical_all_reduce).
 *
 * Every step is an RDMA WRITE with immediate, as NCCL's InfiniBand
 * transport (net_ib) posts its sends, so the receiver learns of each
 * slice from its receive completion. Several sizes run one after the
 * other: a rank starts the next collective once the last slice of the one
 * before has reached it.
 */
#include <stdlib.h>
#include <string.h>

#include "config/cfg_pcie.h"
#include "config/loader.h"
#include "engine/units.h"
#include "engine/util.h"

/* NCCL's Simple protocol moves a ring's data in steps of its buffer
 * (NCCL_BUFFSIZE, 4 MiB) divided by NCCL_STEPS (8): 512 KiB. */
#define COLL_DEFAULT_SLICE (512 * 1024)

const char *sim__coll_name(unsigned kind)
{
    static const char *const names[] = {
#define CFG__COLL_NAME(name, str) str,
        CFG_COLLS(CFG__COLL_NAME)
#undef CFG__COLL_NAME
    };
    return kind < CFG_COLL_COUNT ? names[kind] : "?";
}

/* Elements (32-bit integers, summed) of chunk c of a buffer of e elements
 * cut into n chunks: [e*c/n, e*(c+1)/n). */
static uint64_t chunk_first(uint64_t e, uint32_t c, uint32_t n) { return e * c / n; }

static bool sizes_of(struct loader *L, struct fy_node *size, struct fy_node *sizes,
                     uint64_t **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (size && sizes)
        return sim__fail(L, sizes, "sizes: give 'size' or a list of 'sizes', not both");
    if (size) {
        *v = sim__xcalloc(1, sizeof **v);
        *n = 1;
        return sim__get_size(L, size, "size", 4, CFG_MAX_MESSAGE, *v);
    }
    if (!sim__expect_seq(L, sizes, "sizes"))
        return false;
    size_t cap = (size_t)fy_node_sequence_item_count(sizes);
    *v = sim__xcalloc(cap ? cap : 1, sizeof **v);
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(sizes, &it)))
        if (!sim__get_size(L, item, "sizes", 4, CFG_MAX_MESSAGE, &(*v)[(*n)++]))
            return false;
    return *n ? true : sim__fail(L, sizes, "sizes: an empty list");
}

/* The messages of one collective of `size` bytes; *last_at[r] is the
 * message whose arrival at rank r ended the collective before (0: none),
 * and becomes this one's. */
/* Broadcast as NCCL's ring runs it: a chain from the first rank, each
 * slice forwarded by every rank as soon as it arrived. */
static bool broadcast(struct loader *L, struct cfg_coll *co, uint32_t coll, const struct cfg_msg *proto)
{
    uint32_t n = co->nranks;
    uint64_t e = co->size / 4, ns = (co->size + co->slice - 1) / co->slice;
    if ((uint64_t)(n - 1) * ns + L->cfg->nmsgs > CFG_MAX_MESSAGES)
        return sim__fail_at(L, &co->pos, "more than %d messages", CFG_MAX_MESSAGES);
    for (uint32_t k = 0; k + 1 < n; k++)
        for (uint64_t j = 0; j < ns; j++) {
            uint64_t s0 = e * j / ns, s1 = e * (j + 1) / ns;
            struct cfg_msg m = *proto;
            m.src = co->ranks[k];
            m.dst = co->ranks[k + 1];
            m.size = 4 * (s1 - s0);
            m.coll = coll;
            m.rank = k;
            m.coll_off = 4 * s0;
            m.imm = (uint32_t)j;
            m.after = k ? co->first_msg + (uint32_t)((uint64_t)(k - 1) * ns + j) + 1 : 0;
            m.combine = k ? CFG_COMBINE_COPY : CFG_COMBINE_OWN;
            m.sum_from = 0; /* the root's data */
            m.sum_count = 1;
            if (!sim__workload_add(L, &m))
                return false;
        }
    return true;
}

/* All-to-all: rank r sends chunk d of its buffer straight to rank d, all
 * at once, as NCCL's alltoall posts a send to every peer. */
static bool all_to_all(struct loader *L, struct cfg_coll *co, uint32_t coll, const struct cfg_msg *proto)
{
    uint32_t n = co->nranks;
    uint64_t e = co->size / 4;
    uint64_t ns = ((e + n - 1) / n * 4 + co->slice - 1) / co->slice;
    if ((uint64_t)n * (n - 1) * ns + L->cfg->nmsgs > CFG_MAX_MESSAGES)
        return sim__fail_at(L, &co->pos, "more than %d messages", CFG_MAX_MESSAGES);
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t i = 1; i < n; i++) {
            uint32_t d = (r + i) % n; /* peers in turn, so that no rank is everybody's first */
            uint64_t c0 = chunk_first(e, d, n), clen = chunk_first(e, d + 1, n) - c0;
            for (uint64_t j = 0; j < ns; j++) {
                uint64_t s0 = c0 + clen * j / ns, s1 = c0 + clen * (j + 1) / ns;
                struct cfg_msg m = *proto;
                m.src = co->ranks[r];
                m.dst = co->ranks[d];
                m.size = 4 * (s1 - s0);
                m.coll = coll;
                m.rank = r;
                m.coll_off = 4 * s0;
                m.imm = (uint32_t)j;
                m.combine = CFG_COMBINE_OWN;
                m.sum_from = r;
                m.sum_count = 1;
                if (!sim__workload_add(L, &m))
                    return false;
            }
        }
    return true;
}

/* NCCL's double binary tree (NCCL 2.4; Sanders, Speck and Träff,
 * "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
 * Parallel Computing 2009), built here from its description. The first
 * tree is in order over ranks 0 .. n-1, so that every subtree is a run of
 * consecutive ranks: rank r > 0 whose lowest set bit is b has the
 * children r - b/2 and r + b/2 (or, where that is past the last rank,
 * the first of r + b/4, r + b/8, ... that is not), none when b is 1; rank
 * 0 is the root, above the largest power of two below n. Its leaves are
 * the odd ranks. The second tree is the first with every rank mirrored
 * (n-1-r) when n is even, shifted by one (r+1 mod n) when it is odd, so
 * that the first tree's leaves are inner ranks of the second: no rank
 * sends to two children in both trees. */
struct tree_rank {
    uint32_t parent;   /* n: the root */
    uint32_t child[2]; /* n: none; child[0] before child[1] */
    uint32_t sum_from, sum_count; /* the ranks of the subtree, around the ring */
};

static void plain_tree(uint32_t n, uint32_t r, uint32_t child[2], uint32_t *lo, uint32_t *hi)
{
    child[0] = child[1] = n;
    if (!r) {
        uint32_t top = 1;
        while (2 * top < n)
            top *= 2;
        child[0] = top;
        *lo = 0;
        *hi = n - 1;
        return;
    }
    uint32_t b = r & -r;
    *lo = r - b + 1;
    *hi = r + b - 1 < n ? r + b - 1 : n - 1;
    if (b == 1)
        return;
    child[0] = r - b / 2;
    for (uint32_t d = b / 2; d; d /= 2)
        if (r + d < n) {
            child[1] = r + d;
            break;
        }
}

static void build_tree(uint32_t n, int which, struct tree_rank *t)
{
    bool mirror = n % 2 == 0;
    for (uint32_t r = 0; r < n; r++)
        t[r].parent = n;
    for (uint32_t p = 0; p < n; p++) { /* p: the rank's place in the first tree */
        uint32_t r = !which ? p : mirror ? n - 1 - p : (p + 1) % n;
        uint32_t kid[2], lo, hi;
        plain_tree(n, p, kid, &lo, &hi);
        t[r].sum_count = hi - lo + 1;
        t[r].sum_from = !which ? lo : mirror ? n - 1 - hi : (lo + 1) % n;
        for (int k = 0; k < 2; k++)
            t[r].child[k] = kid[k] == n || !which ? kid[k] : mirror ? n - 1 - kid[k] : (kid[k] + 1) % n;
    }
    for (uint32_t r = 0; r < n; r++)
        for (int k = 0; k < 2; k++)
            if (t[r].child[k] < n)
                t[t[r].child[k]].parent = r;
}

/* m waits for messages a - 1 and b - 1 (0: none); after2 is set only
 * where after is, as the host posts at start what has no `after`. */
static void wait_for(struct cfg_msg *m, uint32_t a, uint32_t b)
{
    m->after = a ? a : b;
    m->after2 = a ? b : 0;
}

struct tree_step {
    struct loader *L;
    const struct cfg_coll *co;
    const struct tree_rank *t;
    struct cfg_msg proto; /* coll, coll_off, size and imm set */
    const uint32_t *last_at;  /* this tree's and the other's, per rank: n each */
    uint32_t *up, *down;      /* message + 1 into each rank, this slice */
    const uint32_t *freed;    /* down, TREE_STEPS slices before (NULL: none) */
};

/* The slice's way up into rank r's parent, children first: a leaf sends
 * its own contribution, an inner rank its children's sums plus its own. */
static bool reduce_up(struct tree_step *s, uint32_t r)
{
    const struct tree_rank *t = &s->t[r];
    uint32_t n = s->co->nranks;
    for (int k = 0; k < 2; k++)
        if (t->child[k] < n && !reduce_up(s, t->child[k]))
            return false;
    if (t->parent == n)
        return true;
    struct cfg_msg m = s->proto;
    m.src = s->co->ranks[r];
    m.dst = s->co->ranks[t->parent];
    m.rank = r;
    m.sum_from = t->sum_from;
    m.sum_count = t->sum_count;
    if (t->child[0] == n) {
        /* a leaf: once the collective before has ended here, and the
         * slice TREE_STEPS before has come back down, freeing its place */
        m.combine = CFG_COMBINE_OWN;
        if (s->freed)
            wait_for(&m, s->freed[r], 0);
        else
            wait_for(&m, s->last_at[r], s->last_at[n + r]);
    } else {
        m.combine = t->child[1] < n ? CFG_COMBINE_ADD2 : CFG_COMBINE_ADD;
        wait_for(&m, s->up[t->child[0]], t->child[1] < n ? s->up[t->child[1]] : 0);
    }
    if (!sim__workload_add(s->L, &m))
        return false;
    s->up[r] = (uint32_t)s->L->cfg->nmsgs;
    return true;
}

/* The whole sum down from rank r to its children: the root adds its
 * children's sums to its own, the others forward what came from above. */
static bool broadcast_down(struct tree_step *s, uint32_t r)
{
    const struct tree_rank *t = &s->t[r];
    uint32_t n = s->co->nranks;
    for (int k = 0; k < 2; k++) {
        if (t->child[k] == n)
            continue;
        struct cfg_msg m = s->proto;
        m.src = s->co->ranks[r];
        m.dst = s->co->ranks[t->child[k]];
        m.rank = r;
        m.sum_from = 0;
        m.sum_count = n;
        if (t->parent < n) {
            m.combine = CFG_COMBINE_COPY;
            wait_for(&m, s->down[r], 0);
        } else {
            m.combine = t->child[1] < n ? CFG_COMBINE_ADD2 : CFG_COMBINE_ADD;
            wait_for(&m, s->up[t->child[0]], t->child[1] < n ? s->up[t->child[1]] : 0);
        }
        if (!sim__workload_add(s->L, &m))
            return false;
        s->down[t->child[k]] = (uint32_t)s->L->cfg->nmsgs;
    }
    for (int k = 0; k < 2; k++)
        if (t->child[k] < n && !broadcast_down(s, t->child[k]))
            return false;
    return true;
}

/* Slices of a tree in flight at once: NCCL keeps NCCL_STEPS (8) slots per
 * connection, and a rank sends a slice only into a free one. Here a leaf
 * sends slice j once slice j - 8 has come back down to it. */
#define TREE_STEPS 8

/* All-reduce over the two trees, each carrying half of the buffer in
 * slices: every slice goes up its tree, summed on the way, and back down
 * as soon as the root has it, while the next slices are still going up.
 * last_at holds, for each tree and rank, the message whose arrival ended
 * the collective before there (the root's: the last from its first
 * child). */
static bool tree_all_reduce(struct loader *L, struct cfg_coll *co, uint32_t coll,
                            const struct cfg_msg *proto, uint32_t *last_at)
{
    uint32_t n = co->nranks;
    uint64_t e = co->size / 4, half = (e + 1) / 2;
    uint64_t ns = (4 * half + co->slice - 1) / co->slice;
    if (2 * ns * 2 * (n - 1) + L->cfg->nmsgs > CFG_MAX_MESSAGES)
        return sim__fail_at(L, &co->pos, "more than %d messages", CFG_MAX_MESSAGES);
    struct tree_rank *trees = sim__xcalloc(2 * n, sizeof *trees);
    uint32_t *prev = sim__xmalloc(2 * n * sizeof *prev);
    memcpy(prev, last_at, 2 * n * sizeof *prev);
    uint32_t *down = sim__xcalloc(ns * n, sizeof *down);
    struct tree_step s = {.L = L, .co = co, .last_at = prev, .up = sim__xcalloc(n, sizeof *s.up)};
    bool ok = true;
    for (int which = 0; ok && which < 2; which++) {
        struct tree_rank *t = &trees[which * n];
        build_tree(n, which, t);
        uint32_t root = 0;
        while (t[root].parent < n)
            root = t[root].parent;
        uint64_t h0 = which ? e / 2 : 0, hl = which ? e - e / 2 : e / 2;
        for (uint64_t j = 0; ok && j < ns; j++) {
            uint64_t s0 = h0 + hl * j / ns, s1 = h0 + hl * (j + 1) / ns;
            s.t = t;
            s.proto = *proto;
            s.proto.coll = coll;
            s.proto.coll_off = 4 * s0;
            s.proto.size = 4 * (s1 - s0);
            s.proto.imm = (uint32_t)j;
            s.down = &down[j * n];
            s.freed = j >= TREE_STEPS ? &down[(j - TREE_STEPS) * n] : NULL;
            ok = reduce_up(&s, root) && broadcast_down(&s, root);
        }
        for (uint32_t r = 0; r < n; r++)
            last_at[which * n + r] = r == root ? s.up[t[root].child[0]] : s.down[r];
    }
    free(s.up);
    free(down);
    free(prev);
    free(trees);
    return ok;
}

/* Hierarchical all-reduce over N servers of G GPUs (ranks s*G + l, as
 * by_server orders them): NVLink inside each server, RDMA between servers, one
 * inter-server ring per GPU's NIC (its rail):
 *
 *   1 reduce-scatter over NVLink, a ring round the G GPUs of each server:
 *     at step k GPU l sends chunk (l - 1 - k) mod G to GPU l + 1, adding
 *     its own; after G - 1 steps GPU l holds the server's sum of chunk l
 *     (less its own contribution, which it adds as it sends it on)
 *   2 G all-reduces at once, GPU l of every server in a ring over its own
 *     NIC, of chunk l cut into N parts as the ring cuts a buffer: 2(N - 1)
 *     steps, each adding what arrived to the server's sum of the part
 *   3 all-gather over NVLink: at step k GPU l sends chunk (l - k) mod G,
 *     as the reduced chunk it holds and then forwarding, for G - 1 steps
 *
 * Every part is cut into slices of at most `slice`, one message each, so
 * that the phases overlap slice by slice. Slices between two GPUs go one
 * after the other, so a first step that sent every slice at once would
 * put the slices forwarded in later steps behind all of them; a GPU sends
 * slice q of its first step only once slice q - HIER_WINDOW has come
 * through phase 1 to it, as NCCL_STEPS (8) slots per connection keep
 * that many slices in flight. */
#define HIER_WINDOW 8

struct hier {
    struct loader *L;
    const struct cfg_coll *co;
    struct cfg_msg proto; /* coll set */
    uint32_t N, G;
    uint64_t e, ns;       /* elements of the buffer; slices per part */
    uint32_t *p1, *p2, *p3; /* message + 1 of each step (index functions below) */
};

static size_t i1(const struct hier *h, uint32_t s, uint32_t l, uint32_t k, uint32_t p, uint64_t j)
{
    return (((size_t)(s * h->G + l) * (h->G - 1) + k) * h->N + p) * h->ns + j;
}

static size_t i2(const struct hier *h, uint32_t l, uint32_t k, uint32_t s, uint64_t j)
{
    return (((size_t)l * 2 * (h->N - 1) + k) * h->N + s) * h->ns + j;
}

/* phase 3 has phase 1's shape */
#define i3 i1

/* Slice j of part p of chunk c, as [*s0, *s1) elements. */
static void unit(const struct hier *h, uint32_t c, uint32_t p, uint64_t j, uint64_t *s0, uint64_t *s1)
{
    uint64_t c0 = chunk_first(h->e, c, h->G), clen = chunk_first(h->e, c + 1, h->G) - c0;
    uint64_t p0 = c0 + chunk_first(clen, p, h->N), plen = chunk_first(clen, p + 1, h->N) -
                                                         chunk_first(clen, p, h->N);
    *s0 = p0 + plen * j / h->ns;
    *s1 = p0 + plen * (j + 1) / h->ns;
}

static bool hier_step(struct hier *h, uint32_t from, uint32_t to, bool nvlink, uint32_t c,
                      uint32_t p, uint64_t j, struct cfg_msg *m, uint32_t *id)
{
    uint64_t s0, s1;
    unit(h, c, p, j, &s0, &s1);
    m->src = h->co->ranks[from];
    m->dst = h->co->ranks[to];
    m->rank = from;
    m->size = 4 * (s1 - s0);
    m->coll_off = 4 * s0;
    m->imm = (uint32_t)j;
    m->nvlink = nvlink;
    if (nvlink)
        m->op = SIM_OP_WRITE; /* no receive: the GPU reads the NVLink peer's arrival itself */
    if (!sim__workload_add(h->L, m))
        return false;
    *id = (uint32_t)h->L->cfg->nmsgs;
    return true;
}

/* The final step of phase 1 into GPU l of server s, for slice j of part
 * p of chunk l: the server's sum less GPU l's own (0: G = 1, none). */
static uint32_t p1_final(const struct hier *h, uint32_t s, uint32_t l, uint32_t p, uint64_t j)
{
    return h->G > 1 ? h->p1[i1(h, s, (l + h->G - 1) % h->G, h->G - 2, p, j)] : 0;
}

/* Server s's GPUs take the parts in the order phase 2 adds them: part s
 * first, which its ring sends at once, then s - 1, s - 2, ...: the q-th
 * slice they send is slice q mod ns of part hier_part(q). */
static uint32_t hier_part(const struct hier *h, uint32_t s, uint64_t q)
{
    return (uint32_t)((s + h->N - q / h->ns % h->N) % h->N);
}

static bool hier_phase1(struct hier *h, const uint32_t *last_at)
{
    uint32_t N = h->N, G = h->G;
    /* slice by slice, so that slice q - HIER_WINDOW's last step exists
     * when slice q's first waits for it */
    for (uint64_t q = 0; q < (uint64_t)N * h->ns; q++)
        for (uint32_t k = 0; k + 1 < G; k++)
            for (uint32_t s = 0; s < N; s++)
                for (uint32_t l = 0; l < G; l++) {
                    uint32_t p = hier_part(h, s, q);
                    uint64_t j = q % h->ns;
                    uint32_t c = (l + 2 * G - 1 - k) % G, left = (l + G - 1) % G;
                    struct cfg_msg m = h->proto;
                    m.sum_base = s * G;
                    m.sum_span = G;
                    m.sum_from = (l + G - k) % G;
                    m.sum_count = k + 1;
                    if (k) {
                        m.combine = CFG_COMBINE_ADD;
                        wait_for(&m, h->p1[i1(h, s, left, k - 1, p, j)], 0);
                    } else {
                        uint64_t w = q - HIER_WINDOW;
                        m.combine = CFG_COMBINE_OWN;
                        wait_for(&m, q < HIER_WINDOW ? last_at[s * G + l]
                                                     : p1_final(h, s, l, hier_part(h, s, w), w % h->ns),
                                 0);
                    }
                    if (!hier_step(h, s * G + l, s * G + (l + 1) % G, true, c, p, j, &m,
                                   &h->p1[i1(h, s, l, k, p, j)]))
                        return false;
                }
    return true;
}

static bool hier_phase2(struct hier *h, const uint32_t *last_at)
{
    uint32_t N = h->N, G = h->G;
    for (uint32_t k = 0; k < 2 * (N - 1); k++)
        for (uint64_t j = 0; j < h->ns; j++)
            for (uint32_t l = 0; l < G; l++)
                for (uint32_t s = 0; s < N; s++) {
                    uint32_t p = (s + N - k % N) % N, prev = (s + N - 1) % N;
                    struct cfg_msg m = h->proto;
                    uint32_t mine = p1_final(h, s, l, p, j); /* the server's sum, less l's own */
                    if (!k) {
                        m.combine = G > 1 ? CFG_COMBINE_ADD : CFG_COMBINE_OWN;
                        wait_for(&m, G > 1 ? mine : last_at[s * G + l], 0);
                        m.sum_from = s * G;
                        m.sum_count = G;
                    } else if (k < N) {
                        m.combine = G > 1 ? CFG_COMBINE_ADD2 : CFG_COMBINE_ADD;
                        wait_for(&m, h->p2[i2(h, l, k - 1, prev, j)], G > 1 ? mine : 0);
                        m.sum_from = ((s + N - k) % N) * G;
                        m.sum_count = (k + 1) * G;
                    } else {
                        m.combine = CFG_COMBINE_COPY;
                        wait_for(&m, h->p2[i2(h, l, k - 1, prev, j)], 0);
                        m.sum_from = 0;
                        m.sum_count = N * G;
                    }
                    if (!hier_step(h, s * G + l, ((s + 1) % N) * G + l, false, l, p, j, &m,
                                   &h->p2[i2(h, l, k, s, j)]))
                        return false;
                }
    return true;
}

static bool hier_phase3(struct hier *h)
{
    uint32_t N = h->N, G = h->G;
    for (uint32_t k = 0; k + 1 < G; k++)
        for (uint32_t p = 0; p < N; p++)
            for (uint64_t j = 0; j < h->ns; j++)
                for (uint32_t s = 0; s < N; s++)
                    for (uint32_t l = 0; l < G; l++) {
                        struct cfg_msg m = h->proto;
                        m.sum_from = 0;
                        m.sum_count = N * G;
                        m.combine = CFG_COMBINE_COPY;
                        uint32_t mine = p1_final(h, s, l, p, j), prev = (s + N - 1) % N;
                        if (k) {
                            wait_for(&m, h->p3[i3(h, s, (l + G - 1) % G, k - 1, p, j)], 0);
                        } else if (N == 1) {
                            m.combine = CFG_COMBINE_ADD; /* the server's sum is the whole */
                            wait_for(&m, mine, 0);
                        } else if (p == (s + 1) % N) {
                            /* the part this GPU completed itself in phase 2: added again */
                            m.combine = CFG_COMBINE_ADD2;
                            wait_for(&m, h->p2[i2(h, l, N - 2, prev, j)], mine);
                        } else {
                            /* the part as phase 2's all-gather brought it */
                            wait_for(&m, h->p2[i2(h, l, N - 1 + (s + N - p) % N, prev, j)], 0);
                        }
                        if (!hier_step(h, s * G + l, s * G + (l + 1) % G, true, (l + G - k) % G, p,
                                       j, &m, &h->p3[i3(h, s, l, k, p, j)]))
                            return false;
                    }
    return true;
}

static bool hierarchical_all_reduce(struct loader *L, struct cfg_coll *co, uint32_t coll,
                                    const struct cfg_msg *proto, uint32_t *last_at)
{
    uint32_t n = co->nranks, G = co->gpus, N = n / G;
    struct hier h = {.L = L, .co = co, .proto = *proto, .N = N, .G = G, .e = co->size / 4};
    h.proto.coll = coll;
    uint64_t widest = ((h.e + G - 1) / G + N - 1) / N * 4;
    h.ns = (widest + co->slice - 1) / co->slice;
    uint64_t nv = (uint64_t)N * G * (G - 1) * N * h.ns, net = (uint64_t)G * 2 * (N - 1) * N * h.ns;
    if (2 * nv + net + L->cfg->nmsgs > CFG_MAX_MESSAGES)
        return sim__fail_at(L, &co->pos, "more than %d messages", CFG_MAX_MESSAGES);
    h.p1 = sim__xcalloc(nv ? nv : 1, sizeof *h.p1);
    h.p2 = sim__xcalloc(net ? net : 1, sizeof *h.p2);
    h.p3 = sim__xcalloc(nv ? nv : 1, sizeof *h.p3);
    bool ok = hier_phase1(&h, last_at) && hier_phase2(&h, last_at) && hier_phase3(&h);
    /* A GPU starts the next size once the last slice of the last step has
     * reached it: over NVLink, the last slice of the part its right
     * neighbour's rail brought last, s + 2 (phase 2's all-gather brings
     * s, s - 1, ..., s + 2), as slices between two GPUs keep their order. */
    for (uint32_t s = 0; ok && s < N; s++)
        for (uint32_t l = 0; l < G; l++)
            last_at[s * G + l] = G > 1 ? h.p3[i3(&h, s, (l + G - 1) % G, G - 2, N > 1 ? (s + 2) % N : 0,
                                                 h.ns - 1)]
                                       : h.p2[i2(&h, l, 2 * (N - 1) - 1, (s + N - 1) % N, h.ns - 1)];
    free(h.p1);
    free(h.p2);
    free(h.p3);
    return ok;
}

static bool expand(struct loader *L, struct cfg_coll *co, uint32_t coll, const struct cfg_msg *proto,
                   uint32_t *last_at)
{
    if (co->algorithm == CFG_ALG_HIERARCHICAL) {
        co->first_msg = (uint32_t)L->cfg->nmsgs;
        bool ok = hierarchical_all_reduce(L, co, coll, proto, last_at);
        co->nmsgs = (uint32_t)(L->cfg->nmsgs - co->first_msg);
        return ok;
    }
    if (co->algorithm == CFG_ALG_TREE) {
        co->first_msg = (uint32_t)L->cfg->nmsgs;
        bool ok = tree_all_reduce(L, co, coll, proto, last_at);
        co->nmsgs = (uint32_t)(L->cfg->nmsgs - co->first_msg);
        return ok;
    }
    if (co->kind == CFG_COLL_BROADCAST || co->kind == CFG_COLL_ALL_TO_ALL) {
        co->first_msg = (uint32_t)L->cfg->nmsgs;
        bool ok = co->kind == CFG_COLL_BROADCAST ? broadcast(L, co, coll, proto)
                                                 : all_to_all(L, co, coll, proto);
        co->nmsgs = (uint32_t)(L->cfg->nmsgs - co->first_msg);
        return ok;
    }
    struct sim_config *cfg = L->cfg;
    uint32_t n = co->nranks;
    uint64_t e = co->size / 4;
    uint64_t widest = (e + n - 1) / n * 4;
    uint64_t ns = (widest + co->slice - 1) / co->slice;
    uint32_t steps = co->kind == CFG_COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
    if ((uint64_t)steps * n * ns + cfg->nmsgs > CFG_MAX_MESSAGES)
        return sim__fail_at(L, &co->pos, "more than %d messages", CFG_MAX_MESSAGES);
    co->first_msg = (uint32_t)cfg->nmsgs;
    for (uint32_t k = 0; k < steps; k++)
        for (uint32_t r = 0; r < n; r++)
            for (uint64_t j = 0; j < ns; j++) {
                uint32_t c = (r + n - k % n) % n;
                uint64_t c0 = chunk_first(e, c, n), clen = chunk_first(e, c + 1, n) - c0;
                uint64_t s0 = c0 + clen * j / ns, s1 = c0 + clen * (j + 1) / ns;
                struct cfg_msg m = *proto;
                m.src = co->ranks[r];
                m.dst = co->ranks[(r + 1) % n];
                m.size = 4 * (s1 - s0);
                m.coll = coll;
                m.rank = r;
                m.coll_off = 4 * s0;
                m.imm = (uint32_t)(k * ns + j);
                /* the slice it forwards arrived in step k - 1 from rank r - 1 */
                uint32_t prev = (r + n - 1) % n;
                m.after = k ? co->first_msg + (uint32_t)(((uint64_t)(k - 1) * n + prev) * ns + j) + 1
                            : last_at[r];
                bool reducing = co->kind != CFG_COLL_ALL_GATHER && k < n;
                m.combine = !k ? CFG_COMBINE_OWN : reducing ? CFG_COMBINE_ADD : CFG_COMBINE_COPY;
                if (co->kind == CFG_COLL_ALL_GATHER) {
                    m.sum_from = c; /* the chunk's owner's data, forwarded */
                    m.sum_count = 1;
                } else if (k < n - 1) {
                    m.sum_from = c; /* ranks c .. r have added theirs */
                    m.sum_count = k + 1;
                } else {
                    m.sum_from = 0;
                    m.sum_count = n;
                }
                if (!sim__workload_add(L, &m))
                    return false;
            }
    co->nmsgs = (uint32_t)(cfg->nmsgs - co->first_msg);
    for (uint32_t r = 0; r < n; r++)
        last_at[r] = co->first_msg + (uint32_t)(((uint64_t)(steps - 1) * n + (r + n - 1) % n) * ns +
                                                ns - 1) + 1;
    return true;
}

/* A hierarchical collective's ranks, grouped by server (its NVSwitch),
 * servers in the order they first appear and GPUs of one server in the
 * order they do: rank s*G + l is GPU l of server s. Every server must
 * bring the same number G of GPUs. */
static bool by_server(struct loader *L, struct fy_node *at, uint32_t *ranks, uint32_t n,
                      uint32_t *gpus)
{
    const struct sim_config *cfg = L->cfg;
    uint32_t *sorted = sim__xmalloc(n * sizeof *sorted), *servers = sim__xcalloc(n, sizeof *servers);
    uint32_t nservers = 0, k = 0;
    bool ok = true;
    for (uint32_t r = 0; ok && r < n; r++) {
        const struct cfg_node *h = &cfg->nodes[ranks[r]];
        if (!h->nvswitch)
            ok = sim__fail(L, at, "algorithm: hierarchical: host '%s' has no NVLink to the other "
                                  "GPUs of its server (rail generator: server: gpu8, or nvlink)",
                           h->name);
        bool seen = false;
        for (uint32_t i = 0; i < nservers; i++)
            seen |= servers[i] == h->nvswitch;
        if (ok && !seen)
            servers[nservers++] = h->nvswitch;
    }
    for (uint32_t i = 0; ok && i < nservers; i++) {
        uint32_t here = 0;
        for (uint32_t r = 0; r < n; r++)
            if (cfg->nodes[ranks[r]].nvswitch == servers[i]) {
                sorted[k++] = ranks[r];
                here++;
            }
        if (!i)
            *gpus = here;
        else if (here != *gpus)
            ok = sim__fail(L, at, "algorithm: hierarchical: every server needs as many GPUs "
                                  "among the hosts (%u in the first server, %u in that of '%s')",
                           *gpus, here, cfg->nodes[sorted[k - 1]].name);
    }
    if (ok)
        memcpy(ranks, sorted, n * sizeof *ranks);
    free(sorted);
    free(servers);
    return ok;
}

bool sim__collective(struct loader *L, struct fy_node *gen, unsigned kind)
{
    static const char *const keys[] = {"kind", "algorithm", "hosts", "size", "sizes", "slice",
                                       "qp", "start", "mem", "gpudirect", NULL};
    enum { K_KIND, K_ALGORITHM, K_HOSTS, K_SIZE, K_SIZES, K_SLICE, K_QP, K_START, K_MEM,
           K_GPUDIRECT };
    const char *what = sim__coll_name(kind);
    struct fy_node *v[11];
    if (!sim__fields(L, gen, what, keys, v))
        return false;
    uint8_t algorithm = CFG_ALG_RING;
    if (v[K_ALGORITHM]) {
        char alg[32];
        if (!sim__scalar(L, v[K_ALGORITHM], "algorithm", alg, sizeof alg))
            return false;
        if (!strcmp(alg, "tree"))
            algorithm = CFG_ALG_TREE;
        else if (!strcmp(alg, "hierarchical"))
            algorithm = CFG_ALG_HIERARCHICAL;
        else if (strcmp(alg, "ring"))
            return sim__fail(L, v[K_ALGORITHM], "algorithm: '%s' is not ring, tree or hierarchical",
                             alg);
        if (algorithm == CFG_ALG_TREE && kind != CFG_COLL_ALL_REDUCE)
            return sim__fail(L, v[K_ALGORITHM],
                             "algorithm: tree runs all-reduce only (as NCCL's does), not %s", what);
        if (algorithm == CFG_ALG_HIERARCHICAL && kind != CFG_COLL_ALL_REDUCE)
            return sim__fail(L, v[K_ALGORITHM], "algorithm: hierarchical runs all-reduce only, not %s",
                             what);
    }
    struct cfg_msg proto = {.qp = 1, .op = SIM_OP_WRITE_IMM, .pos = sim__pos(L, gen)};
    uint64_t slice = COLL_DEFAULT_SLICE;
    if ((v[K_QP] && !sim__get_u32(L, v[K_QP], "qp", 1, 65535, &proto.qp)) ||
        (v[K_START] && !sim__get_time(L, v[K_START], "start", &proto.start)) ||
        (v[K_SLICE] && !sim__get_size(L, v[K_SLICE], "slice", 4, CFG_MAX_MESSAGE, &slice)))
        return false;
    /* every rank's buffers in the same memory: a GPU's for NCCL */
    if ((v[K_MEM] || v[K_GPUDIRECT]) &&
        !sim__pcie_mem(L, v[K_MEM], v[K_MEM], v[K_GPUDIRECT], proto.mem))
        return false;
    if (slice % 4)
        return sim__fail(L, v[K_SLICE], "slice: not a whole number of 4-byte elements");
    if (!v[K_SIZE] && !v[K_SIZES])
        return sim__fail(L, gen, "%s: needs a 'size' or 'sizes'", what);
    uint64_t *sizes;
    size_t nsizes;
    uint32_t *ranks = NULL;
    size_t nranks = 0;
    bool ok = sizes_of(L, v[K_SIZE], v[K_SIZES], &sizes, &nsizes) &&
              sim__host_list(L, v[K_HOSTS], "hosts", &ranks, &nranks);
    if (ok && nranks < 2)
        ok = sim__fail(L, v[K_HOSTS] ? v[K_HOSTS] : gen, "%s: needs at least two hosts", what);
    if (ok && nsizes > 1 && (kind == CFG_COLL_BROADCAST || kind == CFG_COLL_ALL_TO_ALL))
        ok = sim__fail(L, v[K_SIZES], "%s: one size per generator (a list of sizes runs only "
                                      "for the ring collectives)", what);
    for (size_t i = 0; ok && i < nsizes; i++)
        if (sizes[i] % 4 || sizes[i] / 4 < nranks)
            ok = sim__fail(L, v[K_SIZE] ? v[K_SIZE] : v[K_SIZES],
                           "%s: a size must be a whole number of 4-byte elements, at least one "
                           "per rank (%zu bytes here)", what, 4 * nranks);
    uint32_t gpus = 0;
    if (ok && algorithm == CFG_ALG_HIERARCHICAL)
        ok = by_server(L, v[K_HOSTS] ? v[K_HOSTS] : gen, ranks, (uint32_t)nranks, &gpus);
    struct sim_config *cfg = L->cfg;
    /* per rank, the arrival that ended the collective before (the tree's:
     * in each of its trees) */
    uint32_t *last_at = sim__xcalloc(nranks ? 2 * nranks : 1, sizeof *last_at);
    for (size_t i = 0; ok && i < nsizes; i++) {
        SIM_GROW(cfg->colls, cfg->capcolls, cfg->ncolls);
        struct cfg_coll *co = &cfg->colls[cfg->ncolls++];
        *co = (struct cfg_coll){
            .kind = (uint8_t)kind,
            .algorithm = algorithm,
            .ranks = sim__xmalloc(nranks * sizeof *ranks),
            .nranks = (uint32_t)nranks,
            .size = sizes[i],
            .slice = slice,
            .gpus = gpus,
            .pos = proto.pos,
        };
        memcpy(co->ranks, ranks, nranks * sizeof *ranks);
        ok = expand(L, co, (uint32_t)cfg->ncolls, &proto, last_at);
    }
    free(last_at);
    free(ranks);
    free(sizes);
    return ok;
}
