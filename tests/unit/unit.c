/* unit.c - shared parts of the codec's Check suites (see unit.h).
 *
 * The CRCs here are computed bit by bit from the polynomials and masks the
 * specifications give (IBA vol. 1 rel. 1.4 7.8.1-7.8.2, RoCEv2 annex
 * A17.3.3), so a test that compares them with the codec's table-driven and
 * ISA-L code checks two independent readings of the same text.
 */
#include "unit.h"

#include <glob.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef UNIT_TOP_SRCDIR
#error "UNIT_TOP_SRCDIR must name the source tree"
#endif

#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define UDP_HEADER 8
#define LRH_LEN 8
#define GRH_LEN 40
#define BTH_VARIANT_BYTE 4
#define LNH_IBA_GLOBAL 3
#define IP_PROTO_UDP 17

uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

uint16_t ref_vcrc(const uint8_t *lrh, size_t len)
{
    /* 0x100B taken least significant bit first is 0xD008. */
    uint16_t crc = 0xffff;
    for (size_t i = 0; i < len; i++) {
        crc ^= lrh[i];
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)((crc & 1) ? (crc >> 1) ^ 0xd008 : crc >> 1);
    }
    return crc ^ 0xffff;
}

/* IPv6 header or GRH: traffic class, flow label and hop limit to ones. */
static void mask_ipv6_like(uint8_t *h)
{
    h[0] |= 0x0f;
    h[1] = h[2] = h[3] = 0xff;
    h[7] = 0xff;
}

uint32_t ref_icrc(enum unit_crc kind, const uint8_t *l3, size_t len)
{
    static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint8_t m[UNIT_FRAME_MAX];
    ck_assert_uint_le(len, sizeof m);
    memcpy(m, l3, len);
    size_t from = 0, bth = 0;
    uint32_t crc = ref_crc32(0, ones, sizeof ones);
    switch (kind) {
    case UNIT_CRC_ROCEV2: {
        size_t udp;
        if ((m[0] >> 4) == 4) {
            udp = (size_t)(m[0] & 0x0f) * 4;
            m[1] = 0xff;                 /* type of service */
            m[8] = 0xff;                 /* time to live */
            m[10] = m[11] = 0xff;        /* header checksum */
        } else {
            udp = IPV6_HEADER;
            mask_ipv6_like(m);
        }
        m[udp + 6] = m[udp + 7] = 0xff; /* UDP checksum */
        bth = udp + UDP_HEADER;
        break;
    }
    case UNIT_CRC_ROCEV1:
        mask_ipv6_like(m);
        bth = GRH_LEN;
        break;
    case UNIT_CRC_IB:
        if ((m[1] & 3) == LNH_IBA_GLOBAL) {
            /* The LRH is left out; the ones stand in its place. */
            from = LRH_LEN;
            mask_ipv6_like(m + LRH_LEN);
            bth = LRH_LEN + GRH_LEN;
        } else {
            crc = 0;
            m[0] |= 0xf0; /* virtual lane */
            bth = LRH_LEN;
        }
        break;
    case UNIT_CRC_NONE:
        ck_abort_msg("no ICRC without an InfiniBand transport");
    }
    ck_assert_uint_ge(len, bth + BTH_VARIANT_BYTE + 1);
    m[bth + BTH_VARIANT_BYTE] = 0xff; /* FECN, BECN and reserved bits */
    return ref_crc32(crc, m + from, len - from);
}

uint32_t ref_sum16(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
    return sum;
}

uint16_t ref_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

uint16_t ref_udp_verify(const uint8_t *ip, const uint8_t *udp, size_t udp_len)
{
    uint32_t sum;
    if ((ip[0] >> 4) == 4)
        sum = ref_sum16(0, ip + 12, 8); /* source and destination address */
    else
        sum = ref_sum16(0, ip + 8, 32);
    sum += IP_PROTO_UDP + (uint32_t)udp_len;
    return ref_fold(ref_sum16(sum, udp, udp_len));
}

