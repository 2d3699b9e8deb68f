/* traffic.c - the RoCEv2 traffic mix of traffic.h.
 *
 * Sequence numbers follow the reliable connection service (IBA vol. 1 rel.
 * 1.4, 9.7): every request packet takes the next PSN; a READ Request takes as
 * many PSNs as its response has packets, and the response packets carry them;
 * an ACK carries the PSN of the packet it acknowledges and the responder's
 * MSN, which counts completed messages. The last request packet of a message
 * asks for an acknowledgement (BTH AckReq), as Linux rxe does.
 */
#include "traffic.h"

#include <stdlib.h>
#include <string.h>

#include "rdma_codec.h"

/* RC opcodes (IBA table 38). */
enum {
    OP_SEND_FIRST = 0x00,
    OP_SEND_MIDDLE = 0x01,
    OP_SEND_LAST_IMM = 0x03,
    OP_SEND_ONLY_IMM = 0x05,
    OP_WRITE_FIRST = 0x06,
    OP_WRITE_MIDDLE = 0x07,
    OP_WRITE_LAST = 0x08,
    OP_WRITE_ONLY = 0x0a,
    OP_READ_REQUEST = 0x0c,
    OP_READ_RESPONSE_FIRST = 0x0d,
    OP_READ_RESPONSE_MIDDLE = 0x0e,
    OP_READ_RESPONSE_LAST = 0x0f,
    OP_READ_RESPONSE_ONLY = 0x10,
    OP_ACK = 0x11,
    OP_CNP = 0x81,
};

#define MAX_PACKETS 4 /* packets of one message */
#define MTU_LIMIT 4096
#define PATTERN_LEN (2 * MTU_LIMIT)
#define FRAME_CAP (MTU_LIMIT + 256)
#define PSN_MASK 0xffffffu
#define DEFAULT_P_KEY 0xffff
#define AETH_ACK_UNLIMITED 0x1f /* ACK, credit count 31: no credit limit */
#define HOSTS 32                /* hosts on each side */

enum { REQUESTER, RESPONDER };

struct traffic_qp {
    uint32_t qpn[2];     /* at the requester and at the responder */
    uint16_t sport[2];   /* UDP source port each side sends from */
    uint8_t ip[2][4];
    uint8_t mac[2][6];
    uint32_t psn;        /* the requester's next PSN */
    uint32_t msn;        /* the responder's message sequence number */
    uint32_t mtu;
    uint32_t r_key;
    uint64_t va;
};

