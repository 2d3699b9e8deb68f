/* fuzz_config.c - libFuzzer target: a configuration, the files it may
 * include and KEY=VALUE overrides through sim_config_load(), exactly as
 * `rdmasim sim --check` loads them; a configuration that loads is built
 * into a network and torn down.
 *
 * Input: up to five parts separated by NUL bytes: the configuration, then
 * the files it may name as topology.yaml, workload.yaml and sizes.cdf, then
 * overrides, one a line. The files are written to a directory of
 * their own; inputs holding '/' or '\' are skipped, so that no name (nor a
 * YAML escape that spells one) reaches outside it.
 *
 * Properties: a load that fails says why, as FILE:LINE:COL:, override
 * KEY=VALUE: or FILE: (one line); a network is only ever built for a configuration
 * the memory estimate admits under the max_memory set here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define MAX_SETS 8
#define MAX_MEMORY "max_memory=64MiB"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const part_names[] = {"config.yaml", "topology.yaml", "workload.yaml", "sizes.cdf"};
#define NFILES (sizeof part_names / sizeof part_names[0])

static char dir[64];
static char paths[NFILES][96];

static void require(int ok, const char *what, const char *err)
{
    if (!ok) {
        fprintf(stderr, "fuzz_config: property violated: %s: '%s'\n", what, err);
        abort();
    }
}

static void cleanup(void)
{
    for (size_t i = 0; i < NFILES; i++)
        unlink(paths[i]);
    rmdir(dir);
}

static int setup(void)
{
    if (dir[0])
        return 0;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/fuzz_config.XXXXXX", base);
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return -1;
    }
    for (size_t i = 0; i < NFILES; i++)
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, part_names[i]);
    atexit(cleanup);
    return 0;
}

static int write_part(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) || w != n ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, '/', size) || memchr(data, '\\', size) || setup())
        return 0;
    const uint8_t *part = data, *end = data + size;
    size_t i = 0;
    for (; i < NFILES; i++) {
        const uint8_t *nul = memchr(part, 0, (size_t)(end - part));
        const uint8_t *stop = nul ? nul : end;
        if (write_part(paths[i], part, (size_t)(stop - part)))
            return 0;
        part = nul ? nul + 1 : end;
    }
    /* overrides: what follows the last file, one a line, then the
     * memory limit, which overrides any the configuration sets itself */
    char sets_text[4096];
    size_t sn = (size_t)(end - part) < sizeof sets_text - 1 ? (size_t)(end - part) : sizeof sets_text - 1;
    memcpy(sets_text, part, sn);
    sets_text[sn] = 0;
    const char *sets[MAX_SETS + 1];
    size_t nsets = 0;
    for (char *save = NULL, *s = strtok_r(sets_text, "\n", &save); s && nsets < MAX_SETS;
         s = strtok_r(NULL, "\n", &save))
        sets[nsets++] = s;
    sets[nsets++] = MAX_MEMORY;

    char err[2048];
    struct sim_config *cfg = sim_config_load(paths[0], sets, nsets, err, sizeof err);
    if (!cfg) {
        require(err[0] && !strchr(err, '\n'), "one error line", err);
        require(!strncmp(err, dir, strlen(dir)) || !strncmp(err, "override ", 9),
                "the error names a file or an override", err);
        return 0;
    }
    sim_network_destroy(sim_network_create(cfg));
    sim_config_free(cfg);
    return 0;
}
