/* rdma_codec.h - encode and decode RDMA frames: InfiniBand, RoCEv1, RoCEv2, PFC.
 *
 * One public header for librdmacodec. Every fixed-layout header is described
 * once, as an X-macro list of its fields (name, C type, byte offset, bit shift
 * of the field's least significant bit inside the big-endian integer that
 * starts at that byte, width in bits). The decoder, the encoder and the JSON
 * printer are all expanded from those lists, so they cannot disagree.
 * Field names are Wireshark's (infiniband.bth.psn is bth.psn here).
 *
 * The library never allocates: rdma_decode() fills a caller-owned
 * struct rdma_pkt whose pointers refer into the caller's frame buffer.
 */
#ifndef RDMA_CODEC_H
#define RDMA_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- link types (pcap LINKTYPE_* values) ------------------------------ */
#define RDMA_LINKTYPE_ETHERNET 1
#define RDMA_LINKTYPE_LINUX_SLL 113
#define RDMA_LINKTYPE_ERF 197
#define RDMA_LINKTYPE_INFINIBAND 247
#define RDMA_LINKTYPE_LINUX_SLL2 276

#define RDMA_ETHERTYPE_IPV4 0x0800
#define RDMA_ETHERTYPE_VLAN 0x8100
#define RDMA_ETHERTYPE_QINQ 0x88a8
#define RDMA_ETHERTYPE_IPV6 0x86dd
#define RDMA_ETHERTYPE_MAC_CONTROL 0x8808
#define RDMA_ETHERTYPE_ROCEV1 0x8915
#define RDMA_ROCEV2_UDP_PORT 4791
#define RDMA_ERF_TYPE_INFINIBAND 21
#define RDMA_ERF_TYPE_INFINIBAND_LINK 25
#define RDMA_MAC_CONTROL_PAUSE 0x0001
#define RDMA_MAC_CONTROL_PFC 0x0101
#define RDMA_MAD_CLASS_CM 0x07

/* ---- PSN arithmetic ------------------------------------------------------ */
/* PSNs are 24 bits and compare modulo 2^24 (IBA 9.7.1): of two PSNs, the one
 * less than half the space ahead is the later. */
#define RDMA_PSN_MASK 0xffffffu

/* Signed distance a - b in the PSN space: positive when a is after b. */
static inline int32_t rdma_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/* The PSN n after a. */
static inline uint32_t rdma_psn_add(uint32_t a, uint32_t n)
{
    return (a + n) & RDMA_PSN_MASK;
}

/* Array field kinds, which decide how a byte array is printed. */
#define RDMA_ARRAY_MAC 0
#define RDMA_ARRAY_IPV4 1
#define RDMA_ARRAY_IPV6 2 /* also GIDs */
#define RDMA_ARRAY_HEX 3

/* ---- field lists: F(name, type, byte, shift, width), A(name, byte, len, kind) */

#define RDMA_ETH_FIELDS(F, A)                                                  \
    A(dst, 0, 6, RDMA_ARRAY_MAC)                                               \
    A(src, 6, 6, RDMA_ARRAY_MAC)                                               \
    F(type, uint16_t, 12, 0, 16)

/* One 802.1Q/802.1ad tag: the TCI and the EtherType that follows it. */
#define RDMA_VLAN_FIELDS(F, A)                                                 \
    F(priority, uint8_t, 0, 13, 3)                                             \
    F(dei, uint8_t, 0, 12, 1)                                                  \
    F(id, uint16_t, 0, 0, 12)                                                  \
    F(etype, uint16_t, 2, 0, 16)

#define RDMA_SLL_FIELDS(F, A)                                                  \
    F(pkttype, uint16_t, 0, 0, 16)                                             \
    F(hatype, uint16_t, 2, 0, 16)                                              \
    F(halen, uint16_t, 4, 0, 16)                                               \
    A(src, 6, 8, RDMA_ARRAY_MAC)                                               \
    F(etype, uint16_t, 14, 0, 16)

#define RDMA_SLL2_FIELDS(F, A)                                                 \
    F(etype, uint16_t, 0, 0, 16)                                               \
    F(reserved, uint16_t, 2, 0, 16)                                            \
    F(ifindex, uint32_t, 4, 0, 32)                                             \
    F(hatype, uint16_t, 8, 0, 16)                                              \
    F(pkttype, uint8_t, 10, 0, 8)                                              \
    F(halen, uint8_t, 11, 0, 8)                                                \
    A(src, 12, 8, RDMA_ARRAY_MAC)

/* Endace ERF record header; the timestamp is little-endian, kept as bytes. */
#define RDMA_ERF_FIELDS(F, A)                                                  \
    A(ts, 0, 8, RDMA_ARRAY_HEX)                                                \
    F(type, uint8_t, 8, 0, 8)                                                  \
    F(flags, uint8_t, 9, 0, 8)                                                 \
    F(rlen, uint16_t, 10, 0, 16)                                               \
    F(lctr, uint16_t, 12, 0, 16)                                               \
    F(wlen, uint16_t, 14, 0, 16)

