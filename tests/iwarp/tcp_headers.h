/* tcp_headers.h - the Ethernet, IP and TCP header fields of one segment
 * between two test endpoints, ready for rdma_tcp_encode(): shared by the
 * programs that write iWARP captures and the stream decoder's tests. */
#ifndef TESTS_IWARP_TCP_HEADERS_H
#define TESTS_IWARP_TCP_HEADERS_H

#include <stdbool.h>
#include <string.h>

#include "rdma_iwarp.h"

/* Addresses are 16 bytes with v6, else 4; MACs may be NULL (all zero).
 * Sequence, acknowledgement and flags are left to the caller. */
static inline void tcp_headers(struct rdma_pkt *pkt, struct rdma_tcp *tcp, bool v6,
                               const uint8_t *src_mac, const uint8_t *dst_mac,
                               const uint8_t *src_ip, const uint8_t *dst_ip, uint16_t src_port,
                               uint16_t dst_port)
{
    memset(pkt, 0, sizeof *pkt);
    memset(tcp, 0, sizeof *tcp);
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    if (src_mac)
        memcpy(pkt->eth.src, src_mac, 6);
    if (dst_mac)
        memcpy(pkt->eth.dst, dst_mac, 6);
    if (v6) {
        pkt->present = RDMA_HDR_ETH | RDMA_HDR_IPV6;
        pkt->ipv6.hlim = 64;
        memcpy(pkt->ipv6.src, src_ip, 16);
        memcpy(pkt->ipv6.dst, dst_ip, 16);
    } else {
        pkt->present = RDMA_HDR_ETH | RDMA_HDR_IP;
        pkt->ip.ttl = 64;
        pkt->ip.flags = 2; /* DF */
        memcpy(pkt->ip.src, src_ip, 4);
        memcpy(pkt->ip.dst, dst_ip, 4);
    }
    tcp->srcport = src_port;
    tcp->dstport = dst_port;
    tcp->window_size_value = 65535;
}

#endif
