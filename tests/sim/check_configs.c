/* check_configs.c - load many configurations in one process, each exactly
 * as `rdmasim sim --check` loads one (sim_config_load, then free), so the
 * tests of the loader's messages do not pay a process per case.
 *
 * Input, on stdin: one case a line, TAB-separated: the configuration's
 * path, then its --set overrides (KEY=VALUE), if any.
 * Output, on stdout, one line per case, flushed as it is done:
 *   ok
 *   error MESSAGE        the message `rdmasim sim` prints on stderr, with
 *                        any newline or backslash in it escaped (\n, \\)
 *                        so that one case stays one line
 * A case that crashes the loader ends the program: the lines written so
 * far say which case it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAX_SETS 64

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        if (n && line[n - 1] == '\n')
            line[--n] = 0;
        const char *sets[MAX_SETS];
        size_t nsets = 0;
        char *save = NULL, *path = strtok_r(line, "\t", &save);
        if (!path) {
            puts("error empty case");
            continue;
        }
        for (char *s; nsets < MAX_SETS && (s = strtok_r(NULL, "\t", &save));)
            sets[nsets++] = s;
        char err[2048] = "";
        struct sim_config *cfg = sim_config_load(path, sets, nsets, err, sizeof err);
        if (cfg) {
            puts("ok");
            sim_config_free(cfg);
        } else {
            fputs("error ", stdout);
            const char *p = err;
            /* a library that names an override "override KEY=VALUE" leaves
             * it to the command to name the option: --set, as rdmasim sim does */
            if (!strncmp(p, "override ", 9)) {
                fputs("--set ", stdout);
                p += 9;
            }
            for (; *p; p++) {
                if (*p == '\n')
                    fputs("\\n", stdout);
                else if (*p == '\\')
                    fputs("\\\\", stdout);
                else
                    putchar(*p);
            }
            putchar('\n');
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