#define RDMA_IP_FIELDS(F, A)                                                   \
    F(version, uint8_t, 0, 4, 4)                                               \
    F(ihl, uint8_t, 0, 0, 4)                                                   \
    F(dsfield_dscp, uint8_t, 1, 2, 6)                                          \
    F(dsfield_ecn, uint8_t, 1, 0, 2)                                           \
    F(len, uint16_t, 2, 0, 16)                                                 \
    F(id, uint16_t, 4, 0, 16)                                                  \
    F(flags, uint8_t, 6, 13, 3)                                                \
    F(frag_offset, uint16_t, 6, 0, 13)                                         \
    F(ttl, uint8_t, 8, 0, 8)                                                   \
    F(proto, uint8_t, 9, 0, 8)                                                 \
    F(checksum, uint16_t, 10, 0, 16)                                           \
    A(src, 12, 4, RDMA_ARRAY_IPV4)                                             \
    A(dst, 16, 4, RDMA_ARRAY_IPV4)

#define RDMA_IPV6_FIELDS(F, A)                                                 \
    F(version, uint8_t, 0, 28, 4)                                              \
    F(tclass, uint8_t, 0, 20, 8)                                               \
    F(flow, uint32_t, 1, 0, 20)                                                \
    F(plen, uint16_t, 4, 0, 16)                                                \
    F(nxt, uint8_t, 6, 0, 8)                                                   \
    F(hlim, uint8_t, 7, 0, 8)                                                  \
    A(src, 8, 16, RDMA_ARRAY_IPV6)                                             \
    A(dst, 24, 16, RDMA_ARRAY_IPV6)

#define RDMA_UDP_FIELDS(F, A)                                                  \
    F(srcport, uint16_t, 0, 0, 16)                                             \
    F(dstport, uint16_t, 2, 0, 16)                                             \
    F(length, uint16_t, 4, 0, 16)                                              \
    F(checksum, uint16_t, 6, 0, 16)

/* InfiniBand Architecture Specification vol. 1, release 1.4, chapter 7 and 9. */
#define RDMA_LRH_FIELDS(F, A)                                                  \
    F(vl, uint8_t, 0, 4, 4)                                                    \
    F(lver, uint8_t, 0, 0, 4)                                                  \
    F(sl, uint8_t, 1, 4, 4)                                                    \
    F(reserved2, uint8_t, 1, 2, 2)                                             \
    F(lnh, uint8_t, 1, 0, 2)                                                   \
    F(dlid, uint16_t, 2, 0, 16)                                                \
    F(reserved5, uint8_t, 4, 11, 5)                                            \
    F(pktlen, uint16_t, 4, 0, 11)                                              \
    F(slid, uint16_t, 6, 0, 16)

/* An InfiniBand flow-control packet (IBA vol. 1, 7.9.4), a link packet:
 * operand (0 normal, 1 initialization), flow control total blocks sent,
 * virtual lane, flow control credit limit, and the link packet CRC. */
#define RDMA_IBFC_FIELDS(F, A)                                                 \
    F(op, uint8_t, 0, 4, 4)                                                    \
    F(fctbs, uint16_t, 0, 0, 12)                                               \
    F(vl, uint8_t, 2, 4, 4)                                                    \
    F(fccl, uint16_t, 2, 0, 12)                                                \
    F(lpcrc, uint16_t, 4, 0, 16)

#define RDMA_GRH_FIELDS(F, A)                                                  \
    F(ipver, uint8_t, 0, 28, 4)                                                \
    F(tclass, uint8_t, 0, 20, 8)                                               \
    F(flowlabel, uint32_t, 1, 0, 20)                                           \
    F(paylen, uint16_t, 4, 0, 16)                                              \
    F(nxthdr, uint8_t, 6, 0, 8)                                                \
    F(hoplmt, uint8_t, 7, 0, 8)                                                \
    A(sgid, 8, 16, RDMA_ARRAY_IPV6)                                            \
    A(dgid, 24, 16, RDMA_ARRAY_IPV6)

#define RDMA_BTH_FIELDS(F, A)                                                  \
    F(opcode, uint8_t, 0, 0, 8)                                                \
    F(se, uint8_t, 1, 7, 1)                                                    \
    F(m, uint8_t, 1, 6, 1)                                                     \
    F(padcnt, uint8_t, 1, 4, 2)                                                \
    F(tver, uint8_t, 1, 0, 4)                                                  \
    F(p_key, uint16_t, 2, 0, 16)                                               \
    F(fecn, uint8_t, 4, 7, 1)                                                  \
    F(becn, uint8_t, 4, 6, 1)                                                  \
    F(reserved6, uint8_t, 4, 0, 6)                                             \
    F(destqp, uint32_t, 5, 0, 24)                                              \
    F(a, uint8_t, 8, 7, 1)                                                     \
    F(reserved7, uint8_t, 8, 0, 7)                                             \
    F(psn, uint32_t, 9, 0, 24)

#define RDMA_RDETH_FIELDS(F, A)                                                \
    F(reserved, uint8_t, 0, 0, 8)                                              \
    F(eecnxt, uint32_t, 1, 0, 24)

#define RDMA_DETH_FIELDS(F, A)                                                 \
    F(q_key, uint32_t, 0, 0, 32)                                               \
    F(reserved, uint8_t, 4, 0, 8)                                              \
    F(srcqp, uint32_t, 5, 0, 24)

#define RDMA_XRCETH_FIELDS(F, A)                                               \
    F(reserved, uint8_t, 0, 0, 8)                                              \
    F(xrcsrq, uint32_t, 1, 0, 24)

#define RDMA_RETH_FIELDS(F, A)                                                 \
    F(va, uint64_t, 0, 0, 64)                                                  \
    F(r_key, uint32_t, 8, 0, 32)                                               \
    F(dmalen, uint32_t, 12, 0, 32)

