/* cfg_pcie.h - the checked PCIe configuration (docs/config.md, pcie): each
 * host's tree of root complexes, switches, the NIC and GPUs with their
 * links, and where messages' buffers live. pcie/pcie.h builds the run-time
 * tree from it.
 */
#ifndef SIM_CFG_PCIE_H
#define SIM_CFG_PCIE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/cfg.h"
#include "engine/engine.h"

/* ---- the configuration (docs/config.md, pcie) ------------------------------ */
#define PCIE_MAX_SOCKETS 8
#define PCIE_MAX_NODES 256

enum pcie_node_kind { PCIE_ROOT, PCIE_SWITCH, PCIE_NIC, PCIE_GPU };

/* The link from a node up to its parent. */
struct cfg_pcie_link {
    uint8_t gen;   /* 1..6 */
    uint8_t width; /* lanes: 1, 2, 4, 8, 16, 32 */
    uint16_t mps, mrrs, rcb;
    bool rcb_completions; /* completions cut at RCB instead of MPS */
    sim_time_t delay;     /* propagation and PHY latency of the link */
};

struct cfg_pcie_node {
    char *name;
    uint8_t kind;    /* enum pcie_node_kind */
    uint32_t parent; /* roots: their own index */
    uint32_t socket; /* the root complex above it */
    struct cfg_pcie_link link;
    sim_time_t latency;      /* switch: from a port to another */
    sim_time_t read_latency; /* gpu: answering a peer read of its memory */
    sim_time_t copy_latency; /* gpu: from asking for a copy to its DMA engine starting */
    uint32_t read_credits;   /* nic, gpu: read requests outstanding at once */
    uint64_t prefetch;       /* nic: payload read ahead of transmission per queue pair */
    uint32_t wqe_prefetch;   /* nic: WQEs fetched ahead of the one being sent */
    bool inline_wqe;         /* nic: the WQE comes with the doorbell, through the BAR */
    bool msix;               /* nic: an MSI-X write follows each completion entry */
};

/* A CXL type-3 memory expander on a root port (CXL.mem; load_cxl.c). */
struct cfg_cxl {
    char *name;
    uint32_t socket;        /* the root complex whose port it is on */
    uint8_t gen;            /* PCIe physical layer: 5 (68-byte flits) or 6 (256-byte flits) */
    uint8_t width;          /* lanes */
    sim_time_t delay;       /* the link's propagation */
    sim_time_t cpu_latency; /* a load's miss from the core to the root port and its fill back */
    sim_time_t port_latency; /* a CXL port (host or device) passing a message, each way */
    sim_time_t media_latency; /* the device's memory controller and DRAM */
};

/* One host's tree. Nodes: the root complexes (socket0...), then switches,
 * the NIC, and GPUs, each after its parent. */
struct cfg_pcie {
    uint32_t sockets;
    uint64_t socket_rate;       /* inter-socket link, bits per second per direction */
    sim_time_t socket_delay;
    sim_time_t rc_latency;      /* a TLP crossing a root complex between two ports */
    sim_time_t rc_read_latency; /* a memory read: request arrival to first completion */
    sim_time_t rc_write_latency; /* a posted write: last TLP in to the data in memory */
    double peer_read_factor;    /* share of the link rate peer reads get through a root complex */
    bool cross_socket_p2p;      /* peer-to-peer across the inter-socket link allowed */
    struct cfg_cxl *cxl;        /* memory expanders */
    uint32_t ncxl;
    uint64_t nvlink_rate;       /* NVLink through an NVSwitch: bits per second each GPU
                                 * sends (and receives); 0: no NVLink */
    struct cfg_pcie_node *nodes;
    uint32_t nnodes;
    uint32_t nic;               /* index of the NIC */
};

