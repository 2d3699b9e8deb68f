/* opcode.c - the BTH opcode table (IBA vol. 1 rel. 1.4, table 38; RoCEv2
 * annex A17 for CNP), one entry per opcode, read by the decoder, encoder,
 * printers and simulator alike.
 *
 * Opcode = transport base (bits 7-5) | operation (bits 4-0). The operations
 * are listed once below with the transports that define them; the extended
 * headers a transport adds (RDETH and DETH for RD, DETH for UD, XRCETH for
 * XRC requests) are added per transport, so header order is never hand-kept.
 */
#include "opcode_list.h"
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