#define RDMA_ATOMICETH_FIELDS(F, A)                                            \
    F(va, uint64_t, 0, 0, 64)                                                  \
    F(r_key, uint32_t, 8, 0, 32)                                               \
    F(swapdt, uint64_t, 12, 0, 64)                                             \
    F(cmpdt, uint64_t, 20, 0, 64)

/* The syndrome's parts are listed after it: they overlay its bits. */
#define RDMA_AETH_FIELDS(F, A)                                                 \
    F(syndrome, uint8_t, 0, 0, 8)                                              \
    F(msn, uint32_t, 1, 0, 24)

#define RDMA_ATOMICACKETH_FIELDS(F, A) F(origremdt, uint64_t, 0, 0, 64)

#define RDMA_IMMDT_FIELDS(F, A) F(imm, uint32_t, 0, 0, 32)

#define RDMA_IETH_FIELDS(F, A) F(r_key, uint32_t, 0, 0, 32)

/* MAD common header (IBA 13.4.2). */
#define RDMA_MAD_FIELDS(F, A)                                                  \
    F(baseversion, uint8_t, 0, 0, 8)                                           \
    F(mgmtclass, uint8_t, 1, 0, 8)                                             \
    F(classversion, uint8_t, 2, 0, 8)                                          \
    F(method, uint8_t, 3, 0, 8)                                                \
    F(status, uint16_t, 4, 0, 16)                                              \
    F(classspecific, uint16_t, 6, 0, 16)                                       \
    F(transactionid, uint64_t, 8, 0, 64)                                       \
    F(attributeid, uint16_t, 16, 0, 16)                                        \
    F(reserved, uint16_t, 18, 0, 16)                                           \
    F(attributemodifier, uint32_t, 20, 0, 32)

/* Communication Manager messages (IBA 12.6), offsets from the MAD data. */
#define RDMA_CM_REQ_FIELDS(F, A)                                               \
    F(localcommid, uint32_t, 0, 0, 32)                                         \
    F(serviceid, uint64_t, 8, 0, 64)                                           \
    F(localcaguid, uint64_t, 16, 0, 64)                                        \
    F(localqkey, uint32_t, 28, 0, 32)                                          \
    F(localqpn, uint32_t, 32, 8, 24)                                           \
    F(responderres, uint8_t, 35, 0, 8)                                         \
    F(localeecn, uint32_t, 36, 8, 24)                                          \
    F(initdepth, uint8_t, 39, 0, 8)                                            \
    F(remoteeecn, uint32_t, 40, 8, 24)                                         \
    F(remoteresptout, uint8_t, 43, 3, 5)                                       \
    F(transpsvctype, uint8_t, 43, 1, 2)                                        \
    F(e2eflowctrl, uint8_t, 43, 0, 1)                                          \
    F(startpsn, uint32_t, 44, 8, 24)                                           \
    F(localresptout, uint8_t, 47, 3, 5)                                        \
    F(retrcount, uint8_t, 47, 0, 3)                                            \
    F(pkey, uint16_t, 48, 0, 16)                                               \
    F(pppmtu, uint8_t, 50, 4, 4)                                               \
    F(rdcexist, uint8_t, 50, 3, 1)                                             \
    F(rnrretrcount, uint8_t, 50, 0, 3)                                         \
    F(maxcmretr, uint8_t, 51, 4, 4)                                            \
    F(srq, uint8_t, 51, 3, 1)                                                  \
    F(ext_transport, uint8_t, 51, 0, 3)                                        \
    F(prim_locallid, uint16_t, 52, 0, 16)                                      \
    F(prim_remotelid, uint16_t, 54, 0, 16)                                     \
    A(prim_localgid, 56, 16, RDMA_ARRAY_IPV6)                                  \
    A(prim_remotegid, 72, 16, RDMA_ARRAY_IPV6)

#define RDMA_CM_REP_FIELDS(F, A)                                               \
    F(localcommid, uint32_t, 0, 0, 32)                                         \
    F(remotecommid, uint32_t, 4, 0, 32)                                        \
    F(localqkey, uint32_t, 8, 0, 32)                                           \
    F(localqpn, uint32_t, 12, 8, 24)                                           \
    F(localeecn, uint32_t, 16, 8, 24)                                          \
    F(startpsn, uint32_t, 20, 8, 24)                                           \
    F(respres, uint8_t, 24, 0, 8)                                              \
    F(initdepth, uint8_t, 25, 0, 8)                                            \
    F(tgtackdelay, uint8_t, 26, 3, 5)                                          \
    F(failoveracc, uint8_t, 26, 1, 2)                                          \
    F(e2eflowctrl, uint8_t, 26, 0, 1)                                          \
    F(rnrretrcount, uint8_t, 27, 5, 3)                                         \
    F(srq, uint8_t, 27, 4, 1)                                                  \
    F(localcaguid, uint64_t, 28, 0, 64)

#define RDMA_CM_COMMIDS_FIELDS(F, A)                                           \
    F(localcommid, uint32_t, 0, 0, 32)                                         \
    F(remotecommid, uint32_t, 4, 0, 32)

#define RDMA_CM_DREQ_FIELDS(F, A)                                              \
    RDMA_CM_COMMIDS_FIELDS(F, A)                                               \
    F(remoteqpneecn, uint32_t, 8, 8, 24)

#define RDMA_CM_REJ_FIELDS(F, A)                                               \
    RDMA_CM_COMMIDS_FIELDS(F, A)                                               \
    F(msgrej, uint8_t, 8, 6, 2)                                                \
    F(rejinfolen, uint8_t, 9, 1, 7)                                            \
    F(reason, uint16_t, 10, 0, 16)

