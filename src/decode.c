/* decode.c - `rdmasim decode`: every frame of pcap/pcapng captures as a line
 * of text or a JSON object (NDJSON), streaming through libpcap. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rdma_codec.h"
#include "rdma_iwarp.h"

#define OUT_BUFFER (1u << 20)
#define LINE_MAX_BYTES 16384
#define READ_BUFFER (64u << 10)

struct decode_opts {
    bool json;
    bool strict;
    struct rdma_decode_config cfg;
};

struct decode_stats {
    uint64_t frames;
    uint64_t rdma;
    uint64_t bad;
};

/* Output is assembled in a large buffer and written in big blocks: at
 * millions of lines a second, stdio's per-call locking would dominate. */
struct sink {
    char *buf;
    size_t len;
    bool failed;
};

static void sink_flush(struct sink *s)
{
    if (s->len && fwrite(s->buf, 1, s->len, stdout) != s->len)
        s->failed = true;
    s->len = 0;
}

static char *sink_line(struct sink *s)
{
    if (OUT_BUFFER - s->len < LINE_MAX_BYTES)
        sink_flush(s);
    return s->buf + s->len;
}

static size_t put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

/* seconds.nanoseconds, nine fraction digits */
static size_t put_time(char *p, int64_t sec, uint32_t nsec)
{
    size_t n = 0;
    if (sec < 0) {
        p[n++] = '-';
        sec = -sec;
    }
    n += put_u64(p + n, (uint64_t)sec);
    p[n++] = '.';
    for (int i = 8; i >= 0; i--) {
        p[n + (size_t)i] = (char)('0' + nsec % 10);
        nsec /= 10;
    }
    return n + 9;
}

static size_t put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return n;
}

/* A frame of an iWARP connection: its TCP segment and the PDU it completes. */
struct iwarp_line {
    const struct rdma_iwarp_seg *seg;
    const struct rdma_iwarp_pdu *pdu; /* NULL: the frame completes none */
    unsigned index;                   /* of the PDU among those the frame completes */
};

static size_t json_line(char *p, const char *file, uint64_t frame, const struct pcap_pkthdr *h,
                        const struct rdma_pkt *pkt, const struct iwarp_line *iw)
{
    size_t n = put_str(p, "{\"frame\":");
    n += put_u64(p + n, frame);
    if (file) {
        n += put_str(p + n, ",\"file\":\"");
        for (const char *c = file; *c && n < 4096; c++) {
            if (*c == '"' || *c == '\\')
                p[n++] = '\\';
            if ((unsigned char)*c < 0x20)
                continue;
            p[n++] = *c;
        }
        p[n++] = '"';
    }
    n += put_str(p + n, ",\"ts\":\"");
    n += put_time(p + n, h->ts.tv_sec, (uint32_t)h->ts.tv_usec);
    n += put_str(p + n, "\",\"len\":");
    n += put_u64(p + n, h->len);
    n += put_str(p + n, ",\"caplen\":");
    n += put_u64(p + n, h->caplen);
    p[n++] = ',';
    size_t m = rdma_format_json(pkt, p + n, LINE_MAX_BYTES - n - 2);
    if (!m)
        n--; /* cannot happen with the line bound above; keep the JSON valid */
    n += m;
    if (iw && iw->pdu) {
        n += put_str(p + n, ",\"fpdu\":");
        n += put_u64(p + n, iw->index);
    }
    if (iw) {
        p[n++] = ',';
        m = rdma_iwarp_format_json(iw->seg, iw->pdu, p + n, LINE_MAX_BYTES - n - 2);
        if (m)
            n += m;
        else
            n--; /* as above */
    }
    p[n++] = '}';
    p[n++] = '\n';
    return n;
}

static size_t text_line(char *p, uint64_t frame, const struct pcap_pkthdr *h,
                        const struct timeval *first, const struct rdma_pkt *pkt,
                        const struct iwarp_line *iw)
{
    int64_t sec = h->ts.tv_sec - first->tv_sec;
    int64_t nsec = (int64_t)h->ts.tv_usec - first->tv_usec;
    if (nsec < 0) {
        nsec += 1000000000;
        sec--;
    }
    char num[24];
    size_t k = put_u64(num, frame), n = 0;
    for (size_t i = k; i < 6; i++)
        p[n++] = ' ';
    memcpy(p + n, num, k);
    n += k;
    p[n++] = ' ';
    n += put_time(p + n, sec, (uint32_t)nsec);
    p[n++] = ' ';
    n += iw ? rdma_iwarp_format_summary(pkt, iw->seg, iw->pdu, p + n, LINE_MAX_BYTES - n - 32)
            : rdma_format_summary(pkt, p + n, LINE_MAX_BYTES - n - 32);
    n += put_str(p + n, " len=");
    n += put_u64(p + n, h->len);
    p[n++] = '\n';
    return n;
}

