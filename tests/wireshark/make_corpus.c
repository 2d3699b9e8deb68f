/* make_corpus.c - write the captures the tshark differential test reads.
 *
 * usage: make_corpus DIR
 *
 * Builds every frame through the public codec API only (rdma_pkt_set_opcode,
 * the header structs, rdma_encode) and writes one pcap per link type into
 * DIR, since a pcap file holds a single link type:
 *
 *   ethernet.pcap    (1)   RoCEv2/IPv4 and IPv6 untagged, 802.1Q, 802.1ad+802.1Q,
 *                          UDP checksum 0 (IPv4) and computed; RoCEv1
 *                          (EtherType 0x8915); 802.1Qbb PFC and 802.3x PAUSE
 *   linux-sll.pcap   (113) RoCEv2/IPv4, RoCEv2/IPv6, RoCEv1
 *   linux-sll2.pcap  (276) RoCEv2/IPv6, RoCEv2/IPv4, RoCEv1
 *   infiniband.pcap  (247) native InfiniBand, LRH with LNH 2 (local) and 3 (GRH)
 *   erf.pcap         (197) the same inside ERF records of type 21
 *
 * Every carrier above holds one frame per valid opcode of rdma_opcodes[]
 * (CNP only where it exists, over RoCEv2), every AETH syndrome kind and NAK
 * code on the Acknowledge opcodes, and a CM REQ/MRA/REJ/REP/RTU/DREQ/DREP MAD
 * each. Field values come from a fixed-seed generator, so runs are
 * identical while PSNs, QPNs, keys and addresses change from frame to frame,
 * 64-bit values have their top bit set and payload lengths walk through pad
 * counts 0..3: a field written to the wrong bits cannot pass by luck.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_codec.h"

#define FRAME_MAX 4096
#define MAX_PAYLOAD 300
#define UD_QP1 1              /* general services interface: MADs */
#define GSI_QKEY 0x80010000u  /* the well-known Q_Key of QP1 */
#define MAD_CLASS_VERSION_CM 2
#define MAD_METHOD_SEND 0x03
#define OPCODE_UD_SEND_ONLY 0x64
#define ARPHRD_ETHER 1
#define ERF_FLAGS_VARLEN 0x04

/* splitmix64: a small, well-mixed generator; one fixed seed per file. */
struct rng {
    uint64_t state;
};

static uint64_t rnd64(struct rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t rnd_bits(struct rng *r, unsigned bits)
{
    return (uint32_t)(rnd64(r) >> (64 - bits));
}

/* A value in [lo, hi]. */
static uint32_t rnd_range(struct rng *r, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(rnd64(r) % ((uint64_t)hi - lo + 1));
}

/* 64-bit values with the top bit set, so a sign or width slip shows. */
static uint64_t rnd_top64(struct rng *r)
{
    return rnd64(r) | UINT64_C(1) << 63;
}

static void rnd_bytes(struct rng *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd_bits(r, 8);
}

/* A unicast, locally administered MAC address. */
static void rnd_mac(struct rng *r, uint8_t mac[6])
{
    rnd_bytes(r, mac, 6);
    mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);
}

/* A unique local IPv6 address (fd00::/8), also used for GIDs. */
static void rnd_ula(struct rng *r, uint8_t addr[16])
{
    rnd_bytes(r, addr, 16);
    addr[0] = 0xfd;
}

/* How a transport packet travels. */
enum network {
    NET_IPV4,      /* RoCEv2 over IPv4 */
    NET_IPV6,      /* RoCEv2 over IPv6 */
    NET_ROCEV1,    /* GRH directly after the link layer */
    NET_IB_LOCAL,  /* LRH, LNH 2 */
    NET_IB_GLOBAL, /* LRH and GRH, LNH 3 */
};

struct carrier {
    enum network net;
    uint16_t outer_tpid; /* 0: untagged; 0x8100: one 802.1Q tag; 0x88a8: 802.1ad + 802.1Q */
    /* RoCEv2: compute the UDP checksum instead of leaving it 0. Over IPv6 it
     * is always computed: RFC 8200 section 8.1 forbids a zero UDP checksum
     * there, and tshark rightly reports one as an error. */
    bool udp_checksum;
};

struct corpus_file {
    const char *name;
    unsigned linktype;
    const struct carrier *carriers;
    size_t ncarriers;
    bool mac_control; /* add PFC and PAUSE frames */
};

