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
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rdmasim COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'rdmasim COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("rdmasim %s\n", PACKAGE_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "rdmasim: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