/* ---- struct generation ------------------------------------------------- */
#define RDMA__STRUCT_FIELD(name, type, byte, shift, width) type name;
#define RDMA__STRUCT_ARRAY(name, byte, len, kind) uint8_t name[len];
#define RDMA__DEFINE_HEADER(tag, LIST)                                         \
    struct tag {                                                               \
        LIST(RDMA__STRUCT_FIELD, RDMA__STRUCT_ARRAY)                           \
    }

RDMA__DEFINE_HEADER(rdma_eth, RDMA_ETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_vlan, RDMA_VLAN_FIELDS);
RDMA__DEFINE_HEADER(rdma_sll, RDMA_SLL_FIELDS);
RDMA__DEFINE_HEADER(rdma_sll2, RDMA_SLL2_FIELDS);
RDMA__DEFINE_HEADER(rdma_erf, RDMA_ERF_FIELDS);
RDMA__DEFINE_HEADER(rdma_ip, RDMA_IP_FIELDS);
RDMA__DEFINE_HEADER(rdma_ipv6, RDMA_IPV6_FIELDS);
RDMA__DEFINE_HEADER(rdma_udp, RDMA_UDP_FIELDS);
RDMA__DEFINE_HEADER(rdma_ibfc, RDMA_IBFC_FIELDS);
RDMA__DEFINE_HEADER(rdma_lrh, RDMA_LRH_FIELDS);
RDMA__DEFINE_HEADER(rdma_grh, RDMA_GRH_FIELDS);
RDMA__DEFINE_HEADER(rdma_bth, RDMA_BTH_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdeth, RDMA_RDETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_deth, RDMA_DETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_xrceth, RDMA_XRCETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_reth, RDMA_RETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_atomiceth, RDMA_ATOMICETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_aeth, RDMA_AETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_atomicacketh, RDMA_ATOMICACKETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_immdt, RDMA_IMMDT_FIELDS);
RDMA__DEFINE_HEADER(rdma_ieth, RDMA_IETH_FIELDS);
RDMA__DEFINE_HEADER(rdma_mad, RDMA_MAD_FIELDS);
RDMA__DEFINE_HEADER(rdma_cm_req, RDMA_CM_REQ_FIELDS);
RDMA__DEFINE_HEADER(rdma_cm_rep, RDMA_CM_REP_FIELDS);
RDMA__DEFINE_HEADER(rdma_cm_commids, RDMA_CM_COMMIDS_FIELDS);
RDMA__DEFINE_HEADER(rdma_cm_dreq, RDMA_CM_DREQ_FIELDS);
RDMA__DEFINE_HEADER(rdma_cm_rej, RDMA_CM_REJ_FIELDS);

/* 802.1Qbb PFC and 802.3x PAUSE (MAC Control, EtherType 0x8808). For PAUSE
 * only pause_time[0] is meaningful and enbv is 0. */
struct rdma_pfc {
    uint16_t opcode;
    uint16_t enbv;
    uint16_t pause_time[8];
};

/* Every CM message, once (IBA 12.6, attribute IDs from table 104): name,
 * attribute ID, member of struct rdma_cm's union, its struct and its field
 * list. The enum, the union, the names, the decoder, the encoder and the
 * JSON printer are all expanded from it. */
#define RDMA_CM_MESSAGES(X)                                                    \
    X(REQ, 0x0010, req, rdma_cm_req, RDMA_CM_REQ_FIELDS)                       \
    X(MRA, 0x0011, mra, rdma_cm_commids, RDMA_CM_COMMIDS_FIELDS)               \
    X(REJ, 0x0012, rej, rdma_cm_rej, RDMA_CM_REJ_FIELDS)                       \
    X(REP, 0x0013, rep, rdma_cm_rep, RDMA_CM_REP_FIELDS)                       \
    X(RTU, 0x0014, rtu, rdma_cm_commids, RDMA_CM_COMMIDS_FIELDS)               \
    X(DREQ, 0x0015, dreq, rdma_cm_dreq, RDMA_CM_DREQ_FIELDS)                   \
    X(DREP, 0x0016, drep, rdma_cm_commids, RDMA_CM_COMMIDS_FIELDS)

enum rdma_cm_attr {
#define RDMA__CM_ENUM(name, id, member, type, FIELDS) RDMA_CM_##name = id,
    RDMA_CM_MESSAGES(RDMA__CM_ENUM)
#undef RDMA__CM_ENUM
};

struct rdma_cm {
    uint16_t attr; /* enum rdma_cm_attr */
    union {
#define RDMA__CM_MEMBER(name, id, member, type, FIELDS) struct type member;
        RDMA_CM_MESSAGES(RDMA__CM_MEMBER)
#undef RDMA__CM_MEMBER
    } u;
};

/* ---- the header registry ------------------------------------------------
 * H(member, BIT_NAME, wire size). The order is the order headers appear on
 * the wire; for the InfiniBand extended transport headers it is the order
 * the specification fixes after the BTH. */
