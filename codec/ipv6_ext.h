/* ipv6_ext.h - walking the IPv6 extension headers that may stand before
 * the upper-layer header (RFC 8200 4.1), for UDP (RoCEv2, decode.c) and TCP
 * (iWARP, tcp.c) alike:
 *
 *   | IPv6 (40) | next, len | ...  | next, len | ... | UDP or TCP
 *
 * Hop-by-Hop Options (0), Routing (43) and Destination Options (60) are
 * (len + 1) * 8 octets, the Authentication Header (51) (len + 2) * 4, a
 * Fragment header (44) 8; only an atomic fragment (offset 0, no more
 * fragments) is a whole datagram. At most IPV6_EXT_MAX are walked, as
 * tshark does not stop at any number the wire allows.
 */
#ifndef RDMA_IPV6_EXT_H
#define RDMA_IPV6_EXT_H

#include "bytes.h"
#include "cursor.h"

#define IPV6_EXT_MAX 8
enum { IP6_HOPOPT = 0, IP6_ROUTING = 43, IP6_FRAGMENT = 44, IP6_AH = 51, IP6_DSTOPTS = 60 };

enum ipv6_ext_result {
    IPV6_EXT_OK,         /* the cursor is at the upper-layer header `upper` */
    IPV6_EXT_OTHER,      /* another protocol, too many headers, or a fragment */
    IPV6_EXT_TRUNCATED,  /* an extension header runs past the captured octets */
    IPV6_EXT_MALFORMED,  /* one runs past `end`, the IPv6 payload's end */
};

/* From the cursor just past the fixed header, *nxt its Next Header: walk to
 * `upper`. On return *nxt is the last Next Header read. */
static inline enum ipv6_ext_result ipv6_ext_walk(struct cursor *c, size_t end, uint8_t *nxt, uint8_t upper)
{
    for (unsigned i = 0; i < IPV6_EXT_MAX && *nxt != upper; i++) {
        uint8_t n = *nxt;
        if (n != IP6_HOPOPT && n != IP6_ROUTING && n != IP6_FRAGMENT && n != IP6_AH && n != IP6_DSTOPTS)
            return IPV6_EXT_OTHER;
        const uint8_t *h = take(c, 2);
        if (!h)
            return IPV6_EXT_TRUNCATED;
        size_t len = n == IP6_FRAGMENT ? 8 : n == IP6_AH ? ((size_t)h[1] + 2) * 4 : ((size_t)h[1] + 1) * 8;
        if (c->pos - 2 + len > end)
            return IPV6_EXT_MALFORMED;
        const uint8_t *rest = take(c, len - 2);
        if (!rest)
            return IPV6_EXT_TRUNCATED;
        if (n == IP6_FRAGMENT && (rdma_get_be16(rest) & 0xfff9))
            return IPV6_EXT_OTHER; /* a fragment: offset or M set */
        *nxt = h[0];
    }
    return *nxt == upper ? IPV6_EXT_OK : IPV6_EXT_OTHER;
}

#endif
