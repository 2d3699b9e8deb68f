/* format_iwarp.c - the TCP header and one iWARP PDU as JSON members and as
 * the text after the addresses of a summary line.
 *
 * JSON objects: "tcp", then for an MPA Request/Reply "mpa", for an FPDU
 * "mpa" (length, pad, markers), "ddp", "rdmap", "payload_len" and
 * "mpa_crc"; member names inside come from the field lists, which carry
 * Wireshark's names, followed by a few derived names (opcode_name, ...).
 */
#include "iwarp_internal.h"
#include "out.h"

static void key(struct out *o, const char *name)
{
    out_chr(o, '"');
    out_str(o, name);
    out_str(o, "\":");
}

static void member_u64(struct out *o, const char *name, uint64_t v)
{
    key(o, name);
    out_u64(o, v);
    out_chr(o, ',');
}

static void member_str(struct out *o, const char *name, const char *s)
{
    key(o, name);
    out_chr(o, '"');
    out_str(o, s);
    out_str(o, "\",");
}

static void member_hex(struct out *o, const char *name, const uint8_t *p, size_t len)
{
    key(o, name);
    out_chr(o, '"');
    rdma__out_array(o, p, len, RDMA_ARRAY_HEX);
    out_str(o, "\",");
}

/* A CRC32c as tshark shows iwarp_mpa.crc: the wire bytes (the CRC least
 * significant byte first) read as a big-endian number, in hex. */
static void member_crc(struct out *o, const char *name, uint32_t v)
{
    key(o, name);
    out_str(o, "\"0x");
    out_hex(o, (v & 0xff) << 24 | (v & 0xff00) << 8 | (v >> 8 & 0xff00) | v >> 24, 8);
    out_str(o, "\",");
}

static void open_obj(struct out *o, const char *name)
{
    key(o, name);
    out_chr(o, '{');
}

/* Members end with a comma; closing drops the last one. */
static void close_obj(struct out *o, char c)
{
    if (!o->full && o->len && o->buf[o->len - 1] == ',')
        o->len--;
    out_chr(o, c);
    out_chr(o, ',');
}

/* 64-bit fields (tagged offsets, atomic operands) as hex strings, as in
 * format_json.c */
static void member_field(struct out *o, const char *name, uint64_t v, size_t size)
{
    if (size < 8) {
        member_u64(o, name, v);
        return;
    }
    key(o, name);
    out_hex64_json(o, v);
    out_chr(o, ',');
}

#define JSON_FIELD_(name, type, byte, shift, width) member_field(o, #name, h__->name, sizeof(type));
#define JSON_ARRAY_(name, byte, len, kind)
#define JSON_FIELDS(LIST, h)                                                   \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        LIST(JSON_FIELD_, JSON_ARRAY_)                                         \
    } while (0)

static void json_ddp_fields(struct out *o, const struct rdma_ddp *ddp)
{
    JSON_FIELDS(RDMA_DDP_FIELDS, ddp);
    if (ddp->tagged_flag)
        JSON_FIELDS(RDMA_DDP_TAGGED_FIELDS, ddp);
    else
        JSON_FIELDS(RDMA_DDP_UNTAGGED_FIELDS, ddp);
}

static void json_mpa_frame(struct out *o, const struct rdma_mpa_frame *f)
{
    open_obj(o, "mpa");
    member_str(o, "frame", f->kind == RDMA_MPA_REQUEST ? "request" : "reply");
    JSON_FIELDS(RDMA_MPA_REQREP_FIELDS, &f->hdr);
    if (f->enhanced)
        JSON_FIELDS(RDMA_MPA_ENHANCED_FIELDS, &f->enh);
    if (f->private_len)
        member_hex(o, "privatedata", f->private_data, f->private_len);
    close_obj(o, '}');
}