static const struct carrier ethernet_carriers[] = {
    {NET_IPV4, 0, false},
    {NET_IPV4, RDMA_ETHERTYPE_VLAN, true},
    {NET_IPV6, RDMA_ETHERTYPE_QINQ, true},
    {NET_IPV6, 0, true},
    {NET_ROCEV1, 0, false},
    {NET_ROCEV1, RDMA_ETHERTYPE_VLAN, false},
    {NET_IPV4, RDMA_ETHERTYPE_QINQ, false},
};
static const struct carrier sll_carriers[] = {
    {NET_IPV4, 0, true},
    {NET_IPV6, 0, true},
    {NET_ROCEV1, 0, false},
};
static const struct carrier sll2_carriers[] = {
    {NET_IPV6, 0, true},
    {NET_IPV4, 0, false},
    {NET_ROCEV1, 0, false},
};
static const struct carrier ib_carriers[] = {
    {NET_IB_LOCAL, 0, false},
    {NET_IB_GLOBAL, 0, false},
};

#define FILE_ENTRY(name, linktype, carriers, mac_control)                      \
    {name, linktype, carriers, sizeof carriers / sizeof carriers[0], mac_control}
static const struct corpus_file corpus[] = {
    FILE_ENTRY("ethernet.pcap", RDMA_LINKTYPE_ETHERNET, ethernet_carriers, true),
    FILE_ENTRY("linux-sll.pcap", RDMA_LINKTYPE_LINUX_SLL, sll_carriers, false),
    FILE_ENTRY("linux-sll2.pcap", RDMA_LINKTYPE_LINUX_SLL2, sll2_carriers, false),
    FILE_ENTRY("infiniband.pcap", RDMA_LINKTYPE_INFINIBAND, ib_carriers, false),
    FILE_ENTRY("erf.pcap", RDMA_LINKTYPE_ERF, ib_carriers, false),
};

/* AETH syndromes (IBA 9.7.5.1): kind in bits 6-5, value in bits 4-0. */
#define SYNDROME(kind, value) (uint8_t)((kind) << 5 | (value))
static const uint8_t syndromes[] = {
    SYNDROME(RDMA_AETH_ACK, 0),
    SYNDROME(RDMA_AETH_ACK, 13),
    SYNDROME(RDMA_AETH_ACK, 31), /* credit count "invalid": end-to-end credits unused */
    SYNDROME(RDMA_AETH_RNR_NAK, 0),
    SYNDROME(RDMA_AETH_RNR_NAK, 1),
    SYNDROME(RDMA_AETH_RNR_NAK, 18),
    SYNDROME(RDMA_AETH_RNR_NAK, 31),
#define NAK_SYNDROME(name, v, str) SYNDROME(RDMA_AETH_NAK, RDMA_NAK_##name),
    RDMA_NAK_CODES(NAK_SYNDROME)
#undef NAK_SYNDROME
};
#define NSYNDROMES (sizeof syndromes / sizeof syndromes[0])

static const uint16_t cm_messages[] = {
#define CM_ATTR(name, id, member, type, fields) RDMA_CM_##name,
    RDMA_CM_MESSAGES(CM_ATTR)
#undef CM_ATTR
};

/* The state of one output file while frames are added. */
struct writer {
    const struct corpus_file *file;
    pcap_dumper_t *dumper;
    struct rng rng;
    unsigned frames;
    unsigned payload_step; /* walks payload lengths through every pad count */
    uint8_t payload[MAX_PAYLOAD];
};

static void write_frame(struct writer *w, const struct rdma_pkt *pkt)
{
    uint8_t frame[FRAME_MAX];
    size_t len;
    enum rdma_status st = rdma_encode(pkt, frame, sizeof frame, &len);
    if (st != RDMA_OK) {
        fprintf(stderr, "make_corpus: %s frame %u: rdma_encode: %s\n", w->file->name,
                w->frames + 1, rdma_status_name(st));
        exit(1);
    }
    /* Fixed timestamps, one millisecond apart, keep the files reproducible. */
    struct pcap_pkthdr h = {.caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len};
    h.ts.tv_sec = 1700000000 + w->frames / 1000;
    h.ts.tv_usec = (w->frames % 1000) * 1000;
    pcap_dump((u_char *)w->dumper, &h, frame);
    w->frames++;
}