/* How a GPU-to-GPU copy goes (workload copies: via). */
#define PCIE_COPY_VIAS(X)                                                      \
    X(NVLINK, "nvlink")  /* NVLink, through the host's NVSwitch */             \
    X(P2P, "p2p")        /* PCIe peer to peer: the source's DMA engine writes */ \
    X(BOUNCE, "bounce")  /* into socket memory, then out of it (two copies) */

enum pcie_copy_via {
#define PCIE__VIA_ENUM(name, str) PCIE_COPY_##name,
    PCIE_COPY_VIAS(PCIE__VIA_ENUM)
#undef PCIE__VIA_ENUM
    PCIE_COPY_VIA_COUNT
};

/* Loads or stores of 64-byte lines to a CXL expander (workload cxl). */
struct cfg_cxl_access {
    uint32_t host;    /* node index */
    char *device;     /* the expander's name, resolved by sim__pcie_check */
    uint32_t dev;
    bool store;
    uint64_t count;
    sim_time_t start, interval;
    struct cfg_pos pos;
};

/* A copy between two GPUs of one host (workload copies). */
struct cfg_pcie_copy {
    uint32_t host;     /* node index */
    char *src, *dst;   /* GPU names, resolved by sim__pcie_check */
    uint32_t from, to; /* their tree nodes */
    uint8_t via;       /* enum pcie_copy_via */
    uint64_t size;
    sim_time_t start;
    struct cfg_pos pos;
};

/* A src_mem or dst_mem value as written, with the gpudirect of its message. */
struct cfg_pcie_mem {
    char *name;
    bool gpudirect;
    struct cfg_pos pos;
    const char *key; /* "src_mem" or "dst_mem" */
};

struct sim_pcie_config {
    bool present;              /* a pcie section exists */
    bool model;                /* pcie: model: DMA as TLPs; false: DMA takes no time */
    struct cfg_pcie *deflt;    /* the tree of hosts without their own */
    struct cfg_pcie **host;    /* per node; NULL: deflt */
    size_t nhost;
    struct cfg_pcie_mem *mems; /* cfg_msg.mem[] - 1 indexes this */
    size_t nmems, capmems;
    struct cfg_pcie_copy *copies;
    size_t ncopies, capcopies;
    struct cfg_cxl_access *cxl;
    size_t ncxl, capcxl;
};

/* Defaults, shared by the loader and docs/config.md. */
#define PCIE_DEFAULT_GEN 3
#define PCIE_DEFAULT_WIDTH 16
#define PCIE_DEFAULT_MPS 256
#define PCIE_DEFAULT_MRRS 512
#define PCIE_DEFAULT_RCB 64
#define PCIE_DEFAULT_RC_READ_LATENCY (550 * SIM_NS)
#define PCIE_DEFAULT_RC_LATENCY (100 * SIM_NS)
/* A posted write into socket memory: the root complex passing it to the
 * memory controller (PCIE_DEFAULT_RC_LATENCY, 100 ns) and a DDR4-2400
 * write that misses the open row (JEDEC JESD79-4, speed bin 2400R:
 * tRP 13.32 + tRCD 13.32 + CWL 12 x 0.833 + burst of 8 4 x 0.833 ns,
 * about 40 ns). */
