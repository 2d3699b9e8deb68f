/* fault.c - links that go down and come back up at configured times.
 *
 * Going down, a link loses what is on it: the frame each end is sending
 * and the frames propagating (port.c), the frames its ends' nodes have
 * queued for it, and the pauses it carried. Routes are then computed
 * again over the links that are up, at once and everywhere: the model
 * leaves routing protocol convergence out. Coming up, the ends may send
 * again and routes are computed once more.
 */
#include <stddef.h>
#include <stdlib.h>

#include "engine/util.h"
#include "net/ib.h"
#include "net/net.h"

struct fault_action {
    uint32_t link;
    bool up;
};

struct sim_faults {
    struct sim_component comp; /* first, for the downcast */
    struct sim_network *net;
    struct fault_action *actions; /* down and up of each configured fault */
    uint64_t fired;
};

enum { FAULT_EV_LINK, FAULT_EV_COUNT };
static const char *const fault_event_names[FAULT_EV_COUNT] = {"link-fault"};

static void faults_init(struct sim_component *c)
{
    struct sim_faults *fl = (struct sim_faults *)c;
    const struct cfg_fabric *f = &fl->net->cfg->fabric;
    fl->actions = sim__xcalloc(2 * f->nfaults, sizeof *fl->actions);
    for (uint32_t i = 0; i < f->nfaults; i++) {
        const struct cfg_fault *flt = &f->faults[i];
        fl->actions[2 * i] = (struct fault_action){flt->link, false};
        fl->actions[2 * i + 1] = (struct fault_action){flt->link, true};
        sim_schedule(c->sim, flt->down, c, FAULT_EV_LINK, &fl->actions[2 * i]);
        if (flt->up != SIM_TIME_NEVER)
            sim_schedule(c->sim, flt->up, c, FAULT_EV_LINK, &fl->actions[2 * i + 1]);
    }
}

static void apply(struct sim_network *net, uint32_t link, bool up)

{
    struct sim_port *ends[2] = {&net->ports[2 * (size_t)link], &net->ports[2 * (size_t)link + 1]};
    if (ends[0]->down == !up)
        return; /* overlapping faults of one link */
    sim_time_t now = sim_now(net->sim);
    /* a run split over MPI ranks applies every fault on every rank, for
     * the routes; each end's node is changed only where it runs */
    bool here[2];
    for (int e = 0; e < 2; e++)
        here[e] = !sim_component_remote(net->sim, &ends[e]->comp);
    for (int e = 0; e < 2; e++) {
        struct sim_port *p = ends[e];
        p->down = !up;
        if (up)
            continue;
        p->down_at = now;
        p->went_down = true;
        if (!here[e])
            continue;
        sim__port_flush(p);
        sim__port_link_down(p);
    }
    for (int e = 0; e < 2; e++) {
        struct sim_port *p = ends[e];
        if (!up && here[e] && p->node->nops->link_down)
            p->node->nops->link_down(p->node, p);
    }
    sim__routes_free(&net->routes);
    sim__routes_build(net);
    if (net->subnet)
        sim__subnet_build(net); /* the subnet manager sweeps again */
    for (int e = 0; up && e < 2; e++)
        if (here[e])
            sim__port_link_up(ends[e]);
    for (int e = 0; up && e < 2; e++) {
        struct sim_port *p = ends[e];
        if (here[e] && sim__port_idle(p) && p->node->nops->tx_ready)
            p->node->nops->tx_ready(p->node, p);
    }
}

static void faults_handle(struct sim_component *c, const struct sim_event *ev)
{
    const struct fault_action *a = ev->ptr;
    ((struct sim_faults *)c)->fired++;
    apply(((struct sim_faults *)c)->net, a->link, a->up);
}

static const struct sim_component_ops faults_ops = {
    .type = "faults",
    .event_names = fault_event_names,
    .nevents = FAULT_EV_COUNT,
    .init = faults_init,
    .handle = faults_handle,
};

void sim__faults_create(struct sim_network *net)
{
    if (!net->cfg->fabric.nfaults)
        return;
    struct sim_faults *fl = sim__xcalloc(1, sizeof *fl);
    fl->net = net;
    net->faults = fl;
    sim_component_add(net->sim, &fl->comp, &faults_ops, "faults");
    sim_component_set_domain(&fl->comp, SIM_DOMAIN_FIRST); /* net.h */
}

uint64_t sim__faults_fired(const struct sim_network *net)
{
    return net->faults ? net->faults->fired : 0;
}

void sim__faults_destroy(struct sim_network *net)
{
    if (!net->faults)
        return;
    free(net->faults->actions);
    free(net->faults);
    net->faults = NULL;
}
