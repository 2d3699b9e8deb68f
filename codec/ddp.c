/* ddp.c - the ULPDU an FPDU carries: the DDP header (RFC 5041 4) with the
 * RDMAP control field in its RsvdULP bits, and the RDMAP header its opcode
 * names (RFC 5040 4, RFC 7306 5).
 *
 *  tagged (14 octets)                      untagged (18 octets)
 *  |T|L|Rsvd|DV|RV|R|Opc|  STag  |  TO  |   |T|L|Rsvd|DV|RV|R|Opc| Inval STag | QN | MSN | MO |
 *
 *  then Read Request (28), Terminate (4 [+2+14/18] [+28]), Atomic Request
 *  (52) or Atomic Response (12), then the payload.
 */
#include <string.h>

#include "fields.h"
#include "iwarp_internal.h"

/* DDP header and RDMAP control at p; returns the header length, 0 when len
 * cannot hold it. */
static size_t ddp_header_decode(const uint8_t *p, size_t len, struct rdma_ddp *ddp,
                                struct rdma_rdmap *rdmap)
{
    if (len < 1)
        return 0;
    size_t hl = (p[0] & 0x80) ? RDMA_DDP_TAGGED_LEN : RDMA_DDP_UNTAGGED_LEN;
    if (len < hl)
        return 0;
    memset(ddp, 0, sizeof *ddp);
    memset(rdmap, 0, sizeof *rdmap);
    DECODE_FIELDS(RDMA_DDP_FIELDS, ddp, p);
    DECODE_FIELDS(RDMA_RDMAP_FIELDS, rdmap, p);
    if (ddp->tagged_flag) {
        DECODE_FIELDS(RDMA_DDP_TAGGED_FIELDS, ddp, p);
    } else {
        DECODE_FIELDS(RDMA_DDP_UNTAGGED_FIELDS, ddp, p);
        DECODE_FIELDS(RDMA_RDMAP_INVAL_FIELDS, rdmap, p);
    }
    return hl;
}

static size_t ddp_header_encode(const struct rdma_ddp *ddp, const struct rdma_rdmap *rdmap,
                                uint8_t *p)
{
    size_t hl = ddp->tagged_flag ? RDMA_DDP_TAGGED_LEN : RDMA_DDP_UNTAGGED_LEN;
    memset(p, 0, hl);
    ENCODE_FIELDS(RDMA_DDP_FIELDS, ddp, p);
    ENCODE_FIELDS(RDMA_RDMAP_FIELDS, rdmap, p);
    if (ddp->tagged_flag) {
        ENCODE_FIELDS(RDMA_DDP_TAGGED_FIELDS, ddp, p);
    } else {
        ENCODE_FIELDS(RDMA_DDP_UNTAGGED_FIELDS, ddp, p);
        ENCODE_FIELDS(RDMA_RDMAP_INVAL_FIELDS, rdmap, p);
    }
    return hl;
}

/* Terminate: control word, then the headers its D and R bits include. */
static size_t term_decode(const uint8_t *p, size_t len, struct rdma_iwarp_fpdu *f)
{
    DECODE_FIELDS(RDMA_RDMAP_TERM_FIELDS, &f->term, p);
    f->present |= RDMA_IW_TERM;
    size_t off = RDMA_RDMAP_TERM_LEN;
    if (f->term.hdrct_d) {
        if (len < off + RDMA_RDMAP_TERM_SEGLEN_LEN)
            return 0;
        f->term_ddp_seg_len = rdma_get_be16(p + off);
        off += RDMA_RDMAP_TERM_SEGLEN_LEN;
        size_t hl = ddp_header_decode(p + off, len - off, &f->term_ddp, &f->term_rdmap);
        if (!hl)
            return 0;
        f->term_ddp_h = p + off;
        f->term_ddp_h_len = (uint8_t)hl;
        f->present |= RDMA_IW_TERM_DDP;
        off += hl;
    }
    if (f->term.hdrct_r) {
        if (len < off + RDMA_RDMAP_RR_LEN)
            return 0;
        DECODE_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->term_rr, p + off);
        f->present |= RDMA_IW_TERM_RR;
        off += RDMA_RDMAP_RR_LEN;
    }
    return off;
}

