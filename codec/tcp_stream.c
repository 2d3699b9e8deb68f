/* tcp_stream.c - iWARP over a capture: TCP reassembled per connection and
 * direction, the MPA startup phase followed (RFC 5044 7), and the PDUs a
 * frame completes handed out one at a time.
 *
 *   frame -> rdma_tcp_decode -> connection (hash of both endpoints) -> direction
 *     in order:      parse in place; an unfinished PDU's octets are held
 *     out of order:  held in a ring indexed by sequence number until the gap
 *                    closes (or counted lost past MAX_OOO octets ahead)
 *     already seen:  dropped ("retransmission"); different octets in an
 *                    overlap are reported ("retransmission with different data"):
 *                    against the octets still held, and, for octets already
 *                    parsed, against a CRC of each of the last RECENT
 *                    segments delivered (a segment sent again whole)
 *   direction state: START (Request/Reply key?) -> WAIT_REPLY -> FPDU
 *                    START (no key, joined mid-stream) -> PROBE (markers?) -> FPDU | SKIP
 *
 * What a direction holds is at most one unfinished PDU, the out-of-order
 * octets of the window, or the first PROBE_LEN octets of a stream joined
 * mid-way: memory follows the data in flight, not the capture. Connections
 * are freed when both sides have sent FIN, or on RST.
 *
 * Bounds, whatever the capture: connections live in a hash table that
 * doubles as they are added (O(1) lookup) and in a list by last activity;
 * past max_conns the least recently active connection ages out (reported
 * when it was MPA or held octets, counted otherwise), and so does one
 * without a segment for longer than idle_ns of capture time: the list by
 * activity is also by time, so that is a look at its oldest per frame. All octets held by
 * all connections together stay under max_bytes: past it, the direction
 * that asks for more loses what it holds and the loss is reported.
 * rdma_iwarp_finish() walks the connections once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "iwarp_internal.h"

#define MIN_BUCKETS 1024
#define MAX_OOO (1u << 20)     /* octets ahead of a hole before the missing ones count as lost */
#define MIN_RING 4096u         /* smallest out-of-order ring */
/* In-order octets held: an unfinished PDU, or what a filled hole released. */
#define MAX_HELD (MAX_OOO + 256u * 1024)
#define PROBE_LEN 2048         /* octets searched for markers on a stream joined mid-way */
#define ADDR_KEY_MAX 36        /* two IPv6 addresses and two ports */
#define RECENT 8               /* delivered segments remembered per direction, by CRC */

enum dir_state { DS_START, DS_WAIT_REPLY, DS_FPDU, DS_PROBE, DS_SKIP };

struct dir {
    uint8_t state;      /* enum dir_state */
    bool started;       /* nxt is known */
    bool syn;           /* the SYN was seen, so `start` is the first data octet */
    bool fin;
    bool origin_unset;  /* framing known, its first FPDU is the next octet parsed */
    bool markers_unknown; /* Reply seen without its Request: a zero word at the origin is a marker */
    bool resync;        /* octets were lost: find the next FPDU from a marker */
    uint32_t start, nxt;
    uint8_t *buf;       /* held in-order octets buf[off..len) from sequence buf_seq */
    size_t off, len, cap;
    uint32_t buf_seq;
    uint64_t buf_frame; /* frame the oldest held octet came in */
    /* Out-of-order octets: the octet of sequence q sits at ring[q & (rcap-1)]
     * when bit q & (rcap-1) of have is set; all lie in [nxt, nxt + rcap). */
    uint8_t *ring;
    uint64_t *have;
    uint32_t rcap;
    uint32_t ooo_hi;    /* one past the highest held out-of-order octet */
    uint64_t ooo_frame; /* frame of the oldest held out-of-order octet */
    size_t ooo_bytes;
    /* The last RECENT segments delivered in order, by sequence, length and
     * CRC32c: a retransmission of one of them whole is compared with it
     * without keeping the octets (16 bytes a segment). */
    struct {
        uint32_t seq, len, crc;
    } recent[RECENT];
    uint8_t recent_next;
    const char *error;  /* reported by the next rdma_iwarp_next() */
    uint8_t error_status;
    struct rdma_mpa_framing fr;
};

struct conn {
    struct conn *next;              /* hash chain */
    struct conn *older, *newer;     /* by last activity */
    uint64_t last_frame;
    uint64_t last_t;   /* capture time of its last segment */
    uint8_t key[ADDR_KEY_MAX];
    uint8_t keylen;
    bool mpa;     /* recognized from its Request/Reply or its markers */
    bool noted;   /* "no MPA handshake seen" already reported */
    bool have_req;
    bool closing;
    bool idle;    /* aged out for being idle, not for room */
    uint8_t req_m, req_c;
    struct dir d[2]; /* d[0] leaves the endpoint whose address and port sort first */
};

struct rdma_iwarp_stream {
    struct conn **bucket;
    size_t nbuckets, nconns;
    struct conn *oldest, *newest;
    struct conn *aged;     /* aged out, reported by rdma_iwarp_next(), then freed */
    struct conn *fin_c;    /* rdma_iwarp_finish(): where it goes on */
    bool fin_started;
    unsigned fin_di;
    size_t bytes;          /* held by all directions: buffers and rings */
    struct rdma_iwarp_limits lim;
    struct rdma_iwarp_stats st;
    uint64_t now;          /* capture time (rdma_iwarp_stream_set_time) */
    char reason[160];      /* a reason with numbers in it, valid until the next call */
    struct conn *cur;      /* connection of the frame being fed */
    unsigned cur_dir;
    bool other_pending;    /* the handshake completed: the other direction may parse */
    const uint8_t *zc;     /* in-order payload of the current frame, parsed in place */
    size_t zc_len;
    uint32_t zc_seq;
    unsigned zc_dir;
    struct rdma_pkt *pkt;
    struct rdma_iwarp_seg *seg;
    uint64_t frame;
    uint8_t scratch[RDMA_MPA_MAX_FPDU];
};

static bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

struct rdma_iwarp_stream *rdma_iwarp_stream_new(void)
{
    struct rdma_iwarp_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->bucket = calloc(MIN_BUCKETS, sizeof *s->bucket);
    if (!s->bucket) {
        free(s);
        return NULL;
    }
    s->nbuckets = MIN_BUCKETS;
    s->lim.max_conns = RDMA_IWARP_DEFAULT_MAX_CONNS;
    s->lim.max_bytes = RDMA_IWARP_DEFAULT_MAX_BYTES;
    s->lim.idle_ns = RDMA_IWARP_DEFAULT_IDLE_NS;
    return s;
}

void rdma_iwarp_stream_set_time(struct rdma_iwarp_stream *s, uint64_t t_ns)
{
    if (t_ns > s->now)
        s->now = t_ns;
}

void rdma_iwarp_stream_set_limits(struct rdma_iwarp_stream *s, const struct rdma_iwarp_limits *lim)
{
    s->lim = *lim;
    if (!s->lim.max_conns)
        s->lim.max_conns = RDMA_IWARP_DEFAULT_MAX_CONNS;
    if (!s->lim.max_bytes)
        s->lim.max_bytes = RDMA_IWARP_DEFAULT_MAX_BYTES;
    if (!s->lim.idle_ns)
        s->lim.idle_ns = RDMA_IWARP_DEFAULT_IDLE_NS;
}

void rdma_iwarp_stream_stats(const struct rdma_iwarp_stream *s, struct rdma_iwarp_stats *st)
{
    *st = s->st;
    st->conns = s->nconns;
    st->bytes_held = s->bytes;
}

static size_t ring_bytes(uint32_t rcap)
{
    return rcap ? rcap + rcap / 8 : 0;
}

static void ring_release(struct rdma_iwarp_stream *s, struct dir *d)
{
    s->bytes -= ring_bytes(d->rcap);
    free(d->ring);
    free(d->have);
    d->ring = 0;
    d->have = 0;
    d->rcap = 0;
    d->ooo_bytes = 0;
}

static void dir_release(struct rdma_iwarp_stream *s, struct dir *d)
{
    s->bytes -= d->cap;
    free(d->buf);
    d->buf = 0;
    d->off = d->len = d->cap = 0;
    ring_release(s, d);
}

static void conn_free(struct rdma_iwarp_stream *s, struct conn *c)
{
    dir_release(s, &c->d[0]);
    dir_release(s, &c->d[1]);
    free(c);
}

void rdma_iwarp_stream_free(struct rdma_iwarp_stream *s)
{
    if (!s)
        return;
    for (struct conn *c = s->oldest, *n; c; c = n) {
        n = c->newer;
        conn_free(s, c);
    }
    for (struct conn *c = s->aged, *n; c; c = n) {
        n = c->next;
        conn_free(s, c);
    }
    free(s->bucket);
    free(s);
}

/* ---- connections ---------------------------------------------------------- */

static size_t key_hash(const struct rdma_iwarp_stream *s, const uint8_t *k, size_t n)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a, 64 bits */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211u;
    return (size_t)(h ^ (h >> 29)) & (s->nbuckets - 1);
}

/* Both directions of a connection share one key: the endpoint that sorts
 * first goes first; *dir says which side sent this frame. */
static size_t make_key(const struct rdma_pkt *pkt, const struct rdma_tcp *tcp, uint8_t *key,
                       unsigned *dir)
{
    uint8_t a[18], b[18];
    size_t alen;
    if (pkt->present & RDMA_HDR_IP) {
        memcpy(a, pkt->ip.src, 4);
        memcpy(b, pkt->ip.dst, 4);
        alen = 4;
    } else {
        memcpy(a, pkt->ipv6.src, 16);
        memcpy(b, pkt->ipv6.dst, 16);
        alen = 16;
    }
    rdma_put_be16(a + alen, tcp->srcport);
    rdma_put_be16(b + alen, tcp->dstport);
    size_t n = alen + 2;
    *dir = memcmp(a, b, n) > 0;
    memcpy(key, *dir ? b : a, n);
    memcpy(key + n, *dir ? a : b, n);
    return 2 * n;
}

/* The direction di of connection c as a PDU reports it: make_key() put
 * the endpoint that sorts first, which d[0] leaves, before the other. */
static void pdu_ends(struct rdma_iwarp_pdu *pdu, const struct conn *c, unsigned di)
{
    size_t n = c->keylen / 2, alen = n - 2;
    const uint8_t *from = c->key + (di ? n : 0), *to = c->key + (di ? 0 : n);
    struct rdma_tcp_ends *e = &pdu->ends;
    memset(e, 0, sizeof *e);
    e->ipv6 = alen == 16;
    memcpy(e->src, from, alen);
    memcpy(e->dst, to, alen);
    e->srcport = rdma_get_be16(from + alen);
    e->dstport = rdma_get_be16(to + alen);
}

static void lru_unlink(struct rdma_iwarp_stream *s, struct conn *c)
{
    if (c->older)
        c->older->newer = c->newer;
    else
        s->oldest = c->newer;
    if (c->newer)
        c->newer->older = c->older;
    else
        s->newest = c->older;
    c->older = c->newer = 0;
}

static void lru_append(struct rdma_iwarp_stream *s, struct conn *c)
{
    c->older = s->newest;
    c->newer = 0;
    if (s->newest)
        s->newest->newer = c;
    else
        s->oldest = c;
    s->newest = c;
}

