/* test_oom.c - the simulator's allocation failure ends the process with a
 * message and exit status 2, never abort() (before: SIGABRT and a core,
 * on a path a configuration reaches), and sim__fopen_new does not follow
 * a symbolic link planted at the name.
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

static Suite *oom_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *c = tcase_create("util");
    tcase_add_test(c, allocation_failure_exits_2);
    tcase_add_test(c, fopen_new_does_not_follow_links);
    suite_add_tcase(s, c);
    return s;
}

int main(void) { return check_run(oom_suite()); }
