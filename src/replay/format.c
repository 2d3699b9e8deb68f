/* format.c - numbers for people: durations, rates and sizes with units,
 * and the conversation a flow is shown under. */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

/* amount per second over ns nanoseconds, without overflowing 64 bits */
uint64_t rate_per_s(uint64_t amount, uint64_t ns)
{
    if (!ns)
        return 0;
    return (uint64_t)((unsigned __int128)amount * 1000000000u / ns);
}

/* Three significant figures or so: 950 ns, 12.3 us, 4.56 ms, 7.89 s. */
void fmt_duration(char *buf, size_t cap, uint64_t ns)
{
    static const struct {
        uint64_t div;
        const char *unit;
    } u[] = {{1000000000u, "s"}, {1000000u, "ms"}, {1000u, "us"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        if (ns >= u[i].div) {
            double v = (double)ns / (double)u[i].div;
            snprintf(buf, cap, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, u[i].unit);
            return;
        }
    }
    snprintf(buf, cap, "%" PRIu64 " ns", ns);
}

static void scaled(char *buf, size_t cap, uint64_t v, uint64_t step, const char *const units[4])
{
    unsigned i = 0;
    double x = (double)v;
    while (i < 3 && x >= (double)step) {
        x /= (double)step;
        i++;
    }
    if (!i)
        snprintf(buf, cap, "%" PRIu64 " %s", v, units[0]);
    else
        snprintf(buf, cap, x >= 100 ? "%.0f %s" : x >= 10 ? "%.1f %s" : "%.2f %s", x, units[i]);
}

void fmt_rate(char *buf, size_t cap, uint64_t bps)
{
    static const char *const units[4] = {"b/s", "kb/s", "Mb/s", "Gb/s"};
    scaled(buf, cap, bps, 1000, units);
}

void fmt_bytes(char *buf, size_t cap, uint64_t bytes)
{
    static const char *const units[4] = {"B", "kB", "MB", "GB"};
    scaled(buf, cap, bytes, 1000, units);
}