static void fill_link(struct writer *w, struct rdma_pkt *pkt, const struct carrier *c)
{
    struct rng *r = &w->rng;
    pkt->linktype = (uint16_t)w->file->linktype;
    switch (pkt->linktype) {
    case RDMA_LINKTYPE_ETHERNET:
        pkt->present |= RDMA_HDR_ETH;
        rnd_mac(r, pkt->eth.dst);
        rnd_mac(r, pkt->eth.src);
        pkt->eth.type = c->outer_tpid;
        break;
    case RDMA_LINKTYPE_LINUX_SLL:
        pkt->present |= RDMA_HDR_SLL;
        pkt->sll.pkttype = rnd_bits(r, 1) ? 4 : 0; /* sent by us / to us */
        pkt->sll.hatype = ARPHRD_ETHER;
        pkt->sll.halen = 6;
        rnd_mac(r, pkt->sll.src);
        break;
    case RDMA_LINKTYPE_LINUX_SLL2:
        pkt->present |= RDMA_HDR_SLL2;
        pkt->sll2.ifindex = rnd_range(r, 1, 4096);
        pkt->sll2.hatype = ARPHRD_ETHER;
        pkt->sll2.pkttype = rnd_bits(r, 1) ? 4 : 0;
        pkt->sll2.halen = 6;
        rnd_mac(r, pkt->sll2.src);
        break;
    case RDMA_LINKTYPE_ERF:
        pkt->present |= RDMA_HDR_ERF;
        rnd_bytes(r, pkt->erf.ts, sizeof pkt->erf.ts);
        pkt->erf.type = RDMA_ERF_TYPE_INFINIBAND;
        pkt->erf.flags = (uint8_t)(ERF_FLAGS_VARLEN | rnd_bits(r, 2)); /* port 0..3 */
        pkt->erf.lctr = (uint16_t)rnd_bits(r, 16);
        break;
    }
    pkt->nvlan = c->outer_tpid == RDMA_ETHERTYPE_QINQ ? 2 : c->outer_tpid ? 1 : 0;
    for (unsigned i = 0; i < pkt->nvlan; i++) {
        pkt->vlan[i].priority = (uint8_t)rnd_bits(r, 3);
        pkt->vlan[i].dei = (uint8_t)rnd_bits(r, 1);
        pkt->vlan[i].id = (uint16_t)rnd_range(r, 1, 4094);
        pkt->vlan[i].etype = RDMA_ETHERTYPE_VLAN; /* the tag after an 802.1ad one */
    }
}

static void fill_grh(struct rng *r, struct rdma_grh *grh)
{
    grh->ipver = 6;
    grh->tclass = (uint8_t)rnd_bits(r, 8);
    grh->flowlabel = rnd_bits(r, 20);
    grh->hoplmt = (uint8_t)rnd_range(r, 1, 255);
    rnd_ula(r, grh->sgid);
    rnd_ula(r, grh->dgid);
}

static void fill_network(struct writer *w, struct rdma_pkt *pkt, const struct carrier *c)
{
    struct rng *r = &w->rng;
    switch (c->net) {
    case NET_IPV4:
        pkt->present |= RDMA_HDR_IP | RDMA_HDR_UDP;
        pkt->proto = RDMA_PROTO_ROCEV2;
        pkt->ip.dsfield_dscp = (uint8_t)rnd_bits(r, 6);
        pkt->ip.dsfield_ecn = (uint8_t)rnd_bits(r, 2);
        pkt->ip.id = (uint16_t)rnd_bits(r, 16);
        pkt->ip.flags = rnd_bits(r, 1) ? 2 : 0; /* DF or nothing, never a fragment */
        pkt->ip.ttl = (uint8_t)rnd_range(r, 1, 255);
        /* 10.0.0.0/8, private and never broadcast or multicast */
        pkt->ip.src[0] = pkt->ip.dst[0] = 10;
        rnd_bytes(r, pkt->ip.src + 1, 3);
        rnd_bytes(r, pkt->ip.dst + 1, 3);
        break;
    case NET_IPV6:
        pkt->present |= RDMA_HDR_IPV6 | RDMA_HDR_UDP;
        pkt->proto = RDMA_PROTO_ROCEV2;
        pkt->ipv6.tclass = (uint8_t)rnd_bits(r, 8);
        pkt->ipv6.flow = rnd_bits(r, 20);
        pkt->ipv6.hlim = (uint8_t)rnd_range(r, 1, 255);
        rnd_ula(r, pkt->ipv6.src);
        rnd_ula(r, pkt->ipv6.dst);
        break;
    case NET_ROCEV1:
        pkt->present |= RDMA_HDR_GRH;
        pkt->proto = RDMA_PROTO_ROCEV1;
        fill_grh(r, &pkt->grh);
        break;
    case NET_IB_GLOBAL:
        pkt->present |= RDMA_HDR_GRH;
        fill_grh(r, &pkt->grh);
        /* fall through */
    case NET_IB_LOCAL:
        pkt->present |= RDMA_HDR_LRH;
        pkt->proto = RDMA_PROTO_IB;
        pkt->lrh.vl = (uint8_t)rnd_bits(r, 3); /* data VLs; VL15 is for SMPs */
        pkt->lrh.sl = (uint8_t)rnd_bits(r, 4);
        pkt->lrh.dlid = (uint16_t)rnd_range(r, 1, 0xbfff); /* unicast LIDs */
        pkt->lrh.slid = (uint16_t)rnd_range(r, 1, 0xbfff);
        break;
    }
    if (pkt->present & RDMA_HDR_UDP) {
        /* RoCEv2 source ports carry flow entropy (annex A17), 0xc000 up. */
        pkt->udp.srcport = (uint16_t)rnd_range(r, 0xc000, 0xffff);
        pkt->udp.dstport = RDMA_ROCEV2_UDP_PORT;
        pkt->udp.checksum = c->udp_checksum; /* nonzero: rdma_encode computes it */
    }
}

