/* rdma_iwarp.h - encode and decode iWARP: MPA (RFC 5044, RFC 6581), DDP
 * (RFC 5041) and RDMAP (RFC 5040, RFC 7306) over TCP.
 *
 * The same conventions as rdma_codec.h: every fixed-layout header is an
 * X-macro list of its fields F(name, type, byte, shift, width), from which
 * the structs, the decoder, the encoder and the JSON printer are expanded.
 * Member names are Wireshark's iwarp_mpa.*, iwarp_ddp.*, iwarp_rdma.* and
 * tcp.* fields without the prefix (iwarp_ddp.stag is ddp.stag here).
 *
 * Two levels:
 *   - FPDU and MPA Request/Reply codecs that work on contiguous stream
 *     bytes at a known TCP sequence number (no allocation);
 *   - a stream decoder that reassembles TCP per connection and direction,
 *     follows the MPA handshake and hands out one PDU at a time (it
 *     allocates, bounded by the data in flight).
 */
#ifndef RDMA_IWARP_H
#define RDMA_IWARP_H

#include "rdma_codec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RDMA_IP_PROTO_TCP 6
#define RDMA_MPA_KEY_LEN 16
#define RDMA_MPA_REQREP_LEN 20        /* key, flags, revision, PD_Length */
#define RDMA_MPA_MAX_PD 512           /* RFC 5044 7.1.2 */
#define RDMA_MPA_MARKER_INTERVAL 512  /* RFC 5044 4.3 */
#define RDMA_MPA_MARKER_LEN 4
#define RDMA_MPA_CRC_LEN 4
#define RDMA_MPA_ENHANCED_REV 2       /* RFC 6581 */
#define RDMA_MPA_ENHANCED_LEN 4       /* IRD/ORD words leading the private data */
#define RDMA_DDP_TAGGED_LEN 14
#define RDMA_DDP_UNTAGGED_LEN 18
#define RDMA_DDP_VERSION 1
#define RDMA_RDMAP_VERSION 1
/* The largest FPDU without markers (ULPDU_Length, ULPDU, pad, CRC), and the
 * most markers it can hold at one every 512 octets. */
#define RDMA_MPA_MAX_FPDU (2 + 65535 + 3 + 4)
#define RDMA_MPA_MAX_MARKERS 132

/* ---- field lists ---------------------------------------------------- */

/* TCP header, RFC 9293 3.1; options follow up to doff * 4 bytes. */
#define RDMA_TCP_FIELDS(F, A)                                                  \
    F(srcport, uint16_t, 0, 0, 16)                                             \
    F(dstport, uint16_t, 2, 0, 16)                                             \
    F(seq_raw, uint32_t, 4, 0, 32)                                             \
    F(ack_raw, uint32_t, 8, 0, 32)                                             \
    F(doff, uint8_t, 12, 4, 4)                                                 \
    F(flags, uint16_t, 12, 0, 12)                                              \
    F(window_size_value, uint16_t, 14, 0, 16)                                  \
    F(checksum, uint16_t, 16, 0, 16)                                           \
    F(urgent_pointer, uint16_t, 18, 0, 16)

#define RDMA_TCP_FIN 0x001
#define RDMA_TCP_SYN 0x002
#define RDMA_TCP_RST 0x004
#define RDMA_TCP_PSH 0x008
#define RDMA_TCP_ACK 0x010
#define RDMA_TCP_ECE 0x040 /* RFC 3168 6.1 */
#define RDMA_TCP_CWR 0x080

/* MPA Request/Reply frame after its 16-byte key, RFC 5044 7.1. */
#define RDMA_MPA_REQREP_FIELDS(F, A)                                           \
    F(marker_flag, uint8_t, 16, 7, 1)                                          \
    F(crc_flag, uint8_t, 16, 6, 1)                                             \
    F(rej_flag, uint8_t, 16, 5, 1)                                             \
    F(res, uint8_t, 16, 0, 5)                                                  \
    F(rev, uint8_t, 17, 0, 8)                                                  \
    F(pdlength, uint16_t, 18, 0, 16)