static void json_term(struct out *o, const struct rdma_iwarp_fpdu *f)
{
    const struct rdma_rdmap_term *t = &f->term;
    const char *name;
    JSON_FIELDS(RDMA_RDMAP_TERM_FIELDS, t);
    if ((name = rdma_term_layer_name(t->term_layer)))
        member_str(o, "term_layer_name", name);
    if ((name = rdma_term_etype_name(t->term_layer, t->term_etype)))
        member_str(o, "term_etype_name", name);
    if ((name = rdma_term_error_name(t->term_layer, t->term_etype, t->term_errcode)))
        member_str(o, "term_error", name);
    if (f->present & RDMA_IW_TERM_DDP) {
        member_u64(o, "term_ddp_seg_len", f->term_ddp_seg_len);
        member_hex(o, "term_ddp_h", f->term_ddp_h, f->term_ddp_h_len);
        open_obj(o, "term_ddp");
        json_ddp_fields(o, &f->term_ddp);
        JSON_FIELDS(RDMA_RDMAP_FIELDS, &f->term_rdmap);
        close_obj(o, '}');
    }
    if (f->present & RDMA_IW_TERM_RR) {
        open_obj(o, "term_rdma");
        JSON_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->term_rr);
        close_obj(o, '}');
    }
}

static void json_atomic(struct out *o, const struct rdma_iwarp_fpdu *f)
{
    open_obj(o, "atomic");
    if (f->present & RDMA_IW_ATOMIC_REQ) {
        const char *name = rdma_rdmap_atomic_op_name(f->atomic.add.opcode);
        if (f->atomic.add.opcode == RDMA_RDMAP_ATOMIC_FETCHADD)
            JSON_FIELDS(RDMA_RDMAP_ATOMIC_ADD_FIELDS, &f->atomic.add);
        else
            JSON_FIELDS(RDMA_RDMAP_ATOMIC_SWAP_FIELDS, &f->atomic.swap);
        member_str(o, "opcode_name", name ? name : "reserved");
    } else {
        JSON_FIELDS(RDMA_RDMAP_ATOMIC_RESP_FIELDS, &f->atomic_resp);
    }
    close_obj(o, '}');
}

static void json_fpdu(struct out *o, const struct rdma_iwarp_fpdu *f)
{
    open_obj(o, "mpa");
    member_u64(o, "ulpdulength", f->ulpdulength);
    member_u64(o, "pad", f->pad);
    if (f->nmarkers) {
        key(o, "markers");
        out_chr(o, '[');
        for (unsigned i = 0; i < f->nmarkers; i++) {
            out_chr(o, '{');
            JSON_FIELDS(RDMA_MPA_MARKER_FIELDS, &f->markers[i]);
            member_u64(o, "offset", f->marker_offset[i]);
            close_obj(o, '}');
        }
        close_obj(o, ']');
    }
    if (!f->crc.present)
        member_crc(o, "crc", f->crc.value);
    close_obj(o, '}');
    if (f->present & RDMA_IW_DDP) {
        open_obj(o, "ddp");
        json_ddp_fields(o, &f->ddp);
        close_obj(o, '}');
    }
    if (f->present & RDMA_IW_RDMAP) {
        open_obj(o, "rdmap");
        JSON_FIELDS(RDMA_RDMAP_FIELDS, &f->rdmap);
        member_str(o, "opcode_name", f->op && f->op->name ? f->op->name : "reserved");
        if (f->op && (f->op->flags & RDMA_RDMAP_INVALIDATE) && !f->ddp.tagged_flag)
            JSON_FIELDS(RDMA_RDMAP_INVAL_FIELDS, &f->rdmap);
        if (f->present & RDMA_IW_RR)
            JSON_FIELDS(RDMA_RDMAP_RR_FIELDS, &f->rr);
        if (f->present & RDMA_IW_TERM)
            json_term(o, f);
        if (f->present & (RDMA_IW_ATOMIC_REQ | RDMA_IW_ATOMIC_RESP))
            json_atomic(o, f);
        close_obj(o, '}');
        member_u64(o, "payload_len", f->payload_len);
    }
    if (f->crc.present) {
        key(o, "mpa_crc");
        out_chr(o, '{');
        member_crc(o, "value", f->crc.value);
        out_str(o, f->crc.ok ? "\"ok\":true}," : "\"ok\":false},");
    }
}

