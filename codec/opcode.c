/* opcode.c - the BTH opcode table (IBA vol. 1 rel. 1.4, table 38; RoCEv2
 * annex A17 for CNP), one entry per opcode, read by the decoder, encoder,
 * printers and simulator alike.
 *
 * Opcode = transport base (bits 7-5) | operation (bits 4-0). The operations
 * are listed once below with the transports that define them; the extended
 * headers a transport adds (RDETH and DETH for RD, DETH for UD, XRCETH for
 * XRC requests) are added per transport, so header order is never hand-kept.
 */
#include "rdma_codec.h"

#define T_RC (1u << RDMA_TRANSPORT_RC)
#define T_UC (1u << RDMA_TRANSPORT_UC)
#define T_RD (1u << RDMA_TRANSPORT_RD)
#define T_UD (1u << RDMA_TRANSPORT_UD)
#define T_XRC (1u << RDMA_TRANSPORT_XRC)
#define T_CONN (T_RC | T_UC | T_RD | T_XRC)
#define T_REL (T_RC | T_RD | T_XRC)

#define REQ RDMA_OPF_REQUEST
#define RSP RDMA_OPF_RESPONSE
#define PL RDMA_OPF_PAYLOAD
#define F RDMA_OPF_FIRST
#define M RDMA_OPF_MIDDLE
#define L RDMA_OPF_LAST
#define O RDMA_OPF_ONLY
#define SND RDMA_OPF_SEND
#define WR RDMA_OPF_WRITE
#define RD RDMA_OPF_READ
#define AT RDMA_OPF_ATOMIC
#define IMM RDMA_OPF_IMM
#define INV RDMA_OPF_INV

/* X(code, name, headers, flags, transports) */
#define RDMA_OPERATIONS(X)                                                     \
    X(0x00, "SEND First", 0, REQ | PL | SND | F, T_CONN)                       \
    X(0x01, "SEND Middle", 0, REQ | PL | SND | M, T_CONN)                      \
    X(0x02, "SEND Last", 0, REQ | PL | SND | L, T_CONN)                        \
    X(0x03, "SEND Last with Immediate", RDMA_HDR_IMMDT, REQ | PL | SND | L | IMM, T_CONN) \
    X(0x04, "SEND Only", 0, REQ | PL | SND | O, T_CONN | T_UD)                 \
    X(0x05, "SEND Only with Immediate", RDMA_HDR_IMMDT, REQ | PL | SND | O | IMM, T_CONN | T_UD) \
    X(0x06, "RDMA WRITE First", RDMA_HDR_RETH, REQ | PL | WR | F, T_CONN)      \
    X(0x07, "RDMA WRITE Middle", 0, REQ | PL | WR | M, T_CONN)                 \
    X(0x08, "RDMA WRITE Last", 0, REQ | PL | WR | L, T_CONN)                   \
    X(0x09, "RDMA WRITE Last with Immediate", RDMA_HDR_IMMDT, REQ | PL | WR | L | IMM, T_CONN) \
    X(0x0a, "RDMA WRITE Only", RDMA_HDR_RETH, REQ | PL | WR | O, T_CONN)       \
    X(0x0b, "RDMA WRITE Only with Immediate", RDMA_HDR_RETH | RDMA_HDR_IMMDT, REQ | PL | WR | O | IMM, T_CONN) \
    X(0x0c, "RDMA READ Request", RDMA_HDR_RETH, REQ | RD | O, T_REL)           \
    X(0x0d, "RDMA READ Response First", RDMA_HDR_AETH, RSP | PL | RD | F, T_REL) \
    X(0x0e, "RDMA READ Response Middle", 0, RSP | PL | RD | M, T_REL)          \
    X(0x0f, "RDMA READ Response Last", RDMA_HDR_AETH, RSP | PL | RD | L, T_REL) \
    X(0x10, "RDMA READ Response Only", RDMA_HDR_AETH, RSP | PL | RD | O, T_REL) \
    X(0x11, "Acknowledge", RDMA_HDR_AETH, RSP | RDMA_OPF_ACK, T_REL)           \
    X(0x12, "ATOMIC Acknowledge", RDMA_HDR_AETH | RDMA_HDR_ATOMICACKETH, RSP | AT | O, T_REL) \
    X(0x13, "CmpSwap", RDMA_HDR_ATOMICETH, REQ | AT | O, T_REL)                \
    X(0x14, "FetchAdd", RDMA_HDR_ATOMICETH, REQ | AT | O, T_REL)               \
    X(0x15, "RESYNC", 0, REQ | O, T_RD)                                        \
    X(0x16, "SEND Last with Invalidate", RDMA_HDR_IETH, REQ | PL | SND | L | INV, T_RC | T_XRC) \
    X(0x17, "SEND Only with Invalidate", RDMA_HDR_IETH, REQ | PL | SND | O | INV, T_RC | T_XRC)

/* Headers a transport adds after the BTH, for requests and responses. */
#define RD_HEADERS(flags) (RDMA_HDR_RDETH | (((flags) & REQ) ? RDMA_HDR_DETH : 0))
#define UD_HEADERS(flags) RDMA_HDR_DETH
#define XRC_HEADERS(flags) (((flags) & REQ) ? RDMA_HDR_XRCETH : 0)
#define NO_HEADERS(flags) 0

#define ENTRY(TR, EXTRA, code, opname, hdrs, opflags, trs)                     \
    [RDMA_TRANSPORT_BASE_##TR | (code)] = {                                    \
        .name = ((trs) & T_##TR) ? #TR " " opname : 0,                         \
        .op = ((trs) & T_##TR) ? opname : 0,                                   \
        .transport = RDMA_TRANSPORT_##TR,                                      \
        .headers = ((trs) & T_##TR) ? (hdrs) | EXTRA(opflags) : 0,             \
        .flags = ((trs) & T_##TR) ? (opflags) : 0,                             \
    },
#define RC_ENTRY(...) ENTRY(RC, NO_HEADERS, __VA_ARGS__)
#define UC_ENTRY(...) ENTRY(UC, NO_HEADERS, __VA_ARGS__)
#define RD_ENTRY(...) ENTRY(RD, RD_HEADERS, __VA_ARGS__)
#define UD_ENTRY(...) ENTRY(UD, UD_HEADERS, __VA_ARGS__)
#define XRC_ENTRY(...) ENTRY(XRC, XRC_HEADERS, __VA_ARGS__)

enum {
#define TR_BASE(name, base) RDMA_TRANSPORT_BASE_##name = base,
    RDMA_TRANSPORTS(TR_BASE)
#undef TR_BASE
};

const struct rdma_opcode_info rdma_opcodes[256] = {
    RDMA_OPERATIONS(RC_ENTRY)
    RDMA_OPERATIONS(UC_ENTRY)
    RDMA_OPERATIONS(RD_ENTRY)
    RDMA_OPERATIONS(UD_ENTRY)
    RDMA_OPERATIONS(XRC_ENTRY)
    /* RoCEv2 congestion notification packet (annex A17.9.2): 16 reserved
     * bytes follow the BTH. */
    [0x81] = {
        .name = "CNP",
        .op = "CNP",
        .transport = RDMA_TRANSPORT_CNP,
        .flags = RDMA_OPF_CNP,
        .fixed_payload = 16,
    },
};

const char *rdma_transport_name(unsigned transport)
{
    static const char *const names[] = {
#define TR_NAME(name, base) #name,
        RDMA_TRANSPORTS(TR_NAME)
#undef TR_NAME
    };
    return transport < RDMA_TRANSPORT_COUNT ? names[transport] : "?";
}