/* Take c out of the table and the activity list. */
static void conn_unlink(struct rdma_iwarp_stream *s, struct conn *c)
{
    struct conn **pp = &s->bucket[key_hash(s, c->key, c->keylen)];
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    c->next = 0;
    lru_unlink(s, c);
    s->nconns--;
}

static void conn_remove(struct rdma_iwarp_stream *s, struct conn *c)
{
    conn_unlink(s, c);
    conn_free(s, c);
}

/* The least recently active connection leaves the table, for room or for
 * being idle: reported when it was MPA, else only counted (plain TCP is
 * not ours to report). */
static void age_out_oldest(struct rdma_iwarp_stream *s, bool idle)
{
    struct conn *c = s->oldest;
    conn_unlink(s, c);
    if (idle)
        s->st.aged_idle++;
    else
        s->st.aged_out++;
    c->idle = idle;
    if (c->mpa) {
        c->next = s->aged;
        s->aged = c;
    } else {
        conn_free(s, c);
    }
}

static void grow_table(struct rdma_iwarp_stream *s)
{
    size_t nb = s->nbuckets * 2;
    struct conn **b = calloc(nb, sizeof *b);
    if (!b)
        return; /* longer chains, still correct */
    struct conn **old = s->bucket;
    size_t on = s->nbuckets;
    s->bucket = b;
    s->nbuckets = nb;
    for (size_t i = 0; i < on; i++) {
        for (struct conn *c = old[i], *n; c; c = n) {
            n = c->next;
            size_t h = key_hash(s, c->key, c->keylen);
            c->next = b[h];
            b[h] = c;
        }
    }
    free(old);
}

static struct conn *conn_find(struct rdma_iwarp_stream *s, const uint8_t *key, size_t n, bool create)
{
    size_t h = key_hash(s, key, n);
    for (struct conn *c = s->bucket[h]; c; c = c->next) {
        if (c->keylen == n && !memcmp(c->key, key, n)) {
            c->last_frame = s->frame;
            c->last_t = s->now;
            if (s->newest != c) {
                lru_unlink(s, c);
                lru_append(s, c);
            }
            return c;
        }
    }
    if (!create)
        return 0;
    while (s->nconns >= s->lim.max_conns && s->oldest)
        age_out_oldest(s, false);
    if (s->nconns >= s->nbuckets) {
        grow_table(s);
        h = key_hash(s, key, n);
    }
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        s->st.refused++;
        return 0;
    }
    memcpy(c->key, key, n);
    c->keylen = (uint8_t)n;
    c->last_frame = s->frame;
    c->last_t = s->now;
    c->next = s->bucket[h];
    s->bucket[h] = c;
    lru_append(s, c);
    s->nconns++;
    return c;
}

/* ---- holding octets ------------------------------------------------------ */

static void set_error(struct dir *d, enum rdma_status st, const char *why)
{
    if (!d->error) {
        d->error = why;
        d->error_status = (uint8_t)st;
    }
}

static void skip_dir(struct rdma_iwarp_stream *s, struct dir *d)
{
    d->state = DS_SKIP;
    dir_release(s, d);
}

/* Append in-order octets that start at seq to what the direction holds. */
static bool hold(struct rdma_iwarp_stream *s, struct dir *d, uint32_t seq, const uint8_t *p, size_t n)
{
    if (d->off) {
        memmove(d->buf, d->buf + d->off, d->len - d->off);
        d->len -= d->off;
        d->off = 0;
    }
    if (!d->len) {
        d->buf_seq = seq;
        d->buf_frame = s->frame;
    }
    if (d->len + n > MAX_HELD) {
        set_error(d, RDMA_MALFORMED, "more octets held for one PDU than any PDU has");
        skip_dir(s, d);
        return false;
    }
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 256;
        while (cap < d->len + n)
            cap *= 2;
        if (s->bytes - d->cap + cap > s->lim.max_bytes) {
            s->st.over_budget++;
            /* a stream not yet known to be MPA is only counted */
            if (d->state == DS_FPDU || d->state == DS_WAIT_REPLY)
                set_error(d, RDMA_TRUNCATED, "octets held over the limit for all connections: this direction is no longer followed");
            skip_dir(s, d);
            return false;
        }
        uint8_t *nb = realloc(d->buf, cap);
        if (!nb) {
            set_error(d, RDMA_MALFORMED, "out of memory holding a PDU");
            skip_dir(s, d);
            return false;
        }
        s->bytes += cap - d->cap;
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, p, n);
    d->len += n;
    return true;
}

static bool have_bit(const struct dir *d, uint32_t q)
{
    uint32_t i = q & (d->rcap - 1);
    return d->have[i >> 6] >> (i & 63) & 1;
}

static void set_bit(struct dir *d, uint32_t q)
{
    uint32_t i = q & (d->rcap - 1);
    d->have[i >> 6] |= (uint64_t)1 << (i & 63);
}

