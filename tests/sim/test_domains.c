/* test_domains.c - the order in which equal-time events of different
 * domains fire changes no result (engine.h: a node and its ports share a
 * domain, and domains hear each other only through events). The same
 * networks run with their nodes' domains as built and reversed, which
 * reverses the order of every picosecond's events across nodes; every
 * message must complete at the same picosecond, with the same frames,
 * drops and retransmissions. Ties are everywhere here: synchronised
 * senders, drop-tail queues that overflow, PFC pausing a fabric. */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "sim.h"
#include "../check_run.h"
#include "config_text.h"

struct outcome {
    struct sim_totals totals;
    sim_time_t done[256];
    size_t nmsgs;
};

/* Every domain d becomes last - d: a node's ports go with it. */
static void reverse_domains(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    uint32_t last = sim__nvswitch_domain(cfg, (uint32_t)cfg->nnvswitches);
    for (uint32_t i = 0; i < cfg->nnodes; i++) {
        struct sim_node *n = net->nodes[i];
        uint32_t d = last - sim__node_domain(cfg, i);
        sim_component_set_domain(&n->comp, d);
        for (uint32_t p = 0; p < n->nports; p++)
            sim_component_set_domain(&n->ports[p]->comp, d);
    }
}

static struct outcome run(const char *text, bool reversed)
{
    struct sim_config *cfg = config_text_load(text);
    struct sim_network *net = sim_network_create(cfg);
    if (reversed)
        reverse_domains(net);
    ck_assert(sim_network_run(net));
    struct outcome o = {.nmsgs = net->nmsgs};
    sim_network_totals(net, &o.totals);
    ck_assert_uint_le(net->nmsgs, sizeof o.done / sizeof o.done[0]);
    for (size_t i = 0; i < net->nmsgs; i++)
        o.done[i] = net->msgs[i].done;
    sim_network_destroy(net);
    sim_config_free(cfg);
    return o;
}

static void same_outcome(const char *text, bool lossy)
{
    struct outcome a = run(text, false), b = run(text, true);
    /* the ties this is about */
    ck_assert_uint_gt(lossy ? a.totals.dropped : a.totals.pauses, 0);
    ck_assert_uint_eq(a.totals.completed, a.totals.messages);
    ck_assert_uint_eq(b.totals.completed, a.totals.completed);
    ck_assert_uint_eq(b.totals.frames, a.totals.frames);
    ck_assert_uint_eq(b.totals.retransmitted, a.totals.retransmitted);
    ck_assert_uint_eq(b.totals.dropped, a.totals.dropped);
    ck_assert_uint_eq(b.totals.pauses, a.totals.pauses);
    ck_assert_uint_eq(b.totals.ecn_marked, a.totals.ecn_marked);
    ck_assert_uint_eq(b.totals.end, a.totals.end);
    for (size_t i = 0; i < a.nmsgs; i++)
        ck_assert_msg(a.done[i] == b.done[i], "message %zu done at %" PRIu64 " ps, reversed at %" PRIu64, i,
                      a.done[i], b.done[i]);
}

/* Sixteen senders into one host over a small shared buffer: the
 * leaf's queue to it overflows, and which of two frames arriving at the
 * same picosecond is dropped is a tie the turns break. */
START_TEST(a_lossy_incast_ends_alike_in_any_domain_order)
{
    same_outcome("seed: 1\n"
                 "payload: none\n"
                 "nic: {timeout: 200us}\n"
                 "topology:\n"
                 "  switch_defaults: {shared_buffer: 256KiB, alpha: 1}\n"
                 "  generate:\n"
                 "    kind: leaf-spine\n"
                 "    leaves: 5\n"
                 "    spines: 2\n"
                 "    hosts_per_leaf: 4\n"
                 "    host_link: {rate: 100Gbps, delay: 1us}\n"
                 "    fabric_link: {rate: 100Gbps, delay: 1us}\n"
                 "workload:\n"
                 "  generate:\n"
                 "    kind: incast\n"
                 "    to: h16\n"
                 "    from: [h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15]\n"
                 "    op: write\n"
                 "    size: 128KiB\n",
                 true);
}
END_TEST

/* A k=4 fat-tree's all-to-all under PFC and DCQCN (the NIC's default),
 * routed by hash: flows collide, pause their way back and are marked. */
START_TEST(a_paused_fat_tree_ends_alike_in_any_domain_order)
{
    same_outcome("seed: 3\n"
                 "payload: none\n"
                 "topology:\n"
                 "  routing: ecmp\n"
                 "  switch_defaults:\n"
                 "    shared_buffer: 256KiB\n"
                 "    pfc: {priorities: [3]}\n"
                 "    ecn: {kmin: 20KiB, kmax: 80KiB, pmax: 0.2}\n"
                 "  generate:\n"
                 "    kind: fat-tree\n"
                 "    k: 4\n"
                 "    host_link: {rate: 100Gbps, delay: 1us}\n"
                 "    fabric_link: {rate: 100Gbps, delay: 1us}\n"
                 "workload:\n"
                 "  generate:\n"
                 "    kind: all-to-all\n"
                 "    op: write\n"
                 "    size: 64KiB\n",
                 false);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("domains");
    TCase *t = tcase_create("order");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, a_lossy_incast_ends_alike_in_any_domain_order);
    tcase_add_test(t, a_paused_fat_tree_ends_alike_in_any_domain_order);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
