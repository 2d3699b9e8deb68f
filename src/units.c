/* units.c - numbers with units on the command line, shared by the
 * subcommands (cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine/units.h"

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

/* Through the simulator's own parser (sim/engine/units.c), so a time on
 * the command line reads as it does in a configuration: a number (1.5us,
 * 2e-3s) and a unit, ps to s, or min here; a whole number of nanoseconds,
 * more than zero. */
const char *cli_parse_duration(const char *s, uint64_t *ns)
{
    static const char *const what = "not a duration: write a number and one of ns, us, ms, s, min (100us)";
    size_t n = strlen(s);
    uint64_t ps, scale = 1;
    char secs[64];
    if (n > 3 && !strcmp(s + n - 3, "min")) {
        if (n - 3 + 2 > sizeof secs)
            return what;
        memcpy(secs, s, n - 3);
        strcpy(secs + n - 3, "s");
        s = secs;
        scale = 60;
    }
    if (sim__parse_time(s, &ps))
        return what;
    if (ps % 1000)
        return "not a whole number of nanoseconds";
    if (!ps)
        return "a duration must be above zero";
    if (ps / 1000 > UINT64_MAX / scale)
        return "too large";
    *ns = ps / 1000 * scale;
    return NULL;
}

const char *cli_parse_rate(const char *s, uint64_t *bps) { return sim__parse_rate(s, bps); }

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
