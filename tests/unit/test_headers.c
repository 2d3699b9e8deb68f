/* test_headers.c - golden vectors: hand-written frames (golden.c) decode to
 * the field values written next to their bytes, and encoding what was
 * decoded gives the same bytes back.
 */
#include <string.h>

#include "golden.h"

#define EQ(a, b) ck_assert_uint_eq((a), (b))
#define BYTES_EQ(a, ...)                                                       \
    do {                                                                       \
        static const uint8_t want_[] = {__VA_ARGS__};                          \
        ck_assert_mem_eq((a), want_, sizeof want_);                            \
    } while (0)

static void decode_golden(enum golden_id id, uint8_t *buf, struct rdma_pkt *pkt)
{
    size_t len = golden_frame(id, buf);
    enum rdma_status st = unit_decode(goldens[id].linktype, buf, len, len, pkt);
    ck_assert_msg(st == RDMA_OK, "%s: %s (%s)", goldens[id].name, rdma_status_name(st),
                  pkt->reason ? pkt->reason : "");
    ck_assert_ptr_null(pkt->reason);
    if (goldens[id].crc != UNIT_CRC_NONE)
        ck_assert(pkt->icrc.present && pkt->icrc.ok);
    ck_assert_int_eq(pkt->vcrc.present, goldens[id].crc == UNIT_CRC_IB);
}

static void assert_op(const struct rdma_pkt *pkt, uint8_t opcode, uint32_t ext_headers)
{
    EQ(pkt->bth.opcode, opcode);
    ck_assert_ptr_eq(pkt->op, &rdma_opcodes[opcode]);
    EQ(pkt->present & RDMA_HDR_EXT_MASK, ext_headers);
}

START_TEST(every_golden_roundtrips)
{
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame((enum golden_id)_i, buf);
    unit_assert_roundtrip(goldens[_i].linktype, buf, len, goldens[_i].name);
}
END_TEST

START_TEST(rocev2_ipv4_bth_reth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_WRITE_ONLY, buf, &p);
    EQ(p.proto, RDMA_PROTO_ROCEV2);
    EQ(p.present, RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH | RDMA_HDR_RETH);
    BYTES_EQ(p.eth.dst, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02);
    BYTES_EQ(p.eth.src, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01);
    EQ(p.eth.type, 0x0800);
    EQ(p.ip.version, 4);
    EQ(p.ip.ihl, 5);
    EQ(p.ip.dsfield_dscp, 26);
    EQ(p.ip.dsfield_ecn, 2);
    EQ(p.ip.len, 68);
    EQ(p.ip.id, 0x1234);
    EQ(p.ip.flags, 2);
    EQ(p.ip.frag_offset, 0);
    EQ(p.ip.ttl, 64);
    EQ(p.ip.proto, 17);
    ck_assert(p.ip_checksum_ok);
    BYTES_EQ(p.ip.src, 192, 168, 1, 1);
    BYTES_EQ(p.ip.dst, 192, 168, 1, 2);
    EQ(p.udp.srcport, 49152);
    EQ(p.udp.dstport, 4791);
    EQ(p.udp.length, 48);
    EQ(p.udp.checksum, 0);
    assert_op(&p, 0x0a, RDMA_HDR_RETH);
    ck_assert_str_eq(p.op->name, "RC RDMA WRITE Only");
    EQ(p.bth.se, 1);
    EQ(p.bth.m, 0);
    EQ(p.bth.padcnt, 3);
    EQ(p.bth.tver, 0);
    EQ(p.bth.p_key, 0xffff);
    EQ(p.bth.fecn, 0);
    EQ(p.bth.becn, 0);
    EQ(p.bth.destqp, 0x000123);
    EQ(p.bth.a, 1);
    EQ(p.bth.psn, 0x0abcde);
    EQ(p.reth.va, 0x00007f0012345000);
    EQ(p.reth.r_key, 0x00001a2b);
    EQ(p.reth.dmalen, 5);
    EQ(p.payload_len, 5);
    ck_assert_mem_eq(p.payload, "hello", 5);
}
END_TEST