/* Enhanced connection setup, RFC 6581 9.1.1: the first word of the private
 * data of a revision 2 Request/Reply.
 *   |A|B|           IRD             |C|D|           ORD             |
 * A peer-to-peer, B zero-length Send as RTR, C zero-length RDMA Write as
 * RTR, D zero-length RDMA Read as RTR. */
#define RDMA_MPA_ENHANCED_FIELDS(F, A)                                         \
    F(peer_to_peer, uint8_t, 0, 7, 1)                                          \
    F(rtr_send, uint8_t, 0, 6, 1)                                              \
    F(ird, uint16_t, 0, 0, 14)                                                 \
    F(rtr_write, uint8_t, 2, 7, 1)                                             \
    F(rtr_read, uint8_t, 2, 6, 1)                                              \
    F(ord, uint16_t, 2, 0, 14)

/* Marker, RFC 5044 4.3: reserved, then the distance back to the ULPDU_Length
 * of the FPDU it sits in (0 when it sits just before an FPDU header). */
#define RDMA_MPA_MARKER_FIELDS(F, A)                                           \
    F(marker_res, uint16_t, 0, 0, 16)                                          \
    F(marker_fpduptr, uint16_t, 2, 0, 16)

/* DDP control and the buffer model headers, RFC 5041 4.2-4.4. Offsets are
 * from the first octet of the DDP header (after ULPDU_Length). */
#define RDMA_DDP_FIELDS(F, A)                                                  \
    F(tagged_flag, uint8_t, 0, 7, 1)                                           \
    F(last_flag, uint8_t, 0, 6, 1)                                             \
    F(rsvd, uint8_t, 0, 2, 4)                                                  \
    F(dv, uint8_t, 0, 0, 2)

#define RDMA_DDP_TAGGED_FIELDS(F, A)                                           \
    F(stag, uint32_t, 2, 0, 32)                                                \
    F(tagged_offset, uint64_t, 6, 0, 64)

#define RDMA_DDP_UNTAGGED_FIELDS(F, A)                                         \
    F(qn, uint32_t, 6, 0, 32)                                                  \
    F(msn, uint32_t, 10, 0, 32)                                                \
    F(mo, uint32_t, 14, 0, 32)

#define RDMA_DDP_ALL_FIELDS(F, A)                                              \
    RDMA_DDP_FIELDS(F, A) RDMA_DDP_TAGGED_FIELDS(F, A) RDMA_DDP_UNTAGGED_FIELDS(F, A)

/* RDMAP control field (DDP RsvdULP[0:7]), RFC 5040 4.2; the Invalidate STag
 * travels in RsvdULP[8:39] of an untagged header, RFC 5040 4.4. */
#define RDMA_RDMAP_FIELDS(F, A)                                                \
    F(version, uint8_t, 1, 6, 2)                                               \
    F(rsv, uint8_t, 1, 4, 2)                                                   \
    F(opcode, uint8_t, 1, 0, 4)

#define RDMA_RDMAP_INVAL_FIELDS(F, A) F(inval_stag, uint32_t, 2, 0, 32)

#define RDMA_RDMAP_ALL_FIELDS(F, A) RDMA_RDMAP_FIELDS(F, A) RDMA_RDMAP_INVAL_FIELDS(F, A)

/* RDMA Read Request header, RFC 5040 4.4 (after the untagged DDP header). */
#define RDMA_RDMAP_RR_FIELDS(F, A)                                             \
    F(sinkstag, uint32_t, 0, 0, 32)                                            \
    F(sinkto, uint64_t, 4, 0, 64)                                              \
    F(rdmardsz, uint32_t, 12, 0, 32)                                           \
    F(srcstag, uint32_t, 16, 0, 32)                                            \
    F(srcto, uint64_t, 20, 0, 64)
#define RDMA_RDMAP_RR_LEN 28

/* Terminate header, RFC 5040 4.8: the control word; then, when hdrct_d is
 * set, the DDP Segment Length and the terminated DDP header, and when
 * hdrct_r is set, the terminated RDMA Read Request header. */
#define RDMA_RDMAP_TERM_FIELDS(F, A)                                           \
    F(term_layer, uint8_t, 0, 4, 4)                                            \
    F(term_etype, uint8_t, 0, 0, 4)                                            \
    F(term_errcode, uint8_t, 1, 0, 8)                                          \
    F(term_hdrct_m, uint8_t, 2, 7, 1)                                          \
    F(hdrct_d, uint8_t, 2, 6, 1)                                               \
    F(hdrct_r, uint8_t, 2, 5, 1)                                               \
    F(term_rsvd, uint16_t, 2, 0, 13)
