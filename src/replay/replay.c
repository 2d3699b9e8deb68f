/* replay.c - `rdmasim replay`: a capture to conversations, messages,
 * latencies, rates and anomalies, read once, streaming (capture/), each
 * frame decoded and handed to the analysis (replay/); what it finds is
 * written as text or JSON (report_text.c, report_json.c) and, with
 * --timeline, as CSV (timeline_csv.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "../cli.h"
#include "report.h"

#define DEFAULT_INTERVAL_NS 1000000u       /* 1 ms */
#define DEFAULT_LINK_BPS 100000000000u     /* 100 Gb/s */
#define DEFAULT_TOP 10u
#define DEFAULT_TIMELINE_MAX ((uint64_t)1 << 30) /* 1 GiB */
#define OUT_BUFFER (1u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdmasim replay [OPTIONS] FILE\n"
            "\n"
            "Read a pcap or pcapng capture of RoCEv1, RoCEv2, InfiniBand or iWARP traffic\n"
            "once, streaming, and report:\n"
            "  conversations  the queue pairs that talked: endpoints (IP, GID or LID) and\n"
            "                 QPNs, both directions joined through CM REQ/REP when the\n"
            "                 capture has them, else by matching acknowledgements to\n"
            "                 requests; iWARP: each TCP connection from its MPA Request\n"
            "                 on (address:port); packets, goodput, packet rate, duration\n"
            "  messages       each SEND, RDMA WRITE, RDMA READ and atomic (with or\n"
            "                 without immediate/invalidate): frames, PSNs, bytes,\n"
            "                 packets, remote address and key, and latency from the\n"
            "                 first request packet to the ACK or last READ response\n"
            "                 that completes it; iWARP: each RDMAP Write, Read, Send\n"
            "                 (with Invalidate, with SE), Immediate Data and Atomic\n"
            "                 with its DDP segments, STag and tagged offset or queue and\n"
            "                 MSN, a Read's latency to the last Read Response segment\n"
            "  anomalies      PSN gaps, duplicates, retransmissions and go-back-N\n"
            "                 episodes, NAKs by code, RNR NAKs with their timer,\n"
            "                 out-of-order responses, responses without a request,\n"
            "                 messages unacknowledged at the end of the capture, bad\n"
            "                 ICRC/VCRC, bad frames, ECN-CE and FECN marks, CNPs per\n"
            "                 QP, CM REJ, and PFC/PAUSE frames per priority with the time\n"
            "                 paused; iWARP Terminates (layer, error type and code), bad\n"
            "                 MPA CRCs, TCP retransmissions, segments out of order and\n"
            "                 capture gaps, MPA rejects, incomplete messages and Read or\n"
            "                 Atomic Requests unanswered; each with the frame numbers\n"
            "                 involved\n"
            "\n"
            "  --json             one JSON document instead of the text report; it lists\n"
            "                     every message and every row the text report cuts\n"
            "  --timeline CSV     also write per-interval rates: one row per interval for\n"
            "                     each flow with packets in it (goodput, packet rate,\n"
            "                     CNPs, ECN-CE, NAKs, retransmissions) and for each PFC\n"
            "                     priority paused in it; scripts/plot_timeline.py plots it.\n"
            "                     Written as CSV.tmp and renamed to CSV once the capture\n"
            "                     is read to its end; removed on an error or when the\n"
            "                     run is interrupted (SIGINT, SIGTERM, SIGHUP)\n"
            "  --interval DUR     timeline interval (default 1ms; a number and its unit,\n"
            "                     ns, us, ms, s or min, as in a sim configuration: 100us)\n"
            "  --timeline-max SIZE  the most the timeline may take (default 1GiB): an\n"
            "                     --interval giving more than SIZE/48 intervals over the\n"
            "                     capture's span (first to latest timestamp, read in a\n"
            "                     pass over the records first) is refused up front; a\n"
            "                     run whose timeline still grows past it (a long PFC\n"
            "                     pause at a low --link-speed) stops with an error;\n"
            "                     neither leaves a CSV\n"
            "  --link-speed RATE  link speed for PFC pause durations, since a pause\n"
            "                     quantum is 512 bit times (default 100Gbps; a number\n"
            "                     and its unit, bps, Kbps, Mbps, Gbps or Tbps: 25Gbps)\n"
            "  --top N            rows per table in the text report (default 10; the\n"
            "                     anomaly table shows twice as many)\n"
            "  --rocev2-port PORT UDP destination port of RoCEv2 (default 4791)\n"
            "  --max-memory SIZE  memory for the analysis (default 1GiB; e.g. 512MiB,\n"
            "                     4GiB): about 4 KiB per flow (a QP's or TCP connection's\n"
            "                     direction). Past it, new flows are not followed: the\n"
            "                     report covers the others and says how many frames\n"
            "                     were left out\n"
            "  --max-connections N  iWARP: TCP connections reassembled at once (default\n"
            "                     as many as half the flows --max-memory holds); past\n"
            "                     it the least recently active one ages out\n"
            "  --idle-timeout DUR iWARP: a TCP connection without a segment for longer\n"
            "                     than DUR of capture time ages out (default 10min;\n"
            "                     units ns, us, ms, s, min; or never); an iWARP\n"
            "                     connection that ages out is a bad-frame anomaly\n"
            "  -h, --help         this text\n"
            "\n"
            "Link types: Ethernet (with 802.1Q/802.1ad tags), Linux cooked (SLL, SLL2),\n"
            "raw InfiniBand, ERF carrying InfiniBand. Times are in nanoseconds from\n"
            "the first frame.\n"
            "Exit status: 0 report written; 2 usage error, unreadable file, out of\n"
            "memory, or a file damaged part-way (named, with the frame; the report\n"
            "covers the frames before the damage).\n");
}