/* splitmix64: small, fast, and the same sequence on every platform. */
static uint64_t next_random(struct traffic *t)
{
    uint64_t z = (t->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform enough in [lo, hi] for traffic shapes. */
static uint32_t random_in(struct traffic *t, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(next_random(t) % ((uint64_t)hi - lo + 1));
}

static void init_qp(struct traffic *t, struct traffic_qp *qp, unsigned index)
{
    unsigned host[2] = {index % HOSTS, (index / HOSTS) % HOSTS};
    for (int side = 0; side < 2; side++) {
        qp->qpn[side] = random_in(t, 0x12, PSN_MASK);
        /* rxe folds the QPN into the dynamic port range the same way. */
        qp->sport[side] = (uint16_t)(0xc000 | (qp->qpn[side] & 0x3fff));
        uint8_t ip[4] = {192, 168, (uint8_t)(1 + side), (uint8_t)(1 + host[side])};
        uint8_t mac[6] = {0x02, 0x00, ip[0], ip[1], ip[2], ip[3]};
        memcpy(qp->ip[side], ip, sizeof ip);
        memcpy(qp->mac[side], mac, sizeof mac);
    }
    qp->psn = random_in(t, 0, PSN_MASK);
    qp->msn = 0;
    unsigned steps = 0;
    while ((t->cfg.mtu_min << steps) < t->cfg.mtu_max)
        steps++;
    qp->mtu = t->cfg.mtu_min << random_in(t, 0, steps);
    qp->r_key = (uint32_t)next_random(t);
    qp->va = UINT64_C(0x7f0000000000) + (next_random(t) & UINT64_C(0xffffff000));
}

int traffic_init(struct traffic *t, const struct traffic_config *cfg)
{
    memset(t, 0, sizeof *t);
    if (!cfg->nqp || cfg->mtu_min < 256 || cfg->mtu_min > cfg->mtu_max || cfg->mtu_max > MTU_LIMIT)
        return -1;
    t->cfg = *cfg;
    t->rng = cfg->seed;
    t->qp = calloc(cfg->nqp, sizeof *t->qp);
    t->pattern = malloc(PATTERN_LEN);
    if (!t->qp || !t->pattern) {
        traffic_free(t);
        return -1;
    }
    for (size_t i = 0; i < PATTERN_LEN; i++)
        t->pattern[i] = (uint8_t)next_random(t);
    for (unsigned i = 0; i < cfg->nqp; i++)
        init_qp(t, &t->qp[i], i);
    return 0;
}

void traffic_free(struct traffic *t)
{
    free(t->qp);
    free(t->pattern);
    t->qp = NULL;
    t->pattern = NULL;
}

/* Ethernet, IPv4, UDP and BTH of one packet from `side` of the QP; the
 * caller fills the extended headers and the payload length. */
static void start_packet(struct traffic *t, const struct traffic_qp *qp, int side, uint8_t opcode,
                         uint32_t psn, struct rdma_pkt *pkt)
{
    int peer = !side;
    memset(pkt, 0, sizeof *pkt);
    pkt->linktype = RDMA_LINKTYPE_ETHERNET;
    pkt->present = RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP;
    memcpy(pkt->eth.dst, qp->mac[peer], 6);
    memcpy(pkt->eth.src, qp->mac[side], 6);
    pkt->ip.dsfield_dscp = 26; /* a common RoCE traffic class */
    pkt->ip.dsfield_ecn = 2;   /* ECT(0), so switches can mark congestion */
    pkt->ip.id = t->ip_id++;
    pkt->ip.flags = 2; /* don't fragment */
    pkt->ip.ttl = 64;
    memcpy(pkt->ip.src, qp->ip[side], 4);
    memcpy(pkt->ip.dst, qp->ip[peer], 4);
    pkt->udp.srcport = qp->sport[side];
    pkt->udp.dstport = RDMA_ROCEV2_UDP_PORT;
    rdma_pkt_set_opcode(pkt, opcode);
    pkt->bth.p_key = DEFAULT_P_KEY;
    pkt->bth.destqp = qp->qpn[peer];
    pkt->bth.psn = psn & PSN_MASK;
}

static int put_packet(struct traffic *t, struct rdma_pkt *pkt, traffic_emit_fn *emit, void *ctx)
{
    uint8_t frame[FRAME_CAP];
    size_t len;
    pkt->payload = t->pattern + random_in(t, 0, PATTERN_LEN - MTU_LIMIT);
    if (rdma_encode(pkt, frame, sizeof frame, &len) != RDMA_OK)
        return -1;
    emit(ctx, frame, len);
    return 0;
}

/* Opcode of packet k of n in a message: Only, or First, Middle..., Last. */
static uint8_t pick_opcode(unsigned k, unsigned n, const uint8_t ops[4])
{
    if (n == 1)
        return ops[3];
    return k == 0 ? ops[0] : k + 1 == n ? ops[2] : ops[1];
}

struct message {
    unsigned npackets;
    uint32_t last_len; /* payload of the last packet; the others carry an MTU */
    uint32_t len;
};

static struct message pick_length(struct traffic *t, const struct traffic_qp *qp)
{
    struct message m;
    uint32_t max_last = t->cfg.max_last && t->cfg.max_last < qp->mtu ? t->cfg.max_last : qp->mtu;
    uint32_t min_last = t->cfg.min_last < max_last ? t->cfg.min_last : max_last;
    m.npackets = random_in(t, 1, t->cfg.max_packets ? t->cfg.max_packets : MAX_PACKETS);
    m.last_len = random_in(t, min_last, max_last);
    m.len = (m.npackets - 1) * qp->mtu + m.last_len;
    return m;
}

static int ack(struct traffic *t, struct traffic_qp *qp, uint32_t psn, traffic_emit_fn *emit,
               void *ctx)
{
    struct rdma_pkt pkt;
    qp->msn = (qp->msn + 1) & PSN_MASK;
    start_packet(t, qp, RESPONDER, OP_ACK, psn, &pkt);
    pkt.aeth.syndrome = AETH_ACK_UNLIMITED;
    pkt.aeth.msn = qp->msn;
    return put_packet(t, &pkt, emit, ctx);
}

/* RDMA WRITE or SEND with immediate, then its ACK. */
static int request_message(struct traffic *t, struct traffic_qp *qp, const uint8_t ops[4],
                           traffic_emit_fn *emit, void *ctx)
{
    struct message m = pick_length(t, qp);
    uint64_t va = qp->va + random_in(t, 0, 255) * 64;
    struct rdma_pkt pkt;
    uint32_t psn = 0;
    for (unsigned k = 0; k < m.npackets; k++) {
        psn = qp->psn;
        qp->psn = (qp->psn + 1) & PSN_MASK;
        start_packet(t, qp, REQUESTER, pick_opcode(k, m.npackets, ops), psn, &pkt);
        /* The encoder writes only the headers the opcode carries. */
        pkt.reth.va = va;
        pkt.reth.r_key = qp->r_key;
        pkt.reth.dmalen = m.len;
        pkt.immdt.imm = (uint32_t)next_random(t);
        pkt.bth.a = k + 1 == m.npackets;
        pkt.payload_len = k + 1 == m.npackets ? m.last_len : qp->mtu;
        if (put_packet(t, &pkt, emit, ctx))
            return -1;
    }
    return ack(t, qp, psn, emit, ctx);
}

/* RDMA READ Request, then the READ Response packets, which take the PSNs
 * from the request's onwards. */
static int read_message(struct traffic *t, struct traffic_qp *qp, traffic_emit_fn *emit, void *ctx)
{
    static const uint8_t ops[4] = {OP_READ_RESPONSE_FIRST, OP_READ_RESPONSE_MIDDLE,
                                   OP_READ_RESPONSE_LAST, OP_READ_RESPONSE_ONLY};
    struct message m = pick_length(t, qp);
    struct rdma_pkt pkt;
    uint32_t psn = qp->psn;
    qp->psn = (qp->psn + m.npackets) & PSN_MASK;
    start_packet(t, qp, REQUESTER, OP_READ_REQUEST, psn, &pkt);
    pkt.reth.va = qp->va + random_in(t, 0, 255) * 64;
    pkt.reth.r_key = qp->r_key;
    pkt.reth.dmalen = m.len;
    pkt.bth.a = 1;
    if (put_packet(t, &pkt, emit, ctx))
        return -1;
    qp->msn = (qp->msn + 1) & PSN_MASK;
    for (unsigned k = 0; k < m.npackets; k++) {
        start_packet(t, qp, RESPONDER, pick_opcode(k, m.npackets, ops), psn + k, &pkt);
        pkt.aeth.syndrome = AETH_ACK_UNLIMITED;
        pkt.aeth.msn = qp->msn;
        pkt.payload_len = k + 1 == m.npackets ? m.last_len : qp->mtu;
        if (put_packet(t, &pkt, emit, ctx))
            return -1;
    }
    return 0;
}

/* A CNP (RoCEv2 Annex A17.9.3): opcode 0x81, BECN set, 16 zero bytes,
 * sent by the receiver of congestion-marked packets to their sender. */
static int cnp(struct traffic *t, struct traffic_qp *qp, traffic_emit_fn *emit, void *ctx)
{
    struct rdma_pkt pkt;
    uint8_t frame[FRAME_CAP];
    size_t len;
    start_packet(t, qp, RESPONDER, OP_CNP, 0, &pkt);
    pkt.bth.becn = 1;
    pkt.payload_len = 16; /* no payload pointer: zeros */
    if (rdma_encode(&pkt, frame, sizeof frame, &len) != RDMA_OK)
        return -1;
    emit(ctx, frame, len);
    return 0;
}

int traffic_message(struct traffic *t, traffic_emit_fn *emit, void *ctx)
{
    static const uint8_t write_ops[4] = {OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST,
                                         OP_WRITE_ONLY};
    static const uint8_t send_ops[4] = {OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST_IMM,
                                        OP_SEND_ONLY_IMM};
    struct traffic_qp *qp = &t->qp[random_in(t, 0, t->cfg.nqp - 1)];
    uint32_t kind = random_in(t, 0, 99);
    int rc = kind < 45   ? request_message(t, qp, write_ops, emit, ctx)
             : kind < 75 ? request_message(t, qp, send_ops, emit, ctx)
                         : read_message(t, qp, emit, ctx);
    if (!rc && t->cfg.cnp_percent && random_in(t, 0, 99) < t->cfg.cnp_percent)
        rc = cnp(t, qp, emit, ctx);
    return rc;
}
