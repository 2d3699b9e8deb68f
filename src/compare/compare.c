/* compare.c - `rdmasim compare CONFIG`: the same topology and workload run
 * once per transport, each run an ordinary `rdmasim sim` into its own
 * directory, then one table of what each run's files say (measure.c),
 * written as text, CSV, JSON and SVG (write.c).
 *
 * A transport is a list of --set overrides applied after the user's own,
 * so that it wins where both set a key; docs/transports.md lists them. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cli.h"
#include "compare.h"

#define EXIT_SIM_FAILED 1 /* as rdmasim sim: a message failed or its data arrived corrupted */
#define MAX_SETS 6

static const struct transport {
    const char *name;
    const char *sets[MAX_SETS];
} transports[] = {
    /* native InfiniBand: credit flow control, congestion control of
     * annex A10 on */
    {"ib", {"topology.fabric=infiniband", "nic.transport=roce", "infiniband.cc.enable=true"}},
    /* RoCEv2 with the configuration's PFC and congestion control */
    {"roce", {"topology.fabric=roce", "nic.transport=roce"}},
    /* RoCEv2 without PFC: drops repaired by go-back-N, the congestion
     * control still on */
    {"roce-lossy",
     {"topology.fabric=roce", "nic.transport=roce", "nic.pfc=false", "topology.switch_defaults.pfc.enable=false"}},
    /* iWARP: RDMAP/DDP/MPA over TCP, no PFC */
    {"iwarp",
     {"topology.fabric=roce", "nic.transport=iwarp", "nic.pfc=false", "topology.switch_defaults.pfc.enable=false"}},
    /* plain TCP sockets with the host's system calls and copies */
    {"tcp",
     {"topology.fabric=roce", "nic.transport=tcp", "nic.pfc=false", "topology.switch_defaults.pfc.enable=false"}},
};
#define NTRANSPORTS (sizeof transports / sizeof transports[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: rdmasim compare CONFIG [--transports LIST] [--out DIR] [--seed N]\n"
               "                      [--set KEY=VALUE]...\n"
               "\n"
               "Run CONFIG's topology and workload once per transport, each as `rdmasim sim`\n"
               "would into DIR/TRANSPORT, then tabulate what those runs' files say: latency of\n"
               "messages <= 4 KiB and of all (p50, p99), goodput, slowdown by message size (p50,\n"
               "p99), drops, PFC pauses, credit waits, retransmissions, timeouts, host CPU time\n"
               "per GB and copies per byte, each with its difference from the first transport.\n"
               "Writes DIR/compare.txt (also printed), compare.csv, compare.json, compare.svg.\n"
               "  -t, --transports LIST  comma-separated, in order (default\n"
               "                       ib,roce,roce-lossy,iwarp,tcp):\n"
               "                       ib          topology.fabric=infiniband, infiniband.cc.enable=true\n"
               "                       roce        topology.fabric=roce, nic.transport=roce\n"
               "                       roce-lossy  roce with nic.pfc=false and\n"
               "                                   topology.switch_defaults.pfc.enable=false\n"
               "                       iwarp       roce-lossy's keys with nic.transport=iwarp\n"
               "                       tcp         roce-lossy's keys with nic.transport=tcp\n"
               "  -o, --out DIR        where the runs and the table go (default compare.out)\n"
               "  -s, --seed N         the random seed of every run (same as --set seed=N)\n"
               "  -S, --set KEY=VALUE  override a configuration key in every run; a\n"
               "                       transport's own keys come after, and win\n"
               "Exit status: 0; 1 when a run had a message fail or arrive corrupted; 2 on\n"
               "bad usage or a configuration a transport refuses (nothing more runs).\n");
}

/* The transports LIST names, in order, into order[]; their number, or 0
 * having said what is wrong. */
static size_t parse_list(const char *list, const struct transport **order)
{
    size_t n = 0;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t t = 0;
        while (t < NTRANSPORTS && strcmp(tok, transports[t].name))
            t++;
        if (t == NTRANSPORTS) {
            cli_usage_error("compare", "unknown transport '%s' (known: ib, roce, roce-lossy, iwarp, tcp)", tok);
            free(copy);
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            if (order[i] == &transports[t]) {
                cli_usage_error("compare", "transport '%s' given twice", tok);
                free(copy);
                return 0;
            }
        order[n++] = &transports[t];
    }
    free(copy);
    if (!n)
        cli_usage_error("compare", "--transports names no transport");
    return n;
}

/* rdmasim sim CONFIG --out DIR --quiet, the user's --set options, then the
 * transport's. */
static int run_sim(const char *config, const char *dir, char **sets, size_t nsets, const struct transport *t)
{
    char *argv[6 + 2 * (MAX_SETS + 64)];
    int argc = 0;
    argv[argc++] = "sim";
    argv[argc++] = (char *)config;
    argv[argc++] = "--out";
    argv[argc++] = (char *)dir;
    argv[argc++] = "--quiet";
    for (size_t i = 0; i < nsets; i++) {
        argv[argc++] = "--set";
        argv[argc++] = sets[i];
    }
    for (size_t i = 0; i < MAX_SETS && t->sets[i]; i++) {
        argv[argc++] = "--set";
        argv[argc++] = (char *)t->sets[i];
    }
    argv[argc] = NULL;
    return cmd_sim(argc, argv);
}

