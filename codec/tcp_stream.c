/* tcp_stream.c - iWARP over a capture: TCP reassembled per connection and
 * direction, the MPA startup phase followed (RFC 5044 7), and the PDUs a
 * frame completes handed out one at a time.
 *
 *   frame -> rdma_tcp_decode -> connection (hash of both endpoints) -> direction
 *     in order:      parse in place; an unfinished PDU's octets are held
 *     out of order:  held until the gap closes (or counted lost past MAX_OOO)
 *     already seen:  dropped ("retransmission")
 *   direction state: START (Request/Reply key?) -> WAIT_REPLY -> FPDU
 *                    START (no key, joined mid-stream) -> PROBE (markers?) -> FPDU | SKIP
 *
 * What a direction holds is at most one unfinished PDU, the out-of-order
 * octets of the window, or the first PROBE_LEN octets of a stream joined
 * mid-way: memory follows the data in flight, not the capture. Connections
 * are freed when both sides have sent FIN, or on RST.
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "iwarp_internal.h"

#define CONN_BUCKETS 1024
#define MAX_OOO (1u << 20)     /* out-of-order octets before the missing ones count as lost */
/* In-order octets held: an unfinished PDU, or what a filled hole released. */
#define MAX_HELD (MAX_OOO + 256u * 1024)
#define PROBE_LEN 2048         /* octets searched for markers on a stream joined mid-way */
#define ADDR_KEY_MAX 36        /* two IPv6 addresses and two ports */

enum dir_state { DS_START, DS_WAIT_REPLY, DS_FPDU, DS_PROBE, DS_SKIP };

struct ooo {
    struct ooo *next;
    uint32_t seq, len;
    uint8_t data[];
};

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
    struct ooo *ooo;
    size_t ooo_bytes;
    const char *error;  /* reported by the next rdma_iwarp_next() */
    uint8_t error_status;
    struct rdma_mpa_framing fr;
};

struct conn {
    struct conn *next;
    uint8_t key[ADDR_KEY_MAX];
    uint8_t keylen;
    bool mpa;     /* recognized from its Request/Reply or its markers */
    bool noted;   /* "no MPA handshake seen" already reported */
    bool have_req;
    bool closing;
    uint8_t req_m, req_c;
    struct dir d[2]; /* d[0] leaves the endpoint whose address and port sort first */
};

struct rdma_iwarp_stream {
    struct conn *bucket[CONN_BUCKETS];
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
    return calloc(1, sizeof(struct rdma_iwarp_stream));
}

static void dir_release(struct dir *d)
{
    free(d->buf);
    d->buf = 0;
    d->off = d->len = d->cap = 0;
    while (d->ooo) {
        struct ooo *o = d->ooo;
        d->ooo = o->next;
        free(o);
    }
    d->ooo_bytes = 0;
}

static void conn_free(struct conn *c)
{
    dir_release(&c->d[0]);
    dir_release(&c->d[1]);
    free(c);
}

void rdma_iwarp_stream_free(struct rdma_iwarp_stream *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < CONN_BUCKETS; i++) {
        while (s->bucket[i]) {
            struct conn *c = s->bucket[i];
            s->bucket[i] = c->next;
            conn_free(c);
        }
    }
    free(s);
}

/* ---- connections ---------------------------------------------------------- */

static uint32_t key_hash(const uint8_t *k, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 16777619u;
    return h & (CONN_BUCKETS - 1);
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

static struct conn *conn_find(struct rdma_iwarp_stream *s, const uint8_t *key, size_t n, bool create)
{
    uint32_t h = key_hash(key, n);
    for (struct conn *c = s->bucket[h]; c; c = c->next)
        if (c->keylen == n && !memcmp(c->key, key, n))
            return c;
    if (!create)
        return 0;
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    memcpy(c->key, key, n);
    c->keylen = (uint8_t)n;
    c->next = s->bucket[h];
    s->bucket[h] = c;
    return c;
}

static void conn_remove(struct rdma_iwarp_stream *s, struct conn *c)
{
    struct conn **pp = &s->bucket[key_hash(c->key, c->keylen)];
    while (*pp != c)
        pp = &(*pp)->next;
    *pp = c->next;
    conn_free(c);
}

/* ---- holding octets ------------------------------------------------------ */

static void set_error(struct dir *d, enum rdma_status st, const char *why)
{
    if (!d->error) {
        d->error = why;
        d->error_status = (uint8_t)st;
    }
}

static void skip_dir(struct dir *d)
{
    d->state = DS_SKIP;
    dir_release(d);
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
        skip_dir(d);
        return false;
    }
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        uint8_t *nb = realloc(d->buf, cap);
        if (!nb) {
            set_error(d, RDMA_MALFORMED, "out of memory holding a PDU");
            skip_dir(d);
            return false;
        }
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, p, n);
    d->len += n;
    return true;
}

