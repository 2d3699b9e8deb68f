/* format_summary.c - one readable line per frame:
 *   SRC -> DST  PROTO  OPERATION  QP=... PSN=...  [details]  ICRC ok
 * Addresses are the most specific the frame has: IP, else GID, else LID,
 * else MAC. */
#include "ioam.h"
#include "out.h"
#include "rdma_codec.h"

static void address(struct out *o, const struct rdma_pkt *pkt, bool src)
{
    if (pkt->present & RDMA_HDR_IP)
        rdma__out_array(o, src ? pkt->ip.src : pkt->ip.dst, 4, RDMA_ARRAY_IPV4);
    else if (pkt->present & RDMA_HDR_IPV6)
        rdma__out_array(o, src ? pkt->ipv6.src : pkt->ipv6.dst, 16, RDMA_ARRAY_IPV6);
    else if (pkt->present & RDMA_HDR_GRH)
        rdma__out_array(o, src ? pkt->grh.sgid : pkt->grh.dgid, 16, RDMA_ARRAY_IPV6);
    else if (pkt->present & RDMA_HDR_IBFC)
        out_str(o, "link");
    else if (pkt->present & RDMA_HDR_LRH) {
        out_str(o, "LID ");
        out_u64(o, src ? pkt->lrh.slid : pkt->lrh.dlid);
    } else if (pkt->present & RDMA_HDR_ETH)
        rdma__out_array(o, src ? pkt->eth.src : pkt->eth.dst, 6, RDMA_ARRAY_MAC);
    else
        out_chr(o, '?');
}

static void aeth(struct out *o, uint8_t syndrome)
{
    unsigned kind = rdma_aeth_kind(syndrome), value = rdma_aeth_value(syndrome);
    out_chr(o, ' ');
    out_str(o, rdma_aeth_kind_name(kind));
    if (kind == RDMA_AETH_ACK) {
        out_str(o, " credits=");
        out_u64(o, value);
    } else if (kind == RDMA_AETH_RNR_NAK) {
        out_str(o, " timer=");
        out_u64(o, rdma_rnr_timer_us(value));
        out_str(o, "us");
    } else if (kind == RDMA_AETH_NAK) {
        const char *name = rdma_nak_code_name(value);
        out_chr(o, ' ');
        out_str(o, name ? name : "reserved code");
    }
}

static void transport(struct out *o, const struct rdma_pkt *pkt)
{
    const struct rdma_bth *bth = &pkt->bth;
    if (pkt->op && pkt->op->name) {
        out_str(o, pkt->op->name);
    } else {
        out_str(o, "reserved opcode 0x");
        out_hex(o, bth->opcode, 2);
    }
    out_str(o, " QP=0x");
    out_hex(o, bth->destqp, 6);
    out_str(o, " PSN=");
    out_u64(o, bth->psn);
    if (bth->a)
        out_str(o, " A");
    if (bth->fecn)
        out_str(o, " FECN");
    if (bth->becn)
        out_str(o, " BECN");
    /* Congestion Experienced (RFC 3168) in the IP header of RoCEv2 */
    if (((pkt->present & RDMA_HDR_IP) && pkt->ip.dsfield_ecn == 3) ||
        ((pkt->present & RDMA_HDR_IPV6) && (pkt->ipv6.tclass & 3) == 3))
        out_str(o, " ECN-CE");
    if (pkt->present & RDMA_HDR_RETH) {
        out_str(o, " va=0x");
        out_hex(o, pkt->reth.va, 16);
        out_str(o, " rkey=0x");
        out_hex(o, pkt->reth.r_key, 8);
        out_str(o, " dmalen=");
        out_u64(o, pkt->reth.dmalen);
    }
    if (pkt->present & RDMA_HDR_AETH) {
        aeth(o, pkt->aeth.syndrome);
        out_str(o, " MSN=");
        out_u64(o, pkt->aeth.msn);
    }
    if (pkt->present & RDMA_HDR_IMMDT) {
        out_str(o, " imm=0x");
        out_hex(o, pkt->immdt.imm, 8);
    }
    if (pkt->present & RDMA_HDR_CM) {
        out_str(o, " CM ");
        out_str(o, rdma_cm_message_name(pkt->cm.attr));
    } else if (pkt->present & RDMA_HDR_MAD) {
        out_str(o, " MAD class=0x");
        out_hex(o, pkt->mad.mgmtclass, 2);
    }
    if (pkt->op && (pkt->op->flags & RDMA_OPF_PAYLOAD)) {
        out_str(o, " payload=");
        out_u64(o, pkt->payload_len);
        rdma__format_ipoib(o, pkt);
    }
}

static void mac_control(struct out *o, const struct rdma_pfc *pfc)
{
    if (pfc->opcode == RDMA_MAC_CONTROL_PAUSE) {
        out_str(o, "PAUSE quanta=");
        out_u64(o, pfc->pause_time[0]);
        return;
    }
    out_str(o, "PFC enbv=0x");
    out_hex(o, pfc->enbv, 2);
    for (int i = 0; i < 8; i++) {
        if (!(pfc->enbv & (1u << i)))
            continue;
        out_str(o, " p");
        out_u64(o, (uint64_t)i);
        out_chr(o, '=');
        out_u64(o, pfc->pause_time[i]);
    }
}

