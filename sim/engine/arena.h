/* arena.h - small blocks carved from huge pages, given back all at once.
 *
 * For what a large model allocates by the ten thousand while it runs and
 * never frees one by one (a queue's first ring): from malloc's heap each
 * lies on its own 4 KiB page, a TLB miss per read in a fabric of
 * hundreds of megabytes; here they share 2 MiB chunks advised for
 * transparent huge pages (sim__huge_hint), as the frame pool's do.
 */
#ifndef SIM_ENGINE_ARENA_H
#define SIM_ENGINE_ARENA_H

#include <stddef.h>

struct sim_arena {
    char **chunks;
    size_t nchunks;
    char *at; /* the current chunk's next free byte */
    size_t left;
};

/* n zeroed bytes (at most a chunk, 2 MiB), aligned to a cache line. */
void *sim__arena_alloc(struct sim_arena *a, size_t n);
/* Everything handed out, at once. */
void sim__arena_free(struct sim_arena *a);

#endif
