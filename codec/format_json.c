/* format_json.c - struct rdma_pkt as JSON members, one object per header.
 *
 * Member names inside a header object are Wireshark's field names for that
 * header without the protocol prefix (bth.psn is infiniband.bth.psn), and
 * come from the same field lists as the decoder. A few derived members
 * follow the fields (opcode_name, AETH kind and NAK name, CM message name).
 *
 * decode --json prints some fifty members a frame, so the appends here are
 * inlined and write in place: member names are literals whose length is
 * known when compiling, and the longest text a header object can take is
 * known from its field list, so where the buffer has room for it the whole
 * object is written after one bounds check. Near the end of the buffer the
 * same bytes are made in a scratch area and go through the checked append.
 */
#include <arpa/inet.h>

#include "ioam.h"
#include "opcode_list.h"
#include "out.h"
#include "rdma_codec.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* out_mem for a literal: the copy becomes a store or two. */
#define out_lit(o, s) out_mem((o), "" s, sizeof(s) - 1)
#define key(o, name) out_lit((o), "\"" name "\":")

/* A literal at p; returns the end. */
#define put_lit(p, s) (memcpy((p), "" s, sizeof(s) - 1), (p) + sizeof(s) - 1)

/* 0 to 255 as text: up to three digits, and their count in the fourth
 * byte. Eight-bit fields (opcodes, TTLs, reserved bits) and the parts of
 * an IPv4 address are one load and one store of four bytes this way. */
#define BYTE_TEXT_(x)                                                          \
    {(char)((x) < 10 ? '0' + (x) : (x) < 100 ? '0' + (x) / 10 : '0' + (x) / 100),       \
     (char)((x) < 10 ? 0 : (x) < 100 ? '0' + (x) % 10 : '0' + (x) / 10 % 10),          \
     (char)((x) < 100 ? 0 : '0' + (x) % 10), (char)((x) < 10 ? 1 : (x) < 100 ? 2 : 3)}
#define BYTE_TEXT4_(x) BYTE_TEXT_(x), BYTE_TEXT_((x) + 1), BYTE_TEXT_((x) + 2), BYTE_TEXT_((x) + 3)
#define BYTE_TEXT16_(x) BYTE_TEXT4_(x), BYTE_TEXT4_((x) + 4), BYTE_TEXT4_((x) + 8), BYTE_TEXT4_((x) + 12)
#define BYTE_TEXT64_(x) BYTE_TEXT16_(x), BYTE_TEXT16_((x) + 16), BYTE_TEXT16_((x) + 32), BYTE_TEXT16_((x) + 48)
static const char byte_text[256][4] = {BYTE_TEXT64_(0), BYTE_TEXT64_(64), BYTE_TEXT64_(128),
                                       BYTE_TEXT64_(192)};

/* x < 256 at p, which has room for four; returns the end. */
static ALWAYS_INLINE char *put_byte(char *p, unsigned x)
{
    memcpy(p, byte_text[x], 4);
    return p + byte_text[x][3];
}

/* x < 10^5 (a field of at most 16 bits) in one to five digits at p, which
 * has room for eight; returns the end. The digit of the ten thousands and
 * one lookup for the other four, where rdma__put_lt1e8 makes two; the
 * leading zeros are dropped as there (rdma_text.h), the last digit's byte
 * marked so that 0 keeps one digit. */
static ALWAYS_INLINE char *put_lt1e5(char *p, uint32_t x)
{
    uint32_t hi = x / 10000;
    uint64_t d = ('0' + hi) | (uint64_t)rdma__digits4[x - 10000 * hi] << 8;
    unsigned zeros = (unsigned)__builtin_ctzll((d ^ RDMA__ASCII_ZEROS) | 1ull << 32) / 8;
    rdma__put_le64(p, d >> 8 * zeros);
    return p + 5 - zeros;
}

/* A header field of `width` bits, the member of a struct of `size` bytes:
 * each takes its own path, chosen when compiling, with no branch on the
 * value; 64-bit fields are hex strings (out_put_hex64_json: beyond 2^53 a
 * JSON number is not exact in jq). A field of at most three bits (flags,
 * pad count, ECN) is one digit, written without a table; one of at most 16
 * bits is below 10^5, one of at most 26 below 10^8, without the test for
 * longer numbers. The value is
 * cut to its width, as the encoder cuts it: a struct filled by hand with
 * more stays inside the tables. Room for RDMA_U64_DIGITS at p. */