static void put_le(uint8_t *p, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void unit_seal(enum unit_crc kind, uint8_t *frame, size_t l3, size_t end)
{
    uint8_t *h = frame + l3;
    if (kind == UNIT_CRC_NONE)
        return;
    if (kind == UNIT_CRC_ROCEV2 && (h[0] >> 4) == 4) {
        size_t ihl = (size_t)(h[0] & 0x0f) * 4;
        h[10] = h[11] = 0;
        uint16_t c = (uint16_t)~ref_fold(ref_sum16(0, h, ihl));
        h[10] = (uint8_t)(c >> 8);
        h[11] = (uint8_t)c;
    }
    put_le(frame + end - 4, ref_icrc(kind, h, end - 4 - l3), 4);
    if (kind == UNIT_CRC_IB)
        put_le(frame + end, ref_vcrc(h, end - l3), 2);
}

/* ---- captures ----------------------------------------------------------- */

static const char *top_srcdir(void)
{
    const char *dir = getenv("TOP_SRCDIR");
    return dir && *dir ? dir : UNIT_TOP_SRCDIR;
}

static void load_capture(struct unit_capture *cap, const char *path)
{
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(path, err);
    ck_assert_msg(p != NULL, "%s: %s", path, err);
    cap->path = strdup(path);
    ck_assert_ptr_nonnull(cap->path);
    const char *slash = strrchr(cap->path, '/');
    cap->name = slash ? slash + 1 : cap->path;
    cap->linktype = pcap_datalink(p);
    cap->count = 0;
    cap->frames = NULL;
    size_t alloc = 0;
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc;
    while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
        if (cap->count == alloc) {
            alloc = alloc ? 2 * alloc : 64;
            cap->frames = realloc(cap->frames, alloc * sizeof *cap->frames);
            ck_assert_ptr_nonnull(cap->frames);
        }
        struct unit_frame *f = &cap->frames[cap->count++];
        f->caplen = h->caplen;
        f->len = h->len;
        f->data = malloc(h->caplen ? h->caplen : 1);
        ck_assert_ptr_nonnull(f->data);
        memcpy(f->data, data, h->caplen);
    }
    ck_assert_msg(rc == PCAP_ERROR_BREAK, "%s: %s", path, pcap_geterr(p));
    pcap_close(p);
}

