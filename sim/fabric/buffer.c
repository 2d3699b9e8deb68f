/* buffer.c - a switch's packet buffer: one shared pool with dynamic
 * thresholds (Choudhury and Hahne, "Dynamic Queue Length Thresholds for
 * Shared-Memory Packet Switches", IEEE/ACM ToN 1998), per-(port, priority)
 * reserved space, and PFC headroom, accounted at ingress per (port,
 * priority) group the way Broadcom-style MMUs and HPCC's ns-3 switch
 * (alibaba-edu/High-Precision-Congestion-Control, switch-mmu.cc) do.
 *
 *   buffer = reserved (every port x priority) + headroom (every port x
 *            lossless priority) + shared pool
 *
 * A frame arriving on port i with priority p first fills the group's
 * reserved space, then the pool while the group's share stays under the
 * threshold T = alpha x (pool - pool in use) (or a static XOFF), and past
 * it, for a lossless priority, the group's headroom: the group sends XOFF
 * at that point, and the headroom (pfc.c) takes whatever is still on the
 * way. A lossy frame past T at its egress queue, or one that finds the pool
 * full, is dropped. Frames leave the headroom first, so the group resumes
 * (XON) once its headroom is empty and its share is `xon` below T.
 *
 * Without a shared buffer, each port has `buffer` bytes of queue of its own
 * and drops what does not fit (tail drop), as the simple switch did.
 */
#include "fabric/fabric.h"

static uint64_t dynamic(const struct sim_mmu *m)
{
    return (uint64_t)(m->alpha * (double)(m->pool - m->used));
}

/* The XOFF threshold of a group's shared use. */
static uint64_t threshold(const struct sim_mmu *m) { return m->xoff ? m->xoff : dynamic(m); }

enum sim_admit sim__mmu_admit(struct sim_mmu *m, struct sim_pg *g, uint64_t len, bool lossless,
                              const uint64_t *headroom, uint64_t egress_bytes, uint64_t port_bytes)
{
    if (!m->shared)
        return port_bytes + len > m->port_cap ? SIM_ADMIT_DROP : SIM_ADMIT_OK;
    uint64_t before = sim__pg_shared(m, g);
    uint64_t after_bytes = g->bytes - g->hdrm + len;
    uint64_t after = after_bytes > m->reserved ? after_bytes - m->reserved : 0;
    uint64_t add = after - before;
    bool pool_full = m->used + add > m->pool;
    if (lossless) {
        if (add && (pool_full || after > threshold(m))) {
            if (g->hdrm + len > *headroom)
                return SIM_ADMIT_HEADROOM_FULL;
            g->hdrm += len;
            g->bytes += len;
            return SIM_ADMIT_HEADROOM;
        }
    } else if (add && (pool_full || egress_bytes + len > dynamic(m))) {
        return SIM_ADMIT_DROP;
    }
    g->bytes += len;
    m->used += add;
    return SIM_ADMIT_OK;
}

void sim__mmu_release(struct sim_mmu *m, struct sim_pg *g, uint64_t len)
{
    if (!m->shared)
        return;
    uint64_t before = sim__pg_shared(m, g);
    uint64_t from_hdrm = g->hdrm < len ? g->hdrm : len;
    g->hdrm -= from_hdrm;
    g->bytes -= len;
    m->used -= before - sim__pg_shared(m, g);
}

bool sim__mmu_should_pause(const struct sim_mmu *m, const struct sim_pg *g)
{
    uint64_t shared = sim__pg_shared(m, g);
    return g->hdrm > 0 || (shared > 0 && shared >= threshold(m));
}

bool sim__mmu_may_resume(const struct sim_mmu *m, const struct sim_pg *g)
{
    if (g->hdrm)
        return false;
    uint64_t shared = sim__pg_shared(m, g);
    return shared == 0 || shared + m->xon <= threshold(m);
}
