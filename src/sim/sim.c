/* sim.c - `rdmasim sim`: load a configuration, run it, print a summary and
 * write the outputs (docs/config.md describes the configuration).
 *
 * SIGINT, SIGTERM and SIGHUP end a run between events: the outputs, which
 * are only renamed into place when complete, are then removed, and the
 * process ends by the same signal. During set-up, before any output
 * exists, they end the process at the next progress call (several a
 * second). */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cli.h"
#include "sim.h"

#define EXIT_SIM_FAILED 1 /* a message failed or its data arrived corrupted */
/* Traces estimated larger than this are announced before the run. */
#define TRACE_WARN_BYTES (UINT64_C(1) << 30)
#define PROGRESS_EVERY (1u << 16)

struct progress {
    double start, last;
    struct sim_network *net;
    const char *path;
    bool tty, shown;
};

/* The signal that asked the run to end, or 0. A handler reaches the rest of
 * the program only through an object of static storage duration. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

static void catch_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* a second signal ends the process at once */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* a signal ignored from the start stays ignored (nohup, a
         * background job's SIGINT) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* On a terminal, at most twice a second: whether to redraw the line, and
 * the time now. */
static bool redraw(struct progress *pg, double *now)
{
    if (!pg->tty)
        return false;
    *now = wall_now();
    if (*now - pg->last < 0.5)
        return false;
    pg->last = *now;
    return true;
}

static void show_progress(void *arg, const struct sim *sim)
{
    struct progress *pg = arg;
    if (interrupted) {
        sim_stop(sim_network_engine(pg->net));
        return;
    }
    double now;
    if (!redraw(pg, &now))
        return;
    double elapsed = now - pg->start, done = sim_network_progress(pg->net);
    double rate = elapsed > 0 ? (double)sim_events_processed(sim) / elapsed : 0;
    fprintf(stderr, "\r  simulated %.3f us, %.2f M events/s", (double)sim_now(sim) / 1e6, rate / 1e6);
    if (done > 0 && done < 1)
        fprintf(stderr, ", %.0f%% done, ETA %.0f s", done * 100, elapsed * (1 - done) / done);
    fprintf(stderr, "\033[K");
    pg->shown = true;
}

/* Set-up: a progress line on a terminal, and an interrupt ends the
 * process, which has written nothing yet. */
static void show_setup(void *arg, const char *stage, double done)
{
    struct progress *pg = arg;
    if (interrupted) {
        if (pg->shown)
            fprintf(stderr, "\r\033[K");
        fprintf(stderr, "rdmasim sim: %s: interrupted by %s during set-up; no outputs written\n", pg->path,
                interrupted == SIGINT ? "SIGINT" : interrupted == SIGTERM ? "SIGTERM" : "SIGHUP");
        raise(interrupted); /* the handler was reset: end as the signal asks */
        return;
    }
    double now;
    if (!redraw(pg, &now))
        return;
    fprintf(stderr, "\r  setting up: %s, %.0f%%, %.1f s\033[K", stage, done * 100, now - pg->start);
    pg->shown = true;
}

/* Say before the run when its pcap files will be large, and how to keep
 * them smaller. */
static void warn_trace_size(const struct sim_network *net)
{
    size_t files;
    uint64_t bytes = sim_network_trace_estimate(net, &files);
    if (bytes < TRACE_WARN_BYTES)
        return;
    fprintf(stderr,
            "rdmasim sim: warning: the %zu pcap file%s will take about %.1f GiB; the trace_limit key "
            "caps each file, snaplen cuts each frame, and trace lists fewer nodes\n",
            files, files == 1 ? "" : "s", (double)bytes / (double)TRACE_WARN_BYTES);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: rdmasim sim CONFIG [--out DIR] [--seed N] [--set KEY=VALUE]... [--check]\n"
               "                  [--ranks N] [--quiet] [--wall-time] [--max-memory SIZE]\n"
               "       mpirun -np N rdmasim sim CONFIG [OPTIONS]\n"
               "\n"
               "Run the topology and workload CONFIG describes (see docs/config.md); under\n"
               "mpirun, split over N ranks with the same outputs (docs/parallel.md).\n"
               "  -o, --out DIR        write summary.json, messages.csv, ports.csv, pfc.csv,\n"
               "                       qlen.csv, rates.csv and pcap/NODE-PORT.pcap for the\n"
               "                       traced ports into DIR, listed in rdmasim-outputs.txt;\n"
               "                       what an earlier run listed there and this one does not\n"
               "                       write is removed ('rdmasim report DIR' draws them)\n"
               "  -s, --seed N         the random seed (same as --set seed=N)\n"
               "  -S, --set KEY=VALUE  override a configuration key (nic.mtu=1024)\n"
               "  -c, --check          check the configuration and exit; with --ranks or\n"
               "                       under mpirun, print the partition over the ranks\n"
               "  -r, --ranks N        the ranks --check partitions for (default: mpirun's)\n"
               "  -q, --quiet          no summary and no progress line\n"
               "  -w, --wall-time      put the wall time, the run's CPU time and the memory\n"
               "                       used (frames in flight, peak RSS) into summary.json\n"
               "                       (which then differs between runs)\n"
               "  -m, --max-memory SIZE  refuse a configuration estimated to need more\n"
               "                       memory (default: what the machine allows; same as\n"
               "                       --set max_memory=SIZE)\n");
}

