/* engine.c - the event queue, ordered by (time, key).
 *
 * The key is the domain of the event's target, a turn drawn from the
 * scheduling component's id, and that component's own count of events
 * scheduled (engine.h), so events a component schedules for the same
 * picosecond fire in the order it scheduled them (ns-3's EventKey, libuv's
 * timer_less_than), a run is a pure function of its inputs and seed, and
 * the order does not depend on which components share this engine: the
 * same network split over MPI ranks fires the same events in the same
 * order (ROSS and ns-3's distributed simulator tie-break the same way, by
 * the sender's identity rather than arrival at the receiver). The domain
 * comes first because the order of equal-time events of different domains
 * changes nothing (they share no state) but where memory is read: at one
 * picosecond, a synchronised fabric of 8,192 hosts fires thousands of
 * events, which ordered by turn alone would read its nodes at random, and
 * ordered by domain read them in turn (a domain is what a parallel
 * simulator calls a logical process).
 *
 * Nearly every event of a network lies less than a few microseconds ahead
 * (a frame's serialization, a link's delay), so the queue has two parts: a
 * timing wheel of WHEEL_SLOTS slots of 2^SLOT_SHIFT ps each, covering the
 * window that starts at the current slot, where inserting and removing
 * cost O(1), and a 4-ary heap for everything later (timeouts, posted
 * work). A slot is an unordered list until its turn comes: then its events
 * are sorted at once into an array (`cur`) that is read in order, and the
 * events scheduled into that slot meanwhile go to a small heap of their
 * own (`late`). Keys within one picosecond come in no particular order
 * (synchronised flows schedule hundreds of events for the same time, and
 * the turn is a hash), so a slot kept sorted on insertion would cost a
 * walk of the list per event, and a heap a mispredicted branch per level
 * per event; a radix sort on the time within the slot and the turn costs
 * a few passes without a branch. A bitmap finds the next slot in use.
 * The earliest event is the earliest of the slot's next, the late heap's
 * top and the far heap's top; an event for a slot before the current one
 * (scheduled by an event from the far heap) goes to the far heap.
 *
 *   now
 *    |  slot = time >> SLOT_SHIFT                       later: heap
 *   [cur][s+1][s+2] ... [s+WHEEL_SLOTS-1]  |  (t, key) (t, key) ...
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/util.h"

#define WHEEL_SLOTS 4096
#define SLOT_SHIFT 9 /* 512 ps: a window of 2.1 us */
#define DIGITS 4     /* of a slot's radix sort: the turn's three bytes, then the time within the slot */
#define NIL UINT32_MAX

/* A slot's events lie in chunks of CHUNK_EVENTS, appended in order, so
 * that loading a slot reads memory in sequence: a slot of a large fabric
 * holds thousands of events, which one node each would scatter. The
 * wheel of a large fabric is larger than the cache, so a chunk holds its
 * events alone: which chunk follows (chunk_next) and how many a slot's
 * last one holds (tail_n, every other is full) lie in small arrays that
 * stay in cache, a slot's chunks are found and fetched before they are
 * read, and queueing an event writes its line without reading the chunk
 * (the next line it will write is fetched as the one before fills). */
#define CHUNK_EVENTS 16
struct chunk {
    struct sim_event ev[CHUNK_EVENTS];
} __attribute__((aligned(64)));
#define WHEEL_ALIGN ((size_t)2 << 20) /* a huge page on x86-64 and most arm64 */

