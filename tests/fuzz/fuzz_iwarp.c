/* fuzz_iwarp.c - libFuzzer target: a sequence of TCP segments through the
 * iWARP stream reassembler, each frame decoded, fed and its PDUs printed
 * exactly as `rdmasim decode` does (src/decode.c), then the end of the
 * capture.
 *
 * Input: segments, each a 7-byte header and its payload:
 *   byte 0     bit 0 direction, bits 1-2 connection (bit 2: over IPv6),
 *              bit 3 SYN, bit 4 FIN, bit 5 RST, bit 6 the capture holds
 *              only part of the frame
 *   bytes 1-4  sequence number, as an offset from where the direction's
 *              previous segment ended (0: in order)
 *   bytes 5-6  payload length (cut to what the input still holds)
 * Properties: every printed line fits the line buffer rdmasim decode uses,
 * and a PDU never names a frame that has not been fed yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_iwarp.h"

#define FUZZ_TARGET "fuzz_iwarp"
#include "fuzz_common.h"

#define SEG_HDR 7
#define LINE_MAX_BYTES 16384 /* src/decode.c */
#define MAX_PAYLOAD (65535 - 40 - 20)

/* Each direction starts just below a 2^31 or 2^32 boundary, so sequence
 * number wrap is reached within a few segments. */
static uint32_t first_seq(unsigned dir) { return dir ? 0x7fffff00u : 0xffffff00u; }

static void build(unsigned conn, unsigned dir, struct rdma_pkt *tmpl)
{
    memset(tmpl, 0, sizeof *tmpl);
    tmpl->linktype = RDMA_LINKTYPE_ETHERNET;
    uint8_t a = (uint8_t)(1 + dir), b = (uint8_t)(2 - dir);
    memcpy(tmpl->eth.src, (uint8_t[6]){2, 0, 0, 0, conn, a}, 6);
    memcpy(tmpl->eth.dst, (uint8_t[6]){2, 0, 0, 0, conn, b}, 6);
    if (conn & 2) {
        tmpl->present = RDMA_HDR_ETH | RDMA_HDR_IPV6;
        tmpl->ipv6.hlim = 64;
        tmpl->ipv6.src[0] = tmpl->ipv6.dst[0] = 0xfd;
        tmpl->ipv6.src[15] = a;
        tmpl->ipv6.dst[15] = b;
    } else {
        tmpl->present = RDMA_HDR_ETH | RDMA_HDR_IP;
        tmpl->ip.ttl = 64;
        memcpy(tmpl->ip.src, (uint8_t[4]){10, 0, conn, a}, 4);
        memcpy(tmpl->ip.dst, (uint8_t[4]){10, 0, conn, b}, 4);
    }
}

/* One line per PDU the frame completes, as decode_file() prints them; a
 * frame of no iWARP connection gets the plain printers. */
static void print(const struct rdma_pkt *pkt, const struct rdma_iwarp_seg *seg,
                  const struct rdma_iwarp_pdu *pdu, char *line)
{
    size_t cap = LINE_MAX_BYTES - 256, n = rdma_format_json(pkt, line, cap);
    require(n > 0, "frame JSON fits the line");
    if (!pdu && !seg->iwarp) {
        require(rdma_format_summary(pkt, line, cap) > 0, "summary fits the line");
        return;
    }
    require(rdma_iwarp_format_json(seg, pdu, line + n, cap - n) > 0, "iWARP JSON fits the line");
    require(rdma_iwarp_format_summary(pkt, seg, pdu, line, cap) > 0, "iWARP summary fits the line");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t frame[65536 + 64];
    static char line[LINE_MAX_BYTES];
    static struct rdma_pkt pkt, tmpl;
    static struct rdma_iwarp_pdu pdu;
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    struct rdma_iwarp_stream *s = rdma_iwarp_stream_new();
    if (!s)
        return 0;
    uint32_t next[4][2];
    for (unsigned c = 0; c < 4; c++)
        for (unsigned d = 0; d < 2; d++)
            next[c][d] = first_seq(d);
    uint64_t frame_no = 0;
    size_t off = 0;
    while (size - off >= SEG_HDR) {
        const uint8_t *h = data + off;
        unsigned dir = h[0] & 1, conn = (h[0] >> 1) & 3;
        uint32_t delta = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
        size_t len = (size_t)h[5] << 8 | h[6];
        off += SEG_HDR;
        if (len > size - off)
            len = size - off;
        if (len > MAX_PAYLOAD)
            len = MAX_PAYLOAD;
        struct rdma_tcp tcp = {
            .srcport = dir ? 4000 : (uint16_t)(50000 + conn),
            .dstport = dir ? (uint16_t)(50000 + conn) : 4000,
            .seq_raw = next[conn][dir] + delta,
            .flags = (uint16_t)(RDMA_TCP_ACK | (h[0] & 0x08 ? RDMA_TCP_SYN : 0) |
                                (h[0] & 0x10 ? RDMA_TCP_FIN : 0) | (h[0] & 0x20 ? RDMA_TCP_RST : 0)),
            .window_size_value = 65535,
        };
        next[conn][dir] = tcp.seq_raw + (uint32_t)len + !!(tcp.flags & RDMA_TCP_SYN) +
                          !!(tcp.flags & RDMA_TCP_FIN);
        build(conn, dir, &tmpl);
        size_t flen;
        if (rdma_tcp_encode(&tmpl, &tcp, data + off, len, frame, sizeof frame, &flen) != RDMA_OK)
            abort(); /* the payload bound above keeps every segment encodable */
        off += len;
        size_t caplen = h[0] & 0x40 ? flen / 2 : flen;
        frame_no++;
        rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, caplen, flen, &pkt);
        struct rdma_iwarp_seg seg;
        rdma_iwarp_feed(s, &pkt, frame, frame_no, &seg);
        bool any = false;
        while (rdma_iwarp_next(s, &pdu)) {
            require(pdu.frame >= 1 && pdu.frame <= frame_no, "a PDU begins in a frame fed");
            print(&pkt, &seg, &pdu, line);
            any = true;
        }
        if (!any)
            print(&pkt, &seg, NULL, line);
    }
    while (rdma_iwarp_finish(s, &pdu))
        require(pdu.frame >= 1 && pdu.frame <= frame_no && pdu.reason, "an end-of-capture error names its frame");
    rdma_iwarp_stream_free(s);
    return 0;
}
