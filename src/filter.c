/* filter.c - a small display filter over the members of decode's JSON
 * objects, in the manner of tshark's -Y:
 *
 *   expr    = or
 *   or      = and { ("||" | "or") and }
 *   and     = unary { ("&&" | "and") unary }
 *   unary   = ("!" | "not") unary | "(" expr ")" | test
 *   test    = path [ ("==" | "!=" | "<" | ">" | "<=" | ">=") value ]
 *   path    = name { "." name }             bth.opcode, ip.src, icrc.ok
 *   value   = number | "string" | word      4, 0x1f, 10.0.0.1, fe80::1, true
 *
 * A path alone tests that the member is there (`reth`, `error`). A path
 * names members from the top of the object down; through an array (vlan,
 * pfc.pause_time, mpa.markers) it names every element, and a test holds
 * when it holds for any of them, as in tshark. Numbers are unsigned 64-bit
 * integers, written in decimal or hex; a JSON string of 0x and hex digits
 * (64-bit values, CRCs) compares as the number it spells. Anything else
 * compares as text, exactly as the JSON writes it (addresses in lower
 * case, IPv6 compressed); true and false match JSON's. <, >, <= and >=
 * compare numbers only: with text or a boolean they do not hold.
 *
 * The matcher walks the JSON text as it is: decode writes each frame's
 * object once and the filter reads it, so every member --json shows can be
 * filtered on, and none is decoded twice.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

#define MAX_NODES 256
#define MAX_PATH 8

enum node_kind { N_OR, N_AND, N_NOT, N_TEST };
enum op { OP_PRESENT, OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };
enum lit_kind { L_NUM, L_TEXT, L_BOOL };

struct node {
    enum node_kind kind;
    int a, b; /* operands (node indices) */
    /* N_TEST */
    enum op op;
    unsigned npath;
    struct { const char *s; size_t n; } path[MAX_PATH];
    enum lit_kind lit;
    uint64_t num;
    bool boolean;
    const char *text;
    size_t text_len;
};

struct filter {
    char *src; /* the text the nodes point into */
    int root;
    unsigned nnodes;
    struct node node[MAX_NODES];
};

struct parser {
    struct filter *f;
    const char *p, *start;
    char *err;
    size_t errlen;
    bool failed;
};

static void fail(struct parser *ps, const char *what)
{
    if (ps->failed)
        return;
    ps->failed = true;
    snprintf(ps->err, ps->errlen, "%s at column %zu", what, (size_t)(ps->p - ps->start) + 1);
}

