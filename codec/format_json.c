/* format_json.c - struct rdma_pkt as JSON members, one object per header.
 *
 * Member names inside a header object are Wireshark's field names for that
 * header without the protocol prefix (bth.psn is infiniband.bth.psn), and
 * come from the same field lists as the decoder. A few derived members
 * follow the fields (opcode_name, AETH kind and NAK name, CM message name).
 */
#include <arpa/inet.h>

#include "out.h"
#include "rdma_codec.h"

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind)
{
    switch (kind) {
    case RDMA_ARRAY_MAC:
        for (size_t i = 0; i < len; i++) {
            if (i)
                out_chr(o, ':');
            out_hex(o, p[i], 2);
        }
        return;
    case RDMA_ARRAY_IPV4:
        for (size_t i = 0; i < len; i++) {
            if (i)
                out_chr(o, '.');
            out_u64(o, p[i]);
        }
        return;
    case RDMA_ARRAY_IPV6: {
        char tmp[INET6_ADDRSTRLEN];
        out_str(o, inet_ntop(AF_INET6, p, tmp, sizeof tmp));
        return;
    }
    default:
        out_str(o, "0x");
        for (size_t i = 0; i < len; i++)
            out_hex(o, p[i], 2);
    }
}

static void key(struct out *o, const char *name)
{
    out_chr(o, '"');
    out_str(o, name);
    out_str(o, "\":");
}

static void member_u64(struct out *o, const char *name, uint64_t v)
{
    key(o, name);
    out_u64(o, v);
    out_chr(o, ',');
}

static void member_str(struct out *o, const char *name, const char *s)
{
    key(o, name);
    out_chr(o, '"');
    out_str(o, s);
    out_str(o, "\",");
}

static void member_bool(struct out *o, const char *name, bool b)
{
    key(o, name);
    out_str(o, b ? "true," : "false,");
}

/* Members end with a comma; closing an object or the member list drops it. */
static void close_with(struct out *o, char c)
{
    if (!o->full && o->len && o->buf[o->len - 1] == ',')
        o->len--;
    out_chr(o, c);
    out_chr(o, ',');
}

#define JSON_FIELD_(name, type, byte, shift, width) member_u64(o, #name, h__->name);
#define JSON_ARRAY_(name, byte, len, kind)                                     \
    key(o, #name);                                                             \
    out_chr(o, '"');                                                           \
    rdma__out_array(o, h__->name, len, kind);                                  \
    out_str(o, "\",");
#define JSON_FIELDS(LIST, h)                                                   \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        LIST(JSON_FIELD_, JSON_ARRAY_)                                         \
    } while (0)

#define JSON_HEADER(o, name, LIST, h)                                          \
    do {                                                                       \
        key(o, name);                                                          \
        out_chr(o, '{');                                                       \
        JSON_FIELDS(LIST, h);                                                  \
        close_with(o, '}');                                                    \
    } while (0)

static void json_aeth(struct out *o, const struct rdma_aeth *aeth)
{
    key(o, "aeth");
    out_chr(o, '{');
    JSON_FIELDS(RDMA_AETH_FIELDS, aeth);
    unsigned kind = rdma_aeth_kind(aeth->syndrome), value = rdma_aeth_value(aeth->syndrome);
    member_str(o, "kind", rdma_aeth_kind_name(kind));
    if (kind == RDMA_AETH_ACK) {
        member_u64(o, "credit_count", value);
    } else if (kind == RDMA_AETH_RNR_NAK) {
        member_u64(o, "timer", value);
        member_u64(o, "timer_us", rdma_rnr_timer_us(value));
    } else if (kind == RDMA_AETH_NAK) {
        const char *name = rdma_nak_code_name(value);
        member_u64(o, "error_code", value);
        member_str(o, "error", name ? name : "reserved");
    }
    close_with(o, '}');
}

static void json_cm(struct out *o, const struct rdma_cm *cm)
{
    key(o, "cm");
    out_chr(o, '{');
    member_str(o, "msg", rdma_cm_message_name(cm->attr));
    switch (cm->attr) {
    case RDMA_CM_REQ:
        JSON_FIELDS(RDMA_CM_REQ_FIELDS, &cm->u.req);
        break;
    case RDMA_CM_REP:
        JSON_FIELDS(RDMA_CM_REP_FIELDS, &cm->u.rep);
        break;
    case RDMA_CM_REJ:
        JSON_FIELDS(RDMA_CM_REJ_FIELDS, &cm->u.rej);
        break;
    case RDMA_CM_DREQ:
        JSON_FIELDS(RDMA_CM_DREQ_FIELDS, &cm->u.dreq);
        break;
    default:
        JSON_FIELDS(RDMA_CM_COMMIDS_FIELDS, &cm->u.rtu);
    }
    close_with(o, '}');
}

static void json_pfc(struct out *o, const struct rdma_pfc *pfc)
{
    if (pfc->opcode == RDMA_MAC_CONTROL_PAUSE) {
        key(o, "pause");
        out_chr(o, '{');
        member_u64(o, "opcode", pfc->opcode);
        member_u64(o, "pause_time", pfc->pause_time[0]);
        close_with(o, '}');
        return;
    }
    key(o, "pfc");
    out_chr(o, '{');
    member_u64(o, "opcode", pfc->opcode);
    member_u64(o, "enbv", pfc->enbv);
    key(o, "pause_time");
    out_chr(o, '[');
    for (int i = 0; i < 8; i++) {
        if (i)
            out_chr(o, ',');
        out_u64(o, pfc->pause_time[i]);
    }
    out_str(o, "]");
    close_with(o, '}');
}

