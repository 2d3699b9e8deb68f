/* link.c - what TLPs cost on a PCIe link, and bursts of them
 * scheduled along a path (pcie-bench's model: Neugebauer et al., SIGCOMM
 * 2018, and its pcie-model code; PCI Express Base Specification 5.0 and 6.0).
 *
 * Line rate is GT/s x encoding x lanes: 8b/10b for Gen1 and Gen2,
 * 128b/130b for Gen3 to Gen5. The data link layer then takes its share:
 * an ACK DLLP (8 bytes with framing) at least every "Ack latency limit"
 * symbol times and an UpdateFC DLLP (8 bytes) every "UpdateFC" interval,
 * both of which depend on generation, width and MPS (spec 5.0 tables 3-7
 * to 3-9 and 2-46 to 2-48), and a 4-symbol SKP ordered set every 1538
 * symbols. What is left is the TLP rate:
 *
 *   tlp = GT/s x encoding x lanes x (1 - 8/ack - 8/fc - 4/1538)
 *
 * Gen6 runs in flit mode (spec 6.0, 4.2.3.1): PAM4 at 64 GT/s with no line
 * code (1b/1b), and every 256-byte flit carries 236 bytes of TLPs, 6 of
 * DLLPs, 8 of CRC and 6 of FEC. ACKs and flow-control updates ride in the
 * flit's DLLP bytes, so a Gen6 link's TLP rate is 64 GT/s x lanes x
 * 236/256 with no further deduction; TLP headers are costed as in
 * non-flit mode (pcie.h).
 *
 * A burst is a run of TLPs that one transfer puts on a path. On each hop it
 * takes the serialization of all its bytes at the hop's rate; it may start
 * on a hop once its first TLP has fully arrived there (store and forward
 * per TLP), and it cannot finish before its last TLP has arrived. Each
 * link direction serves bursts in the order they arrive there; a burst
 * arriving before one already reserved for later may use the gap in front
 * of it if it fits.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "pcie/pcie.h"

/* Maximum ACK transmission latency and the UpdateFC transmission
 * guideline, in symbol times, by [Gen1, Gen2, Gen3 and later][x1 x2 x4 x8
 * x16 x32][MPS 128 256 512 1024 2048 4096], as pcie-bench takes them from
 * the specification (PCIe Base Spec 5.0 tables 3-7 to 3-9 and 2-46 to
 * 2-48). They are two tables on purpose: they differ at Gen1 x32 MPS 2048
 * (148 and 248) and Gen2 x32 MPS 4096 (237 and 327), as pcie-bench's do. */
static const uint16_t ack_limit[3][6][6] = {
    {{237, 416, 559, 1071, 2095, 4143}, {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050}, {67, 107, 86, 150, 278, 534},
     {48, 72, 86, 150, 278, 534}, {33, 45, 52, 84, 148, 276}},
    {{288, 467, 610, 1122, 2146, 4194}, {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101}, {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}, {84, 96, 103, 135, 199, 237}},
    {{333, 512, 655, 1167, 2191, 4239}, {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146}, {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}, {129, 141, 148, 180, 244, 372}},
};
static const uint16_t fc_limit[3][6][6] = {
    {{237, 416, 559, 1071, 2095, 4143}, {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050}, {67, 107, 86, 150, 278, 534},
     {48, 72, 86, 150, 278, 534}, {33, 45, 52, 84, 248, 276}},
    {{288, 467, 610, 1122, 2146, 4194}, {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101}, {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}, {84, 96, 103, 135, 199, 327}},
    {{333, 512, 655, 1167, 2191, 4239}, {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146}, {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}, {129, 141, 148, 180, 244, 372}},
};

#define DLLP_BYTES 8.0   /* ACK or UpdateFC: 6 bytes and 2 of framing */
#define SKP_BYTES 4.0    /* SKP ordered set ... */
#define SKP_INTERVAL 1538.0 /* ... every this many symbols */

static unsigned log2u(unsigned v)
{
    unsigned n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

double sim__pcie_tlp_rate(unsigned gen, unsigned width, unsigned mps)
{
    static const double gts[] = {0, 2.5e9, 5e9, 8e9, 16e9, 32e9, 64e9};
    if (gen == 6)
        return gts[6] * width * 236.0 / 256.0;
    double raw = gts[gen] * width * (gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0);
    unsigned g = gen <= 2 ? gen - 1 : 2, w = log2u(width), m = log2u(mps) - 7;
    double overhead = DLLP_BYTES / ack_limit[g][w][m] + DLLP_BYTES / fc_limit[g][w][m] +
                      SKP_BYTES / SKP_INTERVAL;
    return raw * (1 - overhead);
}

uint64_t sim__pcie_fs_per_byte(double rate)
{
    return (uint64_t)(8e15 / rate + 0.5);
}

/* Picoseconds for `bytes` at `fs` femtoseconds each, rounded up. */
static inline sim_time_t ser(uint64_t bytes, uint64_t fs)
{
    return (bytes * fs + 999) / 1000;
}

/* ---- one link direction ------------------------------------------------------ */
static void insert(struct pcie_dir *d, uint32_t i, struct pcie_slot s)
{
    if (d->lo && d->n == d->cap) {
        memmove(d->slot, d->slot + d->lo, (d->n - d->lo) * sizeof *d->slot);
        i -= d->lo;
        d->n -= d->lo;
        d->lo = 0;
    }
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->slot = sim__xrealloc(d->slot, d->cap * sizeof *d->slot);
    }
    memmove(d->slot + i + 1, d->slot + i, (d->n - i) * sizeof *d->slot);
    d->slot[i] = s;
    d->n++;
}

