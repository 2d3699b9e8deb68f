/* cfg.h - the checked configuration: what sim_config_load() makes of the
 * YAML files (docs/config.md), with every generator already expanded.
 *
 * Nothing in here refers to the YAML library; positions are kept so that
 * checks that need the whole network (paths between hosts) can still point
 * at the line that asked for them.
 */
#ifndef SIM_CFG_H
#define SIM_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "config/cfg_fabric.h"
#include "config/cfg_ib.h"
#include "engine/engine.h"


struct sim_pcie_config;

/* Operations a message can ask for, with their configuration names. */
#define SIM_OPS(X)                                                             \
    X(WRITE, "write")                                                          \
    X(WRITE_IMM, "write_imm")                                                  \
    X(READ, "read")                                                            \
    X(SEND, "send")                                                            \
    X(SEND_IMM, "send_imm")                                                    \
    X(SEND_INV, "send_inv")                                                    \
    X(CAS, "cas")                                                              \
    X(FAA, "faa")

enum sim_op {
#define SIM__OP_ENUM(name, str) SIM_OP_##name,
    SIM_OPS(SIM__OP_ENUM)
#undef SIM__OP_ENUM
    SIM_OP_COUNT
};
const char *sim__op_name(unsigned op);

static inline bool sim__op_is_send(unsigned op)
{
    return op == SIM_OP_SEND || op == SIM_OP_SEND_IMM || op == SIM_OP_SEND_INV;
}
static inline bool sim__op_is_atomic(unsigned op) { return op == SIM_OP_CAS || op == SIM_OP_FAA; }
/* The responder consumes a receive work request for these. */
static inline bool sim__op_uses_recv(unsigned op)
{
    return sim__op_is_send(op) || op == SIM_OP_WRITE_IMM;
}

/* How switches choose among equal-cost ports (docs/config.md, "Routing"). */
#define CFG_ROUTINGS(X)                                                        \
    X(ECMP, "ecmp")         /* a hash of the flow: one path per queue pair */  \
    X(DMODK, "dmodk")       /* by destination: destination-mod-k on fat-trees */ \
    X(SPRAY, "spray")       /* per packet, at random */                        \
    X(ADAPTIVE, "adaptive") /* per packet, the port with the fewest bytes queued */ \
    X(MINHOP, "minhop")     /* InfiniBand: OpenSM's min-hop, LIDs balanced over ports */ \
    X(FTREE, "ftree")       /* InfiniBand: OpenSM's fat-tree engine (dmodk's choice) */

enum cfg_routing {
#define CFG__ROUTING_ENUM(name, str) CFG_ROUTING_##name,
    CFG_ROUTINGS(CFG__ROUTING_ENUM)
#undef CFG__ROUTING_ENUM
    CFG_ROUTING_COUNT
};
const char *sim__routing_name(unsigned r);

/* The transport a NIC speaks (docs/config.md, "nic.transport"). */
#define CFG_TRANSPORTS(X)                                                      \
    X(ROCEV2, "roce")  /* RC queue pairs over UDP (IBA annex A17) */           \
    X(IWARP, "iwarp")  /* RDMAP/DDP/MPA over TCP (RFC 5040, 5041, 5044) */      \
    X(TCP, "tcp")      /* plain TCP sockets: each message bytes on the stream */

enum cfg_transport {
#define CFG__TRANSPORT_ENUM(name, str) CFG_TRANSPORT_##name,
    CFG_TRANSPORTS(CFG__TRANSPORT_ENUM)
#undef CFG__TRANSPORT_ENUM
    CFG_TRANSPORT_COUNT
};

/* TCP congestion control of an iWARP NIC (nic.tcp.cc). */
#define CFG_TCP_CCS(X)                                                         \
    X(NEWRENO, "newreno") /* RFC 5681, RFC 6582 */                             \
    X(CUBIC, "cubic")     /* RFC 9438 */                                       \
    X(DCTCP, "dctcp")     /* RFC 8257, ECN from the switches */

enum cfg_tcp_cc {
#define CFG__TCP_CC_ENUM(name, str) CFG_TCP_CC_##name,
    CFG_TCP_CCS(CFG__TCP_CC_ENUM)
#undef CFG__TCP_CC_ENUM
    CFG_TCP_CC_COUNT
};

