/* ecn.c - ECN marking at a switch's egress: RED on the instantaneous queue
 * of a class, as a frame leaves it (the default) or joins it (Floyd and Jacobson, "Random Early Detection Gateways",
 * 1993, without the averaging, as DCQCN asks of switches: Zhu et al.,
 * SIGCOMM 2015, section 3.1), and setting Congestion Experienced in the IP
 * header (RFC 3168, section 5).
 *
 *   P(mark) 1 |              ________
 *             |             |
 *        pmax |          _/ |
 *             |       _/    |
 *           0 |______/      |
 *             0    kmin    kmax      queue bytes
 *
 * Only ECN-capable packets (ECT(0) or ECT(1)) are marked. The ECN bits sit
 * in the IPv4 TOS byte or the IPv6 traffic class, both of which the RoCEv2
 * ICRC masks (IBA annex A17.8), so the ICRC stays valid; the IPv4 header
 * checksum does cover them and is updated (RFC 1624, equation 3).
 *
 *   IPv4: | ver ihl | DSCP ECN | ...   checksum at bytes 10-11
 *   IPv6: | ver tclass-hi | tclass-lo flow | ...   (ECN: byte 1, bits 5-4)
 */
#include "fabric/fabric.h"
#include "rdma_bytes.h"

/* Defaults scale with the port's rate from the setting the DCQCN paper's
 * analysis arrives at for 40 Gb/s: Kmin 5 KB, Kmax 200 KB, Pmax 1%. */
#define REF_RATE UINT64_C(40000000000)
#define REF_KMIN 5000
#define REF_KMAX 200000
#define REF_PMAX 0.01

static uint64_t scaled(uint64_t ref, uint64_t rate)
{
    return (uint64_t)((unsigned __int128)ref * rate / REF_RATE);
}

void sim__ecn_resolve(const struct cfg_switch *s, uint64_t rate, uint64_t cap, struct sim_red *red)
{
    const struct cfg_ecn *e = &s->ecn_all;
    for (uint32_t i = 0; i < s->necn_rates; i++)
        if (s->ecn_rates[i].rate == rate)
            e = &s->ecn_rates[i];
    /* scaled defaults stay below what the queue can hold (the loader
     * refuses set values above it): a Kmax the buffer never reaches
     * drops frames before marking them all */
    red->kmax = e->kmax ? e->kmax : scaled(REF_KMAX, rate);
    if (!e->kmax && red->kmax > cap)
        red->kmax = cap;
    red->kmin = e->kmin ? e->kmin : scaled(REF_KMIN, rate);
    if (!e->kmin && red->kmin >= red->kmax)
        red->kmin = red->kmax / 2;
    red->pmax = e->pmax >= 0 ? e->pmax : REF_PMAX;
    if (red->kmax <= red->kmin)
        red->kmax = red->kmin + 1;
}

bool sim__ecn_decide(const struct sim_red *red, uint64_t qbytes, struct sim_rng *rng)
{
    if (qbytes <= red->kmin)
        return false;
    if (qbytes >= red->kmax)
        return true;
    double p = red->pmax * (double)(qbytes - red->kmin) / (double)(red->kmax - red->kmin);
    return sim_rng_unit(rng) < p;
}

bool sim__ecn_mark(uint8_t *l3, bool ipv6)
{
    if (ipv6) {
        unsigned ecn = (l3[1] >> 4) & 3;
        if (ecn == 0 || ecn == 3)
            return false;
        l3[1] |= 0x30;
        return true;
    }
    unsigned ecn = l3[1] & 3;
    if (ecn == 0 || ecn == 3)
        return false;
    uint16_t old = rdma_get_be16(l3), new = (uint16_t)(old | 3);
    /* HC' = ~(~HC + ~m + m') */
    uint32_t sum = (uint16_t)~rdma_get_be16(l3 + 10) + (uint32_t)(uint16_t)~old + new;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    rdma_put_be16(l3, new);
    rdma_put_be16(l3 + 10, (uint16_t)~sum);
    return true;
}
