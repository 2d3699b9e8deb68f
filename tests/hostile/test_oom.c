/* test_oom.c - the simulator's allocation failure ends the process with a
 * message and exit status 2, never abort() (before: SIGABRT and a core,
 * on a path a configuration reaches), removing the run's temporaries
 * (before: a pcap open during the run stayed as NAME.pcap.tmp), and
 * sim__fopen_new does not follow a symbolic link planted at the name.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/util.h"
#include "observe/observe.h"
#include "../check_run.h"

/* Under AddressSanitizer an allocation that cannot be had ends the process
 * inside the sanitizer unless it may return NULL as malloc does: let it,
 * so that the sanitizer build tests the same path. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

START_TEST(allocation_failure_exits_2)
{
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        volatile size_t huge = SIZE_MAX / 2; /* no allocator has it */
        sim__xmalloc(huge);
        _exit(0);
    }
    close(pipefd[1]);
    /* all of it: a sanitizer may write its own warning first */
    char msg[4096] = "";
    size_t len = 0;
    ssize_t n;
    while (len < sizeof msg - 1 && (n = read(pipefd[0], msg + len, sizeof msg - 1 - len)) > 0)
        len += (size_t)n;
    msg[len] = 0;
    close(pipefd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    ck_assert_ptr_nonnull(strstr(msg, "out of memory"));
}
END_TEST

START_TEST(fopen_new_does_not_follow_links)
{
    char dir[] = "/tmp/rdmasim-oomXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char victim[64], tmp[64];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(tmp, sizeof tmp, "%s/out.tmp", dir);
    FILE *v = fopen(victim, "w");
    fputs("precious\n", v);
    fclose(v);
    ck_assert_int_eq(symlink(victim, tmp), 0);
    FILE *f = sim__fopen_new(tmp);
    ck_assert_ptr_nonnull(f);
    fputs("new\n", f);
    fclose(f);
    char buf[32] = "";
    v = fopen(victim, "r");
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, v));
    fclose(v);
    ck_assert_str_eq(buf, "precious\n");
    unlink(tmp);
    unlink(victim);
    rmdir(dir);
}
END_TEST

/* A pcap open (as during a run) and another temporary held, then an
 * allocation that fails: both are gone when the process has ended, and a
 * temporary released before is not touched. */
START_TEST(allocation_failure_removes_temporaries)
{
    char dir[] = "/tmp/rdmasim-oomXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char pcap[64], other[64], kept[64];
    snprintf(pcap, sizeof pcap, "%s/port.pcap", dir);
    snprintf(other, sizeof other, "%s/summary.json.tmp", dir);
    snprintf(kept, sizeof kept, "%s/done.tmp", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        char err[256];
        if (!sim__pcap_open(pcap, 65535, 0, SIM_PCAP_ETHERNET, NULL, err, sizeof err))
            _exit(4);
        struct sim_temp a = {0}, b = {0};
        FILE *f = sim__fopen_new(other), *g = sim__fopen_new(kept);
        if (!f || !g)
            _exit(5);
        sim__temp_hold(&a, other);
        sim__temp_hold(&b, kept);
        sim__temp_release(&b);
        volatile size_t huge = SIZE_MAX / 2;
        sim__xmalloc(huge);
        _exit(0);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.tmp", pcap);
    ck_assert_int_ne(access(tmp, F_OK), 0);
    ck_assert_int_ne(access(pcap, F_OK), 0);
    ck_assert_int_ne(access(other, F_OK), 0);
    ck_assert_int_eq(access(kept, F_OK), 0);
    unlink(kept);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *oom_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *c = tcase_create("util");
    tcase_add_test(c, allocation_failure_exits_2);
    tcase_add_test(c, fopen_new_does_not_follow_links);
    tcase_add_test(c, allocation_failure_removes_temporaries);
    suite_add_tcase(s, c);
    return s;
}

int main(void) { return check_run(oom_suite()); }
