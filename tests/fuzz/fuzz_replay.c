/* fuzz_replay.c - libFuzzer target: a sequence of frames through the
 * decoder into the replay analysis (replay/rdma_replay.h), with a timeline,
 * then the end of the capture and every accessor the reports use.
 *
 * Input: byte 0 picks the link type (as fuzz_frame.c), then frames, each a
 * 4-byte header and its bytes:
 *   bytes 0-1  frame length, big-endian (cut to what the input still holds)
 *   byte 2     bytes the wire had beyond the capture (0: none)
 *   byte 3     time since the previous frame in microseconds; with bit 7
 *              set, the low bits step back instead (captures do)
 * Properties: a message named by the callback lies within the frames fed
 * and, when it has a latency, completes after it starts; intervals close in
 * order, each flow told only for an interval it carried packets in; at the
 * end the totals add up, every message done was told, pairings are
 * symmetric, and the anomaly rows add up to the totals per kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_codec.h"
#include "rdma_replay.h"

#define FUZZ_TARGET "fuzz_replay"
#include "fuzz_common.h"

#define FRAME_HDR 4
#define INTERVAL_NS 20000u

struct seen {
    uint64_t frames;   /* fed so far */
    uint64_t messages;
    uint64_t last_interval;
    bool any_interval;
};

static bool on_message(void *ctx, const struct rdma_replay *r, const struct rdma_replay_flow *f,
                       const struct rdma_replay_msg *m)
{
    struct seen *s = ctx;
    s->messages++;
    require(m->f_first >= 1 && m->f_first <= s->frames, "message starts at a frame fed");
    require(m->f_done >= 1 && m->f_done <= s->frames, "message done at a frame fed");
    require(!m->has_latency || m->t_done >= m->t_first, "message completes after it starts");
    require(strcmp(rdma_replay_msg_status_name(m), "?") != 0, "message status has a name");
    require(strcmp(rdma_replay_kind_name(m->kind), "?") != 0, "message kind has a name");
    require(rdma_replay_flow(r, f->id - 1) == f, "message flow is the analysis's");
    return true;
}

static void interval(struct seen *s, uint64_t start_ns)
{
    require(start_ns % INTERVAL_NS == 0, "interval starts on a boundary");
    require(!s->any_interval || start_ns >= s->last_interval, "intervals close in order");
    s->any_interval = true;
    s->last_interval = start_ns;
}

static bool on_flow_interval(void *ctx, const struct rdma_replay *r, uint64_t start_ns,
                             const struct rdma_replay_flow *f)
{
    (void)r;
    interval(ctx, start_ns);
    require(f->tl_packets > 0, "a flow is told for an interval it carried packets in");
    return true;
}

static bool on_pfc_interval(void *ctx, const struct rdma_replay *r, uint64_t start_ns,
                            const struct rdma_replay_pfc *p, uint64_t paused_ns)
{
    (void)r;
    interval(ctx, start_ns);
    require(p->tl_frames || paused_ns, "a priority is told for an interval it paused in");
    require(paused_ns <= INTERVAL_NS, "paused no longer than the interval");
    return true;
}

