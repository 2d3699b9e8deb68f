/* tcp.c - the TCP segment of a frame (RFC 9293 3.1), and building Ethernet
 * + IP + TCP frames for the iWARP encoder.
 *
 *   |srcport|dstport|   seq   |   ack   |doff|flags|window|checksum|urgent| options | data
 *
 * rdma_decode() stops at the IP layer for anything but UDP; where the TCP
 * header starts follows from the headers it decoded: the link header, the
 * VLAN tags and the IP header length, or for IPv6 its extension headers.
 */
#include <string.h>

#include "checksum.h"
#include "cursor.h"
#include "fields.h"
#include "ipv6_ext.h"
#include "rdma_iwarp.h"

#define TCP_HDR_LEN 20
#define VLAN_TAG_LEN 4
#define ETH_MIN_FRAME 60

static bool l3_offset(const struct rdma_pkt *pkt, size_t *off)
{
    if (pkt->present & RDMA_HDR_ETH)
        *off = RDMA_HDR_SIZE_ETH;
    else if (pkt->present & RDMA_HDR_SLL)
        *off = RDMA_HDR_SIZE_SLL;
    else if (pkt->present & RDMA_HDR_SLL2)
        *off = RDMA_HDR_SIZE_SLL2;
    else
        return false;
    *off += (size_t)VLAN_TAG_LEN * pkt->nvlan;
    return true;
}

bool rdma_tcp_decode(const struct rdma_pkt *pkt, const uint8_t *frame, struct rdma_tcp *tcp,
                     const uint8_t **payload, uint32_t *payload_len)
{
    size_t l3, l4, l4_len;
    if (pkt->status != RDMA_OK && pkt->status != RDMA_BAD_CHECKSUM)
        return false;
    if (!l3_offset(pkt, &l3))
        return false;
    if (pkt->present & RDMA_HDR_IP) {
        size_t hlen = (size_t)pkt->ip.ihl * 4;
        if (pkt->ip.proto != RDMA_IP_PROTO_TCP || pkt->ip.frag_offset || (pkt->ip.flags & 1) ||
            pkt->ip.len < hlen)
            return false;
        l4 = l3 + hlen;
        l4_len = pkt->ip.len - hlen;
    } else if (pkt->present & RDMA_HDR_IPV6) {
        /* TCP may stand behind extension headers, as UDP may (ipv6_ext.h) */
        size_t ip6_end = l3 + RDMA_HDR_SIZE_IPV6 + pkt->ipv6.plen;
        struct cursor x = {frame, l3 + RDMA_HDR_SIZE_IPV6,
                           pkt->frame_len < ip6_end ? pkt->frame_len : ip6_end, ip6_end};
        uint8_t nxt = pkt->ipv6.nxt;
        if (ipv6_ext_walk(&x, ip6_end, &nxt, RDMA_IP_PROTO_TCP) != IPV6_EXT_OK)
            return false;
        l4 = x.pos;
        l4_len = ip6_end - x.pos;
    } else {
        return false;
    }
    size_t end = l4 + l4_len;
    struct cursor c = {frame, l4, pkt->frame_len < end ? pkt->frame_len : end, end};
    const uint8_t *h = take(&c, TCP_HDR_LEN);
    if (!h)
        return false;
    DECODE_FIELDS(RDMA_TCP_FIELDS, tcp, h);
    if (tcp->doff < 5 || !take(&c, (size_t)tcp->doff * 4 - TCP_HDR_LEN))
        return false;
    /* A segment cut short by the snapshot length cannot be reassembled. */
    if (c.captured < end)
        return false;
    *payload = frame + c.pos;
    *payload_len = (uint32_t)(end - c.pos);
    return true;
}

