/* units.c - exact decimal parsing of times, rates, sizes and probabilities. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/units.h"

struct unit {
    const char *name;
    uint64_t mult;
};

static const struct unit time_units[] = {
    {"ps", 1},
    {"ns", 1000},
    {"us", 1000000},
    {"\xc2\xb5s", 1000000}, /* µs */
    {"ms", UINT64_C(1000000000)},
    {"s", UINT64_C(1000000000000)},
    {NULL, 0},
};

static const struct unit rate_units[] = {
    {"bps", 1},
    {"Kbps", 1000},
    {"kbps", 1000},
    {"Mbps", 1000000},
    {"Gbps", UINT64_C(1000000000)},
    {"Tbps", UINT64_C(1000000000000)},
    {NULL, 0},
};

static const struct unit size_units[] = {
    {"", 1},
    {"B", 1},
    {"KB", 1000},
    {"kB", 1000},
    {"MB", 1000000},
    {"GB", UINT64_C(1000000000)},
    {"KiB", 1024},
    {"MiB", 1024 * 1024},
    {"GiB", UINT64_C(1024) * 1024 * 1024},
    {NULL, 0},
};

/* digits[.digits][e[+-]digits]: value = mant * 10^exp. Returns the end. */
static const char *decimal(const char *s, unsigned __int128 *mant, int *exp)
{
    unsigned __int128 m = 0;
    int e = 0, ndig = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++, ndig++) {
        if (m > ((unsigned __int128)1 << 100))
            return NULL;
        m = m * 10 + (unsigned)(*p - '0');
    }
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, ndig++) {
            if (m > ((unsigned __int128)1 << 100))
                return NULL;
            m = m * 10 + (unsigned)(*p - '0');
            e--;
        }
    }
    if (!ndig)
        return NULL;
    if ((*p == 'e' || *p == 'E') && (p[1] == '-' || p[1] == '+' || (p[1] >= '0' && p[1] <= '9'))) {
        const char *q = p + 1;
        int sign = 1, x = 0;
        if (*q == '-' || *q == '+')
            sign = *q++ == '-' ? -1 : 1;
        if (!(*q >= '0' && *q <= '9'))
            return NULL;
        for (; *q >= '0' && *q <= '9'; q++)
            if ((x = x * 10 + (*q - '0')) > 60)
                return NULL;
        e += sign * x;
        p = q;
    }
    *mant = m;
    *exp = e;
    return p;
}

/* mant * 10^exp * mult as a whole number no larger than UINT64_MAX. */
static const char *exact(unsigned __int128 mant, int exp, uint64_t mult, uint64_t *out)
{
    unsigned __int128 v = mant * mult;
    if (mult && v / mult != mant)
        return "too large";
    for (; exp > 0; exp--) {
        if (v > (~(unsigned __int128)0) / 10)
            return "too large";
        v *= 10;
    }
    for (; exp < 0; exp++) {
        if (v % 10)
            return "not a whole number of the smallest unit";
        v /= 10;
    }
    if (v > UINT64_MAX)
        return "too large";
    *out = (uint64_t)v;
    return NULL;
}

static const char *with_unit(const char *s, const struct unit *units, bool unit_needed,
                             const char *what, uint64_t *out)
{
    unsigned __int128 mant;
    int exp;
    const char *p = decimal(s, &mant, &exp);
    if (!p)
        return what;
    while (*p == ' ')
        p++;
    if (!*p && unit_needed)
        return what;
    for (const struct unit *u = units; u->name; u++)
        if (!strcmp(p, u->name))
            return exact(mant, exp, u->mult, out);
    return what;
}

const char *sim__parse_time(const char *s, uint64_t *ps)
{
    return with_unit(s, time_units, true, "not a time: write a number and one of ps, ns, us, ms, s (1.5us)", ps);
}

const char *sim__parse_rate(const char *s, uint64_t *bps)
{
    const char *err = with_unit(s, rate_units, true,
                                "not a rate: write a number and one of bps, Kbps, Mbps, Gbps, Tbps (100Gbps)", bps);
    if (!err && !*bps)
        return "zero; a rate must be above zero";
    return err;
}

const char *sim__parse_size(const char *s, uint64_t *bytes)
{
    return with_unit(s, size_units, false,
                     "not a size: write a number of bytes, optionally with B, KB, MB, GB, KiB, MiB, GiB (64KiB)", bytes);
}

const char *sim__parse_uint(const char *s, uint64_t max, uint64_t *v)
{
    const char *bad = "not a whole number";
    uint64_t x = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (!s[2])
            return bad;
        for (const char *p = s + 2; *p; p++) {
            int d = (*p >= '0' && *p <= '9') ? *p - '0'
                  : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                  : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10 : -1;
            if (d < 0)
                return bad;
            if (x > (UINT64_MAX >> 4))
                return "too large";
            x = x << 4 | (uint64_t)d;
        }
    } else {
        if (!*s)
            return bad;
        for (const char *p = s; *p; p++) {
            if (*p < '0' || *p > '9')
                return bad;
            if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                return "too large";
            x = x * 10 + (uint64_t)(*p - '0');
        }
    }
    if (x > max)
        return "out of range";
    *v = x;
    return NULL;
}

const char *sim__parse_prob(const char *s, double *p)
{
    const char *bad = "not a probability: write a number from 0 to 1 (1e-6) or a percentage (0.1%)";
    unsigned __int128 mant;
    int exp;
    const char *end = decimal(s, &mant, &exp);
    if (!end || (*end && strcmp(end, "%")))
        return bad;
    char *strend;
    double v = strtod(s, &strend);
    if (strend != end || !isfinite(v))
        return bad;
    if (*end == '%')
        v /= 100;
    if (v < 0 || v > 1)
        return "outside 0 to 1; a probability is a number from 0 to 1 or a percentage (5%)";
    *p = v;
    return NULL;
}

const char *sim__parse_bool(const char *s, int *b)
{
    if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")) {
        *b = 1;
        return NULL;
    }
    if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")) {
        *b = 0;
        return NULL;
    }
    return "not a boolean: write true or false";
}

static void format_units(uint64_t v, const struct unit *units, size_t nunits, char *buf, size_t cap)
{
    /* the largest unit that divides v exactly, else one decimal place */
    for (size_t i = nunits; i-- > 0;) {
        uint64_t m = units[i].mult;
        if (v >= m && v % m == 0) {
            snprintf(buf, cap, "%llu%s", (unsigned long long)(v / m), units[i].name);
            return;
        }
        if (v >= m && (v * 10) % m == 0 && v < UINT64_MAX / 10) {
            snprintf(buf, cap, "%llu.%llu%s", (unsigned long long)(v / m),
                     (unsigned long long)((v % m) * 10 / m), units[i].name);
            return;
        }
    }
    snprintf(buf, cap, "%llu%s", (unsigned long long)v, units[0].name);
}

void sim__format_time(uint64_t ps, char *buf, size_t cap)
{
    static const struct unit u[] = {{"ps", 1}, {"ns", 1000}, {"us", 1000000},
                                    {"ms", UINT64_C(1000000000)}, {"s", UINT64_C(1000000000000)}};
    format_units(ps, u, 5, buf, cap);
}
