/* pcie.h - PCIe inside each host: the tree of root complexes, switches and
 * endpoints, what TLPs cost on its links, and the DMA path that carries
 * the NIC's work over them.
 *
 * The cost model is pcie-bench's (Neugebauer et al., "Understanding PCIe
 * performance for end host networking", SIGCOMM 2018) over the PCI Express
 * Base Specification: a link moves TLP bytes at GT/s x encoding x lanes,
 * less the ACK and UpdateFC DLLPs and SKP ordered sets; every memory write
 * and read request TLP carries 24 bytes of header and framing, every
 * completion 20; writes are split at MPS, reads into MRRS requests that
 * are answered by MPS (or RCB) sized completions.
 *
 *   socket0 ============ socket1      root complexes (host memory behind
 *    |      \    link       |         each), joined by the inter-socket
 *   switch   nic           gpu1       link; switches and endpoints hang
 *    |    \                           below them, each on its own link
 *   gpu0  ...
 *
 * A transfer is a burst of TLPs that reserves each link direction of its
 * path when it is issued (link.c); nothing in here schedules an event
 * per TLP. The NIC waits for transfers through the DMA path (host/dma_pcie.c),
 * which wakes queue pairs when what they wait for has arrived.
 */
#ifndef SIM_PCIE_H
#define SIM_PCIE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/cfg.h"
#include "config/cfg_pcie.h"
#include "engine/engine.h"
#include "engine/timer.h"

/* ---- link cost (link.c) ------------------------------------------------- */
enum pcie_tlp { PCIE_MWR, PCIE_MRD, PCIE_CPLD, PCIE_TLP_TYPES };

/* Bytes a TLP costs beyond its data (64-bit addresses, no ECRC): 8 of
 * framing (start symbol or STP token, sequence number, LCRC, end symbol)
 * and the header, 4 DW for a memory request, 3 DW for a completion. The
 * same figures are used in Gen6 flit mode, where sequence numbers and CRCs
 * move into the flit (link.c). */
#define PCIE_MWR_OVERHEAD 24
#define PCIE_MRD_OVERHEAD 24
#define PCIE_CPL_OVERHEAD 20

/* TLP bandwidth of a link in bits per second: line rate less DLLP and
 * ordered-set overhead. */
double sim__pcie_tlp_rate(unsigned gen, unsigned width, unsigned mps);
/* Femtoseconds to move a byte at rate bits per second. */
uint64_t sim__pcie_fs_per_byte(double rate);

/* One direction of a link: a server that reserves time for bursts in the
 * order they arrive, filling gaps left by bursts reserved for later. */
struct pcie_slot {
    sim_time_t arrive, start, end;
};

struct pcie_dir {
    struct pcie_slot *slot;
    uint32_t lo, n, cap; /* slots [lo, n) lie ahead; sorted by start */
    uint64_t fs;         /* femtoseconds per byte */
    sim_time_t busy;
    uint64_t tlps[PCIE_TLP_TYPES];
    uint64_t payload, wire;
    const char *from, *to;
};

/* Reserve dur ps starting no earlier than `arrive`; returns the start. */
sim_time_t sim__pcie_reserve(struct pcie_dir *d, sim_time_t now, sim_time_t arrive, sim_time_t dur);
/* Time reserved on d after `end`, for utilization up to the end of a run. */
sim_time_t sim__pcie_busy_after(const struct pcie_dir *d, sim_time_t end);
void sim__pcie_dir_free(struct pcie_dir *d);

struct pcie_hop {
    struct pcie_dir *d;
    uint64_t fs;    /* per byte on this hop (a throttle hop runs slower than its link) */
    sim_time_t lat; /* after the hop: the link's delay and the node it enters */
};

struct pcie_path {
    struct pcie_hop *hop;
    uint32_t n;
    sim_time_t start; /* before the first hop (a CPU store crossing its root complex) */
};

/* An initiator (the NIC, a GPU's DMA engine) reaching a target. */
struct pcie_route {
    struct pcie_path out;  /* writes and read requests */
    struct pcie_path back; /* completions */
    sim_time_t target_latency; /* reads: request arrival to first completion */
    sim_time_t write_latency;  /* writes: last TLP in to the data in the target's memory */
    uint16_t mps, mrrs, rcb;
    bool rcb_completions;
};

/* The read requests an initiator may have outstanding: a min-heap of the
 * times the credits come back. */
struct pcie_credits {
    sim_time_t *heap;
    uint32_t n, cap;
};

/* A posted write of len bytes issued at t: returns when its last TLP has
 * arrived; *left is when it left the initiator's link. */
sim_time_t sim__pcie_write(const struct pcie_path *p, sim_time_t now, sim_time_t t, uint64_t len,
                           uint16_t mps, sim_time_t *left);
/* How long a posted write of one TLP of len bytes (at most the MPS)
 * takes alone on p, to its last byte's arrival. */
sim_time_t sim__pcie_tlp_alone(const struct pcie_path *p, uint32_t len);
/* A read of len bytes issued at t: returns when its last completion has
 * arrived. */
sim_time_t sim__pcie_read(const struct pcie_route *r, struct pcie_credits *cr, sim_time_t now,
                          sim_time_t t, uint64_t len);
void sim__pcie_credits_free(struct pcie_credits *cr);

/* ---- a host's tree at run time (tree.c) ---------------------------------- */
struct pcie_link_rt {
    struct pcie_dir up, down; /* toward the root complex and away from it */
    const char *name;         /* the child node, or socketA-socketB */
    uint8_t gen, width;       /* 0 for the inter-socket link */
    char *own_name;
};

