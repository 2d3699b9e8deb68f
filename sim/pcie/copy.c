/* copy.c - copies between two GPUs of one host, the three ways a server
 * can make them (the single-server table of GPUDirect, NVLink and
 * NVSwitch):
 *
 *   nvlink   gpu0 ==NVLink==> NVSwitch ==NVLink==> gpu1
 *            run as events by the host, sharing each GPU's NVLink with
 *            the other transfers in flight (nvlink.c); not here
 *   p2p      gpu0 -> switch (-> root complex) -> gpu1
 *            the source's DMA engine writes the destination's memory as
 *            PCIe peer-to-peer TLPs (tree.c's path, pcie-bench's costs)
 *   bounce   gpu0 -> socket memory, then gpu1 reads it
 *            two copies, each started by its GPU's DMA engine, as a copy
 *            staged through host memory is (cudaMemcpy device to host,
 *            then host to device)
 *
 * Every copy starts its GPU's copy_latency after it is asked for.
 */
#include "config/cfg_pcie.h"
#include "pcie/pcie.h"

sim_time_t sim__pcie_copy(struct sim_pcie_host *ph, unsigned via, uint32_t from, uint32_t to,
                          sim_time_t t, uint64_t len)
{
    const struct cfg_pcie *cfg = ph->cfg;
    sim_time_t begin = t + cfg->nodes[from].copy_latency;
    if (via == PCIE_COPY_P2P) {
        struct pcie_route r = {0};
        sim__pcie_build_route(ph, from, to, &r);
        sim_time_t end = sim__pcie_write(&r.out, 0, begin, len, r.mps, NULL);
        sim__pcie_free_route(&r);
        return end;
    }
    const struct pcie_route *w = &ph->gpu_mem[from];
    sim_time_t landed = sim__pcie_write(&w->out, 0, begin, len, w->mps, NULL) + w->write_latency;
    return sim__pcie_read(&ph->gpu_mem[to], &ph->credits[to], 0,
                          landed + cfg->nodes[to].copy_latency, len);
}
