/* filter.h - `rdmasim decode --filter`: which frames to show, an expression
 * over the members of the frame's JSON object (filter.c, README.md). */
#ifndef RDMASIM_FILTER_H
#define RDMASIM_FILTER_H

#include <stdbool.h>
#include <stddef.h>

struct filter;

/* The compiled expression, or NULL with what is wrong (and where) in err. */
struct filter *filter_compile(const char *text, char *err, size_t errlen);
/* Whether the JSON object of one frame (one line of decode --json) matches.
 * Reads only: worker threads share one filter. */
bool filter_match(const struct filter *f, const char *json, size_t len);
void filter_free(struct filter *f);

#endif