START_TEST(rocev2_ipv6_ieth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_IPV6_SEND_INV, buf, &p);
    EQ(p.proto, RDMA_PROTO_ROCEV2);
    EQ(p.ethertype, 0x86dd);
    EQ(p.ipv6.version, 6);
    EQ(p.ipv6.tclass, 0x6a);
    EQ(p.ipv6.flow, 0x12345);
    EQ(p.ipv6.plen, 36);
    EQ(p.ipv6.nxt, 17);
    EQ(p.ipv6.hlim, 64);
    BYTES_EQ(p.ipv6.src, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
    BYTES_EQ(p.ipv6.dst, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2);
    EQ(p.udp.srcport, 49153);
    EQ(p.udp.length, 36);
    assert_op(&p, 0x17, RDMA_HDR_IETH);
    ck_assert_str_eq(p.op->name, "RC SEND Only with Invalidate");
    EQ(p.bth.se, 0);
    EQ(p.bth.m, 1);
    EQ(p.bth.padcnt, 0);
    EQ(p.bth.p_key, 0x8001);
    EQ(p.bth.fecn, 1);
    EQ(p.bth.becn, 0);
    EQ(p.bth.destqp, 0x00abcd);
    EQ(p.bth.a, 0);
    EQ(p.bth.psn, 1);
    EQ(p.ieth.r_key, 0xdeadbeef);
    EQ(p.payload_len, 8);
    BYTES_EQ(p.payload, 1, 2, 3, 4, 5, 6, 7, 8);
}
END_TEST

START_TEST(rocev1_grh_atomiceth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_ROCEV1_CMPSWAP, buf, &p);
    EQ(p.proto, RDMA_PROTO_ROCEV1);
    EQ(p.ethertype, 0x8915);
    EQ(p.present, RDMA_HDR_ETH | RDMA_HDR_GRH | RDMA_HDR_BTH | RDMA_HDR_ATOMICETH);
    EQ(p.grh.ipver, 6);
    EQ(p.grh.tclass, 0x20);
    EQ(p.grh.flowlabel, 0);
    EQ(p.grh.paylen, 44);
    EQ(p.grh.nxthdr, 0x1b);
    EQ(p.grh.hoplmt, 64);
    BYTES_EQ(p.grh.sgid, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
    BYTES_EQ(p.grh.dgid, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2);
    assert_op(&p, 0x13, RDMA_HDR_ATOMICETH);
    ck_assert_str_eq(p.op->name, "RC CmpSwap");
    EQ(p.bth.destqp, 0x42);
    EQ(p.bth.a, 1);
    EQ(p.bth.psn, 0x100);
    EQ(p.atomiceth.va, 0x10002000);
    EQ(p.atomiceth.r_key, 0x00c0ffee);
    EQ(p.atomiceth.swapdt, 0x1111222233334444);
    EQ(p.atomiceth.cmpdt, 0x5555666677778888);
    EQ(p.payload_len, 0);
}
END_TEST

START_TEST(ib_lrh_aeth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_IB_ACK, buf, &p);
    EQ(p.proto, RDMA_PROTO_IB);
    EQ(p.present, RDMA_HDR_LRH | RDMA_HDR_BTH | RDMA_HDR_AETH);
    EQ(p.lrh.vl, 0);
    EQ(p.lrh.lver, 0);
    EQ(p.lrh.sl, 2);
    EQ(p.lrh.lnh, 2);
    EQ(p.lrh.dlid, 4);
    EQ(p.lrh.pktlen, 7);
    EQ(p.lrh.slid, 1);
    assert_op(&p, 0x11, RDMA_HDR_AETH);
    ck_assert_str_eq(p.op->name, "RC Acknowledge");
    EQ(p.bth.destqp, 0x408);
    EQ(p.bth.psn, 0x540b55);
    EQ(p.aeth.syndrome, 0x0c);
    EQ(p.aeth.msn, 3);
    EQ(rdma_aeth_kind(p.aeth.syndrome), RDMA_AETH_ACK);
    EQ(rdma_aeth_value(p.aeth.syndrome), 12);
    ck_assert(p.vcrc.ok);
}
END_TEST