/* The library names an override at fault "override KEY=VALUE"; here each
 * came from an option, and the message names that option instead. */
static void print_config_error(const char *err, const char *seed_set, const char *memory_set)
{
    static const char prefix[] = "override ";
    if (strncmp(err, prefix, sizeof prefix - 1)) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const char *set = err + sizeof prefix - 1;
    const char *const from[] = {seed_set, memory_set};
    const char *const option[] = {"--seed ", "--max-memory "};
    for (size_t i = 0; i < 2; i++) {
        size_t n = from[i] ? strlen(from[i]) : 0;
        if (n && !strncmp(set, from[i], n) && set[n] == ':') {
            /* "seed=VALUE: ...": the option's argument is what follows '=' */
            fprintf(stderr, "%s%s\n", option[i], strchr(set, '=') + 1);
            return;
        }
    }
    fprintf(stderr, "--set %s\n", set);
}

/* A run split over ranks: each rank's share of the events, the frames
 * that crossed, and the time it waited for the others. */
static void print_parallel(const struct sim_network *net)
{
    const struct sim_split_stats *ps = sim_network_split_stats(net);
    if (!ps)
        return;
    printf("  parallel   %u ranks, %zu cut links, lookahead %.3f us\n", ps->nranks, ps->cut_links,
           (double)ps->lookahead / 1e6);
    for (unsigned r = 0; r < ps->nranks; r++) {
        const struct sim_rank_stats *st = &ps->rank[r];
        printf("  rank %-5u %llu events (%.2f M/s busy), %llu frames out, %llu in, %llu windows, "
               "%.3f s of %.3f s waiting\n",
               r, (unsigned long long)st->events,
               st->busy_s > 0 ? (double)st->events / st->busy_s / 1e6 : 0.0,
               (unsigned long long)st->frames_out, (unsigned long long)st->frames_in,
               (unsigned long long)st->windows, st->wait_s, st->run_s);
    }
}

static void print_summary(struct sim_network *net, const char *path, const char *out, double wall)
{
    struct sim_totals t;
    struct sim *sim = sim_network_engine(net);
    sim_network_totals(net, &t);
    uint64_t events = sim_events_processed(sim);
    printf("rdmasim sim %s\n", path);
    printf("  messages   %llu completed, %llu failed, %llu pending of %llu\n",
           (unsigned long long)t.completed, (unsigned long long)t.failed,
           (unsigned long long)(t.messages - t.completed - t.failed), (unsigned long long)t.messages);
    printf("  data       %llu verified, %llu corrupted\n", (unsigned long long)t.verified,
           (unsigned long long)t.corrupted);
    printf("  frames     %llu sent, %llu retransmitted packets, %llu tail drops, %llu lost, "
           "%llu dropped as bad",
           (unsigned long long)t.frames, (unsigned long long)t.retransmitted,
           (unsigned long long)t.dropped, (unsigned long long)t.lost,
           (unsigned long long)t.bad_frames);
    if (t.unroutable)
        printf(", %llu with no route", (unsigned long long)t.unroutable);
    printf("\n");
    if (t.pauses || t.ecn_marked || t.cnps || t.deadlocks)
        printf("  fabric     %llu PFC pauses, %llu ECN marks, %llu CNPs, %llu deadlocks\n",
               (unsigned long long)t.pauses, (unsigned long long)t.ecn_marked,
               (unsigned long long)t.cnps, (unsigned long long)t.deadlocks);
    char line[1024];
    if (t.timeouts)
        printf("  timeouts   %llu retransmission timeouts, %llu of them with nothing lost\n",
               (unsigned long long)t.timeouts, (unsigned long long)t.timeouts_without_loss);
    for (size_t i = 0; sim_network_note(net, i, line, sizeof line); i++)
        printf("  note       %s\n", line);
    for (size_t i = 0; i < 3 && sim_network_deadlock(net, i, line, sizeof line); i++)
        printf("  deadlock   %s\n", line);
    if (t.deadlocks > 3)
        printf("  deadlock   ... and %llu more in summary.json\n", (unsigned long long)(t.deadlocks - 3));
    print_parallel(net);
    printf("  simulated  %.3f us, %llu events in %.3f s wall (%.2f M events/s)\n",
           (double)t.end / 1e6, (unsigned long long)events, wall,
           wall > 0 ? (double)events / wall / 1e6 : 0.0);
    if (out)
        printf("  outputs    %s\n", out);
}

