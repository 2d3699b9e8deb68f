/* main.c - the rdmasim command: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"decode", cmd_decode, "print every frame of pcap/pcapng captures as text or JSON"},
    {"replay", cmd_replay, "a capture to conversations, messages, latencies and anomalies"},
    {"sim", cmd_sim, "simulate a topology and workload to traces, pcaps and statistics"},
    {"report", cmd_report, "one self-contained HTML page of charts from a sim run's outputs"},
    {"compare", cmd_compare, "run one config over InfiniBand, RoCEv2, iWARP and TCP, side by side"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: rdmasim COMMAND [OPTIONS] [ARGS]\n"
               "       rdmasim help [COMMAND]\n"
               "       rdmasim --version\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'rdmasim help COMMAND' (or 'rdmasim COMMAND --help') describes a command;\n"
               "'man rdmasim' describes them all, 'man rdmasim-config' the configuration of sim.\n");
}

static int find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return (int)i;
    return -1;
}

static int unknown(const char *name)
{
    fprintf(stderr, "rdmasim: unknown command '%s'\n", name);
    usage(stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("rdmasim %s\n", PACKAGE_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) {
        /* "rdmasim help sim" is "rdmasim sim --help" */
        int i = argc == 3 ? find(argv[2]) : -1;
        if (argc != 3) {
            usage(stderr);
            return EXIT_USAGE;
        }
        if (i < 0)
            return unknown(argv[2]);
        char *help[] = {argv[2], "--help", NULL};
        return commands[i].run(2, help);
    }
    int i = find(argv[1]);
    return i < 0 ? unknown(argv[1]) : commands[i].run(argc - 1, argv + 1);
}
