/* util.c - allocation that cannot fail quietly, and files nobody else can
 * redirect. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/util.h"

/* The temporaries open in the process (see util.h). */
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_temp *temps;

void sim__temp_hold(struct sim_temp *t, const char *path)
{
    pthread_mutex_lock(&temps_lock);
    t->path = path;
    t->prev = NULL;
    t->next = temps;
    if (temps)
        temps->prev = t;
    temps = t;
    pthread_mutex_unlock(&temps_lock);
}

void sim__temp_release(struct sim_temp *t)
{
    if (!t->path)
        return;
    pthread_mutex_lock(&temps_lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        temps = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->path = NULL;
    t->prev = t->next = NULL;
    pthread_mutex_unlock(&temps_lock);
}

/* Out of memory ends the process with a message and status 2, as any
 * error a configuration can lead to does: not abort(), which would dump
 * core and end with SIGABRT. Outputs are only ever renamed into place once
 * complete, so none is left half-written, and the temporaries still open
 * (pcaps written during the run, outputs being written) are removed. */
static void *check(void *p, size_t n)
{
    if (!p && n) {
        pthread_mutex_lock(&temps_lock);
        for (struct sim_temp *t = temps; t; t = t->next)
            unlink(t->path);
        temps = NULL;
        pthread_mutex_unlock(&temps_lock);
        fprintf(stderr, "librdmasim: out of memory (%zu bytes more could not be had); the run ends without "
                        "outputs (the max_memory key sets the limit the estimate is checked against)\n",
                n);
        exit(2);
    }
    return p;
}

FILE *sim__fopen_new(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) || S_ISREG(st.st_mode)))
        unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(path);
        errno = e;
    }
    return f;
}

void *sim__xmalloc(size_t n) { return check(malloc(n ? n : 1), n); }

void *sim__xaligned(size_t align, size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1))
        p = NULL;
    return check(p, n);
}

void *sim__xmap_aligned(size_t align, size_t n)
{
    size_t len = n + align;
    if (len < n)
        return check(NULL, SIZE_MAX);
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return check(NULL, n);
    /* keep the aligned n bytes, give back what lies before and after */
    size_t head = (align - (uintptr_t)p % align) % align, tail = len - head - n;
    if (head)
        munmap(p, head);
    if (tail)
        munmap(p + head + n, tail);
    return p + head;
}

void sim__huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t from = ((uintptr_t)p + huge - 1) & ~(huge - 1), to = ((uintptr_t)p + n) & ~(huge - 1);
    if (to > from)
        madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

/* Linux's (6.1), which older C libraries' headers do not name yet */
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

void sim__huge_collapse(const void *p, size_t n)
{
#if defined(MADV_HUGEPAGE) && defined(MADV_COLLAPSE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t from = ((uintptr_t)p + huge - 1) & ~(huge - 1), to = ((uintptr_t)p + n) & ~(huge - 1);
    if (to > from) {
        madvise((void *)from, to - from, MADV_HUGEPAGE);
        madvise((void *)from, to - from, MADV_COLLAPSE);
    }
#else
    (void)p;
    (void)n;
#endif
}

void sim__huge_heap(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return;
    char line[512];
    unsigned long from = 0, to = 0;
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &from, &to) == 2)
            break;
    fclose(maps);
    if (to > from)
        sim__huge_collapse((const void *)from, to - from);
}

void sim__unmap(void *p, size_t n)
{
    if (p)
        munmap(p, n);
}

void *sim__xcalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return check(NULL, SIZE_MAX);
    return check(calloc(n ? n : 1, size ? size : 1), n * size);
}

void *sim__xrealloc(void *p, size_t n) { return check(realloc(p, n ? n : 1), n); }

char *sim__xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sim__xmalloc(n), s, n);
}

char *sim__xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = sim__xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    return s;
}

void sim__grow(void *arrp, size_t *cap, size_t n, size_t size)
{
    void **arr = arrp;
    if (n < *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c <= n)
        c *= 2;
    if (c > SIZE_MAX / size)
        check(NULL, SIZE_MAX);
    *arr = sim__xrealloc(*arr, c * size);
    memset((char *)*arr + *cap * size, 0, (c - *cap) * size);
    *cap = c;
}