#define RDMA_HEADERS(H)                                                        \
    H(erf, ERF, 16)                                                            \
    H(sll, SLL, 16)                                                            \
    H(sll2, SLL2, 20)                                                          \
    H(eth, ETH, 14)                                                            \
    H(pfc, PFC, 20)                                                            \
    H(ip, IP, 20)                                                              \
    H(ipv6, IPV6, 40)                                                          \
    H(udp, UDP, 8)                                                             \
    H(ibfc, IBFC, 6)                                                           \
    H(lrh, LRH, 8)                                                             \
    H(grh, GRH, 40)                                                            \
    H(bth, BTH, 12)                                                            \
    H(rdeth, RDETH, 4)                                                         \
    H(deth, DETH, 8)                                                           \
    H(xrceth, XRCETH, 4)                                                       \
    H(reth, RETH, 16)                                                          \
    H(atomiceth, ATOMICETH, 28)                                                \
    H(aeth, AETH, 4)                                                           \
    H(atomicacketh, ATOMICACKETH, 8)                                           \
    H(immdt, IMMDT, 4)                                                         \
    H(ieth, IETH, 4)                                                           \
    H(mad, MAD, 24)                                                            \
    H(cm, CM, 0)

enum rdma_header_index {
#define RDMA__HDR_INDEX(member, BIT, size) RDMA_HDRI_##BIT,
    RDMA_HEADERS(RDMA__HDR_INDEX)
#undef RDMA__HDR_INDEX
    RDMA_HDRI_COUNT
};

enum rdma_header_bit {
#define RDMA__HDR_BIT(member, BIT, size) RDMA_HDR_##BIT = 1u << RDMA_HDRI_##BIT,
    RDMA_HEADERS(RDMA__HDR_BIT)
#undef RDMA__HDR_BIT
};

enum rdma_header_size {
#define RDMA__HDR_SIZE(member, BIT, size) RDMA_HDR_SIZE_##BIT = size,
    RDMA_HEADERS(RDMA__HDR_SIZE)
#undef RDMA__HDR_SIZE
};

/* The extended transport headers, in wire order. */
#define RDMA_HDR_EXT_MASK                                                      \
    (RDMA_HDR_RDETH | RDMA_HDR_DETH | RDMA_HDR_XRCETH | RDMA_HDR_RETH |        \
     RDMA_HDR_ATOMICETH | RDMA_HDR_AETH | RDMA_HDR_ATOMICACKETH |              \
     RDMA_HDR_IMMDT | RDMA_HDR_IETH)

/* ---- opcodes ---------------------------------------------------------- */
#define RDMA_TRANSPORTS(X)                                                     \
    X(RC, 0x00)                                                                \
    X(UC, 0x20)                                                                \
    X(RD, 0x40)                                                                \
    X(UD, 0x60)                                                                \
    X(CNP, 0x80)                                                               \
    X(XRC, 0xa0)

enum rdma_transport {
#define RDMA__TR_ENUM(name, base) RDMA_TRANSPORT_##name,
    RDMA_TRANSPORTS(RDMA__TR_ENUM)
#undef RDMA__TR_ENUM
    RDMA_TRANSPORT_COUNT
};

/* What an opcode does, beyond which headers it carries. */
enum rdma_opcode_flag {
    RDMA_OPF_PAYLOAD = 1u << 0,  /* may carry payload */
    RDMA_OPF_REQUEST = 1u << 1,  /* requester to responder */
    RDMA_OPF_RESPONSE = 1u << 2, /* responder to requester */
    RDMA_OPF_FIRST = 1u << 3,    /* first packet of a message */
    RDMA_OPF_MIDDLE = 1u << 4,
    RDMA_OPF_LAST = 1u << 5,
    RDMA_OPF_ONLY = RDMA_OPF_FIRST | RDMA_OPF_LAST,
    RDMA_OPF_SEND = 1u << 6,
    RDMA_OPF_WRITE = 1u << 7,
    RDMA_OPF_READ = 1u << 8,
    RDMA_OPF_ATOMIC = 1u << 9,
    RDMA_OPF_ACK = 1u << 10,
    RDMA_OPF_IMM = 1u << 11,
    RDMA_OPF_INV = 1u << 12,
    RDMA_OPF_CNP = 1u << 13,
};

struct rdma_opcode_info {
    const char *name;         /* "RC RDMA WRITE Only"; NULL: reserved opcode */
    const char *op;           /* the operation without transport: "RDMA WRITE Only" */
    uint8_t transport;        /* enum rdma_transport */
    uint32_t headers;         /* RDMA_HDR_* extended headers after the BTH */
    uint32_t flags;           /* enum rdma_opcode_flag */
    uint16_t fixed_payload;   /* payload bytes that must follow (CNP: 16), else 0 */
};

/* Indexed by BTH opcode; entries with name == NULL are reserved. */
extern const struct rdma_opcode_info rdma_opcodes[256];
const char *rdma_transport_name(unsigned transport);

/* ---- AETH syndrome (IBA 9.7.5.1) -------------------------------------- */
#define RDMA_AETH_KINDS(X)                                                     \
    X(ACK, 0, "ACK")                                                           \
    X(RNR_NAK, 1, "RNR NAK")                                                   \
    X(RESERVED, 2, "Reserved")                                                 \
    X(NAK, 3, "NAK")

enum rdma_aeth_kind {
#define RDMA__AK_ENUM(name, v, str) RDMA_AETH_##name = v,
    RDMA_AETH_KINDS(RDMA__AK_ENUM)
#undef RDMA__AK_ENUM
};

#define RDMA_NAK_CODES(X)                                                      \
    X(PSN_SEQUENCE_ERROR, 0, "PSN sequence error")                             \
    X(INVALID_REQUEST, 1, "invalid request")                                   \
    X(REMOTE_ACCESS_ERROR, 2, "remote access error")                           \
    X(REMOTE_OPERATIONAL_ERROR, 3, "remote operational error")                 \
    X(INVALID_RD_REQUEST, 4, "invalid RD request")