static void json_error(struct out *o, uint8_t status, const char *reason)
{
    key(o, "error");
    out_chr(o, '"');
    out_str(o, rdma_status_name((enum rdma_status)status));
    if (reason) {
        out_str(o, ": ");
        out_str(o, reason);
    }
    out_str(o, "\",");
}

size_t rdma_iwarp_format_json(const struct rdma_iwarp_seg *seg, const struct rdma_iwarp_pdu *pdu,
                              char *buf, size_t cap)
{
    struct out o_ = {buf, cap, 0, false}, *o = &o_;
    if (seg->tcp) {
        open_obj(o, "tcp");
        JSON_FIELDS(RDMA_TCP_FIELDS, &seg->hdr);
        member_u64(o, "len", seg->payload_len);
        close_obj(o, '}');
    }
    if (seg->note)
        member_str(o, "note", seg->note);
    if (pdu) {
        if (pdu->kind == RDMA_IWARP_PDU_MPA)
            json_mpa_frame(o, &pdu->mpa);
        else if (pdu->kind == RDMA_IWARP_PDU_FPDU)
            json_fpdu(o, &pdu->fpdu);
        if (pdu->status != RDMA_OK)
            json_error(o, pdu->status, pdu->reason);
    }
    if (!o->full && o->len && buf[o->len - 1] == ',')
        o->len--;
    return o->full ? 0 : o->len;
}

/* ---- summary ------------------------------------------------------------- */

static void endpoint(struct out *o, const struct rdma_pkt *pkt, const struct rdma_iwarp_seg *seg,
                     bool src)
{
    if (pkt->present & RDMA_HDR_IP)
        rdma__out_array(o, src ? pkt->ip.src : pkt->ip.dst, 4, RDMA_ARRAY_IPV4);
    else if (pkt->present & RDMA_HDR_IPV6)
        rdma__out_array(o, src ? pkt->ipv6.src : pkt->ipv6.dst, 16, RDMA_ARRAY_IPV6);
    else
        out_chr(o, '?');
    if (seg->tcp) {
        out_chr(o, ':');
        out_u64(o, src ? seg->hdr.srcport : seg->hdr.dstport);
    }
}

static void hex_member(struct out *o, const char *name, uint64_t v, unsigned digits)
{
    out_chr(o, ' ');
    out_str(o, name);
    out_str(o, "=0x");
    out_hex(o, v, digits);
}

static void dec_member(struct out *o, const char *name, uint64_t v)
{
    out_chr(o, ' ');
    out_str(o, name);
    out_chr(o, '=');
    out_u64(o, v);
}

static void summary_mpa(struct out *o, const struct rdma_mpa_frame *f)
{
    out_str(o, f->kind == RDMA_MPA_REQUEST ? "MPA Request" : "MPA Reply");
    dec_member(o, "rev", f->hdr.rev);
    if (f->hdr.marker_flag)
        out_str(o, " M");
    if (f->hdr.crc_flag)
        out_str(o, " C");
    if (f->hdr.rej_flag)
        out_str(o, " R(reject)");
    if (f->enhanced) {
        dec_member(o, "ird", f->enh.ird);
        dec_member(o, "ord", f->enh.ord);
    }
    dec_member(o, "pd", f->private_len);
}