size_t unit_load_captures(struct unit_capture **out)
{
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/pcaps/real/*.pcap", top_srcdir());
    glob_t g;
    int rc = glob(pattern, 0, NULL, &g);
    ck_assert_msg(rc == 0, "no captures match %s", pattern);
    struct unit_capture *caps = calloc(g.gl_pathc, sizeof *caps);
    ck_assert_ptr_nonnull(caps);
    for (size_t i = 0; i < g.gl_pathc; i++)
        load_capture(&caps[i], g.gl_pathv[i]);
    size_t n = g.gl_pathc;
    globfree(&g);
    *out = caps;
    return n;
}

void unit_free_captures(struct unit_capture *caps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < caps[i].count; j++)
            free(caps[i].frames[j].data);
        free(caps[i].frames);
        free(caps[i].path);
    }
    free(caps);
}

/* ---- packets ------------------------------------------------------------ */

enum rdma_status unit_decode(unsigned linktype, const uint8_t *frame, size_t caplen,
                             size_t wirelen, struct rdma_pkt *pkt)
{
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    memset(pkt, 0, sizeof *pkt);
    return rdma_decode(&cfg, linktype, frame, caplen, wirelen, pkt);
}

#define EQ_FIELD(name, type, byte, shift, width)                               \
    ck_assert_msg(a_->name == b_->name, "%s: %s.%s: %" PRIu64 " != %" PRIu64, what, hdr_,  \
                  #name, (uint64_t)a_->name, (uint64_t)b_->name);
#define EQ_ARRAY(name, byte, len, kind)                                        \
    ck_assert_msg(memcmp(a_->name, b_->name, len) == 0, "%s: %s.%s differs", what, hdr_, #name);
#define EQ_HEADER(LIST, x, y, label)                                           \
    do {                                                                       \
        const __typeof__(x) *a_ = &(x), *b_ = &(y);                            \
        const char *hdr_ = (label);                                            \
        LIST(EQ_FIELD, EQ_ARRAY)                                               \
    } while (0)
static void assert_cm_eq(const struct rdma_cm *x, const struct rdma_cm *y, const char *what)
{
    ck_assert_msg(x->attr == y->attr, "%s: CM attribute %#x != %#x", what, x->attr, y->attr);
    switch (x->attr) {
    case RDMA_CM_REQ:
        EQ_HEADER(RDMA_CM_REQ_FIELDS, x->u.req, y->u.req, "cm.req");
        break;
    case RDMA_CM_REP:
        EQ_HEADER(RDMA_CM_REP_FIELDS, x->u.rep, y->u.rep, "cm.rep");
        break;
    case RDMA_CM_REJ:
        EQ_HEADER(RDMA_CM_REJ_FIELDS, x->u.rej, y->u.rej, "cm.rej");
        break;
    case RDMA_CM_DREQ:
        EQ_HEADER(RDMA_CM_DREQ_FIELDS, x->u.dreq, y->u.dreq, "cm.dreq");
        break;
    default:
        EQ_HEADER(RDMA_CM_COMMIDS_FIELDS, x->u.rtu, y->u.rtu, "cm.commids");
        break;
    }
}

static void assert_crc_eq(const struct rdma_crc *x, const struct rdma_crc *y, const char *name,
                          const char *what)
{
    ck_assert_msg(x->present == y->present && x->ok == y->ok && x->value == y->value,
                  "%s: %s %d/%d/%#x != %d/%d/%#x", what, name, x->present, x->ok, x->value,
                  y->present, y->ok, y->value);
}

void unit_assert_headers_eq(const struct rdma_pkt *a, const struct rdma_pkt *b, uint32_t headers,
                            const char *what)
{
#define EQ_PRESENT(LIST, BIT, member)                                          \
    if (headers & RDMA_HDR_##BIT)                                              \
        EQ_HEADER(LIST, a->member, b->member, #member);
    EQ_PRESENT(RDMA_ERF_FIELDS, ERF, erf)
    EQ_PRESENT(RDMA_SLL_FIELDS, SLL, sll)
    EQ_PRESENT(RDMA_SLL2_FIELDS, SLL2, sll2)
    EQ_PRESENT(RDMA_ETH_FIELDS, ETH, eth)
    if (headers & RDMA_HDR_PFC)
        ck_assert_msg(memcmp(&a->pfc, &b->pfc, sizeof a->pfc) == 0, "%s: pfc differs", what);
    EQ_PRESENT(RDMA_IP_FIELDS, IP, ip)
    EQ_PRESENT(RDMA_IPV6_FIELDS, IPV6, ipv6)
    EQ_PRESENT(RDMA_UDP_FIELDS, UDP, udp)
    EQ_PRESENT(RDMA_LRH_FIELDS, LRH, lrh)
    EQ_PRESENT(RDMA_GRH_FIELDS, GRH, grh)
    EQ_PRESENT(RDMA_BTH_FIELDS, BTH, bth)
    EQ_PRESENT(RDMA_RDETH_FIELDS, RDETH, rdeth)
    EQ_PRESENT(RDMA_DETH_FIELDS, DETH, deth)
    EQ_PRESENT(RDMA_XRCETH_FIELDS, XRCETH, xrceth)
    EQ_PRESENT(RDMA_RETH_FIELDS, RETH, reth)
    EQ_PRESENT(RDMA_ATOMICETH_FIELDS, ATOMICETH, atomiceth)
    EQ_PRESENT(RDMA_AETH_FIELDS, AETH, aeth)
    EQ_PRESENT(RDMA_ATOMICACKETH_FIELDS, ATOMICACKETH, atomicacketh)
    EQ_PRESENT(RDMA_IMMDT_FIELDS, IMMDT, immdt)
    EQ_PRESENT(RDMA_IETH_FIELDS, IETH, ieth)
    EQ_PRESENT(RDMA_MAD_FIELDS, MAD, mad)
#undef EQ_PRESENT
    if (headers & RDMA_HDR_CM)
        assert_cm_eq(&a->cm, &b->cm, what);
}

void unit_assert_pkt_eq(const struct rdma_pkt *a, const struct rdma_pkt *b, const char *what)
{
    ck_assert_msg(a->present == b->present, "%s: headers %#x != %#x", what, a->present,
                  b->present);
    ck_assert_msg(a->proto == b->proto && a->status == b->status && a->linktype == b->linktype &&
                      a->ethertype == b->ethertype && a->nvlan == b->nvlan,
                  "%s: proto/status/link/ethertype/nvlan differ", what);
    unit_assert_headers_eq(a, b, a->present, what);
    for (unsigned i = 0; i < a->nvlan; i++)
        EQ_HEADER(RDMA_VLAN_FIELDS, a->vlan[i], b->vlan[i], "vlan");
    if (a->present & RDMA_HDR_IP) {
        ck_assert_uint_eq(a->ip_options_len, b->ip_options_len);
        ck_assert(memcmp(a->ip_options, b->ip_options, a->ip_options_len) == 0);
        ck_assert_int_eq(a->ip_checksum_ok, b->ip_checksum_ok);
    }
    ck_assert_msg(a->op == b->op, "%s: opcode entry differs", what);
    ck_assert_msg(a->payload_len == b->payload_len &&
                      a->captured_payload_len == b->captured_payload_len,
                  "%s: payload length %u/%u != %u/%u", what, a->payload_len,
                  a->captured_payload_len, b->payload_len, b->captured_payload_len);
    if (a->captured_payload_len)
        ck_assert_msg(memcmp(a->payload, b->payload, a->captured_payload_len) == 0,
                      "%s: payload differs", what);
    assert_crc_eq(&a->icrc, &b->icrc, "ICRC", what);
    assert_crc_eq(&a->vcrc, &b->vcrc, "VCRC", what);
}

void unit_assert_roundtrip(unsigned linktype, const uint8_t *frame, size_t len, const char *what)
{
    struct rdma_pkt a, b;
    unit_decode(linktype, frame, len, len, &a);
    uint8_t out[UNIT_FRAME_MAX];
    size_t out_len;
    enum rdma_status st = rdma_encode(&a, out, sizeof out, &out_len);
    ck_assert_msg(st == RDMA_OK, "%s: encode: %s", what, rdma_status_name(st));
    size_t want = len;
    if (linktype == RDMA_LINKTYPE_ETHERNET && want < UNIT_ETH_MIN_FRAME)
        want = UNIT_ETH_MIN_FRAME;
    ck_assert_msg(out_len == want, "%s: encoded %zu bytes, want %zu", what, out_len, want);
    for (size_t i = 0; i < out_len; i++) {
        uint8_t expect = i < len ? frame[i] : 0;
        ck_assert_msg(out[i] == expect, "%s: encoded byte %zu is %02x, want %02x", what, i,
                      out[i], expect);
    }
    unit_decode(linktype, out, out_len, out_len, &b);
    unit_assert_pkt_eq(&a, &b, what);
}

void unit_assert_prefixes(unsigned linktype, const uint8_t *frame, size_t len, size_t needed,
                          const char *what)
{
    struct rdma_pkt full, p;
    enum rdma_status whole = unit_decode(linktype, frame, len, len, &full);
    for (size_t cap = 0; cap < len; cap++) {
        /* A buffer of exactly `cap` bytes, so the sanitizers see any read
         * past the captured part. */
        uint8_t *copy = malloc(cap ? cap : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, frame, cap);
        enum rdma_status st = unit_decode(linktype, copy, cap, len, &p);
        free(copy);
        if (cap < needed) {
            ck_assert_msg(st == RDMA_TRUNCATED, "%s: %zu of %zu bytes: %s (%s)", what, cap, len,
                          rdma_status_name(st), p.reason ? p.reason : "no reason");
            ck_assert_msg(p.reason != NULL, "%s: %zu bytes: truncated without a reason", what,
                          cap);
        } else {
            ck_assert_msg(st == whole, "%s: %zu of %zu bytes: %s, whole frame %s", what, cap,
                          len, rdma_status_name(st), rdma_status_name(whole));
        }
    }
}
