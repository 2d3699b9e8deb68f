/* vlarb.c - InfiniBand VL arbitration at an output port (IBA vol. 1,
 * release 1.4, 7.6.9): a high- and a low-priority table of (VL, weight)
 * entries, weights in units of 64 bytes.
 *
 * Within a table the arbiter stays on its current entry while that entry's
 * VL has a packet ready and weight left; a packet may start on any weight
 * left above zero, and its bytes are taken from it. Then the next entry
 * with a weight and a ready VL gets its turn, with its full weight. The
 * high-priority table goes first, but once LimitOfHighPriority x 4096
 * bytes of it have left while a low-priority packet waited (at least one
 * packet; 255: no limit), a low-priority packet goes next.
 */
#include "fabric/fabric.h"

/* The VL the table's arbiter serves next among `ready`, or -1. */
static int pick_table(const struct cfg_vlarb_entry *t, unsigned n, uint8_t *cur, int32_t *left,
                      uint8_t ready)
{
    for (unsigned tries = 0; tries <= n; tries++) {
        const struct cfg_vlarb_entry *e = &t[*cur];
        if (e->weight && *left > 0 && (ready & (1u << e->vl)))
            return e->vl;
        *cur = (uint8_t)((*cur + 1) % n);
        *left = t[*cur].weight * CFG_IB_BLOCK;
    }
    return -1;
}

static uint8_t table_vls(const struct cfg_vlarb_entry *t, unsigned n)
{
    uint8_t m = 0;
    for (unsigned i = 0; i < n; i++)
        if (t[i].weight)
            m |= (uint8_t)(1u << t[i].vl);
    return m;
}

void sim__vlarb_init(struct sim_vlarb *s, const struct cfg_vlarb *a)
{
    *s = (struct sim_vlarb){
        .left = {a->nhigh ? a->high[0].weight * CFG_IB_BLOCK : 0,
                 a->nlow ? a->low[0].weight * CFG_IB_BLOCK : 0},
        .high_vls = table_vls(a->high, a->nhigh),
        .low_vls = table_vls(a->low, a->nlow),
    };
}

int sim__vlarb_pick(struct sim_vlarb *s, const struct cfg_vlarb *a, uint8_t ready)
{
    uint8_t hi = ready & s->high_vls, lo = ready & s->low_vls;
    if (!lo)
        s->high_sent = 0; /* the limit counts only while low priority waits */
    uint64_t limit = (uint64_t)a->high_limit * 4096;
    if (hi && (!lo || a->high_limit == 255 || s->high_sent == 0 || s->high_sent < limit)) {
        int vl = pick_table(a->high, a->nhigh, &s->cur[0], &s->left[0], hi);
        if (vl >= 0) {
            s->table = 0;
            return vl;
        }
    }
    if (lo) {
        int vl = pick_table(a->low, a->nlow, &s->cur[1], &s->left[1], lo);
        if (vl >= 0) {
            s->table = 1;
            return vl;
        }
    }
    return -1;
}

void sim__vlarb_sent(struct sim_vlarb *s, uint32_t len)
{
    s->left[s->table] -= (int32_t)len;
    if (s->table == 0)
        s->high_sent += len;
    else
        s->high_sent = 0;
}
