/* ib.c - the native InfiniBand transport (IBA vol. 1, chapters 7 and 9): the
 * queue pair's BTH and extended headers behind a local route header, with
 * the ICRC and VCRC, built by rdma_encode and checked by rdma_decode.
 *
 *   | LRH: VL, LVer, SL, LNH=2 (IBA local), DLID, PktLen, SLID |
 *   | BTH | extended headers | payload | pad | ICRC | VCRC |
 *
 * The VL is the one the HCA's SL-to-VL table gives the queue pair's SL
 * (infiniband.sl2vl); each switch maps it again for its egress port. With
 * an LMC the queue pair's path bits (its number modulo 2^lmc) select one
 * of the destination's LIDs, and so one of the paths the subnet manager
 * routed to it, and its own source LID alike.
 *
 * Congestion (annex A10): a switch sets FECN in the BTH of a packet leaving
 * a congested VL queue; the destination answers with a CNP (BTH opcode
 * 0x81, BECN set, 16 reserved bytes as in RoCEv2's annex A17) back to the
 * queue pair.
 */
#include <string.h>

#include "host/nic.h"
#include "net/ib.h"

#define LRH_LEN 8
#define ICRC_LEN 4
#define VCRC_LEN 2
#define MAX_EXT 64 /* extended headers of any one RC packet fit in this */

static uint32_t overhead(const struct sim_nic *nic)
{
    (void)nic;
    return LRH_LEN + ICRC_LEN + VCRC_LEN;
}

static uint32_t path_bits(const struct sim_network *net, const struct sim_qp *qp)
{
    return qp->qpn & ((1u << net->cfg->ib.lmc) - 1);
}

static struct sim_frame *wrap(struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt)
{
    struct sim_network *net = nic->host->node.net;
    const struct cfg_ib *ib = &net->cfg->ib;
    uint8_t sl = qp->p->sl;
    uint32_t bits = path_bits(net, qp);
    pkt->linktype = RDMA_LINKTYPE_INFINIBAND;
    pkt->present |= RDMA_HDR_LRH;
    pkt->lrh.vl = ib->sl2vl[sl];
    pkt->lrh.sl = sl;
    pkt->lrh.dlid = (uint16_t)(sim__ib_host_lid(net, qp->peer) + bits);
    pkt->lrh.slid = (uint16_t)(sim__ib_host_lid(net, nic->host->host) + bits);
    uint32_t cap = overhead(nic) + RDMA_HDR_SIZE_BTH + MAX_EXT + pkt->payload_len + 3;
    return sim__nic_encode(nic, pkt, cap, LRH_LEN);
}

static struct sim_frame *frame(struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt)
{
    return wrap(nic, qp, pkt);
}

static struct sim_frame *cnp(struct sim_nic *nic, const struct sim_qp *qp)
{
    struct rdma_pkt pkt;
    sim__nic_cnp_packet(nic, qp, &pkt);
    return wrap(nic, qp, &pkt);
}

static bool parse(struct sim_nic *nic, const struct sim_frame *f, struct rdma_pkt *pkt)
{
    const struct sim_network *net = nic->host->node.net;
    if (sim__nic_decode(nic, RDMA_LINKTYPE_INFINIBAND, f, pkt) != RDMA_OK)
        return false;
    if (pkt->proto != RDMA_PROTO_IB || !(pkt->present & RDMA_HDR_BTH) || !pkt->op || !pkt->op->name ||
        !((pkt->op->transport == RDMA_TRANSPORT_RC &&
           (pkt->op->flags & (RDMA_OPF_REQUEST | RDMA_OPF_RESPONSE))) ||
          (pkt->op->flags & RDMA_OPF_CNP)))
        return false;
    uint32_t base = sim__ib_host_lid(net, nic->host->host);
    return pkt->lrh.dlid >= base && pkt->lrh.dlid < base + (1u << net->cfg->ib.lmc);
}

/* FECN in the BTH (A10.2.1). */
static bool congested(const struct rdma_pkt *pkt) { return pkt->bth.fecn; }

const struct sim_transport_ops sim__transport_ib = {
    .name = "InfiniBand",
    .overhead = overhead,
    .frame = frame,
    .parse = parse,
    .congested = congested,
    .cnp = cnp,
};