/* The TCP endpoints of an iWARP NIC (nic.tcp). */
struct cfg_tcp {
    uint8_t cc;              /* enum cfg_tcp_cc */
    bool sack;               /* offer SACK (RFC 2018) */
    uint32_t init_cwnd;      /* segments (RFC 6928) */
    uint64_t window;         /* receive buffer, octets */
    sim_time_t min_rto, initial_rto, max_rto; /* RFC 6298 2.1, 2.4, 2.5 */
    sim_time_t delayed_ack;  /* RFC 5681 4.2: the longest an ACK waits */
    uint32_t retries;        /* timeouts in a row before the connection fails */
};

/* What the host's CPU spends on communication (nic.host_cost): a kernel's
 * socket calls, copies and segment processing for transport tcp, posting
 * work requests and polling completions for the RDMA transports. */
struct cfg_host_cost {
    sim_time_t syscall; /* one send() or recv() */
    uint64_t copy_rate; /* bits per second of a copy between user and kernel memory */
    sim_time_t segment; /* the kernel's work on one TCP segment received */
    sim_time_t post;    /* posting one RDMA work request (its WQE and doorbell) */
    sim_time_t poll;    /* polling one completion */
};

/* Queue pair and NIC parameters; one set per host. */
struct cfg_nic {
    uint32_t mtu;               /* path MTU: 256, 512, 1024, 2048 or 4096 */
    uint32_t ack_coalesce;      /* ACK at least every N request packets; 0: on AckReq only */
    uint32_t ack_request_every; /* AckReq every N packets besides each message's last; 0: last only */
    uint32_t max_rd_atomic;     /* READ and atomic requests outstanding at once */
    sim_time_t timeout;         /* retransmission timeout */
    uint32_t retry_count;       /* timeouts and NAKs tolerated in a row (0..7) */
    uint32_t rnr_retry;         /* RNR NAKs tolerated in a row (0..7, 7: forever) */
    uint32_t rnr_timer;         /* IBA table 45 code put in RNR NAKs (1..31, 0 = 655.36 ms) */
    bool ipv6;
    uint8_t ecn;  /* ECN codepoint of data frames (2: ECT(0)) */
    uint8_t dscp;
    uint8_t sl; /* InfiniBand service level of the queue pairs' packets */
    sim_time_t tx_latency; /* the NIC's transmit pipeline, without PCIe modelled */
    sim_time_t rx_latency; /* its receive pipeline, likewise */
    bool ooo;              /* the responder places requests out of order, by PSN */
    sim_time_t ooo_window; /* with ooo: how long a gap may stay open before a NAK */
    struct cfg_nic_fabric fab; /* VLAN tag, PFC, receive buffer, DCQCN */
    uint8_t transport;     /* enum cfg_transport */
    bool mpa_markers;      /* iWARP: MPA markers (RFC 5044 4.3) */
    struct cfg_tcp tcp;    /* iWARP and tcp */
    struct cfg_host_cost cost;
};

/* Whether a NIC's queue pairs ride a TCP connection. */
static inline bool cfg_transport_tcp(uint8_t transport)
{
    return transport == CFG_TRANSPORT_IWARP || transport == CFG_TRANSPORT_TCP;
}

struct cfg_link_params {
    uint64_t rate;     /* bits per second */
    sim_time_t delay;  /* propagation delay */
    uint32_t mtu;      /* largest IP packet, bytes */
    double loss;       /* probability a frame is lost */
    double ber;        /* bit error rate */
    uint8_t lanes;     /* an InfiniBand rate's width (4x: 4); 0 when given in bits per second */
};

enum cfg_node_kind { CFG_HOST, CFG_SWITCH };

struct cfg_node {
    char *name;
    uint8_t kind; /* enum cfg_node_kind */
    bool trace;   /* capture every port */
    uint32_t nlinks;
    uint64_t buffer; /* switch: bytes of queue per port */
    uint32_t swp;    /* switch: its parameters, cfg->fabric.sw[swp] */
    struct cfg_nic nic; /* host */
    /* host: the NVSwitch of its server that joins the GPU beside it to
     * the GPUs beside the server's other NICs (cfg->nvswitches + 1; 0:
     * none), and that GPU's port on it */
    uint32_t nvswitch, nvlink_port;
    struct cfg_pos pos;
};

