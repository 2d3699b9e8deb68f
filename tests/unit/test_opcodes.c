/* test_opcodes.c - the BTH opcode table against IBA vol. 1 rel. 1.4 table
 * 38 (and annex A14 for XRC, A17.9.2 for the CNP): every entry's headers
 * agree with what its name and flags say, and every defined opcode, built
 * from nothing with rdma_pkt_set_opcode(), encodes over RoCEv2/IPv4,
 * RoCEv2/IPv6, RoCEv1 and native InfiniBand (LNH 2 and 3), decodes back to
 * the same fields with valid CRCs, and re-encodes to the same bytes.
 */
#include <stdio.h>
#include <string.h>

#include "unit.h"

#define OPF(x) RDMA_OPF_##x

static bool has(const struct rdma_opcode_info *o, uint32_t flag) { return (o->flags & flag) != 0; }
static bool named(const struct rdma_opcode_info *o, const char *word)
{
    return strstr(o->op, word) != NULL;
}

/* The transport a BTH opcode's top three bits select. */
static int transport_of(unsigned opcode)
{
    switch (opcode & 0xe0) {
    case 0x00:
        return RDMA_TRANSPORT_RC;
    case 0x20:
        return RDMA_TRANSPORT_UC;
    case 0x40:
        return RDMA_TRANSPORT_RD;
    case 0x60:
        return RDMA_TRANSPORT_UD;
    case 0x80:
        return RDMA_TRANSPORT_CNP;
    case 0xa0:
        return RDMA_TRANSPORT_XRC;
    }
    return -1; /* 0xc0-0xff: manufacturer specific */
}