static ALWAYS_INLINE char *put_field(char *p, uint64_t v, size_t size, unsigned width)
{
    if (size == 8)
        return out_put_hex64_json(p, v);
    if (width <= 3) {
        *p = (char)('0' + (v & ((1u << width) - 1)));
        return p + 1;
    }
    if (size == 1)
        return put_byte(p, (unsigned)v);
    if (width <= 16)
        return put_lt1e5(p, (uint32_t)v & ((1u << width) - 1));
    if (width <= 26)
        return rdma__put_lt1e8(p, (uint32_t)v & ((1u << width) - 1));
    return rdma_put_u64(p, v);
}

#define HEX_DIGITS "0123456789abcdef"

/* 0 to 255 as two hex digits, for MAC addresses and byte strings. */
#define HEX_PAIR_(x) {HEX_DIGITS[(x) >> 4], HEX_DIGITS[(x) & 15]}
#define HEX_PAIR4_(x) HEX_PAIR_(x), HEX_PAIR_((x) + 1), HEX_PAIR_((x) + 2), HEX_PAIR_((x) + 3)
#define HEX_PAIR16_(x) HEX_PAIR4_(x), HEX_PAIR4_((x) + 4), HEX_PAIR4_((x) + 8), HEX_PAIR4_((x) + 12)
#define HEX_PAIR64_(x) HEX_PAIR16_(x), HEX_PAIR16_((x) + 16), HEX_PAIR16_((x) + 32), HEX_PAIR16_((x) + 48)
static const char hex_pair[256][2] = {HEX_PAIR64_(0), HEX_PAIR64_(64), HEX_PAIR64_(128),
                                      HEX_PAIR64_(192)};
/* The same with a colon after them, in four bytes: a byte of a MAC
 * address is one load and one store. */
#define HEX_COLON_(x) {HEX_DIGITS[(x) >> 4], HEX_DIGITS[(x) & 15], ':', 0}
#define HEX_COLON4_(x) HEX_COLON_(x), HEX_COLON_((x) + 1), HEX_COLON_((x) + 2), HEX_COLON_((x) + 3)
#define HEX_COLON16_(x) HEX_COLON4_(x), HEX_COLON4_((x) + 4), HEX_COLON4_((x) + 8), HEX_COLON4_((x) + 12)
#define HEX_COLON64_(x) HEX_COLON16_(x), HEX_COLON16_((x) + 16), HEX_COLON16_((x) + 32), HEX_COLON16_((x) + 48)
static const char hex_colon[256][4] = {HEX_COLON64_(0), HEX_COLON64_(64), HEX_COLON64_(128),
                                       HEX_COLON64_(192)};
#define ARRAY_MAX(len) (4 * (len) + 2) /* the longest of the forms below */
/* Addresses have a length known when compiling: their loops go straight. */
#define UNROLL _Pragma("GCC unroll 16")

/* An address or byte string at p, room for ARRAY_MAX(len); returns the end. */
static ALWAYS_INLINE char *put_array(char *p, const uint8_t *a, size_t len, int kind)
{
    switch (kind) {
    case RDMA_ARRAY_MAC:
        UNROLL
        for (size_t i = 0; i < len; i++) {
            memcpy(p, hex_colon[a[i]], 4); /* its fourth byte written over next */
            p += 3;
        }
        return len ? p - 1 : p; /* no colon after the last */
    case RDMA_ARRAY_IPV4:
        UNROLL
        for (size_t i = 0; i < len; i++) {
            if (i)
                *p++ = '.';
            p = put_byte(p, a[i]);
        }
        return p;
    case RDMA_ARRAY_IPV6: {
        char tmp[INET6_ADDRSTRLEN];
        size_t n = strlen(inet_ntop(AF_INET6, a, tmp, sizeof tmp));
        memcpy(p, tmp, n);
        return p + n;
    }
    default:
        p = put_lit(p, "0x");
        for (size_t i = 0; i < len; i++, p += 2)
            memcpy(p, hex_pair[a[i]], 2);
        return p;
    }
}

void rdma__out_array(struct out *o, const uint8_t *p, size_t len, int kind)
{
    char *q = out_room(o, ARRAY_MAX(len));
    if (q) {
        out_end(o, put_array(q, p, len, kind));
        return;
    }
    /* near the end of the buffer: the same text, piece by piece */
    if (kind == RDMA_ARRAY_IPV6) {
        char tmp[INET6_ADDRSTRLEN];
        out_str(o, inet_ntop(AF_INET6, p, tmp, sizeof tmp));
        return;
    }
    if (kind == RDMA_ARRAY_HEX)
        out_lit(o, "0x");
    for (size_t i = 0; i < len; i++) {
        if (i && kind != RDMA_ARRAY_HEX)
            out_chr(o, kind == RDMA_ARRAY_MAC ? ':' : '.');
        if (kind == RDMA_ARRAY_IPV4)
            out_u64(o, p[i]);
        else
            out_hex(o, p[i], 2);
    }
}