START_TEST(ib_grh_atomicacketh)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_IB_ATOMIC_ACK, buf, &p);
    EQ(p.proto, RDMA_PROTO_IB);
    EQ(p.present, RDMA_HDR_LRH | RDMA_HDR_GRH | RDMA_HDR_BTH | RDMA_HDR_AETH |
                      RDMA_HDR_ATOMICACKETH);
    EQ(p.lrh.vl, 1);
    EQ(p.lrh.sl, 0);
    EQ(p.lrh.lnh, 3);
    EQ(p.lrh.dlid, 2);
    EQ(p.lrh.pktlen, 19);
    EQ(p.lrh.slid, 3);
    EQ(p.grh.paylen, 28);
    EQ(p.grh.hoplmt, 255);
    BYTES_EQ(p.grh.sgid, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x1f,
             0x2d);
    assert_op(&p, 0x12, RDMA_HDR_AETH | RDMA_HDR_ATOMICACKETH);
    ck_assert_str_eq(p.op->name, "RC ATOMIC Acknowledge");
    EQ(p.aeth.syndrome, 0x1f);
    EQ(p.aeth.msn, 16);
    EQ(p.atomicacketh.origremdt, 0x0123456789abcdef);
    ck_assert(p.vcrc.ok);
}
END_TEST

START_TEST(rd_rdeth_deth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_RD_SEND, buf, &p);
    assert_op(&p, 0x44, RDMA_HDR_RDETH | RDMA_HDR_DETH);
    ck_assert_str_eq(p.op->name, "RD SEND Only");
    EQ(p.bth.destqp, 0x300);
    EQ(p.rdeth.reserved, 0);
    EQ(p.rdeth.eecnxt, 0x55);
    EQ(p.deth.q_key, 0x11112222);
    EQ(p.deth.reserved, 0);
    EQ(p.deth.srcqp, 0x321);
    EQ(p.payload_len, 4);
    BYTES_EQ(p.payload, 0xa0, 0xa1, 0xa2, 0xa3);
}
END_TEST

START_TEST(ud_deth_immdt)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_UD_SEND_IMM, buf, &p);
    assert_op(&p, 0x65, RDMA_HDR_DETH | RDMA_HDR_IMMDT);
    ck_assert_str_eq(p.op->name, "UD SEND Only with Immediate");
    EQ(p.bth.se, 1);
    EQ(p.bth.padcnt, 1);
    EQ(p.deth.q_key, 0xabcd);
    EQ(p.deth.srcqp, 0x456);
    EQ(p.immdt.imm, 0xcafef00d);
    EQ(p.payload_len, 3);
    ck_assert_mem_eq(p.payload, "abc", 3);
    ck_assert(!(p.present & RDMA_HDR_MAD)); /* DestQP 0x99 is not QP0 or QP1 */
}
END_TEST

START_TEST(xrc_xrceth)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_XRC_SEND, buf, &p);
    assert_op(&p, 0xa4, RDMA_HDR_XRCETH);
    ck_assert_str_eq(p.op->name, "XRC SEND Only");
    EQ(p.bth.padcnt, 2);
    EQ(p.xrceth.reserved, 0);
    EQ(p.xrceth.xrcsrq, 0xabc);
    EQ(p.payload_len, 2);
    BYTES_EQ(p.payload, 0x5a, 0x5b);
}
END_TEST

START_TEST(vlan_8021q)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_VLAN_WRITE_IMM, buf, &p);
    EQ(p.eth.type, 0x8100);
    EQ(p.nvlan, 1);
    EQ(p.vlan[0].priority, 3);
    EQ(p.vlan[0].dei, 0);
    EQ(p.vlan[0].id, 100);
    EQ(p.vlan[0].etype, 0x0800);
    EQ(p.ethertype, 0x0800);
    EQ(p.proto, RDMA_PROTO_ROCEV2);
    assert_op(&p, 0x0b, RDMA_HDR_RETH | RDMA_HDR_IMMDT);
    EQ(p.reth.va, 0x00007f0012346000);
    EQ(p.reth.r_key, 0x1a2c);
    EQ(p.reth.dmalen, 4);
    EQ(p.immdt.imm, 0x42);
    ck_assert_mem_eq(p.payload, "data", 4);
}
END_TEST