static bool frame_is_bad(const struct rdma_pkt *pkt)
{
    return pkt->status != RDMA_OK && pkt->status != RDMA_UNSUPPORTED;
}

static bool pdu_is_bad(const struct rdma_iwarp_pdu *pdu)
{
    return pdu->status != RDMA_OK && pdu->status != RDMA_UNSUPPORTED;
}

/* A problem found at the end of a capture, for the frame it began in. */
static size_t end_line(char *p, bool json, uint64_t frame, const struct rdma_iwarp_pdu *pdu)
{
    size_t n = put_str(p, json ? "{\"frame\":" : "");
    if (json) {
        n += put_u64(p + n, frame);
        n += put_str(p + n, ",\"proto\":\"iWARP\",\"error\":\"");
    } else {
        char num[24];
        size_t k = put_u64(num, frame);
        for (size_t i = k; i < 6; i++)
            p[n++] = ' ';
        memcpy(p + n, num, k);
        n += k;
        n += put_str(p + n, " iWARP [");
    }
    n += put_str(p + n, rdma_status_name((enum rdma_status)pdu->status));
    n += put_str(p + n, ": ");
    n += put_str(p + n, pdu->reason);
    n += put_str(p + n, json ? "\"}\n" : "]\n");
    return n;
}

/* libpcap reads a capture through stdio, whose buffer is one 4 KiB page
 * unless it is handed a larger one: at a few hundred bytes a frame, that is
 * a read() every ten frames. Standard input ("-") and files fopen() refuses
 * are left to libpcap, which opens and reports them as it always does. */
static pcap_t *open_capture(const char *path, char *iobuf, size_t iobuf_len, char *errbuf)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
    if (!f)
        return pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    setvbuf(f, iobuf, _IOFBF, iobuf_len);
    pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pc)
        fclose(f);
    return pc;
}

