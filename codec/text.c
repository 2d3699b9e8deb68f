/* text.c - JSON strings, for every writer of JSON in the project: the
 * decoder's lines (a file name), the replay report (paths, addresses,
 * anomaly text) and the simulator's summary (a path). One escaping rule
 * (RFC 8259 section 7): '"' and backslash escaped, control characters as
 * \u00XX, everything else, UTF-8 included, as it is.
 */
#include "rdma_text.h"

/* Escape s into buf until it ends or cap has no room for the next
 * character's text; returns the bytes written, *s moved past what was
 * escaped. */
static size_t escape(const char **s, char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    const char *c = *s;
    for (; *c; c++) {
        unsigned char ch = (unsigned char)*c;
        size_t need = ch == '"' || ch == '\\' ? 2 : ch < 0x20 ? 6 : 1;
        if (cap - n < need)
            break;
        if (need == 2) {
            buf[n++] = '\\';
            buf[n++] = (char)ch;
        } else if (need == 6) {
            memcpy(buf + n, "\\u00", 4);
            buf[n + 4] = hex[ch >> 4];
            buf[n + 5] = hex[ch & 15];
            n += 6;
        } else {
            buf[n++] = (char)ch;
        }
    }
    *s = c;
    return n;
}

size_t rdma_json_string(const char *s, char *buf, size_t cap)
{
    if (cap < 2)
        return 0;
    buf[0] = '"';
    size_t n = 1 + escape(&s, buf + 1, cap - 2);
    buf[n++] = '"';
    return n;
}

bool rdma_json_fputs(const char *s, FILE *f)
{
    char buf[512];
    bool ok = fputc('"', f) != EOF;
    while (*s) {
        size_t n = escape(&s, buf, sizeof buf);
        ok = fwrite(buf, 1, n, f) == n && ok;
    }
    return fputc('"', f) != EOF && ok;
}
