/* nvswitch.c - a server's NVSwitch joining the GPUs beside its NICs, each
 * NIC a host of its own (the rail generator's sInR): the steps of a
 * hierarchical collective between two GPUs of one server go over it
 * instead of through the network.
 *
 *   s0n0 (gpu) ==NVLink==+               a step holds its source GPU's
 *   s0n1 (gpu) ==NVLink==+= NVSwitch     sending side and its destination's
 *   ...                  |               receiving side while it runs
 *   s0n7 (gpu) ==NVLink==+               (pcie/nvlink.c: max-min shares)
 *
 * A step's bytes are through when its shares have carried them; its data
 * is in the destination GPU's memory the switch's latency later, and the
 * steps waiting for it are posted there, as a receive completion posts
 * them for a step that came through the network. The hosts of one server
 * meet here and not only through links: they are one machine, whose GPUs
 * the NVSwitch joins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/collective.h"
#include "host/nic.h"
#include "pcie/pcie.h"

#define SIM_NVSWITCH_EVENTS(X)                                                 \
    X(END, "nvlink-end")     /* the next transfer's bytes are through */      \
    X(DELIVER, "nvlink-deliver") /* a step's data is in the destination GPU */

enum sim_nvswitch_event {
#define SIM__NVS_EV(name, str) SIM_NVSWITCH_##name,
    SIM_NVSWITCH_EVENTS(SIM__NVS_EV)
#undef SIM__NVS_EV
};

struct sim_nvswitch {
    struct sim_component comp;
    struct sim_network *net;
    const struct cfg_nvswitch *cfg;
    struct sim_nvlink *nv;
    struct sim_timer end; /* END: the next transfer's end */
    char *name;
};

static void arm(struct sim_nvswitch *sw)
{
    sim_time_t next = sim__nvlink_next(sw->nv);
    if (next != SIM_TIME_NEVER)
        sim_timer_arm(&sw->end, sw->comp.sim, next, &sw->comp, SIM_NVSWITCH_END, NULL);
}

void sim__nvswitch_send(struct sim_nvswitch *sw, uint32_t msg)
{
    const struct sim_config *cfg = sw->net->cfg;
    const struct cfg_msg *m = &cfg->msgs[msg];
    sim__nvlink_start(sw->nv, sim_now(sw->comp.sim), msg, cfg->nodes[m->src].nvlink_port,
                      cfg->nodes[m->dst].nvlink_port, m->size);
    /* the shares changed, so the end armed before may now come later */
    sim_timer_cancel(&sw->end);
    arm(sw);
}

static void deliver(struct sim_nvswitch *sw, uint32_t id)
{
    struct sim_network *net = sw->net;
    const struct cfg_msg *m = &net->cfg->msgs[id];
    struct sim_msg *msg = &net->msgs[id];
    struct sim_host *src = (struct sim_host *)net->nodes[m->src];
    struct sim_host *dst = (struct sim_host *)net->nodes[m->dst];
    const uint8_t *from = src->mrs[msg->lmr].bytes;
    uint8_t *to = dst->mrs[msg->rmr].bytes;
    if (from && to)
        memcpy(to, from, m->size);
    sim_time_t now = sim_now(sw->comp.sim);
    if (net->pcie) /* messages.csv's breakdown: all of it crossing, none in PCIe */
        net->pcie->stamps[id].arrived = net->pcie->stamps[id].delivered = now;
    msg->delivered = now;
    sim__msg_done(net, id, SIM_MSG_OK, now);
    sim__host_delivered(dst, id, now);
}

static void nvswitch_handle(struct sim_component *c, const struct sim_event *ev)
{
    struct sim_nvswitch *sw = (struct sim_nvswitch *)c;
    sim_time_t now = sim_now(c->sim);
    if (sim_event_kind(ev) == SIM_NVSWITCH_DELIVER) {
        deliver(sw, (uint32_t)((struct sim_msg *)ev->ptr - sw->net->msgs));
        return;
    }
    if (!sim_timer_fire(&sw->end, now))
        return;
    uint32_t done[64];
    size_t n;
    while ((n = sim__nvlink_finish(sw->nv, now, done, sizeof done / sizeof done[0]))) {
        for (size_t i = 0; i < n; i++)
            sim_schedule(c->sim, now + sw->cfg->latency, c, SIM_NVSWITCH_DELIVER,
                         &sw->net->msgs[done[i]]);
        if (n < sizeof done / sizeof done[0])
            break;
    }
    arm(sw);
}

static void nvswitch_fini(struct sim_component *c)
{
    struct sim_nvswitch *sw = (struct sim_nvswitch *)c;
    sim__nvlink_free(sw->nv);
    free(sw->name);
    free(sw);
}

static const char *const nvswitch_event_names[] = {
#define SIM__NVS_EV_NAME(name, str) str,
    SIM_NVSWITCH_EVENTS(SIM__NVS_EV_NAME)
#undef SIM__NVS_EV_NAME
};

static const struct sim_component_ops nvswitch_ops = {
    .type = "nvswitch",
    .event_names = nvswitch_event_names,
    .nevents = sizeof nvswitch_event_names / sizeof nvswitch_event_names[0],
    .handle = nvswitch_handle,
    .fini = nvswitch_fini,
};

void sim__nvswitches_create(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    bool used = false;
    for (size_t i = 0; !used && i < cfg->nmsgs; i++)
        used = cfg->msgs[i].nvlink;
    if (!used)
        return;
    net->nvswitches = sim__xcalloc(cfg->nnvswitches, sizeof *net->nvswitches);
    for (size_t i = 0; i < cfg->nnvswitches; i++) {
        struct sim_nvswitch *sw = sim__xcalloc(1, sizeof *sw);
        sw->net = net;
        sw->cfg = &cfg->nvswitches[i];
        sw->nv = sim__nvlink_new(sw->cfg->ports, sw->cfg->rate);
        sim_timer_init(&sw->end);
        char name[32];
        snprintf(name, sizeof name, "nvswitch%zu", i);
        sw->name = sim__xstrdup(name);
        sim_component_add(net->sim, &sw->comp, &nvswitch_ops, sw->name);
        sim_component_set_domain(&sw->comp, sim__nvswitch_domain(cfg, (uint32_t)i));
        net->nvswitches[i] = sw;
    }
}

struct sim_nvswitch *sim__nvswitch_of(const struct sim_network *net, uint32_t node)
{
    uint32_t k = net->cfg->nodes[node].nvswitch;
    return k && net->nvswitches ? net->nvswitches[k - 1] : NULL;
}