struct sim {
    uint64_t seed;
    sim_time_t now;
    uint32_t setup_seq; /* events scheduled while no component's handler runs */
    struct sim_component *current;
    uint64_t last_key;  /* of the event fired last */
    sim_remote_fn remote;
    void *remote_arg;
    uint8_t *is_remote; /* by component id; NULL while every component is here */
    size_t nis_remote;
    /* the wheel: each slot a list of chunks */
    struct chunk *chunks;
    uint32_t *chunk_next; /* by chunk: the next of its slot, or of the free list */
    size_t capchunks;
    uint32_t free_chunk;
    uint64_t nwheel;
    uint32_t head[WHEEL_SLOTS], tail[WHEEL_SLOTS];
    uint8_t tail_n[WHEEL_SLOTS]; /* events in the slot's last chunk */
    uint64_t used[WHEEL_SLOTS / 64];
    /* the slot whose turn it is (time >> SLOT_SHIFT): sorted, read from
     * cur_at; what was scheduled into it since, a heap; sort's scratch */
    struct sim_event *cur, *sorting;
    size_t ncur, cur_at, capcur;
    struct sim_event *late;
    size_t nlate, caplate;
    uint32_t digit_count[DIGITS][1u << SLOT_SHIFT]; /* sort_slot's: by digit, then value */
    uint64_t cur_slot;
    bool cur_on;
    /* the heap */
    struct sim_event *heap;
    size_t nheap, capheap;
    struct sim_component **comps;
    uint16_t *domain_of; /* by component id: the first part of its events' keys */
    size_t ncomps, capcomps;
    uint64_t processed;
    bool started;
    bool stopped;
    bool prefetch; /* call the ops' prefetch hooks */
    sim_progress_fn progress;
    void *progress_arg;
    uint64_t progress_every, next_progress;
};

const char *sim_event_name(const struct sim_event *ev)
{
    const struct sim_component_ops *ops = ev->target->ops;
    unsigned kind = sim_event_kind(ev);
    return kind < ops->nevents && ops->event_names ? ops->event_names[kind] : "?";
}

struct sim *sim_create(uint64_t seed)
{
    struct sim *sim = sim__xcalloc(1, sizeof *sim);
    sim->seed = seed;
    sim->free_chunk = NIL;
    memset(sim->head, 0xff, sizeof sim->head);
    memset(sim->tail, 0xff, sizeof sim->tail);
    return sim;
}

void sim_destroy(struct sim *sim)
{
    if (!sim)
        return;
    for (size_t i = sim->ncomps; i-- > 0;) {
        struct sim_component *c = sim->comps[i];
        if (c->ops->fini)
            c->ops->fini(c);
    }
    free(sim->comps);
    free(sim->domain_of);
    free(sim->is_remote);
    sim__unmap(sim->chunks, sim->capchunks * sizeof *sim->chunks);
    free(sim->chunk_next);
    free(sim->cur);
    free(sim->sorting);
    free(sim->late);
    free(sim->heap);
    free(sim);
}

uint64_t sim_seed(const struct sim *sim) { return sim->seed; }
sim_time_t sim_now(const struct sim *sim) { return sim->now; }
uint64_t sim_events_pending(const struct sim *sim)
{
    return sim->nwheel + (sim->ncur - sim->cur_at) + sim->nlate + sim->nheap;
}
uint64_t sim_events_processed(const struct sim *sim) { return sim->processed; }
void sim_stop(struct sim *sim) { sim->stopped = true; }
void sim_set_prefetch(struct sim *sim, bool on) { sim->prefetch = on; }

void sim_set_progress(struct sim *sim, sim_progress_fn fn, void *arg, uint64_t every)
{
    sim->progress = fn;
    sim->progress_arg = arg;
    sim->progress_every = every ? every : 1;
    sim->next_progress = sim->processed + sim->progress_every;
}

void sim_component_add(struct sim *sim, struct sim_component *c,
                       const struct sim_component_ops *ops, const char *name)
{
    c->ops = ops;
    c->sim = sim;
    c->name = name;
    assert(sim->ncomps < SIM_MAX_COMPONENTS);
    c->id = (uint32_t)sim->ncomps;
    c->seq = 0;
    sim_rng_seed(&c->rng, sim->seed, name);
    if (sim->ncomps == sim->capcomps) {
        SIM_GROW(sim->comps, sim->capcomps, sim->ncomps);
        sim->domain_of = sim__xrealloc(sim->domain_of, sim->capcomps * sizeof *sim->domain_of);
    }
    sim->domain_of[sim->ncomps] = (uint16_t)c->id;
    sim->comps[sim->ncomps++] = c;
}

void sim_component_set_domain(struct sim_component *c, uint32_t domain)
{
    c->sim->domain_of[c->id] = (uint16_t)domain;
}