/* A size (cli_parse_size: "512MiB", "4GiB", "1000000") room for one flow at least. */
static bool parse_size(const char *s, uint64_t *bytes)
{
    return cli_parse_size(s, bytes) && *bytes >= RDMA_REPLAY_FLOW_COST;
}

static int parse_opts(int argc, char **argv, struct replay_opts *o)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},
        {"timeline", required_argument, 0, 't'},
        {"interval", required_argument, 0, 'i'},
        {"link-speed", required_argument, 0, 'l'},
        {"top", required_argument, 0, 'n'},
        {"rocev2-port", required_argument, 0, 'p'},
        {"max-memory", required_argument, 0, 'm'},
        {"timeline-max", required_argument, 0, 'T'},
        {"max-connections", required_argument, 0, 'C'},
        {"idle-timeout", required_argument, 0, 'I'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    const char *err;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end;
        unsigned long v;
        switch (c) {
        case 'j':
            o->json = true;
            break;
        case 't':
            o->timeline = optarg;
            break;
        case 'i':
            if ((err = cli_parse_duration(optarg, &o->interval_ns)))
                return cli_usage_error("replay", "--interval '%s': %s", optarg, err);
            break;
        case 'l':
            if ((err = cli_parse_rate(optarg, &o->link_bps)))
                return cli_usage_error("replay", "--link-speed '%s': %s", optarg, err);
            if (o->link_bps > 1000000000000000u)
                return cli_usage_error("replay", "--link-speed '%s': above 1000Tbps", optarg);
            break;
        case 'm':
            if (!parse_size(optarg, &o->max_memory)) {
                fprintf(stderr, "rdmasim replay: --max-memory: '%s' is not a size of at least 4KiB (e.g. 512MiB, 4GiB)\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'T':
            if (!parse_size(optarg, &o->timeline_max)) {
                fprintf(stderr, "rdmasim replay: --timeline-max: '%s' is not a size of at least 4KiB (e.g. 64MiB)\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'C':
            if (!cli_parse_count(optarg, 1, (uint64_t)1 << 32, &o->max_conns)) {
                fprintf(stderr, "rdmasim replay: --max-connections: '%s' is not a count (1-4294967296)\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'I':
            if (!strcmp(optarg, "never"))
                o->idle_ns = RDMA_IWARP_NEVER;
            else if ((err = cli_parse_duration(optarg, &o->idle_ns)))
                return cli_usage_error("replay", "--idle-timeout '%s': %s, or never", optarg, err);
            break;
        case 'n':
        case 'p':
            errno = 0;
            v = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || *optarg == '-' || (c == 'p' && (v == 0 || v > 65535)) || v > 1000000) {
                fprintf(stderr, "rdmasim replay: --%s: '%s' is not %s\n", c == 'p' ? "rocev2-port" : "top", optarg,
                        c == 'p' ? "a port number (1-65535)" : "a row count (0-1000000)");
                return EXIT_USAGE;
            }
            if (c == 'p')
                o->cfg.rocev2_port = (uint16_t)v;
            else
                o->top = (uint32_t)v;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            return cli_bad_option("replay", c, optopt, argv, optind);
        }
    }
    if (optind >= argc)
        return cli_usage_error("replay", "no capture file given");
    if (argc - optind > 1) {
        fprintf(stderr, "rdmasim replay: one capture file at a time\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* Every frame of the capture, decoded, into the analysis. */
static void read_capture(struct report *r, struct rdma_capture *cap)
{
    struct rdma_pkt pkt;
    struct rdma_capture_frame fr;
    int rc;
    unsigned linktype = (unsigned)cap->linktype;
    while ((rc = rdma_capture_next(cap, &fr)) == 1) {
        enum rdma_status st = rdma_decode(&r->opts->cfg, linktype, fr.data, fr.caplen, fr.len, &pkt);
        if (!rdma_replay_frame(r->an, fr.sec, fr.nsec, &pkt, st, fr.data)) {
            r->oom = true;
            return;
        }
    }
    if (rc < 0) {
        r->damaged = true;
        fprintf(stderr, "rdmasim replay: %s: frame %" PRIu64 ": %s\n", r->path,
                rdma_replay_totals(r->an)->frames + 1, cap->error);
    }
}

/* A message is done: JSON writes it at once, the text report keeps the
 * slowest. */
static bool on_message(void *ctx, const struct rdma_replay *an, const struct rdma_replay_flow *f,
                       const struct rdma_replay_msg *m)
{
    struct report *r = ctx;
    (void)an;
    if (r->opts->json)
        report_json_message(r, f, m);
    else if (m->has_latency)
        slow_offer(r, m, f->id - 1);
    return !r->oom;
}

/* PATH.tmp, created so that nobody can redirect it: O_EXCL|O_NOFOLLOW, and
 * locked (flock) while this run writes it. What is already there is
 * removed when it is a symbolic link or a file no running replay holds (left
 * by a run that was killed); a file another run holds is refused (EBUSY). */
static int create_tmp(const char *tmp)
{
    for (int tries = 0; tries < 3; tries++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                return fd;
            close(fd);
            errno = EBUSY;
            return -1;
        }
        if (errno != EEXIST)
            return -1;
        struct stat st;
        if (lstat(tmp, &st))
            continue;
        if (S_ISREG(st.st_mode)) {
            int old = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            bool busy = old >= 0 && flock(old, LOCK_EX | LOCK_NB) != 0;
            if (old >= 0)
                close(old);
            if (busy) {
                errno = EBUSY;
                return -1;
            }
        } else if (!S_ISLNK(st.st_mode)) {
            return -1; /* errno EEXIST: a directory or some other thing */
        }
        unlink(tmp);
    }
    errno = EEXIST;
    return -1;
}

/* The timeline goes to PATH.tmp (*tmp), renamed into place by
 * timeline_close() once complete, so that an interrupted or failed run
 * leaves no CSV that looks finished; a path that exists and is not a
 * regular file (/dev/stdout, a pipe) is written directly (*tmp NULL). */
static FILE *timeline_open(const char *path, char **tmp)
{
    struct stat st;
    *tmp = NULL;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return fopen(path, "w");
    size_t n = strlen(path) + sizeof ".tmp";
    if (!(*tmp = malloc(n)))
        return NULL;
    snprintf(*tmp, n, "%s.tmp", path);
    int fd = create_tmp(*tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        close(fd);
        unlink(*tmp);
    }
    if (!f) {
        int e = errno;
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return f;
}

/* The timeline's temporary name while it is being written. A handler
 * reaches the rest of the program only through an object of static storage
 * duration. */
static const char *volatile timeline_unfinished;

/* SIGINT, SIGTERM or SIGHUP while the timeline is written: remove it, then
 * end as the signal asks (the handler was reset by SA_RESETHAND). */
static void on_signal(int sig)
{
    const char *tmp = timeline_unfinished;
    if (tmp)
        unlink(tmp);
    raise(sig);
}

static void remove_on_signal(const char *tmp)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    timeline_unfinished = tmp;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* a signal ignored from the start stays ignored (nohup) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Close the timeline; keep it (rename into place) only if complete is
 * true and it was written without error. Returns false on a write error. */
static bool timeline_close(FILE *f, char *tmp, const char *path, bool complete)
{
    timeline_unfinished = NULL;
    bool ok = !ferror(f);
    if (fclose(f))
        ok = false;
    if (!ok)
        fprintf(stderr, "rdmasim replay: %s: %s\n", path, strerror(errno));
    if (tmp && ok && complete && rename(tmp, path)) {
        fprintf(stderr, "rdmasim replay: %s: %s\n", path, strerror(errno));
        ok = false;
    }
    if (tmp && (!ok || !complete))
        remove(tmp);
    free(tmp);
    return ok;
}

/* The smallest a timeline row can be (a PFC row with one-digit numbers is
 * 68 octets, a flow row between two IPv4 addresses more). */
#define TIMELINE_ROW_MIN 48u

/* Refuse up front a timeline that --timeline-max cannot hold: the rule is
 * one row per --interval over the capture's span, from its first timestamp
 * to its latest, read in a pass over the records alone (nothing decoded).
 * Standard input and other files that cannot be read twice are not checked
 * here; the limit is enforced while writing in any case. */
static bool timeline_fits(const struct replay_opts *o, const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return true;
    char errbuf[PCAP_ERRBUF_SIZE];
    struct rdma_capture cap;
    if (!rdma_capture_open(&cap, path, errbuf, sizeof errbuf))
        return true; /* the main pass says why */
    struct rdma_capture_frame fr;
    bool any = false;
    int64_t t0 = 0, last = 0;
    while (rdma_capture_next(&cap, &fr) == 1) {
        int64_t t = fr.sec * 1000000000 + fr.nsec; /* seconds are 32 bits wide: no overflow */
        if (!any)
            t0 = last = t;
        any = true;
        if (t > last)
            last = t;
    }
    rdma_capture_close(&cap);
    uint64_t span = (uint64_t)(last - t0), intervals = span / o->interval_ns + 1;
    if (intervals <= o->timeline_max / TIMELINE_ROW_MIN)
        return true;
    fprintf(stderr,
            "rdmasim replay: %s: the capture spans %" PRIu64 " ns, %" PRIu64 " intervals of %" PRIu64
            " ns: a timeline of one row per interval would take more than --timeline-max (%" PRIu64
            " bytes); give a longer --interval\n",
            o->timeline, span, intervals, o->interval_ns, o->timeline_max);
    return false;
}

int cmd_replay(int argc, char **argv)
{
    struct replay_opts opts = {.interval_ns = DEFAULT_INTERVAL_NS, .link_bps = DEFAULT_LINK_BPS, .top = DEFAULT_TOP,
                               .timeline_max = DEFAULT_TIMELINE_MAX};
    rdma_decode_config_init(&opts.cfg);
    int rc = parse_opts(argc, argv, &opts);
    if (rc >= 0)
        return rc;
    struct report r = {.opts = &opts, .path = argv[optind], .out = stdout};
    char errbuf[PCAP_ERRBUF_SIZE];
    struct rdma_capture cap;
    if (!rdma_capture_open(&cap, r.path, errbuf, sizeof errbuf)) {
        fprintf(stderr, "rdmasim replay: %s: %s\n", r.path, errbuf);
        return EXIT_USAGE;
    }
    if (!rdma_linktype_supported((unsigned)cap.linktype)) {
        const char *name = pcap_datalink_val_to_name(cap.linktype);
        fprintf(stderr,
                "rdmasim replay: %s: link type %d (%s) is not supported; supported are "
                "EN10MB, LINUX_SLL, LINUX_SLL2, INFINIBAND and ERF\n",
                r.path, cap.linktype, name ? name : "unknown");
        rdma_capture_close(&cap);
        return EXIT_USAGE;
    }
    if (opts.timeline && !timeline_fits(&opts, r.path)) {
        rdma_capture_close(&cap);
        return EXIT_USAGE;
    }
    char *timeline_tmp = NULL;
    if (opts.timeline && !(r.timeline = timeline_open(opts.timeline, &timeline_tmp))) {
        if (errno == EBUSY)
            fprintf(stderr, "rdmasim replay: %s: another run is writing it\n", opts.timeline);
        else
            fprintf(stderr, "rdmasim replay: %s: %s\n", opts.timeline, strerror(errno));
        rdma_capture_close(&cap);
        return EXIT_USAGE;
    }
    if (timeline_tmp)
        remove_on_signal(timeline_tmp);
    struct rdma_replay_config acfg = {.link_bps = opts.link_bps, .interval_ns = opts.interval_ns,
                                      .max_memory = opts.max_memory, .max_conns = opts.max_conns,
                                      .idle_ns = opts.idle_ns};
    struct rdma_replay_callbacks cb = {.ctx = &r, .message = on_message};
    if (r.timeline) {
        cb.flow_interval = timeline_flow_row;
        cb.pfc_interval = timeline_pfc_row;
    }
    if (!(r.an = rdma_replay_new(&acfg, &cb))) {
        fprintf(stderr, "rdmasim replay: %s: out of memory\n", r.path);
        if (r.timeline)
            timeline_close(r.timeline, timeline_tmp, opts.timeline, false);
        rdma_capture_close(&cap);
        return EXIT_USAGE;
    }
    static char outbuf[OUT_BUFFER];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    if (r.timeline)
        timeline_header(&r);
    if (opts.json)
        report_json_begin(&r);
    read_capture(&r, &cap);
    rdma_capture_close(&cap);
    rc = EXIT_OK;
    if (!r.oom && !rdma_replay_finish(r.an))
        r.oom = true;
    if (r.timeline_over) {
        fprintf(stderr,
                "rdmasim replay: %s: the timeline would take more than --timeline-max (%" PRIu64
                " bytes) at frame %" PRIu64 ": give a longer --interval; no timeline written\n",
                opts.timeline, opts.timeline_max, rdma_replay_totals(r.an)->frames);
        rc = EXIT_USAGE;
    } else if (r.oom) {
        fprintf(stderr, "rdmasim replay: %s: out of memory at frame %" PRIu64 "\n", r.path,
                rdma_replay_totals(r.an)->frames);
        rc = EXIT_USAGE;
    } else {
        if (r.damaged)
            rc = EXIT_USAGE;
        report_load(&r);
        if (opts.json)
            report_json_end(&r);
        else
            report_text(&r);
    }
    if (r.timeline && !timeline_close(r.timeline, timeline_tmp, opts.timeline, rc == EXIT_OK))
        rc = EXIT_USAGE;
    if (fflush(stdout)) {
        fprintf(stderr, "rdmasim replay: writing the report: %s\n", strerror(errno));
        rc = EXIT_USAGE;
    }
    rdma_replay_free(r.an);
    free(r.slow.v);
    return rc;
}
