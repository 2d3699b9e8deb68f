/* slowest.c - the N slowest completed messages, a min-heap on latency so
 * that each completion costs O(log N) and memory stays at N. */
#include <stdlib.h>

#include "report.h"

static uint64_t lat(const struct slow_entry *e)
{
    return e->m.t_done - e->m.t_first;
}

static void swap(struct slow_entry *a, struct slow_entry *b)
{
    struct slow_entry t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(struct slow_list *s, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < s->n && lat(&s->v[l]) < lat(&s->v[m]))
            m = l;
        if (l + 1 < s->n && lat(&s->v[l + 1]) < lat(&s->v[m]))
            m = l + 1;
        if (m == i)
            return;
        swap(&s->v[i], &s->v[m]);
        i = m;
    }
}

void slow_offer(struct report *r, const struct rdma_replay_msg *m, uint32_t flow)
{
    struct slow_list *s = &r->slow;
    uint32_t top = r->opts->top;
    if (!top)
        return;
    if (!s->v && !(s->v = calloc(top, sizeof *s->v))) {
        r->oom = true;
        return;
    }
    struct slow_entry e = {*m, flow};
    if (s->n < top) {
        uint32_t i = s->n++;
        s->v[i] = e;
        while (i && lat(&s->v[(i - 1) / 2]) > lat(&s->v[i])) {
            swap(&s->v[i], &s->v[(i - 1) / 2]);
            i = (i - 1) / 2;
        }
    } else if (lat(&e) > lat(&s->v[0])) {
        s->v[0] = e;
        sift_down(s, 0);
    }
}

static int slower_first(const void *a, const void *b)
{
    uint64_t x = lat(a), y = lat(b);
    if (x != y)
        return x < y ? 1 : -1;
    const struct slow_entry *p = a, *q = b;
    return p->m.f_first < q->m.f_first ? -1 : p->m.f_first > q->m.f_first;
}

void slow_sort(struct slow_list *s)
{
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, slower_first);
}
