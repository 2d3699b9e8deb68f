/* test_seams.c - the RC transport (requester, responder, completer) runs
 * over any wire format behind struct sim_transport_ops, not only RoCEv2,
 * and ports over any link layer behind struct sim_link_layer_ops, not only
 * Ethernet with PFC.
 *
 * The wire format here is the least one could be: a tag, then the
 * decoded packet (struct rdma_pkt) copied as it is, then the payload. It
 * builds no real header, so whatever works over it owes nothing to
 * RoCEv2's Ethernet, IP, UDP or ICRC. Every operation the workload knows
 * runs over it between two hosts, with and without frame loss (go-back-N
 * and the retransmission timer), and every message must complete with
 * its bytes intact; a tap on the ports (the trace source observers use)
 * checks that every frame on the wire was in the test format.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/nic.h"
#include "net/net.h"
#include "sim.h"
#include "../check_run.h"

static const uint8_t TAG[4] = {'S', 'E', 'A', 'M'};
#define HDR_LEN (sizeof TAG + sizeof(struct rdma_pkt))

static uint32_t test_overhead(const struct sim_nic *nic)
{
    (void)nic;
    return (uint32_t)HDR_LEN;
}

static struct sim_frame *test_frame(struct sim_nic *nic, const struct sim_qp *qp,
                                    struct rdma_pkt *pkt)
{
    (void)qp;
    uint32_t len = (uint32_t)HDR_LEN + pkt->payload_len;
    struct sim_frame *f = sim__frame_alloc(&nic->host->node.net->pool, len);
    memcpy(f->data, TAG, sizeof TAG);
    memcpy(f->data + sizeof TAG, pkt, sizeof *pkt);
    if (pkt->payload_len && pkt->payload)
        memcpy(f->data + HDR_LEN, pkt->payload, pkt->payload_len);
    else
        memset(f->data + HDR_LEN, 0, pkt->payload_len);
    f->len = len;
    f->bth_off = (uint16_t)(len > UINT16_MAX ? UINT16_MAX : len); /* bit errors: none */
    return f;
}

static bool test_parse(struct sim_nic *nic, const struct sim_frame *f, struct rdma_pkt *pkt)
{
    (void)nic;
    if (f->len < HDR_LEN || memcmp(f->data, TAG, sizeof TAG))
        return false;
    memcpy(pkt, f->data + sizeof TAG, sizeof *pkt);
    pkt->payload = f->data + HDR_LEN; /* the sender's pointer means nothing here */
    return f->len == HDR_LEN + pkt->payload_len;
}

static bool test_congested(const struct rdma_pkt *pkt)
{
    (void)pkt;
    return false;
}

static struct sim_frame *test_cnp(struct sim_nic *nic, const struct sim_qp *qp)
{
    (void)nic;
    (void)qp;
    ck_abort_msg("no congestion control runs in this test");
    return NULL;
}

static const struct sim_transport_ops test_transport = {
    .name = "test",
    .overhead = test_overhead,
    .frame = test_frame,
    .parse = test_parse,
    .congested = test_congested,
    .cnp = test_cnp,
};

/* Counts the frames crossing a port, and those not in the test format. */
struct counting_tap {
    struct sim_tap tap;
    uint64_t frames, foreign;
};

static void count_frame(struct sim_tap *tap, sim_time_t t, const struct sim_frame *f)
{
    (void)t;
    struct counting_tap *c = (struct counting_tap *)tap;
    c->frames++;
    c->foreign += f->len < sizeof TAG || memcmp(f->data, TAG, sizeof TAG) != 0;
}

static const char *const CONFIG =
    "seed: 7\n"
    "payload: data\n"
    "nic: {mtu: 1024, timeout: 20us}\n"
    "topology:\n"
    "  hosts: [h0, h1]\n"
    "  links:\n"
    "    - {a: h0, b: h1, rate: 25Gbps, delay: 1us, loss: %s}\n"
    "workload:\n"
    "  messages:\n"
    "    - {src: h0, dst: h1, op: write, size: 30000}\n"
    "    - {src: h0, dst: h1, op: write_imm, size: 2048, imm: 0xcafe, start: 5us}\n"
    "    - {src: h0, dst: h1, op: read, size: 50000, start: 10us}\n"
    "    - {src: h0, dst: h1, op: send, size: 1500, start: 20us}\n"
    "    - {src: h0, dst: h1, op: send_imm, size: 100, imm: 42, start: 25us}\n"
    "    - {src: h0, dst: h1, op: send_inv, size: 64, start: 30us}\n"
    "    - {src: h0, dst: h1, op: cas, compare: 0, swap: 0x1122334455667788, start: 35us}\n"
    "    - {src: h0, dst: h1, op: faa, add: 1, initial: 41, start: 35us}\n"
    "    - {src: h1, dst: h0, qp: 2, op: write, size: 9000, start: 40us}\n";

