/* tcp_json.c - what summary.json says of iWARP NICs and connections: the
 * TCP settings, and per side the counters of its TCP endpoint (how losses
 * were repaired: fast retransmits, SACK recoveries, timeouts) with the
 * endpoint's state at the end of the run.
 */
#include "engine/units.h"
#include "host/iwarp/iwarp.h"
#include "observe/observe.h"

static const char *const cc_names[] = {
#define OBS__TCP_CC_NAME(name, str) str,
    CFG_TCP_CCS(OBS__TCP_CC_NAME)
#undef OBS__TCP_CC_NAME
};

void sim__tcp_nic_json(FILE *f, const struct cfg_nic *n)
{
    char rto[32], delack[32];
    sim__format_time(n->tcp.min_rto, rto, sizeof rto);
    sim__format_time(n->tcp.delayed_ack, delack, sizeof delack);
    fprintf(f, ", \"transport\": \"%s\", \"mpa_markers\": %s, \"tcp\": {\"cc\": \"%s\", "
               "\"sack\": %s, \"init_cwnd\": %u, \"window\": %llu, \"min_rto\": \"%s\", "
               "\"delayed_ack\": \"%s\"}",
            n->transport == CFG_TRANSPORT_TCP ? "tcp" : "iwarp", n->mpa_markers ? "true" : "false",
            cc_names[n->tcp.cc], n->tcp.sack ? "true" : "false",
            n->tcp.init_cwnd, (unsigned long long)n->tcp.window, rto, delack);
}

void sim__tcp_side_json(FILE *f, const struct sim_qp *qp)
{
    const struct sim_tcp *t = &qp->iw->tcp;
    fprintf(f, ", \"tcp\": {\"segments_out\": %llu, \"data_segments_out\": %llu, "
               "\"retransmitted_segments\": %llu, \"segments_in\": %llu, \"dupacks\": %llu, "
               "\"fast_retransmits\": %llu, \"sack_recoveries\": %llu, \"rto\": %llu, "
               "\"ecn_cuts\": %llu, \"state\": \"%s\", \"mss\": %u, \"cwnd\": %u, \"srtt_ps\": %llu, "
               "\"rto_ps\": %llu}",
            (unsigned long long)t->st.segs_out, (unsigned long long)t->st.data_segs_out,
            (unsigned long long)t->st.retrans, (unsigned long long)t->st.segs_in,
            (unsigned long long)t->st.dupacks, (unsigned long long)t->st.fast_retrans,
            (unsigned long long)t->st.sack_recoveries, (unsigned long long)t->st.rto_events,
            (unsigned long long)t->st.ecn_cuts, sim__tcp_state_name(t->state), t->mss, t->cc.cwnd, (unsigned long long)t->srtt,
            (unsigned long long)t->rto);
}