START_TEST(vlan_8021ad_double_tag)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_QINQ_ACK, buf, &p);
    EQ(p.eth.type, 0x88a8);
    EQ(p.nvlan, 2);
    EQ(p.vlan[0].priority, 5);
    EQ(p.vlan[0].dei, 1);
    EQ(p.vlan[0].id, 200);
    EQ(p.vlan[0].etype, 0x8100);
    EQ(p.vlan[1].priority, 3);
    EQ(p.vlan[1].dei, 0);
    EQ(p.vlan[1].id, 100);
    EQ(p.vlan[1].etype, 0x0800);
    EQ(p.ethertype, 0x0800);
    assert_op(&p, 0x11, RDMA_HDR_AETH);
    EQ(p.bth.psn, 0x8c85dd);
    EQ(p.aeth.syndrome, 0x1f);
    EQ(p.aeth.msn, 1);
}
END_TEST

START_TEST(linux_sll)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_SLL_SEND, buf, &p);
    EQ(p.linktype, 113);
    EQ(p.present, RDMA_HDR_SLL | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH);
    EQ(p.sll.pkttype, 0);
    EQ(p.sll.hatype, 1);
    EQ(p.sll.halen, 6);
    BYTES_EQ(p.sll.src, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00);
    EQ(p.sll.etype, 0x0800);
    assert_op(&p, 0x04, 0);
    EQ(p.bth.destqp, 0x45);
    ck_assert_mem_eq(p.payload, "ping", 4);
}
END_TEST

START_TEST(linux_sll2)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_SLL2_READ, buf, &p);
    EQ(p.linktype, 276);
    EQ(p.present, RDMA_HDR_SLL2 | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH | RDMA_HDR_RETH);
    EQ(p.sll2.etype, 0x0800);
    EQ(p.sll2.reserved, 0);
    EQ(p.sll2.ifindex, 3);
    EQ(p.sll2.hatype, 1);
    EQ(p.sll2.pkttype, 4);
    EQ(p.sll2.halen, 6);
    BYTES_EQ(p.sll2.src, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00);
    assert_op(&p, 0x0c, RDMA_HDR_RETH);
    ck_assert_str_eq(p.op->name, "RC RDMA READ Request");
    EQ(p.reth.va, 0x0000aaab09dd5000);
    EQ(p.reth.r_key, 0x2d5);
    EQ(p.reth.dmalen, 4096);
    EQ(p.payload_len, 0);
}
END_TEST

START_TEST(cnp)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_CNP, buf, &p);
    EQ(p.ip.dsfield_dscp, 48);
    assert_op(&p, 0x81, 0);
    ck_assert_str_eq(p.op->name, "CNP");
    EQ(p.bth.becn, 1);
    EQ(p.bth.fecn, 0);
    EQ(p.bth.destqp, 0x118);
    EQ(p.payload_len, 16);
}
END_TEST

/* A MAD of the CM class (IBA 13.4.2 and 12.6) with the given attribute. */
static void decode_cm(enum golden_id id, uint8_t *buf, struct rdma_pkt *p, uint16_t attr,
                      uint8_t tid_low, uint8_t psn, const char *name)
{
    decode_golden(id, buf, p);
    assert_op(p, 0x64, RDMA_HDR_DETH);
    EQ(p->bth.destqp, 1);
    EQ(p->bth.psn, psn);
    EQ(p->deth.q_key, 0x80010000);
    EQ(p->deth.srcqp, 1);
    EQ(p->payload_len, 256);
    ck_assert(p->present & RDMA_HDR_MAD);
    ck_assert(p->present & RDMA_HDR_CM);
    EQ(p->mad.baseversion, 1);
    EQ(p->mad.mgmtclass, RDMA_MAD_CLASS_CM);
    EQ(p->mad.classversion, 2);
    EQ(p->mad.method, 3);
    EQ(p->mad.status, 0);
    EQ(p->mad.classspecific, 0);
    EQ(p->mad.transactionid, 0x0000000123456700u | tid_low);
    EQ(p->mad.attributeid, attr);
    EQ(p->mad.reserved, 0);
    EQ(p->mad.attributemodifier, 0);
    EQ(p->cm.attr, attr);
    ck_assert_str_eq(rdma_cm_message_name(attr), name);
}