/* Decode one capture. Returns false if it could not be read to its end. */
static bool decode_file(const char *path, bool name_files, const struct decode_opts *opts,
                        struct sink *out, struct decode_stats *st)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    char iobuf[READ_BUFFER]; /* must outlive pc, which reads through it */
    pcap_t *pc = open_capture(path, iobuf, sizeof iobuf, errbuf);
    if (!pc) {
        fprintf(stderr, "rdmasim decode: %s: %s\n", path, errbuf);
        return false;
    }
    int linktype = pcap_datalink(pc);
    if (!rdma_linktype_supported((unsigned)linktype)) {
        const char *name = pcap_datalink_val_to_name(linktype);
        fprintf(stderr,
                "rdmasim decode: %s: link type %d (%s) is not supported; supported are "
                "EN10MB, LINUX_SLL, LINUX_SLL2, INFINIBAND and ERF\n",
                path, linktype, name ? name : "unknown");
        pcap_close(pc);
        return false;
    }
    struct rdma_iwarp_stream *iwarp = rdma_iwarp_stream_new();
    if (!iwarp) {
        fprintf(stderr, "rdmasim decode: out of memory\n");
        pcap_close(pc);
        return false;
    }
    struct rdma_iwarp_seg seg;
    struct rdma_iwarp_pdu pdu;
    struct rdma_pkt pkt;
    struct pcap_pkthdr *h;
    const u_char *data;
    struct timeval first = {0, 0};
    uint64_t frame = 0;
    int rc;
    if (name_files && !opts->json) {
        char *p = sink_line(out);
        out->len += (size_t)snprintf(p, LINE_MAX_BYTES, "==> %s <==\n", path);
    }
    while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
        frame++;
        if (frame == 1)
            first = h->ts;
        rdma_decode(&opts->cfg, (unsigned)linktype, data, h->caplen, h->len, &pkt);
        rdma_iwarp_feed(iwarp, &pkt, data, frame, &seg);
        bool bad = frame_is_bad(&pkt);
        struct iwarp_line iw = {&seg, NULL, 0};
        /* One line per PDU the frame completes; one line if it completes none. */
        while (true) {
            bool more = rdma_iwarp_next(iwarp, &pdu);
            if (!more && iw.index)
                break;
            iw.pdu = more ? &pdu : NULL;
            bad |= more && pdu_is_bad(&pdu);
            const struct iwarp_line *line = more || seg.iwarp ? &iw : NULL;
            char *p = sink_line(out);
            out->len += opts->json ? json_line(p, name_files ? path : NULL, frame, h, &pkt, line)
                                   : text_line(p, frame, h, &first, &pkt, line);
            if (!more)
                break;
            iw.index++;
        }
        st->frames++;
        if (pkt.proto != RDMA_PROTO_OTHER)
            st->rdma++;
        if (bad)
            st->bad++;
    }
    while (rdma_iwarp_finish(iwarp, &pdu)) {
        char *p = sink_line(out);
        out->len += end_line(p, opts->json, pdu.frame, &pdu);
        st->bad += pdu_is_bad(&pdu);
    }
    rdma_iwarp_stream_free(iwarp);
    bool complete = rc != PCAP_ERROR;
    if (!complete) {
        /* libpcap stops at a damaged record; the frames before it are out. */
        sink_flush(out);
        fprintf(stderr, "rdmasim decode: %s: frame %" PRIu64 ": %s\n", path, frame + 1,
                pcap_geterr(pc));
    }
    pcap_close(pc);
    return complete;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdmasim decode [--json] [--strict] [--rocev2-port PORT] FILE...\n"
            "\n"
            "Print every frame of pcap or pcapng captures: frame number, time, source\n"
            "and destination (IP, GID or LID), protocol, opcode, destination QP, PSN,\n"
            "CRC status and length. Non-RDMA frames are listed briefly. A truncated or\n"
            "malformed frame is reported on its line and decoding goes on.\n"
            "iWARP (MPA/DDP/RDMAP over TCP) is reassembled per connection: one line per\n"
            "FPDU, with the frame that completes it; a connection joined without its MPA\n"
            "Request/Reply is decoded from its markers or reported once and skipped.\n"
            "\n"
            "  --json             one JSON object per frame (NDJSON); header objects use\n"
            "                     Wireshark's field names (bth.psn, reth.dmalen, ddp.stag,\n"
            "                     rdmap.opcode, ...); \"fpdu\" numbers the FPDUs of a frame\n"
            "  --strict           exit 1 if any frame is truncated, malformed or fails a CRC\n"
            "  --rocev2-port PORT UDP destination port of RoCEv2 (default 4791)\n"
            "  -h, --help         this text\n"
            "\n"
            "Link types: Ethernet (with 802.1Q/802.1ad tags), Linux cooked (SLL, SLL2),\n"
            "raw InfiniBand, ERF carrying InfiniBand.\n"
            "Exit status: 0 files read, 1 bad frames with --strict, 2 usage error or a\n"
            "file that could not be read to its end (it is named, with the frame).\n");
}

int cmd_decode(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},
        {"strict", no_argument, 0, 's'},
        {"rocev2-port", required_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct decode_opts opts = {0};
    rdma_decode_config_init(&opts.cfg);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            opts.json = true;
            break;
        case 's':
            opts.strict = true;
            break;
        case 'p': {
            char *end;
            errno = 0;
            unsigned long port = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || port == 0 || port > 65535) {
                fprintf(stderr, "rdmasim decode: --rocev2-port: '%s' is not a port number (1-65535)\n", optarg);
                return EXIT_USAGE;
            }
            opts.cfg.rocev2_port = (uint16_t)port;
            break;
        }
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "rdmasim decode: no capture file given\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    struct sink out = {malloc(OUT_BUFFER), 0, false};
    if (!out.buf) {
        fprintf(stderr, "rdmasim decode: out of memory\n");
        return EXIT_USAGE;
    }
    struct decode_stats st = {0};
    bool unreadable = false;
    bool many = argc - optind > 1;
    for (int i = optind; i < argc; i++)
        if (!decode_file(argv[i], many, &opts, &out, &st))
            unreadable = true;
    sink_flush(&out);
    free(out.buf);
    if (fflush(stdout) || out.failed) {
        fprintf(stderr, "rdmasim decode: writing output: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    if (st.bad)
        fprintf(stderr, "rdmasim decode: %" PRIu64 " of %" PRIu64 " frames truncated, malformed or with a bad CRC\n",
                st.bad, st.frames);
    if (unreadable)
        return EXIT_USAGE;
    return opts.strict && st.bad ? EXIT_BAD_FRAMES : EXIT_OK;
}
