/* pairing.c - joining a response flow to the request flow it answers when
 * no CM exchange named the QPNs: the requester's flow is one going the
 * other way between the same two addresses, not yet paired, with an
 * outstanding request whose PSN the response names. A pairing is made only
 * when exactly one flow fits.
 */
#include "replay.h"

/* Does flow f have a request outstanding at the PSN this response names? */
static bool answers(struct chan *c, const struct rdma_pkt *pkt)
{
    if (!c->n || !c->psn_valid)
        return false;
    uint32_t psn = pkt->bth.psn;
    uint32_t lo = chan_msg(c, 0)->psn;
    uint32_t hi = c->read_open ? (c->read_hi + 1) & PSN_MASK : c->epsn;
    return psn_diff(psn, lo) >= 0 && psn_diff(psn, hi) < 0;
}

struct flow *flow_responder_of(struct replay *r, struct flow *rf, const struct rdma_pkt *pkt)
{
    struct flow_table *t = &r->flows;
    if (rf->peer >= 0)
        return flow_at(t, (uint32_t)rf->peer);
    struct flow_key back;
    flow_key_reverse(&rf->key, 0, &back);
    uint32_t *gen = flow_pair_gen(t, &back);
    if (!gen || rf->searched_gen == *gen + 1)
        return NULL;
    struct flow *match = NULL;
    unsigned matches = 0;
    for (uint32_t i = flow_pair_first(t, &rf->key); i; i = flow_at(t, i - 1)->pair_next) {
        struct flow *f = flow_at(t, i - 1);
        if (f->peer >= 0 || f == rf || f->transport != rf->transport || !answers(&f->ch, pkt))
            continue;
        match = f;
        matches++;
    }
    if (matches != 1) {
        rf->searched_gen = *gen + 1;
        return NULL;
    }
    flows_join(t, rf, match, PAIR_ACK);
    return match;
}
