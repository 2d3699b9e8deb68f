/* names.c - names of the enumerations of replay.h, from their X-macro
 * lists, and message kinds derived from the opcode table's flags. */
#include "replay.h"

/* The operation a packet belongs to, from its rdma_opcodes[] flags. */
unsigned kind_of_flags(uint32_t fl)
{
    unsigned base = fl & RDMA_OPF_WRITE    ? KIND_BASE_WRITE
                    : fl & RDMA_OPF_READ   ? KIND_BASE_READ
                    : fl & RDMA_OPF_ATOMIC ? KIND_BASE_ATOMIC
                                           : KIND_BASE_SEND;
    unsigned mod = fl & RDMA_OPF_IMM ? KIND_MOD_IMM : fl & RDMA_OPF_INV ? KIND_MOD_INV : KIND_MOD_NONE;
    return base * KIND_MODS + mod;
}

const char *kind_name(unsigned kind)
{
    static const char *const names[NKINDS] = {
        "SEND", "SEND with Immediate", "SEND with Invalidate",
        "RDMA WRITE", "RDMA WRITE with Immediate", "RDMA WRITE with Invalidate",
        "RDMA READ", "RDMA READ with Immediate", "RDMA READ with Invalidate",
        "ATOMIC", "ATOMIC with Immediate", "ATOMIC with Invalidate",
#define IW_KIND_NAME(name, text) text,
        IWARP_KINDS(IW_KIND_NAME)
#undef IW_KIND_NAME
    };
    return kind < NKINDS ? names[kind] : "?";
}

const char *anomaly_name(unsigned kind)
{
    static const char *const names[] = {
#define NAME(name, text, sev) text,
        ANOMALY_KINDS(NAME)
#undef NAME
    };
    return kind < ANOM_COUNT ? names[kind] : "?";
}

unsigned anomaly_severity(unsigned kind)
{
    static const unsigned char sev[] = {
#define SEV(name, text, s) s,
        ANOMALY_KINDS(SEV)
#undef SEV
    };
    return kind < ANOM_COUNT ? sev[kind] : 9;
}

const char *gbn_trigger_name(unsigned t)
{
    static const char *const names[] = {
#define NAME(name, text) text,
        GBN_TRIGGERS(NAME)
#undef NAME
    };
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const char *pairing_name(unsigned p)
{
    static const char *const names[] = {"unpaired", "ACK", "DETH", "CM", "TCP"};
    return p < sizeof names / sizeof names[0] ? names[p] : "?";
}

const char *msg_status_name(const struct msg *m)
{
    switch (m->status) {
    case MSG_OK:
        return "ok";
    case MSG_NAK:
        return rdma_nak_code_name(m->nak_code) ? rdma_nak_code_name(m->nak_code) : "NAK (reserved code)";
    case MSG_NO_ACK:
        return "no acknowledgement";
    case MSG_INCOMPLETE:
        return "request packets missing";
    case MSG_NO_RESPONSE:
        return "no response";
    case MSG_SEGMENTS_MISSING:
        return "DDP segments missing";
    }
    return "?";
}
