/* ioam.c - the IOAM Pre-allocated Trace Option (RFC 9197 4.4) in an IPv6
 * Hop-by-Hop Options header (RFC 9486 3): sizes, encoding, decoding, and
 * a node adding its data in place. The layout is drawn in rdma_codec.h.
 *
 * One table says what each trace-type bit puts into a node's data (RFC 9197
 * 4.4.2.1 to 4.4.2.12): its octets and the one or two fields they hold,
 * most significant first. The encoder, the decoder and the in-place writer
 * all walk it.
 */
#include <string.h>

#include "ioam.h"
#include "rdma_bytes.h"

#define HBH_FIXED 2       /* next header, header extension length */
#define PADN_LEAD 2       /* PadN with no data: the option starts at 4n */
#define OPT_HDR 4         /* option type and length, reserved, IOAM option type */
#define TRACE_HDR 8       /* Namespace-ID ... reserved */
#define KNOWN_BITS 12     /* bits 0-11 have data of a fixed size */
#define IP6_HOPOPT 0
#define ETH_HDR 14
#define VLAN_TPID 0x8100
#define ETHERTYPE_IPV6 0x86dd
#define IPV6_HDR 40

static uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)rdma_get_be32(p) << 32 | rdma_get_be32(p + 4);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    rdma_put_be32(p, (uint32_t)(v >> 32));
    rdma_put_be32(p + 4, (uint32_t)v);
}

const char *const rdma_ioam_field_names[RDMA_IOAM_NFIELDS] = {
#define IOAM_NAME_(name) #name,
    RDMA_IOAM_FIELDS(IOAM_NAME_)
#undef IOAM_NAME_
};

static const struct ioam_bit {
    uint8_t octets;
    uint8_t nfields;
    uint8_t field[2];
    uint8_t width[2]; /* bits */
} bits[KNOWN_BITS] = {
    [0] = {4, 2, {RDMA_IOAM_hop_lim, RDMA_IOAM_node_id}, {8, 24}},
    [1] = {4, 2, {RDMA_IOAM_ingress_if, RDMA_IOAM_egress_if}, {16, 16}},
    [2] = {4, 1, {RDMA_IOAM_ts_sec}, {32}},
    [3] = {4, 1, {RDMA_IOAM_ts_frac}, {32}},
    [4] = {4, 1, {RDMA_IOAM_transit_delay}, {32}},
    [5] = {4, 1, {RDMA_IOAM_ns_data}, {32}},
    [6] = {4, 1, {RDMA_IOAM_queue_depth}, {32}},
    [7] = {4, 1, {RDMA_IOAM_checksum_comp}, {32}},
    [8] = {8, 2, {RDMA_IOAM_hop_lim_wide, RDMA_IOAM_node_id_wide}, {8, 56}},
    [9] = {8, 2, {RDMA_IOAM_ingress_if_wide, RDMA_IOAM_egress_if_wide}, {32, 32}},
    [10] = {8, 1, {RDMA_IOAM_ns_data_wide}, {64}},
    [11] = {4, 1, {RDMA_IOAM_buffer_occupancy}, {32}},
};

uint32_t rdma_ioam_node_bytes(uint32_t trace_type)
{
    if (trace_type & ~UINT32_C(0xfff000))
        return 0; /* undefined bits 12-21, the opaque state snapshot, reserved */
    uint32_t n = 0;
    for (unsigned b = 0; b < KNOWN_BITS; b++)
        if (trace_type & RDMA_IOAM_BIT(b))
            n += bits[b].octets;
    return n;
}

uint32_t rdma__ioam_fields(uint32_t trace_type)
{
    uint32_t m = 0;
    for (unsigned b = 0; b < KNOWN_BITS; b++)
        if (trace_type & RDMA_IOAM_BIT(b))
            for (unsigned f = 0; f < bits[b].nfields; f++)
                m |= 1u << bits[b].field[f];
    return m;
}

/* The trace's option data after the option header: trace header and slots. */
static uint32_t trace_bytes(const struct rdma_ioam *t, uint32_t node)
{
    return TRACE_HDR + (uint32_t)t->slots * node;
}