enum rdma_nak_code {
#define RDMA__NAK_ENUM(name, v, str) RDMA_NAK_##name = v,
    RDMA_NAK_CODES(RDMA__NAK_ENUM)
#undef RDMA__NAK_ENUM
};

static inline unsigned rdma_aeth_kind(uint8_t syndrome) { return (syndrome >> 5) & 3; }
static inline unsigned rdma_aeth_value(uint8_t syndrome) { return syndrome & 0x1f; }
const char *rdma_aeth_kind_name(unsigned kind);
const char *rdma_nak_code_name(unsigned code);        /* NULL if reserved */
/* RNR NAK timer field to its delay in microseconds (IBA table 45). */
uint32_t rdma_rnr_timer_us(unsigned timer);
const char *rdma_cm_message_name(uint16_t attr);      /* NULL if not CM */

/* ---- decoding ----------------------------------------------------------- */
#define RDMA_STATUSES(X)                                                       \
    X(OK, "ok")                                                                \
    X(TRUNCATED, "truncated")                                                  \
    X(MALFORMED, "malformed")                                                  \
    X(BAD_CHECKSUM, "bad checksum")                                            \
    X(BAD_ICRC, "bad ICRC")                                                    \
    X(BAD_VCRC, "bad VCRC")                                                    \
    X(UNSUPPORTED, "unsupported")

enum rdma_status {
#define RDMA__ST_ENUM(name, str) RDMA_##name,
    RDMA_STATUSES(RDMA__ST_ENUM)
#undef RDMA__ST_ENUM
};
const char *rdma_status_name(enum rdma_status st);

#define RDMA_PROTOS(X)                                                         \
    X(OTHER, "other")                                                          \
    X(ROCEV1, "RoCEv1")                                                        \
    X(ROCEV2, "RoCEv2")                                                        \
    X(IB, "IB")                                                                \
    X(PFC, "PFC")                                                              \
    X(PAUSE, "PAUSE")                                                          \
    X(IWARP, "iWARP")

enum rdma_proto {
#define RDMA__PR_ENUM(name, str) RDMA_PROTO_##name,
    RDMA_PROTOS(RDMA__PR_ENUM)
#undef RDMA__PR_ENUM
};
const char *rdma_proto_name(enum rdma_proto p);

/* A CRC found in the frame and whether it matched the one computed. */
struct rdma_crc {
    uint32_t value;    /* as carried (read least-significant byte first) */
    uint32_t computed;
    bool present;      /* the frame carries this CRC */
    bool ok;
};

struct rdma_decode_config {
    uint16_t rocev2_port; /* UDP destination port of RoCEv2, 4791 by default */
    bool verify_crc;      /* compute ICRC/VCRC; true by default */
};
void rdma_decode_config_init(struct rdma_decode_config *cfg);

#define RDMA_MAX_VLAN 20 /* tags decoded: as many as tshark 4.0 decodes RoCE behind */

/* ---- IOAM trace ---------------------------------------------------------
 * An IOAM Pre-allocated Trace Option (RFC 9197 4.4) in an IPv6 Hop-by-Hop
 * Options header (RFC 9486 3), the way switches hand in-band telemetry to
 * hosts (HPCC): the sender allocates room for `slots` nodes, each node on
 * the path writes its data into the last free slot and lowers RemainingLen,
 * so on the wire the last node's data comes first.
 *
 *   HBH:   | next | len | PadN 1,0 | 0x31 | opt len | reserved | IOAM type 0 |
 *   trace: | Namespace-ID (16) | NodeLen (5) | Flags (4) | RemainingLen (7) |
 *          | IOAM-Trace-Type (24)                         | reserved (8)     |
 *          | free space: RemainingLen x 4 octets | node data, last node first |
 *          [ PadN 1,2,0,0 to a multiple of 8 octets ]
 *
 * The PadN before the option puts it at 4n, as RFC 9486 3 asks. Extension
 * headers lie outside the RoCEv2 ICRC (rdma_icrc_rocev2_ipv6_ext), so a
 * node may write them without breaking it. The data of each node is, for
 * each trace-type bit set in order, the fields below (RFC 9197 4.4.2). */
#define RDMA_IOAM_OPTION 0x31     /* IPv6 option type: skip if unknown, may change en route */
#define RDMA_IOAM_PREALLOC 0      /* IOAM Option-Type: Pre-allocated Trace */
#define RDMA_IOAM_MAX_NODES 8     /* slots a decoded trace may have */
#define RDMA_IOAM_FLAG_OVERFLOW 8 /* a node found no free slot */
/* Namespaces of the simulator's HPCC telemetry (0x8000-0xffff are for
 * private use, RFC 9197 7.3): a trace requests collect (switches add their
 * node data), an acknowledgement echoes (RemainingLen 0: nobody adds). */
#define RDMA_IOAM_NS_HPCC 0x8001
#define RDMA_IOAM_NS_HPCC_ECHO 0x8002

#define RDMA_IOAM_FIELDS(F)                                                        F(hop_lim) F(node_id) F(ingress_if) F(egress_if) F(ts_sec) F(ts_frac)          F(transit_delay) F(ns_data) F(queue_depth) F(checksum_comp) F(hop_lim_wide)     F(node_id_wide) F(ingress_if_wide) F(egress_if_wide) F(ns_data_wide)           F(buffer_occupancy)
enum rdma_ioam_field {
#define IOAM_ENUM_(name) RDMA_IOAM_##name,
    RDMA_IOAM_FIELDS(IOAM_ENUM_)
#undef IOAM_ENUM_
    RDMA_IOAM_NFIELDS
};
extern const char *const rdma_ioam_field_names[RDMA_IOAM_NFIELDS];
/* Trace-type bit n (RFC 9197 numbering: bit 0 is the most significant of
 * the 24) as a mask. */
