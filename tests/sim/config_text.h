/* config_text.h - a configuration given as text, loaded through a file as
 * a user's would be: for C tests that reach into a network before it runs
 * (sim/ headers), where the Python tests cannot. */
#ifndef TESTS_SIM_CONFIG_TEXT_H
#define TESTS_SIM_CONFIG_TEXT_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

static inline struct sim_config *config_text_load(const char *text)
{
    char path[] = "/tmp/rdmasim-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[1024];
    struct sim_config *cfg = sim_config_load(path, NULL, 0, err, sizeof err);
    unlink(path);
    if (!cfg)
        ck_abort_msg("%s", err);
    return cfg;
}

#endif
