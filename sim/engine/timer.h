/* timer.h - a deadline with at most one live event behind it.
 *
 * The event queue has no removal, so timers cancel lazily: arming a timer
 * for an earlier time than it is armed for schedules an event; arming it
 * for the same or a later time does nothing (the pending event comes
 * first); cancelling only forgets the time. When an event fires, the
 * handler asks sim_timer_fire whether it is the live one: an event that
 * finds its timer disarmed or armed for another time is stale and does
 * nothing. Components keep one struct sim_timer per deadline instead of a
 * bare "pending event at" field and the same few lines around it.
 */
#ifndef SIM_ENGINE_TIMER_H
#define SIM_ENGINE_TIMER_H

#include <stdbool.h>

#include "engine/engine.h"

struct sim_timer {
    sim_time_t at; /* when the live event fires, SIM_TIME_NEVER: disarmed */
};

static inline void sim_timer_init(struct sim_timer *t) { t->at = SIM_TIME_NEVER; }
static inline bool sim_timer_armed(const struct sim_timer *t) { return t->at != SIM_TIME_NEVER; }

/* Fire at `at` (event kind and ptr for `target`), unless already armed for
 * that time or earlier. */
static inline void sim_timer_arm(struct sim_timer *t, struct sim *sim, sim_time_t at,
                                 struct sim_component *target, unsigned kind, void *ptr)
{
    if (at >= t->at)
        return;
    t->at = at;
    sim_schedule(sim, at, target, kind, ptr);
}

static inline void sim_timer_cancel(struct sim_timer *t) { t->at = SIM_TIME_NEVER; }

/* An event of this timer fires at `now`: true when it is the live one,
 * which disarms the timer; false when it is stale. */
static inline bool sim_timer_fire(struct sim_timer *t, sim_time_t now)
{
    if (now != t->at)
        return false;
    t->at = SIM_TIME_NEVER;
    return true;
}

#endif