struct sim_pcie_qp;

struct sim_pcie_host {
    const struct cfg_pcie *cfg;
    struct sim *sim;
    const char *host; /* its name */
    struct pcie_link_rt *links; /* node i's uplink at i; then the inter-socket links */
    uint32_t nlinks;
    struct pcie_dir *peer;   /* per socket: the root complex forwarding peer reads */
    struct pcie_path mmio;   /* the CPU (on the NIC's socket) writing into the NIC's BAR */
    struct pcie_path *gpu_mmio; /* per node: a GPU writing into the NIC's BAR, peer to peer */
    struct pcie_route *nic_to; /* per node: the NIC reaching socket memory or a GPU */
    struct pcie_route *gpu_mem; /* per node: a GPU reaching the NIC's socket's memory */
    struct pcie_credits *credits; /* per node: the NIC's and the GPUs' */
    struct sim_pcie_qp *qps; /* by qpn - SIM_QPN_BASE */
    uint32_t nqps;
    struct sim_nvlink *nvlink; /* the GPUs' NVLinks through the NVSwitch (NULL: none) */
    struct sim_timer nvlink_end; /* the host's NVLINK event: the next transfer's end */
    struct pcie_dir *cxl_down, *cxl_up; /* per CXL expander: its link's two directions */
};

struct sim_pcie_host *sim__pcie_host_new(const struct cfg_pcie *cfg, struct sim *sim,
                                         const char *host);
void sim__pcie_host_free(struct sim_pcie_host *ph);
/* The route from initiator `from` to target `to` (tree nodes), and its
 * release. */
void sim__pcie_build_route(struct sim_pcie_host *ph, uint32_t from, uint32_t to, struct pcie_route *r);
void sim__pcie_free_route(struct pcie_route *r);
/* The route the NIC takes to a placement, and the socket memory a bounce
 * buffer sits in. */
const struct pcie_route *sim__pcie_nic_route(const struct sim_pcie_host *ph, uint16_t place);

/* A copy of len bytes from GPU `from` to GPU `to` (tree nodes) asked
 * for at t over PCIe, peer to peer or through a bounce buffer (enum
 * pcie_copy_via; copy.c): returns when the last byte is in the
 * destination GPU. NVLink copies run as events (nvlink.c). */
sim_time_t sim__pcie_copy(struct sim_pcie_host *ph, unsigned via, uint32_t from, uint32_t to,
                          sim_time_t t, uint64_t len);

/* NVLink through an NVSwitch (nvlink.c): transfers between the GPUs
 * among `nodes` tree nodes, sharing each GPU's sending and receiving side
 * of rate_bps max-min fairly while they run. */
struct sim_nvlink;
struct sim_nvlink *sim__nvlink_new(uint32_t nodes, uint64_t rate_bps);
void sim__nvlink_free(struct sim_nvlink *nv);
/* Transfer `id` of len bytes from GPU `from` to GPU `to` starts at now. */
void sim__nvlink_start(struct sim_nvlink *nv, sim_time_t now, uint32_t id, uint32_t from,
                       uint32_t to, uint64_t len);
/* When the next transfer in flight ends; SIM_TIME_NEVER: none is. */
sim_time_t sim__nvlink_next(const struct sim_nvlink *nv);
/* The transfers through by now leave (their ids into done, at most max);
 * returns how many. */
size_t sim__nvlink_finish(struct sim_nvlink *nv, sim_time_t now, uint32_t *done, size_t max);

/* A CXL.mem access's latency, part by part (cxl.c); they add up to it. */
struct sim_cxl_parts {
    sim_time_t cpu, host_port, device_port, link, request, media, response, queue;
};
/* Femtoseconds per byte on an expander's link. */
uint64_t sim__cxl_fs_per_byte(const struct cfg_cxl *d);
/* A load (or store) of one 64-byte line of expander dev issued by a core
 * at t: returns when its data (or completion) is back in the core. */
sim_time_t sim__cxl_access(struct sim_pcie_host *ph, uint32_t dev, bool store, sim_time_t t,
                           struct sim_cxl_parts *p);

/* ---- the network's PCIe state (host/dma_pcie.c fills it, observe/pcie_csv.c writes it) */
/* When each step of a message happened; SIM_TIME_NEVER if it did not. */
struct sim_pcie_stamps {
    sim_time_t copied;    /* a bounce buffer filled from the GPU */
    sim_time_t doorbell;  /* the doorbell reached the NIC */
    sim_time_t wqe;       /* the NIC has the WQE */
    sim_time_t first_tx;  /* the first request packet started on the wire */
    sim_time_t arrived;   /* the last data packet reached the NIC that places it */
    sim_time_t left;      /* ... and its DMA write left that NIC */
    sim_time_t acked;     /* the requester retired the work request */
    sim_time_t delivered; /* the data is in its destination memory (GPU after a bounce) */
};

struct sim_network;

/* When a copy (cfg_pcie_copy) started and ended. */
struct sim_pcie_copy_time {
    sim_time_t start, end;
};

/* One CXL access as it ran: cfg access `access`, its `k`-th. */
struct sim_cxl_run {
    uint32_t access;
    uint64_t k;
    sim_time_t start, end;
    struct sim_cxl_parts parts;
};

struct sim_pcie_net {
    struct sim_pcie_stamps *stamps; /* per message */
    struct sim_pcie_copy_time *copies; /* per configured copy */
    struct sim_cxl_run *cxl;        /* every CXL access, in the order they started */
    size_t ncxl;
};

#endif