START_TEST(cm_req)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_cm(G_CM_REQ, buf, &p, 0x0010, 0x01, 0x41, "REQ");
    const struct rdma_cm_req *r = &p.cm.u.req;
    EQ(r->localcommid, 0x11223344);
    EQ(r->serviceid, 0x0000000001064e20);
    EQ(r->localcaguid, 0x505400fffe123456);
    EQ(r->localqkey, 0xbeef);
    EQ(r->localqpn, 0x11);
    EQ(r->responderres, 16);
    EQ(r->localeecn, 0);
    EQ(r->initdepth, 8);
    EQ(r->remoteeecn, 0);
    EQ(r->remoteresptout, 20);
    EQ(r->transpsvctype, 0);
    EQ(r->e2eflowctrl, 1);
    EQ(r->startpsn, 0x8c85dd);
    EQ(r->localresptout, 20);
    EQ(r->retrcount, 7);
    EQ(r->pkey, 0xffff);
    EQ(r->pppmtu, 3);
    EQ(r->rdcexist, 0);
    EQ(r->rnrretrcount, 7);
    EQ(r->maxcmretr, 15);
    EQ(r->srq, 0);
    EQ(r->ext_transport, 0);
    EQ(r->prim_locallid, 1);
    EQ(r->prim_remotelid, 4);
    BYTES_EQ(r->prim_localgid, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 1);
    BYTES_EQ(r->prim_remotegid, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2);
}
END_TEST

START_TEST(cm_rep)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_cm(G_CM_REP, buf, &p, 0x0013, 0x01, 0x37, "REP");
    const struct rdma_cm_rep *r = &p.cm.u.rep;
    EQ(r->localcommid, 0x55667788);
    EQ(r->remotecommid, 0x11223344);
    EQ(r->localqkey, 0xcafe);
    EQ(r->localqpn, 0x17);
    EQ(r->localeecn, 0);
    EQ(r->startpsn, 0x4a3b2c);
    EQ(r->respres, 16);
    EQ(r->initdepth, 16);
    EQ(r->tgtackdelay, 15);
    EQ(r->failoveracc, 0);
    EQ(r->e2eflowctrl, 1);
    EQ(r->rnrretrcount, 7);
    EQ(r->srq, 1);
    EQ(r->localcaguid, 0x505400fffe654321);
}
END_TEST

START_TEST(cm_rtu)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_cm(G_CM_RTU, buf, &p, 0x0014, 0x02, 0x42, "RTU");
    EQ(p.cm.u.rtu.localcommid, 0x11223344);
    EQ(p.cm.u.rtu.remotecommid, 0x55667788);
}
END_TEST

START_TEST(cm_dreq)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_cm(G_CM_DREQ, buf, &p, 0x0015, 0x03, 0x43, "DREQ");
    EQ(p.cm.u.dreq.localcommid, 0x11223344);
    EQ(p.cm.u.dreq.remotecommid, 0x55667788);
    EQ(p.cm.u.dreq.remoteqpneecn, 0x17);
}
END_TEST

START_TEST(cm_drep)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_cm(G_CM_DREP, buf, &p, 0x0016, 0x03, 0x38, "DREP");
    EQ(p.cm.u.drep.localcommid, 0x55667788);
    EQ(p.cm.u.drep.remotecommid, 0x11223344);
}
END_TEST

/* Only QP0 and QP1 receive MADs (IBA 13.5.1): the same 256 bytes sent to
 * another QP are payload. */