sim_time_t sim__pcie_reserve(struct pcie_dir *d, sim_time_t now, sim_time_t arrive, sim_time_t dur)
{
    while (d->lo < d->n && d->slot[d->lo].end <= now)
        d->lo++;
    if (d->lo == d->n)
        d->lo = d->n = 0;
    d->busy += dur;
    /* behind every burst that arrived first */
    sim_time_t t = arrive;
    for (uint32_t i = d->lo; i < d->n; i++)
        if (d->slot[i].arrive <= arrive && d->slot[i].end > t)
            t = d->slot[i].end;
    /* in the first gap from there that holds it */
    uint32_t i = d->lo;
    while (i < d->n && d->slot[i].end <= t)
        i++;
    while (i < d->n && d->slot[i].start < t + dur) {
        if (d->slot[i].end > t)
            t = d->slot[i].end;
        i++;
    }
    sim_time_t end = t + dur;
    /* adjacent slots merge; the merged one keeps the earliest arrival, so
     * later arrivals still queue behind all of it */
    bool before = i > d->lo && d->slot[i - 1].end == t;
    bool after = i < d->n && d->slot[i].start == end;
    if (before) {
        struct pcie_slot *p = &d->slot[i - 1];
        p->end = end;
        if (arrive < p->arrive)
            p->arrive = arrive;
        if (after) {
            p->end = d->slot[i].end;
            if (d->slot[i].arrive < p->arrive)
                p->arrive = d->slot[i].arrive;
            memmove(d->slot + i, d->slot + i + 1, (d->n - i - 1) * sizeof *d->slot);
            d->n--;
        }
    } else if (after) {
        d->slot[i].start = t;
        if (arrive < d->slot[i].arrive)
            d->slot[i].arrive = arrive;
    } else {
        insert(d, i, (struct pcie_slot){arrive, t, end});
    }
    return t;
}

sim_time_t sim__pcie_busy_after(const struct pcie_dir *d, sim_time_t end)
{
    sim_time_t after = 0;
    for (uint32_t i = d->lo; i < d->n; i++)
        if (d->slot[i].end > end)
            after += d->slot[i].end - (d->slot[i].start > end ? d->slot[i].start : end);
    return after;
}

void sim__pcie_dir_free(struct pcie_dir *d)
{
    free(d->slot);
    d->slot = NULL;
}

/* ---- bursts along a path --------------------------------------------------------- */
struct burst {
    uint64_t bytes;       /* on the wire */
    uint32_t first, last; /* the first and last TLP, on the wire */
    uint32_t ntlp;
    uint8_t type;         /* enum pcie_tlp */
    uint64_t payload;
};

/* Returns when the last TLP has arrived at the end of the path; *first_at
 * is when the first has, *left when the last left the first hop. */
static sim_time_t path_burst(const struct pcie_path *p, sim_time_t now, sim_time_t t,
                             const struct burst *b, sim_time_t *first_at, sim_time_t *left)
{
    sim_time_t arr = t + p->start, prev_end = 0, prev_lat = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const struct pcie_hop *h = &p->hop[i];
        struct pcie_dir *d = h->d;
        sim_time_t dur = ser(b->bytes, h->fs), a = arr;
        if (i) {
            sim_time_t need = prev_end + prev_lat + ser(b->last, h->fs);
            if (need > a + dur)
                a = need - dur;
        }
        sim_time_t s = sim__pcie_reserve(d, now, a, dur);
        d->tlps[b->type] += b->ntlp;
        d->payload += b->payload;
        d->wire += b->bytes;
        if (i == 0 && left)
            *left = s + dur;
        arr = s + ser(b->first, h->fs) + h->lat;
        prev_end = s + dur;
        prev_lat = h->lat;
    }
    if (first_at)
        *first_at = arr;
    return prev_end + prev_lat;
}

