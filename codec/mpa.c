/* mpa.c - MPA framing (RFC 5044): the Request/Reply frames of the startup
 * phase (7.1, with the RFC 6581 enhanced IRD/ORD word) and the FPDU of full
 * operation (4):
 *
 *   [marker] | ULPDU_Length (16) | ULPDU ... [marker] ... | pad 0-3 | CRC32c
 *
 * A marker (reserved 16, FPDUPTR 16) sits every 512 octets of TCP sequence
 * space counted from the direction's first FPDU, wherever that falls in an
 * FPDU; a marker due just before an FPDU header belongs to that FPDU and
 * points 0 back, others point back to the FPDU's ULPDU_Length. The pad makes
 * ULPDU_Length + ULPDU a multiple of 4, so FPDUs and markers stay 4-aligned.
 * The CRC covers every octet of the FPDU before it, markers included, and is
 * stored least significant byte first.
 */
#include <string.h>

#include "fields.h"
#include "iwarp_internal.h"

static const uint8_t mpa_key[2][RDMA_MPA_KEY_LEN] = {
    {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'},
    {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e'},
};

enum rdma_status rdma_mpa_frame_decode(const uint8_t *p, size_t len, struct rdma_mpa_frame *f,
                                       size_t *used)
{
    size_t cmp = len < RDMA_MPA_KEY_LEN ? len : RDMA_MPA_KEY_LEN;
    *used = RDMA_MPA_REQREP_LEN;
    memset(f, 0, sizeof *f);
    if (!memcmp(p, mpa_key[0], cmp))
        f->kind = RDMA_MPA_REQUEST;
    else if (!memcmp(p, mpa_key[1], cmp))
        f->kind = RDMA_MPA_REPLY;
    else
        return RDMA_UNSUPPORTED;
    if (len < RDMA_MPA_REQREP_LEN)
        return RDMA_TRUNCATED;
    DECODE_FIELDS(RDMA_MPA_REQREP_FIELDS, &f->hdr, p);
    if (f->hdr.pdlength > RDMA_MPA_MAX_PD)
        return RDMA_MALFORMED;
    *used = RDMA_MPA_REQREP_LEN + (size_t)f->hdr.pdlength;
    if (len < *used)
        return RDMA_TRUNCATED;
    const uint8_t *pd = p + RDMA_MPA_REQREP_LEN;
    size_t pdlen = f->hdr.pdlength;
    if (f->hdr.rev == RDMA_MPA_ENHANCED_REV) {
        if (pdlen < RDMA_MPA_ENHANCED_LEN)
            return RDMA_MALFORMED;
        DECODE_FIELDS(RDMA_MPA_ENHANCED_FIELDS, &f->enh, pd);
        f->enhanced = true;
        pd += RDMA_MPA_ENHANCED_LEN;
        pdlen -= RDMA_MPA_ENHANCED_LEN;
    }
    f->private_data = pd;
    f->private_len = (uint16_t)pdlen;
    return RDMA_OK;
}

enum rdma_status rdma_mpa_frame_encode(const struct rdma_mpa_frame *f, uint8_t *out, size_t cap,
                                       size_t *out_len)
{
    size_t enh = f->enhanced ? RDMA_MPA_ENHANCED_LEN : 0;
    size_t n = RDMA_MPA_REQREP_LEN + enh + f->private_len;
    *out_len = 0;
    if (f->kind != RDMA_MPA_REQUEST && f->kind != RDMA_MPA_REPLY)
        return RDMA_MALFORMED;
    if (enh + f->private_len > RDMA_MPA_MAX_PD)
        return RDMA_MALFORMED;
    if (n > cap)
        return RDMA_TRUNCATED;
    struct rdma_mpa_reqrep hdr = f->hdr;
    hdr.pdlength = (uint16_t)(enh + f->private_len);
    memcpy(out, mpa_key[f->kind - 1], RDMA_MPA_KEY_LEN);
    memset(out + RDMA_MPA_KEY_LEN, 0, RDMA_MPA_REQREP_LEN - RDMA_MPA_KEY_LEN + enh);
    ENCODE_FIELDS(RDMA_MPA_REQREP_FIELDS, &hdr, out);
    if (enh)
        ENCODE_FIELDS(RDMA_MPA_ENHANCED_FIELDS, &f->enh, out + RDMA_MPA_REQREP_LEN);
    if (f->private_len)
        memcpy(out + RDMA_MPA_REQREP_LEN + enh, f->private_data, f->private_len);
    *out_len = n;
    return RDMA_OK;
}

/* Octets after ULPDU_Length + ULPDU up to a multiple of 4. */
static unsigned pad_len(unsigned ulpdulength)
{
    return (4 - ((ulpdulength + 2) & 3)) & 3;
}

/* Wire length of an FPDU of `logical` octets without markers starting at
 * seq: walk the stream, adding each marker due before the last octet. */
static size_t wire_len(const struct rdma_mpa_framing *fr, uint32_t seq, size_t logical)
{
    if (!fr->markers)
        return logical;
    size_t raw = 0, m = rdma__to_marker(fr, seq);
    for (;;) {
        if (raw == m) {
            raw += RDMA_MPA_MARKER_LEN;
            m += RDMA_MPA_MARKER_INTERVAL;
        }
        size_t chunk = m - raw < logical ? m - raw : logical;
        raw += chunk;
        logical -= chunk;
        if (!logical)
            return raw;
    }
}

static size_t header_at(const struct rdma_mpa_framing *fr, uint32_t seq)
{
    return fr->markers && rdma__to_marker(fr, seq) == 0 ? RDMA_MPA_MARKER_LEN : 0;
}

size_t rdma__fpdu_wire_len(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                           size_t len)
{
    size_t h = header_at(fr, seq);
    if (len < h + 2)
        return 0;
    unsigned ul = rdma_get_be16(p + h);
    return wire_len(fr, seq, 2 + ul + pad_len(ul) + RDMA_MPA_CRC_LEN);
}

enum rdma_status rdma_fpdu_decode(const struct rdma_mpa_framing *fr, uint32_t seq, const uint8_t *p,
                                  size_t len, uint8_t *scratch, struct rdma_iwarp_fpdu *f,
                                  size_t *used)
{
    size_t total = rdma__fpdu_wire_len(fr, seq, p, len);
    *used = total;
    if (!total || len < total)
        return RDMA_TRUNCATED;
    memset(f, 0, offsetof(struct rdma_iwarp_fpdu, markers));
    /* the rest is filled as far as decoding gets; op is read whatever the
     * status (to name the PDU), so it is NULL until the RDMAP header is */
    f->op = NULL;
    size_t h = header_at(fr, seq);
    f->seq = seq;
    f->wire_len = (uint32_t)total;
    f->ulpdulength = rdma_get_be16(p + h);
    f->pad = (uint8_t)pad_len(f->ulpdulength);

    /* Pull the markers out; the FPDU without them is contiguous in p when
     * there are none, else gathered into scratch. */
    const uint8_t *logical = p;
    if (fr->markers) {
        size_t raw = 0, out = 0, m = rdma__to_marker(fr, seq);
        while (m < total) {
            memcpy(scratch + out, p + raw, m - raw);
            out += m - raw;
            struct rdma_mpa_marker *mk = &f->markers[f->nmarkers];
            DECODE_FIELDS(RDMA_MPA_MARKER_FIELDS, mk, p + m);
            f->marker_offset[f->nmarkers++] = (uint16_t)m;
            uint32_t expect = m == 0 ? 0 : (uint32_t)(m - h);
            /* A pointer short of the header means a later FPDU owns the
             * marker: this one's length runs into it. */
            if (mk->marker_res)
                FPDU_FAIL(f, RDMA_MALFORMED, "MPA marker reserved field set");
            else if (mk->marker_fpduptr > expect)
                FPDU_FAIL(f, RDMA_MALFORMED, "MPA marker points to no FPDU header");
            else if (mk->marker_fpduptr < expect)
                FPDU_FAIL(f, RDMA_MALFORMED, "ULPDU_Length overruns the FPDU a marker points to");
            raw = m + RDMA_MPA_MARKER_LEN;
            m += RDMA_MPA_MARKER_INTERVAL;
        }
        if (f->nmarkers) {
            memcpy(scratch + out, p + raw, total - raw);
            logical = scratch;
        }
    }
    uint32_t carried = rdma_get_le32(p + total - RDMA_MPA_CRC_LEN);
    f->crc.value = carried;
    if (fr->crc) {
        f->crc.present = true;
        f->crc.computed = rdma_crc32c(p, total - RDMA_MPA_CRC_LEN);
        f->crc.ok = f->crc.computed == carried;
        if (!f->crc.ok)
            FPDU_FAIL(f, RDMA_BAD_CHECKSUM, "MPA CRC32c mismatch");
    }
    rdma__ulpdu_decode(logical + 2, f->ulpdulength, f);
    return (enum rdma_status)f->status;
}

/* Writes stream octets starting at sequence `seq`, putting in each marker
 * as its position comes up. */
struct mwriter {
    const struct rdma_mpa_framing *fr;
    uint32_t seq;
    size_t hdr;  /* where ULPDU_Length is: 4 after a leading marker */
    uint8_t *out;
    size_t cap, len;
    bool overflow;
};

static void mw_marker_if_due(struct mwriter *w)
{
    if (!w->fr->markers || rdma__to_marker(w->fr, w->seq + (uint32_t)w->len))
        return;
    if (w->cap - w->len < RDMA_MPA_MARKER_LEN) {
        w->overflow = true;
        return;
    }
    struct rdma_mpa_marker mk = {0, (uint16_t)(w->len ? w->len - w->hdr : 0)};
    memset(w->out + w->len, 0, RDMA_MPA_MARKER_LEN);
    ENCODE_FIELDS(RDMA_MPA_MARKER_FIELDS, &mk, w->out + w->len);
    w->len += RDMA_MPA_MARKER_LEN;
}

static void mw_put(struct mwriter *w, const uint8_t *src, size_t n)
{
    while (n && !w->overflow) {
        mw_marker_if_due(w);
        size_t room = w->fr->markers ? rdma__to_marker(w->fr, w->seq + (uint32_t)w->len) : n;
        size_t chunk = room < n ? room : n;
        if (w->overflow || w->cap - w->len < chunk) {
            w->overflow = true;
            return;
        }
        if (src) {
            memcpy(w->out + w->len, src, chunk);
            src += chunk;
        } else {
            memset(w->out + w->len, 0, chunk);
        }
        w->len += chunk;
        n -= chunk;
    }
}

enum rdma_status rdma_fpdu_encode(const struct rdma_mpa_framing *fr, uint32_t seq,
                                  const struct rdma_iwarp_fpdu *f, uint8_t *out, size_t cap,
                                  size_t *out_len)
{
    uint8_t hdr[2 + RDMA__ULPDU_HDR_MAX];
    *out_len = 0;
    size_t hl = rdma__ulpdu_headers_encode(f, hdr + 2);
    size_t ul = hl + f->payload_len;
    if (ul > 0xffff)
        return RDMA_MALFORMED;
    rdma_put_be16(hdr, (uint16_t)ul);
    struct mwriter w = {fr, seq, header_at(fr, seq), out, cap, 0, false};
    mw_put(&w, hdr, 2 + hl);
    mw_put(&w, f->payload, f->payload_len);
    mw_put(&w, 0, pad_len((unsigned)ul));
    mw_marker_if_due(&w);
    if (w.overflow || cap - w.len < RDMA_MPA_CRC_LEN)
        return RDMA_TRUNCATED;
    rdma_put_le32(out + w.len, fr->crc ? rdma_crc32c(out, w.len) : 0);
    *out_len = w.len + RDMA_MPA_CRC_LEN;
    return RDMA_OK;
}
