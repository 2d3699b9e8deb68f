/* collective.c - collectives on a host: posting a step when the step it
 * waits for has arrived, and the data it carries (32-bit integers,
 * summed, so that the result does not depend on the order of the adds).
 * The reduction itself takes no simulated time: a GPU adds at hundreds of
 * GB/s, well above any link here.
 */
#include <string.h>

#include "engine/util.h"
#include "host/collective.h"

uint32_t sim__coll_element(uint64_t seed, uint32_t coll, uint32_t rank, uint64_t elem)
{
    uint64_t base = sim__mix64(seed ^ (uint64_t)coll * UINT64_C(0x9e3779b97f4a7c15) ^
                               (uint64_t)(rank + 1) << 32);
    return (uint32_t)sim__mix64(base + elem);
}

void sim__host_delivered(struct sim_host *h, uint32_t msg, sim_time_t at)
{
    struct sim_network *net = h->node.net;
    net->msgs[msg].delivered = at;
    for (uint32_t w = net->msgs[msg].waiter; w;) {
        struct sim_msg *waiter = &net->msgs[w - 1];
        const struct cfg_msg *m = &net->cfg->msgs[w - 1];
        w = m->after == msg + 1 ? waiter->next_waiter : waiter->next_waiter2;
        if (--waiter->waiting)
            continue;
        /* the other one's data may still be on its way to memory */
        sim_time_t t = at > m->start ? at : m->start;
        uint32_t other = m->after == msg + 1 ? m->after2 : m->after;
        if (other && net->msgs[other - 1].delivered > t)
            t = net->msgs[other - 1].delivered;
        sim_schedule(h->node.comp.sim, t, &h->node.comp, SIM_HOST_POST_AFTER, waiter);
    }
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        p[b] = (uint8_t)(v >> (8 * b));
}

void sim__coll_source(struct sim_host *h, uint32_t msg)
{
    struct sim_network *net = h->node.net;
    const struct cfg_msg *m = &net->cfg->msgs[msg];
    uint8_t *src = h->mrs[net->msgs[msg].lmr].bytes;
    if (!m->coll || !src)
        return;
    const uint8_t *in = m->combine == CFG_COMBINE_OWN ? NULL
                                                       : h->mrs[net->msgs[m->after - 1].rmr].bytes;
    const uint8_t *in2 = m->combine == CFG_COMBINE_ADD2 ? h->mrs[net->msgs[m->after2 - 1].rmr].bytes
                                                         : NULL;
    if (m->combine == CFG_COMBINE_COPY) {
        memcpy(src, in, m->size);
        return;
    }
    uint64_t seed = net->cfg->seed, first = m->coll_off / 4;
    for (uint64_t i = 0; i < m->size / 4; i++) {
        uint32_t v = sim__coll_element(seed, m->coll, m->rank, first + i);
        if (in)
            v += get_le32(in + 4 * i);
        if (in2)
            v += get_le32(in2 + 4 * i);
        put_le32(src + 4 * i, v);
    }
}

bool sim__coll_check(const struct sim_network *net, uint32_t msg)
{
    const struct cfg_msg *m = &net->cfg->msgs[msg];
    const struct cfg_coll *co = &net->cfg->colls[m->coll - 1];
    const struct sim_host *dst = (const struct sim_host *)net->nodes[m->dst];
    const uint8_t *got = dst->mrs[net->msgs[msg].rmr].bytes;
    uint64_t seed = net->cfg->seed, first = m->coll_off / 4;
    uint32_t span = m->sum_span ? m->sum_span : co->nranks;
    for (uint64_t i = 0; i < m->size / 4; i++) {
        uint32_t want = 0;
        for (uint32_t k = 0; k < m->sum_count; k++)
            want += sim__coll_element(seed, m->coll, m->sum_base + (m->sum_from + k) % span,
                                      first + i);
        if (get_le32(got + 4 * i) != want)
            return false;
    }
    return true;
}
