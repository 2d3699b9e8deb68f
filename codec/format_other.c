/* format_other.c - one summary line for the frames around RDMA traffic:
 * ARP, and TCP, UDP, ICMP and ICMPv6 over IPv4 or IPv6, carried by
 * Ethernet or by IPoIB (RFC 4391, 4755) in an InfiniBand SEND. The decoder
 * does not take these headers apart; the summary reads what it shows
 * through the cursor, from where the network header begins.
 *
 *   ARP (RFC 826):   | htype | ptype | hlen | plen | oper | sha | spa | tha | tpa |
 *   IPoIB:           | EtherType (16) | reserved (16) | IPv4, IPv6 or ARP ...
 */
#include "cursor.h"
#include "ipv6_ext.h"
#include "out.h"
#include "rdma_codec.h"

#define ETHERTYPE_ARP 0x0806
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMPV6 58

struct name {
    unsigned value;
    const char *text;
};

static const struct name icmp_types[] = {
    {0, "echo reply"}, {3, "destination unreachable"}, {5, "redirect"},
    {8, "echo request"}, {11, "time exceeded"}, {0, NULL},
};

static const struct name icmpv6_types[] = {
    {1, "destination unreachable"}, {2, "packet too big"}, {3, "time exceeded"},
    {128, "echo request"}, {129, "echo reply"}, {130, "multicast listener query"},
    {131, "multicast listener report"}, {133, "router solicitation"},
    {134, "router advertisement"}, {135, "neighbor solicitation"},
    {136, "neighbor advertisement"}, {137, "redirect"},
    {143, "multicast listener report v2"}, {0, NULL},
};

static const char *lookup(const struct name *t, unsigned v)
{
    for (; t->text; t++)
        if (t->value == v)
            return t->text;
    return NULL;
}

/* The TCP flags tshark names, in its order. */
static void tcp_flags(struct out *o, unsigned flags)
{
    static const struct name bits[] = {
        {0x02, "SYN"}, {0x01, "FIN"}, {0x04, "RST"}, {0x08, "PSH"}, {0x10, "ACK"},
        {0x20, "URG"}, {0x40, "ECE"}, {0x80, "CWR"}, {0, NULL},
    };
    bool any = false;
    out_str(o, " [");
    for (const struct name *b = bits; b->text; b++) {
        if (!(flags & b->value))
            continue;
        if (any)
            out_str(o, ", ");
        out_str(o, b->text);
        any = true;
    }
    out_chr(o, ']');
}

/* The upper-layer header at the cursor, `len` octets to the datagram's end. */
static bool transport(struct out *o, struct cursor *c, unsigned proto, size_t len)
{
    const uint8_t *h;
    switch (proto) {
    case PROTO_TCP:
        if (!(h = take(c, 20)) || (h[12] >> 4) * 4u < 20 || (h[12] >> 4) * 4u > len)
            return false;
        out_str(o, "TCP ");
        out_u64(o, rdma_get_be16(h));
        out_str(o, " \xe2\x86\x92 ");
        out_u64(o, rdma_get_be16(h + 2));
        tcp_flags(o, h[13]);
        out_str(o, " seq=");
        out_u64(o, rdma_get_be32(h + 4));
        if (h[13] & 0x10) {
            out_str(o, " ack=");
            out_u64(o, rdma_get_be32(h + 8));
        }
        out_str(o, " win=");
        out_u64(o, rdma_get_be16(h + 14));
        out_str(o, " payload=");
        out_u64(o, len - (h[12] >> 4) * 4u);
        return true;
    case PROTO_UDP:
        if (!(h = take(c, 8)) || rdma_get_be16(h + 4) < 8)
            return false;
        out_str(o, "UDP ");
        out_u64(o, rdma_get_be16(h));
        out_str(o, " \xe2\x86\x92 ");
        out_u64(o, rdma_get_be16(h + 2));
        out_str(o, " payload=");
        out_u64(o, rdma_get_be16(h + 4) - 8u);
        return true;
    case PROTO_ICMP:
    case PROTO_ICMPV6: {
        if (!(h = take(c, 2)))
            return false;
        const char *name = lookup(proto == PROTO_ICMP ? icmp_types : icmpv6_types, h[0]);
        out_str(o, proto == PROTO_ICMP ? "ICMP " : "ICMPv6 ");
        if (name) {
            out_str(o, name);
            out_chr(o, ' ');
        }
        out_str(o, "type=");
        out_u64(o, h[0]);
        out_str(o, " code=");
        out_u64(o, h[1]);
        return true;
    }
    }
    return false;
}

