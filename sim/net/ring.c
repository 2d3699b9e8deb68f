/* ring.c - the rings of frames queues hold (net.h, sim__ring_grow).
 *
 * A fabric has a queue per port and per switch class, tens of thousands
 * at k=32, and most never hold more than a frame or two: their first
 * rings are small and lie together on the network's huge pages, and only
 * a queue that fills one grows onto malloc's. */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "net/net.h"

void *sim__ring_grow(struct sim_network *net, void *ring, uint32_t *cap, uint32_t head, uint32_t tail,
                     size_t size)
{
    uint32_t old = *cap, grown = old ? 2 * old : SIM_FIRST_RING;
    char *to = old ? sim__xmalloc(grown * size) : sim__arena_alloc(&net->rings, grown * size);
    for (uint32_t i = head; i != tail; i++)
        memcpy(to + (i & (grown - 1)) * size, (const char *)ring + (i & (old - 1)) * size, size);
    sim__ring_free(ring, old);
    *cap = grown;
    return to;
}

void sim__ring_free(void *ring, uint32_t cap)
{
    if (cap > SIM_FIRST_RING)
        free(ring);
}