#define RDMA_RDMAP_TERM_LEN 4
#define RDMA_RDMAP_TERM_SEGLEN_LEN 2

/* Atomic Request header, RFC 7306 5.2.1. The first 64-bit operand pair is
 * the addend for FetchAdd and the swap value for Swap and CmpSwap. */
#define RDMA_RDMAP_ATOMIC_COMMON_FIELDS(F, A)                                  \
    F(reserved, uint32_t, 0, 4, 28)                                            \
    F(opcode, uint8_t, 3, 0, 4)                                                \
    F(request_identifier, uint32_t, 4, 0, 32)                                  \
    F(remote_stag, uint32_t, 8, 0, 32)                                         \
    F(remote_tagged_offset, uint64_t, 12, 0, 64)

#define RDMA_RDMAP_ATOMIC_ADD_FIELDS(F, A)                                     \
    RDMA_RDMAP_ATOMIC_COMMON_FIELDS(F, A)                                      \
    F(add_data, uint64_t, 20, 0, 64)                                           \
    F(add_mask, uint64_t, 28, 0, 64)                                           \
    F(compare_data, uint64_t, 36, 0, 64)                                       \
    F(compare_mask, uint64_t, 44, 0, 64)

#define RDMA_RDMAP_ATOMIC_SWAP_FIELDS(F, A)                                    \
    RDMA_RDMAP_ATOMIC_COMMON_FIELDS(F, A)                                      \
    F(swap_data, uint64_t, 20, 0, 64)                                          \
    F(swap_mask, uint64_t, 28, 0, 64)                                          \
    F(compare_data, uint64_t, 36, 0, 64)                                       \
    F(compare_mask, uint64_t, 44, 0, 64)
#define RDMA_RDMAP_ATOMIC_REQ_LEN 52

/* Atomic Response header, RFC 7306 5.2.2. */
#define RDMA_RDMAP_ATOMIC_RESP_FIELDS(F, A)                                    \
    F(original_request_identifier, uint32_t, 0, 0, 32)                         \
    F(original_remote_data_value, uint64_t, 4, 0, 64)
#define RDMA_RDMAP_ATOMIC_RESP_LEN 12

RDMA__DEFINE_HEADER(rdma_tcp, RDMA_TCP_FIELDS);
RDMA__DEFINE_HEADER(rdma_mpa_reqrep, RDMA_MPA_REQREP_FIELDS);
RDMA__DEFINE_HEADER(rdma_mpa_enhanced, RDMA_MPA_ENHANCED_FIELDS);
RDMA__DEFINE_HEADER(rdma_mpa_marker, RDMA_MPA_MARKER_FIELDS);
RDMA__DEFINE_HEADER(rdma_ddp, RDMA_DDP_ALL_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap, RDMA_RDMAP_ALL_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap_rr, RDMA_RDMAP_RR_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap_term, RDMA_RDMAP_TERM_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap_atomic_add, RDMA_RDMAP_ATOMIC_ADD_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap_atomic_swap, RDMA_RDMAP_ATOMIC_SWAP_FIELDS);
RDMA__DEFINE_HEADER(rdma_rdmap_atomic_resp, RDMA_RDMAP_ATOMIC_RESP_FIELDS);

/* ---- RDMAP opcodes ------------------------------------------------------
 * X(NAME, value, "name", flags), RFC 5040 4.3 and RFC 7306 8. The one table
 * the decoder, encoder and printers read. */
enum rdma_rdmap_opflag {
    RDMA_RDMAP_TAGGED = 1u << 0,      /* tagged buffer model */
    RDMA_RDMAP_INVALIDATE = 1u << 1,  /* RsvdULP[8:39] is the Invalidate STag */
    RDMA_RDMAP_HDR_RR = 1u << 2,      /* Read Request header follows DDP */
    RDMA_RDMAP_HDR_TERM = 1u << 3,    /* Terminate header follows DDP */
    RDMA_RDMAP_HDR_ATOMIC_REQ = 1u << 4,
    RDMA_RDMAP_HDR_ATOMIC_RESP = 1u << 5,
    RDMA_RDMAP_NO_PAYLOAD = 1u << 6,  /* nothing may follow the headers */
};

