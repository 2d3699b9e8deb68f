/* endpoint.c - the flow key of a packet: who sent it, to whom, to which QP.
 *
 * Addresses are what the capture identifies hosts by: the IP addresses of a
 * RoCEv2 packet (IPv4 held as IPv4-mapped IPv6, which is also how RoCE
 * writes an IPv4 GID, so CM path GIDs and packet addresses compare equal),
 * the GRH GIDs of RoCEv1 and of routed InfiniBand, or the LRH LIDs of
 * InfiniBand inside a subnet. An iWARP flow is one direction of a TCP
 * connection: its addresses and both ports.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"

static void put_mapped_v4(uint8_t out[16], const uint8_t v4[4])
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, v4, 4);
}

static void put_lid(uint8_t out[16], uint16_t lid)
{
    memset(out, 0, 16);
    out[14] = (uint8_t)(lid >> 8);
    out[15] = (uint8_t)lid;
}

static void key_set(struct flow_key *k, const uint8_t src[16], const uint8_t dst[16],
                    unsigned kind, uint32_t qpn)
{
    memcpy(&k->w[0], src, 16);
    memcpy(&k->w[2], dst, 16);
    k->w[4] = (uint64_t)(qpn & PSN_MASK) | (uint64_t)kind << 24 | (uint64_t)kind << 32;
}

bool flow_key_from_pkt(const struct rdma_pkt *pkt, struct flow_key *k)
{
    uint8_t s[16], d[16];
    unsigned kind = ADDR_IP;
    if (!(pkt->present & RDMA_HDR_BTH))
        return false;
    if (pkt->present & RDMA_HDR_IP) {
        put_mapped_v4(s, pkt->ip.src);
        put_mapped_v4(d, pkt->ip.dst);
    } else if (pkt->present & RDMA_HDR_IPV6) {
        memcpy(s, pkt->ipv6.src, 16);
        memcpy(d, pkt->ipv6.dst, 16);
    } else if (pkt->present & RDMA_HDR_GRH) {
        memcpy(s, pkt->grh.sgid, 16);
        memcpy(d, pkt->grh.dgid, 16);
    } else if (pkt->present & RDMA_HDR_LRH) {
        put_lid(s, pkt->lrh.slid);
        put_lid(d, pkt->lrh.dlid);
        kind = ADDR_LID;
    } else {
        return false;
    }
    key_set(k, s, d, kind, pkt->bth.destqp);
    return true;
}

#define PORT_SHIFT 40

void flow_key_from_tcp(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp, struct flow_key *k)
{
    uint8_t s[16], d[16];
    if (pkt->present & RDMA_HDR_IP) {
        put_mapped_v4(s, pkt->ip.src);
        put_mapped_v4(d, pkt->ip.dst);
    } else {
        memcpy(s, pkt->ipv6.src, 16);
        memcpy(d, pkt->ipv6.dst, 16);
    }
    key_set(k, s, d, ADDR_TCP, tcp->dstport);
    k->w[4] |= (uint64_t)tcp->srcport << PORT_SHIFT;
}

bool flow_key_is_tcp(const struct flow_key *k)
{
    return ((k->w[4] >> 24) & 0xff) == ADDR_TCP;
}

uint16_t flow_key_port(const struct flow_key *k, bool dst)
{
    return (uint16_t)(dst ? k->w[4] : k->w[4] >> PORT_SHIFT);
}

/* The other direction: addresses swapped, and the QPN given, or for a TCP
 * connection the ports swapped. */
void flow_key_reverse(const struct flow_key *k, uint32_t qpn, struct flow_key *out)
{
    struct flow_key r;
    r.w[0] = k->w[2];
    r.w[1] = k->w[3];
    r.w[2] = k->w[0];
    r.w[3] = k->w[1];
    if (flow_key_is_tcp(k))
        r.w[4] = (k->w[4] & ~((uint64_t)0xffff << PORT_SHIFT | 0xffff)) |
                 (uint64_t)flow_key_port(k, true) << PORT_SHIFT | flow_key_port(k, false);
    else
        r.w[4] = (k->w[4] & ~(uint64_t)PSN_MASK) | (qpn & PSN_MASK);
    *out = r;
}

uint32_t flow_key_qpn(const struct flow_key *k)
{
    return (uint32_t)(k->w[4] & PSN_MASK);
}

static void addr_text(const struct flow_key *k, bool dst, bool tcp, char *buf, size_t cap)
{
    uint8_t a[16];
    memcpy(a, &k->w[dst ? 2 : 0], 16);
    if (((k->w[4] >> 24) & 0xff) == ADDR_LID) {
        snprintf(buf, cap, "LID %u", (unsigned)a[14] << 8 | a[15]);
        return;
    }
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(a, mapped, 12)) {
        if (tcp)
            snprintf(buf, cap, "%u.%u.%u.%u:%u", a[12], a[13], a[14], a[15], flow_key_port(k, dst));
        else
            snprintf(buf, cap, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
        return;
    }
    char v6[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, a, v6, sizeof v6))
        v6[0] = 0;
    if (tcp)
        snprintf(buf, cap, "[%s]:%u", v6, flow_key_port(k, dst));
    else
        snprintf(buf, cap, "%s", v6);
}

void addr_format(const struct flow_key *k, bool dst, char *buf, size_t cap)
{
    addr_text(k, dst, flow_key_is_tcp(k), buf, cap);
}

void addr_format_ip(const struct flow_key *k, bool dst, char *buf, size_t cap)
{
    addr_text(k, dst, false, buf, cap);
}

/* Multiply-xorshift over the five words; good enough for addresses that
 * differ in a few bytes and QPNs that count up. */
uint64_t flow_key_hash(const struct flow_key *k)
{
    uint64_t h = 0x243f6a8885a308d3u;
    for (int i = 0; i < 5; i++) {
        h = (h ^ k->w[i]) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    return h;
}