/* A server's NVSwitch (rail generator): the GPUs of its NICs' hosts, each
 * sending and receiving at `rate`, a transfer's last byte `latency` after
 * it left. */
struct cfg_nvswitch {
    uint64_t rate; /* bits per second, one way, per GPU */
    sim_time_t latency;
    uint32_t ports;
};

struct cfg_link {
    uint32_t a, b; /* node indexes */
    struct cfg_link_params p;
    bool trace;
    struct cfg_pos pos;
};

/* Collectives (docs/config.md, "Collectives"), as nccl-tests names them. */
#define CFG_COLLS(X)                                                           \
    X(ALL_REDUCE, "all-reduce")                                                \
    X(REDUCE_SCATTER, "reduce-scatter")                                        \
    X(ALL_GATHER, "all-gather")                                                \
    X(BROADCAST, "broadcast")                                                  \
    X(ALL_TO_ALL, "alltoall") /* nccl-tests' name: all-to-all is the message generator */

enum cfg_coll_kind {
#define CFG__COLL_ENUM(name, str) CFG_COLL_##name,
    CFG_COLLS(CFG__COLL_ENUM)
#undef CFG__COLL_ENUM
    CFG_COLL_COUNT
};
const char *sim__coll_name(unsigned kind);

/* How a collective's steps go: around a ring, or (all-reduce) up and
 * down NCCL's two complementary binary trees. */
enum cfg_coll_algorithm { CFG_ALG_RING, CFG_ALG_TREE, CFG_ALG_HIERARCHICAL };

/* One collective over a ring of ranks; its steps are the messages
 * [first_msg, first_msg + nmsgs). */
struct cfg_coll {
    uint8_t kind;      /* enum cfg_coll_kind */
    uint8_t algorithm; /* enum cfg_coll_algorithm */
    uint32_t *ranks;  /* host node indexes, in ring order */
    uint32_t nranks;
    uint64_t size;    /* bytes, as nccl-tests counts them: a rank's buffer */
    uint64_t slice;   /* the largest message a chunk is cut into */
    uint32_t first_msg, nmsgs;
    uint32_t gpus;    /* hierarchical: GPUs per server (ranks s*gpus + l: server s, GPU l) */
    struct cfg_pos pos;
};

/* What a collective step's source holds when the host posts it. */
enum cfg_combine {
    CFG_COMBINE_NONE, /* not a collective step: its own bytes */
    CFG_COMBINE_OWN,  /* the rank's own contribution */
    CFG_COMBINE_ADD,  /* the step it waited for, plus the rank's contribution */
    CFG_COMBINE_ADD2, /* the two steps it waited for, plus the rank's contribution */
    CFG_COMBINE_COPY  /* the step it waited for, forwarded */
};

struct cfg_msg {
    uint32_t src, dst; /* host node indexes */
    uint32_t qp;       /* queue pair number within the (src, dst) pair */
    uint8_t op;        /* enum sim_op */
    uint64_t size;
    sim_time_t start;
    sim_time_t recv_at; /* when the receive is posted (send, write_imm) */
    uint32_t imm;
    bool solicited;  /* a send asks for a solicited event (BTH SE; RDMAP Send with SE) */
    uint16_t mem[2]; /* where the src and dst buffers live: sim_pcie_config.mems + 1, 0: host */
    bool gpu_post;   /* the source GPU posts it itself (GPUDirect Async, kernel-initiated) */
    uint64_t compare, swap_add, initial; /* atomics */
    /* A collective's step: posted once message after - 1, and message
     * after2 - 1 if after2 is not 0, are in src's memory (after 0: at
     * start); cfg->colls[coll - 1] is its collective, rank
     * the src's place in its ring, coll_off where the data sits in a
     * rank's buffer, and the data is the sum of the contributions of the
     * sum_count ranks from sum_from on (around the ring). */
    uint32_t after, after2, coll, rank, sum_from, sum_count;
    /* The ranks summed are sum_base + (sum_from + k) mod sum_span, k <
     * sum_count (sum_span 0: round every rank, base 0), so that a sum may
     * go round the GPUs of one server. */
    uint32_t sum_base, sum_span;
    bool nvlink;     /* a hierarchical step between two GPUs of a server: over its NVSwitch */
    uint8_t combine; /* enum cfg_combine */
    uint64_t coll_off;
    struct cfg_pos pos;
};