#define RDMA_RDMAP_OPCODES(X)                                                  \
    X(WRITE, 0x0, "RDMA Write", RDMA_RDMAP_TAGGED)                             \
    X(READ_REQUEST, 0x1, "RDMA Read Request", RDMA_RDMAP_HDR_RR | RDMA_RDMAP_NO_PAYLOAD) \
    X(READ_RESPONSE, 0x2, "RDMA Read Response", RDMA_RDMAP_TAGGED)             \
    X(SEND, 0x3, "Send", 0)                                                    \
    X(SEND_INVALIDATE, 0x4, "Send with Invalidate", RDMA_RDMAP_INVALIDATE)     \
    X(SEND_SE, 0x5, "Send with SE", 0)                                         \
    X(SEND_SE_INVALIDATE, 0x6, "Send with SE and Invalidate", RDMA_RDMAP_INVALIDATE) \
    X(TERMINATE, 0x7, "Terminate", RDMA_RDMAP_HDR_TERM)                        \
    X(IMMEDIATE, 0x8, "Immediate Data", 0)                                     \
    X(IMMEDIATE_SE, 0x9, "Immediate Data with SE", 0)                          \
    X(ATOMIC_REQUEST, 0xa, "Atomic Request", RDMA_RDMAP_HDR_ATOMIC_REQ | RDMA_RDMAP_NO_PAYLOAD) \
    X(ATOMIC_RESPONSE, 0xb, "Atomic Response", RDMA_RDMAP_HDR_ATOMIC_RESP | RDMA_RDMAP_NO_PAYLOAD)

enum rdma_rdmap_opcode {
#define RDMA__RDMAP_ENUM(name, v, str, flags) RDMA_RDMAP_##name = v,
    RDMA_RDMAP_OPCODES(RDMA__RDMAP_ENUM)
#undef RDMA__RDMAP_ENUM
};

struct rdma_rdmap_opcode_info {
    const char *name; /* NULL: reserved opcode */
    uint32_t flags;   /* enum rdma_rdmap_opflag */
};
extern const struct rdma_rdmap_opcode_info rdma_rdmap_opcodes[16];

/* Atomic operations, RFC 7306 5.2.1. */
#define RDMA_RDMAP_ATOMIC_OPS(X)                                               \
    X(FETCHADD, 0x0, "FetchAdd")                                               \
    X(SWAP, 0x1, "Swap")                                                       \
    X(CMPSWAP, 0x2, "CmpSwap")

enum rdma_rdmap_atomic_op {
#define RDMA__ATOMIC_ENUM(name, v, str) RDMA_RDMAP_ATOMIC_##name = v,
    RDMA_RDMAP_ATOMIC_OPS(RDMA__ATOMIC_ENUM)
#undef RDMA__ATOMIC_ENUM
};
const char *rdma_rdmap_atomic_op_name(unsigned op); /* NULL if reserved */

/* Terminate layers, error types and codes, RFC 5040 7.2, RFC 5044 8 and
 * RFC 6581 9.1.3: X(layer, etype, code, "name"); code -1 names the type. */
#define RDMA_TERM_LAYERS(X)                                                    \
    X(0, "RDMA")                                                               \
    X(1, "DDP")                                                                \
    X(2, "LLP")