static inline bool before(const struct sim_event *a, const struct sim_event *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    if (a->key != b->key)
        return a->key < b->key;
    /* two sources drew the same turn at the same count: rare, and the
     * target still orders them the same way on any split */
    return a->target->id < b->target->id;
}

/* ---- the wheel ---------------------------------------------------------- */
static uint32_t chunk_alloc(struct sim *sim)
{
    if (sim->free_chunk == NIL) {
        /* a large network's wheel spans megabytes, read and written at
         * random: mapped anew as it doubles, on huge pages (sim__huge_hint)
         * asked for before the copy first touches them */
        size_t old = sim->capchunks, cap = old ? 2 * old : 64;
        struct chunk *chunks = sim__xmap_aligned(WHEEL_ALIGN, cap * sizeof *chunks);
        sim__huge_hint(chunks, cap * sizeof *chunks);
        if (old)
            memcpy(chunks, sim->chunks, old * sizeof *chunks);
        sim__unmap(sim->chunks, old * sizeof *chunks);
        sim->chunks = chunks;
        sim->capchunks = cap;
        sim->chunk_next = sim__xrealloc(sim->chunk_next, sim->capchunks * sizeof *sim->chunk_next);
        for (size_t i = sim->capchunks; i-- > old;) {
            sim->chunk_next[i] = sim->free_chunk;
            sim->free_chunk = (uint32_t)i;
        }
    }
    uint32_t c = sim->free_chunk;
    sim->free_chunk = sim->chunk_next[c];
    sim->chunk_next[c] = NIL;
    return c;
}

/* Onto the end of its slot's list: the slot is ordered when its turn comes.
 * The event comes as its fields, written one by one: a caller builds it
 * field by field, and copying such a struct just stored loads it in
 * 16-byte halves that the processor cannot forward from the 8-byte
 * stores still in flight, a stall of tens of cycles an event (a tenth of
 * a small network's run, before). */
static void wheel_insert(struct sim *sim, sim_time_t time, uint64_t key, struct sim_component *target,
                         void *ptr)
{
    uint32_t s = (uint32_t)(time >> SLOT_SHIFT) & (WHEEL_SLOTS - 1);
    sim->nwheel++;
    if (sim->head[s] == NIL) {
        sim->head[s] = sim->tail[s] = chunk_alloc(sim);
        sim->tail_n[s] = 0;
        sim->used[s / 64] |= UINT64_C(1) << (s % 64);
    } else if (sim->tail_n[s] == CHUNK_EVENTS) {
        uint32_t c = chunk_alloc(sim);
        sim->chunk_next[sim->tail[s]] = c;
        sim->tail[s] = c;
        sim->tail_n[s] = 0;
    }
    struct chunk *c = &sim->chunks[sim->tail[s]];
    unsigned n = sim->tail_n[s]++;
    struct sim_event *to = &c->ev[n];
    to->time = time;
    to->key = key;
    to->target = target;
    to->ptr = ptr;
    /* in a large network (sim_set_prefetch), an event that ends its
     * line: the slot's next one starts another, in this chunk or in the
     * one the free list gives next */
    if (!sim->prefetch || n % 2 == 0)
        return;
    if (n + 1 < CHUNK_EVENTS)
        __builtin_prefetch(&c->ev[n + 1], 1);
    else if (sim->free_chunk != NIL)
        __builtin_prefetch(&sim->chunks[sim->free_chunk], 1);
}

