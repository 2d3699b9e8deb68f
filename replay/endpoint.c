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

#include "internal.h"

/* QPNs are 24 bits (IBA 9.2): the low bits of a key's last word. */
#define QPN_MASK 0xffffffu

/* Keys are built a word at a time, in registers: staging an address byte
 * by byte and reading the key back as words (to hash and compare it, at
 * once) would stall every frame on store-to-load forwarding. */
static void addr_words(uint64_t w[2], const uint8_t a[16])
{
    memcpy(w, a, 16);
}

/* ::ffff:a.b.c.d, the bytes 0 x 10, ff ff, a b c d */
static void mapped_v4_words(uint64_t w[2], const uint8_t v4[4])
{
    uint32_t a;
    memcpy(&a, v4, 4);
    w[0] = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w[1] = 0xffff0000u | (uint64_t)a << 32;
#else
    w[1] = (uint64_t)0xffff << 32 | a;
#endif
}

/* the bytes 0 x 14, then the LID most significant byte first */
static void lid_words(uint64_t w[2], uint16_t lid)
{
    w[0] = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w[1] = (uint64_t)__builtin_bswap16(lid) << 48;
#else
    w[1] = lid;
#endif
}

static uint64_t last_word(unsigned kind, uint32_t qpn)
{
    return (uint64_t)(qpn & QPN_MASK) | (uint64_t)kind << 24 | (uint64_t)kind << 32;
}

bool replay__flow_key_from_pkt(const struct rdma_pkt *pkt, struct rdma_replay_key *k)
{
    unsigned kind = ADDR_IP;
    if (!(pkt->present & RDMA_HDR_BTH))
        return false;
    if (pkt->present & RDMA_HDR_IP) {
        mapped_v4_words(&k->w[0], pkt->ip.src);
        mapped_v4_words(&k->w[2], pkt->ip.dst);
    } else if (pkt->present & RDMA_HDR_IPV6) {
        addr_words(&k->w[0], pkt->ipv6.src);
        addr_words(&k->w[2], pkt->ipv6.dst);
    } else if (pkt->present & RDMA_HDR_GRH) {
        addr_words(&k->w[0], pkt->grh.sgid);
        addr_words(&k->w[2], pkt->grh.dgid);
    } else if (pkt->present & RDMA_HDR_LRH) {
        lid_words(&k->w[0], pkt->lrh.slid);
        lid_words(&k->w[2], pkt->lrh.dlid);
        kind = ADDR_LID;
    } else {
        return false;
    }
    k->w[4] = last_word(kind, pkt->bth.destqp);
    return true;
}

#define PORT_SHIFT 40

static void tcp_key(bool ipv6, const uint8_t *src, const uint8_t *dst, uint16_t srcport,
                    uint16_t dstport, struct rdma_replay_key *k)
{
    if (ipv6) {
        addr_words(&k->w[0], src);
        addr_words(&k->w[2], dst);
    } else {
        mapped_v4_words(&k->w[0], src);
        mapped_v4_words(&k->w[2], dst);
    }
    k->w[4] = last_word(ADDR_TCP, dstport) | (uint64_t)srcport << PORT_SHIFT;
}

void replay__flow_key_from_tcp(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp, struct rdma_replay_key *k)
{
    if (pkt->present & RDMA_HDR_IP)
        tcp_key(false, pkt->ip.src, pkt->ip.dst, tcp->srcport, tcp->dstport, k);
    else
        tcp_key(true, pkt->ipv6.src, pkt->ipv6.dst, tcp->srcport, tcp->dstport, k);
}

void replay__flow_key_from_ends(const struct rdma_tcp_ends *e, struct rdma_replay_key *k)
{
    tcp_key(e->ipv6, e->src, e->dst, e->srcport, e->dstport, k);
}

bool replay__flow_key_is_tcp(const struct rdma_replay_key *k)
{
    return ((k->w[4] >> 24) & 0xff) == ADDR_TCP;
}

uint16_t rdma_replay_key_port(const struct rdma_replay_key *k, bool dst)
{
    return (uint16_t)(dst ? k->w[4] : k->w[4] >> PORT_SHIFT);
}

/* The other direction: addresses swapped, and the QPN given, or for a TCP
 * connection the ports swapped. */
void replay__flow_key_reverse(const struct rdma_replay_key *k, uint32_t qpn, struct rdma_replay_key *out)
{
    struct rdma_replay_key r;
    r.w[0] = k->w[2];
    r.w[1] = k->w[3];
    r.w[2] = k->w[0];
    r.w[3] = k->w[1];
    if (replay__flow_key_is_tcp(k))
        r.w[4] = (k->w[4] & ~((uint64_t)0xffff << PORT_SHIFT | 0xffff)) |
                 (uint64_t)rdma_replay_key_port(k, true) << PORT_SHIFT | rdma_replay_key_port(k, false);
    else
        r.w[4] = (k->w[4] & ~(uint64_t)QPN_MASK) | (qpn & QPN_MASK);
    *out = r;
}

uint32_t rdma_replay_key_qpn(const struct rdma_replay_key *k)
{
    return (uint32_t)(k->w[4] & QPN_MASK);
}

static void addr_text(const struct rdma_replay_key *k, bool dst, bool tcp, char *buf, size_t cap)
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
            snprintf(buf, cap, "%u.%u.%u.%u:%u", a[12], a[13], a[14], a[15], rdma_replay_key_port(k, dst));
        else
            snprintf(buf, cap, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
        return;
    }
    char v6[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, a, v6, sizeof v6))
        v6[0] = 0;
    if (tcp)
        snprintf(buf, cap, "[%s]:%u", v6, rdma_replay_key_port(k, dst));
    else
        snprintf(buf, cap, "%s", v6);
}

void rdma_replay_addr_format(const struct rdma_replay_key *k, bool dst, char *buf, size_t cap)
{
    addr_text(k, dst, replay__flow_key_is_tcp(k), buf, cap);
}

void rdma_replay_addr_format_ip(const struct rdma_replay_key *k, bool dst, char *buf, size_t cap)
{
    addr_text(k, dst, false, buf, cap);
}

/* Three independent multiplies (source, destination, QPN) folded by a
 * fourth, then the high half folded into the low half that picks the
 * slot: a short dependency chain on every frame, and every key bit
 * reaches the slot index. */
uint64_t replay__flow_key_hash(const struct rdma_replay_key *k)
{
    uint64_t s = (k->w[1] * 0x9e3779b97f4a7c15u) ^ k->w[0];
    uint64_t d = (k->w[3] * 0xc2b2ae3d27d4eb4fu) ^ k->w[2];
    uint64_t q = k->w[4] * 0x165667b19e3779f9u;
    uint64_t h = (s ^ (d << 29 | d >> 35) ^ (q << 47 | q >> 17)) * 0x9e3779b97f4a7c15u;
    return h ^ h >> 32;
}
