/* units.c - numbers with units on the command line, shared by the
 * subcommands (cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct unit {
    const char *name;
    uint64_t mul;
};

/* A whole number followed by one of the units (the empty name: no unit). */
static bool parse_scaled(const char *s, const struct unit *units, size_t n, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(end, units[i].name)) {
            if (x > UINT64_MAX / units[i].mul)
                return false;
            *v = x * units[i].mul;
            return true;
        }
    return false;
}

bool cli_parse_duration(const char *s, uint64_t *ns)
{
    static const struct unit units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000},
                                        {"min", 60000000000}, {"", 1}};
    return parse_scaled(s, units, sizeof units / sizeof units[0], ns) && *ns > 0;
}

bool cli_parse_size(const char *s, uint64_t *bytes)
{
    static const struct unit units[] = {{"", 1}, {"B", 1}, {"KB", 1000}, {"MB", 1000000},
                                        {"GB", 1000000000}, {"TB", 1000000000000},
                                        {"KiB", 1u << 10}, {"MiB", 1u << 20}, {"GiB", 1u << 30},
                                        {"TiB", (uint64_t)1 << 40}};
    return parse_scaled(s, units, sizeof units / sizeof units[0], bytes);
}

bool cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || n < lo || n > hi)
        return false;
    *v = n;
    return true;
}
