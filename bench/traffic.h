/* traffic.h - a reproducible mix of RoCEv2/IPv4 reliable-connection traffic,
 * built frame by frame with the public encoder, for the benchmarks.
 *
 * Each message is one of: an RDMA WRITE (Only, or First/Middle.../Last) and
 * its ACK; a SEND with immediate (Only, or First/Middle.../Last) and its ACK;
 * an RDMA READ Request and its READ Response packets; and, when asked, a
 * CNP after some messages. Messages go to queue
 * pairs drawn at random, each QP with its own PSN, MSN, path MTU, addresses
 * and UDP source port, so consecutive frames look like a busy link.
 */
#ifndef BENCH_TRAFFIC_H
#define BENCH_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

struct traffic_config {
    unsigned nqp;      /* queue pairs */
    unsigned mtu_min;  /* each QP's path MTU is a power of two in [mtu_min, mtu_max] */
    unsigned mtu_max;  /* at most 4096 */
    unsigned min_last; /* smallest payload of a Last or Only packet (clamped to the MTU) */
    unsigned max_last; /* largest payload of a Last or Only packet; 0: the MTU */
    unsigned max_packets; /* packets of one message at most; 0: 4 */
    unsigned cnp_percent; /* messages followed by a CNP, as congested traffic has them */
    uint64_t seed;
};

struct traffic_qp;

struct traffic {
    struct traffic_config cfg;
    uint64_t rng;
    uint16_t ip_id;
    struct traffic_qp *qp;
    uint8_t *pattern; /* payload bytes are taken from here */
};

/* Called once per frame built; the frame is valid only during the call. */
typedef void traffic_emit_fn(void *ctx, const uint8_t *frame, size_t len);

/* Returns 0, or -1 when out of memory or cfg is out of range. */
int traffic_init(struct traffic *t, const struct traffic_config *cfg);
void traffic_free(struct traffic *t);

/* Build every frame of the next message and its response. Returns 0, or -1
 * if the encoder refused a frame (a bug in the generator). */
int traffic_message(struct traffic *t, traffic_emit_fn *emit, void *ctx);

#endif
