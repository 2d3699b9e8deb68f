/* fault.c - links that go down and come back up at configured times.
 *
 * Going down, a link loses what is on it: the frame each end is sending
 * and the frames propagating (link.c), the frames its ends' nodes have
 * queued for it, and the pauses it carried. Routes are then computed
 * again over the links that are up, at once and everywhere: the model
 * leaves routing protocol convergence out. Coming up, the ends may send
 * again and routes are computed once more.
 */
#include <stddef.h>
#include <stdlib.h>

#include "fabric.h"
#include "util.h"

void sim__faults_init(struct sim_component *c)
{
    struct sim_fabric *fab = (struct sim_fabric *)((char *)c - offsetof(struct sim_fabric, faults));
    const struct cfg_fabric *f = &fab->net->cfg->fabric;
    fab->actions = sim__xcalloc(2 * f->nfaults, sizeof *fab->actions);
    for (uint32_t i = 0; i < f->nfaults; i++) {
        const struct cfg_fault *flt = &f->faults[i];
        fab->actions[2 * i] = (struct sim_fault_action){flt->link, false};
        fab->actions[2 * i + 1] = (struct sim_fault_action){flt->link, true};
        sim_schedule(c->sim, flt->down, c, SIM_EV_LINK_FAULT, &fab->actions[2 * i]);
        if (flt->up != SIM_TIME_NEVER)
            sim_schedule(c->sim, flt->up, c, SIM_EV_LINK_FAULT, &fab->actions[2 * i + 1]);
    }
}

void sim__fault_apply(struct sim_fabric *fab, uint32_t link, bool up)
{
    struct sim_network *net = fab->net;
    struct sim_port *ends[2] = {&net->ports[2 * (size_t)link], &net->ports[2 * (size_t)link + 1]};
    if (ends[0]->down == !up)
        return; /* overlapping faults of one link */
    sim_time_t now = sim_now(net->sim);
    for (int e = 0; e < 2; e++) {
        struct sim_port *p = ends[e];
        p->down = !up;
        if (up)
            continue;
        p->down_at = now;
        sim__port_flush(p);
        sim__pfc_link_down(p);
    }
    for (int e = 0; e < 2; e++) {
        struct sim_port *p = ends[e];
        if (!up && p->node->nops->link_down)
            p->node->nops->link_down(p->node, p);
    }
    sim__routes_free(&net->routes);
    sim__routes_build(net);
    for (int e = 0; up && e < 2; e++) {
        struct sim_port *p = ends[e];
        if (sim__port_idle(p) && p->node->nops->tx_ready)
            p->node->nops->tx_ready(p->node, p);
    }
}