/* Everything before the BTH, and a BTH with fresh values. */
static void start_packet(struct writer *w, struct rdma_pkt *pkt, const struct carrier *c)
{
    memset(pkt, 0, sizeof *pkt);
    fill_link(w, pkt, c);
    fill_network(w, pkt, c);
    struct rng *r = &w->rng;
    pkt->bth.se = (uint8_t)rnd_bits(r, 1);
    pkt->bth.m = (uint8_t)rnd_bits(r, 1);
    pkt->bth.p_key = (uint16_t)rnd_bits(r, 16) | 0x8000; /* full membership */
    pkt->bth.fecn = (uint8_t)rnd_bits(r, 1);
    pkt->bth.becn = (uint8_t)rnd_bits(r, 1);
    pkt->bth.destqp = rnd_range(r, 2, 0xffffff); /* QP0/QP1 would mean a MAD */
    pkt->bth.a = (uint8_t)rnd_bits(r, 1);
    pkt->bth.psn = rnd_bits(r, 24);
}

static void fill_ext_headers(struct writer *w, struct rdma_pkt *pkt, uint8_t syndrome)
{
    struct rng *r = &w->rng;
    pkt->rdeth.eecnxt = rnd_bits(r, 24);
    pkt->deth.q_key = (uint32_t)rnd_bits(r, 32);
    pkt->deth.srcqp = rnd_range(r, 2, 0xffffff);
    pkt->xrceth.xrcsrq = rnd_bits(r, 24);
    pkt->reth.va = rnd_top64(r);
    pkt->reth.r_key = (uint32_t)rnd_bits(r, 32);
    pkt->reth.dmalen = (uint32_t)rnd_bits(r, 32);
    pkt->atomiceth.va = rnd_top64(r) & ~UINT64_C(7); /* atomics are 8-byte aligned */
    pkt->atomiceth.r_key = (uint32_t)rnd_bits(r, 32);
    pkt->atomiceth.swapdt = rnd_top64(r);
    pkt->atomiceth.cmpdt = rnd_top64(r);
    pkt->aeth.syndrome = syndrome;
    pkt->aeth.msn = rnd_bits(r, 24);
    pkt->atomicacketh.origremdt = rnd_top64(r);
    pkt->immdt.imm = (uint32_t)rnd_bits(r, 32);
    pkt->ieth.r_key = (uint32_t)rnd_bits(r, 32);
}

/* Payload lengths cycle through every residue mod 4, so every pad count. */
static void fill_payload(struct writer *w, struct rdma_pkt *pkt)
{
    const struct rdma_opcode_info *op = &rdma_opcodes[pkt->bth.opcode];
    if (op->fixed_payload) {
        memset(w->payload, 0, op->fixed_payload); /* CNP: reserved, zero */
        pkt->payload = w->payload;
        return;
    }
    if (!(op->flags & RDMA_OPF_PAYLOAD))
        return;
    unsigned step = w->payload_step++;
    pkt->payload_len = 4 * rnd_range(&w->rng, 0, MAX_PAYLOAD / 4 - 1) + step % 4;
    rnd_bytes(&w->rng, w->payload, pkt->payload_len);
    pkt->payload = w->payload;
}