uint32_t rdma_ioam_hbh_bytes(const struct rdma_ioam *t)
{
    uint32_t node = rdma_ioam_node_bytes(t->trace_type);
    if (!node || node / 4 > 31 || t->nnodes > t->slots || t->slots > RDMA_IOAM_MAX_NODES ||
        (t->nnodes && !t->node && !t->data))
        return 0; /* NodeLen has 5 bits; filled nodes need their data */
    uint32_t n = HBH_FIXED + PADN_LEAD + OPT_HDR + trace_bytes(t, node);
    if ((uint32_t)(t->slots - t->nnodes) * node / 4 > 127 || OPT_HDR - 2 + trace_bytes(t, node) > 255)
        return 0; /* RemainingLen has 7 bits, the option length 8 */
    return (n + 7) & ~7u;
}

static void put_node(uint8_t *p, uint32_t trace_type, const struct rdma_ioam_node *n)
{
    for (unsigned b = 0; b < KNOWN_BITS; b++) {
        if (!(trace_type & RDMA_IOAM_BIT(b)))
            continue;
        const struct ioam_bit *d = &bits[b];
        uint64_t v = 0;
        for (unsigned f = 0; f < d->nfields; f++) {
            uint64_t x = n->v[d->field[f]];
            if (d->width[f] < 64)
                x &= (UINT64_C(1) << d->width[f]) - 1;
            v = d->width[f] < 64 ? v << d->width[f] | x : x;
        }
        if (d->octets == 8)
            put_be64(p, v);
        else
            rdma_put_be32(p, (uint32_t)v);
        p += d->octets;
    }
}

static void get_node(const uint8_t *p, uint32_t trace_type, struct rdma_ioam_node *n)
{
    memset(n, 0, sizeof *n);
    for (unsigned b = 0; b < KNOWN_BITS; b++) {
        if (!(trace_type & RDMA_IOAM_BIT(b)))
            continue;
        const struct ioam_bit *d = &bits[b];
        uint64_t v = d->octets == 8 ? get_be64(p) : (uint64_t)rdma_get_be32(p);
        unsigned shift = (unsigned)d->octets * 8;
        for (unsigned f = 0; f < d->nfields; f++) {
            shift -= d->width[f];
            n->v[d->field[f]] = d->width[f] < 64 ? v >> shift & ((UINT64_C(1) << d->width[f]) - 1) : v;
        }
        p += d->octets;
    }
}

void rdma_ioam_node_get(const struct rdma_ioam *t, unsigned i, struct rdma_ioam_node *n)
{
    if (t->node)
        *n = t->node[i];
    else
        get_node(t->data + (size_t)i * rdma_ioam_node_bytes(t->trace_type), t->trace_type, n);
}

uint32_t rdma__ioam_put(uint8_t *p, const struct rdma_ioam *t, uint8_t next)
{
    uint32_t len = rdma_ioam_hbh_bytes(t), node = rdma_ioam_node_bytes(t->trace_type);
    if (!len)
        return 0;
    memset(p, 0, len);
    p[0] = next;
    p[1] = (uint8_t)(len / 8 - 1);
    p[2] = 1; /* PadN, no data */
    uint8_t *o = p + HBH_FIXED + PADN_LEAD;
    o[0] = RDMA_IOAM_OPTION;
    o[1] = (uint8_t)(OPT_HDR - 2 + trace_bytes(t, node));
    o[3] = RDMA_IOAM_PREALLOC;
    uint8_t *h = o + OPT_HDR;
    uint32_t remaining = (uint32_t)(t->slots - t->nnodes) * node / 4;
    rdma_put_be16(h, t->ns);
    rdma_put_be16(h + 2, (uint16_t)((node / 4) << 11 | (t->flags & 15u) << 7 | remaining));
    rdma_put_be32(h + 4, t->trace_type << 8);
    uint8_t *d = h + TRACE_HDR + remaining * 4;
    if (t->node) {
        for (unsigned i = 0; i < t->nnodes; i++, d += node)
            put_node(d, t->trace_type, &t->node[i]);
    } else if (t->nnodes) {
        memcpy(d, t->data, (size_t)t->nnodes * node);
        d += (size_t)t->nnodes * node;
    }
    uint32_t used = (uint32_t)(d - p);
    if (len - used == 4) /* PadN of two octets to end on 8 */
        d[0] = 1, d[1] = 2;
    return len;
}