/* The RDMAP header after the DDP header; returns its length, 0 when the
 * ULPDU is too short for it. */
static size_t rdmap_header_decode(const uint8_t *p, size_t len, struct rdma_iwarp_fpdu *f)
{
    uint32_t fl = f->op->flags;
    if (fl & RDMA_RDMAP_HDR_RR) {
        if (len < RDMA_RDMAP_RR_LEN)
            return 0;
        DECODE_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->rr, p);
        f->present |= RDMA_IW_RR;
        return RDMA_RDMAP_RR_LEN;
    }
    if (fl & RDMA_RDMAP_HDR_TERM) {
        if (len < RDMA_RDMAP_TERM_LEN)
            return 0;
        return term_decode(p, len, f);
    }
    if (fl & RDMA_RDMAP_HDR_ATOMIC_REQ) {
        if (len < RDMA_RDMAP_ATOMIC_REQ_LEN)
            return 0;
        if ((p[3] & 0x0f) == RDMA_RDMAP_ATOMIC_FETCHADD)
            DECODE_FIELDS(RDMA_RDMAP_ATOMIC_ADD_FIELDS, &f->atomic.add, p);
        else
            DECODE_FIELDS(RDMA_RDMAP_ATOMIC_SWAP_FIELDS, &f->atomic.swap, p);
        f->present |= RDMA_IW_ATOMIC_REQ;
        return RDMA_RDMAP_ATOMIC_REQ_LEN;
    }
    if (fl & RDMA_RDMAP_HDR_ATOMIC_RESP) {
        if (len < RDMA_RDMAP_ATOMIC_RESP_LEN)
            return 0;
        DECODE_FIELDS(RDMA_RDMAP_ATOMIC_RESP_FIELDS, &f->atomic_resp, p);
        f->present |= RDMA_IW_ATOMIC_RESP;
        return RDMA_RDMAP_ATOMIC_RESP_LEN;
    }
    return 0;
}

void rdma__ulpdu_decode(const uint8_t *u, size_t len, struct rdma_iwarp_fpdu *f)
{
    size_t hl = ddp_header_decode(u, len, &f->ddp, &f->rdmap);
    if (!hl) {
        FPDU_FAIL(f, RDMA_MALFORMED, "ULPDU shorter than its DDP header");
        return;
    }
    f->present |= RDMA_IW_DDP | RDMA_IW_RDMAP;
    f->op = &rdma_rdmap_opcodes[f->rdmap.opcode];
    if (f->ddp.rsvd)
        FPDU_FAIL(f, RDMA_MALFORMED, "DDP reserved field set");
    else if (f->ddp.dv != RDMA_DDP_VERSION)
        FPDU_FAIL(f, RDMA_MALFORMED, "DDP version is not 1");
    else if (f->rdmap.version != RDMA_RDMAP_VERSION)
        FPDU_FAIL(f, RDMA_MALFORMED, "RDMAP version is not 1");
    else if (f->rdmap.rsv)
        FPDU_FAIL(f, RDMA_MALFORMED, "RDMAP reserved field set");
    if (!f->op->name) {
        FPDU_FAIL(f, RDMA_MALFORMED, "reserved RDMAP opcode");
        f->payload = u + hl;
        f->payload_len = (uint32_t)(len - hl);
        return;
    }
    if (!(f->op->flags & RDMA_RDMAP_TAGGED) != !f->ddp.tagged_flag)
        FPDU_FAIL(f, RDMA_MALFORMED, "RDMAP opcode and DDP buffer model disagree");
    size_t rl = 0;
    if (f->op->flags & (RDMA_RDMAP_HDR_RR | RDMA_RDMAP_HDR_TERM | RDMA_RDMAP_HDR_ATOMIC_REQ |
                        RDMA_RDMAP_HDR_ATOMIC_RESP)) {
        rl = rdmap_header_decode(u + hl, len - hl, f);
        if (!rl) {
            FPDU_FAIL(f, RDMA_MALFORMED, "ULPDU shorter than its RDMAP header");
            return;
        }
    }
    f->payload = u + hl + rl;
    f->payload_len = (uint32_t)(len - hl - rl);
    if (f->payload_len && (f->op->flags & RDMA_RDMAP_NO_PAYLOAD))
        FPDU_FAIL(f, RDMA_MALFORMED, "payload after an RDMAP message that carries none");
}