#define PCIE_DEFAULT_RC_WRITE_LATENCY (140 * SIM_NS)
#define PCIE_DEFAULT_SWITCH_LATENCY (100 * SIM_NS)
#define PCIE_DEFAULT_GPU_READ_LATENCY (500 * SIM_NS)
#define PCIE_DEFAULT_COPY_LATENCY (5 * SIM_US)
#define PCIE_DEFAULT_SOCKET_RATE UINT64_C(150000000000)
#define PCIE_DEFAULT_SOCKET_DELAY (100 * SIM_NS)
#define PCIE_DEFAULT_PEER_READ_FACTOR 0.25
#define PCIE_DEFAULT_READ_CREDITS 256
#define PCIE_DEFAULT_PREFETCH (32 * 1024)
#define PCIE_DEFAULT_WQE_PREFETCH 64
/* CXL.mem (docs/config.md, "CXL memory"). Pond (Li et al., ASPLOS 2023,
 * section 2) puts what CXL adds to a load at 70-90 ns over local DRAM,
 * about a NUMA hop: four port crossings of 20 ns each (host and device,
 * there and back) and the flits' few nanoseconds make 83 ns at Gen5 x16.
 * The rest of a local access stays: 40 ns from the core's miss to the
 * port and back, 60 ns in the device's memory controller and DDR5 (JEDEC
 * JESD79-5, DDR5-4800B: tRCD 16 ns + CL 16 ns, plus the controller).
 * That makes a load 183 ns, inside the 170-250 ns Sun et al. measured on
 * CXL memory devices ("Demystifying CXL Memory with Genuine CXL-Ready
 * Systems and Devices", MICRO 2023). */
#define CXL_DEFAULT_CPU_LATENCY (40 * SIM_NS)
#define CXL_DEFAULT_PORT_LATENCY (20 * SIM_NS)
#define CXL_DEFAULT_MEDIA_LATENCY (60 * SIM_NS)

/* Where a memory region lives, resolved for one host's tree: a socket's
 * memory (0..sockets-1), or a GPU's (PCIE_PLACE_GPU | node), reached
 * directly or through a bounce buffer in the NIC's socket's memory. */
#define PCIE_PLACE_GPU 0x4000
#define PCIE_PLACE_BOUNCE 0x8000
#define PCIE_PLACE_NODE 0x0fff

/* The loader's side (load_pcie.c): the top-level pcie mapping, a host's
 * own, a message's src_mem, dst_mem and gpudirect, and, once the workload
 * is read, every placement. Each returns false after reporting an error. */
struct loader;
struct fy_node;
bool sim__pcie_top(struct loader *L, struct fy_node *map);
bool sim__pcie_host(struct loader *L, uint32_t node, struct fy_node *map);
bool sim__pcie_mem(struct loader *L, struct fy_node *src, struct fy_node *dst,
                   struct fy_node *gpudirect, uint16_t mem[2]);
bool sim__pcie_check(struct loader *L);
/* A tree's cxl list and the workload's cxl accesses (load_cxl.c); the
 * accesses' devices once every tree is known. */
bool sim__cxl_devices(struct loader *L, struct fy_node *seq, struct cfg_pcie *t);
bool sim__cxl_accesses(struct loader *L, struct fy_node *seq);
bool sim__cxl_check(struct loader *L);
void sim__cxl_free(struct sim_pcie_config *pc);
/* The workload's copies (a sequence). */
bool sim__pcie_copies(struct loader *L, struct fy_node *seq);
const char *sim__pcie_via_name(unsigned via);
/* NVLink's data rate per GPU and direction for a generation (3..5), 0 for
 * any other. */
uint64_t sim__nvlink_rate(unsigned generation);
/* The tree of one NIC of a GPU server as the rail generator's `server:
 * gpu8` builds it: two sockets, and below socket `socket` a PCIe switch
 * `plx` holding the NIC and its GPU `gpu0`, every link Gen5 x16. */
void sim__pcie_gpu_server_nic(struct loader *L, uint32_t node, uint32_t socket);
void sim__pcie_config_free(struct sim_pcie_config *pc);
void sim__cfg_pcie_defaults(struct cfg_pcie *t);
void sim__cfg_pcie_free(struct cfg_pcie *t);
/* The tree a host runs with. */
const struct cfg_pcie *sim__pcie_tree(const struct sim_config *cfg, uint32_t node);
/* Resolve memory spec `mem` (cfg_msg.mem[], 0: host memory) on tree t: 0,
 * or a static text saying what is wrong with it (the caller adds names). */
const char *sim__pcie_place(const struct sim_config *cfg, const struct cfg_pcie *t, uint16_t mem,
                            uint16_t *place);

#endif
