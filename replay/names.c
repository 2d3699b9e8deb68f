/* names.c - names of the enumerations of replay.h, from their X-macro
 * lists, and message kinds derived from the opcode table's flags. */
#include "internal.h"

/* The operation a packet belongs to, from its rdma_opcodes[] flags. */
unsigned replay__kind_of_flags(uint32_t fl)
{
    unsigned base = fl & RDMA_OPF_WRITE    ? RDMA_REPLAY_KIND_BASE_WRITE
                    : fl & RDMA_OPF_READ   ? RDMA_REPLAY_KIND_BASE_READ
                    : fl & RDMA_OPF_ATOMIC ? RDMA_REPLAY_KIND_BASE_ATOMIC
                                           : RDMA_REPLAY_KIND_BASE_SEND;
    unsigned mod = fl & RDMA_OPF_IMM   ? RDMA_REPLAY_KIND_MOD_IMM
                   : fl & RDMA_OPF_INV ? RDMA_REPLAY_KIND_MOD_INV
                                       : RDMA_REPLAY_KIND_MOD_NONE;
    return base * RDMA_REPLAY_KIND_MODS + mod;
}

const char *rdma_replay_kind_name(unsigned kind)
{
    static const char *const names[RDMA_REPLAY_KINDS] = {
        "SEND", "SEND with Immediate", "SEND with Invalidate",
        "RDMA WRITE", "RDMA WRITE with Immediate", "RDMA WRITE with Invalidate",
        "RDMA READ", "RDMA READ with Immediate", "RDMA READ with Invalidate",
        "ATOMIC", "ATOMIC with Immediate", "ATOMIC with Invalidate",
#define IW_KIND_NAME(name, text) text,
        RDMA_REPLAY_IWARP_KINDS(IW_KIND_NAME)
#undef IW_KIND_NAME
    };
    return kind < RDMA_REPLAY_KINDS ? names[kind] : "?";
}

const char *rdma_replay_anomaly_name(unsigned kind)
{
    static const char *const names[] = {
#define NAME(name, text, sev) text,
        RDMA_REPLAY_ANOMALY_KINDS(NAME)
#undef NAME
    };
    return kind < RDMA_REPLAY_ANOM_COUNT ? names[kind] : "?";
}

unsigned rdma_replay_anomaly_severity(unsigned kind)
{
    static const unsigned char sev[] = {
#define SEV(name, text, s) s,
        RDMA_REPLAY_ANOMALY_KINDS(SEV)
#undef SEV
    };
    return kind < RDMA_REPLAY_ANOM_COUNT ? sev[kind] : 9;
}

const char *rdma_replay_gbn_trigger_name(unsigned t)
{
    static const char *const names[] = {
#define NAME(name, text) text,
        RDMA_REPLAY_GBN_TRIGGERS(NAME)
#undef NAME
    };
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const char *rdma_replay_pairing_name(unsigned p)
{
    static const char *const names[] = {"unpaired", "ACK", "DETH", "CM", "TCP"};
    return p < sizeof names / sizeof names[0] ? names[p] : "?";
}

const char *rdma_replay_msg_status_name(const struct rdma_replay_msg *m)
{
    switch (m->status) {
    case RDMA_REPLAY_MSG_OK:
        return "ok";
    case RDMA_REPLAY_MSG_NAK:
        return rdma_nak_code_name(m->nak_code) ? rdma_nak_code_name(m->nak_code) : "NAK (reserved code)";
    case RDMA_REPLAY_MSG_NO_ACK:
        return "no acknowledgement";
    case RDMA_REPLAY_MSG_INCOMPLETE:
        return "request packets missing";
    case RDMA_REPLAY_MSG_NO_RESPONSE:
        return "no response";
    case RDMA_REPLAY_MSG_SEGMENTS_MISSING:
        return "DDP segments missing";
    case RDMA_REPLAY_MSG_ONE_WAY:
        return "acknowledgement not in the capture (one direction only)";
    }
    return "?";
}
