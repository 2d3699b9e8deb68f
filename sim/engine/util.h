/* util.h - allocation and small functions that librdmasim's files share.
 *
 * Running out of memory is not an input error the simulator can report
 * with a position, so allocation failures end the process with a message
 * and exit status 2 (never abort()).
 */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void *sim__xmalloc(size_t n);
void *sim__xcalloc(size_t n, size_t size);
void *sim__xaligned(size_t align, size_t n); /* free() it */
/* n zeroed bytes mapped from the kernel, aligned to align (a power of two
 * and a multiple of the page size) without reserving more address space
 * than n, which posix_memalign would; release with sim__unmap. */
void *sim__xmap_aligned(size_t align, size_t n);
void sim__unmap(void *p, size_t n);
/* Ask for transparent huge pages over the 2 MiB pages that lie whole in
 * [p, p + n), before they are first touched: a large fabric's model state
 * spans hundreds of megabytes, and on 4 KiB pages nearly every structure a
 * frame reads costs a TLB miss too (a walk of the page tables, dearer
 * under a hypervisor). The kernel takes it as a hint (THP "madvise"). */
void sim__huge_hint(void *p, size_t n);
/* The same for memory already written, which a hint alone leaves on its
 * 4 KiB pages: the whole 2 MiB pages in [p, p + n) are hinted and
 * collapsed onto huge pages at once (MADV_COLLAPSE, Linux 6.1). A no-op
 * where the kernel cannot. */
void sim__huge_collapse(const void *p, size_t n);
/* sim__huge_collapse over the process's heap, once a large model is set
 * up: its small allocations (hosts, queue pairs, their rings, the
 * configuration's strings). What the heap grows by later is not (the
 * kernel maps it anew, without the hint). */
void sim__huge_heap(void);
void *sim__xrealloc(void *p, size_t n);
char *sim__xstrdup(const char *s);
/* printf into a new string */
char *sim__xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new file at path for writing, which nobody else can redirect: a
 * symbolic link or a file left there (the run's own temporary name) is
 * removed, then the file is created with O_CREAT|O_EXCL|O_NOFOLLOW, so a
 * link planted in between makes it fail rather than be followed. NULL with
 * errno set on failure. */
FILE *sim__fopen_new(const char *path);

/* A file being written under a temporary name, held on a list for the
 * life of the process, so that an exit on out of memory (which cannot
 * return to the writer) removes it. The list is the one state librdmasim
 * keeps outside a struct sim: exit() ends every simulation in the process
 * at once, so what it must clean up is the process's. The node lives in
 * its writer; hold it once the file exists and release it before the file
 * is renamed into place or removed. */
struct sim_temp {
    const char *path;
    struct sim_temp *prev, *next;
};
void sim__temp_hold(struct sim_temp *t, const char *path);
void sim__temp_release(struct sim_temp *t);

/* Grow *arr (of *cap elements of size `size`) so that index n fits. */
void sim__grow(void *arrp, size_t *cap, size_t n, size_t size);
#define SIM_GROW(arr, cap, n) sim__grow(&(arr), &(cap), (n), sizeof *(arr))

/* 64-bit mixing (splitmix64 finalizer), for hashes and seeds. */
static inline uint64_t sim__mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* FNV-1a, for names. */
static inline uint64_t sim__hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* Serialization time of `bytes` at `rate_bps`, rounded up to a picosecond. */
static inline uint64_t sim__ser_time(uint64_t bytes, uint64_t rate_bps)
{
    unsigned __int128 bits = (unsigned __int128)bytes * 8 * UINT64_C(1000000000000);
    return (uint64_t)((bits + rate_bps - 1) / rate_bps);
}

#endif
