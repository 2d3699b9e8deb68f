/* test_pcie_link.c - the PCIe link cost model and TLP scheduling
 * (sim/pcie_link.c, sim/pcie_tree.c) against pcie-bench's formulas
 * (Neugebauer et al., SIGCOMM 2018), computed here from the specification's
 * figures without the simulator's code:
 *
 *   raw  = GT/s x encoding x lanes           8b/10b Gen1-2, 128b/130b Gen3-5
 *   tlp  = raw x (1 - 8/ack - 8/fc - 4/1538)  ACK and UpdateFC DLLPs, SKP
 *   write goodput(sz) = tlp x sz / (sz + ceil(sz / MPS) x 24)
 *
 * where ack = fc = 168 symbol times for x16 at MPS 256 from Gen3 on (PCIe
 * Base Specification 5.0, tables 3-9 and 2-48).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcie/pcie.h"
#include "../check_run.h"

#define PS 1e12

static double gts(unsigned gen)
{
    static const double v[] = {0, 2.5e9, 5e9, 8e9, 16e9, 32e9, 64e9};
    return v[gen];
}

/* pcie-bench's TLP rate for x16 at MPS 256, Gen3 to Gen5 */
static double tlp_x16_mps256(unsigned gen)
{
    double raw = gts(gen) * 128.0 / 130.0 * 16;
    return raw * (1 - 8.0 / 168 - 8.0 / 168 - 4.0 / 1538);
}

static double write_goodput(double tlp, unsigned sz, unsigned mps)
{
    unsigned ntlp = (sz + mps - 1) / mps;
    return tlp * sz / (sz + ntlp * 24.0);
}

/* A host with one socket and its NIC on it. */
static struct cfg_pcie *one_nic(unsigned gen, unsigned width, unsigned mps)
{
    struct cfg_pcie *t = calloc(1, sizeof *t);
    sim__cfg_pcie_defaults(t);
    t->nodes[t->nic].link.gen = (uint8_t)gen;
    t->nodes[t->nic].link.width = (uint8_t)width;
    t->nodes[t->nic].link.mps = (uint16_t)mps;
    return t;
}

START_TEST(test_write_goodput_matches_pcie_bench)
{
    static const unsigned gens[] = {3, 4, 5};
    static const unsigned sizes[] = {64, 256, 1500};
    struct sim *sim = sim_create(1);
    for (unsigned g = 0; g < 3; g++) {
        for (unsigned s = 0; s < 3; s++) {
            struct cfg_pcie *t = one_nic(gens[g], 16, 256);
            struct sim_pcie_host *ph = sim__pcie_host_new(t, sim, "h");
            const struct pcie_route *r = &ph->nic_to[0];
            /* back to back DMA writes of one size, all issued at once */
            enum { N = 400 };
            sim_time_t landed[N];
            for (int i = 0; i < N; i++)
                landed[i] = sim__pcie_write(&r->out, 0, 0, sizes[s], r->mps, NULL);
            double per = (double)(landed[N - 1] - landed[N / 2]) / (N - 1 - N / 2);
            double goodput = sizes[s] * 8 / per * PS;
            double want = write_goodput(tlp_x16_mps256(gens[g]), sizes[s], 256);
            ck_assert_msg(fabs(goodput - want) / want < 1e-3, "gen%u %uB: %.4g b/s, formula %.4g",
                          gens[g], sizes[s], goodput, want);
            /* every TLP went up the NIC's link, none came down */
            const struct pcie_link_rt *l = &ph->links[t->nic];
            ck_assert_uint_eq(l->up.tlps[PCIE_MWR], (uint64_t)N * ((sizes[s] + 255) / 256));
            ck_assert_uint_eq(l->up.payload, (uint64_t)N * sizes[s]);
            ck_assert_uint_eq(l->down.wire, 0);
            sim__pcie_host_free(ph);
            sim__cfg_pcie_free(t);
        }
    }
    /* the figure pcie-bench quotes: Gen3 x16, MPS 256, large writes, about
     * 104 Gb/s of about 126 raw */
    ck_assert(fabs(write_goodput(tlp_x16_mps256(3), 1 << 20, 256) - 104e9) < 1.5e9);
    sim_destroy(sim);
}
END_TEST