static void summary_fpdu(struct out *o, const struct rdma_iwarp_fpdu *f)
{
    if (!(f->present & RDMA_IW_RDMAP)) {
        out_str(o, "FPDU");
        dec_member(o, "ulpdu", f->ulpdulength);
        return;
    }
    if (f->op && f->op->name) {
        out_str(o, f->op->name);
    } else {
        out_str(o, "reserved opcode 0x");
        out_hex(o, f->rdmap.opcode, 1);
    }
    if (f->ddp.tagged_flag) {
        hex_member(o, "STag", f->ddp.stag, 8);
        hex_member(o, "TO", f->ddp.tagged_offset, 16);
    } else {
        dec_member(o, "QN", f->ddp.qn);
        dec_member(o, "MSN", f->ddp.msn);
        dec_member(o, "MO", f->ddp.mo);
    }
    if (f->ddp.last_flag)
        out_str(o, " L");
    if (f->op && (f->op->flags & RDMA_RDMAP_INVALIDATE))
        hex_member(o, "inval", f->rdmap.inval_stag, 8);
    if (f->present & RDMA_IW_RR) {
        hex_member(o, "sink", f->rr.sinkstag, 8);
        hex_member(o, "sinkto", f->rr.sinkto, 16);
        dec_member(o, "size", f->rr.rdmardsz);
        hex_member(o, "src", f->rr.srcstag, 8);
        hex_member(o, "srcto", f->rr.srcto, 16);
    }
    if (f->present & RDMA_IW_TERM) {
        const struct rdma_rdmap_term *t = &f->term;
        const char *layer = rdma_term_layer_name(t->term_layer);
        const char *err = rdma_term_error_name(t->term_layer, t->term_etype, t->term_errcode);
        out_chr(o, ' ');
        out_str(o, layer ? layer : "reserved layer");
        out_str(o, ": ");
        out_str(o, err ? err : "reserved error");
    }
    if (f->present & RDMA_IW_ATOMIC_REQ) {
        const char *name = rdma_rdmap_atomic_op_name(f->atomic.add.opcode);
        out_chr(o, ' ');
        out_str(o, name ? name : "reserved");
        dec_member(o, "id", f->atomic.add.request_identifier);
        hex_member(o, "stag", f->atomic.add.remote_stag, 8);
        hex_member(o, "to", f->atomic.add.remote_tagged_offset, 16);
    }
    if (f->present & RDMA_IW_ATOMIC_RESP) {
        dec_member(o, "id", f->atomic_resp.original_request_identifier);
        dec_member(o, "value", f->atomic_resp.original_remote_data_value);
    }
    if (f->payload_len)
        dec_member(o, "payload", f->payload_len);
    if (f->nmarkers)
        dec_member(o, "markers", f->nmarkers);
    if (f->crc.present)
        out_str(o, f->crc.ok ? " CRC ok" : " CRC BAD");
}

size_t rdma_iwarp_format_summary(const struct rdma_pkt *pkt, const struct rdma_iwarp_seg *seg,
                                 const struct rdma_iwarp_pdu *pdu, char *buf, size_t cap)
{
    struct out o_ = {buf, cap, 0, false}, *o = &o_;
    endpoint(o, pkt, seg, true);
    out_str(o, " \xe2\x86\x92 "); /* U+2192 RIGHTWARDS ARROW */
    endpoint(o, pkt, seg, false);
    out_chr(o, ' ');
    out_str(o, rdma_proto_name((enum rdma_proto)pkt->proto));
    out_chr(o, ' ');
    if (pdu && pdu->kind == RDMA_IWARP_PDU_MPA) {
        summary_mpa(o, &pdu->mpa);
    } else if (pdu && pdu->kind == RDMA_IWARP_PDU_FPDU) {
        summary_fpdu(o, &pdu->fpdu);
    } else {
        static const char *const flag_names[] = {" FIN", " SYN", " RST"};
        out_str(o, "TCP");
        for (unsigned i = 0; i < 3; i++)
            if (seg->hdr.flags & (1u << i))
                out_str(o, flag_names[i]);
        dec_member(o, "seq", seg->hdr.seq_raw);
        dec_member(o, "ack", seg->hdr.ack_raw);
        if (seg->payload_len)
            dec_member(o, "payload", seg->payload_len);
    }
    if (seg->note) {
        out_str(o, " [");
        out_str(o, seg->note);
        out_chr(o, ']');
    }
    if (pdu && pdu->status != RDMA_OK && pdu->status != RDMA_BAD_CHECKSUM) {
        out_str(o, " [");
        out_str(o, rdma_status_name((enum rdma_status)pdu->status));
        if (pdu->reason) {
            out_str(o, ": ");
            out_str(o, pdu->reason);
        }
        out_chr(o, ']');
    }
    return o->full ? 0 : o->len;
}