static void write_opcode(struct writer *w, const struct carrier *c, uint8_t opcode,
                         uint8_t syndrome)
{
    struct rdma_pkt pkt;
    start_packet(w, &pkt, c);
    rdma_pkt_set_opcode(&pkt, opcode);
    fill_ext_headers(w, &pkt, syndrome);
    fill_payload(w, &pkt);
    write_frame(w, &pkt);
}

static void fill_cm(struct rng *r, struct rdma_cm *cm)
{
    switch (cm->attr) {
    case RDMA_CM_REQ: {
        struct rdma_cm_req *q = &cm->u.req;
        q->localcommid = (uint32_t)rnd_bits(r, 32);
        q->serviceid = rnd_top64(r);
        q->localcaguid = rnd_top64(r);
        q->localqkey = (uint32_t)rnd_bits(r, 32);
        q->localqpn = rnd_bits(r, 24);
        q->responderres = (uint8_t)rnd_bits(r, 8);
        q->localeecn = rnd_bits(r, 24);
        q->initdepth = (uint8_t)rnd_bits(r, 8);
        q->remoteeecn = rnd_bits(r, 24);
        q->remoteresptout = (uint8_t)rnd_bits(r, 5);
        q->transpsvctype = (uint8_t)rnd_bits(r, 2);
        q->e2eflowctrl = (uint8_t)rnd_bits(r, 1);
        q->startpsn = rnd_bits(r, 24);
        q->localresptout = (uint8_t)rnd_bits(r, 5);
        q->retrcount = (uint8_t)rnd_bits(r, 3);
        q->pkey = (uint16_t)rnd_bits(r, 16);
        q->pppmtu = (uint8_t)rnd_range(r, 1, 5);
        q->rdcexist = (uint8_t)rnd_bits(r, 1);
        q->rnrretrcount = (uint8_t)rnd_bits(r, 3);
        q->maxcmretr = (uint8_t)rnd_bits(r, 4);
        q->srq = (uint8_t)rnd_bits(r, 1);
        q->ext_transport = (uint8_t)rnd_bits(r, 3);
        q->prim_locallid = (uint16_t)rnd_bits(r, 16);
        q->prim_remotelid = (uint16_t)rnd_bits(r, 16);
        rnd_ula(r, q->prim_localgid);
        rnd_ula(r, q->prim_remotegid);
        break;
    }
    case RDMA_CM_REP: {
        struct rdma_cm_rep *p = &cm->u.rep;
        p->localcommid = (uint32_t)rnd_bits(r, 32);
        p->remotecommid = (uint32_t)rnd_bits(r, 32);
        p->localqkey = (uint32_t)rnd_bits(r, 32);
        p->localqpn = rnd_bits(r, 24);
        p->localeecn = rnd_bits(r, 24);
        p->startpsn = rnd_bits(r, 24);
        p->respres = (uint8_t)rnd_bits(r, 8);
        p->initdepth = (uint8_t)rnd_bits(r, 8);
        p->tgtackdelay = (uint8_t)rnd_bits(r, 5);
        p->failoveracc = (uint8_t)rnd_bits(r, 2);
        p->e2eflowctrl = (uint8_t)rnd_bits(r, 1);
        p->rnrretrcount = (uint8_t)rnd_bits(r, 3);
        p->srq = (uint8_t)rnd_bits(r, 1);
        p->localcaguid = rnd_top64(r);
        break;
    }
    case RDMA_CM_REJ: {
        struct rdma_cm_rej *j = &cm->u.rej;
        j->localcommid = (uint32_t)rnd_bits(r, 32);
        j->remotecommid = (uint32_t)rnd_bits(r, 32);
        j->msgrej = (uint8_t)rnd_range(r, 0, 2); /* REQ, REP or other */
        j->rejinfolen = 0;
        j->reason = (uint16_t)rnd_range(r, 1, 33); /* a nonzero rejection reason */
        break;
    }
    case RDMA_CM_DREQ:
        cm->u.dreq.localcommid = (uint32_t)rnd_bits(r, 32);
        cm->u.dreq.remotecommid = (uint32_t)rnd_bits(r, 32);
        cm->u.dreq.remoteqpneecn = rnd_bits(r, 24);
        break;
    default: /* RTU, DREP, MRA: the communication IDs */
        cm->u.rtu.localcommid = (uint32_t)rnd_bits(r, 32);
        cm->u.rtu.remotecommid = (uint32_t)rnd_bits(r, 32);
    }
}

