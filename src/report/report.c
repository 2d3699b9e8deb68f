/* report.c - `rdmasim report DIR`: one HTML page from the outputs of a
 * run (summary.json and the CSV files of docs/config.md, Outputs).
 *
 * The page is self-contained: the run's files go into it as text, inside
 * a JSON object in a script element, and the page's own script
 * (page.html, compiled in as page.h) draws every chart from them as
 * inline SVG. Nothing is fetched when it is read, so it can be mailed or
 * opened from an archive. The page is written under a temporary name and
 * renamed into place once complete.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli.h"

static const char page[] =
#include "page.h"
    ;

#define DATA_MARK "<!-- rdmasim data -->\n"
/* Each file is embedded up to this size, cut at a line's end: a browser
 * draws that much quickly, and the page says what was left out. */
#define FILE_CAP (16u << 20)

static const char *const inputs[] = {"summary.json", "messages.csv", "ports.csv", "pfc.csv",
                                     "qlen.csv",     "rates.csv",    "pcie.csv"};

static void usage(FILE *f)
{
    fprintf(f, "usage: rdmasim report DIR [--out FILE]\n"
               "\n"
               "Write one self-contained HTML page from the outputs of `rdmasim sim --out DIR`:\n"
               "the summary, completion-time slowdown by message size (p50, p95, p99), goodput\n"
               "per flow, switch queues, PFC pauses and the PCIe breakdown, on one time axis.\n"
               "  -o, --out FILE   where to write it (default: DIR/report.html)\n"
               "  -h, --help       this text\n");
}

/* A JSON string of text, with '<' escaped so that no "</script" can end
 * the element it sits in. */
static void json_text(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == '<' || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* The file's text, at most FILE_CAP bytes ending at a line's end (*cut
 * set when more was left out); NULL with errno when it cannot be read. */
static char *slurp(const char *path, size_t *len, bool *cut)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(FILE_CAP + 1);
    size_t n = buf ? fread(buf, 1, FILE_CAP + 1, f) : 0;
    int err = buf && ferror(f) ? EIO : ENOMEM;
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = err;
        return NULL;
    }
    *cut = n > FILE_CAP;
    if (*cut) {
        n = FILE_CAP;
        while (n > 0 && buf[n - 1] != '\n')
            n--;
    }
    *len = n;
    return buf;
}

/* The page with the run's files in place of DATA_MARK; 0, or -1 having
 * said why on stderr. */
static int write_page(FILE *f, const char *dir)
{
    const char *mark = strstr(page, DATA_MARK);
    fwrite(page, 1, (size_t)(mark - page), f);
    fputs("{\"dir\": ", f);
    json_text(f, dir, strlen(dir));
    fputs(", \"files\": {", f);
    char cuts[512] = "";
    size_t ncut = 0;
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        char *path = malloc(strlen(dir) + strlen(inputs[i]) + 2);
        if (!path)
            return -1;
        sprintf(path, "%s/%s", dir, inputs[i]);
        size_t len;
        bool cut;
        char *text = slurp(path, &len, &cut);
        if (!text && (i == 0 || errno != ENOENT)) {
            if (i == 0 && errno == ENOENT)
                fprintf(stderr, "rdmasim report: %s: no summary.json; give the --out directory of a "
                                "finished `rdmasim sim` run\n", dir);
            else
                fprintf(stderr, "rdmasim report: %s: %s\n", path, strerror(errno));
            free(path);
            return -1;
        }
        free(path);
        if (!text)
            continue; /* an output the run did not write (pcie.csv) */
        fprintf(f, "%s\n\"%s\": ", i ? "," : "", inputs[i]);
        json_text(f, text, len);
        free(text);
        if (cut)
            ncut += (size_t)snprintf(cuts + ncut, sizeof cuts - ncut, "%s\"%s\": %u", ncut ? ", " : "",
                                     inputs[i], FILE_CAP);
    }
    fprintf(f, "}, \"cut\": {%s}}\n", cuts);
    fputs(mark + strlen(DATA_MARK), f);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return EXIT_OK;
        } else {
            fprintf(stderr, "rdmasim report: see 'rdmasim report --help'\n");
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "rdmasim report: give one directory, the --out of a `rdmasim sim` run "
                        "(see 'rdmasim report --help')\n");
        return EXIT_USAGE;
    }
    const char *dir = argv[optind];
    char *path = NULL, *tmp = NULL;
    if (out)
        path = strdup(out);
    else if ((path = malloc(strlen(dir) + sizeof "/report.html")))
        sprintf(path, "%s/report.html", dir);
    if (path && (tmp = malloc(strlen(path) + sizeof ".tmp")))
        sprintf(tmp, "%s.tmp", path);
    int rc = EXIT_USAGE;
    FILE *f = tmp ? fopen(tmp, "w") : NULL;
    if (!f) {
        fprintf(stderr, "rdmasim report: %s: %s\n", tmp ? tmp : dir, strerror(errno));
    } else {
        bool ok = write_page(f, dir) == 0;
        bool werr = ferror(f) != 0;
        if (fclose(f) || werr) {
            if (ok)
                fprintf(stderr, "rdmasim report: %s: %s\n", tmp, strerror(errno));
            ok = false;
        }
        if (ok && rename(tmp, path)) {
            fprintf(stderr, "rdmasim report: %s: %s\n", path, strerror(errno));
            ok = false;
        }
        if (!ok)
            remove(tmp);
        else
            rc = EXIT_OK;
    }
    if (rc == EXIT_OK)
        printf("%s\n", path);
    free(path);
    free(tmp);
    return rc;
}