/* The trace header at h, option data `olen` octets from the header on. */
static const char *get_trace(const uint8_t *h, uint32_t olen, struct rdma_ioam *t)
{
    if (olen < TRACE_HDR)
        return "IOAM trace option shorter than its header";
    uint16_t w = rdma_get_be16(h + 2);
    t->ns = rdma_get_be16(h);
    t->node_len = (uint8_t)(w >> 11);
    t->flags = (uint8_t)(w >> 7 & 15);
    t->remaining = (uint8_t)(w & 127);
    t->trace_type = rdma_get_be32(h + 4) >> 8;
    uint32_t data = olen - TRACE_HDR, node = (uint32_t)t->node_len * 4;
    if (!node)
        return "IOAM NodeLen is zero";
    if ((uint32_t)t->remaining * 4 > data)
        return "IOAM RemainingLen runs past the option";
    uint32_t known = rdma_ioam_node_bytes(t->trace_type);
    if (!known)
        return NULL; /* nodes of a type this codec cannot size: kept whole */
    if (known != node)
        return "IOAM NodeLen disagrees with the trace type";
    uint32_t filled = data - (uint32_t)t->remaining * 4;
    if (filled % node || t->remaining * 4u % node)
        return "IOAM node data is not a whole number of nodes";
    uint32_t n = filled / node, slots = n + t->remaining * 4u / node;
    if (slots > RDMA_IOAM_MAX_NODES)
        return NULL; /* more than a decoded trace holds: header only */
    t->nnodes = (uint8_t)n;
    t->slots = (uint8_t)slots;
    t->data = h + TRACE_HDR + t->remaining * 4;
    t->nodes_decoded = true;
    return NULL;
}

const char *rdma__ioam_get(const uint8_t *hbh, size_t len, size_t hbh_at, struct rdma_ioam *t)
{
    /* Whole, before any early return: a packet decoded into the same
     * struct before may have left nodes pointing into its own frame. */
    *t = (struct rdma_ioam){0};
    if (len < HBH_FIXED || len < ((size_t)hbh[1] + 1) * 8)
        return NULL; /* the extension-header walk reports it */
    size_t end = ((size_t)hbh[1] + 1) * 8, i = HBH_FIXED;
    while (i < end) {
        uint8_t type = hbh[i];
        if (type == 0) { /* Pad1 */
            i++;
            continue;
        }
        if (i + 2 > end || i + 2 + hbh[i + 1] > end)
            return "IPv6 hop-by-hop option runs past its header";
        uint8_t olen = hbh[i + 1];
        if (type == RDMA_IOAM_OPTION && olen >= 2 && hbh[i + 3] == RDMA_IOAM_PREALLOC) {
            t->present = true;
            t->at = (uint16_t)(hbh_at + i + OPT_HDR);
            return get_trace(hbh + i + OPT_HDR, olen - 2u, t);
        }
        i += 2 + (size_t)olen;
    }
    return NULL;
}

size_t rdma_ioam_find(const uint8_t *frame, size_t len)
{
    size_t at = ETH_HDR;
    if (len < ETH_HDR)
        return 0;
    uint16_t type = rdma_get_be16(frame + 12);
    while (type == VLAN_TPID && at + 4 <= len) {
        type = rdma_get_be16(frame + at + 2);
        at += 4;
    }
    if (type != ETHERTYPE_IPV6 || at + IPV6_HDR + HBH_FIXED > len || frame[at + 6] != IP6_HOPOPT)
        return 0;
    struct rdma_ioam t;
    const uint8_t *hbh = frame + at + IPV6_HDR;
    if (rdma__ioam_get(hbh, len - at - IPV6_HDR, at + IPV6_HDR, &t) || !t.present)
        return 0;
    return t.at;
}

bool rdma_ioam_push(uint8_t *frame, size_t len, size_t at, const struct rdma_ioam_node *n)
{
    if (at + TRACE_HDR > len)
        return false;
    uint8_t *h = frame + at;
    uint16_t w = rdma_get_be16(h + 2);
    uint32_t node = (uint32_t)(w >> 11) * 4, remaining = w & 127u;
    uint32_t type = rdma_get_be32(h + 4) >> 8;
    if (!node || rdma_ioam_node_bytes(type) != node || remaining * 4 < node ||
        at + TRACE_HDR + remaining * 4 > len) {
        rdma_put_be16(h + 2, (uint16_t)(w | RDMA_IOAM_FLAG_OVERFLOW << 7));
        return false;
    }
    remaining -= node / 4;
    put_node(h + TRACE_HDR + remaining * 4, type, n);
    rdma_put_be16(h + 2, (uint16_t)((w & ~127u) | remaining));
    return true;
}
