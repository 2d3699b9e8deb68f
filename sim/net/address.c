/* address.c - the addresses of host h, the same in every run: IPv4
 * 10.0.0.0 + h + 1, IPv6 fd00::h+1 (unique local, RFC 4193), MAC
 * 02:00:00 + h + 1 (locally administered). Switches, NICs and PFC frames
 * all derive them from the host index, so no node asks another for its
 * address.
 */
#include <string.h>

#include "net/net.h"

void sim__host_mac(uint32_t h, uint8_t mac[6])
{
    uint32_t v = h + 1;
    mac[0] = 0x02; /* locally administered */
    mac[1] = 0;
    mac[2] = (uint8_t)(v >> 24);
    mac[3] = (uint8_t)(v >> 16);
    mac[4] = (uint8_t)(v >> 8);
    mac[5] = (uint8_t)v;
}

void sim__host_ip6(uint32_t h, uint8_t ip6[16])
{
    uint32_t v = h + 1;
    memset(ip6, 0, 16);
    ip6[0] = 0xfd; /* unique local (RFC 4193) */
    ip6[12] = (uint8_t)(v >> 24);
    ip6[13] = (uint8_t)(v >> 16);
    ip6[14] = (uint8_t)(v >> 8);
    ip6[15] = (uint8_t)v;
}