size_t rdma__ulpdu_headers_encode(const struct rdma_iwarp_fpdu *f, uint8_t *out)
{
    size_t n = ddp_header_encode(&f->ddp, &f->rdmap, out);
    if (f->present & RDMA_IW_RR) {
        memset(out + n, 0, RDMA_RDMAP_RR_LEN);
        ENCODE_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->rr, out + n);
        n += RDMA_RDMAP_RR_LEN;
    }
    if (f->present & RDMA_IW_TERM) {
        memset(out + n, 0, RDMA_RDMAP_TERM_LEN);
        ENCODE_FIELDS(RDMA_RDMAP_TERM_FIELDS, &f->term, out + n);
        n += RDMA_RDMAP_TERM_LEN;
        if (f->present & RDMA_IW_TERM_DDP) {
            rdma_put_be16(out + n, f->term_ddp_seg_len);
            n += RDMA_RDMAP_TERM_SEGLEN_LEN;
            n += ddp_header_encode(&f->term_ddp, &f->term_rdmap, out + n);
        }
        if (f->present & RDMA_IW_TERM_RR) {
            memset(out + n, 0, RDMA_RDMAP_RR_LEN);
            ENCODE_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->term_rr, out + n);
            n += RDMA_RDMAP_RR_LEN;
        }
    }
    if (f->present & RDMA_IW_ATOMIC_REQ) {
        memset(out + n, 0, RDMA_RDMAP_ATOMIC_REQ_LEN);
        if (f->atomic.add.opcode == RDMA_RDMAP_ATOMIC_FETCHADD)
            ENCODE_FIELDS(RDMA_RDMAP_ATOMIC_ADD_FIELDS, &f->atomic.add, out + n);
        else
            ENCODE_FIELDS(RDMA_RDMAP_ATOMIC_SWAP_FIELDS, &f->atomic.swap, out + n);
        n += RDMA_RDMAP_ATOMIC_REQ_LEN;
    }
    if (f->present & RDMA_IW_ATOMIC_RESP) {
        memset(out + n, 0, RDMA_RDMAP_ATOMIC_RESP_LEN);
        ENCODE_FIELDS(RDMA_RDMAP_ATOMIC_RESP_FIELDS, &f->atomic_resp, out + n);
        n += RDMA_RDMAP_ATOMIC_RESP_LEN;
    }
    return n;
}

void rdma_fpdu_set_opcode(struct rdma_iwarp_fpdu *f, uint8_t opcode)
{
    memset(f, 0, sizeof *f);
    const struct rdma_rdmap_opcode_info *op = &rdma_rdmap_opcodes[opcode & 0x0f];
    f->op = op;
    f->present = RDMA_IW_DDP | RDMA_IW_RDMAP;
    f->ddp.tagged_flag = (op->flags & RDMA_RDMAP_TAGGED) ? 1 : 0;
    f->ddp.last_flag = 1;
    f->ddp.dv = RDMA_DDP_VERSION;
    f->rdmap.version = RDMA_RDMAP_VERSION;
    f->rdmap.opcode = opcode & 0x0f;
    if (op->flags & RDMA_RDMAP_HDR_RR)
        f->present |= RDMA_IW_RR;
    if (op->flags & RDMA_RDMAP_HDR_TERM)
        f->present |= RDMA_IW_TERM;
    if (op->flags & RDMA_RDMAP_HDR_ATOMIC_REQ)
        f->present |= RDMA_IW_ATOMIC_REQ;
    if (op->flags & RDMA_RDMAP_HDR_ATOMIC_RESP)
        f->present |= RDMA_IW_ATOMIC_RESP;
}