static void addresses(struct out *o, const uint8_t *src, const uint8_t *dst, size_t len, int kind)
{
    rdma__out_array(o, src, len, kind);
    out_str(o, " \xe2\x86\x92 ");
    rdma__out_array(o, dst, len, kind);
    out_chr(o, ' ');
}

static bool ipv4(struct out *o, struct cursor *c)
{
    const uint8_t *h = take(c, 20);
    if (!h || h[0] >> 4 != 4 || (h[0] & 15) < 5)
        return false;
    size_t hlen = (h[0] & 15) * 4u, total = rdma_get_be16(h + 2);
    if (total < hlen || (rdma_get_be16(h + 6) & 0x3fff) || !take(c, hlen - 20))
        return false; /* a fragment is listed by its IPv4 header (format_summary.c) */
    addresses(o, h + 12, h + 16, 4, RDMA_ARRAY_IPV4);
    return transport(o, c, h[9], total - hlen);
}

static bool ipv6(struct out *o, struct cursor *c)
{
    size_t at = c->pos;
    const uint8_t *h = take(c, 40);
    if (!h || h[0] >> 4 != 6)
        return false;
    size_t end = at + 40 + rdma_get_be16(h + 4);
    uint8_t nxt = h[6];
    /* the upper layers shown here stand behind extension headers alike */
    enum ipv6_ext_result r = IPV6_EXT_OTHER;
    static const uint8_t upper[] = {PROTO_TCP, PROTO_UDP, PROTO_ICMPV6};
    for (size_t i = 0; i < sizeof upper && r != IPV6_EXT_OK; i++) {
        struct cursor x = *c;
        nxt = h[6];
        if ((r = ipv6_ext_walk(&x, end, &nxt, upper[i])) == IPV6_EXT_OK)
            *c = x;
    }
    if (r != IPV6_EXT_OK || c->pos > end)
        return false;
    addresses(o, h + 8, h + 24, 16, RDMA_ARRAY_IPV6);
    return transport(o, c, nxt, end - c->pos);
}

/* Ethernet (htype 1) and IPoIB (htype 32: a 20-octet hardware address)
 * resolving IPv4, as tshark words it. */
static bool arp(struct out *o, struct cursor *c)
{
    const uint8_t *h = take(c, 8);
    if (!h || rdma_get_be16(h + 2) != 0x0800 || h[5] != 4)
        return false;
    unsigned hlen = h[4], oper = rdma_get_be16(h + 6);
    const uint8_t *a = take(c, 2 * (hlen + 4u));
    if (!a || (oper != 1 && oper != 2))
        return false;
    const uint8_t *sha = a, *spa = a + hlen, *tpa = a + 2 * hlen + 4;
    out_str(o, "ARP ");
    if (oper == 1) {
        out_str(o, "who has ");
        rdma__out_array(o, tpa, 4, RDMA_ARRAY_IPV4);
        out_str(o, "? tell ");
        rdma__out_array(o, spa, 4, RDMA_ARRAY_IPV4);
    } else {
        rdma__out_array(o, spa, 4, RDMA_ARRAY_IPV4);
        out_str(o, " is at ");
        rdma__out_array(o, sha, hlen, hlen == 6 ? RDMA_ARRAY_MAC : RDMA_ARRAY_HEX);
    }
    return true;
}

bool rdma__format_network(struct out *o, unsigned ethertype, const uint8_t *p, size_t captured)
{
    struct out saved = *o;
    struct cursor c = {p, 0, captured, captured};
    bool known = ethertype == RDMA_ETHERTYPE_IPV4 ? ipv4(o, &c)
                 : ethertype == RDMA_ETHERTYPE_IPV6 ? ipv6(o, &c)
                 : ethertype == ETHERTYPE_ARP ? arp(o, &c)
                                              : false;
    if (!known)
        *o = saved; /* nothing of a half-written line stays */
    return known;
}

bool rdma__format_ipoib(struct out *o, const struct rdma_pkt *pkt)
{
    /* Datagram mode sends on UD, connected mode on RC (RFC 4755), each
     * packet a message of its own; QP0 and QP1 carry management datagrams,
     * never IPoIB. */
    if (pkt->proto != RDMA_PROTO_IB || pkt->bth.destqp <= 1 || !pkt->op ||
        (pkt->op->flags & (RDMA_OPF_SEND | RDMA_OPF_ONLY)) != (RDMA_OPF_SEND | RDMA_OPF_ONLY) ||
        pkt->captured_payload_len < 4 || rdma_get_be16(pkt->payload + 2))
        return false;
    struct out saved = *o;
    out_str(o, " IPoIB ");
    if (rdma__format_network(o, rdma_get_be16(pkt->payload), pkt->payload + 4,
                             pkt->captured_payload_len - 4u))
        return true;
    *o = saved;
    return false;
}
