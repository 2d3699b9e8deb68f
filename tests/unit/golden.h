/* golden.h - hand-written frames, one or more per header the codec knows.
 *
 * The bytes come from the specifications (IBA vol. 1 rel. 1.4 chapters 9,
 * 12 and 13 for the transport, CM and MAD; RoCEv2 annex A17; IEEE 802.1Q
 * and 802.1ad for tags; 802.1Qbb and 802.3 annex 31B for PFC and PAUSE;
 * the pcap-linktype pages for SLL and SLL2). The IPv4 header checksum, ICRC
 * and VCRC are left zero in the tables and computed by golden_frame() with
 * the reference code of unit.c.
 */
#ifndef GOLDEN_H
#define GOLDEN_H

#include "unit.h"

enum golden_id {
    G_WRITE_ONLY,       /* RoCEv2/IPv4 RC RDMA WRITE Only: Ethernet, IPv4, UDP, BTH, RETH */
    G_IPV6_SEND_INV,    /* RoCEv2/IPv6 RC SEND Only with Invalidate: IPv6, IETH */
    G_ROCEV1_CMPSWAP,   /* RoCEv1 RC CmpSwap: GRH, AtomicETH */
    G_IB_ACK,           /* native IB, LNH 2, RC Acknowledge: LRH, AETH */
    G_IB_ATOMIC_ACK,    /* native IB, LNH 3, RC ATOMIC Acknowledge: GRH, AtomicAckETH */
    G_RD_SEND,          /* RD SEND Only: RDETH, DETH */
    G_UD_SEND_IMM,      /* UD SEND Only with Immediate: DETH, ImmDt */
    G_XRC_SEND,         /* XRC SEND Only: XRCETH */
    G_VLAN_WRITE_IMM,   /* 802.1Q tag, RC RDMA WRITE Only with Immediate */
    G_QINQ_ACK,         /* 802.1ad S-tag and 802.1Q C-tag, RC Acknowledge */
    G_SLL_SEND,         /* Linux cooked (113), RC SEND Only */
    G_SLL2_READ,        /* Linux cooked v2 (276), RC RDMA READ Request */
    G_CNP,              /* RoCEv2 CNP */
    G_CM_REQ,           /* UD SEND Only to QP1 carrying CM MADs */
    G_CM_REP,
    G_CM_RTU,
    G_CM_DREQ,
    G_CM_DREP,
    G_PFC,              /* 802.1Qbb priority flow control */
    G_PAUSE,            /* 802.3x PAUSE */
    G_COUNT
};

struct golden {
    const char *name;
    unsigned linktype;
    const uint8_t *bytes; /* checksum and CRC bytes zero */
    size_t len;
    size_t l3;            /* offset of the IP header, RoCEv1 GRH or LRH */
    enum unit_crc crc;
    size_t pad;           /* Ethernet padding after the packet proper */
};

extern const struct golden goldens[G_COUNT];

/* Offset just past the ICRC (where the VCRC or the Ethernet padding starts). */
size_t golden_end(const struct golden *g);

/* Copy the frame into buf (UNIT_FRAME_MAX bytes) with its checksums and
 * CRCs filled in; returns its length. */
size_t golden_frame(enum golden_id id, uint8_t *buf);

#endif
