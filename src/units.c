/* units.c - numbers with units on the command line, shared by the
 * subcommands (cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_parse_duration(const char *s, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"min", 60000000000}, {"", 1}};
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            if (v > UINT64_MAX / units[i].mul)
                return false;
            *ns = v * units[i].mul;
            return *ns > 0;
        }
    return false;
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
