/* names.c - names for the enumerations of rdma_codec.h, generated from the
 * same X-macro lists as the enumerations themselves. */
#include "rdma_codec.h"

const char *rdma_status_name(enum rdma_status st)
{
    static const char *const names[] = {
#define NAME(name, str) str,
        RDMA_STATUSES(NAME)
#undef NAME
    };
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

const char *rdma_proto_name(enum rdma_proto p)
{
    static const char *const names[] = {
#define NAME(name, str) str,
        RDMA_PROTOS(NAME)
#undef NAME
    };
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

const char *rdma_aeth_kind_name(unsigned kind)
{
    switch (kind) {
#define NAME(name, v, str)                                                     \
    case v:                                                                    \
        return str;
        RDMA_AETH_KINDS(NAME)
#undef NAME
    }
    return "?";
}

const char *rdma_nak_code_name(unsigned code)
{
    switch (code) {
#define NAME(name, v, str)                                                     \
    case v:                                                                    \
        return str;
        RDMA_NAK_CODES(NAME)
#undef NAME
    }
    return 0;
}

const char *rdma_cm_message_name(uint16_t attr)
{
    switch (attr) {
#define NAME(name, id, member, type, FIELDS)                                   \
    case id:                                                                   \
        return #name;
        RDMA_CM_MESSAGES(NAME)
#undef NAME
    }
    return 0;
}

/* IBA vol. 1 rel. 1.4, table 45: the RNR NAK timer field, in microseconds
 * (0 stands for the largest delay, 655.36 ms). */
uint32_t rdma_rnr_timer_us(unsigned timer)
{
    static const uint32_t us[32] = {
        655360, 10,   20,   30,   40,    60,    80,    120,   160,    240,   320,
        480,    640,  960,  1280, 1920,  2560,  3840,  5120,  7680,   10240, 15360,
        20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
    };
    return us[timer & 31];
}