#define RDMA_TERM_ERRORS(X)                                                    \
    X(0, 0, -1, "Local Catastrophic Error")                                    \
    X(0, 1, -1, "Remote Protection Error")                                     \
    X(0, 2, -1, "Remote Operation Error")                                      \
    X(0, 0, 0x00, "Local catastrophic")                                        \
    X(0, 1, 0x00, "Invalid STag")                                              \
    X(0, 1, 0x01, "Base or bounds violation")                                  \
    X(0, 1, 0x02, "Access rights violation")                                   \
    X(0, 1, 0x03, "STag not associated with RDMAP Stream")                     \
    X(0, 1, 0x04, "TO wrap")                                                   \
    X(0, 1, 0x09, "STag cannot be Invalidated")                                \
    X(0, 1, 0xff, "Unspecified Error")                                         \
    X(0, 2, 0x05, "Invalid RDMAP version")                                     \
    X(0, 2, 0x06, "Unexpected OpCode")                                         \
    X(0, 2, 0x07, "Catastrophic error, localized to RDMAP Stream")             \
    X(0, 2, 0x08, "Catastrophic error, global")                                \
    X(0, 2, 0x09, "STag cannot be Invalidated")                                \
    X(0, 2, 0xff, "Unspecified Error")                                         \
    X(1, 0, -1, "Local Catastrophic Error")                                    \
    X(1, 1, -1, "Tagged Buffer Error")                                         \
    X(1, 2, -1, "Untagged Buffer Error")                                       \
    X(1, 3, -1, "Reserved for the use by the LLP")                             \
    X(1, 0, 0x00, "Local catastrophic")                                        \
    X(1, 1, 0x00, "Invalid STag")                                              \
    X(1, 1, 0x01, "Base or bounds violation")                                  \
    X(1, 1, 0x02, "STag not associated with DDP Stream")                       \
    X(1, 1, 0x03, "TO wrap")                                                   \
    X(1, 1, 0x04, "Invalid DDP version")                                       \
    X(1, 2, 0x01, "Invalid QN")                                                \
    X(1, 2, 0x02, "Invalid MSN - no buffer available")                         \
    X(1, 2, 0x03, "Invalid MSN - MSN range is not valid")                      \
    X(1, 2, 0x04, "Invalid MO")                                                \
    X(1, 2, 0x05, "DDP Message too long for available buffer")                 \
    X(1, 2, 0x06, "Invalid DDP version")                                       \
    X(2, 0, -1, "MPA Error")                                                   \
    X(2, 0, 0x01, "TCP connection closed, terminated or lost")                 \
    X(2, 0, 0x02, "MPA CRC Error")                                             \
    X(2, 0, 0x03, "MPA Marker and ULPDU Length field mismatch")                \
    X(2, 0, 0x04, "Invalid MPA Request Frame or MPA Response Frame")           \
    X(2, 0, 0x05, "Local Catastrophic Error")                                  \
    X(2, 0, 0x06, "Insufficient IRD Resources")                                \
    X(2, 0, 0x07, "No Matching RTR Option")

const char *rdma_term_layer_name(unsigned layer);                      /* NULL if reserved */
const char *rdma_term_etype_name(unsigned layer, unsigned etype);      /* NULL if reserved */
const char *rdma_term_error_name(unsigned layer, unsigned etype, unsigned code); /* NULL if reserved */

/* ---- CRC32c (RFC 3720 B.4, as MPA uses it, RFC 5044 4.4) --------------- */
uint32_t rdma_crc32c(const uint8_t *p, size_t len);

/* ---- MPA Request/Reply -------------------------------------------------- */
enum rdma_mpa_frame_kind { RDMA_MPA_REQUEST = 1, RDMA_MPA_REPLY = 2 };

struct rdma_mpa_frame {
    uint8_t kind;          /* enum rdma_mpa_frame_kind */
    bool enhanced;         /* revision 2 with the IRD/ORD word */
    struct rdma_mpa_reqrep hdr;
    struct rdma_mpa_enhanced enh;
    const uint8_t *private_data; /* after the IRD/ORD word when enhanced */
    uint16_t private_len;
};

/* Decode a Request or Reply at the start of p. RDMA_TRUNCATED with the
 * bytes needed in *used when more data is needed; RDMA_UNSUPPORTED when p
 * does not start with an MPA key; RDMA_MALFORMED for a PD_Length above 512. */
enum rdma_status rdma_mpa_frame_decode(const uint8_t *p, size_t len, struct rdma_mpa_frame *f,
                                       size_t *used);
/* Encode f; pdlength is computed from private_len (and the IRD/ORD word). */
enum rdma_status rdma_mpa_frame_encode(const struct rdma_mpa_frame *f, uint8_t *out, size_t cap,
                                       size_t *out_len);