/* What the reports read, read once, with the properties of the whole. */
static void check_end(const struct rdma_replay *r, const struct seen *s)
{
    const struct rdma_replay_totals *t = rdma_replay_totals(r);
    require(t->frames == s->frames, "every frame counted");
    require(t->rdma_frames + t->other_frames <= t->frames, "frame classes add up");
    require(t->messages_failed <= t->messages_done, "failed messages are done messages");
    require(t->messages_done == s->messages, "every message done was told");
    uint32_t nflows = rdma_replay_flow_count(r);
    for (uint32_t i = 0; i < nflows; i++) {
        const struct rdma_replay_flow *f = rdma_replay_flow(r, i);
        require(f->id == i + 1, "flow ids in order");
        if (f->peer >= 0) {
            require((uint32_t)f->peer < nflows, "peer is a flow");
            require(rdma_replay_flow(r, (uint32_t)f->peer)->peer == (int32_t)i, "pairing is symmetric");
        }
        uint32_t conv = rdma_replay_conv_id(r, f);
        require(conv >= 1 && conv <= f->id, "conversations are numbered 1, 2, ... in order");
        if (f->peer >= 0)
            require(conv == rdma_replay_conv_id(r, rdma_replay_flow(r, (uint32_t)f->peer)),
                    "both directions are one conversation");
        char a[RDMA_REPLAY_ADDR_TEXT_MAX];
        rdma_replay_addr_format(&f->key, false, a, sizeof a);
        rdma_replay_addr_format(&f->key, true, a, sizeof a);
        rdma_replay_addr_format_ip(&f->key, true, a, sizeof a);
        require(strlen(a) < sizeof a, "address fits");
        (void)rdma_replay_pairing_name(f->pairing);
    }
    uint32_t n;
    const struct rdma_replay_anomaly *an = rdma_replay_anomalies(r, &n);
    uint64_t per_kind[RDMA_REPLAY_ANOM_COUNT] = {0};
    for (uint32_t i = 0; i < n; i++) {
        require(an[i].kind < RDMA_REPLAY_ANOM_COUNT, "anomaly kind known");
        require(an[i].flow < (int32_t)nflows, "anomaly flow is a flow");
        require(an[i].nsamples <= RDMA_REPLAY_SAMPLES && an[i].nsamples <= an[i].count, "samples kept");
        per_kind[an[i].kind] += an[i].count;
        (void)rdma_replay_anomaly_name(an[i].kind);
    }
    for (unsigned k = 0; k < RDMA_REPLAY_ANOM_COUNT; k++)
        require(per_kind[k] == rdma_replay_anomaly_total(r, k), "anomaly rows add up per kind");
    const struct rdma_replay_conn *c = rdma_replay_conns(r, &n);
    for (uint32_t i = 0; i < n; i++)
        require(c[i].f_req || c[i].f_rep || c[i].f_rej || c[i].f_rtu || c[i].f_dreq || c[i].f_drep,
                "a connection was seen in some CM message");
    const struct rdma_replay_pfc *p = rdma_replay_pfc(r, &n);
    for (uint32_t i = 0; i < n; i++)
        require(p[i].longest_ns <= p[i].paused_ns, "longest pause within the time paused");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned linktype = fuzz_linktypes[data[0] % FUZZ_NLINKTYPES];
    struct rdma_decode_config dcfg;
    rdma_decode_config_init(&dcfg);
    struct seen s = {0};
    struct rdma_replay_config cfg = {.link_bps = 100000000000u, .interval_ns = INTERVAL_NS};
    struct rdma_replay_callbacks cb = {
        .ctx = &s, .message = on_message, .flow_interval = on_flow_interval, .pfc_interval = on_pfc_interval};
    struct rdma_replay *r = rdma_replay_new(&cfg, &cb);
    if (!r)
        return 0;
    static struct rdma_pkt pkt;
    int64_t sec = 1700000000, nsec = 0;
    size_t off = 1;
    bool ok = true;
    while (ok && off + FRAME_HDR <= size) {
        const uint8_t *h = data + off;
        size_t len = (size_t)h[0] << 8 | h[1];
        off += FRAME_HDR;
        if (len > size - off)
            len = size - off;
        int64_t step = (int64_t)(h[3] & 0x7f) * 1000;
        nsec += h[3] & 0x80 ? -step : step;
        if (nsec < 0) {
            nsec += 1000000000;
            sec--;
        } else if (nsec >= 1000000000) {
            nsec -= 1000000000;
            sec++;
        }
        /* an exact-size copy, so the sanitizers see a read past the frame */
        uint8_t *frame = malloc(len ? len : 1);
        if (!frame)
            break;
        memcpy(frame, data + off, len);
        off += len;
        enum rdma_status st = rdma_decode(&dcfg, linktype, frame, (uint32_t)len, (uint32_t)(len + h[2]), &pkt);
        s.frames++;
        ok = rdma_replay_frame(r, sec, nsec, &pkt, st, frame);
        free(frame);
    }
    if (ok && rdma_replay_finish(r))
        check_end(r, &s);
    rdma_replay_free(r);
    return 0;
}
