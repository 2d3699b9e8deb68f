/* usage.c - the one line a subcommand prints for a command line it cannot
 * take, pointing at its --help instead of printing the whole text; and the
 * --set an option stands for. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_bad_option(const char *cmd, int c, int opt, char **argv, int index)
{
    const char *arg = argv[index - 1];
    if (c == ':')
        fprintf(stderr, "rdmasim %s: option '%s' needs a value; see 'rdmasim %s --help'\n", cmd, arg, cmd);
    else if (opt && strncmp(arg, "--", 2))
        fprintf(stderr, "rdmasim %s: unknown option '-%c'; see 'rdmasim %s --help'\n", cmd, opt, cmd);
    else
        fprintf(stderr, "rdmasim %s: unknown option '%s'; see 'rdmasim %s --help'\n", cmd, arg, cmd);
    return EXIT_USAGE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rdmasim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; see 'rdmasim %s --help'\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

bool cli_set_text(char **text, const char *key, const char *value)
{
    size_t n = strlen(key) + 1 + strlen(value) + 1;
    free(*text);
    *text = malloc(n);
    if (!*text)
        return false;
    snprintf(*text, n, "%s=%s", key, value);
    return true;
}