static void json_crc(struct out *o, const char *name, const struct rdma_crc *crc)
{
    key(o, name);
    out_str(o, "{\"value\":");
    out_u64(o, crc->value);
    out_str(o, ",\"ok\":");
    out_str(o, crc->ok ? "true}," : "false},");
}

static void json_error(struct out *o, const struct rdma_pkt *pkt)
{
    key(o, "error");
    out_chr(o, '"');
    out_str(o, rdma_status_name((enum rdma_status)pkt->status));
    if (pkt->reason && pkt->status != RDMA_TRUNCATED) {
        out_str(o, ": ");
        out_str(o, pkt->reason);
    }
    out_str(o, "\",");
    if (pkt->reason && pkt->status == RDMA_TRUNCATED)
        member_str(o, "truncated_in", pkt->reason);
}

size_t rdma_format_json(const struct rdma_pkt *pkt, char *buf, size_t cap)
{
    struct out o_ = {buf, cap, 0, false}, *o = &o_;
    uint32_t has = pkt->present;
    member_str(o, "proto", rdma_proto_name((enum rdma_proto)pkt->proto));
    if (has & RDMA_HDR_ERF)
        JSON_HEADER(o, "erf", RDMA_ERF_FIELDS, &pkt->erf);
    if (has & RDMA_HDR_SLL)
        JSON_HEADER(o, "sll", RDMA_SLL_FIELDS, &pkt->sll);
    if (has & RDMA_HDR_SLL2)
        JSON_HEADER(o, "sll2", RDMA_SLL2_FIELDS, &pkt->sll2);
    if (has & RDMA_HDR_ETH)
        JSON_HEADER(o, "eth", RDMA_ETH_FIELDS, &pkt->eth);
    if (pkt->nvlan) {
        key(o, "vlan");
        out_chr(o, '[');
        for (unsigned i = 0; i < pkt->nvlan; i++) {
            out_chr(o, '{');
            JSON_FIELDS(RDMA_VLAN_FIELDS, &pkt->vlan[i]);
            close_with(o, '}');
        }
        close_with(o, ']');
    }
    if (has & RDMA_HDR_PFC)
        json_pfc(o, &pkt->pfc);
    if (has & RDMA_HDR_IP) {
        key(o, "ip");
        out_chr(o, '{');
        JSON_FIELDS(RDMA_IP_FIELDS, &pkt->ip);
        member_bool(o, "checksum_ok", pkt->ip_checksum_ok);
        close_with(o, '}');
    }
    if (has & RDMA_HDR_IPV6)
        JSON_HEADER(o, "ipv6", RDMA_IPV6_FIELDS, &pkt->ipv6);
    if (has & RDMA_HDR_UDP)
        JSON_HEADER(o, "udp", RDMA_UDP_FIELDS, &pkt->udp);
    if (has & RDMA_HDR_LRH)
        JSON_HEADER(o, "lrh", RDMA_LRH_FIELDS, &pkt->lrh);
    if (has & RDMA_HDR_GRH)
        JSON_HEADER(o, "grh", RDMA_GRH_FIELDS, &pkt->grh);
    if (has & RDMA_HDR_BTH) {
        key(o, "bth");
        out_chr(o, '{');
        JSON_FIELDS(RDMA_BTH_FIELDS, &pkt->bth);
        member_str(o, "opcode_name", pkt->op && pkt->op->name ? pkt->op->name : "reserved");
        close_with(o, '}');
    }
    if (has & RDMA_HDR_RDETH)
        JSON_HEADER(o, "rdeth", RDMA_RDETH_FIELDS, &pkt->rdeth);
    if (has & RDMA_HDR_DETH)
        JSON_HEADER(o, "deth", RDMA_DETH_FIELDS, &pkt->deth);
    if (has & RDMA_HDR_XRCETH)
        JSON_HEADER(o, "xrceth", RDMA_XRCETH_FIELDS, &pkt->xrceth);
    if (has & RDMA_HDR_RETH)
        JSON_HEADER(o, "reth", RDMA_RETH_FIELDS, &pkt->reth);
    if (has & RDMA_HDR_ATOMICETH)
        JSON_HEADER(o, "atomiceth", RDMA_ATOMICETH_FIELDS, &pkt->atomiceth);
    if (has & RDMA_HDR_AETH)
        json_aeth(o, &pkt->aeth);
    if (has & RDMA_HDR_ATOMICACKETH)
        JSON_HEADER(o, "atomicacketh", RDMA_ATOMICACKETH_FIELDS, &pkt->atomicacketh);
    if (has & RDMA_HDR_IMMDT)
        JSON_HEADER(o, "immdt", RDMA_IMMDT_FIELDS, &pkt->immdt);
    if (has & RDMA_HDR_IETH)
        JSON_HEADER(o, "ieth", RDMA_IETH_FIELDS, &pkt->ieth);
    if (has & RDMA_HDR_MAD)
        JSON_HEADER(o, "mad", RDMA_MAD_FIELDS, &pkt->mad);
    if (has & RDMA_HDR_CM)
        json_cm(o, &pkt->cm);
    if (has & RDMA_HDR_BTH)
        member_u64(o, "payload_len", pkt->payload_len);
    if (pkt->icrc.present)
        json_crc(o, "icrc", &pkt->icrc);
    if (pkt->vcrc.present)
        json_crc(o, "vcrc", &pkt->vcrc);
    if (pkt->status != RDMA_OK)
        json_error(o, pkt);
    if (!o->full && o->len && buf[o->len - 1] == ',')
        o->len--;
    return o->full ? 0 : o->len;
}