bool rdma_tcp_checksum_ok(const struct rdma_pkt *pkt, const uint8_t *frame)
{
    struct rdma_tcp tcp;
    const uint8_t *payload;
    uint32_t len;
    if (!rdma_tcp_decode(pkt, frame, &tcp, &payload, &len))
        return false;
    size_t hdr = (size_t)tcp.doff * 4, seg = hdr + len;
    const uint8_t *l4p = payload - hdr;
    uint32_t pseudo = RDMA_IP_PROTO_TCP + (uint32_t)seg;
    if (pkt->present & RDMA_HDR_IP) {
        size_t l3;
        if (!l3_offset(pkt, &l3))
            return false;
        pseudo = csum_add(frame + l3 + 12, 8, pseudo);
    } else {
        pseudo = csum_add(pkt->ipv6.src, 16, pseudo);
        pseudo = csum_add(pkt->ipv6.dst, 16, pseudo);
    }
    return csum_fold(csum_add(l4p, seg, pseudo)) == 0;
}

enum rdma_status rdma_tcp_encode(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp,
                                 const uint8_t *payload, size_t len, uint8_t *out, size_t cap,
                                 size_t *out_len)
{
    return rdma_tcp_encode_opts(pkt, tcp, NULL, 0, payload, len, out, cap, out_len);
}

enum rdma_status rdma_tcp_encode_opts(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp,
                                      const uint8_t *opts, size_t optlen, const uint8_t *payload,
                                      size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    bool v4 = pkt->present & RDMA_HDR_IP;
    size_t l3_len = v4 ? RDMA_HDR_SIZE_IP : RDMA_HDR_SIZE_IPV6;
    size_t hdr = TCP_HDR_LEN + optlen;
    size_t l4 = RDMA_HDR_SIZE_ETH + l3_len, n = l4 + hdr + len;
    *out_len = 0;
    if (!(pkt->present & (RDMA_HDR_IP | RDMA_HDR_IPV6)) || pkt->linktype != RDMA_LINKTYPE_ETHERNET)
        return RDMA_MALFORMED;
    /* the data offset counts 32-bit words, at most 15 of them */
    if ((optlen & 3) || optlen > RDMA_TCP_MAX_OPTIONS)
        return RDMA_MALFORMED;
    if (hdr + len + (v4 ? l3_len : 0) > 0xffff)
        return RDMA_MALFORMED;
    size_t total = n < ETH_MIN_FRAME ? ETH_MIN_FRAME : n;
    if (total > cap)
        return RDMA_TRUNCATED;
    memset(out, 0, l4 + hdr);
    struct rdma_eth eth = pkt->eth;
    eth.type = v4 ? RDMA_ETHERTYPE_IPV4 : RDMA_ETHERTYPE_IPV6;
    ENCODE_FIELDS(RDMA_ETH_FIELDS, &eth, out);
    uint8_t *l3p = out + RDMA_HDR_SIZE_ETH;
    uint32_t pseudo;
    if (v4) {
        struct rdma_ip ip = pkt->ip;
        ip.version = 4;
        ip.ihl = 5;
        ip.proto = RDMA_IP_PROTO_TCP;
        ip.len = (uint16_t)(l3_len + hdr + len);
        ip.checksum = 0;
        ENCODE_FIELDS(RDMA_IP_FIELDS, &ip, l3p);
        rdma_put_be16(l3p + 10, csum_fold(csum_add(l3p, l3_len, 0)));
        pseudo = csum_add(l3p + 12, 8, 0);
    } else {
        struct rdma_ipv6 ip6 = pkt->ipv6;
        ip6.version = 6;
        ip6.nxt = RDMA_IP_PROTO_TCP;
        ip6.plen = (uint16_t)(hdr + len);
        ENCODE_FIELDS(RDMA_IPV6_FIELDS, &ip6, l3p);
        pseudo = csum_add(l3p + 8, 32, 0);
    }
    struct rdma_tcp t = *tcp;
    t.doff = (uint8_t)(hdr / 4);
    t.checksum = 0;
    uint8_t *l4p = out + l4;
    ENCODE_FIELDS(RDMA_TCP_FIELDS, &t, l4p);
    if (optlen)
        memcpy(l4p + TCP_HDR_LEN, opts, optlen);
    if (len)
        memcpy(l4p + hdr, payload, len);
    pseudo += RDMA_IP_PROTO_TCP + (uint32_t)(hdr + len);
    rdma_put_be16(l4p + 16, csum_fold(csum_add(l4p, hdr + len, pseudo)));
    memset(out + n, 0, total - n);
    *out_len = total;
    return RDMA_OK;
}
