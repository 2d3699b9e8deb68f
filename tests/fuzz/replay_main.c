/* replay_main.c - run a fuzz target over saved inputs without libFuzzer, so
 * that every crash ever found stays a test: each argument is a file or a
 * directory of files. An input libFuzzer saved as a timeout (timeout-*)
 * fails unless it now runs in under TIMEOUT_CPU_SECONDS of CPU time: the
 * inputs are a few kilobytes, and a fixed one takes milliseconds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define TIMEOUT_CPU_SECONDS 0.5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = grown;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n);
    fclose(f);
    /* An exact-size copy, so that the sanitizers see any read past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, len);
    free(buf);
    clock_t t0 = clock();
    LLVMFuzzerTestOneInput(exact, len);
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    free(exact);
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (!strncmp(name, "timeout-", 8) && cpu > TIMEOUT_CPU_SECONDS) {
        fprintf(stderr, "%s: %.2f s of CPU, more than the %.1f s a saved timeout may take\n", path, cpu,
                TIMEOUT_CPU_SECONDS);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= run_file(argv[i]);
            count++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            failed |= run_file(path);
            count++;
        }
        closedir(d);
    }
    printf("%d inputs replayed\n", count);
    return failed;
}
