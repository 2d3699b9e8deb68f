/* decode.c - one frame to struct rdma_pkt: link layer, network layer, then
 * the InfiniBand transport (BTH and the extended headers its opcode names).
 *
 *   Ethernet/SLL/SLL2 -> [802.1Q/802.1ad]* -> IPv4/IPv6 -> UDP:4791 -> BTH ...  (RoCEv2)
 *                                          -> 0x8915 GRH -> BTH ...             (RoCEv1)
 *                                          -> 0x8808 MAC Control (PFC, PAUSE)
 *   raw InfiniBand, ERF type 21/25 -> LRH [GRH] -> BTH ... ICRC VCRC          (native IB)
 *
 * Every read goes through the cursor. The first problem found is kept in
 * pkt->status with a reason; headers decoded before it stay usable.
 */
#include "rdma_codec.h"

#include <string.h>

#include "checksum.h"
#include "cursor.h"
#include "decode_paths.h"
#include "fields.h"
#include "icrc.h"
#include "ioam.h"
#include "ipv6_ext.h"

#define ICRC_LEN 4
#define VCRC_LEN 2
#define IB_NEXT_HEADER_IBA 0x1b /* GRH nxthdr: an IBA transport follows */
#define LNH_IBA_LOCAL 2
#define LNH_IBA_GLOBAL 3
#define IP_PROTO_UDP 17
#define MAD_LEN 256
#define OPCODE_UD_SEND_ONLY 0x64 /* MADs travel as UD SEND Only */
#define QPN_GSI 1                /* QP0 is the SMI, QP1 the GSI */

#define CM_DATA_OFFSET 24

void rdma_decode_config_init(struct rdma_decode_config *cfg)
{
    cfg->rocev2_port = RDMA_ROCEV2_UDP_PORT;
    cfg->verify_crc = true;
}

static enum rdma_status fail(struct rdma_pkt *pkt, enum rdma_status st, const char *reason)
{
    if (pkt->status == RDMA_OK) {
        pkt->status = (uint8_t)st;
        pkt->reason = reason;
    }
    return (enum rdma_status)pkt->status;
}

static enum rdma_status truncated(struct rdma_pkt *pkt, const char *where)
{
    return fail(pkt, RDMA_TRUNCATED, where);
}

/* Decode a fixed-size header through the cursor: on success the fields are
 * in *h and the header's bit is set in pkt->present. */
#define TAKE_HEADER(c, pkt, LIST, BIT, size, h)                                \
    ({                                                                         \
        const uint8_t *p_ = take((c), (size));                                 \
        if (p_) {                                                              \
            DECODE_FIELDS(LIST, (h), p_);                                      \
            (pkt)->present |= (BIT);                                           \
        }                                                                      \
        p_;                                                                    \
    })

static void decode_cm(struct rdma_pkt *pkt, const uint8_t *data)
{
    struct rdma_cm *cm = &pkt->cm;
    cm->attr = pkt->mad.attributeid;
    switch (cm->attr) {
#define DECODE_CM(name, id, member, type, FIELDS)                              \
    case RDMA_CM_##name:                                                       \
        DECODE_FIELDS(FIELDS, &cm->u.member, data);                            \
        break;
        RDMA_CM_MESSAGES(DECODE_CM)
#undef DECODE_CM
    default:
        return;
    }
    pkt->present |= RDMA_HDR_CM;
}

/* Management datagrams travel as UD SEND Only to QP0 (SMI) or QP1 (GSI). */
static void decode_mad(struct rdma_pkt *pkt)
{
    if (pkt->payload_len != MAD_LEN || pkt->captured_payload_len < MAD_LEN)
        return;
    DECODE_FIELDS(RDMA_MAD_FIELDS, &pkt->mad, pkt->payload);
    pkt->present |= RDMA_HDR_MAD;
    if (pkt->mad.mgmtclass == RDMA_MAD_CLASS_CM)
        decode_cm(pkt, pkt->payload + CM_DATA_OFFSET);
}

