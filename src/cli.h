/* cli.h - what the subcommands of rdmasim share. */
#ifndef RDMASIM_CLI_H
#define RDMASIM_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses scripts can rely on. */
#define EXIT_OK 0
#define EXIT_BAD_FRAMES 1 /* --strict and a frame was truncated, malformed or failed a CRC */
#define EXIT_USAGE 2      /* bad usage or an unreadable file */

/* Numbers with units read by the simulator's configuration parser, so the
 * command line and a configuration file take the same text. Each returns
 * NULL, or what is wrong. "100us" -> 100000: a time with its unit (ns,
 * us, ms, s, or min), a whole number of nanoseconds above zero. */
const char *cli_parse_duration(const char *s, uint64_t *ns);
/* "25Gbps" -> 25000000000: a rate with its unit (bps, Kbps, Mbps, Gbps, Tbps). */
const char *cli_parse_rate(const char *s, uint64_t *bps);
/* "512MiB" -> 536870912: a whole number of bytes with B, KB, MB, GB, TB
 * (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), or none. */
bool cli_parse_size(const char *s, uint64_t *bytes);
/* A decimal count in [lo, hi]. */
bool cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);

/* With getopt_long() given an option string starting with ':' and opterr
 * 0: c is what it returned (':' for a missing value, '?' for an unknown
 * option), opt its optopt, index its optind. One line on stderr naming the
 * option, with a pointer to --help; returns EXIT_USAGE. */
int cli_bad_option(const char *cmd, int c, int opt, char **argv, int index);
/* "rdmasim CMD: WHAT; see 'rdmasim CMD --help'" (WHAT from the printf
 * format); returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An option that stands for a --set (--seed N is --set seed=N): the
 * text "KEY=VALUE", allocated, replacing and freeing *text; false when
 * out of memory. */
bool cli_set_text(char **text, const char *key, const char *value);

int cmd_decode(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
