/* encode.c - struct rdma_pkt to frame bytes, the mirror of decode.c.
 *
 * Headers are written from the same field lists the decoder reads; what the
 * encoder adds is what a sender computes: lengths, pad count, next-header
 * types, checksums and CRCs. Layout is decided front to back, the derived
 * fields are filled in once the end of the packet is known.
 */
#include <string.h>

#include "checksum.h"
#include "fields.h"
#include "ioam.h"
#include "rdma_codec.h"

#define ICRC_LEN 4
#define VCRC_LEN 2
#define ETH_MIN_FRAME 60 /* without FCS */
#define MAD_LEN 256
#define CM_DATA_OFFSET 24
#define IB_NEXT_HEADER_IBA 0x1b
#define IP_PROTO_UDP 17
#define IP6_HOPOPT 0

struct writer {
    uint8_t *buf;
    size_t cap;
    size_t len;
    bool overflow;
    /* rdma_encode_without_payload: the payload not written, known by its
     * CRC, and where it would start */
    const struct rdma_crc32_part *hole;
    size_t hole_at;
    uint8_t scratch[MAD_LEN]; /* written instead of buf once it overflowed */
};

/* Reserve n bytes without clearing them; on overflow the scratch area is
 * returned so callers need no checks, and the overflow is reported once at
 * the end. Callers write at most MAD_LEN bytes into what they reserve,
 * except payload copies, which check for overflow first. */
