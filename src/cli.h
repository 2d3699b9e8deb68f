/* cli.h - what the subcommands of rdmasim share. */
#ifndef RDMASIM_CLI_H
#define RDMASIM_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses scripts can rely on. */
#define EXIT_OK 0
#define EXIT_BAD_FRAMES 1 /* --strict and a frame was truncated, malformed or failed a CRC */
#define EXIT_USAGE 2      /* bad usage or an unreadable file */

/* "100us" -> 100000: a whole number of ns, us, ms, s or min (a bare number
 * is nanoseconds), more than zero. */
bool cli_parse_duration(const char *s, uint64_t *ns);
/* "512MiB" -> 536870912: a whole number of bytes with B, KB, MB, GB, TB
 * (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), or none. */
bool cli_parse_size(const char *s, uint64_t *bytes);
/* A decimal count in [lo, hi]. */
bool cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);

int cmd_decode(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