/* Write path under a temporary name through fn, then rename it into
 * place; 0 or -1 having said why. */
static int write_file(const char *dir, const char *name, const char *config, const struct cmp_run *runs,
                      size_t n, void (*fn)(FILE *, const char *, const struct cmp_run *, size_t))
{
    size_t len = strlen(dir) + strlen(name) + 6;
    char *path = malloc(len), *tmp = malloc(len);
    int rc = -1;
    if (!path || !tmp)
        goto out;
    snprintf(path, len, "%s/%s", dir, name);
    snprintf(tmp, len, "%s/%s.tmp", dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "rdmasim compare: %s: %s\n", tmp, strerror(errno));
        goto out;
    }
    fn(f, config, runs, n);
    if (ferror(f) | fclose(f) || rename(tmp, path)) {
        fprintf(stderr, "rdmasim compare: %s: %s\n", path, strerror(errno));
        remove(tmp);
        goto out;
    }
    rc = 0;
out:
    free(path);
    free(tmp);
    return rc;
}

/* DIR and the directories above it, as rdmasim sim makes its --out; 0, or
 * -1 with errno. */
static int make_dirs(const char *dir)
{
    char *path = strdup(dir);
    int rc = path ? 0 : -1;
    for (char *p = path ? path + 1 : NULL; p && rc == 0; p++) {
        bool end = !*p;
        if (*p != '/' && !end)
            continue;
        *p = 0;
        if (mkdir(path, 0777) && errno != EEXIST)
            rc = -1;
        if (end)
            break;
        *p = '/';
    }
    free(path);
    return rc;
}

static void csv(FILE *f, const char *config, const struct cmp_run *runs, size_t n)
{
    (void)config;
    cmp_write_csv(f, runs, n);
}

int cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"transports", required_argument, NULL, 't'}, {"out", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 's'},       {"set", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
    };
    const char *out = "compare.out", *list = "ib,roce,roce-lossy,iwarp,tcp";
    char *sets[64];
    char *seed_set = NULL;
    size_t nsets = 0;
    int c, rc = EXIT_USAGE;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:o:s:S:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            list = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 's':
            if (!cli_set_text(&seed_set, "seed", optarg))
                return EXIT_USAGE;
            break;
        case 'S':
            if (nsets == sizeof sets / sizeof sets[0] - 1) {
                free(seed_set);
                return cli_usage_error("compare", "more than %zu --set options", nsets);
            }
            sets[nsets++] = optarg;
            break;
        case 'h':
            usage(stdout);
            free(seed_set);
            return EXIT_OK;
        default:
            free(seed_set);
            return cli_bad_option("compare", c, optopt, argv, optind);
        }
    }
    if (optind != argc - 1) {
        free(seed_set);
        return cli_usage_error("compare", optind == argc ? "no CONFIG given" : "one CONFIG only");
    }
    if (seed_set)
        sets[nsets++] = seed_set;
    const char *config = argv[optind];
    const struct transport *order[NTRANSPORTS];
    size_t n = parse_list(list, order);
    struct cmp_run *runs = n ? calloc(n, sizeof *runs) : NULL;
    if (!runs)
        goto done;
    if (make_dirs(out)) {
        fprintf(stderr, "rdmasim compare: %s: %s\n", out, strerror(errno));
        goto done;
    }
    bool failed = false;
    for (size_t i = 0; i < n; i++) {
        struct cmp_run *r = &runs[i];
        r->transport = order[i]->name;
        r->dir = malloc(strlen(out) + strlen(r->transport) + 2);
        if (!r->dir)
            goto done;
        sprintf(r->dir, "%s/%s", out, r->transport);
        fprintf(stderr, "rdmasim compare: %s into %s\n", r->transport, r->dir);
        r->status = run_sim(config, r->dir, sets, nsets, order[i]);
        if (r->status != EXIT_OK && r->status != EXIT_SIM_FAILED) {
            fprintf(stderr, "rdmasim compare: the %s run of %s ended with status %d; nothing more runs\n",
                    r->transport, config, r->status);
            rc = r->status;
            goto done;
        }
        failed |= r->status == EXIT_SIM_FAILED;
        if (cmp_measure(r))
            goto done;
    }
    if (write_file(out, "compare.csv", config, runs, n, csv) ||
        write_file(out, "compare.json", config, runs, n, cmp_write_json) ||
        write_file(out, "compare.svg", config, runs, n, cmp_write_svg) ||
        write_file(out, "compare.txt", config, runs, n, cmp_write_text))
        goto done;
    cmp_write_text(stdout, config, runs, n);
    rc = failed ? EXIT_SIM_FAILED : EXIT_OK;
done:
    if (runs)
        for (size_t i = 0; i < n; i++)
            free(runs[i].dir);
    free(runs);
    free(seed_set);
    return rc;
}
