/* tcp_options.c - TCP options (RFC 9293 3.1): maximum segment size (RFC
 * 9293 3.7.1), window scale (RFC 7323 2), SACK-permitted and SACK (RFC
 * 2018 2-3), from one table of kinds and lengths.
 *
 *   | kind | len | data ... |   (EOL and NOP: kind only)
 *   MSS:   | 2 | 4 | mss (16) |
 *   WS:    | 3 | 3 | shift |
 *   SACKP: | 4 | 2 |
 *   SACK:  | 5 | 2 + 8n | left edge (32) | right edge (32) | ... n <= 4
 *
 * The encoder writes them in the order Linux puts them in a SYN without
 * timestamps (MSS, NOP, NOP, SACK-permitted, NOP, window scale) and SACK
 * blocks after two NOPs, so every option starts where its data aligns.
 */
#include <string.h>

#include "rdma_bytes.h"
#include "rdma_iwarp.h"

/* The fixed length of each kind, 0 for variable, -1 for kinds not known. */
static int fixed_len(unsigned kind)
{
    switch (kind) {
#define RDMA__TCPOPT_LEN(name, k, len)                                         \
    case k:                                                                    \
        return len;
        RDMA_TCP_OPTIONS(RDMA__TCPOPT_LEN)
#undef RDMA__TCPOPT_LEN
    default:
        return -1;
    }
}

static size_t put_head(uint8_t *p, unsigned kind, unsigned len)
{
    p[0] = (uint8_t)kind;
    if (len > 1)
        p[1] = (uint8_t)len;
    return len;
}

size_t rdma_tcp_options_encode(const struct rdma_tcp_options *o, uint8_t *out)
{
    size_t n = 0;
    if (o->mss) {
        n += put_head(out + n, RDMA_TCPOPT_MSS, (unsigned)fixed_len(RDMA_TCPOPT_MSS));
        rdma_put_be16(out + n - 2, o->mss);
    }
    if (o->sack_perm) {
        out[n++] = RDMA_TCPOPT_NOP;
        out[n++] = RDMA_TCPOPT_NOP;
        n += put_head(out + n, RDMA_TCPOPT_SACK_PERM, (unsigned)fixed_len(RDMA_TCPOPT_SACK_PERM));
    }
    if (o->has_wscale) {
        out[n++] = RDMA_TCPOPT_NOP;
        n += put_head(out + n, RDMA_TCPOPT_WSCALE, (unsigned)fixed_len(RDMA_TCPOPT_WSCALE));
        out[n - 1] = o->wscale;
    }
    unsigned nsack = o->nsack < RDMA_TCP_MAX_SACK ? o->nsack : RDMA_TCP_MAX_SACK;
    /* the blocks must fit what the other options left */
    while (nsack && n + 2 + 2 + 8 * nsack > RDMA_TCP_MAX_OPTIONS)
        nsack--;
    if (nsack) {
        out[n++] = RDMA_TCPOPT_NOP;
        out[n++] = RDMA_TCPOPT_NOP;
        n += put_head(out + n, RDMA_TCPOPT_SACK, 2);
        for (unsigned i = 0; i < nsack; i++) {
            rdma_put_be32(out + n, o->sack[i][0]);
            rdma_put_be32(out + n + 4, o->sack[i][1]);
            n += 8;
        }
        out[n - 8 * nsack - 1] = (uint8_t)(2 + 8 * nsack);
    }
    while (n & 3)
        out[n++] = RDMA_TCPOPT_NOP;
    return n;
}

enum rdma_status rdma_tcp_options_decode(const uint8_t *p, size_t len, struct rdma_tcp_options *o)
{
    memset(o, 0, sizeof *o);
    size_t i = 0;
    while (i < len) {
        unsigned kind = p[i];
        if (kind == RDMA_TCPOPT_EOL)
            break;
        if (kind == RDMA_TCPOPT_NOP) {
            i++;
            continue;
        }
        if (i + 2 > len || p[i + 1] < 2 || i + p[i + 1] > len)
            return RDMA_MALFORMED;
        unsigned olen = p[i + 1];
        int want = fixed_len(kind);
        if (want > 0 && (unsigned)want != olen)
            return RDMA_MALFORMED;
        const uint8_t *d = p + i + 2;
        switch (kind) {
        case RDMA_TCPOPT_MSS:
            o->mss = rdma_get_be16(d);
            break;
        case RDMA_TCPOPT_WSCALE:
            o->has_wscale = true;
            o->wscale = d[0];
            break;
        case RDMA_TCPOPT_SACK_PERM:
            o->sack_perm = true;
            break;
        case RDMA_TCPOPT_SACK:
            if ((olen - 2) % 8 || olen == 2)
                return RDMA_MALFORMED;
            for (unsigned b = 0; b < (olen - 2) / 8 && o->nsack < RDMA_TCP_MAX_SACK; b++) {
                o->sack[o->nsack][0] = rdma_get_be32(d + 8 * b);
                o->sack[o->nsack][1] = rdma_get_be32(d + 8 * b + 4);
                o->nsack++;
            }
            break;
        default:
            break; /* an option this decoder does not read */
        }
        i += olen;
    }
    return RDMA_OK;
}