struct sim_config {
    char **files; /* names positions refer to */
    size_t nfiles;
    char *path;   /* the configuration file */
    uint64_t seed;
    sim_time_t stop;   /* SIM_TIME_NEVER: until the workload is done */
    bool payload_data; /* memory holds real bytes */
    uint32_t snaplen;
    uint64_t trace_limit; /* bytes each pcap file may hold; 0: no limit */
    uint8_t routing; /* enum cfg_routing */
    struct cfg_nic nic;

    struct cfg_node *nodes;
    size_t nnodes, capnodes;
    struct cfg_link *links;
    size_t nlinks, caplinks;
    struct cfg_msg *msgs;
    size_t nmsgs, capmsgs;
    struct cfg_coll *colls;
    size_t ncolls, capcolls;
    struct cfg_nvswitch *nvswitches;
    size_t nnvswitches, capnvswitches;
    struct cfg_fabric fabric;
    struct cfg_ib ib;
    struct sim_pcie_config *pcie; /* PCIe inside the hosts (cfg_pcie.h); NULL: none configured */
    /* partition: each node's list (run by MPI rank list mod ranks); NULL:
     * the automatic partition (network/partition.c) */
    uint32_t *partition;
    uint32_t npartition; /* lists */
};

/* Defaults, shared by the loader and docs/config.md. */
#define CFG_DEFAULT_RATE UINT64_C(100000000000)
#define CFG_DEFAULT_DELAY (1 * SIM_US)
#define CFG_DEFAULT_LINK_MTU 9000
#define CFG_DEFAULT_BUFFER (1024 * 1024)
#define CFG_DEFAULT_SNAPLEN 65535
/* IBA vol. 1, 9.7.6.1.3: the local ACK timeout is 4.096 us x 2^code;
 * rdma-core's libibverbs/examples/rc_pingpong.c and perftest's --qp-timeout
 * default use code 14: 67.108864 ms. */
#define CFG_DEFAULT_TIMEOUT (4096 * SIM_NS << 14)
#define CFG_DEFAULT_OOO_WINDOW (100 * SIM_US)
/* 1 GiB: at the smallest MTU (256) a message then needs at most 2^22 PSNs,
 * well inside the 2^23 a requester may have outstanding. */
#define CFG_MAX_MESSAGE (UINT64_C(1) << 30)
#define CFG_MAX_NODES 1000000
#define CFG_MAX_MESSAGES 20000000
#define CFG_MAX_DATA_BYTES (UINT64_C(1) << 32)

void sim__cfg_nic_defaults(struct cfg_nic *nic);
void sim__cfg_nic_tcp_defaults(struct cfg_nic *nic);

/* ---- loading ---------------------------------------------------------------------- */
/* What one item of a configuration costs in memory once it runs (bytes):
 * the network layer knows (network/memory_costs.c), the loader multiplies
 * by its counts to refuse what would not fit (config/memory.c). */
struct sim_memory_costs {
    uint64_t base;        /* the program, its libraries, pools */
    uint64_t host, sw;    /* a host, a switch, with their node's share */
    uint64_t link;        /* a link with its two ports */
    uint64_t route_entry; /* per switch and destination host */
    uint64_t conn;        /* a connection: a queue pair on each side */
    uint64_t msg;         /* a message with its memory regions */
    uint64_t pcie_host, pcie_node, pcie_msg; /* with PCIe modelled */
};

/* sim_config_load (sim.h) with the costs it checks memory against. */
struct sim_config *sim__config_parse(const char *path, const char *const *sets, size_t nsets,
                                     const struct sim_memory_costs *costs, char *err,
                                     size_t errcap);
void sim__config_free(struct sim_config *cfg);

#endif
