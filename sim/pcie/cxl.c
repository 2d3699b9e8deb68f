/* cxl.c - loads and stores to a CXL type-3 memory expander (CXL.mem over
 * the PCIe physical layer), each a request and a response in flits:
 *
 *   core --cpu/2--> host port ==request flits==> device port -> media
 *   core <--cpu/2-- host port <==response flits== device port <-'
 *
 *            request                   response
 *   load     M2S Req, 1 flit           S2M DRS: header and 64 bytes
 *   store    M2S RwD: header and 64 B  S2M NDR (completion), 1 flit
 *
 * Flits (CXL Specification 3.0, 4.2 and 6.2): at Gen5 68 bytes, a
 * 2-byte protocol ID, four 16-byte slots (one header slot, three generic)
 * and a 2-byte CRC, so a header with 64 bytes of data (five slots) takes
 * two flits; at Gen6 256 bytes, which hold a header and its data in one.
 * Gen5 runs 128b/130b encoding; Gen6 flit mode none. Each direction of
 * the link is a server that flits queue for (link.c), so many accesses at
 * once are bounded by the link's rate; an access alone waits for none.
 */
#include "pcie/pcie.h"

static uint32_t flits(const struct cfg_cxl *d, bool with_data)
{
    return with_data && d->gen == 5 ? 2 : 1;
}

static uint32_t flit_bytes(const struct cfg_cxl *d) { return d->gen == 5 ? 68 : 256; }

uint64_t sim__cxl_fs_per_byte(const struct cfg_cxl *d)
{
    double gts = d->gen == 5 ? 32e9 * 128 / 130 : 64e9;
    return sim__pcie_fs_per_byte(gts * d->width);
}

static sim_time_t ser(uint64_t bytes, uint64_t fs) { return (sim_time_t)((bytes * fs + 999) / 1000); }

sim_time_t sim__cxl_access(struct sim_pcie_host *ph, uint32_t dev, bool store, sim_time_t t,
                           struct sim_cxl_parts *p)
{
    const struct cfg_cxl *d = &ph->cfg->cxl[dev];
    struct pcie_dir *down = &ph->cxl_down[dev], *up = &ph->cxl_up[dev];
    sim_time_t half = d->cpu_latency / 2;
    *p = (struct sim_cxl_parts){
        .cpu = d->cpu_latency,
        .host_port = 2 * d->port_latency,
        .device_port = 2 * d->port_latency,
        .link = 2 * d->delay,
        .request = ser((uint64_t)flits(d, store) * flit_bytes(d), down->fs),
        .media = d->media_latency,
        .response = ser((uint64_t)flits(d, !store) * flit_bytes(d), up->fs),
    };
    sim_time_t ready = t + half + d->port_latency;
    sim_time_t sent = sim__pcie_reserve(down, 0, ready, p->request);
    sim_time_t answer = sent + p->request + d->delay + d->port_latency + d->media_latency +
                        d->port_latency;
    sim_time_t back = sim__pcie_reserve(up, 0, answer, p->response);
    p->queue = (sent - ready) + (back - answer);
    return back + p->response + d->delay + d->port_latency + (d->cpu_latency - half);
}