/* Text of at most `max` bytes written at p, which is either the buffer
 * (room found) or scratch (near the end, copied by the checked append). */
#define WRITE_BOUNDED(o, max, BODY)                                            \
    do {                                                                       \
        char scratch_[max];                                                    \
        char *start_ = out_room((o), sizeof scratch_);                         \
        char *p = start_ ? start_ : scratch_;                                  \
        BODY;                                                                  \
        if (start_)                                                            \
            out_end((o), p);                                                   \
        else                                                                   \
            out_mem((o), scratch_, (size_t)(p - scratch_));                    \
    } while (0)

/* The members of a field list at p: "name":value, each with a comma. */
#define PUT_FIELD_(name, type, byte, shift, width)                             \
    p = put_lit(p, "\"" #name "\":");                                          \
    p = put_field(p, h__->name, sizeof(type), width);                          \
    *p++ = ',';
#define PUT_ARRAY_(name, byte, len, kind)                                      \
    p = put_lit(p, "\"" #name "\":\"");                                        \
    p = put_array(p, h__->name, len, kind);                                    \
    p = put_lit(p, "\",");
#define MAX_FIELD_(name, type, byte, shift, width) +sizeof("\"" #name "\":") + RDMA_U64_DIGITS
#define MAX_ARRAY_(name, byte, len, kind) +sizeof("\"" #name "\":\"\",") + ARRAY_MAX(len)
#define FIELDS_MAX(LIST) (0 LIST(MAX_FIELD_, MAX_ARRAY_))

#define JSON_FIELDS(o, LIST, h)                                                \
    WRITE_BOUNDED(o, FIELDS_MAX(LIST), {                                       \
        __typeof__(h) h__ = (h);                                               \
        LIST(PUT_FIELD_, PUT_ARRAY_)                                           \
    })

/* A header object opened, with its fields; more members may follow. */
#define JSON_OPEN(o, name, LIST, h)                                            \
    WRITE_BOUNDED(o, sizeof("\"" name "\":{") + FIELDS_MAX(LIST), {            \
        __typeof__(h) h__ = (h);                                               \
        p = put_lit(p, "\"" name "\":{");                                      \
        LIST(PUT_FIELD_, PUT_ARRAY_)                                           \
    })

/* A header object at p: the comma after its last member becomes the brace. */
#define PUT_HEADER(name, LIST, h)                                              \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        p = put_lit(p, "\"" name "\":{");                                      \
        LIST(PUT_FIELD_, PUT_ARRAY_)                                           \
        p[-1] = '}';                                                           \
        *p++ = ',';                                                            \
    } while (0)
#define HEADER_MAX(name, LIST) (sizeof("\"" name "\":{") + FIELDS_MAX(LIST) + 1)

#define JSON_HEADER(o, name, LIST, h)                                          \
    WRITE_BOUNDED(o, HEADER_MAX(name, LIST), PUT_HEADER(name, LIST, h))

#define member_u64(o, name, v)                                                 \
    WRITE_BOUNDED(o, sizeof("\"" name "\":") + RDMA_U64_DIGITS, {              \
        p = put_lit(p, "\"" name "\":");                                       \
        p = rdma_put_u64(p, (v));                                              \
        *p++ = ',';                                                            \
    })

static ALWAYS_INLINE void member_str_(struct out *o, const char *key, size_t key_len,
                                      const char *s)
{
    size_t n = strlen(s);
    char *p = out_room(o, key_len + n + 2);
    if (!p) {
        out_mem(o, key, key_len);
        out_str(o, s);
        out_lit(o, "\",");
        return;
    }
    memcpy(p, key, key_len);
    memcpy(p + key_len, s, n);
    p += key_len + n;
    *p++ = '"';
    *p++ = ',';
    out_end(o, p);
}
#define member_str(o, name, s)                                                 \
    member_str_((o), "\"" name "\":\"", sizeof("\"" name "\":\"") - 1, (s))

/* A member whose value is one of a few names known when compiling: its
 * text in an array of fixed size, copied whole (a copy of constant size is
 * a couple of stores; one of the name's length would be a call), of which
 * the first len bytes count. */
#define NAMED_MAX 32
struct named {
    char text[NAMED_MAX];
    unsigned char len;
};
#define NAMED(name, s) {"\"" name "\":\"" s "\",", sizeof("\"" name "\":\"" s "\",") - 1}
#define PROTO_NAMED_(id, s) NAMED("proto", s),
static const struct named proto_named[] = {RDMA_PROTOS(PROTO_NAMED_)};
#define AETH_KIND_NAMED_(id, v, s) [v] = NAMED("kind", s),
static const struct named aeth_kind_named[4] = {RDMA_AETH_KINDS(AETH_KIND_NAMED_)};

/* The opcode_name member of every opcode a transport may define (opcode.c
 * names them so: the transport, a space, the operation), for the opcodes
 * whose entry in rdma_opcodes[] has a name, which this text then holds. */
#define OPCODE_NAMED_MAX 64
struct opcode_named {
    char text[OPCODE_NAMED_MAX];
    unsigned char len;
};
#define OPCODE_NAMED_(base, tr, code, op) [(base) | (code)] = NAMED("opcode_name", tr " " op),
#define RC_NAMED_(code, op, hdrs, flags, trs) OPCODE_NAMED_(0x00, "RC", code, op)
#define UC_NAMED_(code, op, hdrs, flags, trs) OPCODE_NAMED_(0x20, "UC", code, op)
#define RD_NAMED_(code, op, hdrs, flags, trs) OPCODE_NAMED_(0x40, "RD", code, op)
#define UD_NAMED_(code, op, hdrs, flags, trs) OPCODE_NAMED_(0x60, "UD", code, op)
#define XRC_NAMED_(code, op, hdrs, flags, trs) OPCODE_NAMED_(0xa0, "XRC", code, op)
static const struct opcode_named opcode_named[256] = {
    RDMA_OPERATIONS(RC_NAMED_) RDMA_OPERATIONS(UC_NAMED_) RDMA_OPERATIONS(RD_NAMED_)
    RDMA_OPERATIONS(UD_NAMED_) RDMA_OPERATIONS(XRC_NAMED_)
    [0x81] = NAMED("opcode_name", "CNP"),
};

/* A named member at p, which has room for the whole array; returns the end. */
#define put_named(p, m) (memcpy((p), (m)->text, sizeof (m)->text), (p) + (m)->len)

static ALWAYS_INLINE void member_named_(struct out *o, const char *text, size_t size, size_t len)
{
    char *p = out_room(o, size);
    if (!p) {
        out_mem(o, text, len);
        return;
    }
    memcpy(p, text, size);
    out_end(o, p + len);
}
#define member_named(o, m) member_named_((o), (m)->text, sizeof (m)->text, (m)->len)

#define member_bool(o, name, b)                                                \
    do {                                                                       \
        if (b)                                                                 \
            out_lit((o), "\"" name "\":true,");                                \
        else                                                                   \
            out_lit((o), "\"" name "\":false,");                               \
    } while (0)

/* Members end with a comma; closing an object or the member list drops it. */
static ALWAYS_INLINE void close_with(struct out *o, char c)
{
    char *p = out_room(o, 2);
    if (p && o->len && p[-1] == ',') {
        p[-1] = c;
        *p = ',';
        o->len++;
        return;
    }
    if (!o->full && o->len && o->buf[o->len - 1] == ',')
        o->len--;
    out_chr(o, c);
    out_chr(o, ',');
}

/* The AETH object at p, left open: its fields, the kind of the syndrome,
 * and the credit count of an ACK or the timer of an RNR NAK (a NAK's code
 * and name follow it in json_aeth). Returns the end. */
#define AETH_OPEN_MAX                                                          \
    (sizeof("\"aeth\":{") + FIELDS_MAX(RDMA_AETH_FIELDS) + NAMED_MAX +          \
     sizeof("\"timer\":,\"timer_us\":,") + 2 * RDMA_U64_DIGITS)
static ALWAYS_INLINE char *put_aeth_open(char *p, const struct rdma_aeth *aeth)
{
    const struct rdma_aeth *h__ = aeth;
    p = put_lit(p, "\"aeth\":{");
    RDMA_AETH_FIELDS(PUT_FIELD_, PUT_ARRAY_)
    unsigned kind = rdma_aeth_kind(aeth->syndrome), value = rdma_aeth_value(aeth->syndrome);
    p = put_named(p, &aeth_kind_named[kind & 3]); /* two bits */
    if (kind == RDMA_AETH_ACK) {
        p = put_lit(p, "\"credit_count\":");
        p = rdma_put_u64(p, value);
        *p++ = ',';
    } else if (kind == RDMA_AETH_RNR_NAK) {
        p = put_lit(p, "\"timer\":");
        p = rdma_put_u64(p, value);
        p = put_lit(p, ",\"timer_us\":");
        p = rdma_put_u64(p, rdma_rnr_timer_us(value));
        *p++ = ',';
    }
    return p;
}

static void json_aeth(struct out *o, const struct rdma_aeth *aeth)
{
    WRITE_BOUNDED(o, AETH_OPEN_MAX, p = put_aeth_open(p, aeth));
    unsigned value = rdma_aeth_value(aeth->syndrome);
    if (rdma_aeth_kind(aeth->syndrome) == RDMA_AETH_NAK) {
        const char *name = rdma_nak_code_name(value);
        member_u64(o, "error_code", value);
        member_str(o, "error", name ? name : "reserved");
    }
    close_with(o, '}');
}

static void json_cm(struct out *o, const struct rdma_cm *cm)
{
    key(o, "cm");
    out_chr(o, '{');
    member_str(o, "msg", rdma_cm_message_name(cm->attr));
    switch (cm->attr) {
#define JSON_CM(name, id, member, type, FIELDS)                                \
    case RDMA_CM_##name:                                                       \
        JSON_FIELDS(o, FIELDS, &cm->u.member);                                 \
        break;
        RDMA_CM_MESSAGES(JSON_CM)
#undef JSON_CM
    default: /* an attribute the encoder was given: every CM message opens with the IDs */
        JSON_FIELDS(o, RDMA_CM_COMMIDS_FIELDS, &cm->u.rtu);
    }
    close_with(o, '}');
}

/* The IOAM trace (ioam.c): its header, then each filled node's fields
 * of the trace type, the last node first as on the wire. The wide (56-
 * and 64-bit) fields are hex strings, as other 64-bit fields are. */
static void json_ioam(struct out *o, const struct rdma_ioam *t)
{
    key(o, "ioam");
    out_chr(o, '{');
    member_u64(o, "namespace", t->ns);
    member_u64(o, "node_len", t->node_len);
    member_u64(o, "flags", t->flags);
    member_u64(o, "remaining", t->remaining);
    member_u64(o, "trace_type", t->trace_type);
    if (t->nodes_decoded) {
        uint32_t fields = rdma__ioam_fields(t->trace_type);
        member_u64(o, "slots", t->slots);
        key(o, "nodes");
        out_chr(o, '[');
        for (unsigned i = 0; i < t->nnodes; i++) {
            struct rdma_ioam_node n;
            rdma_ioam_node_get(t, i, &n);
            out_chr(o, '{');
            for (unsigned f = 0; f < RDMA_IOAM_NFIELDS; f++) {
                if (!(fields & (1u << f)))
                    continue;
                out_chr(o, '"');
                out_str(o, rdma_ioam_field_names[f]);
                out_lit(o, "\":");
                uint64_t v = n.v[f];
                if (f == RDMA_IOAM_node_id_wide || f == RDMA_IOAM_ns_data_wide)
                    out_hex64_json(o, v);
                else
                    out_u64(o, v);
                out_chr(o, ',');
            }
            close_with(o, '}');
        }
        close_with(o, ']');
    }
    close_with(o, '}');
}

static void json_pfc(struct out *o, const struct rdma_pfc *pfc)
{
    if (pfc->opcode == RDMA_MAC_CONTROL_PAUSE) {
        key(o, "pause");
        out_chr(o, '{');
        member_u64(o, "opcode", pfc->opcode);
        member_u64(o, "pause_time", pfc->pause_time[0]);
        close_with(o, '}');
        return;
    }
    key(o, "pfc");
    out_chr(o, '{');
    member_u64(o, "opcode", pfc->opcode);
    member_u64(o, "enbv", pfc->enbv);
    key(o, "pause_time");
    out_chr(o, '[');
    for (int i = 0; i < 8; i++) {
        if (i)
            out_chr(o, ',');
        out_u64(o, pfc->pause_time[i]);
    }
    out_lit(o, "]");
    close_with(o, '}');
}

/* A CRC as tshark shows it (infiniband.invariant.crc, .variant.crc): its
 * bytes in wire order read as one big-endian number, in hex. The CRC
 * itself is sent least significant byte first (IBA vol. 1, 7.8), so the
 * number shown is the one computed byte-swapped. */
#define CRC_MAX(name) (sizeof("\"" name "\":{\"value\":\"0x\",\"ok\":false},") + 8)
#define PUT_CRC(name, crc, bytes)                                              \
    do {                                                                       \
        p = put_lit(p, "\"" name "\":{\"value\":\"0x");                        \
        if ((bytes) == 4) {                                                    \
            p = out_put_hex8(p, __builtin_bswap32((crc)->value));              \
        } else {                                                               \
            uint16_t v_ = (uint16_t)(crc)->value;                              \
            p = out_put_hex(p, (uint16_t)(v_ << 8 | v_ >> 8), 4);              \
        }                                                                      \
        if ((crc)->ok)                                                         \
            p = put_lit(p, "\",\"ok\":true},");                                 \
        else                                                                   \
            p = put_lit(p, "\",\"ok\":false},");                                \
    } while (0)
#define json_crc(o, name, crc, bytes) WRITE_BOUNDED(o, CRC_MAX(name), PUT_CRC(name, crc, bytes))

static void json_error(struct out *o, const struct rdma_pkt *pkt)
{
    if (rdma_pkt_snapped(pkt)) { /* not an error: the capture kept less */
        member_str(o, "snapped_in", pkt->reason ? pkt->reason : "frame");
        return;
    }
    key(o, "error");
    out_chr(o, '"');
    out_str(o, rdma_status_name((enum rdma_status)pkt->status));
    if (pkt->reason && pkt->status != RDMA_TRUNCATED) {
        out_lit(o, ": ");
        out_str(o, pkt->reason);
    }
    out_lit(o, "\",");
    if (pkt->reason && pkt->status == RDMA_TRUNCATED)
        member_str(o, "truncated_in", pkt->reason);
}

/* Most frames of RoCE captures are RoCEv2 over IPv4 on untagged Ethernet,
 * whole and well formed, with the extended headers of plain operations:
 * their members are written here after one bounds check for the longest
 * such text, where the general path below checks the room for each
 * header and tests for each kind of header in turn. The text is the
 * same, made by the same pieces in the same order (tests/unit/test_text.c
 * holds the two paths to each other). The bound holds the members with
 * their commas on either side. */
#define ROCEV2_HDRS (RDMA_HDR_ETH | RDMA_HDR_IP | RDMA_HDR_UDP | RDMA_HDR_BTH)
#define ROCEV2_EXTS                                                            \
    (RDMA_HDR_RDETH | RDMA_HDR_DETH | RDMA_HDR_XRCETH | RDMA_HDR_RETH |          \
     RDMA_HDR_ATOMICETH | RDMA_HDR_AETH | RDMA_HDR_ATOMICACKETH | RDMA_HDR_IMMDT | \
     RDMA_HDR_IETH)
#define ROCEV2_MAX                                                             \
    (NAMED_MAX + HEADER_MAX("eth", RDMA_ETH_FIELDS) + sizeof("\"ip\":{") +       \
     FIELDS_MAX(RDMA_IP_FIELDS) + sizeof("\"checksum_ok\":false},") +            \
     HEADER_MAX("udp", RDMA_UDP_FIELDS) + sizeof("\"bth\":{") +                   \
     FIELDS_MAX(RDMA_BTH_FIELDS) + OPCODE_NAMED_MAX + 2 +                       \
     HEADER_MAX("rdeth", RDMA_RDETH_FIELDS) + HEADER_MAX("deth", RDMA_DETH_FIELDS) + \
     HEADER_MAX("xrceth", RDMA_XRCETH_FIELDS) + HEADER_MAX("reth", RDMA_RETH_FIELDS) + \
     HEADER_MAX("atomiceth", RDMA_ATOMICETH_FIELDS) + AETH_OPEN_MAX + 1 +       \
     HEADER_MAX("atomicacketh", RDMA_ATOMICACKETH_FIELDS) +                     \
     HEADER_MAX("immdt", RDMA_IMMDT_FIELDS) + HEADER_MAX("ieth", RDMA_IETH_FIELDS) + \
     sizeof("\"payload_len\":,") + RDMA_U64_DIGITS + CRC_MAX("icrc"))

static bool rocev2_plain(const struct rdma_pkt *pkt, size_t cap)
{
    const struct rdma_opcode_info *op = pkt->op;
    return (pkt->present & ~ROCEV2_EXTS) == ROCEV2_HDRS && pkt->proto == RDMA_PROTO_ROCEV2 &&
           !pkt->nvlan && pkt->status == RDMA_OK && pkt->icrc.present && !pkt->vcrc.present &&
           op && op == &rdma_opcodes[pkt->bth.opcode] && op->name &&
           (!(pkt->present & RDMA_HDR_AETH) || rdma_aeth_kind(pkt->aeth.syndrome) != RDMA_AETH_NAK) &&
           cap >= ROCEV2_MAX;
}

/* The same members each with the comma before it rather than after it:
 * the comma is then part of the name's literal, stored with it. A header
 * object's brace goes over the comma of its first member. */
#define PUT_FIELD_LEAD_(name, type, byte, shift, width)                        \
    p = put_lit(p, ",\"" #name "\":");                                         \
    p = put_field(p, h__->name, sizeof(type), width);
#define PUT_ARRAY_LEAD_(name, byte, len, kind)                                 \
    p = put_lit(p, ",\"" #name "\":\"");                                       \
    p = put_array(p, h__->name, len, kind);                                    \
    *p++ = '"';
#define PUT_OPEN_LEAD(name, LIST, h)                                           \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        char *brace_ = p + sizeof(",\"" name "\":") - 1;                        \
        p = put_lit(p, ",\"" name "\":");                                       \
        LIST(PUT_FIELD_LEAD_, PUT_ARRAY_LEAD_)                                 \
        *brace_ = '{';                                                         \
    } while (0)
#define PUT_HEADER_LEAD(name, LIST, h)                                         \
    do {                                                                       \
        PUT_OPEN_LEAD(name, LIST, h);                                          \
        *p++ = '}';                                                            \
    } while (0)

static size_t json_rocev2_plain(const struct rdma_pkt *pkt, char *buf)
{
    uint32_t has = pkt->present;
    char *p = put_named(buf, &proto_named[RDMA_PROTO_ROCEV2]) - 1; /* no comma after */
    PUT_HEADER_LEAD("eth", RDMA_ETH_FIELDS, &pkt->eth);
    PUT_OPEN_LEAD("ip", RDMA_IP_FIELDS, &pkt->ip);
    if (pkt->ip_checksum_ok)
        p = put_lit(p, ",\"checksum_ok\":true}");
    else
        p = put_lit(p, ",\"checksum_ok\":false}");
    PUT_HEADER_LEAD("udp", RDMA_UDP_FIELDS, &pkt->udp);
    PUT_OPEN_LEAD("bth", RDMA_BTH_FIELDS, &pkt->bth);
    *p++ = ',';
    p = put_named(p, &opcode_named[pkt->bth.opcode]);
    p[-1] = '}';
    if (has & RDMA_HDR_RDETH)
        PUT_HEADER_LEAD("rdeth", RDMA_RDETH_FIELDS, &pkt->rdeth);
    if (has & RDMA_HDR_DETH)
        PUT_HEADER_LEAD("deth", RDMA_DETH_FIELDS, &pkt->deth);
    if (has & RDMA_HDR_XRCETH)
        PUT_HEADER_LEAD("xrceth", RDMA_XRCETH_FIELDS, &pkt->xrceth);
    if (has & RDMA_HDR_RETH)
        PUT_HEADER_LEAD("reth", RDMA_RETH_FIELDS, &pkt->reth);
    if (has & RDMA_HDR_ATOMICETH)
        PUT_HEADER_LEAD("atomiceth", RDMA_ATOMICETH_FIELDS, &pkt->atomiceth);
    if (has & RDMA_HDR_AETH) {
        *p++ = ',';
        p = put_aeth_open(p, &pkt->aeth);
        p[-1] = '}';
    }
    if (has & RDMA_HDR_ATOMICACKETH)
        PUT_HEADER_LEAD("atomicacketh", RDMA_ATOMICACKETH_FIELDS, &pkt->atomicacketh);
    if (has & RDMA_HDR_IMMDT)
        PUT_HEADER_LEAD("immdt", RDMA_IMMDT_FIELDS, &pkt->immdt);
    if (has & RDMA_HDR_IETH)
        PUT_HEADER_LEAD("ieth", RDMA_IETH_FIELDS, &pkt->ieth);
    p = put_lit(p, ",\"payload_len\":");
    p = rdma_put_u64(p, pkt->payload_len);
    *p++ = ',';
    PUT_CRC("icrc", &pkt->icrc, 4);
    return (size_t)(p - buf) - 1; /* the last comma dropped */
}

/* Any frame, header by header, each after a check of the room for it. Not
 * inlined: the frames of the path above do not pay for setting it up. */
static __attribute__((noinline)) size_t json_general(const struct rdma_pkt *pkt, char *buf,
                                                     size_t cap)
{
    struct out o_ = {buf, cap, 0, false}, *o = &o_;
    uint32_t has = pkt->present;
    if (pkt->proto < sizeof proto_named / sizeof proto_named[0])
        member_named(o, &proto_named[pkt->proto]);
    else
        member_str(o, "proto", rdma_proto_name((enum rdma_proto)pkt->proto));
    if (has & RDMA_HDR_ERF)
        JSON_HEADER(o, "erf", RDMA_ERF_FIELDS, &pkt->erf);
    if (has & RDMA_HDR_SLL)
        JSON_HEADER(o, "sll", RDMA_SLL_FIELDS, &pkt->sll);
    if (has & RDMA_HDR_SLL2)
        JSON_HEADER(o, "sll2", RDMA_SLL2_FIELDS, &pkt->sll2);
    if (has & RDMA_HDR_ETH)
        JSON_HEADER(o, "eth", RDMA_ETH_FIELDS, &pkt->eth);
    if (pkt->nvlan) {
        key(o, "vlan");
        out_chr(o, '[');
        for (unsigned i = 0; i < pkt->nvlan; i++) {
            out_chr(o, '{');
            JSON_FIELDS(o, RDMA_VLAN_FIELDS, &pkt->vlan[i]);
            close_with(o, '}');
        }
        close_with(o, ']');
    }
    if (has & RDMA_HDR_PFC)
        json_pfc(o, &pkt->pfc);
    if (has & RDMA_HDR_IP) {
        JSON_OPEN(o, "ip", RDMA_IP_FIELDS, &pkt->ip);
        member_bool(o, "checksum_ok", pkt->ip_checksum_ok);
        close_with(o, '}');
    }
    if (has & RDMA_HDR_IPV6) {
        JSON_HEADER(o, "ipv6", RDMA_IPV6_FIELDS, &pkt->ipv6);
        if (pkt->ioam.present)
            json_ioam(o, &pkt->ioam);
    }
    if (has & RDMA_HDR_UDP)
        JSON_HEADER(o, "udp", RDMA_UDP_FIELDS, &pkt->udp);
    if (has & RDMA_HDR_IBFC)
        JSON_HEADER(o, "ibfc", RDMA_IBFC_FIELDS, &pkt->ibfc);
    if (has & RDMA_HDR_LRH)
        JSON_HEADER(o, "lrh", RDMA_LRH_FIELDS, &pkt->lrh);
    if (has & RDMA_HDR_GRH)
        JSON_HEADER(o, "grh", RDMA_GRH_FIELDS, &pkt->grh);
    if (has & RDMA_HDR_BTH) {
        JSON_OPEN(o, "bth", RDMA_BTH_FIELDS, &pkt->bth);
        const struct rdma_opcode_info *op = pkt->op;
        if (op && op == &rdma_opcodes[pkt->bth.opcode] && op->name)
            member_named(o, &opcode_named[pkt->bth.opcode]);
        else
            member_str(o, "opcode_name", op && op->name ? op->name : "reserved");
        close_with(o, '}');
    }
    if (has & RDMA_HDR_RDETH)
        JSON_HEADER(o, "rdeth", RDMA_RDETH_FIELDS, &pkt->rdeth);
    if (has & RDMA_HDR_DETH)
        JSON_HEADER(o, "deth", RDMA_DETH_FIELDS, &pkt->deth);
    if (has & RDMA_HDR_XRCETH)
        JSON_HEADER(o, "xrceth", RDMA_XRCETH_FIELDS, &pkt->xrceth);
    if (has & RDMA_HDR_RETH)
        JSON_HEADER(o, "reth", RDMA_RETH_FIELDS, &pkt->reth);
    if (has & RDMA_HDR_ATOMICETH)
        JSON_HEADER(o, "atomiceth", RDMA_ATOMICETH_FIELDS, &pkt->atomiceth);
    if (has & RDMA_HDR_AETH)
        json_aeth(o, &pkt->aeth);
    if (has & RDMA_HDR_ATOMICACKETH)
        JSON_HEADER(o, "atomicacketh", RDMA_ATOMICACKETH_FIELDS, &pkt->atomicacketh);
    if (has & RDMA_HDR_IMMDT)
        JSON_HEADER(o, "immdt", RDMA_IMMDT_FIELDS, &pkt->immdt);
    if (has & RDMA_HDR_IETH)
        JSON_HEADER(o, "ieth", RDMA_IETH_FIELDS, &pkt->ieth);
    if (has & RDMA_HDR_MAD)
        JSON_HEADER(o, "mad", RDMA_MAD_FIELDS, &pkt->mad);
    if (has & RDMA_HDR_CM)
        json_cm(o, &pkt->cm);
    if (has & RDMA_HDR_BTH)
        member_u64(o, "payload_len", pkt->payload_len);
    if (pkt->icrc.present)
        json_crc(o, "icrc", &pkt->icrc, 4);
    if (pkt->vcrc.present && (has & RDMA_HDR_IBFC))
        json_crc(o, "lpcrc", &pkt->vcrc, 2);
    else if (pkt->vcrc.present)
        json_crc(o, "vcrc", &pkt->vcrc, 2);
    if (pkt->status != RDMA_OK)
        json_error(o, pkt);
    if (!o->full && o->len && buf[o->len - 1] == ',')
        o->len--;
    return o->full ? 0 : o->len;
}

size_t rdma_format_json(const struct rdma_pkt *pkt, char *buf, size_t cap)
{
    return rocev2_plain(pkt, cap) ? json_rocev2_plain(pkt, buf) : json_general(pkt, buf, cap);
}