START_TEST(test_line_rate_per_generation)
{
    /* encodings: 8b/10b, 128b/130b, and Gen6 flits carrying 236 TLP bytes
     * in 256 */
    double g1 = 2.5e9 * 0.8 * 1 * (1 - 8.0 / 237 - 8.0 / 237 - 4.0 / 1538);
    double g2 = 5e9 * 0.8 * 4 * (1 - 8.0 / 124 - 8.0 / 124 - 4.0 / 1538);
    double g3 = 8e9 * 128.0 / 130 * 8 * (1 - 8.0 / 203 - 8.0 / 203 - 4.0 / 1538);
    double g6 = 64e9 * 16 * 236.0 / 256;
    ck_assert(fabs(sim__pcie_tlp_rate(1, 1, 128) - g1) < 1);
    ck_assert(fabs(sim__pcie_tlp_rate(2, 4, 128) - g2) < 1);
    ck_assert(fabs(sim__pcie_tlp_rate(3, 8, 256) - g3) < 1);
    ck_assert(fabs(sim__pcie_tlp_rate(6, 16, 256) - g6) < 1);
    for (unsigned g = 3; g <= 5; g++)
        ck_assert(fabs(sim__pcie_tlp_rate(g, 16, 256) - tlp_x16_mps256(g)) < 1);
}
END_TEST

static sim_time_t ser(unsigned bytes, double rate)
{
    return (sim_time_t)ceil(bytes * 8 / rate * PS);
}

START_TEST(test_read_latency_and_goodput)
{
    struct sim *sim = sim_create(1);
    struct cfg_pcie *t = one_nic(3, 8, 256);
    struct sim_pcie_host *ph = sim__pcie_host_new(t, sim, "h");
    const struct pcie_route *r = &ph->nic_to[0];
    struct pcie_credits *cr = &ph->credits[t->nic];
    double rate = sim__pcie_tlp_rate(3, 8, 256);
    /* a 64-byte read alone: the request (24 bytes), the root complex's
     * read latency, the completion (64 + 20) */
    sim_time_t done = sim__pcie_read(r, cr, 0, 0, 64);
    sim_time_t want = ser(24, rate) + PCIE_DEFAULT_RC_READ_LATENCY + ser(84, rate);
    ck_assert_msg(llabs((long long)done - (long long)want) <= 2, "%llu vs %llu",
                  (unsigned long long)done, (unsigned long long)want);
    /* a 300-byte read, not a multiple of the MPS: its completion is cut in
     * ceil(300 / 256) = 2 TLPs, 256 + 20 and 44 + 20 bytes, back to back */
    sim_time_t t1 = 5 * SIM_US;
    done = sim__pcie_read(r, cr, t1, t1, 300);
    want = t1 + ser(24, rate) + PCIE_DEFAULT_RC_READ_LATENCY + ser(300 + 2 * 20, rate);
    ck_assert_msg(llabs((long long)done - (long long)want) <= 2, "300 bytes: %llu vs %llu",
                  (unsigned long long)done, (unsigned long long)want);
    /* many large reads: the completions, MPS data and 20 bytes each, fill
     * the link toward the NIC */
    enum { N = 200 };
    sim_time_t t0 = 10 * SIM_US, last[N];
    for (int i = 0; i < N; i++)
        last[i] = sim__pcie_read(r, cr, t0, t0, 4096);
    double per = (double)(last[N - 1] - last[N / 2]) / (N - 1 - N / 2);
    double goodput = 4096 * 8 / per * PS, bound = rate * 4096 / (4096 + 16 * 20.0);
    ck_assert_msg(fabs(goodput - bound) / bound < 1e-3, "%.4g vs %.4g", goodput, bound);
    sim__pcie_host_free(ph);
    sim__cfg_pcie_free(t);
    sim_destroy(sim);
}
END_TEST

START_TEST(test_read_credits_limit_outstanding_reads)
{
    struct sim *sim = sim_create(1);
    struct cfg_pcie *t = one_nic(3, 16, 256);
    t->nodes[t->nic].read_credits = 1;
    struct sim_pcie_host *ph = sim__pcie_host_new(t, sim, "h");
    double rate = sim__pcie_tlp_rate(3, 16, 256);
    /* one credit: the eight 512-byte requests of 4 KiB go one at a time */
    sim_time_t done = sim__pcie_read(&ph->nic_to[0], &ph->credits[t->nic], 0, 0, 4096);
    sim_time_t one = ser(24, rate) + PCIE_DEFAULT_RC_READ_LATENCY + ser(512 + 2 * 20, rate);
    ck_assert_msg(llabs((long long)done - 8 * (long long)one) <= 16, "%llu vs %llu",
                  (unsigned long long)done, (unsigned long long)(8 * one));
    sim__pcie_host_free(ph);
    sim__cfg_pcie_free(t);
    sim_destroy(sim);
}
END_TEST

