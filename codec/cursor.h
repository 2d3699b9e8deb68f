/* cursor.h - the one bounds-checked reader every decode step goes through.
 *
 * `captured` is what the capture holds, `wire` what the frame had on the
 * wire. Running past `captured` is "truncated"; a length field that points
 * past `wire` is "malformed". Checking a range and then reading beyond it is
 * impossible by construction: take() hands out only the bytes it checked.
 */
#ifndef RDMA_CURSOR_H
#define RDMA_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct cursor {
    const uint8_t *start;
    size_t pos;
    size_t captured;
    size_t wire;
};

/* n bytes at the cursor, advancing past them; NULL if not all captured. */
static inline const uint8_t *take(struct cursor *c, size_t n)
{
    if (n > c->captured || c->pos > c->captured - n)
        return NULL;
    const uint8_t *p = c->start + c->pos;
    c->pos += n;
    return p;
}

#endif