static void ooo_insert(struct dir *d, uint32_t seq, const uint8_t *p, size_t n)
{
    struct ooo **pp = &d->ooo;
    while (*pp && seq_lt((*pp)->seq, seq))
        pp = &(*pp)->next;
    if (*pp && (*pp)->seq == seq && (*pp)->len >= n)
        return; /* the same segment again */
    struct ooo *o = malloc(sizeof *o + n);
    if (!o)
        return;
    o->seq = seq;
    o->len = (uint32_t)n;
    memcpy(o->data, p, n);
    o->next = *pp;
    *pp = o;
    d->ooo_bytes += n;
}

/* Move held out-of-order segments that now continue the stream. */
static void ooo_drain(struct rdma_iwarp_stream *s, struct dir *d)
{
    while (d->ooo && !seq_lt(d->nxt, d->ooo->seq)) {
        struct ooo *o = d->ooo;
        d->ooo = o->next;
        d->ooo_bytes -= o->len;
        uint32_t end = o->seq + o->len;
        if (seq_lt(d->nxt, end) && d->state != DS_SKIP) {
            uint32_t skip = d->nxt - o->seq;
            if (hold(s, d, d->nxt, o->data + skip, o->len - skip))
                d->nxt = end;
        } else if (seq_lt(d->nxt, end)) {
            d->nxt = end;
        }
        free(o);
    }
}

/* The capture lost octets the peer did send: continue after the hole. */
static void capture_gap(struct rdma_iwarp_stream *s, struct dir *d)
{
    d->off = d->len = 0;
    d->nxt = d->ooo->seq;
    s->seg->note = "capture gap: octets missing";
    if (d->state == DS_FPDU && d->fr.markers) {
        d->resync = true;
    } else if (d->state == DS_FPDU) {
        set_error(d, RDMA_MALFORMED, "FPDU boundaries lost in a capture gap without markers");
        skip_dir(d);
        return;
    }
    ooo_drain(s, d);
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
        return;
    }
    if (seq_lt(seq, d->nxt)) {
        uint32_t dup = d->nxt - seq;
        p += dup;
        n -= dup;
        seq = d->nxt;
        s->seg->note = "partial retransmission";
    }
    if (seq != d->nxt) {
        ooo_insert(d, seq, p, n);
        s->seg->note = "out of order: held";
        if (d->ooo_bytes > MAX_OOO)
            capture_gap(s, d);
        return;
    }
    d->nxt += (uint32_t)n;
    if (d->len == d->off && !d->ooo) {
        s->zc = p;
        s->zc_len = n;
        s->zc_seq = seq;
        s->zc_dir = di;
        return;
    }
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
        skip_dir(d);
        skip_dir(o);
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
        skip_dir(d);
        skip_dir(&c->d[di ^ 1]);
        *used = n;
        return STEP_PDU;
    }
    *used = 0;
    if (c->have_req) {
        pdu_error(pdu, RDMA_MALFORMED, "MPA Request answered without a Reply", s->frame);
        skip_dir(d);
        skip_dir(&c->d[di ^ 1]);
        return STEP_PDU;
    }
    if (d->syn && seq == d->start) {
        /* Seen from its first octet and not MPA: plain TCP. */
        skip_dir(d);
        skip_dir(&c->d[di ^ 1]);
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
    skip_dir(d);
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

bool rdma_iwarp_next(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu)
{
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

bool rdma_iwarp_finish(struct rdma_iwarp_stream *s, struct rdma_iwarp_pdu *pdu)
{
    settle(s);
    for (size_t i = 0; i < CONN_BUCKETS; i++) {
        for (struct conn *c = s->bucket[i]; c; c = c->next) {
            for (unsigned di = 0; di < 2; di++) {
                struct dir *d = &c->d[di];
                if (d->len == d->off || (d->state != DS_FPDU && d->state != DS_PROBE))
                    continue;
                uint64_t frame = d->buf_frame;
                bool probing = d->state == DS_PROBE;
                d->off = d->len = 0;
                skip_dir(d);
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
    }
    return false;
}