START_TEST(mad_only_to_qp0_and_qp1)
{
    static const uint8_t destqps[] = {0x00, 0x02, 0x99};
    const struct golden *g = &goldens[G_CM_REQ];
    const size_t destqp_low = g->l3 + 20 + 8 + 7; /* last byte of BTH DestQP */
    for (size_t i = 0; i < sizeof destqps; i++) {
        uint8_t buf[UNIT_FRAME_MAX];
        size_t len = golden_frame(G_CM_REQ, buf);
        buf[destqp_low] = destqps[i];
        unit_seal(g->crc, buf, g->l3, golden_end(g));
        struct rdma_pkt p;
        ck_assert_int_eq(unit_decode(g->linktype, buf, len, len, &p), RDMA_OK);
        EQ(p.bth.destqp, destqps[i]);
        EQ(p.payload_len, 256);
        if (destqps[i] <= 1)
            EQ(p.present & (RDMA_HDR_MAD | RDMA_HDR_CM), RDMA_HDR_MAD | RDMA_HDR_CM);
        else
            EQ(p.present & (RDMA_HDR_MAD | RDMA_HDR_CM), 0);
        unit_assert_roundtrip(g->linktype, buf, len, "MAD to another QP");
    }
}
END_TEST

START_TEST(pfc_8021qbb)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_PFC, buf, &p);
    EQ(p.proto, RDMA_PROTO_PFC);
    EQ(p.present, RDMA_HDR_ETH | RDMA_HDR_PFC);
    BYTES_EQ(p.eth.dst, 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01);
    EQ(p.ethertype, 0x8808);
    EQ(p.pfc.opcode, 0x0101);
    EQ(p.pfc.enbv, 0x00a5);
    static const uint16_t times[8] = {0xffff, 0, 0x1000, 0, 0, 0x0001, 0, 0x8000};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(p.pfc.pause_time[i] == times[i], "time[%d] = %#x", i, p.pfc.pause_time[i]);
}
END_TEST

START_TEST(pause_8023x)
{
    uint8_t buf[UNIT_FRAME_MAX];
    struct rdma_pkt p;
    decode_golden(G_PAUSE, buf, &p);
    EQ(p.proto, RDMA_PROTO_PAUSE);
    EQ(p.present, RDMA_HDR_ETH | RDMA_HDR_PFC);
    EQ(p.pfc.opcode, 0x0001);
    EQ(p.pfc.enbv, 0);
    EQ(p.pfc.pause_time[0], 0x0100);
}
END_TEST

/* A flow control packet (IBA vol. 1, 7.9.4): operand 0, FCTBS 0x123, VL 1,
 * FCCL 0x456, then the LPCRC, CRC-16 0x100B over the first four bytes
 * (0xa8a7, computed bit by bit in tests/infiniband/test_ib.py's
 * crc16_ib), least significant byte first as the VCRC. As a raw IB packet (6 bytes: no data packet is that short)
 * and inside an ERF record of the InfiniBand link type (25). */
static const uint8_t ibfc_golden[6] = {0x01, 0x23, 0x14, 0x56, 0xa7, 0xa8};

static void assert_ibfc(const struct rdma_pkt *p)
{
    EQ(p->proto, RDMA_PROTO_IB);
    ck_assert(p->present & RDMA_HDR_IBFC);
    EQ(p->ibfc.op, 0);
    EQ(p->ibfc.fctbs, 0x123);
    EQ(p->ibfc.vl, 1);
    EQ(p->ibfc.fccl, 0x456);
    EQ(p->ibfc.lpcrc, 0xa7a8); /* the field as read in network order, as tshark shows it */
    ck_assert(p->vcrc.present && p->vcrc.ok);
}