/* A CM message: a MAD sent as UD SEND Only to QP1. */
static void write_cm(struct writer *w, const struct carrier *c, uint16_t attr)
{
    struct rdma_pkt pkt;
    struct rng *r = &w->rng;
    start_packet(w, &pkt, c);
    rdma_pkt_set_opcode(&pkt, OPCODE_UD_SEND_ONLY);
    pkt.present |= RDMA_HDR_MAD | RDMA_HDR_CM;
    pkt.bth.destqp = UD_QP1;
    pkt.deth.q_key = GSI_QKEY;
    pkt.deth.srcqp = UD_QP1;
    pkt.mad.baseversion = 1;
    pkt.mad.mgmtclass = RDMA_MAD_CLASS_CM;
    pkt.mad.classversion = MAD_CLASS_VERSION_CM;
    pkt.mad.method = MAD_METHOD_SEND;
    pkt.mad.transactionid = rnd_top64(r);
    pkt.mad.attributeid = attr;
    pkt.cm.attr = attr;
    fill_cm(r, &pkt.cm);
    write_frame(w, &pkt);
}

static bool is_rocev2(const struct carrier *c)
{
    return c->net == NET_IPV4 || c->net == NET_IPV6;
}

static void write_carrier(struct writer *w, const struct carrier *c)
{
    for (unsigned opcode = 0; opcode < 256; opcode++) {
        const struct rdma_opcode_info *op = &rdma_opcodes[opcode];
        if (!op->name || (op->transport == RDMA_TRANSPORT_CNP && !is_rocev2(c)))
            continue;
        if (op->flags & RDMA_OPF_ACK) {
            for (size_t i = 0; i < NSYNDROMES; i++)
                write_opcode(w, c, (uint8_t)opcode, syndromes[i]);
        } else {
            write_opcode(w, c, (uint8_t)opcode, syndromes[w->frames % NSYNDROMES]);
        }
    }
    for (size_t i = 0; i < sizeof cm_messages / sizeof cm_messages[0]; i++)
        write_cm(w, c, cm_messages[i]);
}

/* 802.1Qbb PFC with assorted class-enable vectors, then 802.3x PAUSE. */
static void write_mac_control(struct writer *w)
{
    static const uint8_t pfc_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
    static const uint16_t enable_vectors[] = {0x01, 0x08, 0x80, 0xa5, 0xff};
    struct rng *r = &w->rng;
    for (size_t i = 0; i < sizeof enable_vectors / sizeof enable_vectors[0] + 2; i++) {
        struct rdma_pkt pkt;
        memset(&pkt, 0, sizeof pkt);
        pkt.linktype = RDMA_LINKTYPE_ETHERNET;
        pkt.present = RDMA_HDR_ETH | RDMA_HDR_PFC;
        memcpy(pkt.eth.dst, pfc_dst, sizeof pfc_dst);
        rnd_mac(r, pkt.eth.src);
        bool pause = i >= sizeof enable_vectors / sizeof enable_vectors[0];
        pkt.pfc.opcode = pause ? RDMA_MAC_CONTROL_PAUSE : RDMA_MAC_CONTROL_PFC;
        pkt.pfc.enbv = pause ? 0 : enable_vectors[i];
        for (int k = 0; k < (pause ? 1 : 8); k++)
            if (pause || (pkt.pfc.enbv >> k & 1))
                pkt.pfc.pause_time[k] = (uint16_t)rnd_range(r, 1, 0xffff);
        write_frame(w, &pkt);
    }
}

static unsigned write_file(const char *dir, const struct corpus_file *f, uint64_t seed)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    pcap_t *p = pcap_open_dead((int)f->linktype, FRAME_MAX);
    if (!p) {
        fprintf(stderr, "make_corpus: pcap_open_dead(%u) failed\n", f->linktype);
        exit(1);
    }
    struct writer w = {.file = f, .rng = {seed}};
    w.dumper = pcap_dump_open(p, path);
    if (!w.dumper) {
        fprintf(stderr, "make_corpus: %s: %s\n", path, pcap_geterr(p));
        exit(1);
    }
    for (size_t i = 0; i < f->ncarriers; i++)
        write_carrier(&w, &f->carriers[i]);
    if (f->mac_control)
        write_mac_control(&w);
    if (pcap_dump_flush(w.dumper)) {
        fprintf(stderr, "make_corpus: %s: write failed\n", path);
        exit(1);
    }
    pcap_dump_close(w.dumper);
    pcap_close(p);
    return w.frames;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        unsigned n = write_file(argv[1], &corpus[i], UINT64_C(0x52444d41) + i);
        printf("%s/%s %u\n", argv[1], corpus[i].name, n);
    }
    return 0;
}
