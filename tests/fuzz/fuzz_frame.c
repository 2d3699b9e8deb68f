/* fuzz_frame.c - libFuzzer target: one frame of any supported link type
 * through the decoder (both of its paths, which must agree) and both
 * printers; a frame that decodes cleanly must encode, its encoding must
 * decode to the same headers, and encoded without its payload (where that
 * is supported) it must be the same bytes less the payload.
 *
 * Input: byte 0 picks the link type, byte 1 how many bytes the wire had
 * beyond the capture (0: none), the rest is the frame. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_paths.h"
#include "rdma_codec.h"

#define FUZZ_TARGET "fuzz_frame"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned linktype = fuzz_linktypes[data[0] % FUZZ_NLINKTYPES];
    size_t extra = data[1];
    const uint8_t *frame = data + 2;
    size_t len = size - 2;

    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    static struct rdma_pkt pkt, again, general;
    static char text[16384];
    /* the plain RoCEv2 frame's path of rdma_decode leaves the struct as
     * the general path does, filled alike before */
    memset(&pkt, 0, sizeof pkt);
    memset(&general, 0, sizeof general);
    enum rdma_status st = rdma_decode(&cfg, linktype, frame, len, len + extra, &pkt);
    require(rdma__decode_general(&cfg, linktype, frame, len, len + extra, &general) == st &&
                !memcmp(&pkt, &general, sizeof pkt),
            "both paths of the decoder make the same struct");
    require(rdma_format_json(&pkt, text, sizeof text) > 0, "JSON fits its buffer");
    require(rdma_format_summary(&pkt, text, sizeof text) > 0, "summary fits its buffer");
    if (st != RDMA_OK || !(pkt.present & RDMA_HDR_BTH) || extra)
        return 0;

    static uint8_t out[65536 + 512];
    size_t out_len;
    require(rdma_encode(&pkt, out, sizeof out, &out_len) == RDMA_OK, "a clean frame encodes");
    require(rdma_decode(&cfg, linktype, out, out_len, out_len, &again) == RDMA_OK,
            "an encoded frame decodes cleanly");
    require(again.present == pkt.present, "same headers after a round trip");
    /* The pad count is recomputed from the payload length; all else stays. */
    bool same = again.bth.padcnt == (4 - (pkt.payload_len & 3)) % 4;
#define SAME_FIELD(name, type, byte, shift, width) same &= again.bth.name == pkt.bth.name || !strcmp(#name, "padcnt");
#define NO_ARRAYS(name, byte, len, kind)
    RDMA_BTH_FIELDS(SAME_FIELD, NO_ARRAYS)
    require(same, "same BTH after a round trip");
    require(again.payload_len == pkt.payload_len &&
                !memcmp(again.payload, pkt.payload, pkt.captured_payload_len),
            "same payload after a round trip");

    static uint8_t held[65536 + 512];
    size_t held_len, at;
    struct rdma_crc32_part part;
    rdma_crc32_part_init(&part, pkt.payload, pkt.payload_len);
    if (rdma_encode_without_payload(&pkt, &part, held, sizeof held, &held_len, &at) != RDMA_OK)
        return 0;
    require(held_len + pkt.payload_len == out_len && !memcmp(held, out, at) &&
                !memcmp(held + at, out + at + pkt.payload_len, held_len - at),
            "a frame encoded without its payload is the frame less it");
    return 0;
}
