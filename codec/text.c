/* text.c - JSON strings, for every writer of JSON in the project: the
 * decoder's lines (a file name), the replay report (paths, addresses,
 * anomaly text) and the simulator's summary (a path). One escaping rule
 * (RFC 8259 section 7): '"' and backslash escaped, control characters as
 * \u00XX, well-formed UTF-8 as it is, any other byte as \udcXX.
 */
#include "rdma_text.h"

/* rdma__digits4[n]: the digits of n, each a byte, the first the lowest. */
#define DIGIT_(n, k) ((uint32_t)('0' + (n) / (k) % 10))
#define DIGITS4_(n) (DIGIT_(n, 1000) | DIGIT_(n, 100) << 8 | DIGIT_(n, 10) << 16 | DIGIT_(n, 1) << 24)
#define DIGITS4X10_(n)                                                         \
    DIGITS4_(n), DIGITS4_((n) + 1), DIGITS4_((n) + 2), DIGITS4_((n) + 3),      \
    DIGITS4_((n) + 4), DIGITS4_((n) + 5), DIGITS4_((n) + 6), DIGITS4_((n) + 7), \
    DIGITS4_((n) + 8), DIGITS4_((n) + 9)
#define DIGITS4X100_(n)                                                        \
    DIGITS4X10_(n), DIGITS4X10_((n) + 10), DIGITS4X10_((n) + 20),              \
    DIGITS4X10_((n) + 30), DIGITS4X10_((n) + 40), DIGITS4X10_((n) + 50),       \
    DIGITS4X10_((n) + 60), DIGITS4X10_((n) + 70), DIGITS4X10_((n) + 80),       \
    DIGITS4X10_((n) + 90)
#define DIGITS4X1000_(n)                                                       \
    DIGITS4X100_(n), DIGITS4X100_((n) + 100), DIGITS4X100_((n) + 200),         \
    DIGITS4X100_((n) + 300), DIGITS4X100_((n) + 400), DIGITS4X100_((n) + 500), \
    DIGITS4X100_((n) + 600), DIGITS4X100_((n) + 700), DIGITS4X100_((n) + 800), \
    DIGITS4X100_((n) + 900)
const uint32_t rdma__digits4[10000] = {
    DIGITS4X1000_(0),    DIGITS4X1000_(1000), DIGITS4X1000_(2000), DIGITS4X1000_(3000),
    DIGITS4X1000_(4000), DIGITS4X1000_(5000), DIGITS4X1000_(6000), DIGITS4X1000_(7000),
    DIGITS4X1000_(8000), DIGITS4X1000_(9000)};

/* Length of the well-formed UTF-8 sequence at c (RFC 3629 section 4: no
 * overlong forms, no surrogates, nothing past U+10FFFF), 0 if there is none. */
static size_t utf8_len(const unsigned char *c)
{
    if (c[0] >= 0xc2 && c[0] <= 0xdf)
        return (c[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c[0] >= 0xe0 && c[0] <= 0xef) {
        unsigned lo = c[0] == 0xe0 ? 0xa0 : 0x80, hi = c[0] == 0xed ? 0x9f : 0xbf;
        return c[1] >= lo && c[1] <= hi && (c[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c[0] >= 0xf0 && c[0] <= 0xf4) {
        unsigned lo = c[0] == 0xf0 ? 0x90 : 0x80, hi = c[0] == 0xf4 ? 0x8f : 0xbf;
        return c[1] >= lo && c[1] <= hi && (c[2] & 0xc0) == 0x80 && (c[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* Escape s into buf until it ends or cap has no room for the next
 * character's text; returns the bytes written, *s moved past what was
 * escaped. A byte that is not part of well-formed UTF-8 (a file name may
 * hold any) becomes \udcXX, the lone surrogate Python's surrogateescape
 * (PEP 383) maps back to that byte: the text stays valid JSON and nothing
 * is lost. (The checks above stop at the terminating NUL: it is never a
 * continuation byte.) */
static size_t escape(const char **s, char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    const char *c = *s;
    while (*c) {
        unsigned char ch = (unsigned char)*c;
        size_t seq = ch < 0x80 ? 1 : utf8_len((const unsigned char *)c);
        size_t need = ch == '"' || ch == '\\' ? 2 : ch < 0x20 || !seq ? 6 : seq;
        if (cap - n < need)
            break;
        if (need == 2 && seq == 1) {
            buf[n++] = '\\';
            buf[n++] = (char)ch;
        } else if (!seq || (need == 6 && seq == 1)) {
            memcpy(buf + n, seq ? "\\u00" : "\\udc", 4);
            buf[n + 4] = hex[ch >> 4];
            buf[n + 5] = hex[ch & 15];
            n += 6;
        } else {
            memcpy(buf + n, c, seq);
            n += seq;
            c += seq;
            continue;
        }
        c++;
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