static void clear_bit(struct dir *d, uint32_t q)
{
    uint32_t i = q & (d->rcap - 1);
    d->have[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/* Octets from q on (at most lim) before the first held one: lim if none. */
static uint32_t to_next_held(const struct dir *d, uint32_t q, uint32_t lim)
{
    uint32_t k = 0;
    while (k < lim) {
        uint32_t i = (q + k) & (d->rcap - 1);
        uint64_t w = d->have[i >> 6] >> (i & 63);
        if (w)
            return k + (uint32_t)__builtin_ctzll(w) < lim ? k + (uint32_t)__builtin_ctzll(w) : lim;
        k += 64 - (i & 63);
    }
    return lim;
}

/* A ring that spans at least `span` octets from nxt; false when the limit
 * for all connections or memory says no. */
static bool ring_fit(struct rdma_iwarp_stream *s, struct dir *d, uint32_t span)
{
    if (span <= d->rcap)
        return true;
    uint32_t cap = d->rcap ? d->rcap : MIN_RING;
    while (cap < span)
        cap *= 2;
    if (s->bytes - ring_bytes(d->rcap) + ring_bytes(cap) > s->lim.max_bytes) {
        s->st.over_budget++;
        return false;
    }
    uint8_t *ring = malloc(cap);
    uint64_t *have = calloc(cap / 64, sizeof *have);
    if (!ring || !have) {
        free(ring);
        free(have);
        return false;
    }
    struct dir nd = *d;
    nd.ring = ring;
    nd.have = have;
    nd.rcap = cap;
    /* what is held lies in [nxt, nxt + rcap): at most the old ring's worth */
    for (uint32_t k = 0; d->ooo_bytes && k < d->rcap && seq_lt(d->nxt + k, d->ooo_hi); k++) {
        uint32_t q = d->nxt + k;
        if (have_bit(d, q)) {
            ring[q & (cap - 1)] = d->ring[q & (d->rcap - 1)];
            set_bit(&nd, q);
        }
    }
    s->bytes += ring_bytes(cap) - ring_bytes(d->rcap);
    free(d->ring);
    free(d->have);
    d->ring = ring;
    d->have = have;
    d->rcap = cap;
    return true;
}

/* Octets p[0..n) at seq, seq after nxt and within MAX_OOO of it. Octets
 * already held are kept; a different value is counted in *conflicts. */
static bool ooo_insert(struct rdma_iwarp_stream *s, struct dir *d, uint32_t seq, const uint8_t *p, size_t n,
                       unsigned *conflicts)
{
    if (!ring_fit(s, d, seq + (uint32_t)n - d->nxt))
        return false;
    bool had = d->ooo_bytes != 0;
    if (!had)
        d->ooo_frame = s->frame;
    for (size_t i = 0; i < n; i++) {
        uint32_t q = seq + (uint32_t)i;
        uint8_t *slot = &d->ring[q & (d->rcap - 1)];
        if (have_bit(d, q)) {
            *conflicts += *slot != p[i];
            continue;
        }
        *slot = p[i];
        set_bit(d, q);
        d->ooo_bytes++;
    }
    if (!had || seq_lt(d->ooo_hi, seq + (uint32_t)n))
        d->ooo_hi = seq + (uint32_t)n;
    return true;
}

/* In-order octets p[0..n) at from just moved nxt past held ones: drop
 * those, comparing them. */
static void ooo_covered(struct dir *d, uint32_t from, const uint8_t *p, size_t n, unsigned *conflicts)
{
    if (!d->ooo_bytes)
        return;
    size_t lim = n < d->rcap ? n : d->rcap;
    for (size_t i = 0; i < lim && d->ooo_bytes; i++) {
        uint32_t q = from + (uint32_t)i;
        if (have_bit(d, q)) {
            *conflicts += d->ring[q & (d->rcap - 1)] != p[i];
            clear_bit(d, q);
            d->ooo_bytes--;
        }
    }
}

/* Move held out-of-order octets that now continue the stream. */
static void ooo_drain(struct rdma_iwarp_stream *s, struct dir *d)
{
    while (d->ooo_bytes && have_bit(d, d->nxt)) {
        uint32_t run = 0;
        while (run < d->ooo_bytes && have_bit(d, d->nxt + run))
            run++;
        uint32_t q = d->nxt, i = q & (d->rcap - 1);
        for (uint32_t k = 0; k < run; k++)
            clear_bit(d, q + k);
        d->ooo_bytes -= run;
        d->nxt += run;
        if (d->state == DS_SKIP)
            continue;
        uint32_t first = run < d->rcap - i ? run : d->rcap - i;
        if (!hold(s, d, q, d->ring + i, first))
            return;
        if (first < run && !hold(s, d, q + first, d->ring, run - first))
            return;
    }
}

/* The capture lost octets the peer did send: continue after the hole,
 * at the first held octet (or at `to` when none is held). */
static void capture_gap(struct rdma_iwarp_stream *s, struct dir *d, uint32_t to)
{
    d->off = d->len = 0;
    if (d->ooo_bytes)
        d->nxt += to_next_held(d, d->nxt, d->rcap);
    else
        d->nxt = to;
    s->seg->note = "capture gap: octets missing";
    if (d->state == DS_FPDU && d->fr.markers) {
        d->resync = true;
    } else if (d->state == DS_FPDU) {
        set_error(d, RDMA_MALFORMED, "FPDU boundaries lost in a capture gap without markers");
        skip_dir(s, d);
        return;
    }
    ooo_drain(s, d);
}

static void note_conflicts(struct rdma_iwarp_stream *s, unsigned conflicts)
{
    if (conflicts) {
        s->st.conflicts++;
        s->seg->note = "retransmission with different data";
    }
}

static void remember(struct dir *d, uint32_t seq, const uint8_t *p, size_t n)
{
    d->recent[d->recent_next].seq = seq;
    d->recent[d->recent_next].len = (uint32_t)n;
    d->recent[d->recent_next].crc = rdma_crc32c(p, n);
    d->recent_next = (uint8_t)((d->recent_next + 1) % RECENT);
}

/* 1 when [seq, seq + n) is a delivered segment remembered whole whose
 * octets were different. */
static unsigned resent_differs(const struct dir *d, uint32_t seq, const uint8_t *p, size_t n)
{
    for (unsigned i = 0; i < RECENT; i++)
        if (d->recent[i].len && d->recent[i].seq == seq && d->recent[i].len == n)
            return d->recent[i].crc != rdma_crc32c(p, n);
    return 0;
}

static void accept_data(struct rdma_iwarp_stream *s, struct dir *d, unsigned di, uint32_t seq,
                        const uint8_t *p, size_t n)
{
    if (!d->started) {
        d->started = true;
        d->nxt = seq;
    }
    if (d->state == DS_SKIP) {
        if (seq_lt(d->nxt, seq + (uint32_t)n))
            d->nxt = seq + (uint32_t)n;
        return;
    }
    if (!seq_lt(d->nxt, seq + (uint32_t)n)) {
        s->seg->note = "retransmission";
        note_conflicts(s, resent_differs(d, seq, p, n));
        return;
    }
    if (seq_lt(seq, d->nxt)) {
        uint32_t dup = d->nxt - seq;
        unsigned differs = resent_differs(d, seq, p, dup);
        p += dup;
        n -= dup;
        seq = d->nxt;
        s->seg->note = "partial retransmission";
        note_conflicts(s, differs);
    }
    unsigned conflicts = 0;
    if (seq != d->nxt) {
        s->seg->note = "out of order: held";
        /* Too far ahead of the hole, or no room to hold it: what lies
         * before the segment is lost. */
        while (d->state != DS_SKIP && seq_lt(d->nxt, seq)) {
            if (seq + (uint32_t)n - d->nxt <= MAX_OOO && ooo_insert(s, d, seq, p, n, &conflicts)) {
                note_conflicts(s, conflicts);
                return;
            }
            if (seq + (uint32_t)n - d->nxt <= MAX_OOO)
                ring_release(s, d); /* no room: held octets are lost too */
            capture_gap(s, d, seq);
        }
        if (d->state == DS_SKIP || !seq_lt(d->nxt, seq + (uint32_t)n))
            return;
        if (seq_lt(seq, d->nxt)) { /* the gap released octets this segment also carries */
            uint32_t dup = d->nxt - seq;
            p += dup;
            n -= dup;
            seq = d->nxt;
        }
    }
    uint32_t from = d->nxt;
    d->nxt += (uint32_t)n;
    remember(d, from, p, n);
    if (d->len == d->off && !d->ooo_bytes) {
        s->zc = p;
        s->zc_len = n;
        s->zc_seq = seq;
        s->zc_dir = di;
        return;
    }
    ooo_covered(d, from, p, n, &conflicts);
    note_conflicts(s, conflicts);
    if (hold(s, d, seq, p, n))
        ooo_drain(s, d);
}

/* Keep what the current frame left unparsed. */
static void settle(struct rdma_iwarp_stream *s)
{
    if (s->zc_len && s->cur) {
        struct dir *d = &s->cur->d[s->zc_dir];
        if (d->state != DS_SKIP)
            hold(s, d, s->zc_seq, s->zc, s->zc_len);
    }
    s->zc_len = 0;
}

void rdma_iwarp_feed(struct rdma_iwarp_stream *s, struct rdma_pkt *pkt, const uint8_t *frame,
                     uint64_t frame_no, struct rdma_iwarp_seg *seg)
{
    settle(s);
    if (s->cur && s->cur->closing)
        conn_remove(s, s->cur);
    s->cur = 0;
    while (s->oldest && s->now - s->oldest->last_t > s->lim.idle_ns)
        age_out_oldest(s, true);
    s->other_pending = false;
    s->pkt = pkt;
    s->seg = seg;
    s->frame = frame_no;
    memset(seg, 0, sizeof *seg);
    const uint8_t *payload;
    uint32_t len;
    if (!rdma_tcp_decode(pkt, frame, &seg->hdr, &payload, &len))
        return;
    seg->tcp = true;
    seg->payload_len = len;
    uint8_t key[ADDR_KEY_MAX];
    unsigned di;
    size_t kn = make_key(pkt, &seg->hdr, key, &di);
    uint16_t flags = seg->hdr.flags;
    struct conn *c = conn_find(s, key, kn, len || (flags & RDMA_TCP_SYN));
    if (!c)
        return;
    struct dir *d = &c->d[di];
    uint32_t seq = seg->hdr.seq_raw;
    if (flags & RDMA_TCP_SYN) {
        /* a SYN where octets are held starts the direction anew: what it
         * held belongs to the sequence space it leaves */
        if (d->started && d->ooo_bytes)
            ring_release(s, d);
        d->syn = d->started = true;
        d->start = d->nxt = ++seq;
    }
    s->cur = c;
    s->cur_dir = di;
    if (len)
        accept_data(s, d, di, seq, payload, len);
    if (flags & RDMA_TCP_FIN)
        d->fin = true;
    if ((flags & RDMA_TCP_RST) || (c->d[0].fin && c->d[1].fin))
        c->closing = true;
    if (c->mpa) {
        seg->iwarp = true;
        pkt->proto = RDMA_PROTO_IWARP;
    }
}

/* ---- finding FPDUs from markers ------------------------------------------ */

/* Where the FPDU a marker at offset o (FPDUPTR ptr) belongs to begins. */
static bool marker_fpdu_start(const struct rdma_mpa_framing *fr, uint32_t seq, size_t o, unsigned ptr,
                              size_t *fs)
{
    if (ptr == 0) {
        *fs = o;
        return true;
    }
    if (ptr > o)
        return false;
    size_t h = o - ptr;
    *fs = h >= RDMA_MPA_MARKER_LEN && rdma__to_marker(fr, seq + (uint32_t)(h - RDMA_MPA_MARKER_LEN)) == 0
              ? h - RDMA_MPA_MARKER_LEN
              : h;
    return true;
}

/* DDP control and RDMAP control octets as RFC 5041/5040 require them. */
static bool plausible_ulpdu(const uint8_t *ddp)
{
    return (ddp[0] & 0x3f) == RDMA_DDP_VERSION && (ddp[1] >> 6) == RDMA_RDMAP_VERSION;
}

/* Walk the FPDUs from fs under framing fr: every marker must point back to
 * the FPDU it sits in. Returns the markers confirmed, 0 if one disagrees. */
static unsigned chain_markers(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                              size_t n, size_t fs, bool *crc_ok, bool *crc_zero)
{
    unsigned confirmed = 0;
    size_t pos = fs;
    bool first = true;
    while (pos < n) {
        size_t w = rdma__fpdu_wire_len(fr, seq + (uint32_t)pos, p + pos, n - pos);
        size_t h = rdma__to_marker(fr, seq + (uint32_t)pos) == 0 ? RDMA_MPA_MARKER_LEN : 0;
        if (!w || pos + h + 2 + RDMA_DDP_TAGGED_LEN > n)
            break;
        if (rdma_get_be16(p + pos + h) < RDMA_DDP_TAGGED_LEN || !plausible_ulpdu(p + pos + h + 2))
            return 0;
        for (size_t m = pos + rdma__to_marker(fr, seq + (uint32_t)pos); m < pos + w && m + 4 <= n;
             m += RDMA_MPA_MARKER_INTERVAL) {
            size_t expect = m == pos ? 0 : m - pos - h;
            if (rdma_get_be16(p + m) || rdma_get_be16(p + m + 2) != expect)
                return 0;
            confirmed++;
        }
        if (first && pos + w <= n) {
            uint32_t carried = rdma_get_le32(p + pos + w - RDMA_MPA_CRC_LEN);
            *crc_ok = rdma_crc32c(p + pos, w - RDMA_MPA_CRC_LEN) == carried;
            *crc_zero = carried == 0;
        }
        first = false;
        pos += w;
    }
    return confirmed;
}

/* A stream joined mid-way: try every marker phase, keep the one whose
 * markers all point at a consistent chain of FPDUs (a valid CRC on the first
 * FPDU counts most). Ambiguity is failure: better skip than misdecode. */
static bool probe_markers(const uint8_t *p, size_t n, uint32_t seq, struct rdma_mpa_framing *out,
                          size_t *skip)
{
    unsigned best = 0;
    bool ambiguous = false;
    for (size_t phase = 0;
         phase < RDMA_MPA_MARKER_INTERVAL && phase + RDMA_MPA_MARKER_INTERVAL + RDMA_MPA_MARKER_LEN <= n;
         phase++) {
        struct rdma_mpa_framing fr = {true, false, seq + (uint32_t)phase};
        size_t fs = 0;
        bool found = false;
        for (size_t o = phase; o + RDMA_MPA_MARKER_LEN <= n; o += RDMA_MPA_MARKER_INTERVAL) {
            unsigned ptr = rdma_get_be16(p + o + 2);
            if (rdma_get_be16(p + o) || (ptr & 3))
                break;
            if (!found && marker_fpdu_start(&fr, seq, o, ptr, &fs))
                found = true;
        }
        if (!found)
            continue;
        bool crc_ok = false, crc_zero = false;
        unsigned score = chain_markers(&fr, seq, p, n, fs, &crc_ok, &crc_zero);
        if (score < 2)
            continue;
        score += crc_ok ? 1000 : 0;
        if (score > best) {
            best = score;
            ambiguous = false;
            *out = fr;
            out->crc = crc_ok || !crc_zero;
            *skip = fs;
        } else if (score == best) {
            ambiguous = true;
        }
    }
    return best && !ambiguous;
}

/* After lost octets: the first marker whose FPDU begins in what is held. */
static bool resync_from_marker(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                               size_t n, size_t *fs)
{
    for (size_t o = rdma__to_marker(fr, seq); o + RDMA_MPA_MARKER_LEN <= n;
         o += RDMA_MPA_MARKER_INTERVAL) {
        unsigned ptr = rdma_get_be16(p + o + 2);
        if (!rdma_get_be16(p + o) && marker_fpdu_start(fr, seq, o, ptr, fs))
            return true;
    }
    return false;
}

/* ---- handing out PDUs ------------------------------------------------------ */

enum step { STEP_PDU, STEP_NEED_MORE, STEP_SKIPPED };

static void mark_iwarp(struct rdma_iwarp_stream *s, struct conn *c)
{
    if (c->mpa) {
        s->seg->iwarp = true;
        s->pkt->proto = RDMA_PROTO_IWARP;
    }
}

static void pdu_error(struct rdma_iwarp_pdu *pdu, enum rdma_status st, const char *why, uint64_t frame)
{
    pdu->kind = RDMA_IWARP_PDU_ERROR;
    pdu->status = (uint8_t)st;
    pdu->reason = why;
    pdu->frame = frame;
}

/* The handshake frame just decoded sets up both directions' framing. */
static void handshake(struct rdma_iwarp_stream *s, struct conn *c, unsigned di, uint32_t after,
                      const struct rdma_mpa_frame *f)
{
    struct dir *d = &c->d[di], *o = &c->d[di ^ 1];
    c->mpa = true;
    if (f->kind == RDMA_MPA_REQUEST) {
        c->have_req = true;
        c->req_m = f->hdr.marker_flag;
        c->req_c = f->hdr.crc_flag;
        d->fr.origin = after;
        d->state = DS_WAIT_REPLY;
        return;
    }
    if (f->hdr.rej_flag) {
        skip_dir(s, d);
        skip_dir(s, o);
        return;
    }
    bool crc = f->hdr.crc_flag || (c->have_req && c->req_c);
    /* The Request's M asks the responder for markers, the Reply's M the
     * initiator (RFC 5044 7.1.2). */
    d->fr = (struct rdma_mpa_framing){c->have_req && c->req_m, crc, after};
    d->markers_unknown = !c->have_req;
    d->state = DS_FPDU;
    o->fr.markers = f->hdr.marker_flag;
    o->fr.crc = crc;
    o->origin_unset = o->state != DS_WAIT_REPLY;
    o->state = DS_FPDU;
    s->other_pending = o->len > o->off;
}

/* Where to continue after an FPDU whose markers say its length overran
 * into the next FPDU: that FPDU's start, if it lies ahead. */
static size_t next_fpdu_start(const struct rdma_mpa_framing *fr, const struct rdma_iwarp_fpdu *f)
{
    size_t h = f->nmarkers && f->marker_offset[0] == 0 ? RDMA_MPA_MARKER_LEN : 0;
    for (unsigned i = 0; i < f->nmarkers; i++) {
        size_t m = f->marker_offset[i], expect = m == 0 ? 0 : m - h, fs;
        unsigned ptr = f->markers[i].marker_fpduptr;
        if (!f->markers[i].marker_res && ptr < expect &&
            marker_fpdu_start(fr, f->seq, m, ptr, &fs) && fs > 0)
            return fs;
    }
    return f->wire_len;
}

static enum step step_start(struct rdma_iwarp_stream *s, struct conn *c, unsigned di,
                            const uint8_t *p, size_t n, uint32_t seq, struct rdma_iwarp_pdu *pdu,
                            size_t *used)
{
    struct dir *d = &c->d[di];
    enum rdma_status st = rdma_mpa_frame_decode(p, n, &pdu->mpa, used);
    if (st == RDMA_TRUNCATED)
        return STEP_NEED_MORE;
    if (st == RDMA_OK) {
        pdu->kind = RDMA_IWARP_PDU_MPA;
        pdu->status = RDMA_OK;
        pdu->reason = 0;
        /* A rejecting Reply releases the octets the direction holds, which
         * the private data may lie in: it goes out from scratch instead. */
        memcpy(s->scratch, pdu->mpa.private_data, pdu->mpa.private_len);
        pdu->mpa.private_data = s->scratch;
        handshake(s, c, di, seq + (uint32_t)*used, &pdu->mpa);
        return STEP_PDU;
    }
    if (st == RDMA_MALFORMED) {
        c->mpa = true;
        pdu_error(pdu, RDMA_MALFORMED, "MPA Request/Reply private data longer than 512 or without its IRD/ORD word", s->frame);
        skip_dir(s, d);
        skip_dir(s, &c->d[di ^ 1]);
        *used = n;
        return STEP_PDU;
    }
    *used = 0;
    if (c->have_req) {
        pdu_error(pdu, RDMA_MALFORMED, "MPA Request answered without a Reply", s->frame);
        skip_dir(s, d);
        skip_dir(s, &c->d[di ^ 1]);
        return STEP_PDU;
    }
    if (d->syn && seq == d->start) {
        /* Seen from its first octet and not MPA: plain TCP. */
        skip_dir(s, d);
        skip_dir(s, &c->d[di ^ 1]);
        return STEP_SKIPPED;
    }
    d->state = DS_PROBE;
    return STEP_SKIPPED;
}

static enum step step_fpdu(struct rdma_iwarp_stream *s, struct conn *c, unsigned di,
                           const uint8_t *p, size_t n, uint32_t seq, struct rdma_iwarp_pdu *pdu,
                           size_t *used)
{
    struct dir *d = &c->d[di];
    *used = 0;
    if (d->origin_unset) {
        d->fr.origin = seq;
        d->origin_unset = false;
    }
    if (d->markers_unknown) {
        if (n < RDMA_MPA_MARKER_LEN)
            return STEP_NEED_MORE;
        d->fr.markers = seq == d->fr.origin && rdma_get_be32(p) == 0;
        d->markers_unknown = false;
    }
    if (d->resync) {
        size_t fs;
        if (!resync_from_marker(&d->fr, seq, p, n, &fs)) {
            *used = n > RDMA_MPA_MARKER_INTERVAL ? n - RDMA_MPA_MARKER_INTERVAL : 0;
            return *used ? STEP_SKIPPED : STEP_NEED_MORE;
        }
        d->resync = false;
        *used = fs;
        return STEP_SKIPPED;
    }
    enum rdma_status st = rdma_fpdu_decode(&d->fr, seq, p, n, s->scratch, &pdu->fpdu, used);
    if (st == RDMA_TRUNCATED) {
        *used = 0;
        return STEP_NEED_MORE;
    }
    pdu->kind = RDMA_IWARP_PDU_FPDU;
    pdu->status = pdu->fpdu.status;
    pdu->reason = pdu->fpdu.reason;
    if (d->fr.markers && pdu->fpdu.status == RDMA_MALFORMED)
        *used = next_fpdu_start(&d->fr, &pdu->fpdu);
    return STEP_PDU;
}

static enum step step_probe(struct rdma_iwarp_stream *s, struct conn *c, unsigned di,
                            const uint8_t *p, size_t n, uint32_t seq, struct rdma_iwarp_pdu *pdu,
                            size_t *used)
{
    struct dir *d = &c->d[di];
    *used = 0;
    if (n < PROBE_LEN && !d->fin)
        return STEP_NEED_MORE;
    size_t fs = 0;
    if (probe_markers(p, n, seq, &d->fr, &fs)) {
        d->state = DS_FPDU;
        c->mpa = true;
        *used = fs;
        return STEP_SKIPPED;
    }
    skip_dir(s, d);
    *used = n;
    if (c->noted)
        return STEP_SKIPPED;
    c->noted = true;
    pdu_error(pdu, RDMA_UNSUPPORTED, "no MPA handshake seen", s->frame);
    s->seg->iwarp = true;
    return STEP_PDU;
}

/* The octets the direction has to parse: the current frame's in place, or
 * what it holds. */
static const uint8_t *region(struct rdma_iwarp_stream *s, unsigned di, size_t *n, uint32_t *seq)
{
    struct dir *d = &s->cur->d[di];
    if (s->zc_len && s->zc_dir == di) {
        *n = s->zc_len;
        *seq = s->zc_seq;
        return s->zc;
    }
    *n = d->len - d->off;
    *seq = d->buf_seq;
    return *n ? d->buf + d->off : NULL; /* nothing held: buf may be NULL */
}

static void consume(struct rdma_iwarp_stream *s, unsigned di, size_t used)
{
    struct dir *d = &s->cur->d[di];
    if (s->zc_len && s->zc_dir == di) {
        s->zc += used;
        s->zc_len -= used;
        s->zc_seq += (uint32_t)used;
        return;
    }
    d->off += used;
    d->buf_seq += (uint32_t)used;
    if (d->off == d->len)
        d->off = d->len = 0;
}

static size_t dir_held(const struct dir *d)
{
    return d->len - d->off + d->ooo_bytes;
}

/* One connection that aged out, named in an error PDU, then freed. */
static bool report_aged(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu)
{
    struct conn *c = s->aged;
    if (!c)
        return false;
    s->aged = c->next;
    size_t held0 = dir_held(&c->d[0]), held1 = dir_held(&c->d[1]);
    memset(pdu, 0, sizeof *pdu);
    pdu_ends(pdu, c, held1 > held0);
    if (c->idle)
        snprintf(s->reason, sizeof s->reason,
                 "connection aged out, %zu octets held dropped (no segment for more than %" PRIu64
                 " ns of capture time)",
                 held0 + held1, s->lim.idle_ns);
    else
        snprintf(s->reason, sizeof s->reason,
                 "connection aged out, %zu octets held dropped (more than %zu connections at once)",
                 held0 + held1, s->lim.max_conns);
    pdu_error(pdu, held0 + held1 ? RDMA_TRUNCATED : RDMA_UNSUPPORTED, s->reason, c->last_frame);
    pdu->aged = true;
    conn_free(s, c);
    return true;
}

bool rdma_iwarp_next(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu)
{
    if (report_aged(s, pdu))
        return true;
    pdu->aged = false;
    while (s->cur) {
        struct conn *c = s->cur;
        unsigned di = s->cur_dir;
        struct dir *d = &c->d[di];
        pdu_ends(pdu, c, di);
        if (d->error) {
            pdu_error(pdu, (enum rdma_status)d->error_status, d->error, s->frame);
            d->error = 0;
            mark_iwarp(s, c);
            return true;
        }
        size_t n, used = 0;
        uint32_t seq;
        const uint8_t *p = region(s, di, &n, &seq);
        bool from_held = !(s->zc_len && s->zc_dir == di);
        enum step r = STEP_NEED_MORE;
        if (n) {
            switch (d->state) {
            case DS_START:
                r = step_start(s, c, di, p, n, seq, pdu, &used);
                break;
            case DS_FPDU:
                r = step_fpdu(s, c, di, p, n, seq, pdu, &used);
                break;
            case DS_PROBE:
                r = step_probe(s, c, di, p, n, seq, pdu, &used);
                break;
            case DS_SKIP:
                used = n;
                r = STEP_SKIPPED;
                break;
            default: /* DS_WAIT_REPLY holds until the Reply */
                break;
            }
        }
        if (r == STEP_PDU) {
            pdu->frame = from_held && d->len ? d->buf_frame : s->frame;
            if (d->state != DS_SKIP)
                consume(s, di, used);
            mark_iwarp(s, c);
            return true;
        }
        if (r == STEP_SKIPPED) {
            if (d->state != DS_SKIP || !from_held)
                consume(s, di, used);
            continue;
        }
        settle(s);
        if (d->fin && d->len > d->off && d->state == DS_FPDU) {
            d->off = d->len = 0;
            pdu_error(pdu, RDMA_MALFORMED, "ULPDU_Length overruns the end of the stream", d->buf_frame);
            mark_iwarp(s, c);
            return true;
        }
        if (!s->other_pending)
            return false;
        s->other_pending = false;
        s->cur_dir ^= 1;
    }
    return false;
}

/* At the end: every connection once, from the least recently active, each
 * direction reporting what it still holds. */
bool rdma_iwarp_finish(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu)
{
    settle(s);
    if (report_aged(s, pdu))
        return true;
    pdu->aged = false;
    if (!s->fin_started) {
        s->fin_started = true;
        s->fin_c = s->oldest;
        s->fin_di = 0;
    }
    for (; s->fin_c; s->fin_c = s->fin_c->newer, s->fin_di = 0) {
        struct conn *c = s->fin_c;
        for (; s->fin_di < 2; s->fin_di++) {
            unsigned di = s->fin_di;
            struct dir *d = &c->d[di];
            if (d->ooo_bytes && c->mpa && d->state != DS_SKIP) {
                size_t n = d->ooo_bytes;
                ring_release(s, d);
                pdu_ends(pdu, c, di);
                snprintf(s->reason, sizeof s->reason, "%zu octets after a gap never delivered", n);
                pdu_error(pdu, RDMA_TRUNCATED, s->reason, d->ooo_frame);
                return true; /* this direction again: it may hold part of an FPDU too */
            }
            if (d->len == d->off || (d->state != DS_FPDU && d->state != DS_PROBE))
                continue;
            uint64_t frame = d->buf_frame;
            bool probing = d->state == DS_PROBE;
            d->off = d->len = 0;
            skip_dir(s, d);
            if (probing && c->noted)
                continue;
            pdu_ends(pdu, c, di);
            if (probing) {
                c->noted = true;
                pdu_error(pdu, RDMA_UNSUPPORTED, "no MPA handshake seen", frame);
            } else {
                pdu_error(pdu, RDMA_TRUNCATED, "FPDU incomplete at the end of the capture", frame);
            }
            return true;
        }
    }
    return false;
}
