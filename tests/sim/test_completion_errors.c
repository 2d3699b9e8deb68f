/* test_completion_errors.c - the completion statuses a responder's NAK
 * gives (IBA vol. 1 section 9.7.5.2.4, table 43): a remote access error
 * for a request whose R_Key the responder does not know, a remote invalid
 * request for one whose packets contradict the responder's path MTU, and
 * in both cases the work requests behind it flushed (section 10.8.3.1: the
 * queue pair goes to the error state).
 *
 * A valid configuration never makes the responder refuse anything, so the
 * fault is planted in a network built from one: the requester is given a
 * forged R_Key, or the responder a smaller path MTU than the requester,
 * before the run. The remaining status, remote operational error, comes
 * from a NAK code the simulated responder never sends: a wire format that
 * wraps RoCEv2's (the transport seam, host/nic.h) turns the responder's
 * first ACK into that NAK on its way out. rdmasim sim covers
 * retry-exceeded, rnr-retry-exceeded and flushed end to end, in
 * tests/sim/test_transport.py. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "host/nic.h"
#include "net/net.h"
#include "sim.h"
#include "../check_run.h"
#include "config_text.h"

/* a WRITE, a READ behind it and a SEND, a to b on one queue pair */
static const char config[] = "payload: data\n"
                             "nic: {timeout: 20us}\n"
                             "topology: {hosts: [a, b], links: [{a: a, b: b}]}\n"
                             "workload:\n"
                             "  messages:\n"
                             "    - {src: a, dst: b, op: write, size: 8192}\n"
                             "    - {src: a, dst: b, op: read, size: 4096}\n"
                             "    - {src: a, dst: b, op: send, size: 100, start: 1us}\n";


static void expect(const struct sim_network *net, const unsigned want[3])
{
    ck_assert_uint_eq(net->nmsgs, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(net->msgs[i].status == want[i], "message %zu: %s, want %s", i,
                      sim__msg_status_name(net->msgs[i].status), sim__msg_status_name(want[i]));
    struct sim_totals t;
    sim_network_totals((struct sim_network *)net, &t);
    ck_assert_uint_eq(t.failed, 3);
    ck_assert_uint_eq(t.completed, 0);
}

START_TEST(forged_rkey_is_a_remote_access_error)
{
    struct sim_config *cfg = config_text_load(config);
    struct sim_network *net = sim_network_create(cfg);
    ck_assert_uint_eq(net->nconns, 1);
    net->msgs[0].rkey ^= 0x5a; /* the key byte: rkey = (index + 1) << 8 | key */
    sim_network_run(net);
    const unsigned want[3] = {SIM_MSG_REMOTE_ACCESS, SIM_MSG_FLUSHED, SIM_MSG_FLUSHED};
    expect(net, want);
    /* the NAK comes back as the first packet's answer: no retransmission */
    ck_assert_uint_eq(net->msgs[0].retx, 0);
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

START_TEST(packets_longer_than_the_responders_mtu_are_an_invalid_request)
{
    struct sim_config *cfg = config_text_load(config);
    struct sim_network *net = sim_network_create(cfg);
    struct sim_conn *c = &net->conns[0];
    /* a is host 0, the requester; its peer now expects 1024-byte packets */
    ck_assert_uint_eq(c->qp[1]->mtu, 4096);
    c->qp[1]->mtu = 1024;
    sim_network_run(net);
    const unsigned want[3] = {SIM_MSG_REMOTE_INVALID, SIM_MSG_FLUSHED, SIM_MSG_FLUSHED};
    expect(net, want);
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

START_TEST(unplanted_network_completes)
{
    struct sim_config *cfg = config_text_load(config);
    struct sim_network *net = sim_network_create(cfg);
    sim_network_run(net);
    for (size_t i = 0; i < net->nmsgs; i++)
        ck_assert_msg(net->msgs[i].status == SIM_MSG_OK, "message %zu: %s", i,
                      sim__msg_status_name(net->msgs[i].status));
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

/* RoCEv2, except that the first ACK it frames becomes a NAK with code
 * remote operational error (IBA table 43: syndrome 011 00011). */
static bool ack_turned;

static struct sim_frame *nak_first_ack(struct sim_nic *nic, const struct sim_qp *qp,
                                       struct rdma_pkt *pkt)
{
    if (!ack_turned && (pkt->present & RDMA_HDR_AETH) &&
        rdma_aeth_kind(pkt->aeth.syndrome) == RDMA_AETH_ACK) {
        pkt->aeth.syndrome = RDMA_AETH_NAK << 5 | RDMA_NAK_REMOTE_OPERATIONAL_ERROR;
        ack_turned = true;
    }
    return sim__transport_rocev2.frame(nic, qp, pkt);
}

START_TEST(an_operational_error_nak_is_a_remote_operational_error)
{
    struct sim_config *cfg = config_text_load(config);
    struct sim_network *net = sim_network_create(cfg);
    struct sim_transport_ops faulty = sim__transport_rocev2;
    faulty.frame = nak_first_ack;
    ack_turned = false;
    /* b is the responder: host 1 */
    struct sim_host *b = (struct sim_host *)net->nodes[net->host_node[1]];
    b->nic.transport = &faulty;
    sim_network_run(net);
    ck_assert(ack_turned);
    const unsigned want[3] = {SIM_MSG_REMOTE_OPERATIONAL, SIM_MSG_FLUSHED, SIM_MSG_FLUSHED};
    expect(net, want);
    sim_network_destroy(net);
    sim_config_free(cfg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("completion errors");
    TCase *t = tcase_create("naks");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, unplanted_network_completes);
    tcase_add_test(t, forged_rkey_is_a_remote_access_error);
    tcase_add_test(t, packets_longer_than_the_responders_mtu_are_an_invalid_request);
    tcase_add_test(t, an_operational_error_nak_is_a_remote_operational_error);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