sim_time_t sim__pcie_write(const struct pcie_path *p, sim_time_t now, sim_time_t t, uint64_t len,
                           uint16_t mps, sim_time_t *left)
{
    uint64_t ntlp = len ? (len + mps - 1) / mps : 1;
    struct burst b = {
        .bytes = len + ntlp * PCIE_MWR_OVERHEAD,
        .first = (uint32_t)(len < mps ? len : mps) + PCIE_MWR_OVERHEAD,
        .last = (uint32_t)(len - (ntlp - 1) * mps) + PCIE_MWR_OVERHEAD,
        .ntlp = (uint32_t)ntlp,
        .type = PCIE_MWR,
        .payload = len,
    };
    return path_burst(p, now, t, &b, NULL, left);
}

/* One TLP of len bytes alone on the path: store and forward, nothing
 * reserved (the ideal completion time, observe/ideal.c). */
sim_time_t sim__pcie_tlp_alone(const struct pcie_path *p, uint32_t len)
{
    sim_time_t t = p->start;
    for (uint32_t i = 0; i < p->n; i++)
        t += ser((uint64_t)len + PCIE_MWR_OVERHEAD, p->hop[i].fs) + p->hop[i].lat;
    return t;
}

/* ---- reads and their credits ------------------------------------------------------- */
static void heap_push(struct pcie_credits *cr, sim_time_t v)
{
    uint32_t i = cr->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (cr->heap[parent] <= v)
            break;
        cr->heap[i] = cr->heap[parent];
        i = parent;
    }
    cr->heap[i] = v;
}

static sim_time_t heap_pop(struct pcie_credits *cr)
{
    sim_time_t top = cr->heap[0], last = cr->heap[--cr->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= cr->n)
            break;
        if (c + 1 < cr->n && cr->heap[c + 1] < cr->heap[c])
            c++;
        if (last <= cr->heap[c])
            break;
        cr->heap[i] = cr->heap[c];
        i = c;
    }
    if (cr->n)
        cr->heap[i] = last;
    return top;
}

void sim__pcie_credits_free(struct pcie_credits *cr)
{
    free(cr->heap);
    cr->heap = NULL;
}

sim_time_t sim__pcie_read(const struct pcie_route *r, struct pcie_credits *cr, sim_time_t now,
                          sim_time_t t, uint64_t len)
{
    uint32_t mrrs = r->mrrs, chunk = r->rcb_completions ? r->rcb : r->mps;
    uint64_t per_req = (mrrs + chunk - 1) / chunk; /* completions answering a full request */
    uint64_t req_wire = mrrs + per_req * PCIE_CPL_OVERHEAD;
    /* Requests go out in groups of a quarter of the credits, so that a
     * long read keeps requests in flight while earlier ones complete. */
    uint32_t group = cr->cap / 4 ? cr->cap / 4 : 1;
    const struct pcie_hop *lasthop = &r->back.hop[r->back.n - 1];
    sim_time_t done = t;
    while (cr->n && cr->heap[0] <= now) /* credits back already */
        heap_pop(cr);
    while (len) {
        uint64_t nreq = (len + mrrs - 1) / mrrs;
        uint32_t n = nreq < group ? (uint32_t)nreq : group;
        uint64_t bytes = len < (uint64_t)n * mrrs ? len : (uint64_t)n * mrrs;
        sim_time_t at = t;
        while (cr->n + n > cr->cap) {
            sim_time_t back = heap_pop(cr);
            if (back > at)
                at = back;
        }
        struct burst rq = {
            .bytes = (uint64_t)n * PCIE_MRD_OVERHEAD,
            .first = PCIE_MRD_OVERHEAD,
            .last = PCIE_MRD_OVERHEAD,
            .ntlp = n,
            .type = PCIE_MRD,
        };
        sim_time_t first_at;
        path_burst(&r->out, now, at, &rq, &first_at, NULL);
        uint64_t last_req = bytes - (uint64_t)(n - 1) * mrrs;
        uint64_t last_cpl = (last_req + chunk - 1) / chunk;
        uint64_t last_wire = last_req + last_cpl * PCIE_CPL_OVERHEAD;
        uint64_t tail = last_req % chunk ? last_req % chunk : chunk;
        struct burst cpl = {
            .bytes = (uint64_t)(n - 1) * req_wire + last_wire,
            .first = (uint32_t)(bytes < chunk ? bytes : chunk) + PCIE_CPL_OVERHEAD,
            .last = (uint32_t)tail + PCIE_CPL_OVERHEAD,
            .ntlp = (uint32_t)((n - 1) * per_req + last_cpl),
            .type = PCIE_CPLD,
            .payload = bytes,
        };
        sim_time_t end = path_burst(&r->back, now, first_at + r->target_latency, &cpl, NULL, NULL);
        /* request j's credit comes back when its last completion arrives:
         * before the end by the completions of the requests after it */
        for (uint32_t j = 0; j + 1 < n; j++)
            heap_push(cr, end - ser((n - 2 - j) * req_wire + last_wire, lasthop->fs));
        heap_push(cr, end);
        if (end > done)
            done = end;
        len -= bytes;
        t = at;
    }
    return done;
}
