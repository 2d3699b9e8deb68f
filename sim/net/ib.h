/* ib.h - InfiniBand below the transport: the link layer with credit-based
 * flow control (ib_link.c) and the subnet manager's LIDs and linear
 * forwarding tables (subnet.c).
 *
 * Flow control (IBA vol. 1, 7.9): a port's receive buffer is counted per
 * virtual lane in blocks of 64 bytes. A sender keeps FCTBS, the blocks it
 * sent on the VL since the link came up, modulo 4096; the receiver keeps
 * ABR, the blocks it received, and grants FCCL = ABR + free blocks. Each
 * flow control packet carries the sender's FCTBS and the receiver's FCCL
 * for one VL (the receiver then sets ABR to the FCTBS it was told, which
 * makes up for packets lost on the way); a packet of n blocks may start
 * only while (FCCL - (FCTBS + n)) mod 4096 <= 2048. Nothing is ever sent
 * without credit, so no packet is dropped for want of buffer.
 *
 *   | Op (4) | FCTBS (12) | VL (4) | FCCL (12) | LPCRC (16, least significant byte first) |
 */
#ifndef SIM_NET_IB_H
#define SIM_NET_IB_H

#include <stdbool.h>
#include <stdint.h>

#include "config/cfg_ib.h"
#include "net/net.h"

/* A flow control packet's length, and the smallest data packet (LRH, BTH,
 * ICRC, VCRC): the two never meet in size. */
#define SIM_IB_FC_LEN 6
/* What a packet costs on an InfiniBand link beyond its bytes: its start
 * and end delimiter symbols (IBA vol. 2, packet framing). */
#define SIM_IB_WIRE_EXTRA 2
/* A cut-through InfiniBand switch forwards once it has the start delimiter
 * and the LRH, which holds the DLID it looks up. */
#define SIM_IB_CUT_THROUGH_BYTES (1 + 8)

static inline uint32_t sim__ib_blocks(uint32_t len) { return (len + CFG_IB_BLOCK - 1) / CFG_IB_BLOCK; }
/* The VL of a data packet: the first four bits of its LRH. */
static inline unsigned sim__ib_vl(const struct sim_frame *f) { return f->data[0] >> 4; }

struct sim_ib_vl {
    uint16_t fctbs; /* sending: blocks sent, mod 4096 */
    uint16_t fccl;  /* sending: the credit limit the peer last granted */
    uint16_t abr;   /* receiving: adjusted blocks received, mod 4096 */
    uint32_t used;  /* receiving: blocks held in the buffer */
    uint32_t freed; /* receiving: blocks freed since the last flow control packet */
    sim_time_t last_fc; /* when this VL's last flow control packet left */
    sim_time_t blocked_since; /* sending: since when it lacks credit for the largest packet */
    bool starved;   /* sending: it lacked credit since the node last sent on it (IB CC's victim test) */
};

struct sim_port_ib {
    struct sim_ib_vl vl[CFG_IB_MAX_VLS];
    uint32_t cap;        /* receive buffer per VL, blocks */
    uint32_t max_blocks; /* the largest packet the link carries */
    uint32_t update;     /* freed blocks that prompt a flow control packet */
    sim_time_t period;   /* a flow control packet per VL at least this often; 0: only updates */
    uint8_t nvls;
    struct sim_timer timer;
};

extern const struct sim_link_layer_ops sim__link_infiniband;

/* Set up a port's flow control before the run. `latency` is the time a
 * packet spends in the receiving node before its buffer can be freed (a
 * switch's forwarding latency); the automatic buffer covers the credit
 * loop at the link's rate. */
void sim__ib_port_init(struct sim_port *p, const struct cfg_ib *ib, uint32_t max_packet,
                       sim_time_t latency);
/* Once every port has its flow control: the credit each starts with. */
void sim__ib_port_start(struct sim_port *p);
/* The node took a packet of len bytes on VL vl out of p's receive buffer. */
void sim__ib_free(struct sim_port *p, unsigned vl, uint32_t len);
/* The receive buffer per VL a port of these parameters gets, bytes. */
uint64_t sim__ib_vl_buffer(const struct cfg_ib *ib, const struct cfg_link_params *lp,
                           uint32_t max_packet, sim_time_t latency);

/* ---- the subnet manager (subnet.c) -------------------------------------------
 * LIDs as OpenSM hands them out for this model: host h's port has the 2^lmc
 * LIDs from 1 + h x 2^lmc, switch s (in order of definition) the LID after
 * all hosts' plus s. Each switch has a linear forwarding table from LID to
 * port, built by min-hop (OpenSM's minhop: among the ports on a shortest
 * path, the one with the fewest LIDs routed so far) or by ftree (dmodk's
 * choice, which OpenSM's fat-tree engine makes on fat-trees). */
struct sim_subnet {
    uint32_t nlids;   /* the highest LID + 1 */
    uint32_t nswitch;
    /* [switch slot * nlids + LID] -> IB port number: 0 is the switch's
     * management port (its own LID), n is the node's port n - 1;
     * SIM_IB_NO_PORT: unreachable */
    uint16_t *lft;
    uint32_t *switch_node; /* switch slot -> node index */
};
#define SIM_IB_NO_PORT UINT16_MAX

static inline uint32_t sim__ib_host_lid(const struct sim_network *net, uint32_t host)
{
    return 1 + (host << net->cfg->ib.lmc);
}
static inline uint32_t sim__ib_switch_lid(const struct sim_network *net, uint32_t slot)
{
    return 1 + (net->nhosts << net->cfg->ib.lmc) + slot;
}
/* The IB port number switch `sw` forwards a LID to (see lft). */
static inline uint16_t sim__ib_lft(const struct sim_network *net, const struct sim_node *sw,
                                   uint32_t lid)
{
    const struct sim_subnet *s = net->subnet;
    if (lid >= s->nlids)
        return SIM_IB_NO_PORT;
    return s->lft[(size_t)net->routes.slot_of_node[sw->index] * s->nlids + lid];
}
/* Assign LIDs and fill the forwarding tables (again after a link fault). */
void sim__subnet_build(struct sim_network *net);
void sim__subnet_free(struct sim_network *net);

#endif