START_TEST(headers_agree_with_flags)
{
    const unsigned code = (unsigned)_i;
    const struct rdma_opcode_info *o = &rdma_opcodes[code];
    if (!o->name) {
        ck_assert_msg(o->op == NULL && o->headers == 0 && o->flags == 0 && o->fixed_payload == 0,
                      "reserved opcode %#04x has contents", code);
        return;
    }
    int tr = transport_of(code);
    ck_assert_msg(tr >= 0, "opcode %#04x is manufacturer specific", code);
    ck_assert_uint_eq(o->transport, (unsigned)tr);
    ck_assert_ptr_nonnull(o->op);
    char want_name[96];
    if (tr == RDMA_TRANSPORT_CNP)
        snprintf(want_name, sizeof want_name, "%s", o->op);
    else
        snprintf(want_name, sizeof want_name, "%s %s", rdma_transport_name(tr), o->op);
    ck_assert_str_eq(o->name, want_name);
    ck_assert_uint_eq(o->headers & ~(uint32_t)RDMA_HDR_EXT_MASK, 0);
    ck_assert_uint_eq(o->fixed_payload, code == 0x81 ? 16 : 0);

    /* The operation's name (IBA table 38) against the flags. */
    bool req = has(o, OPF(REQUEST)), rsp = has(o, OPF(RESPONSE));
    if (tr == RDMA_TRANSPORT_CNP) {
        ck_assert_uint_eq(o->flags, OPF(CNP));
        ck_assert_uint_eq(o->headers, 0);
        return;
    }
    ck_assert_msg(req != rsp, "%s: request or response", o->name);
    ck_assert_int_eq(has(o, OPF(SEND)), named(o, "SEND"));
    ck_assert_int_eq(has(o, OPF(WRITE)), named(o, "WRITE"));
    ck_assert_int_eq(has(o, OPF(READ)), named(o, "READ"));
    ck_assert_int_eq(has(o, OPF(ATOMIC)),
                     named(o, "ATOMIC") || named(o, "CmpSwap") || named(o, "FetchAdd"));
    ck_assert_int_eq(has(o, OPF(ACK)), strcmp(o->op, "Acknowledge") == 0);
    ck_assert_int_eq(has(o, OPF(IMM)), named(o, "with Immediate"));
    ck_assert_int_eq(has(o, OPF(INV)), named(o, "with Invalidate"));
    ck_assert_int_eq(rsp, named(o, "Response") || named(o, "Acknowledge"));
    if (named(o, "First"))
        ck_assert_uint_eq(o->flags & (OPF(FIRST) | OPF(MIDDLE) | OPF(LAST)), OPF(FIRST));
    if (named(o, "Middle"))
        ck_assert_uint_eq(o->flags & (OPF(FIRST) | OPF(MIDDLE) | OPF(LAST)), OPF(MIDDLE));
    if (named(o, "Last"))
        ck_assert_uint_eq(o->flags & (OPF(FIRST) | OPF(MIDDLE) | OPF(LAST)), OPF(LAST));
    if (named(o, "Only"))
        ck_assert_uint_eq(o->flags & (OPF(FIRST) | OPF(MIDDLE) | OPF(LAST)), OPF(ONLY));
    /* Payload: SEND and WRITE data, READ responses (9.4.1-9.4.4). */
    ck_assert_int_eq(has(o, OPF(PAYLOAD)),
                     has(o, OPF(SEND)) || has(o, OPF(WRITE)) || (has(o, OPF(READ)) && rsp));

    /* Which extended headers follow the BTH (9.2, table 38). */
    bool write_first = has(o, OPF(WRITE)) && has(o, OPF(FIRST)); /* First or Only */
    bool read = has(o, OPF(READ)), atomic = has(o, OPF(ATOMIC));
    bool read_rsp_aeth = read && rsp && (o->flags & (OPF(FIRST) | OPF(LAST)));
    struct {
        uint32_t bit;
        bool want;
        const char *name;
    } rules[] = {
        {RDMA_HDR_RETH, write_first || (read && req), "RETH"},
        {RDMA_HDR_AETH, has(o, OPF(ACK)) || read_rsp_aeth || (atomic && rsp), "AETH"},
        {RDMA_HDR_ATOMICETH, atomic && req, "AtomicETH"},
        {RDMA_HDR_ATOMICACKETH, atomic && rsp, "AtomicAckETH"},
        {RDMA_HDR_IMMDT, has(o, OPF(IMM)), "ImmDt"},
        {RDMA_HDR_IETH, has(o, OPF(INV)), "IETH"},
        {RDMA_HDR_DETH, tr == RDMA_TRANSPORT_UD || (tr == RDMA_TRANSPORT_RD && req), "DETH"},
        {RDMA_HDR_RDETH, tr == RDMA_TRANSPORT_RD, "RDETH"},
        {RDMA_HDR_XRCETH, tr == RDMA_TRANSPORT_XRC && req, "XRCETH"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        ck_assert_msg(((o->headers & rules[i].bit) != 0) == rules[i].want, "%s: %s %s", o->name,
                      rules[i].want ? "lacks" : "has", rules[i].name);
    /* Immediate data and invalidation end a message (9.2.5-9.2.6); only RC
     * and XRC invalidate. */
    if (has(o, OPF(IMM)) || has(o, OPF(INV)))
        ck_assert(has(o, OPF(LAST)));
    if (has(o, OPF(INV)))
        ck_assert(tr == RDMA_TRANSPORT_RC || tr == RDMA_TRANSPORT_XRC);
}
END_TEST

/* How many opcodes table 38 defines per transport. */
START_TEST(opcodes_per_transport)
{
    size_t count[RDMA_TRANSPORT_COUNT] = {0};
    for (unsigned code = 0; code < 256; code++)
        if (rdma_opcodes[code].name)
            count[rdma_opcodes[code].transport]++;
    ck_assert_uint_eq(count[RDMA_TRANSPORT_RC], 23);  /* 0x00-0x17 but RESYNC */
    ck_assert_uint_eq(count[RDMA_TRANSPORT_UC], 12);  /* SEND and RDMA WRITE */
    ck_assert_uint_eq(count[RDMA_TRANSPORT_RD], 22);  /* 0x40-0x55 */
    ck_assert_uint_eq(count[RDMA_TRANSPORT_UD], 2);   /* 0x64, 0x65 */
    ck_assert_uint_eq(count[RDMA_TRANSPORT_CNP], 1);  /* 0x81 */
    ck_assert_uint_eq(count[RDMA_TRANSPORT_XRC], 23); /* as RC */
    ck_assert_str_eq(rdma_opcodes[0x64].name, "UD SEND Only");
    ck_assert_str_eq(rdma_opcodes[0x65].name, "UD SEND Only with Immediate");
    ck_assert_str_eq(rdma_opcodes[0x55].name, "RD RESYNC");
    ck_assert_ptr_null(rdma_opcodes[0x15].name);
    ck_assert_ptr_null(rdma_opcodes[0x56].name); /* no RD SEND with Invalidate */
}
END_TEST

START_TEST(set_opcode_replaces_headers)
{
    struct rdma_pkt p;
    memset(&p, 0, sizeof p);
    p.present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH | RDMA_HDR_DETH |
                RDMA_HDR_MAD | RDMA_HDR_CM;
    rdma_pkt_set_opcode(&p, 0x0b);
    ck_assert_uint_eq(p.present, RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH |
                                     RDMA_HDR_RETH | RDMA_HDR_IMMDT);
    ck_assert_uint_eq(p.bth.opcode, 0x0b);
    ck_assert_ptr_eq(p.op, &rdma_opcodes[0x0b]);
    rdma_pkt_set_opcode(&p, 0x81);
    ck_assert_uint_eq(p.present, RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH);
    ck_assert_uint_eq(p.payload_len, 16);
}
END_TEST

/* ---- encoding from scratch -------------------------------------------- */

enum encap { ROCEV2_IPV4, ROCEV2_IPV6, ROCEV1, IB_LOCAL, IB_GLOBAL, ENCAP_COUNT };
static const char *const encap_names[ENCAP_COUNT] = {"RoCEv2/IPv4", "RoCEv2/IPv6", "RoCEv1",
                                                     "IB LNH 2", "IB LNH 3"};

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t gid_a[16] = {0xfe, 0x80, [15] = 0x0a}, gid_b[16] = {0xfe, 0x80, [15] = 0x0b};
static const uint8_t payload[7] = {'p', 'a', 'y', 'l', 'o', 'a', 'd'};

static void build(struct rdma_pkt *p, enum encap e, uint8_t opcode)
{
    memset(p, 0, sizeof *p);
    switch (e) {
    case ROCEV2_IPV4:
        p->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
        p->ip.ttl = 64;
        p->ip.flags = 2; /* don't fragment */
        memcpy(p->ip.src, (const uint8_t[4]){10, 0, 0, 1}, 4);
        memcpy(p->ip.dst, (const uint8_t[4]){10, 0, 0, 2}, 4);
        break;
    case ROCEV2_IPV6:
        p->present = RDMA_HDR_ETH | RDMA_HDR_IPV6 | RDMA_HDR_UDP;
        p->ipv6.hlim = 64;
        p->ipv6.flow = 0xabcde;
        memcpy(p->ipv6.src, gid_a, 16);
        memcpy(p->ipv6.dst, gid_b, 16);
        break;
    case ROCEV1:
    case IB_GLOBAL:
        p->present = e == ROCEV1 ? RDMA_HDR_ETH | RDMA_HDR_GRH : RDMA_HDR_LRH | RDMA_HDR_GRH;
        p->grh.ipver = 6;
        p->grh.hoplmt = 64;
        p->grh.flowlabel = 0x12345;
        memcpy(p->grh.sgid, gid_a, 16);
        memcpy(p->grh.dgid, gid_b, 16);
        break;
    case IB_LOCAL:
        p->present = RDMA_HDR_LRH;
        break;
    case ENCAP_COUNT:
        break;
    }
    if (p->present & RDMA_HDR_ETH) {
        p->linktype = RDMA_LINKTYPE_ETHERNET;
        memcpy(p->eth.dst, mac_b, 6);
        memcpy(p->eth.src, mac_a, 6);
    } else {
        p->linktype = RDMA_LINKTYPE_INFINIBAND;
        p->lrh.sl = 3;
        p->lrh.dlid = 0x0010;
        p->lrh.slid = 0x0020;
    }
    p->udp.srcport = 0xc123;
    p->udp.dstport = RDMA_ROCEV2_UDP_PORT;

    rdma_pkt_set_opcode(p, opcode);
    p->bth.p_key = 0xffff;
    p->bth.destqp = 0x00abcd;
    p->bth.psn = 0x123456;
    p->bth.a = 1;
    p->rdeth.eecnxt = 0x000e0e;
    p->deth.q_key = 0x11223344;
    p->deth.srcqp = 0x000777;
    p->xrceth.xrcsrq = 0x000999;
    p->reth.va = 0x00007f0000001000;
    p->reth.r_key = 0x0000abcd;
    p->reth.dmalen = sizeof payload;
    p->atomiceth.va = 0x00007f0000002000;
    p->atomiceth.r_key = 0x0000dcba;
    p->atomiceth.swapdt = 0x0102030405060708;
    p->atomiceth.cmpdt = 0x1112131415161718;
    p->aeth.syndrome = 0x1f;
    p->aeth.msn = 0x000042;
    p->atomicacketh.origremdt = 0x2122232425262728;
    p->immdt.imm = 0xfeedface;
    p->ieth.r_key = 0x00001234;
    if (rdma_opcodes[opcode].flags & RDMA_OPF_PAYLOAD) {
        p->payload = payload;
        p->payload_len = sizeof payload;
    }
}

START_TEST(every_opcode_encodes)
{
    const enum encap e = (enum encap)_i;
    size_t encoded = 0;
    for (unsigned code = 0; code < 256; code++) {
        const struct rdma_opcode_info *o = &rdma_opcodes[code];
        if (!o->name)
            continue;
        char what[96];
        snprintf(what, sizeof what, "%s over %s", o->name, encap_names[e]);
        struct rdma_pkt want, got;
        build(&want, e, (uint8_t)code);
        uint8_t out[UNIT_FRAME_MAX];
        size_t len;
        enum rdma_status st = rdma_encode(&want, out, sizeof out, &len);
        ck_assert_msg(st == RDMA_OK, "%s: encode: %s", what, rdma_status_name(st));
        st = unit_decode(want.linktype, out, len, len, &got);
        ck_assert_msg(st == RDMA_OK, "%s: decode: %s (%s)", what, rdma_status_name(st),
                      got.reason ? got.reason : "");
        static const uint8_t protos[ENCAP_COUNT] = {RDMA_PROTO_ROCEV2, RDMA_PROTO_ROCEV2,
                                                    RDMA_PROTO_ROCEV1, RDMA_PROTO_IB,
                                                    RDMA_PROTO_IB};
        ck_assert_uint_eq(got.proto, protos[e]);
        ck_assert_ptr_eq(got.op, o);
        ck_assert_msg(got.present == want.present, "%s: headers %#x, built %#x", what,
                      got.present, want.present);
        ck_assert_msg(got.icrc.present && got.icrc.ok, "%s: ICRC", what);
        ck_assert_msg(got.vcrc.present == (protos[e] == RDMA_PROTO_IB), "%s: VCRC present", what);
        if (got.vcrc.present)
            ck_assert_msg(got.vcrc.ok, "%s: VCRC", what);
        ck_assert_uint_eq(got.payload_len, want.payload_len);
        if (want.payload)
            ck_assert_mem_eq(got.payload, payload, sizeof payload);
        /* What the encoder derives: the pad count to a 4-byte boundary. */
        want.bth.padcnt = (uint8_t)((4 - want.payload_len % 4) % 4);
        unit_assert_headers_eq(&want, &got, RDMA_HDR_BTH | o->headers, what);
        if (want.present & RDMA_HDR_ETH) {
            ck_assert_mem_eq(got.eth.dst, mac_b, 6);
            ck_assert_mem_eq(got.eth.src, mac_a, 6);
        } else {
            ck_assert_uint_eq(got.lrh.sl, 3);
            ck_assert_uint_eq(got.lrh.dlid, 0x0010);
            ck_assert_uint_eq(got.lrh.slid, 0x0020);
            ck_assert_uint_eq(got.lrh.lnh, e == IB_GLOBAL ? 3 : 2);
        }
        if (want.present & RDMA_HDR_GRH) {
            ck_assert_mem_eq(got.grh.sgid, gid_a, 16);
            ck_assert_uint_eq(got.grh.flowlabel, 0x12345);
            ck_assert_uint_eq(got.grh.nxthdr, 0x1b);
        }
        unit_assert_roundtrip(want.linktype, out, len, what);
        encoded++;
    }
    ck_assert_uint_eq(encoded, 23 + 12 + 22 + 2 + 1 + 23);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("opcodes");
    TCase *tc = tcase_create("table");
    tcase_add_loop_test(tc, headers_agree_with_flags, 0, 256);
    tcase_add_test(tc, opcodes_per_transport);
    tcase_add_test(tc, set_opcode_replaces_headers);
    suite_add_tcase(s, tc);
    tc = tcase_create("encode");
    tcase_add_loop_test(tc, every_opcode_encodes, 0, ENCAP_COUNT);
    suite_add_tcase(s, tc);
    return check_run(s);
}
