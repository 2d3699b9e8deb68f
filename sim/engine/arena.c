/* arena.c - small blocks carved from huge pages (arena.h). */
#include <assert.h>
#include <stdlib.h>

#include "engine/arena.h"
#include "engine/util.h"

#define CHUNK ((size_t)2 << 20) /* a huge page on x86-64 and most arm64 */
#define LINE 64

void *sim__arena_alloc(struct sim_arena *a, size_t n)
{
    n = (n + LINE - 1) & ~(size_t)(LINE - 1);
    assert(n <= CHUNK);
    if (a->left < n) {
        char *chunk = sim__xmap_aligned(CHUNK, CHUNK);
        sim__huge_hint(chunk, CHUNK);
        a->chunks = sim__xrealloc(a->chunks, (a->nchunks + 1) * sizeof *a->chunks);
        a->chunks[a->nchunks++] = chunk;
        a->at = chunk;
        a->left = CHUNK;
    }
    void *p = a->at;
    a->at += n;
    a->left -= n;
    return p;
}

void sim__arena_free(struct sim_arena *a)
{
    for (size_t i = 0; i < a->nchunks; i++)
        sim__unmap(a->chunks[i], CHUNK);
    free(a->chunks);
    *a = (struct sim_arena){0};
}