/* ---- FPDU ----------------------------------------------------------------- */
/* How one direction frames its FPDUs after the handshake. */
struct rdma_mpa_framing {
    bool markers;     /* a marker every 512 octets from `origin` */
    bool crc;         /* CRC32c negotiated (else the CRC field is not checked) */
    uint32_t origin;  /* TCP sequence number of the direction's first FPDU */
};

/* Which RDMAP headers an FPDU carries (rdma_iwarp_fpdu.present). */
enum rdma_iwarp_header_bit {
    RDMA_IW_DDP = 1u << 0,
    RDMA_IW_RDMAP = 1u << 1,
    RDMA_IW_RR = 1u << 2,
    RDMA_IW_TERM = 1u << 3,
    RDMA_IW_TERM_DDP = 1u << 4, /* terminated DDP (and RDMAP control) header decoded */
    RDMA_IW_TERM_RR = 1u << 5,
    RDMA_IW_ATOMIC_REQ = 1u << 6,
    RDMA_IW_ATOMIC_RESP = 1u << 7,
};

struct rdma_iwarp_fpdu {
    uint32_t seq;        /* TCP sequence number of the FPDU's first octet */
    uint32_t wire_len;   /* octets in the stream: markers, header, ULPDU, pad, CRC */
    uint16_t ulpdulength;
    uint8_t pad;
    uint8_t nmarkers;
    uint8_t status;      /* enum rdma_status: the first problem found */
    const char *reason;
    uint32_t present;    /* enum rdma_iwarp_header_bit */
    struct rdma_mpa_marker markers[RDMA_MPA_MAX_MARKERS];
    uint16_t marker_offset[RDMA_MPA_MAX_MARKERS]; /* from the FPDU's first octet */
    struct rdma_crc crc; /* present only when CRC is negotiated */
    struct rdma_ddp ddp;
    struct rdma_rdmap rdmap;
    const struct rdma_rdmap_opcode_info *op;
    struct rdma_rdmap_rr rr;
    struct rdma_rdmap_term term;
    uint16_t term_ddp_seg_len;
    struct rdma_ddp term_ddp;
    struct rdma_rdmap term_rdmap;
    struct rdma_rdmap_rr term_rr;
    const uint8_t *term_ddp_h;  /* raw terminated DDP header */
    uint8_t term_ddp_h_len;
    union {
        struct rdma_rdmap_atomic_add add;   /* FetchAdd */
        struct rdma_rdmap_atomic_swap swap; /* Swap, CmpSwap */
    } atomic;
    struct rdma_rdmap_atomic_resp atomic_resp;
    const uint8_t *payload;  /* after the RDMAP headers, markers removed */
    uint32_t payload_len;
};

/* Decode the FPDU whose first octet (a marker or ULPDU_Length) is p[0] at
 * TCP sequence number seq. Markers are removed into scratch (at least
 * RDMA_MPA_MAX_FPDU bytes) when the FPDU has any; payload points into p or
 * scratch.
 * Returns RDMA_TRUNCATED with the octets needed in *used (0 when even the
 * length is not there yet) if len does not hold the whole FPDU; otherwise
 * *used is its wire length and the status is that of f. */
enum rdma_status rdma_fpdu_decode(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                                  size_t len, uint8_t *scratch, struct rdma_iwarp_fpdu *f,
                                  size_t *used);

/* Encode the FPDU described by f (DDP/RDMAP headers named by f->present,
 * then payload_len bytes of payload) to start at TCP sequence seq: it
 * computes ULPDU_Length, pad, the markers due at that stream position and
 * the CRC (zero when CRC is not negotiated). */
enum rdma_status rdma_fpdu_encode(const struct rdma_mpa_framing *fr, uint32_t seq,
                                  const struct rdma_iwarp_fpdu *f, uint8_t *out, size_t cap,
                                  size_t *out_len);

/* Prepare f for an RDMAP opcode: clear it, set DDP T flag, DV, RDMAP
 * version and the header bits the opcode table names. */
void rdma_fpdu_set_opcode(struct rdma_iwarp_fpdu *f, uint8_t opcode);

/* ---- TCP ------------------------------------------------------------------ */
/* The TCP segment of a frame rdma_decode() left at the IP layer (IPv4 not
 * fragmented, or IPv6 with next header 6). Returns false if there is none
 * or it is truncated. */
