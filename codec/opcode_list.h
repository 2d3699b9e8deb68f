/* opcode_list.h - the operations of the BTH opcode table, once: opcode.c
 * builds rdma_opcodes[] from them, and format_json.c the text of each
 * opcode's name. The flags and transports are opcode.c's shorthand
 * (REQ, PL, T_CONN, ...), which a user that ignores them need not define.
 */
#ifndef RDMA_CODEC_OPCODE_LIST_H
#define RDMA_CODEC_OPCODE_LIST_H

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

#endif
