/* frame.c - frame buffers from per-size-class free lists.
 *
 * A simulation moves millions of frames a second; malloc per frame would
 * dominate. Frames come from slabs owned by the network and go back to a
 * free list of their class, so teardown frees everything at once, including
 * frames still in flight in pending events.
 *
 * Slabs are carved from 2 MiB chunks, aligned and advised so that the
 * kernel backs each with one transparent huge page: a congested fabric
 * holds tens of thousands of frames (over 100 MiB) at once, and every hop
 * of every frame would otherwise miss the TLB. The saving grows with the
 * events a run processes; the cost is paid once per chunk, when it is
 * first touched, and is higher where the host takes back freed memory in
 * huge-page blocks (a virtual machine reporting free pages), since the
 * chunk then has to be faulted in afresh.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/util.h"
#include "net/net.h"

#define SLAB_FRAMES 64
#define CHUNK ((size_t)2 << 20) /* a huge page on x86-64 and most arm64 */

static const uint32_t class_cap[SIM_FRAME_CLASSES] = {96, 128, 320, 576, 1088, 2112, 4224, SIM_FRAME_MAX};

/* Frames start SIM_FRAME_LINE_AT bytes before a cache line, so that what
 * every hop reads, the frame's length and its first headers, share one
 * line; the pool's bookkeeping lies in the line before. */
#define LINE 64

static size_t frame_size(unsigned cls)
{
    size_t n = sizeof(struct sim_frame) + class_cap[cls];
    return (n + LINE - 1) & ~(size_t)(LINE - 1);
}

uint32_t sim__frame_cap(const struct sim_frame *f) { return class_cap[f->cls]; }

/* Up to SLAB_FRAMES new frames of class cls onto its free list, from the
 * current chunk; a chunk's tail too small for one more frame stays unused. */
static void refill(struct sim_frame_pool *pool, unsigned cls)
{
    size_t sz = frame_size(cls);
    if (pool->chunk_left < sz) {
        char *chunk = sim__xmap_aligned(CHUNK, CHUNK);
#ifdef MADV_HUGEPAGE
        madvise(chunk, CHUNK, MADV_HUGEPAGE); /* a hint: without it, small pages */
#endif
        pool->chunks = sim__xrealloc(pool->chunks, (pool->nchunks + 1) * sizeof *pool->chunks);
        pool->chunks[pool->nchunks++] = chunk;
        pool->chunk_at = chunk + LINE - SIM_FRAME_LINE_AT;
        pool->chunk_left = CHUNK - (LINE - SIM_FRAME_LINE_AT);
    }
    size_t n = pool->chunk_left / sz < SLAB_FRAMES ? pool->chunk_left / sz : SLAB_FRAMES;
    char *slab = pool->chunk_at;
    pool->chunk_at += n * sz;
    pool->chunk_left -= n * sz;
    for (size_t i = n; i-- > 0;) {
        struct sim_frame *f = (struct sim_frame *)(slab + i * sz);
        f->cls = (uint8_t)cls;
        f->next = pool->free[cls];
        pool->free[cls] = f;
    }
}

struct sim_frame *sim__frame_alloc(struct sim_frame_pool *pool, uint32_t cap)
{
    unsigned cls = 0;
    while (cls + 1 < SIM_FRAME_CLASSES && class_cap[cls] < cap)
        cls++;
    if (class_cap[cls] < cap)
        return NULL;
    if (!pool->free[cls])
        refill(pool, cls);
    struct sim_frame *f = pool->free[cls];
    pool->free[cls] = f->next;
    pool->live_bytes += frame_size(cls);
    if (++pool->live > pool->peak) {
        pool->peak = pool->live;
        pool->peak_bytes = pool->live_bytes;
    }
    f->next = NULL;
    f->len = 0;
    f->bth_off = 0;
    f->flags = 0;
    f->fill_at = f->fill_len = 0;
    return f;
}

struct sim_frame *sim__frame_without_fill(struct sim_frame_pool *pool, const uint8_t *bytes, uint32_t len,
                                          uint32_t fill_at, uint32_t fill_len)
{
    uint32_t tail = len - fill_at - fill_len;
    struct sim_frame *f = sim__frame_alloc(pool, fill_at + tail);
    if (!f)
        return NULL;
    memcpy(f->data, bytes, fill_at);
    memcpy(f->data + fill_at, bytes + fill_at + fill_len, tail);
    f->len = len;
    f->fill_at = (uint16_t)fill_at;
    f->fill_len = (uint16_t)fill_len;
    return f;
}

const uint8_t *sim__frame_bytes(const struct sim_frame *f, const uint8_t *fill, uint8_t *buf, uint32_t n)
{
    if (n > f->len)
        n = f->len;
    if (n <= sim__frame_head(f))
        return f->data;
    uint32_t in_fill = n - f->fill_at < f->fill_len ? n - f->fill_at : f->fill_len;
    memcpy(buf, f->data, f->fill_at);
    memcpy(buf + f->fill_at, fill, in_fill);
    uint32_t after = n - f->fill_at - in_fill;
    memcpy(buf + f->fill_at + f->fill_len, f->data + f->fill_at, after);
    return buf;
}

struct sim_frame *sim__frame_whole(struct sim_frame_pool *pool, struct sim_frame *f, const uint8_t *fill)
{
    if (!f->fill_len)
        return f;
    struct sim_frame *w = sim__frame_alloc(pool, f->len);
    sim__frame_bytes(f, fill, w->data, f->len);
    w->len = f->len;
    w->bth_off = f->bth_off;
    w->flags = f->flags;
    w->in = f->in;
    w->out = f->out;
    w->prio = f->prio;
    w->l3 = f->l3;
    w->aux = f->aux;
    sim__frame_free(pool, f);
    return w;
}

const struct rdma_crc32_part *sim__fill_crc(struct sim_network *net, uint32_t len)
{
    struct rdma_crc32_part *part = &net->fill_crc[len % SIM_FILL_CRC_SLOTS];
    if (part->len != len || !part->times[0][1]) /* x^(8 len) is never 0 once computed */
        rdma_crc32_part_init(part, net->fill, len);
    return part;
}

void sim__frame_free(struct sim_frame_pool *pool, struct sim_frame *f)
{
    f->next = pool->free[f->cls];
    pool->free[f->cls] = f;
    pool->live--;
    pool->live_bytes -= frame_size(f->cls);
}

void sim__pool_fini(struct sim_frame_pool *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++)
        sim__unmap(pool->chunks[i], CHUNK);
    free(pool->chunks);
    *pool = (struct sim_frame_pool){0};
}

uint64_t sim__pool_bytes(const struct sim_frame_pool *pool) { return (uint64_t)pool->nchunks * CHUNK; }