#define RDMA_IOAM_BIT(n) (UINT32_C(1) << (23 - (n)))

struct rdma_ioam_node {
    uint64_t v[RDMA_IOAM_NFIELDS]; /* those of the trace type's bits */
};

/* The filled nodes are read with rdma_ioam_node_get; node 0 is the last
 * node's data. Decoding leaves them in the frame (`data`), as the payload;
 * the encoder writes `node` when set, else copies `data`. */
struct rdma_ioam {
    bool present;        /* a pre-allocated trace was found (decode) or is wanted (encode) */
    bool nodes_decoded;  /* false when the trace type has bits this codec does not know */
    uint16_t ns;         /* Namespace-ID */
    uint8_t node_len;    /* 4-octet units (decode; the encoder derives it) */
    uint8_t flags;
    uint8_t remaining;   /* RemainingLen, 4-octet units (decode; derived) */
    uint8_t slots;       /* nodes the trace has room for, filled or free */
    uint8_t nnodes;      /* filled */
    uint32_t trace_type;
    uint16_t at;         /* decode: offset of the trace's Namespace-ID in the frame */
    const uint8_t *data; /* decode: the filled nodes' octets */
    const struct rdma_ioam_node *node; /* encode: nnodes nodes, or NULL */
};
/* Node i of a decoded (or to be encoded) trace. */
void rdma_ioam_node_get(const struct rdma_ioam *t, unsigned i, struct rdma_ioam_node *n);

/* Octets one node writes for a trace type, or 0 when the type has a bit
 * this codec cannot size (undefined bits, the opaque state snapshot). */
uint32_t rdma_ioam_node_bytes(uint32_t trace_type);
/* Octets of the Hop-by-Hop header carrying trace t (0 if it cannot be). */
uint32_t rdma_ioam_hbh_bytes(const struct rdma_ioam *t);
/* Offset of the pre-allocated trace (its Namespace-ID) in an Ethernet
 * frame, in the Hop-by-Hop header right after an IPv6 header; 0 if none. */
size_t rdma_ioam_find(const uint8_t *frame, size_t len);
/* A node on the path adds its data to the trace at `at` in the frame, in
 * place: into the last free slot, lowering RemainingLen. Returns false,
 * setting the overflow flag, when no slot is free. */
bool rdma_ioam_push(uint8_t *frame, size_t len, size_t at, const struct rdma_ioam_node *n);

struct rdma_pkt {
    uint32_t present; /* RDMA_HDR_* bits of the headers decoded below */
    uint8_t proto;    /* enum rdma_proto */
    uint8_t nvlan;
    uint8_t status;   /* enum rdma_status: the first problem found */
    const char *reason; /* static text saying what is wrong, or NULL */
    uint16_t linktype;
    uint16_t ethertype; /* the innermost EtherType, when there is one */

    struct rdma_erf erf;
    struct rdma_sll sll;
    struct rdma_sll2 sll2;
    struct rdma_eth eth;
    struct rdma_vlan vlan[RDMA_MAX_VLAN];
    struct rdma_pfc pfc;
    struct rdma_ip ip;
    struct rdma_ipv6 ipv6;
    struct rdma_udp udp;
    struct rdma_ibfc ibfc;
    struct rdma_lrh lrh;
    struct rdma_grh grh;
    struct rdma_bth bth;
    struct rdma_rdeth rdeth;
    struct rdma_deth deth;
    struct rdma_xrceth xrceth;
    struct rdma_reth reth;
    struct rdma_atomiceth atomiceth;
    struct rdma_aeth aeth;
    struct rdma_atomicacketh atomicacketh;
    struct rdma_immdt immdt;
    struct rdma_ieth ieth;
    struct rdma_mad mad;
    struct rdma_cm cm;
    struct rdma_ioam ioam; /* IPv6 only; see ioam.present */

    uint8_t ip_options_len;      /* IPv4 option bytes after the fixed 20 */
    const uint8_t *ip_options;
    const uint8_t *l3;           /* the network header after the EtherType, or NULL */
    uint32_t l3_len;             /* bytes of it and after it captured */
    bool ip_checksum_ok;         /* IPv4 header checksum (when IP present) */
    const struct rdma_opcode_info *op; /* rdma_opcodes[bth.opcode] */
    const uint8_t *payload;      /* transport payload (after ext headers) */
    uint32_t payload_len;        /* without pad, ICRC and VCRC */
    uint32_t captured_payload_len; /* how much of it the capture holds */
    uint32_t frame_len;          /* bytes of the frame as captured */
    uint32_t wire_len;           /* bytes of the frame on the wire */
    /* Bytes of a capture pseudo-header at the start of frame_len and
     * wire_len (an ERF record header and its extensions), which are not
     * the packet's: tshark's frame.len leaves them out. */
    uint32_t pseudo_len;
    struct rdma_crc icrc;
    struct rdma_crc vcrc;  /* of a flow-control packet: its LPCRC, the same CRC-16 */
};

/* Whether the frame ended early only because the capture kept fewer
 * bytes than the wire had (its snap length): not damage, and no CRC can
 * be checked. pkt->reason says in which header or the payload it ended. */