/* " IOAM ns=N nodes=filled/slots", then each node's fields in brackets,
 * the last node first as on the wire (ioam.c); the wide fields in hex. */
static void ioam(struct out *o, const struct rdma_ioam *t)
{
    out_str(o, " IOAM ns=0x");
    out_hex(o, t->ns, 4);
    if (!t->nodes_decoded) {
        out_str(o, " type=0x");
        out_hex(o, t->trace_type, 6);
        return;
    }
    out_str(o, " nodes=");
    out_u64(o, t->nnodes);
    out_chr(o, '/');
    out_u64(o, t->slots);
    if (t->flags & RDMA_IOAM_FLAG_OVERFLOW)
        out_str(o, " overflow");
    uint32_t fields = rdma__ioam_fields(t->trace_type);
    for (unsigned i = 0; i < t->nnodes; i++) {
        struct rdma_ioam_node n;
        rdma_ioam_node_get(t, i, &n);
        out_str(o, " [");
        const char *sep = "";
        for (unsigned f = 0; f < RDMA_IOAM_NFIELDS; f++) {
            if (!(fields & (1u << f)))
                continue;
            out_str(o, sep);
            out_str(o, rdma_ioam_field_names[f]);
            out_chr(o, '=');
            if (f == RDMA_IOAM_node_id_wide || f == RDMA_IOAM_ns_data_wide) {
                out_str(o, "0x");
                out_hex(o, n.v[f], 16);
            } else {
                out_u64(o, n.v[f]);
            }
            sep = " ";
        }
        out_chr(o, ']');
    }
}

size_t rdma_format_summary(const struct rdma_pkt *pkt, char *buf, size_t cap)
{
    struct out o_ = {buf, cap, 0, false}, *o = &o_;
    if (pkt->proto == RDMA_PROTO_OTHER && pkt->l3 && pkt->status == RDMA_OK &&
        rdma__format_network(o, pkt->ethertype, pkt->l3, pkt->l3_len))
        return o->full ? 0 : o->len;
    address(o, pkt, true);
    out_str(o, " \xe2\x86\x92 "); /* U+2192 RIGHTWARDS ARROW */
    address(o, pkt, false);
    out_chr(o, ' ');
    out_str(o, rdma_proto_name((enum rdma_proto)pkt->proto));
    out_chr(o, ' ');
    if (pkt->present & RDMA_HDR_BTH) {
        transport(o, pkt);
    } else if (pkt->present & RDMA_HDR_PFC) {
        mac_control(o, &pkt->pfc);
    } else if (pkt->present & RDMA_HDR_IBFC) {
        out_str(o, pkt->ibfc.op ? "FlowCtl init VL=" : "FlowCtl VL=");
        out_u64(o, pkt->ibfc.vl);
        out_str(o, " FCTBS=");
        out_u64(o, pkt->ibfc.fctbs);
        out_str(o, " FCCL=");
        out_u64(o, pkt->ibfc.fccl);
    } else if (pkt->proto == RDMA_PROTO_IB) {
        out_str(o, "raw LNH=");
        out_u64(o, pkt->lrh.lnh);
    } else if ((pkt->present & RDMA_HDR_IP) && (pkt->ip.frag_offset || (pkt->ip.flags & 1))) {
        /* A fragment of a datagram (RFC 791): the first holds the UDP
         * header but not the whole datagram, so none is RoCEv2, whatever
         * port it names; the decoder stops at the IPv4 header. */
        out_str(o, "IPv4 fragment id=0x");
        out_hex(o, pkt->ip.id, 4);
        out_str(o, " proto=");
        out_u64(o, pkt->ip.proto);
        out_str(o, " offset=");
        out_u64(o, (uint64_t)pkt->ip.frag_offset * 8);
        if (pkt->ip.flags & 1)
            out_str(o, " MF");
    } else if (pkt->ethertype) {
        out_str(o, "EtherType 0x");
        out_hex(o, pkt->ethertype, 4);
    }
    if (pkt->ioam.present)
        ioam(o, &pkt->ioam);
    if (pkt->icrc.present)
        out_str(o, pkt->icrc.ok ? " ICRC ok" : " ICRC BAD");
    if (pkt->vcrc.present && (pkt->present & RDMA_HDR_IBFC))
        out_str(o, pkt->vcrc.ok ? " LPCRC ok" : " LPCRC BAD");
    else if (pkt->vcrc.present)
        out_str(o, pkt->vcrc.ok ? " VCRC ok" : " VCRC BAD");
    if (pkt->status != RDMA_OK && pkt->status != RDMA_BAD_ICRC && pkt->status != RDMA_BAD_VCRC) {
        out_str(o, " [");
        out_str(o, rdma_pkt_snapped(pkt) ? "cut by the snap length"
                                         : rdma_status_name((enum rdma_status)pkt->status));
        if (pkt->reason) {
            out_str(o, pkt->status == RDMA_TRUNCATED ? " in " : ": ");
            out_str(o, pkt->reason);
        }
        out_chr(o, ']');
    }
    return o->full ? 0 : o->len;
}