int cmd_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},  {"seed", required_argument, NULL, 's'},
        {"set", required_argument, NULL, 'S'},  {"check", no_argument, NULL, 'c'},
        {"quiet", no_argument, NULL, 'q'},      {"wall-time", no_argument, NULL, 'w'},
        {"max-memory", required_argument, NULL, 'm'},
        {"ranks", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    bool check = false, quiet = false, wall_time = false, written = false;
    unsigned rank = 0, nranks = 1, check_ranks = 0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    char *seed_set = NULL, *memory_set = NULL;
    size_t nsets = 0;
    int c, rc = EXIT_USAGE;
    if (!sets)
        return EXIT_USAGE;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:s:S:cqwm:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 's':
            if (!cli_set_text(&seed_set, "seed", optarg))
                goto done;
            break;
        case 'S':
            sets[nsets++] = optarg;
            break;
        case 'm':
            if (!cli_set_text(&memory_set, "max_memory", optarg))
                goto done;
            break;
        case 'c':
            check = true;
            break;
        case 'r': {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (*end || !n || n > 65536) {
                fprintf(stderr, "rdmasim sim: --ranks %s: a number of ranks from 1 to 65536\n", optarg);
                goto done;
            }
            check_ranks = (unsigned)n;
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'w':
            wall_time = true;
            break;
        case 'h':
            usage(stdout);
            rc = EXIT_OK;
            goto done;
        default:
            usage(stderr);
            goto done;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        goto done;
    }
    if (seed_set)
        sets[nsets++] = seed_set;
    if (memory_set)
        sets[nsets++] = memory_set;
    const char *path = argv[optind];
    char err[2048];
    if (sim_parallel_start(&rank, &nranks)) {
        fprintf(stderr, "rdmasim sim: started by mpirun as several ranks, but MPI %s "
                        "(./configure --with-mpi; docs/parallel.md)\n",
#ifdef HAVE_MPI
                "failed to start"
#else
                "is not built in"
#endif
        );
        goto done;
    }
    /* every rank loads and builds the same network; rank 0 speaks for all */
    bool speak = rank == 0;
    struct sim_config *cfg = sim_config_load(path, (const char *const *)sets, nsets, err, sizeof err);
    if (!cfg) {
        if (speak)
            print_config_error(err, seed_set, memory_set);
        goto done;
    }
    if (check) {
        if (!quiet && speak)
            printf("%s: ok\n", path);
        unsigned parts = check_ranks ? check_ranks : nranks;
        if (parts > 1 && speak) {
            struct sim_network *net = sim_network_create(cfg);
            sim_network_print_partition(net, parts, stdout);
            sim_network_destroy(net);
        }
        sim_config_free(cfg);
        rc = EXIT_OK;
        goto done;
    }
    quiet |= !speak;
    catch_signals();
    struct progress pg = {.start = wall_now(), .path = path, .tty = !quiet && isatty(STDERR_FILENO)};
    pg.last = pg.start;
    struct sim_network *net = pg.net = sim_network_create_watched(cfg, show_setup, &pg);
    sim_set_progress(sim_network_engine(net), show_progress, &pg, PROGRESS_EVERY);
    rc = EXIT_OK;
    if (nranks > 1 && sim_network_split(net, rank, nranks, err, sizeof err)) {
        if (speak)
            fprintf(stderr, "rdmasim sim: %s\n", err);
        rc = EXIT_USAGE;
    } else if (out && sim_network_open_traces(net, out, err, sizeof err)) {
        fprintf(stderr, "rdmasim sim: %s\n", err);
        rc = EXIT_USAGE;
    } else {
        if (out && speak)
            warn_trace_size(net);
        /* false: a run over several ranks was interrupted on one of them */
        bool whole = sim_network_run(net);
        double wall = wall_now() - pg.start;
        if (pg.shown)
            fprintf(stderr, "\r\033[K");
        if (interrupted || !whole) {
            /* the traces are discarded with the network */
            if (speak)
                fprintf(stderr, "rdmasim sim: %s: interrupted by %s at %.3f us simulated; no outputs written\n",
                        path,
                        !interrupted          ? "a signal to another rank"
                        : interrupted == SIGINT  ? "SIGINT"
                        : interrupted == SIGTERM ? "SIGTERM"
                                                 : "SIGHUP",
                        (double)sim_now(sim_network_engine(net)) / 1e6);
            rc = 128 + (interrupted ? interrupted : SIGTERM);
        } else if (out && sim_network_write(net, out, wall_time ? wall : -1, err, sizeof err)) {
            fprintf(stderr, "rdmasim sim: %s\n", err);
            rc = EXIT_USAGE;
        } else {
            written = out != NULL;
        }
        struct sim_totals t;
        sim_network_totals(net, &t);
        if (rc == EXIT_OK && (t.failed || t.corrupted))
            rc = EXIT_SIM_FAILED;
        if (!quiet && !interrupted)
            print_summary(net, path, written ? out : NULL, wall); /* "outputs" only once they exist */
    }
    sim_network_destroy(net);
    sim_config_free(cfg);
done:
    free(seed_set);
    free(memory_set);
    free(sets);
    sim_parallel_end(nranks, 0);
    if (interrupted) {
        fflush(stdout);
        raise(interrupted); /* the handler was reset: end as the signal asks */
    }
    return rc;
}
