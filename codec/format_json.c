/* format_json.c - struct rdma_pkt as JSON members, one object per header.
 *
 * Member names inside a header object are Wireshark's field names for that
 * header without the protocol prefix (bth.psn is infiniband.bth.psn), and
 * come from the same field lists as the decoder. A few derived members
 * follow the fields (opcode_name, AETH kind and NAK name, CM message name).
 *
 * decode --json prints some fifty members a frame, so the appends here are
 * inlined and write in place: member names are literals whose length is
 * known when compiling, and where the buffer has room for the longest
 * possible text a member is written after one bounds check. Near the end of
 * the buffer the checked appends of out.h write the same bytes.
 */
#include <arpa/inet.h>

#include "out.h"
#include "rdma_codec.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* out_mem for a literal: the copy becomes a store or two. */
static ALWAYS_INLINE void out_lit_(struct out *o, const char *s, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}
#define out_lit(o, s) out_lit_((o), "" s, sizeof(s) - 1)
#define key(o, name) out_lit((o), "\"" name "\":")

/* Where n bytes can be written directly, or NULL. */
static ALWAYS_INLINE char *room(struct out *o, size_t n)
{
    return !o->full && o->cap - o->len >= n ? o->buf + o->len : NULL;
}

/* Decimal digits of v at p; returns how many. */
static size_t put_digits_long(char *p, uint64_t v)
{
    size_t n = 1;
    for (uint64_t t = v; t >= 10; t /= 10)
        n++;
    for (size_t i = n; i-- > 0; v /= 10)
        p[i] = (char)('0' + v % 10);
    return n;
}

/* Most header fields are flags and small numbers: one and two digits are
 * written inline, longer numbers by a call. */
static ALWAYS_INLINE size_t put_digits(char *p, uint64_t v)
{
    if (v < 10) {
        p[0] = (char)('0' + v);
        return 1;
    }
    if (v < 100) {
        p[0] = (char)('0' + v / 10);
        p[1] = (char)('0' + v % 10);
        return 2;
    }
    return put_digits_long(p, v);
}

#define HEX_DIGITS "0123456789abcdef"

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind)
{
    char *q = room(o, 4 * len + 2); /* the longest of the forms below */
    switch (kind) {
    case RDMA_ARRAY_MAC:
        if (q) {
            for (size_t i = 0; i < len; i++) {
                if (i)
                    *q++ = ':';
                *q++ = HEX_DIGITS[p[i] >> 4];
                *q++ = HEX_DIGITS[p[i] & 15];
            }
            break;
        }
        for (size_t i = 0; i < len; i++) {
            if (i)
                out_chr(o, ':');
            out_hex(o, p[i], 2);
        }
        return;
    case RDMA_ARRAY_IPV4:
        if (q) {
            for (size_t i = 0; i < len; i++) {
                if (i)
                    *q++ = '.';
                q += put_digits(q, p[i]);
            }
            break;
        }
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
        out_lit(o, "0x");
        for (size_t i = 0; i < len; i++)
            out_hex(o, p[i], 2);
        return;
    }
    o->len = (size_t)(q - o->buf);
}

/* Near the end of the buffer: the checked appends, kept out of line. */
static __attribute__((noinline, cold)) void member_u64_checked(struct out *o, const char *key,
                                                               size_t key_len, uint64_t v)
{
    out_mem(o, key, key_len);
    out_u64(o, v);
    out_chr(o, ',');
}

#define U64_ROOM 21 /* 20 digits and a comma */
static ALWAYS_INLINE void member_u64_(struct out *o, const char *key, size_t key_len, uint64_t v)
{
    char *p = room(o, key_len + U64_ROOM);
    if (!p) {
        member_u64_checked(o, key, key_len, v);
        return;
    }
    memcpy(p, key, key_len);
    p += key_len;
    p += put_digits(p, v);
    *p++ = ',';
    o->len = (size_t)(p - o->buf);
}
#define member_u64(o, name, v)                                                 \
    member_u64_((o), "\"" name "\":", sizeof("\"" name "\":") - 1, (v))

#define member_str(o, name, s)                                                 \
    do {                                                                       \
        out_lit((o), "\"" name "\":\"");                                       \
        out_str((o), (s));                                                     \
        out_lit((o), "\",");                                                   \
    } while (0)

#define member_bool(o, name, b)                                                \
    do {                                                                       \
        key(o, name);                                                          \
        if (b)                                                                 \
            out_lit((o), "true,");                                             \
        else                                                                   \
            out_lit((o), "false,");                                            \
    } while (0)

/* Members end with a comma; closing an object or the member list drops it. */
static ALWAYS_INLINE void close_with(struct out *o, char c)
{
    if (!o->full && o->len && o->buf[o->len - 1] == ',')
        o->len--;
    out_chr(o, c);
    out_chr(o, ',');
}

#define JSON_FIELD_(name, type, byte, shift, width) member_u64(o, #name, h__->name);
#define JSON_ARRAY_(name, byte, len, kind)                                     \
    out_lit(o, "\"" #name "\":\"");                                            \
    rdma__out_array(o, h__->name, len, kind);                                  \
    out_lit(o, "\",");
#define JSON_FIELDS(LIST, h)                                                   \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        LIST(JSON_FIELD_, JSON_ARRAY_)                                         \
    } while (0)

#define JSON_HEADER(o, name, LIST, h)                                          \
    do {                                                                       \
        out_lit(o, "\"" name "\":{");                                          \
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
    out_lit(o, "]");
    close_with(o, '}');
}

static void json_crc(struct out *o, const struct rdma_crc *crc)
{
    out_chr(o, '{');
    member_u64(o, "value", crc->value);
    member_bool(o, "ok", crc->ok);
    close_with(o, '}');
}

static void json_error(struct out *o, const struct rdma_pkt *pkt)
{
    key(o, "error");
    out_chr(o, '"');
    out_str(o, rdma_status_name((enum rdma_status)pkt->status));
    if (pkt->reason && pkt->status != RDMA_TRUNCATED) {
        out_lit(o, ": ");
        out_str(o, pkt->reason);
    }
    out_lit(o, "\",");
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
    if (pkt->icrc.present) {
        key(o, "icrc");
        json_crc(o, &pkt->icrc);
    }
    if (pkt->vcrc.present) {
        key(o, "vcrc");
        json_crc(o, &pkt->vcrc);
    }
    if (pkt->status != RDMA_OK)
        json_error(o, pkt);
    if (!o->full && o->len && buf[o->len - 1] == ',')
        o->len--;
    return o->full ? 0 : o->len;
}
