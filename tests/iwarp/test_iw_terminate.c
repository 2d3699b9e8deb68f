/* test_iw_terminate.c - an iWARP responder that is asked for memory it
 * does not grant answers with a Terminate (RFC 5040 7.2, layer RDMA, error
 * type remote protection): code 0 for an STag it does not know, code 1 for
 * an offset outside the region the STag names. The requester's Read then
 * ends with a remote access error and the work behind it is flushed (RFC
 * 5040 5.6: the stream is over).
 *
 * A valid configuration never asks for such memory, so the fault is
 * planted in a network built from one, as tests/sim/test_completion_errors.c
 * does for RoCEv2: the requester is given a forged STag or a remote
 * address one octet past its region's start. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "host/iwarp/iwarp.h"
#include "net/net.h"
#include "sim.h"
#include "../check_run.h"
#include "../sim/config_text.h"

/* two READs, a from b, on one connection */
static const char config[] = "payload: data\n"
                             "nic: {transport: iwarp, tcp: {min_rto: 1ms, delayed_ack: 10us}}\n"
                             "topology: {hosts: [a, b], links: [{a: a, b: b}]}\n"
                             "workload:\n"
                             "  messages:\n"
                             "    - {src: a, dst: b, op: read, size: 4096}\n"
                             "    - {src: a, dst: b, op: read, size: 4096, start: 1us}\n";


/* Run with message 0 planted by `plant`; the responder's Terminate code. */
static unsigned run(void (*plant)(struct sim_network *net), unsigned want0, unsigned want1)
{
    struct sim_config *cfg = config_text_load(config);
    struct sim_network *net = sim_network_create(cfg);
    ck_assert_uint_eq(net->nconns, 1);
    if (plant)
        plant(net);
    sim_network_run(net);
    ck_assert_msg(net->msgs[0].status == want0, "message 0: %s", sim__msg_status_name(net->msgs[0].status));
    ck_assert_msg(net->msgs[1].status == want1, "message 1: %s", sim__msg_status_name(net->msgs[1].status));
    const struct sim_iw *b = net->conns[0].qp[1]->iw; /* b is host 1, the responder */
    unsigned code = b->term_sent ? b->term_code : 0xff;
    if (b->term_sent) {
        ck_assert_uint_eq(b->term_layer, 0);
        ck_assert_uint_eq(b->term_etype, 1);
    }
    sim_network_destroy(net);
    sim_config_free(cfg);
    return code;
}

static void forge_stag(struct sim_network *net) { net->msgs[0].rkey ^= 0x5a; }
static void past_start(struct sim_network *net) { net->msgs[0].rva += 1; }

START_TEST(unplanted_reads_complete)
{
    ck_assert_uint_eq(run(NULL, SIM_MSG_OK, SIM_MSG_OK), 0xff);
}
END_TEST

START_TEST(an_unknown_stag_is_terminated)
{
    ck_assert_uint_eq(run(forge_stag, SIM_MSG_REMOTE_ACCESS, SIM_MSG_FLUSHED), 0);
}
END_TEST

START_TEST(an_offset_out_of_bounds_is_terminated)
{
    ck_assert_uint_eq(run(past_start, SIM_MSG_REMOTE_ACCESS, SIM_MSG_FLUSHED), 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("iwarp terminate");
    TCase *t = tcase_create("terminate");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, unplanted_reads_complete);
    tcase_add_test(t, an_unknown_stag_is_terminated);
    tcase_add_test(t, an_offset_out_of_bounds_is_terminated);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