static inline bool rdma_pkt_snapped(const struct rdma_pkt *pkt)
{
    return pkt->status == RDMA_TRUNCATED && pkt->frame_len < pkt->wire_len;
}

/* Whether rdma_decode() knows the pcap link type. */
bool rdma_linktype_supported(unsigned linktype);

/* Decode one frame of the given pcap link type. Returns pkt->status. Headers
 * decoded before a problem stay valid in pkt (see pkt->present). */
enum rdma_status rdma_decode(const struct rdma_decode_config *cfg, unsigned linktype,
                             const uint8_t *frame, size_t caplen, size_t wirelen,
                             struct rdma_pkt *pkt);

/* ---- encoding ------------------------------------------------------------
 * rdma_encode() builds the frame described by pkt: the headers named in
 * pkt->present (link layer from pkt->linktype), then pkt->payload_len bytes
 * of pkt->payload, pad, ICRC and VCRC. It computes every length field
 * (IPv4 total length, IPv6 payload length, UDP length, LRH packet length,
 * GRH payload length, BTH pad count), the IPv4 header checksum, the UDP
 * checksum (left 0 when udp.checksum is 0, as RoCEv2 allows, computed
 * otherwise), ICRC and VCRC. Ethernet frames are padded to 60 bytes.
 * Returns RDMA_OK and the length in *out_len, RDMA_TRUNCATED when out_cap is
 * too small, RDMA_MALFORMED when the headers do not make a frame. */
enum rdma_status rdma_encode(const struct rdma_pkt *pkt, uint8_t *out, size_t out_cap,
                             size_t *out_len);

struct rdma_crc32_part; /* below, with the CRCs */
/* rdma_encode, less the payload: the frame of a RoCEv2 packet over IPv4
 * without a UDP checksum, with the pkt->payload_len bytes of its payload
 * left out, known by their CRC-32 (`payload`, of payload_len bytes). Every
 * length field and the ICRC are those of the whole frame. out receives
 * the headers, then pad and ICRC; *out_len is what was written, and
 * *payload_at where the payload lies in the whole frame. RDMA_UNSUPPORTED
 * for any other frame, whose checks would read the payload (the UDP
 * checksum over IPv6, the VCRC of native InfiniBand). */
enum rdma_status rdma_encode_without_payload(const struct rdma_pkt *pkt, const struct rdma_crc32_part *payload,
                                             uint8_t *out, size_t out_cap, size_t *out_len,
                                             size_t *payload_at);

/* Set present/proto/ext headers of pkt for an RDMA opcode: BTH plus the
 * extended headers rdma_opcodes[opcode] names. The caller fills the fields. */
void rdma_pkt_set_opcode(struct rdma_pkt *pkt, uint8_t opcode);

/* ---- CRCs ----------------------------------------------------------------- */
/* ICRC over a RoCEv2 (ip/ipv6 at l3), RoCEv1 or native IB packet, computed
 * with the masks the specification gives. `start` is the first byte the CRC
 * model begins with (the IP header, the GRH, or the LRH), `len` runs up to
 * but not including the ICRC. */
uint32_t rdma_icrc_rocev2(const uint8_t *ip, size_t len);
/* RoCEv2 over IPv6 with ext_len bytes of extension headers between the
 * fixed header and UDP: as Linux rxe computes it, over the fixed header
 * (masked as above, its next header and payload length as sent) then UDP
 * on, the extension headers left out. */
uint32_t rdma_icrc_rocev2_ipv6_ext(const uint8_t *ip, size_t ext_len, size_t len);
uint32_t rdma_icrc_grh(const uint8_t *grh, size_t len);

/* Bytes known by their CRC-32 rather than held, to be joined to others:
 * CRC-32 is linear, so the CRC of A followed by them is computed from
 * A's CRC and theirs without reading them again (crc32_part.c). A
 * simulator whose payloads follow a pattern keeps its frames without
 * them, and still checks a real ICRC. */
struct rdma_crc32_part {
    uint32_t len;
    uint32_t crc; /* CRC-32 of the bytes, as zlib's crc32 and the ICRC compute it */
    /* x^(8 len) times each nibble value at each of a CRC's 8 nibbles,
     * modulo the CRC-32 polynomial: appending is 8 lookups */
    uint32_t times[8][16];
};
void rdma_crc32_part_init(struct rdma_crc32_part *part, const uint8_t *bytes, uint32_t len);
/* The CRC-32 of A followed by the part's bytes, from crc, the CRC-32 of A. */
uint32_t rdma_crc32_append(uint32_t crc, const struct rdma_crc32_part *part);
/* The ICRC of a RoCEv2 packet over IPv4 or IPv6 (no extension headers)
 * held without the part's bytes: `ip` holds `len` bytes from the IP
 * header up to, not including, the ICRC, less the part, which lies at
 * offset `at` from the IP header (after the BTH). */
uint32_t rdma_icrc_rocev2_without(const uint8_t *ip, size_t len, size_t at,
                                  const struct rdma_crc32_part *part);
uint32_t rdma_icrc_lrh(const uint8_t *lrh, size_t len);
uint16_t rdma_vcrc(const uint8_t *lrh, size_t len);

/* ---- printing --------------------------------------------------------------
 * Both printers write into buf and return the number of bytes written, or 0
 * when cap is too small. The JSON object carries no frame/time members; the
 * caller opens it (see rdma_json_frame). */
size_t rdma_format_json(const struct rdma_pkt *pkt, char *buf, size_t cap);
size_t rdma_format_summary(const struct rdma_pkt *pkt, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
