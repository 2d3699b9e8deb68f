/* roce.c - the RoCEv2 transport (IBA vol. 1 annex A17): the queue pair's
 * BTH and extended headers in Ethernet / IPv4 or IPv6 / UDP port 4791,
 * with the ICRC, built by rdma_encode and checked by rdma_decode.
 *
 *   | Ethernet | IPv4 (DSCP, ECN, DF) or IPv6 | UDP sport=QP entropy, dport 4791 |
 *   | BTH | extended headers | payload | pad | ICRC |
 *
 * Over IPv4 the UDP checksum is left zero, as RoCEv2 allows; IPv6 forbids
 * a zero UDP checksum (RFC 8200, 8.1), so there it is computed. The UDP
 * source port spreads queue pairs over equal-cost paths. With `vlan` the
 * frames carry an 802.1Q priority tag (VID 0) whose PCP is the priority
 * of their DSCP.
 *
 * Under HPCC the frames carry its telemetry in an IPv6 Hop-by-Hop header
 * between the IPv6 header and UDP (cc/hpcc.c, codec/ioam.c), outside the
 * ICRC.
 *
 * A CNP (annex A17.9.3) is BTH opcode 0x81 with BECN set and 16 reserved
 * zero bytes, sent to the queue pair whose packets arrived marked CE; it
 * carries its own DSCP (usually one that switches schedule ahead of data)
 * and is not ECN-capable.
 */
#include <string.h>

#include "host/nic.h"
#include "rdma_bytes.h"

#define ETH_LEN 14
#define VLAN_LEN 4
#define UDP_LEN 8
#define ICRC_LEN 4
#define ETH_MIN 60
#define MAX_EXT 64 /* extended headers of any one RC packet fit in this */

static uint32_t ip_len(const struct sim_nic *nic)
{
    return nic->host->node.net->cfg->nodes[nic->host->node.index].nic.ipv6 ? 40 : 20;
}

static uint32_t l2_len(const struct sim_nic *nic)
{
    return ETH_LEN + (nic->host->node.net->cfg->nodes[nic->host->node.index].nic.fab.vlan ? VLAN_LEN : 0);
}

static uint32_t overhead(const struct sim_nic *nic)
{
    return l2_len(nic) + ip_len(nic) + UDP_LEN + ICRC_LEN;
}

/* Encode pkt, whose BTH and what follows are set, with the headers
 * around it for the queue pair's peer. */
static struct sim_frame *wrap(struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt,
                              uint8_t dscp, uint8_t ecn)
{
    const struct cfg_nic *p = qp->p;
    const struct cfg_fabric *fab = &nic->host->node.net->cfg->fabric;
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    pkt->present |= RDMA_HDR_ETH | RDMA_HDR_UDP | (p->ipv6 ? RDMA_HDR_IPV6 : RDMA_HDR_IP);
    memcpy(pkt->eth.src, nic->mac, 6);
    sim__host_mac(qp->peer, pkt->eth.dst);
    if (p->fab.vlan) {
        pkt->nvlan = 1;
        pkt->vlan[0].priority = (uint8_t)sim__dscp_prio(fab, dscp);
    }
    if (p->ipv6) {
        pkt->ipv6.tclass = (uint8_t)(dscp << 2 | ecn);
        pkt->ipv6.flow = (qp->qpn ^ qp->dest_qpn << 4) & 0xfffff;
        pkt->ipv6.hlim = 64;
        memcpy(pkt->ipv6.src, nic->ip6, 16);
        sim__host_ip6(qp->peer, pkt->ipv6.dst);
    } else {
        pkt->ip.dsfield_dscp = dscp;
        pkt->ip.dsfield_ecn = ecn;
        pkt->ip.flags = 2; /* don't fragment */
        pkt->ip.ttl = 64;
        rdma_put_be32(pkt->ip.src, nic->ip4);
        rdma_put_be32(pkt->ip.dst, sim__host_ip4(qp->peer));
    }
    pkt->udp.srcport = qp->sport;
    pkt->udp.dstport = RDMA_ROCEV2_UDP_PORT;
    pkt->udp.checksum = p->ipv6; /* nonzero: rdma_encode computes it */
    uint32_t hbh = pkt->ioam.present ? rdma_ioam_hbh_bytes(&pkt->ioam) : 0;
    uint32_t cap = overhead(nic) + hbh + RDMA_HDR_SIZE_BTH + MAX_EXT + pkt->payload_len + 3;
    if (cap < ETH_MIN)
        cap = ETH_MIN;
    return sim__nic_encode(nic, pkt, cap, (uint16_t)(l2_len(nic) + ip_len(nic) + hbh + UDP_LEN));
}

static struct sim_frame *frame(struct sim_nic *nic, const struct sim_qp *qp, struct rdma_pkt *pkt)
{
    if (qp->cc && qp->cc->hpcc && qp->p->ipv6)
        sim__hpcc_trace(qp, pkt); /* HPCC's telemetry (cc/hpcc.c) */
    return wrap(nic, qp, pkt, qp->p->dscp, qp->p->ecn);
}

static struct sim_frame *cnp(struct sim_nic *nic, const struct sim_qp *qp)
{
    struct rdma_pkt pkt;
    sim__nic_cnp_packet(nic, qp, &pkt);
    return wrap(nic, qp, &pkt, qp->p->fab.dcqcn.cnp_dscp, 0);
}

static bool parse(struct sim_nic *nic, const struct sim_frame *f, struct rdma_pkt *pkt)
{
    if (sim__nic_decode(nic, RDMA_LINKTYPE_ETHERNET, f, pkt) != RDMA_OK)
        return false;
    if (pkt->proto != RDMA_PROTO_ROCEV2 || !pkt->op || !pkt->op->name ||
        !((pkt->op->transport == RDMA_TRANSPORT_RC &&
           (pkt->op->flags & (RDMA_OPF_REQUEST | RDMA_OPF_RESPONSE))) ||
          (pkt->op->flags & RDMA_OPF_CNP)))
        return false;
    if (pkt->present & RDMA_HDR_IP)
        return rdma_get_be32(pkt->ip.dst) == nic->ip4;
    return !memcmp(pkt->ipv6.dst, nic->ip6, 16);
}

/* ECN CE (RFC 3168): both ECN bits set. */
static bool congested(const struct rdma_pkt *pkt)
{
    unsigned ecn = pkt->present & RDMA_HDR_IP ? pkt->ip.dsfield_ecn : pkt->ipv6.tclass & 3u;
    return ecn == 3;
}

const struct sim_transport_ops sim__transport_rocev2 = {
    .name = "RoCEv2",
    .overhead = overhead,
    .frame = frame,
    .parse = parse,
    .congested = congested,
    .cnp = cnp,
};