START_TEST(ib_flow_control_packet)
{
    struct rdma_pkt p;
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_INFINIBAND, ibfc_golden, 6, 6, &p), RDMA_OK);
    assert_ibfc(&p);
    unit_assert_roundtrip(RDMA_LINKTYPE_INFINIBAND, ibfc_golden, 6, "flow control packet");
    uint8_t erf[16 + 8] = {0, 0, 0, 0, 1, 0, 0, 0, RDMA_ERF_TYPE_INFINIBAND_LINK, 0, 0, 24, 0, 0, 0, 6};
    memcpy(erf + 16, ibfc_golden, 6);
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_ERF, erf, sizeof erf, sizeof erf, &p), RDMA_OK);
    assert_ibfc(&p);
    /* encoding what was decoded gives the bytes back */
    uint8_t out[64];
    size_t len;
    p.ibfc.lpcrc = 0;
    p.linktype = RDMA_LINKTYPE_INFINIBAND;
    p.present = RDMA_HDR_IBFC;
    ck_assert_int_eq(rdma_encode(&p, out, sizeof out, &len), RDMA_OK);
    EQ(len, 6);
    ck_assert_mem_eq(out, ibfc_golden, 6);
    /* damage: a flipped bit, a reserved operand, a short packet */
    uint8_t bad[6];
    memcpy(bad, ibfc_golden, 6);
    bad[2] ^= 0x10;
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_INFINIBAND, bad, 6, 6, &p), RDMA_BAD_VCRC);
    memcpy(bad, ibfc_golden, 6);
    bad[0] = 0x21;
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_INFINIBAND, bad, 6, 6, &p), RDMA_MALFORMED);
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_INFINIBAND, ibfc_golden, 5, 6, &p), RDMA_TRUNCATED);
}
END_TEST

/* The sliced VCRC against the polynomial taken one bit at a time, over
 * every length that exercises the eight-byte steps and the tail. */
START_TEST(vcrc_slices_follow_the_polynomial)
{
    uint8_t data[96];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof data; len++) {
        uint16_t crc = 0xffff;
        for (size_t i = 0; i < len; i++) {
            crc ^= data[i];
            for (int b = 0; b < 8; b++)
                crc = (uint16_t)(crc & 1 ? (crc >> 1) ^ 0xd008 : crc >> 1);
        }
        uint16_t want = (uint16_t)(crc ^ 0xffff);
        ck_assert_msg(rdma_vcrc(data, len) == want, "length %zu", len);
    }
}
END_TEST

/* AETH syndromes (IBA 9.7.5.1, tables 43-45) put into the native IB ACK. */
static const struct aeth_case {
    uint8_t syndrome;
    unsigned kind;
    unsigned value;
    const char *kind_name;
    const char *nak_name; /* NAK only; NULL for a reserved code */
    uint32_t rnr_us;      /* RNR NAK only */
} aeth_cases[] = {
    {0x00, RDMA_AETH_ACK, 0, "ACK", NULL, 0},
    {0x0c, RDMA_AETH_ACK, 12, "ACK", NULL, 0},
    {0x1e, RDMA_AETH_ACK, 30, "ACK", NULL, 0},
    {0x20, RDMA_AETH_RNR_NAK, 0, "RNR NAK", NULL, 655360}, /* 655.36 ms */
    {0x21, RDMA_AETH_RNR_NAK, 1, "RNR NAK", NULL, 10},     /* 0.01 ms */
    {0x2e, RDMA_AETH_RNR_NAK, 14, "RNR NAK", NULL, 1280},  /* 1.28 ms */
    {0x32, RDMA_AETH_RNR_NAK, 18, "RNR NAK", NULL, 5120},  /* 5.12 ms */
    {0x3f, RDMA_AETH_RNR_NAK, 31, "RNR NAK", NULL, 491520}, /* 491.52 ms */
    {0x40, RDMA_AETH_RESERVED, 0, "Reserved", NULL, 0},
    {0x60, RDMA_AETH_NAK, 0, "NAK", "PSN sequence error", 0},
    {0x61, RDMA_AETH_NAK, 1, "NAK", "invalid request", 0},
    {0x62, RDMA_AETH_NAK, 2, "NAK", "remote access error", 0},
    {0x63, RDMA_AETH_NAK, 3, "NAK", "remote operational error", 0},
    {0x64, RDMA_AETH_NAK, 4, "NAK", "invalid RD request", 0},
    {0x65, RDMA_AETH_NAK, 5, "NAK", NULL, 0},
};