static void skip_space(struct parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

/* The symbol or keyword s next (a keyword not followed by a name character). */
static bool accept(struct parser *ps, const char *s)
{
    skip_space(ps);
    size_t n = strlen(s);
    if (strncmp(ps->p, s, n))
        return false;
    if (isalpha((unsigned char)s[0]) && (isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_'))
        return false;
    ps->p += n;
    return true;
}

static int new_node(struct parser *ps, enum node_kind kind, int a, int b)
{
    if (ps->f->nnodes == MAX_NODES) {
        fail(ps, "expression too long");
        return 0;
    }
    struct node *n = &ps->f->node[ps->f->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->a = a;
    n->b = b;
    return (int)ps->f->nnodes++;
}

static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A number in decimal or 0x hex that is the whole of s[0..n). */
static bool parse_number(const char *s, size_t n, uint64_t *v)
{
    int base = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
    size_t i = base == 16 ? 2 : 0;
    if (i == n)
        return false;
    uint64_t x = 0;
    for (; i < n; i++) {
        int d = isdigit((unsigned char)s[i]) ? s[i] - '0'
                : base == 16 && isxdigit((unsigned char)s[i]) ? tolower((unsigned char)s[i]) - 'a' + 10
                                                               : -1;
        if (d < 0 || x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        x = x * (uint64_t)base + (uint64_t)d;
    }
    *v = x;
    return true;
}

static void parse_value(struct parser *ps, struct node *n)
{
    skip_space(ps);
    const char *s = ps->p;
    if (*s == '"') {
        const char *e = strchr(s + 1, '"');
        if (!e) {
            fail(ps, "string without its closing quote");
            return;
        }
        n->lit = L_TEXT;
        n->text = s + 1;
        n->text_len = (size_t)(e - s - 1);
        ps->p = e + 1;
        return;
    }
    /* a word: a number, true or false, or text such as an address */
    while (name_char(*ps->p) || *ps->p == '.' || *ps->p == ':' || *ps->p == '-')
        ps->p++;
    size_t len = (size_t)(ps->p - s);
    if (!len) {
        fail(ps, "a value expected");
        return;
    }
    if (parse_number(s, len, &n->num)) {
        n->lit = L_NUM;
    } else if ((len == 4 && !strncmp(s, "true", 4)) || (len == 5 && !strncmp(s, "false", 5))) {
        n->lit = L_BOOL;
        n->boolean = len == 4;
    } else {
        n->lit = L_TEXT;
        n->text = s;
        n->text_len = len;
    }
}

static int parse_or(struct parser *ps);

static int parse_test(struct parser *ps)
{
    skip_space(ps);
    if (!isalpha((unsigned char)*ps->p) && *ps->p != '_') {
        fail(ps, "a member name expected");
        return 0;
    }
    int id = new_node(ps, N_TEST, 0, 0);
    if (ps->failed)
        return 0;
    struct node *n = &ps->f->node[id];
    do {
        const char *s = ps->p;
        while (name_char(*ps->p))
            ps->p++;
        if (ps->p == s || n->npath == MAX_PATH) {
            fail(ps, ps->p == s ? "a member name expected" : "member path too deep");
            return 0;
        }
        n->path[n->npath].s = s;
        n->path[n->npath++].n = (size_t)(ps->p - s);
    } while (*ps->p == '.' && ps->p++);
    static const struct { const char *sym; enum op op; } ops[] = {
        {"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT},
    };
    n->op = OP_PRESENT;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (accept(ps, ops[i].sym)) {
            n->op = ops[i].op;
            parse_value(ps, n);
            break;
        }
    return id;
}

static int parse_unary(struct parser *ps)
{
    if (ps->failed)
        return 0;
    if (accept(ps, "!") || accept(ps, "not"))
        return new_node(ps, N_NOT, parse_unary(ps), 0);
    if (accept(ps, "(")) {
        int e = parse_or(ps);
        if (!accept(ps, ")"))
            fail(ps, "')' expected");
        return e;
    }
    return parse_test(ps);
}

static int parse_and(struct parser *ps)
{
    int a = parse_unary(ps);
    while (!ps->failed && (accept(ps, "&&") || accept(ps, "and")))
        a = new_node(ps, N_AND, a, parse_unary(ps));
    return a;
}

static int parse_or(struct parser *ps)
{
    int a = parse_and(ps);
    while (!ps->failed && (accept(ps, "||") || accept(ps, "or")))
        a = new_node(ps, N_OR, a, parse_and(ps));
    return a;
}

struct filter *filter_compile(const char *text, char *err, size_t errlen)
{
    struct filter *f = calloc(1, sizeof *f);
    char *src = f ? strdup(text) : NULL;
    if (!src) {
        free(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->src = src;
    struct parser ps = {f, src, src, err, errlen, false};
    f->root = parse_or(&ps);
    skip_space(&ps);
    if (!ps.failed && *ps.p)
        fail(&ps, "unexpected text");
    if (ps.failed) {
        filter_free(f);
        return NULL;
    }
    return f;
}

void filter_free(struct filter *f)
{
    if (!f)
        return;
    free(f->src);
    free(f);
}

/* ---- matching: a walk over the JSON text -------------------------------- */

struct json {
    const char *p, *end;
};

static void ws(struct json *j)
{
    while (j->p < j->end && isspace((unsigned char)*j->p))
        j->p++;
}

/* Past the string at j->p (its opening quote). */
static void skip_string(struct json *j)
{
    for (j->p++; j->p < j->end && *j->p != '"'; j->p++)
        if (*j->p == '\\')
            j->p++;
    if (j->p < j->end)
        j->p++;
}

/* Past the value at j->p. */
static void skip_value(struct json *j)
{
    ws(j);
    if (j->p >= j->end)
        return;
    if (*j->p == '"') {
        skip_string(j);
        return;
    }
    if (*j->p == '{' || *j->p == '[') {
        int depth = 0;
        while (j->p < j->end) {
            char c = *j->p;
            if (c == '"') {
                skip_string(j);
                continue;
            }
            j->p++;
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return;
        }
        return;
    }
    while (j->p < j->end && *j->p != ',' && *j->p != '}' && *j->p != ']')
        j->p++;
}

/* Whether one JSON value [s, e) passes the test. */
static bool test_value(const struct node *n, const char *s, const char *e)
{
    if (n->op == OP_PRESENT)
        return true;
    uint64_t num;
    bool is_num = false, is_bool = false, boolean = false;
    const char *text = s;
    size_t len = (size_t)(e - s);
    if (*s == '"') {
        text = s + 1;
        len = len >= 2 ? len - 2 : 0;
        is_num = len > 2 && text[0] == '0' && text[1] == 'x' && parse_number(text, len, &num);
    } else if (*s == 't' || *s == 'f') {
        is_bool = true;
        boolean = *s == 't';
    } else if (*s == '{' || *s == '[') {
        return false;
    } else {
        is_num = parse_number(s, len, &num);
    }
    int cmp;
    if (n->lit == L_NUM && is_num)
        cmp = num < n->num ? -1 : num > n->num;
    else if (n->op == OP_EQ || n->op == OP_NE) {
        bool eq = n->lit == L_BOOL ? is_bool && boolean == n->boolean
                  : n->lit == L_TEXT ? !is_bool && len == n->text_len && !memcmp(text, n->text, len)
                                     : false;
        return eq == (n->op == OP_EQ);
    } else {
        return false;
    }
    switch (n->op) {
    case OP_EQ: return cmp == 0;
    case OP_NE: return cmp != 0;
    case OP_LT: return cmp < 0;
    case OP_GT: return cmp > 0;
    case OP_LE: return cmp <= 0;
    case OP_GE: return cmp >= 0;
    case OP_PRESENT: break;
    }
    return true;
}

/* Whether the value at j->p, reached through path[0..depth), or any
 * element of it when it is an array, passes; j->p ends past the value. */
static bool visit(const struct node *n, struct json *j, unsigned depth)
{
    ws(j);
    if (j->p >= j->end)
        return false;
    const char *s = j->p;
    if (*s == '[') {
        bool any = false;
        j->p++;
        for (;;) {
            ws(j);
            if (j->p >= j->end || *j->p == ']')
                break;
            any |= visit(n, j, depth);
            ws(j);
            if (j->p < j->end && *j->p == ',')
                j->p++;
        }
        if (j->p < j->end)
            j->p++;
        return any || (depth == n->npath && n->op == OP_PRESENT);
    }
    if (depth == n->npath) {
        skip_value(j);
        return test_value(n, s, j->p);
    }
    if (*s != '{') {
        skip_value(j);
        return false;
    }
    bool any = false;
    j->p++;
    for (;;) {
        ws(j);
        if (j->p >= j->end || *j->p != '"')
            break;
        const char *k = j->p + 1;
        skip_string(j);
        size_t klen = (size_t)(j->p - k - 1);
        ws(j);
        if (j->p < j->end && *j->p == ':')
            j->p++;
        if (klen == n->path[depth].n && !memcmp(k, n->path[depth].s, klen))
            any |= visit(n, j, depth + 1);
        else
            skip_value(j);
        ws(j);
        if (j->p < j->end && *j->p == ',')
            j->p++;
    }
    if (j->p < j->end)
        j->p++;
    return any;
}

static bool eval(const struct filter *f, int id, const char *json, size_t len)
{
    const struct node *n = &f->node[id];
    switch (n->kind) {
    case N_OR: return eval(f, n->a, json, len) || eval(f, n->b, json, len);
    case N_AND: return eval(f, n->a, json, len) && eval(f, n->b, json, len);
    case N_NOT: return !eval(f, n->a, json, len);
    case N_TEST: break;
    }
    struct json j = {json, json + len};
    return visit(n, &j, 0);
}

bool filter_match(const struct filter *f, const char *json, size_t len)
{
    return eval(f, f->root, json, len);
}
