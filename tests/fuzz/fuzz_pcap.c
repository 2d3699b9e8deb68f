/* fuzz_pcap.c - libFuzzer target: a whole capture file, read by libpcap
 * from memory exactly as `rdmasim decode` reads files, every frame decoded
 * and printed. */
#include <pcap/pcap.h>
#include <stdio.h>

#include "rdma_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pc) {
        fclose(f);
        return 0;
    }
    struct rdma_decode_config cfg;
    rdma_decode_config_init(&cfg);
    static struct rdma_pkt pkt;
    static char text[16384];
    struct pcap_pkthdr *h;
    const u_char *frame;
    while (pcap_next_ex(pc, &h, &frame) == 1) {
        rdma_decode(&cfg, (unsigned)pcap_datalink(pc), frame, h->caplen, h->len, &pkt);
        rdma_format_json(&pkt, text, sizeof text);
        rdma_format_summary(&pkt, text, sizeof text);
    }
    pcap_close(pc); /* closes f too */
    return 0;
}