static uint8_t *reserve_raw(struct writer *w, size_t n)
{
    if (w->overflow || n > w->cap - w->len) {
        w->overflow = true;
        return w->scratch;
    }
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

/* Reserve n zeroed bytes. */
static uint8_t *reserve(struct writer *w, size_t n)
{
    uint8_t *p = reserve_raw(w, n);
    memset(p, 0, w->overflow ? sizeof w->scratch : n);
    return p;
}

#define PUT_HEADER(w, LIST, BIT, h) ENCODE_FIELDS(LIST, (h), reserve((w), RDMA_HDR_SIZE_##BIT))

/* Innermost EtherType implied by what follows the link layer. */
static uint16_t l3_ethertype(const struct rdma_pkt *pkt)
{
    if (pkt->present & RDMA_HDR_IP)
        return RDMA_ETHERTYPE_IPV4;
    if (pkt->present & RDMA_HDR_IPV6)
        return RDMA_ETHERTYPE_IPV6;
    if (pkt->present & RDMA_HDR_GRH)
        return RDMA_ETHERTYPE_ROCEV1;
    if (pkt->present & RDMA_HDR_PFC)
        return RDMA_ETHERTYPE_MAC_CONTROL;
    return pkt->ethertype;
}

static void put_vlans(struct writer *w, const struct rdma_pkt *pkt, uint16_t inner)
{
    for (unsigned i = 0; i < pkt->nvlan; i++) {
        struct rdma_vlan v = pkt->vlan[i];
        if (i + 1 == pkt->nvlan)
            v.etype = inner;
        else if (v.etype != RDMA_ETHERTYPE_VLAN && v.etype != RDMA_ETHERTYPE_QINQ)
            v.etype = RDMA_ETHERTYPE_VLAN;
        ENCODE_FIELDS(RDMA_VLAN_FIELDS, &v, reserve(w, 4));
    }
}

/* Ethernet or Linux cooked header, then any VLAN tags. */
static void put_link(struct writer *w, const struct rdma_pkt *pkt)
{
    uint16_t inner = l3_ethertype(pkt);
    uint16_t outer = pkt->nvlan ? pkt->eth.type : inner;
    if (pkt->nvlan && outer != RDMA_ETHERTYPE_VLAN && outer != RDMA_ETHERTYPE_QINQ)
        outer = RDMA_ETHERTYPE_VLAN;
    switch (pkt->linktype) {
    case RDMA_LINKTYPE_ETHERNET: {
        struct rdma_eth eth = pkt->eth;
        eth.type = outer;
        PUT_HEADER(w, RDMA_ETH_FIELDS, ETH, &eth);
        break;
    }
    case RDMA_LINKTYPE_LINUX_SLL: {
        struct rdma_sll sll = pkt->sll;
        sll.etype = outer;
        PUT_HEADER(w, RDMA_SLL_FIELDS, SLL, &sll);
        break;
    }
    case RDMA_LINKTYPE_LINUX_SLL2: {
        struct rdma_sll2 sll2 = pkt->sll2;
        sll2.etype = outer;
        PUT_HEADER(w, RDMA_SLL2_FIELDS, SLL2, &sll2);
        break;
    }
    default:
        return;
    }
    put_vlans(w, pkt, inner);
}

static void put_mad_payload(struct writer *w, const struct rdma_pkt *pkt)
{
    uint8_t *p = reserve(w, MAD_LEN);
    if (pkt->payload && pkt->payload_len >= MAD_LEN)
        memcpy(p, pkt->payload, MAD_LEN);
    ENCODE_FIELDS(RDMA_MAD_FIELDS, &pkt->mad, p);
    if (!(pkt->present & RDMA_HDR_CM))
        return;
    const struct rdma_cm *cm = &pkt->cm;
    uint8_t *d = p + CM_DATA_OFFSET;
    switch (cm->attr) {
#define ENCODE_CM(name, id, member, type, FIELDS)                              \
    case RDMA_CM_##name:                                                       \
        ENCODE_FIELDS(FIELDS, &cm->u.member, d);                               \
        break;
        RDMA_CM_MESSAGES(ENCODE_CM)
#undef ENCODE_CM
    }
}

/* BTH, extended headers, payload and pad. Returns the BTH offset. */
static size_t put_transport(struct writer *w, const struct rdma_pkt *pkt)
{
    size_t bth_at = w->len;
    struct rdma_bth bth = pkt->bth;
    bool mad = pkt->present & RDMA_HDR_MAD;
    uint32_t plen = mad ? MAD_LEN : pkt->payload_len;
    bth.padcnt = (uint8_t)((4 - (plen & 3)) & 3);
    PUT_HEADER(w, RDMA_BTH_FIELDS, BTH, &bth);
    uint32_t hdrs = pkt->present & RDMA_HDR_EXT_MASK;
    for (; hdrs; hdrs &= hdrs - 1) {
        switch (hdrs & -hdrs) {
#define EXT(LIST, BIT, member)                                                 \
    case RDMA_HDR_##BIT:                                                       \
        PUT_HEADER(w, LIST, BIT, &pkt->member);                                \
        break;
            RDMA_EXT_HEADERS(EXT)
#undef EXT
        }
    }
    if (mad) {
        put_mad_payload(w, pkt);
    } else if (w->hole) {
        w->hole_at = w->len;
    } else {
        /* The payload is copied, not cleared first: it is most of the bytes. */
        uint8_t *p = pkt->payload ? reserve_raw(w, plen) : reserve(w, plen);
        if (pkt->payload && !w->overflow)
            memcpy(p, pkt->payload, plen);
    }
    reserve(w, bth.padcnt);
    return bth_at;
}

static void put_icrc(struct writer *w, uint32_t crc)
{
    uint8_t *p = reserve(w, ICRC_LEN);
    rdma_put_le32(p, crc);
}

static enum rdma_status encode_rocev2(struct writer *w, const struct rdma_pkt *pkt)
{
    size_t l3_at = w->len;
    bool v4 = pkt->present & RDMA_HDR_IP;
    size_t l3_len, ext_len = 0;
    if (v4) {
        struct rdma_ip ip = pkt->ip;
        ip.version = 4;
        ip.ihl = (uint8_t)(5 + pkt->ip_options_len / 4);
        ip.proto = IP_PROTO_UDP;
        PUT_HEADER(w, RDMA_IP_FIELDS, IP, &ip);
        uint8_t *opt = reserve(w, pkt->ip_options_len);
        if (pkt->ip_options_len && !w->overflow)
            memcpy(opt, pkt->ip_options, pkt->ip_options_len);
        l3_len = (size_t)ip.ihl * 4;
    } else {
        struct rdma_ipv6 ip6 = pkt->ipv6;
        ip6.version = 6;
        ip6.nxt = pkt->ioam.present ? IP6_HOPOPT : IP_PROTO_UDP;
        PUT_HEADER(w, RDMA_IPV6_FIELDS, IPV6, &ip6);
        l3_len = RDMA_HDR_SIZE_IPV6;
        if (pkt->ioam.present) {
            /* an IOAM trace in a Hop-by-Hop header (ioam.c) */
            uint32_t n = rdma_ioam_hbh_bytes(&pkt->ioam);
            if (!n)
                return RDMA_MALFORMED;
            uint8_t *p = reserve_raw(w, n);
            if (!w->overflow)
                rdma__ioam_put(p, &pkt->ioam, IP_PROTO_UDP);
            ext_len = n;
        }
    }
    size_t udp_at = w->len;
    PUT_HEADER(w, RDMA_UDP_FIELDS, UDP, &pkt->udp);
    put_transport(w, pkt);
    if (w->overflow)
        return RDMA_TRUNCATED;
    size_t hole_len = w->hole ? w->hole->len : 0;
    size_t end = w->len + hole_len + ICRC_LEN;
    uint8_t *l3 = w->buf + l3_at, *udp = w->buf + udp_at;
    if (end - l3_at > 0xffff)
        return RDMA_MALFORMED;
    rdma_put_be16(udp + 4, (uint16_t)(end - udp_at));
    rdma_put_be16(udp + 6, 0);
    if (v4) {
        rdma_put_be16(l3 + 2, (uint16_t)(end - l3_at));
        rdma_put_be16(l3 + 10, 0);
        rdma_put_be16(l3 + 10, csum_fold(csum_add(l3, l3_len, 0)));
    } else {
        rdma_put_be16(l3 + 4, (uint16_t)(end - udp_at + ext_len));
    }
    /* The ICRC treats the UDP checksum as ones, so it can be computed first
     * and the checksum, which covers the ICRC, afterwards. Extension
     * headers lie outside it. */
    if (w->hole)
        put_icrc(w, rdma_icrc_rocev2_without(l3, w->len - l3_at, w->hole_at - l3_at, w->hole));
    else
        put_icrc(w, ext_len ? rdma_icrc_rocev2_ipv6_ext(l3, ext_len, w->len - l3_at)
                            : rdma_icrc_rocev2(l3, w->len - l3_at));
    /* The checksum reads the ICRC back from the buffer: it must be there. */
    if (w->overflow)
        return RDMA_TRUNCATED;
    if (pkt->udp.checksum) {
        uint32_t sum = 0;
        if (v4)
            sum = csum_add(l3 + 12, 8, 0);
        else
            sum = csum_add(l3 + 8, 32, 0);
        sum += IP_PROTO_UDP + (uint32_t)(end - udp_at);
        uint16_t c = csum_fold(csum_add(udp, end - udp_at, sum));
        rdma_put_be16(udp + 6, c ? c : 0xffff);
    }
    return RDMA_OK;
}

static enum rdma_status encode_rocev1(struct writer *w, const struct rdma_pkt *pkt)
{
    size_t grh_at = w->len;
    PUT_HEADER(w, RDMA_GRH_FIELDS, GRH, &pkt->grh);
    put_transport(w, pkt);
    if (w->overflow)
        return RDMA_TRUNCATED;
    uint8_t *grh = w->buf + grh_at;
    size_t paylen = w->len + ICRC_LEN - grh_at - RDMA_HDR_SIZE_GRH;
    if (paylen > 0xffff)
        return RDMA_MALFORMED;
    rdma_put_be16(grh + 4, (uint16_t)paylen);
    grh[6] = IB_NEXT_HEADER_IBA;
    put_icrc(w, rdma_icrc_grh(grh, w->len - grh_at));
    return RDMA_OK;
}

static enum rdma_status encode_ib(struct writer *w, const struct rdma_pkt *pkt)
{
    size_t lrh_at = w->len;
    struct rdma_lrh lrh = pkt->lrh;
    bool global = pkt->present & RDMA_HDR_GRH;
    lrh.lnh = global ? 3 : 2;
    PUT_HEADER(w, RDMA_LRH_FIELDS, LRH, &lrh);
    size_t grh_at = w->len;
    if (global)
        PUT_HEADER(w, RDMA_GRH_FIELDS, GRH, &pkt->grh);
    put_transport(w, pkt);
    if (w->overflow)
        return RDMA_TRUNCATED;
    size_t end = w->len + ICRC_LEN;
    if ((end - lrh_at) / 4 > 0x7ff)
        return RDMA_MALFORMED;
    put_bits(w->buf + lrh_at + 4, 0, 11, (end - lrh_at) / 4);
    uint32_t icrc;
    if (global) {
        uint8_t *grh = w->buf + grh_at;
        rdma_put_be16(grh + 4, (uint16_t)(end - grh_at - RDMA_HDR_SIZE_GRH));
        grh[6] = IB_NEXT_HEADER_IBA;
        icrc = rdma_icrc_grh(grh, w->len - grh_at);
    } else {
        icrc = rdma_icrc_lrh(w->buf + lrh_at, w->len - lrh_at);
    }
    put_icrc(w, icrc);
    uint16_t vcrc = rdma_vcrc(w->buf + lrh_at, w->len - lrh_at);
    uint8_t *p = reserve(w, VCRC_LEN);
    p[0] = (uint8_t)vcrc;
    p[1] = (uint8_t)(vcrc >> 8);
    return w->overflow ? RDMA_TRUNCATED : RDMA_OK;
}

/* A flow-control packet with its LPCRC (IBA vol. 1, 7.9.4). */
static enum rdma_status encode_ibfc(struct writer *w, const struct rdma_pkt *pkt)
{
    if (!(pkt->present & RDMA_HDR_IBFC) || pkt->ibfc.op > 1)
        return RDMA_MALFORMED;
    size_t at = w->len;
    PUT_HEADER(w, RDMA_IBFC_FIELDS, IBFC, &pkt->ibfc);
    if (w->overflow)
        return RDMA_TRUNCATED;
    uint16_t crc = rdma_vcrc(w->buf + at, 4);
    w->buf[at + 4] = (uint8_t)crc; /* least significant byte first, as the VCRC */
    w->buf[at + 5] = (uint8_t)(crc >> 8);
    return RDMA_OK;
}

static void encode_mac_control(struct writer *w, const struct rdma_pkt *pkt)
{
    const struct rdma_pfc *pfc = &pkt->pfc;
    uint8_t *p = reserve(w, 2);
    rdma_put_be16(p, pfc->opcode);
    if (pfc->opcode == RDMA_MAC_CONTROL_PAUSE) {
        rdma_put_be16(reserve(w, 2), pfc->pause_time[0]);
        return;
    }
    p = reserve(w, 18);
    rdma_put_be16(p, pfc->enbv);
    for (int i = 0; i < 8; i++)
        rdma_put_be16(p + 2 + 2 * i, pfc->pause_time[i]);
}

static enum rdma_status encode_erf(struct writer *w, const struct rdma_pkt *pkt)
{
    size_t erf_at = w->len;
    struct rdma_erf erf = pkt->erf;
    if ((erf.type & 0x7f) != RDMA_ERF_TYPE_INFINIBAND &&
        (erf.type & 0x7f) != RDMA_ERF_TYPE_INFINIBAND_LINK)
        erf.type = RDMA_ERF_TYPE_INFINIBAND;
    erf.type &= 0x7f; /* extension headers are not written */
    PUT_HEADER(w, RDMA_ERF_FIELDS, ERF, &erf);
    enum rdma_status st = erf.type == RDMA_ERF_TYPE_INFINIBAND_LINK ? encode_ibfc(w, pkt)
                                                                    : encode_ib(w, pkt);
    if (st != RDMA_OK)
        return st;
    size_t ib_len = w->len - erf_at - RDMA_HDR_SIZE_ERF;
    /* rlen counts the whole record, padded to 8 bytes as capture cards do. */
    rdma_put_be16(w->buf + erf_at + 10, (uint16_t)((w->len - erf_at + 7) & ~(size_t)7));
    rdma_put_be16(w->buf + erf_at + 14, (uint16_t)ib_len);
    return RDMA_OK;
}

static enum rdma_status encode(struct writer *w, const struct rdma_pkt *pkt, size_t *out_len);

enum rdma_status rdma_encode(const struct rdma_pkt *pkt, uint8_t *out, size_t out_cap,
                             size_t *out_len)
{
    struct writer w = {.buf = out, .cap = out_cap};
    return encode(&w, pkt, out_len);
}

enum rdma_status rdma_encode_without_payload(const struct rdma_pkt *pkt, const struct rdma_crc32_part *payload,
                                             uint8_t *out, size_t out_cap, size_t *out_len,
                                             size_t *payload_at)
{
    bool ethernet = pkt->linktype == RDMA_LINKTYPE_ETHERNET || pkt->linktype == RDMA_LINKTYPE_LINUX_SLL ||
                    pkt->linktype == RDMA_LINKTYPE_LINUX_SLL2;
    *out_len = *payload_at = 0;
    if (!ethernet || !(pkt->present & RDMA_HDR_IP) || (pkt->present & RDMA_HDR_MAD) || pkt->udp.checksum ||
        payload->len != pkt->payload_len)
        return RDMA_UNSUPPORTED;
    struct writer w = {.buf = out, .cap = out_cap, .hole = payload};
    enum rdma_status st = encode(&w, pkt, out_len);
    if (st == RDMA_OK)
        *payload_at = w.hole_at;
    return st;
}

static enum rdma_status encode(struct writer *w, const struct rdma_pkt *pkt, size_t *out_len)
{
    enum rdma_status st = RDMA_OK;
    *out_len = 0;
    if (pkt->linktype == RDMA_LINKTYPE_INFINIBAND) {
        st = pkt->present & RDMA_HDR_IBFC ? encode_ibfc(w, pkt) : encode_ib(w, pkt);
    } else if (pkt->linktype == RDMA_LINKTYPE_ERF) {
        st = encode_erf(w, pkt);
    } else if (pkt->linktype == RDMA_LINKTYPE_ETHERNET || pkt->linktype == RDMA_LINKTYPE_LINUX_SLL ||
               pkt->linktype == RDMA_LINKTYPE_LINUX_SLL2) {
        put_link(w, pkt);
        if (pkt->present & (RDMA_HDR_IP | RDMA_HDR_IPV6))
            st = encode_rocev2(w, pkt);
        else if (pkt->present & RDMA_HDR_GRH)
            st = encode_rocev1(w, pkt);
        else if (pkt->present & RDMA_HDR_PFC)
            encode_mac_control(w, pkt);
        else
            return RDMA_MALFORMED;
        size_t wire = w->len + (w->hole ? w->hole->len : 0);
        if (st == RDMA_OK && pkt->linktype == RDMA_LINKTYPE_ETHERNET && wire < ETH_MIN_FRAME)
            reserve(w, ETH_MIN_FRAME - wire);
    } else {
        return RDMA_UNSUPPORTED;
    }
    if (w->overflow)
        return RDMA_TRUNCATED;
    if (st == RDMA_OK)
        *out_len = w->len;
    return st;
}

void rdma_pkt_set_opcode(struct rdma_pkt *pkt, uint8_t opcode)
{
    const struct rdma_opcode_info *op = &rdma_opcodes[opcode];
    pkt->present = (pkt->present & ~(RDMA_HDR_EXT_MASK | RDMA_HDR_MAD | RDMA_HDR_CM)) |
                   RDMA_HDR_BTH | op->headers;
    pkt->bth.opcode = opcode;
    pkt->op = op;
    if (op->fixed_payload)
        pkt->payload_len = op->fixed_payload;
}
