/* frame.c - frame buffers from per-size-class free lists.
 *
 * A simulation moves millions of frames a second; malloc per frame would
 * dominate. Frames come from slabs owned by the network and go back to a
 * free list of their class, so teardown frees everything at once, including
 * frames still in flight in pending events.
 */
#include <stdlib.h>

#include "net.h"
#include "util.h"

#define SLAB_FRAMES 64

static const uint32_t class_cap[SIM_FRAME_CLASSES] = {128, 320, 576, 1088, 2112, 4224, 9216};

/* Frames start on cache lines, so that a frame's header and the first
 * bytes of its data, which every hop reads, share one line. */
#define LINE 64

static size_t frame_size(unsigned cls)
{
    size_t n = sizeof(struct sim_frame) + class_cap[cls];
    return (n + LINE - 1) & ~(size_t)(LINE - 1);
}

uint32_t sim__frame_cap(const struct sim_frame *f) { return class_cap[f->cls]; }

struct sim_frame *sim__frame_alloc(struct sim_frame_pool *pool, uint32_t cap)
{
    unsigned cls = 0;
    while (cls + 1 < SIM_FRAME_CLASSES && class_cap[cls] < cap)
        cls++;
    if (class_cap[cls] < cap)
        return NULL;
    if (!pool->free[cls]) {
        size_t sz = frame_size(cls);
        char *slab = sim__xaligned(LINE, sz * SLAB_FRAMES);
        pool->slabs = sim__xrealloc(pool->slabs, (pool->nslabs + 1) * sizeof *pool->slabs);
        pool->slabs[pool->nslabs++] = slab;
        for (size_t i = SLAB_FRAMES; i-- > 0;) {
            struct sim_frame *f = (struct sim_frame *)(slab + i * sz);
            f->cls = (uint8_t)cls;
            f->next = pool->free[cls];
            pool->free[cls] = f;
        }
    }
    struct sim_frame *f = pool->free[cls];
    pool->free[cls] = f->next;
    f->next = NULL;
    f->len = 0;
    f->bth_off = 0;
    return f;
}

void sim__frame_free(struct sim_frame_pool *pool, struct sim_frame *f)
{
    f->next = pool->free[f->cls];
    pool->free[f->cls] = f;
}

void sim__pool_fini(struct sim_frame_pool *pool)
{
    for (size_t i = 0; i < pool->nslabs; i++)
        free(pool->slabs[i]);
    free(pool->slabs);
    *pool = (struct sim_frame_pool){0};
}