/* The first slot in use at or after slot s (there is one). */
static uint32_t wheel_first(const struct sim *sim, uint32_t s)
{
    uint32_t w = s / 64;
    uint64_t bits = sim->used[w] & (~UINT64_C(0) << (s % 64));
    for (uint32_t i = 0; !bits; i++) {
        w = (w + 1) % (WHEEL_SLOTS / 64);
        bits = sim->used[w];
        assert(i <= WHEEL_SLOTS / 64);
    }
    return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* ---- the heaps ------------------------------------------------------------ */
struct heap {
    struct sim_event **h;
    size_t *n, *cap;
};

static void heap_push(struct heap q, const struct sim_event *ev)
{
    SIM_GROW(*q.h, *q.cap, *q.n);
    struct sim_event *h = *q.h;
    size_t i = (*q.n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(ev, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = *ev;
}

/* Remove the root and sift the last element down from it. */
static void heap_pop(struct heap q)
{
    struct sim_event *h = *q.h;
    struct sim_event last = h[--*q.n];
    size_t n = *q.n, i = 0;
    for (;;) {
        size_t first = 4 * i + 1;
        if (first >= n)
            break;
        size_t best = first, end = first + 4 < n ? first + 4 : n;
        for (size_t c = first + 1; c < end; c++)
            if (before(&h[c], &h[best]))
                best = c;
        if (!before(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    if (n)
        h[i] = last;
}

static struct heap far_heap(struct sim *sim) { return (struct heap){&sim->heap, &sim->nheap, &sim->capheap}; }
static struct heap late_heap(struct sim *sim) { return (struct heap){&sim->late, &sim->nlate, &sim->caplate}; }

/* ---- sorting a slot --------------------------------------------------------- */
/* Events in one slot differ in time only in its low SLOT_SHIFT bits; with
 * the key's top 24 bits (the domain, the turn's first 8) below them they
 * make a sort key that orders them as `before` does, except among events
 * whose keys agree on those bits (one domain's events for the same
 * picosecond whose turns agree on their first bits): the sort leaves those
 * in list order, and an insertion pass with `before` puts them right at
 * the end. */
#define PLACE_SHIFT 40
#define SHORT_SLOT 128 /* fewer events than this: keys sorted by insertion */

static inline uint32_t digit(const struct sim_event *ev, unsigned d)
{
    if (d < 3)
        return (uint32_t)(ev->key >> (PLACE_SHIFT + 8 * d)) & 0xff;
    return (uint32_t)ev->time & ((1u << SLOT_SHIFT) - 1);
}

static void insertion_sort(struct sim_event *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (!before(&a[i], &a[i - 1]))
            continue;
        struct sim_event x = a[i];
        size_t j = i;
        for (; j > 0 && before(&x, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* A short slot: 64-bit keys, the time within the slot (9 bits), the
 * event's key but its last 17 bits (the domain, the turn and the top 19
 * bits of the source's count), over the event's place in the list (7
 * bits), sorted by insertion: a few hundred integer comparisons, where a
 * radix sort would clear and sum its counts. */
static void sort_short(struct sim *sim, struct sim_event **from, struct sim_event **to)
{
    uint64_t keys[SHORT_SLOT];
    size_t n = sim->ncur;
    for (size_t i = 0; i < n; i++) {
        const struct sim_event *ev = &(*from)[i];
        keys[i] = (uint64_t)(ev->time & ((1u << SLOT_SHIFT) - 1)) << 55 | (ev->key >> 17) << 7 | i;
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t k = keys[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > k; j--)
            keys[j] = keys[j - 1];
        keys[j] = k;
    }
    for (size_t i = 0; i < n; i++)
        (*to)[i] = (*from)[keys[i] & (SHORT_SLOT - 1)];
    struct sim_event *t = *from;
    *from = *to;
    *to = t;
}

/* Least significant digit first, each pass stable; a digit every event
 * shares (often the time: hundreds of events at one picosecond) is
 * neither counted nor moved. */
static void sort_long(struct sim *sim, struct sim_event **from, struct sim_event **to)
{
    size_t n = sim->ncur;
    /* the bits some events have and others not: the time within the slot
     * over the turn, as the digits lie */
    uint64_t any = 0, all = ~UINT64_C(0);
    for (size_t i = 0; i < n; i++) {
        const struct sim_event *ev = &(*from)[i];
        uint64_t bits = (uint64_t)(ev->time & ((1u << SLOT_SHIFT) - 1)) << 24 | ev->key >> PLACE_SHIFT;
        any |= bits;
        all &= bits;
    }
    for (unsigned d = 0; d < DIGITS; d++) {
        if (!((any ^ all) >> 8 * d & (d < 3 ? 0xff : (1u << SLOT_SHIFT) - 1)))
            continue;
        uint32_t *count = sim->digit_count[d];
        uint32_t buckets = d < 3 ? 256u : 1u << SLOT_SHIFT;
        memset(count, 0, buckets * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[digit(&(*from)[i], d)]++;
        uint32_t at = 0;
        for (size_t b = 0; b < buckets; b++) {
            uint32_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            (*to)[count[digit(&(*from)[i], d)]++] = (*from)[i];
        struct sim_event *t = *from;
        *from = *to;
        *to = t;
    }
}

/* Leaves the slot's events sorted in sim->cur. */
static void sort_slot(struct sim *sim)
{
    struct sim_event *from = sim->cur, *to = sim->sorting;
    if (sim->ncur < SHORT_SLOT)
        sort_short(sim, &from, &to);
    else
        sort_long(sim, &from, &to);
    sim->cur = from;
    sim->sorting = to;
    insertion_sort(sim->cur, sim->ncur);
}

/* The slot's next events are likely the next to fire, and their
 * components and frames cold in a large network: a miss costs more than
 * handling an event, and a structure an event reads through another waits
 * for both. So, counting from the event after the one being taken, the
 * first lines of the component and the frame of the event PREFETCH_FIRST
 * places on are fetched; then, two events apart, the ops' prefetch steps
 * (engine.h) of the events nearer, the last step for the next event.
 * That is when the network asked for it (sim_set_prefetch); else the
 * next event's first lines alone are fetched, as it is taken. */
#define PREFETCH_FIRST (2 * SIM_PREFETCH_STEPS)

/* The first lines of an event's component and frame; no frame is fetched
 * at NULL, whose translation the processor would look for every time. */
static inline void prefetch_first(const struct sim_event *ev)
{
    __builtin_prefetch(ev->target);
    if (ev->ptr)
        __builtin_prefetch(ev->ptr);
}

/* A slot's chunks are fetched whole, this many ahead of their copy. */
#define LOAD_AHEAD 2

static inline void prefetch_chunk(const struct chunk *ch)
{
    for (size_t at = 0; at < sizeof *ch; at += 64)
        __builtin_prefetch((const char *)ch + at);
}

/* The next slot in use becomes the current one: its list into cur, sorted. */
static void load_slot(struct sim *sim)
{
    uint32_t s = wheel_first(sim, (uint32_t)(sim->now >> SLOT_SHIFT) & (WHEEL_SLOTS - 1));
    uint32_t c = sim->head[s];
    /* in a large network, the slot's chunks, fetched LOAD_AHEAD chunks
     * before they are copied */
    uint32_t ahead = sim->prefetch ? c : NIL;
    for (unsigned i = 0; i < LOAD_AHEAD && ahead != NIL; i++, ahead = sim->chunk_next[ahead])
        prefetch_chunk(&sim->chunks[ahead]);
    sim->cur_slot = sim->chunks[c].ev[0].time >> SLOT_SHIFT;
    sim->cur_on = true;
    sim->ncur = sim->cur_at = 0;
    while (c != NIL) {
        if (ahead != NIL) {
            prefetch_chunk(&sim->chunks[ahead]);
            ahead = sim->chunk_next[ahead];
        }
        struct chunk *ch = &sim->chunks[c];
        uint32_t next = sim->chunk_next[c];
        size_t n = next == NIL ? sim->tail_n[s] : CHUNK_EVENTS;
        if (sim->ncur + n > sim->capcur) {
            SIM_GROW(sim->cur, sim->capcur, sim->ncur + n);
            sim->sorting = sim__xrealloc(sim->sorting, sim->capcur * sizeof *sim->sorting);
        }
        memcpy(sim->cur + sim->ncur, ch->ev, n * sizeof ch->ev[0]);
        sim->ncur += n;
        sim->nwheel -= n;
        sim->chunk_next[c] = sim->free_chunk;
        sim->free_chunk = c;
        c = next;
    }
    sim->head[s] = sim->tail[s] = NIL;
    sim->used[s / 64] &= ~(UINT64_C(1) << (s % 64));
    sort_slot(sim);
    for (size_t i = 0; i < sim->ncur && i <= (sim->prefetch ? PREFETCH_FIRST : 0); i++)
        prefetch_first(&sim->cur[i]);
}

static void queue(struct sim *sim, sim_time_t time, uint64_t key, struct sim_component *target, void *ptr)
{
    uint64_t slot = time >> SLOT_SHIFT;
    if ((!sim->cur_on || slot > sim->cur_slot) && slot - (sim->now >> SLOT_SHIFT) < WHEEL_SLOTS) {
        wheel_insert(sim, time, key, target, ptr);
        return;
    }
    struct sim_event ev = {.time = time, .key = key, .target = target, .ptr = ptr};
    heap_push(sim->cur_on && slot == sim->cur_slot ? late_heap(sim) : far_heap(sim), &ev);
}

void sim_schedule_id(struct sim *sim, sim_time_t at, struct sim_component *target, uint32_t target_id,
                     unsigned kind, void *ptr)
{
    assert(at >= sim->now && kind < 256 && target_id < sim->ncomps);
    struct sim_component *src = sim->current;
    uint64_t source = src ? (uint64_t)src->id + 1 : 0;
    uint32_t seq = src ? src->seq++ : sim->setup_seq++;
    /* sources of equal-time events take turns by a hash of the time, not
     * by a fixed rank: a fixed order would let the same sender win every
     * tie (synchronised flows at a drop-tail queue would starve all but one) */
    uint64_t turn = sim__mix64(at ^ source * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - SIM_KEY_TURN_BITS);
    uint64_t domain = sim->domain_of[target_id];
    uint64_t key = domain << (SIM_KEY_TURN_BITS + SIM_KEY_SEQ_BITS + 8) | turn << (SIM_KEY_SEQ_BITS + 8) |
                   (uint64_t)(seq & ((UINT32_C(1) << SIM_KEY_SEQ_BITS) - 1)) << 8 | kind;
    if (sim->is_remote && target_id < sim->nis_remote && sim->is_remote[target_id]) {
        /* from a component here to one elsewhere: the owner's; anything
         * else (set-up, a remote component's init) its owner schedules
         * itself */
        if (sim->remote && src && !sim_component_remote(sim, src)) {
            struct sim_event ev = {.time = at, .key = key, .target = target, .ptr = ptr};
            sim->remote(sim->remote_arg, sim, &ev);
        }
        return;
    }
    queue(sim, at, key, target, ptr);
}

void sim_schedule(struct sim *sim, sim_time_t at, struct sim_component *target, unsigned kind,
                  void *ptr)
{
    sim_schedule_id(sim, at, target, target->id, kind, ptr);
}

void sim_schedule_event(struct sim *sim, const struct sim_event *ev)
{
    assert(ev->time >= sim->now);
    queue(sim, ev->time, ev->key, ev->target, ev->ptr);
}

void sim_component_set_remote(struct sim *sim, const struct sim_component *c)
{
    if (!sim->is_remote) {
        sim->nis_remote = sim->ncomps;
        sim->is_remote = sim__xcalloc(sim->nis_remote, 1);
    }
    assert(c->id < sim->nis_remote);
    sim->is_remote[c->id] = 1;
}

bool sim_component_remote(const struct sim *sim, const struct sim_component *c)
{
    return sim->is_remote && c->id < sim->nis_remote && sim->is_remote[c->id];
}

void sim_set_remote(struct sim *sim, sim_remote_fn fn, void *arg)
{
    sim->remote = fn;
    sim->remote_arg = arg;
}

struct sim_component *sim_current(const struct sim *sim) { return sim->current; }
bool sim_stopped(const struct sim *sim) { return sim->stopped; }
void sim_count_events(struct sim *sim, uint64_t n) { sim->processed += n; }

void sim_advance(struct sim *sim, sim_time_t t)
{
    if (t > sim->now)
        sim->now = t;
}
uint64_t sim_last_key(const struct sim *sim) { return sim->last_key; }

/* Is ev ordered at or before (time, key)? */
static inline bool within(const struct sim_event *ev, sim_time_t time, uint64_t key)
{
    return ev->time < time || (ev->time == time && ev->key <= key);
}

static inline void prefetch_ahead(const struct sim *sim, size_t at)
{
    if (!sim->prefetch) {
        /* a network held in cache: the next event's lines, one ahead */
        if (at < sim->ncur)
            prefetch_first(&sim->cur[at]);
        return;
    }
    if (at + PREFETCH_FIRST < sim->ncur)
        prefetch_first(&sim->cur[at + PREFETCH_FIRST]);
    for (unsigned step = 0; step < SIM_PREFETCH_STEPS; step++) {
        size_t i = at + 2 * (SIM_PREFETCH_STEPS - 1 - step);
        if (i < sim->ncur && sim->cur[i].target->ops->prefetch)
            sim->cur[i].target->ops->prefetch(sim->cur[i].target, &sim->cur[i], step);
    }
}

/* Take the earliest event into *ev unless it lies after (until, until_key). */
static bool take(struct sim *sim, sim_time_t until, uint64_t until_key, struct sim_event *ev)
{
    if (sim->cur_at == sim->ncur && !sim->nlate && sim->nwheel)
        load_slot(sim);
    const struct sim_event *w = sim->cur_at < sim->ncur ? &sim->cur[sim->cur_at] : NULL;
    bool late = sim->nlate && (!w || before(&sim->late[0], w));
    if (late)
        w = &sim->late[0];
    if (sim->nheap && (!w || before(&sim->heap[0], w))) {
        if (!within(&sim->heap[0], until, until_key))
            return false;
        *ev = sim->heap[0];
        heap_pop(far_heap(sim));
        return true;
    }
    if (!w || !within(w, until, until_key))
        return false;
    *ev = *w;
    if (late) {
        heap_pop(late_heap(sim));
    } else {
        prefetch_ahead(sim, ++sim->cur_at);
    }
    return true;
}

sim_time_t sim_next_time(struct sim *sim)
{
    struct sim_event ev;
    if (!take(sim, SIM_TIME_NEVER, UINT64_MAX, &ev))
        return SIM_TIME_NEVER;
    queue(sim, ev.time, ev.key, ev.target, ev.ptr);
    return ev.time;
}

void sim_start(struct sim *sim)
{
    if (sim->started)
        return;
    sim->started = true;
    for (size_t i = 0; i < sim->ncomps; i++) {
        struct sim_component *c = sim->comps[i];
        /* remote components too: their state stays a true copy of the
         * owner's at the start (what they schedule is dropped below) */
        if (c->ops->init) {
            sim->current = c;
            c->ops->init(c);
        }
    }
    sim->current = NULL;
}

static uint64_t run(struct sim *sim, sim_time_t until, uint64_t until_key)
{
    sim_start(sim);
    sim->stopped = false;
    uint64_t fired = 0;
    struct sim_event ev;
    while (!sim->stopped && take(sim, until, until_key, &ev)) {
        /* set up before the network was split: its owner fires it */
        if (sim->is_remote && sim_component_remote(sim, ev.target))
            continue;
        sim->now = ev.time;
        sim->last_key = ev.key;
        sim->current = ev.target;
        ev.target->ops->handle(ev.target, &ev);
        fired++;
        sim->processed++;
        if (sim->progress && sim->processed >= sim->next_progress) {
            sim->next_progress = sim->processed + sim->progress_every;
            sim->progress(sim->progress_arg, sim);
        }
    }
    sim->current = NULL;
    return fired;
}

uint64_t sim_run(struct sim *sim, sim_time_t until) { return run(sim, until, UINT64_MAX); }

uint64_t sim_run_through(struct sim *sim, sim_time_t time, uint64_t key)
{
    return run(sim, time, key);
}

/* ---- random streams ------------------------------------------------------ */
static uint64_t splitmix64(uint64_t *x)
{
    *x += UINT64_C(0x9e3779b97f4a7c15);
    return sim__mix64(*x);
}

void sim_rng_seed(struct sim_rng *rng, uint64_t seed, const char *name)
{
    uint64_t x = seed ^ sim__hash_str(name ? name : "");
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sim_rng_next(struct sim_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sim_rng_unit(struct sim_rng *rng) { return (double)(sim_rng_next(rng) >> 11) * 0x1.0p-53; }

/* Lemire's nearly divisionless method: unbiased without a modulo per draw. */
uint64_t sim_rng_below(struct sim_rng *rng, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)sim_rng_next(rng) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = -n % n;
        while (low < threshold) {
            m = (unsigned __int128)sim_rng_next(rng) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}