START_TEST(test_link_direction_serves_in_arrival_order)
{
    struct pcie_dir d = {.fs = 1000};
    /* reserved for later first, then an earlier arrival fits in front */
    ck_assert_uint_eq(sim__pcie_reserve(&d, 0, 100, 10), 100);
    ck_assert_uint_eq(sim__pcie_reserve(&d, 0, 0, 5), 0);
    /* too long for the gap: after everything, never overlapping */
    ck_assert_uint_eq(sim__pcie_reserve(&d, 0, 0, 200), 110);
    /* a later arrival waits for all that arrived before it */
    ck_assert_uint_eq(sim__pcie_reserve(&d, 0, 150, 1), 310);
    ck_assert_uint_eq(d.busy, 216);
    /* what lies after the end of a run is not counted as busy in it */
    ck_assert_uint_eq(sim__pcie_busy_after(&d, 300), 11);
    /* slots that are over are forgotten */
    ck_assert_uint_eq(sim__pcie_reserve(&d, 1000, 1000, 1), 1000);
    ck_assert_uint_eq(d.n - d.lo, 1);
    sim__pcie_dir_free(&d);
}
END_TEST

START_TEST(test_paths_through_switches_roots_and_sockets)
{
    struct sim *sim = sim_create(1);
    /* socket0 and socket1; a switch on socket0 with the NIC and gpu0
     * under it; gpu1 on socket0, gpu2 on socket1 */
    struct cfg_pcie *t = calloc(1, sizeof *t);
    sim__cfg_pcie_defaults(t);
    struct cfg_pcie_node proto = t->nodes[t->nic], *n = calloc(7, sizeof *n);
    for (uint32_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i].name);
    free(t->nodes);
    t->nodes = n;
    t->sockets = 2;
    const char *names[] = {"socket0", "socket1", "sw", "nic", "gpu0", "gpu1", "gpu2"};
    const uint8_t kinds[] = {PCIE_ROOT, PCIE_ROOT, PCIE_SWITCH, PCIE_NIC, PCIE_GPU, PCIE_GPU, PCIE_GPU};
    const uint32_t parents[] = {0, 1, 0, 2, 2, 0, 1};
    for (uint32_t i = 0; i < 7; i++) {
        n[i] = proto;
        n[i].name = strdup(names[i]);
        n[i].kind = kinds[i];
        n[i].parent = parents[i];
        n[i].socket = i < 2 ? i : n[parents[i]].socket;
    }
    t->nnodes = 7;
    t->nic = 3;
    struct sim_pcie_host *ph = sim__pcie_host_new(t, sim, "h");
    /* under the switch: up to it and down, the switch's latency between */
    const struct pcie_route *r = &ph->nic_to[4];
    ck_assert_uint_eq(r->out.n, 2);
    ck_assert_uint_eq(r->out.hop[0].lat, n[2].latency);
    ck_assert_uint_eq(r->back.n, 2); /* no root complex: no throttle */
    /* through socket0: the completions of peer reads pass its throttle */
    r = &ph->nic_to[5];
    ck_assert_uint_eq(r->out.n, 3);
    ck_assert_uint_eq(r->back.n, 4);
    ck_assert_ptr_eq(r->back.hop[1].d, &ph->peer[0]);
    uint64_t throttled = (uint64_t)(r->back.hop[2].fs / PCIE_DEFAULT_PEER_READ_FACTOR + 0.5);
    ck_assert_uint_eq(r->back.hop[1].fs, throttled);
    /* across sockets: switch, socket0, the inter-socket link, socket1 */
    r = &ph->nic_to[6];
    ck_assert_uint_eq(r->out.n, 4);
    ck_assert_uint_eq(r->out.hop[2].fs, sim__pcie_fs_per_byte((double)t->socket_rate));
    ck_assert_uint_eq(r->out.hop[2].lat, t->socket_delay + t->rc_latency);
    /* memory on socket1: the target root adds no latency, the read latency is its own */
    r = &ph->nic_to[1];
    ck_assert_uint_eq(r->out.n, 3);
    ck_assert_uint_eq(r->out.hop[2].lat, t->socket_delay);
    ck_assert_uint_eq(r->target_latency, t->rc_read_latency);
    sim__pcie_host_free(ph);
    sim__cfg_pcie_free(t);
    sim_destroy(sim);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pcie");
    TCase *tc = tcase_create("link");
    tcase_add_test(tc, test_write_goodput_matches_pcie_bench);
    tcase_add_test(tc, test_line_rate_per_generation);
    tcase_add_test(tc, test_read_latency_and_goodput);
    tcase_add_test(tc, test_read_credits_limit_outstanding_reads);
    tcase_add_test(tc, test_link_direction_serves_in_arrival_order);
    tcase_add_test(tc, test_paths_through_switches_roots_and_sockets);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return check_run(suite()); }
