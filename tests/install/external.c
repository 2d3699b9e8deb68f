/* external.c - a program of a librdmacodec user, built against the
 * library only through pkg-config (the installed librdmacodec.pc, or
 * librdmacodec-uninstalled.pc in the build tree): decode a RoCEv2 RDMA
 * WRITE captured from Linux soft-RoCE, move it to the next PSN, encode it
 * again and check that the new frame decodes with the new PSN and a good
 * ICRC. Prints what it did; exits 0 when all holds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdma_codec.h>

/* frame 4 of pcaps/real/rxe-rocev2-read-write-ecn.pcap */
static const uint8_t frame[] = {
    0x52, 0x54, 0x00, 0xbf, 0x43, 0x69, 0x52, 0x54, 0x00, 0x0a, 0xaa, 0xba,
    0x08, 0x00, 0x45, 0x00, 0x00, 0x50, 0xdb, 0xa4, 0x40, 0x00, 0x40, 0x11,
    0x5b, 0x9e, 0xc0, 0xa8, 0x41, 0x05, 0xc0, 0xa8, 0x41, 0x04, 0xdf, 0x94,
    0x12, 0xb7, 0x00, 0x3c, 0x00, 0x00, 0x0a, 0x20, 0xff, 0xff, 0x00, 0x00,
    0x00, 0x11, 0x80, 0x8c, 0x84, 0xdd, 0x00, 0x00, 0xaa, 0xab, 0x09, 0xdd,
    0x50, 0x00, 0x00, 0x00, 0x02, 0xd5, 0x00, 0x00, 0x00, 0x12, 0x63, 0x6c,
    0x69, 0x65, 0x6e, 0x74, 0x2d, 0x77, 0x72, 0x6f, 0x74, 0x65, 0x2d, 0x74,
    0x68, 0x69, 0x73, 0x00, 0x00, 0x00, 0x96, 0x1a, 0x4b, 0xd6,
};

int main(void)
{
    struct rdma_decode_config cfg;
    struct rdma_pkt pkt, again;
    uint8_t out[256];
    size_t len;
    rdma_decode_config_init(&cfg);
    if (rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, frame, sizeof frame, sizeof frame, &pkt) != RDMA_OK ||
        !(pkt.present & RDMA_HDR_RETH)) {
        fprintf(stderr, "external: the captured frame did not decode\n");
        return 1;
    }
    printf("%s PSN %" PRIu32 " to 0x%" PRIx64 "\n", pkt.op->name, pkt.bth.psn, pkt.reth.va);
    pkt.bth.psn++;
    if (rdma_encode(&pkt, out, sizeof out, &len) != RDMA_OK ||
        rdma_decode(&cfg, RDMA_LINKTYPE_ETHERNET, out, len, len, &again) != RDMA_OK ||
        again.bth.psn != pkt.bth.psn || !again.icrc.present || again.icrc.value != again.icrc.computed) {
        fprintf(stderr, "external: the frame encoded again did not decode as written\n");
        return 1;
    }
    printf("encoded again: %zu bytes, PSN %" PRIu32 ", ICRC 0x%08" PRIx32 " ok\n", len, again.bth.psn,
           again.icrc.value);
    return 0;
}
