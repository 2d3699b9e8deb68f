/* cli.h - what the subcommands of rdmasim share. */
#ifndef RDMASIM_CLI_H
#define RDMASIM_CLI_H

/* Exit statuses scripts can rely on. */
#define EXIT_OK 0
#define EXIT_BAD_FRAMES 1 /* --strict and a frame was truncated, malformed or failed a CRC */
#define EXIT_USAGE 2      /* bad usage or an unreadable file */

int cmd_decode(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_sim(int argc, char **argv);

#endif