/* IBA vol. 1 rel. 1.4 table 45, in milliseconds as the table gives them. */
START_TEST(rnr_timer_table)
{
    static const double ms[32] = {
        655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32,
        0.48, 0.64, 0.96, 1.28, 1.92, 2.56, 3.84, 5.12, 7.68, 10.24, 15.36,
        20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
    };
    for (unsigned t = 0; t < 32; t++)
        ck_assert_msg(rdma_rnr_timer_us(t) == (uint32_t)(ms[t] * 1000 + 0.5),
                      "timer %u: %u us, table says %.2f ms", t, rdma_rnr_timer_us(t), ms[t]);
}
END_TEST

#define IB_ACK_SYNDROME 20 /* 8 LRH + 12 BTH */

START_TEST(aeth_syndromes)
{
    const struct aeth_case *c = &aeth_cases[_i];
    uint8_t buf[UNIT_FRAME_MAX];
    size_t len = golden_frame(G_IB_ACK, buf);
    buf[IB_ACK_SYNDROME] = c->syndrome;
    unit_seal(UNIT_CRC_IB, buf, 0, golden_end(&goldens[G_IB_ACK]));
    struct rdma_pkt p;
    ck_assert_int_eq(unit_decode(RDMA_LINKTYPE_INFINIBAND, buf, len, len, &p), RDMA_OK);
    EQ(p.aeth.syndrome, c->syndrome);
    EQ(rdma_aeth_kind(p.aeth.syndrome), c->kind);
    EQ(rdma_aeth_value(p.aeth.syndrome), c->value);
    ck_assert_str_eq(rdma_aeth_kind_name(c->kind), c->kind_name);
    if (c->kind == RDMA_AETH_NAK) {
        if (c->nak_name)
            ck_assert_str_eq(rdma_nak_code_name(c->value), c->nak_name);
        else
            ck_assert_ptr_null(rdma_nak_code_name(c->value));
    }
    if (c->kind == RDMA_AETH_RNR_NAK)
        EQ(rdma_rnr_timer_us(c->value), c->rnr_us);
    unit_assert_roundtrip(RDMA_LINKTYPE_INFINIBAND, buf, len, c->kind_name);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("headers");
    TCase *tc = tcase_create("golden");
    tcase_add_loop_test(tc, every_golden_roundtrips, 0, G_COUNT);
    tcase_add_test(tc, rocev2_ipv4_bth_reth);
    tcase_add_test(tc, rocev2_ipv6_ieth);
    tcase_add_test(tc, rocev1_grh_atomiceth);
    tcase_add_test(tc, ib_lrh_aeth);
    tcase_add_test(tc, ib_grh_atomicacketh);
    tcase_add_test(tc, rd_rdeth_deth);
    tcase_add_test(tc, ud_deth_immdt);
    tcase_add_test(tc, xrc_xrceth);
    tcase_add_test(tc, vlan_8021q);
    tcase_add_test(tc, vlan_8021ad_double_tag);
    tcase_add_test(tc, linux_sll);
    tcase_add_test(tc, linux_sll2);
    tcase_add_test(tc, cnp);
    tcase_add_test(tc, cm_req);
    tcase_add_test(tc, cm_rep);
    tcase_add_test(tc, cm_rtu);
    tcase_add_test(tc, cm_dreq);
    tcase_add_test(tc, cm_drep);
    tcase_add_test(tc, mad_only_to_qp0_and_qp1);
    tcase_add_test(tc, pfc_8021qbb);
    tcase_add_test(tc, pause_8023x);
    tcase_add_test(tc, ib_flow_control_packet);
    tcase_add_test(tc, vcrc_slices_follow_the_polynomial);
    tcase_add_test(tc, rnr_timer_table);
    tcase_add_loop_test(tc, aeth_syndromes, 0, sizeof aeth_cases / sizeof aeth_cases[0]);
    suite_add_tcase(s, tc);
    return check_run(s);
}