static void run_over_test_transport(const char *loss, struct sim_totals *t)
{
    char path[] = "/tmp/test_seams_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, CONFIG, loss);
    fclose(f);
    char err[512];
    struct sim_config *cfg = sim_config_load(path, NULL, 0, err, sizeof err);
    unlink(path);
    ck_assert_msg(cfg, "%s", err);

    struct sim_network *net = sim_network_create(cfg);
    struct counting_tap taps[2] = {{.tap.frame = count_frame}, {.tap.frame = count_frame}};
    for (uint32_t h = 0; h < net->nhosts; h++) {
        struct sim_host *host = (struct sim_host *)net->nodes[net->host_node[h]];
        host->nic.transport = &test_transport;
        host->nic.port->tap = &taps[h].tap;
    }
    sim_network_run(net);
    sim_network_totals(net, t);

    ck_assert_uint_gt(taps[0].frames, 0);
    ck_assert_uint_gt(taps[1].frames, 0);
    ck_assert_msg(taps[0].foreign + taps[1].foreign == 0, "%llu frames not in the test format",
                  (unsigned long long)(taps[0].foreign + taps[1].foreign));
    ck_assert_uint_eq(t->messages, 9);
    ck_assert_msg(t->completed == t->messages, "%llu of %llu messages completed, %llu failed",
                  (unsigned long long)t->completed, (unsigned long long)t->messages,
                  (unsigned long long)t->failed);
    ck_assert_uint_eq(t->corrupted, 0);
    ck_assert_uint_eq(t->bad_frames, 0);
    sim_network_destroy(net);
    sim_config_free(cfg);
}

START_TEST(rc_runs_over_a_minimal_wire_format)
{
    struct sim_totals t;
    run_over_test_transport("0", &t);
    ck_assert_uint_gt(t.verified, 0);
    ck_assert_uint_eq(t.retransmitted, 0);
    ck_assert_uint_eq(t.lost, 0);
}
END_TEST

START_TEST(rc_recovers_losses_over_a_minimal_wire_format)
{
    struct sim_totals t;
    run_over_test_transport("0.05", &t);
    ck_assert_uint_gt(t.verified, 0);
    ck_assert_uint_gt(t.lost, 0);          /* the link lost frames ... */
    ck_assert_uint_gt(t.retransmitted, 0); /* ... and the requester sent them again */
}
END_TEST

/* ---- the link-layer seam ------------------------------------------------------------
 * A link layer with no framing cost and a gate: every class is blocked
 * until its timer fires at GATE_OPEN. A one-packet WRITE and its ACK then
 * finish exactly GATE_OPEN later than over Ethernet, less the 24 bytes of
 * preamble, FCS and gap that each of the two frames no longer costs:
 *   done(gate) = done(Ethernet) + GATE_OPEN - 2 x 24 B x 8 / 25 Gb/s
 *              = done(Ethernet) + GATE_OPEN - 15.36 ns. */
#define GATE_OPEN (7 * SIM_US)

static bool gate_receive(struct sim_port *p, struct sim_frame *f)
{
    (void)p;
    (void)f;
    return false; /* no frames of its own: all go to the node */
}

static void gate_timer(struct sim_port *p, void *which)
{
    (void)which;
    p->blocked = 0;
    sim__port_unblocked(p);
}

static void gate_nothing(struct sim_port *p) { (void)p; }

static const struct sim_link_layer_ops gate_link = {
    .name = "gate",
    .wire_extra = 0,
    .receive = gate_receive,
    .timer = gate_timer,
    .link_down = gate_nothing,
    .settle = gate_nothing,
};

static const char *const ONE_WRITE =
    "payload: data\n"
    "topology:\n"
    "  hosts: [h0, h1]\n"
    "  links:\n"
    "    - {a: h0, b: h1, rate: 25Gbps, delay: 1us}\n"
    "workload:\n"
    "  messages:\n"
    "    - {src: h0, dst: h1, op: write, size: 1000}\n";

static sim_time_t one_write_done(bool gated)
{
    char path[] = "/tmp/test_seams_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, ONE_WRITE, strlen(ONE_WRITE)), (int)strlen(ONE_WRITE));
    close(fd);
    char err[512];
    struct sim_config *cfg = sim_config_load(path, NULL, 0, err, sizeof err);
    unlink(path);
    ck_assert_msg(cfg, "%s", err);
    struct sim_network *net = sim_network_create(cfg);
    if (gated) {
        for (size_t i = 0; i < net->nports; i++) {
            struct sim_port *p = &net->ports[i];
            sim__port_set_link_layer(p, &gate_link);
            p->blocked = 0xff;
            sim_schedule(net->sim, GATE_OPEN, &p->comp, SIM_PORT_LINK_TIMER, NULL);
        }
    }
    sim_network_run(net);
    struct sim_totals t;
    sim_network_totals(net, &t);
    ck_assert_uint_eq(t.completed, 1);
    ck_assert_uint_eq(t.frames, 2); /* the WRITE and its ACK: no PFC frames */
    sim_time_t done = net->msgs[0].done;
    sim_network_destroy(net);
    sim_config_free(cfg);
    return done;
}

START_TEST(ports_run_over_another_link_layer)
{
    sim_time_t eth = one_write_done(false), gate = one_write_done(true);
    ck_assert_uint_eq(gate, eth + GATE_OPEN - 15360);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("seams");
    TCase *t = tcase_create("transport");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, rc_runs_over_a_minimal_wire_format);
    tcase_add_test(t, rc_recovers_losses_over_a_minimal_wire_format);
    suite_add_tcase(s, t);
    t = tcase_create("link layer");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, ports_run_over_another_link_layer);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