bool rdma_tcp_decode(const struct rdma_pkt *pkt, const uint8_t *frame, struct rdma_tcp *tcp,
                     const uint8_t **payload, uint32_t *payload_len);

/* Whether the TCP checksum of that segment is right (RFC 9293 3.1: over
 * the pseudo-header, the header and the data). */
bool rdma_tcp_checksum_ok(const struct rdma_pkt *pkt, const uint8_t *frame);

/* Build Ethernet + IPv4/IPv6 + TCP (no options) + payload from pkt's eth,
 * ip or ipv6 (pkt->present picks one) and tcp; computes the lengths and
 * both checksums. */
enum rdma_status rdma_tcp_encode(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp,
                                 const uint8_t *payload, size_t len, uint8_t *out, size_t cap,
                                 size_t *out_len);

/* The same with options: optlen bytes (a multiple of 4, at most
 * RDMA_TCP_MAX_OPTIONS, as rdma_tcp_options_encode writes them) between the
 * fixed header and the payload. */
enum rdma_status rdma_tcp_encode_opts(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp,
                                      const uint8_t *opts, size_t optlen, const uint8_t *payload,
                                      size_t len, uint8_t *out, size_t cap, size_t *out_len);

/* TCP options (RFC 9293 3.1; window scale RFC 7323 2; SACK RFC 2018 2-3):
 * X(NAME, kind, length) with length 0 for a variable length. One table the
 * encoder and the decoder both read. */
#define RDMA_TCP_OPTIONS(X)                                                    \
    X(EOL, 0, 1)                                                               \
    X(NOP, 1, 1)                                                               \
    X(MSS, 2, 4)                                                               \
    X(WSCALE, 3, 3)                                                            \
    X(SACK_PERM, 4, 2)                                                         \
    X(SACK, 5, 0)

enum rdma_tcp_option_kind {
#define RDMA__TCPOPT_ENUM(name, kind, len) RDMA_TCPOPT_##name = kind,
    RDMA_TCP_OPTIONS(RDMA__TCPOPT_ENUM)
#undef RDMA__TCPOPT_ENUM
};

#define RDMA_TCP_MAX_OPTIONS 40
#define RDMA_TCP_MAX_SACK 4 /* (40 - 2) / 8 blocks fit the option space */
#define RDMA_TCP_MAX_WSCALE 14 /* RFC 7323 2.3 */

struct rdma_tcp_options {
    uint16_t mss;      /* 0: absent */
    bool has_wscale;
    uint8_t wscale;
    bool sack_perm;
    uint8_t nsack;
    uint32_t sack[RDMA_TCP_MAX_SACK][2]; /* left edge, right edge (one past) */
};

/* Write the options o holds, NOP-padded to a multiple of 4 octets, into
 * out (RDMA_TCP_MAX_OPTIONS octets); returns the octets written. */
size_t rdma_tcp_options_encode(const struct rdma_tcp_options *o, uint8_t *out);
/* Read the options of a segment (the octets between the fixed header and
 * doff * 4). Unknown options are skipped by their length; RDMA_MALFORMED
 * for a length that runs past the option space or contradicts the table. */
enum rdma_status rdma_tcp_options_decode(const uint8_t *p, size_t len, struct rdma_tcp_options *o);

/* ---- stream decoding ------------------------------------------------------ */
enum rdma_iwarp_pdu_kind { RDMA_IWARP_PDU_MPA = 1, RDMA_IWARP_PDU_FPDU = 2, RDMA_IWARP_PDU_ERROR = 3 };

/* One direction of a TCP connection: the sender's address and port, then
 * the receiver's. IPv4 addresses take the first 4 bytes. */
struct rdma_tcp_ends {
    bool ipv6;
    uint8_t src[16], dst[16];
    uint16_t srcport, dstport;
};

struct rdma_iwarp_pdu {
    uint8_t kind;        /* enum rdma_iwarp_pdu_kind */
    uint8_t status;      /* enum rdma_status */
    const char *reason;
    uint64_t frame;      /* frame number in which the PDU began */
    /* The direction it travelled. Not always the fed frame's: the frame
     * carrying an MPA Reply also releases what the other side sent after
     * its Request, and rdma_iwarp_finish() reports any direction. */
    struct rdma_tcp_ends ends;
    struct rdma_mpa_frame mpa;
    struct rdma_iwarp_fpdu fpdu;
    /* An error about a connection that aged out (see rdma_iwarp_limits),
     * not about the fed frame's. */
    bool aged;
};