static const uint8_t *take_ext_header(struct cursor *c, struct rdma_pkt *pkt, uint32_t bit)
{
    switch (bit) {
#define EXT(LIST, BIT, member)                                                 \
    case RDMA_HDR_##BIT:                                                       \
        return TAKE_HEADER(c, pkt, LIST, RDMA_HDR_##BIT, RDMA_HDR_SIZE_##BIT, &pkt->member);
        RDMA_EXT_HEADERS(EXT)
#undef EXT
    }
    return 0;
}

/* BTH, extended headers and payload. `end` is where the ICRC ends (the
 * transport length the outer header gave), relative to the cursor start.
 * pkt->icrc.present says whether the packet was captured up to its ICRC. */
static void decode_transport(struct cursor *c, struct rdma_pkt *pkt, size_t end)
{
    if (!TAKE_HEADER(c, pkt, RDMA_BTH_FIELDS, RDMA_HDR_BTH, RDMA_HDR_SIZE_BTH, &pkt->bth)) {
        truncated(pkt, "BTH");
        return;
    }
    const struct rdma_opcode_info *op = &rdma_opcodes[pkt->bth.opcode];
    pkt->op = op;
    if (op->name) {
        for (uint32_t hdrs = op->headers; hdrs; hdrs &= hdrs - 1) {
            uint32_t bit = hdrs & -hdrs;
            if (!take_ext_header(c, pkt, bit)) {
                truncated(pkt, "extended transport header");
                return;
            }
        }
    }
    size_t trailer = ICRC_LEN + pkt->bth.padcnt;
    if (end < c->pos + trailer) {
        fail(pkt, RDMA_MALFORMED, "packet length shorter than its headers");
        return;
    }
    pkt->payload = c->start + c->pos;
    pkt->payload_len = (uint32_t)(end - c->pos - trailer);
    size_t captured = c->captured > c->pos ? c->captured - c->pos : 0;
    pkt->captured_payload_len = (uint32_t)(captured < pkt->payload_len ? captured : pkt->payload_len);
    if (op->name) {
        if (op->fixed_payload && pkt->payload_len != op->fixed_payload)
            fail(pkt, RDMA_MALFORMED, "CNP without its 16 reserved bytes");
        else if (!op->fixed_payload && !(op->flags & RDMA_OPF_PAYLOAD) && pkt->payload_len)
            fail(pkt, RDMA_MALFORMED, "payload on an opcode that carries none");
        else if (pkt->bth.padcnt && !(op->flags & RDMA_OPF_PAYLOAD))
            fail(pkt, RDMA_MALFORMED, "pad count on an opcode that carries no payload");
        if (pkt->bth.opcode == OPCODE_UD_SEND_ONLY && pkt->bth.destqp <= QPN_GSI)
            decode_mad(pkt);
    }
    if (c->captured < end) {
        c->pos = c->captured;
        truncated(pkt, "payload");
        return;
    }
    pkt->icrc.present = true;
    pkt->icrc.value = rdma_get_le32(c->start + end - ICRC_LEN);
    c->pos = end;
}

/* Compute the ICRC only for packets whose transport decoded far enough to
 * carry one: `covered` bytes from `start` run up to the ICRC. */
static void check_icrc(const struct rdma_decode_config *cfg, struct rdma_pkt *pkt,
                       uint32_t (*icrc)(const uint8_t *, size_t), const uint8_t *start,
                       size_t covered)
{
    if (!pkt->icrc.present || !cfg->verify_crc)
        return;
    pkt->icrc.computed = icrc(start, covered);
    pkt->icrc.ok = pkt->icrc.computed == pkt->icrc.value;
    if (!pkt->icrc.ok)
        fail(pkt, RDMA_BAD_ICRC, "ICRC mismatch");
}

/* RoCEv1: GRH then transport; the GRH payload length runs to the ICRC. */
static enum rdma_status decode_rocev1(const struct rdma_decode_config *cfg, struct cursor *c,
                                      struct rdma_pkt *pkt)
{
    pkt->proto = RDMA_PROTO_ROCEV1;
    size_t grh_at = c->pos;
    if (!TAKE_HEADER(c, pkt, RDMA_GRH_FIELDS, RDMA_HDR_GRH, RDMA_HDR_SIZE_GRH, &pkt->grh))
        return truncated(pkt, "GRH");
    size_t end = c->pos + pkt->grh.paylen;
    if (end > c->wire)
        return fail(pkt, RDMA_MALFORMED, "GRH payload length exceeds the frame");
    if (pkt->grh.nxthdr != IB_NEXT_HEADER_IBA)
        return fail(pkt, RDMA_MALFORMED, "GRH next header is not an IBA transport");
    decode_transport(c, pkt, end);
    check_icrc(cfg, pkt, rdma_icrc_grh, c->start + grh_at, end - ICRC_LEN - grh_at);
    return (enum rdma_status)pkt->status;
}

static enum rdma_status decode_udp(const struct rdma_decode_config *cfg, struct cursor *c,
                                   struct rdma_pkt *pkt, size_t l3_at, size_t l3_end, size_t ext_len)
{
    size_t udp_at = c->pos;
    if (!TAKE_HEADER(c, pkt, RDMA_UDP_FIELDS, RDMA_HDR_UDP, RDMA_HDR_SIZE_UDP, &pkt->udp))
        return truncated(pkt, "UDP header");
    if (pkt->udp.dstport != cfg->rocev2_port)
        return (enum rdma_status)pkt->status;
    pkt->proto = RDMA_PROTO_ROCEV2;
    size_t end = udp_at + pkt->udp.length;
    if (pkt->udp.length < RDMA_HDR_SIZE_UDP || end > l3_end)
        return fail(pkt, RDMA_MALFORMED, "UDP length disagrees with the IP length");
    /* The ICRC is read at the far end of the frame, usually another cache
     * line: start loading it while the transport headers are decoded. */
    if (end <= c->captured)
        __builtin_prefetch(c->start + end - ICRC_LEN);
    decode_transport(c, pkt, end);
    if (!ext_len) {
        check_icrc(cfg, pkt, rdma_icrc_rocev2, c->start + l3_at, end - ICRC_LEN - l3_at);
    } else if (pkt->icrc.present && cfg->verify_crc) {
        pkt->icrc.computed = rdma_icrc_rocev2_ipv6_ext(c->start + l3_at, ext_len, end - ICRC_LEN - l3_at);
        pkt->icrc.ok = pkt->icrc.computed == pkt->icrc.value;
        if (!pkt->icrc.ok)
            fail(pkt, RDMA_BAD_ICRC, "ICRC mismatch");
    }
    return (enum rdma_status)pkt->status;
}

static enum rdma_status decode_ipv4(const struct rdma_decode_config *cfg, struct cursor *c,
                                    struct rdma_pkt *pkt)
{
    size_t at = c->pos;
    const uint8_t *h = TAKE_HEADER(c, pkt, RDMA_IP_FIELDS, RDMA_HDR_IP, RDMA_HDR_SIZE_IP, &pkt->ip);
    if (!h)
        return truncated(pkt, "IPv4 header");
    /* Whether it may carry RoCEv2: protocol UDP, neither more fragments
     * (flag 0x2000 of bytes 6-7, RFC 791) nor an offset (their low 13
     * bits). Read from the header's bytes, not from the fields just stored
     * in pkt->ip: the compiler would load those back as one word, from
     * several narrow stores, a load that waits until they are all done. */
    bool unfragmented_udp = h[9] == IP_PROTO_UDP && !(rdma_get_be16(h + 6) & 0x3fff);
    if (pkt->ip.version != 4 || pkt->ip.ihl < 5)
        return fail(pkt, RDMA_MALFORMED, "IPv4 version or header length");
    size_t hlen = (size_t)pkt->ip.ihl * 4;
    pkt->ip_options_len = (uint8_t)(hlen - RDMA_HDR_SIZE_IP);
    pkt->ip_options = take(c, pkt->ip_options_len);
    if (!pkt->ip_options)
        return truncated(pkt, "IPv4 options");
    /* a header without options (nearly all) sums at a length known when
     * compiling: five words, no loop */
    uint32_t sum = hlen == RDMA_HDR_SIZE_IP ? csum_add(h, RDMA_HDR_SIZE_IP, 0) : csum_add(h, hlen, 0);
    pkt->ip_checksum_ok = csum_fold(sum) == 0;
    if (!pkt->ip_checksum_ok)
        fail(pkt, RDMA_BAD_CHECKSUM, "IPv4 header checksum");
    size_t end = at + pkt->ip.len;
    if (pkt->ip.len < hlen || end > c->wire)
        return fail(pkt, RDMA_MALFORMED, "IPv4 total length disagrees with the frame");
    if (!unfragmented_udp)
        return (enum rdma_status)pkt->status;
    return decode_udp(cfg, c, pkt, at, end, 0);
}

static enum rdma_status decode_ipv6(const struct rdma_decode_config *cfg, struct cursor *c,
                                    struct rdma_pkt *pkt)
{
    size_t at = c->pos;
    if (!TAKE_HEADER(c, pkt, RDMA_IPV6_FIELDS, RDMA_HDR_IPV6, RDMA_HDR_SIZE_IPV6, &pkt->ipv6))
        return truncated(pkt, "IPv6 header");
    if (pkt->ipv6.version != 6)
        return fail(pkt, RDMA_MALFORMED, "IPv6 version");
    size_t end = c->pos + pkt->ipv6.plen;
    if (end > c->wire)
        return fail(pkt, RDMA_MALFORMED, "IPv6 payload length exceeds the frame");
    uint8_t nxt = pkt->ipv6.nxt;
    size_t ext_at = c->pos;
    if (nxt == IP6_HOPOPT && c->pos < c->captured) {
        /* an IOAM trace in the Hop-by-Hop header (ioam.c) */
        const char *bad = rdma__ioam_get(c->start + c->pos, c->captured - c->pos, c->pos, &pkt->ioam);
        if (bad)
            fail(pkt, RDMA_MALFORMED, bad);
    }
    /* extension headers before UDP (ipv6_ext.h) */
    switch (ipv6_ext_walk(c, end, &nxt, IP_PROTO_UDP)) {
    case IPV6_EXT_OK:
        break;
    case IPV6_EXT_OTHER:
        return (enum rdma_status)pkt->status;
    case IPV6_EXT_TRUNCATED:
        return truncated(pkt, "IPv6 extension header");
    case IPV6_EXT_MALFORMED:
        return fail(pkt, RDMA_MALFORMED, "IPv6 extension header runs past the payload length");
    }
    return decode_udp(cfg, c, pkt, at, end, c->pos - ext_at);
}

static enum rdma_status decode_mac_control(struct cursor *c, struct rdma_pkt *pkt)
{
    const uint8_t *p = take(c, 2);
    if (!p)
        return truncated(pkt, "MAC Control opcode");
    struct rdma_pfc *pfc = &pkt->pfc;
    memset(pfc, 0, sizeof *pfc);
    pfc->opcode = rdma_get_be16(p);
    if (pfc->opcode == RDMA_MAC_CONTROL_PAUSE) {
        if (!(p = take(c, 2)))
            return truncated(pkt, "PAUSE time");
        pfc->pause_time[0] = rdma_get_be16(p);
        pkt->proto = RDMA_PROTO_PAUSE;
    } else if (pfc->opcode == RDMA_MAC_CONTROL_PFC) {
        if (!(p = take(c, 18)))
            return truncated(pkt, "PFC class-enable vector and pause times");
        pfc->enbv = rdma_get_be16(p);
        for (int i = 0; i < 8; i++)
            pfc->pause_time[i] = rdma_get_be16(p + 2 + 2 * i);
        pkt->proto = RDMA_PROTO_PFC;
        if (pfc->enbv >> 8)
            fail(pkt, RDMA_MALFORMED, "PFC class-enable vector upper byte not zero");
    } else {
        return (enum rdma_status)pkt->status;
    }
    pkt->present |= RDMA_HDR_PFC;
    return (enum rdma_status)pkt->status;
}

static enum rdma_status decode_ethertype(const struct rdma_decode_config *cfg, struct cursor *c,
                                         struct rdma_pkt *pkt, uint16_t type)
{
    while (type == RDMA_ETHERTYPE_VLAN || type == RDMA_ETHERTYPE_QINQ) {
        if (pkt->nvlan == RDMA_MAX_VLAN)
            return fail(pkt, RDMA_UNSUPPORTED, "more than twenty VLAN tags");
        struct rdma_vlan *v = &pkt->vlan[pkt->nvlan];
        const uint8_t *p = take(c, 4);
        if (!p)
            return truncated(pkt, "VLAN tag");
        DECODE_FIELDS(RDMA_VLAN_FIELDS, v, p);
        pkt->nvlan++;
        type = v->etype;
    }
    pkt->ethertype = type;
    pkt->l3 = c->start + c->pos;
    pkt->l3_len = (uint32_t)(c->captured - c->pos);
    switch (type) {
    case RDMA_ETHERTYPE_IPV4:
        return decode_ipv4(cfg, c, pkt);
    case RDMA_ETHERTYPE_IPV6:
        return decode_ipv6(cfg, c, pkt);
    case RDMA_ETHERTYPE_ROCEV1:
        return decode_rocev1(cfg, c, pkt);
    case RDMA_ETHERTYPE_MAC_CONTROL:
        return decode_mac_control(c, pkt);
    }
    return (enum rdma_status)pkt->status;
}

/* Native InfiniBand: LRH, optional GRH, transport, ICRC, VCRC. The LRH
 * packet length counts 4-byte words from the LRH through the ICRC. */
static enum rdma_status decode_ib(const struct rdma_decode_config *cfg, struct cursor *c,
                                  struct rdma_pkt *pkt)
{
    pkt->proto = RDMA_PROTO_IB;
    size_t lrh_at = c->pos;
    if (!TAKE_HEADER(c, pkt, RDMA_LRH_FIELDS, RDMA_HDR_LRH, RDMA_HDR_SIZE_LRH, &pkt->lrh))
        return truncated(pkt, "LRH");
    size_t end = lrh_at + (size_t)pkt->lrh.pktlen * 4;
    if (end < c->pos || end + VCRC_LEN > c->wire)
        return fail(pkt, RDMA_MALFORMED, "LRH packet length disagrees with the frame");
    size_t grh_at = c->pos;
    bool iba = pkt->lrh.lnh == LNH_IBA_LOCAL;
    if (pkt->lrh.lnh == LNH_IBA_GLOBAL) {
        if (!TAKE_HEADER(c, pkt, RDMA_GRH_FIELDS, RDMA_HDR_GRH, RDMA_HDR_SIZE_GRH, &pkt->grh))
            return truncated(pkt, "GRH");
        iba = pkt->grh.nxthdr == IB_NEXT_HEADER_IBA;
    }
    if (iba) {
        decode_transport(c, pkt, end);
        if (pkt->lrh.lnh == LNH_IBA_GLOBAL)
            check_icrc(cfg, pkt, rdma_icrc_grh, c->start + grh_at, end - ICRC_LEN - grh_at);
        else
            check_icrc(cfg, pkt, rdma_icrc_lrh, c->start + lrh_at, end - ICRC_LEN - lrh_at);
    } else {
        /* Raw packets (LNH 0/1 or a non-IBA next header) carry no ICRC. */
        pkt->payload = c->start + c->pos;
        pkt->payload_len = (uint32_t)(end - c->pos);
    }
    if (c->captured < end + VCRC_LEN)
        return truncated(pkt, "VCRC");
    pkt->vcrc.present = true;
    pkt->vcrc.value = (uint32_t)c->start[end] | (uint32_t)c->start[end + 1] << 8;
    if (cfg->verify_crc) {
        pkt->vcrc.computed = rdma_vcrc(c->start + lrh_at, end - lrh_at);
        pkt->vcrc.ok = pkt->vcrc.computed == pkt->vcrc.value;
        if (!pkt->vcrc.ok)
            fail(pkt, RDMA_BAD_VCRC, "VCRC mismatch");
    }
    return (enum rdma_status)pkt->status;
}

/* A link packet (IBA vol. 1, 7.9.4): a flow-control packet, operand 0
 * (normal) or 1 (initialization); the other operands are reserved. Its
 * LPCRC is the VCRC's CRC-16 over the first four bytes, in the VCRC's byte
 * order. */
static enum rdma_status decode_ibfc(const struct rdma_decode_config *cfg, struct cursor *c,
                                    struct rdma_pkt *pkt)
{
    pkt->proto = RDMA_PROTO_IB;
    const uint8_t *p = TAKE_HEADER(c, pkt, RDMA_IBFC_FIELDS, RDMA_HDR_IBFC, RDMA_HDR_SIZE_IBFC,
                                   &pkt->ibfc);
    if (!p)
        return truncated(pkt, "flow control packet");
    if (pkt->ibfc.op > 1)
        return fail(pkt, RDMA_MALFORMED, "link packet operand is reserved");
    if (c->pos != c->wire)
        return fail(pkt, RDMA_MALFORMED, "link packet longer than 6 bytes");
    /* sent least significant byte first, as the VCRC (the link layer's
     * other CRC-16) is on real links */
    pkt->vcrc.present = true;
    pkt->vcrc.value = (uint32_t)p[4] | (uint32_t)p[5] << 8;
    if (cfg->verify_crc) {
        pkt->vcrc.computed = rdma_vcrc(p, 4);
        pkt->vcrc.ok = pkt->vcrc.computed == pkt->vcrc.value;
        if (!pkt->vcrc.ok)
            fail(pkt, RDMA_BAD_VCRC, "LPCRC mismatch");
    }
    return (enum rdma_status)pkt->status;
}

/* ERF records may be followed by 8-byte extension headers, chained by the
 * top bit of their first byte (and of the record type for the first). */
static enum rdma_status decode_erf(const struct rdma_decode_config *cfg, struct cursor *c,
                                   struct rdma_pkt *pkt)
{
    if (!TAKE_HEADER(c, pkt, RDMA_ERF_FIELDS, RDMA_HDR_ERF, RDMA_HDR_SIZE_ERF, &pkt->erf))
        return truncated(pkt, "ERF header");
    bool more = pkt->erf.type & 0x80;
    while (more) {
        const uint8_t *ext = take(c, 8);
        if (!ext)
            return truncated(pkt, "ERF extension header");
        more = ext[0] & 0x80;
    }
    pkt->pseudo_len = (uint32_t)c->pos;
    unsigned type = pkt->erf.type & 0x7f;
    if (type != RDMA_ERF_TYPE_INFINIBAND && type != RDMA_ERF_TYPE_INFINIBAND_LINK)
        return fail(pkt, RDMA_UNSUPPORTED, "ERF record type is not InfiniBand");
    /* The wire length of the InfiniBand packet is the ERF wlen. */
    size_t wire = c->pos + pkt->erf.wlen;
    if (wire < c->wire)
        c->wire = wire;
    if (c->captured > c->wire)
        c->captured = c->wire;
    if (type == RDMA_ERF_TYPE_INFINIBAND_LINK)
        return decode_ibfc(cfg, c, pkt);
    return decode_ib(cfg, c, pkt);
}

bool rdma_linktype_supported(unsigned linktype)
{
    switch (linktype) {
    case RDMA_LINKTYPE_ETHERNET:
    case RDMA_LINKTYPE_LINUX_SLL:
    case RDMA_LINKTYPE_LINUX_SLL2:
    case RDMA_LINKTYPE_INFINIBAND:
    case RDMA_LINKTYPE_ERF:
        return true;
    }
    return false;
}

/* Every frame, header by header: the layers a frame holds are found as
 * they are read, and every read goes through the cursor. A function of
 * its own, which rdma_decode() jumps to, so that the plain RoCEv2 frames
 * decoded inline before it do not pay for saving the registers it uses. */
__attribute__((noinline)) static enum rdma_status
decode_general(const struct rdma_decode_config *cfg, unsigned linktype, const uint8_t *frame,
               size_t caplen, size_t wirelen, struct rdma_pkt *pkt)
{
    pkt->present = 0;
    pkt->proto = RDMA_PROTO_OTHER;
    pkt->nvlan = 0;
    pkt->status = RDMA_OK;
    pkt->reason = 0;
    pkt->linktype = (uint16_t)linktype;
    pkt->ethertype = 0;
    pkt->l3 = NULL;
    pkt->l3_len = 0;
    pkt->op = 0;
    pkt->payload = 0;
    pkt->payload_len = 0;
    pkt->captured_payload_len = 0;
    pkt->ip_options_len = 0;
    pkt->ioam.present = false;
    pkt->ip_checksum_ok = false; /* read by the printers even when the IPv4 header stops short */
    pkt->icrc.present = pkt->vcrc.present = false;
    pkt->icrc.ok = pkt->vcrc.ok = false;
    pkt->frame_len = (uint32_t)caplen;
    pkt->wire_len = (uint32_t)wirelen;
    pkt->pseudo_len = 0;
    struct cursor c = {frame, 0, caplen < wirelen ? caplen : wirelen, wirelen};

    switch (linktype) {
    case RDMA_LINKTYPE_ETHERNET:
        if (!TAKE_HEADER(&c, pkt, RDMA_ETH_FIELDS, RDMA_HDR_ETH, RDMA_HDR_SIZE_ETH, &pkt->eth))
            return truncated(pkt, "Ethernet header");
        return decode_ethertype(cfg, &c, pkt, pkt->eth.type);
    case RDMA_LINKTYPE_LINUX_SLL:
        if (!TAKE_HEADER(&c, pkt, RDMA_SLL_FIELDS, RDMA_HDR_SLL, RDMA_HDR_SIZE_SLL, &pkt->sll))
            return truncated(pkt, "Linux cooked header");
        return decode_ethertype(cfg, &c, pkt, pkt->sll.etype);
    case RDMA_LINKTYPE_LINUX_SLL2:
        if (!TAKE_HEADER(&c, pkt, RDMA_SLL2_FIELDS, RDMA_HDR_SLL2, RDMA_HDR_SIZE_SLL2, &pkt->sll2))
            return truncated(pkt, "Linux cooked v2 header");
        return decode_ethertype(cfg, &c, pkt, pkt->sll2.etype);
    case RDMA_LINKTYPE_INFINIBAND:
        /* a packet of 6 bytes on the wire is a link packet: the smallest
         * data packet has an LRH and a VCRC */
        if (wirelen == RDMA_HDR_SIZE_IBFC)
            return decode_ibfc(cfg, &c, pkt);
        return decode_ib(cfg, &c, pkt);
    case RDMA_LINKTYPE_ERF:
        return decode_erf(cfg, &c, pkt);
    }
    return fail(pkt, RDMA_UNSUPPORTED, "link type");
}

static const uint8_t header_size[RDMA_HDRI_COUNT] = {
#define HEADER_SIZE(member, BIT, size) [RDMA_HDRI_##BIT] = (size),
    RDMA_HEADERS(HEADER_SIZE)
#undef HEADER_SIZE
};

/* Offsets in the frame of the plain RoCEv2 frame's headers. */
enum {
    PLAIN_IP_AT = RDMA_HDR_SIZE_ETH,
    PLAIN_UDP_AT = PLAIN_IP_AT + RDMA_HDR_SIZE_IP,
    PLAIN_BTH_AT = PLAIN_UDP_AT + RDMA_HDR_SIZE_UDP,
    PLAIN_EXT_AT = PLAIN_BTH_AT + RDMA_HDR_SIZE_BTH,
};

/* Whether the 20 bytes of an IPv4 header without options sum to all ones,
 * as a right checksum makes them (RFC 1071). The ones' complement sum of
 * byte-swapped words is the byte-swapped sum (RFC 1071 2.(B)), and all
 * ones swapped are all ones, so the words are added as the host loads
 * them: five 32-bit words, whose total folds to 16 bits. */
static inline bool ipv4_header_sum_is_ones(const uint8_t *h)
{
    uint64_t a, b;
    uint32_t c;
    memcpy(&a, h, 8);
    memcpy(&b, h + 8, 8);
    memcpy(&c, h + 16, 4);
    uint64_t sum = (a & 0xffffffff) + (a >> 32) + (b & 0xffffffff) + (b >> 32) + c; /* < 2^35 */
    sum = (sum & 0xffffffff) + (sum >> 32);                                         /* < 2^32 + 8 */
    sum = (sum & 0xffff) + (sum >> 16);                                             /* < 2^17 + 8 */
    sum = (sum & 0xffff) + (sum >> 16);                                             /* <= 2^16 */
    sum = (sum & 0xffff) + (sum >> 16);                                             /* < 2^16 */
    return sum == 0xffff;
}

/* The frame nearly every RoCE capture is made of: RoCEv2 over IPv4
 * without options, on untagged Ethernet, captured whole, its checksum
 * right and its lengths agreeing, of a known opcode whose headers and
 * payload fit it, and no MAD. Whether a frame is one is read from its
 * bytes before anything is stored, so one that is not is left to the
 * general path untouched; one that is gets the struct the general path
 * makes (tests/unit/test_decode_paths.c compares them), without the
 * general path's dispatch from header to header, a bounds check for each,
 * and the tests for what such a frame cannot hold. */
__attribute__((always_inline)) static inline bool
decode_plain_rocev2(const struct rdma_decode_config *cfg, unsigned linktype, const uint8_t *frame,
                    size_t caplen, size_t wirelen, struct rdma_pkt *pkt)
{
    if (linktype != RDMA_LINKTYPE_ETHERNET || caplen != wirelen ||
        wirelen < PLAIN_EXT_AT + ICRC_LEN)
        return false;
    const uint8_t *ip = frame + PLAIN_IP_AT;
    const uint8_t *udp = frame + PLAIN_UDP_AT;
    const uint8_t *bth = frame + PLAIN_BTH_AT;
    /* version 4, no options, UDP, neither more fragments nor an offset */
    if (rdma_get_be16(frame + 12) != RDMA_ETHERTYPE_IPV4 || ip[0] != 0x45 ||
        ip[9] != IP_PROTO_UDP || (rdma_get_be16(ip + 6) & 0x3fff) ||
        rdma_get_be16(udp + 2) != cfg->rocev2_port)
        return false;
    size_t ip_len = rdma_get_be16(ip + 2), udp_len = rdma_get_be16(udp + 4);
    size_t end = PLAIN_UDP_AT + udp_len;
    if (ip_len < RDMA_HDR_SIZE_IP || PLAIN_IP_AT + ip_len > wirelen || udp_len < RDMA_HDR_SIZE_UDP ||
        end > PLAIN_IP_AT + ip_len || !ipv4_header_sum_is_ones(ip))
        return false;
    const struct rdma_opcode_info *op = &rdma_opcodes[bth[0]];
    uint32_t ext = op->headers & RDMA_HDR_EXT_MASK;
    size_t ext_len = 0;
    for (uint32_t hdrs = ext; hdrs; hdrs &= hdrs - 1)
        ext_len += header_size[__builtin_ctz(hdrs)];
    size_t payload_at = PLAIN_EXT_AT + ext_len;
    size_t trailer = ICRC_LEN + (bth[1] >> 4 & 3);
    if (!op->name || end < payload_at + trailer)
        return false;
    size_t payload_len = end - payload_at - trailer;
    bool carries = op->flags & RDMA_OPF_PAYLOAD;
    if (op->fixed_payload ? payload_len != op->fixed_payload : !carries && payload_len)
        return false;
    if ((bth[1] & 0x30) && !carries)
        return false;
    if (bth[0] == OPCODE_UD_SEND_ONLY && rdma_get_be24(bth + 5) <= QPN_GSI)
        return false;
    /* the ICRC is read at the far end of the frame, usually another cache
     * line: start loading it while the headers are stored */
    __builtin_prefetch(frame + end - ICRC_LEN);

    pkt->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH | ext;
    pkt->proto = RDMA_PROTO_ROCEV2;
    pkt->nvlan = 0;
    pkt->status = RDMA_OK;
    pkt->reason = 0;
    pkt->linktype = (uint16_t)linktype;
    pkt->ethertype = RDMA_ETHERTYPE_IPV4;
    pkt->l3 = ip;
    pkt->l3_len = (uint32_t)(wirelen - PLAIN_IP_AT);
    pkt->op = op;
    pkt->payload = frame + payload_at;
    pkt->payload_len = (uint32_t)payload_len;
    pkt->captured_payload_len = (uint32_t)payload_len;
    pkt->ip_options_len = 0;
    pkt->ip_options = udp;
    pkt->ioam.present = false;
    pkt->ip_checksum_ok = true;
    pkt->vcrc.present = false;
    pkt->vcrc.ok = false;
    pkt->frame_len = (uint32_t)caplen;
    pkt->wire_len = (uint32_t)wirelen;
    pkt->pseudo_len = 0;
    DECODE_FIELDS(RDMA_ETH_FIELDS, &pkt->eth, frame);
    DECODE_FIELDS(RDMA_IP_FIELDS, &pkt->ip, ip);
    DECODE_FIELDS(RDMA_UDP_FIELDS, &pkt->udp, udp);
    DECODE_FIELDS(RDMA_BTH_FIELDS, &pkt->bth, bth);
    /* the extended headers in wire order, which is their bits' order */
    const uint8_t *p = frame + PLAIN_EXT_AT;
#define EXT(LIST, BIT, member)                                                 \
    if (ext & RDMA_HDR_##BIT) {                                                \
        DECODE_FIELDS(LIST, &pkt->member, p);                                  \
        p += RDMA_HDR_SIZE_##BIT;                                              \
    }
    RDMA_EXT_HEADERS(EXT)
#undef EXT
    pkt->icrc.present = true;
    pkt->icrc.value = rdma_get_le32(frame + end - ICRC_LEN);
    pkt->icrc.ok = false;
    check_icrc(cfg, pkt, rdma__icrc_rocev2_ipv4, ip, end - ICRC_LEN - PLAIN_IP_AT);
    return true;
}

enum rdma_status rdma_decode(const struct rdma_decode_config *cfg, unsigned linktype,
                             const uint8_t *frame, size_t caplen, size_t wirelen,
                             struct rdma_pkt *pkt)
{
    if (decode_plain_rocev2(cfg, linktype, frame, caplen, wirelen, pkt))
        return (enum rdma_status)pkt->status;
    return decode_general(cfg, linktype, frame, caplen, wirelen, pkt);
}

bool rdma__decode_plain_rocev2(const struct rdma_decode_config *cfg, const uint8_t *frame,
                               size_t len, struct rdma_pkt *pkt)
{
    return decode_plain_rocev2(cfg, RDMA_LINKTYPE_ETHERNET, frame, len, len, pkt);
}

enum rdma_status rdma__decode_general(const struct rdma_decode_config *cfg, unsigned linktype,
                                      const uint8_t *frame, size_t caplen, size_t wirelen,
                                      struct rdma_pkt *pkt)
{
    return decode_general(cfg, linktype, frame, caplen, wirelen, pkt);
}