/* What one frame was to the stream decoder. */
struct rdma_iwarp_seg {
    bool tcp;              /* carries TCP over IPv4/IPv6 */
    bool iwarp;            /* belongs to a connection recognized as MPA */
    struct rdma_tcp hdr;
    uint32_t payload_len;
    const char *note;      /* "retransmission", "no MPA handshake seen", ... */
};

struct rdma_iwarp_stream;
struct rdma_iwarp_stream *rdma_iwarp_stream_new(void);
void rdma_iwarp_stream_free(struct rdma_iwarp_stream *s);

/* What a stream decoder may hold, whatever the capture. Past max_conns
 * connections the least recently active one ages out (an MPA connection
 * with an error PDU whose `aged` is set, plain TCP only counted), and so
 * does a connection without a segment for more than idle_ns of capture
 * time (see rdma_iwarp_stream_set_time); past max_bytes octets held by all
 * directions together (partial PDUs and out-of-order octets, about 1.13
 * bytes of memory per octet held out of order), the direction asking for
 * more stops being followed and says so. A connection costs about 400
 * bytes besides what it holds. Zero keeps the default; idle_ns
 * RDMA_IWARP_NEVER turns the idle age-out off. */
#define RDMA_IWARP_DEFAULT_MAX_CONNS ((size_t)1 << 17)
#define RDMA_IWARP_DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define RDMA_IWARP_DEFAULT_IDLE_NS (UINT64_C(600) * 1000000000) /* ten minutes */
#define RDMA_IWARP_NEVER UINT64_MAX
struct rdma_iwarp_limits {
    size_t max_conns;
    size_t max_bytes;
    uint64_t idle_ns;
};
void rdma_iwarp_stream_set_limits(struct rdma_iwarp_stream *s, const struct rdma_iwarp_limits *lim);
/* The capture time of the frames fed from now on, in nanoseconds from any
 * origin; a time earlier than one given before counts as that one. Until
 * it is given, time stands still and nothing ages out for being idle. */
void rdma_iwarp_stream_set_time(struct rdma_iwarp_stream *s, uint64_t t_ns);

struct rdma_iwarp_stats {
    size_t conns;          /* tracked now */
    size_t bytes_held;     /* now */
    uint64_t aged_out;     /* connections that left the table to make room */
    uint64_t aged_idle;    /* connections that left it after idle_ns without a segment */
    uint64_t refused;      /* connections not tracked: memory ran out */
    uint64_t over_budget;  /* times a direction was refused octets by max_bytes */
    uint64_t conflicts;    /* segments whose octets differ from those already seen */
};
void rdma_iwarp_stream_stats(const struct rdma_iwarp_stream *s, struct rdma_iwarp_stats *st);

/* Feed one frame that rdma_decode() filled into pkt. Sets pkt->proto to
 * RDMA_PROTO_IWARP for frames of MPA connections. The PDUs this frame
 * completes are then taken with rdma_iwarp_next() until it returns false;
 * their pointers stay valid until the next feed. */
void rdma_iwarp_feed(struct rdma_iwarp_stream *s, struct rdma_pkt *pkt, const uint8_t *frame,
                     uint64_t frame_no, struct rdma_iwarp_seg *seg);
bool rdma_iwarp_next(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu);
/* At the end of a capture: one error PDU per direction left holding part
 * of an FPDU; returns false when there are no more. */
bool rdma_iwarp_finish(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu);

/* ---- printing ------------------------------------------------------------- */
/* JSON members (no braces) for a frame's TCP header and one PDU (NULL for
 * a frame that completes none), and the text after the addresses. Both
 * return 0 when cap is too small. */
size_t rdma_iwarp_format_json(const struct rdma_iwarp_seg *seg, const struct rdma_iwarp_pdu *pdu,
                              char *buf, size_t cap);
size_t rdma_iwarp_format_summary(const struct rdma_pkt *pkt, const struct rdma_iwarp_seg *seg,
                                 const struct rdma_iwarp_pdu *pdu, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
