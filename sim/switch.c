/* switch.c - a simple output-queued switch: one FIFO per port, tail drop.
 *
 * A frame is forwarded once it has fully arrived (store and forward): the
 * switch reads the Ethernet and IP headers with the codec, looks the
 * destination host up in its routes, picks among equal-cost ports with a
 * hash of the addresses and UDP source port, and queues the frame on that
 * port. Like a real switch it does not check the ICRC, so a frame with a
 * bit error travels on to the host, which drops it.
 *
 * The PFC/ECN fabric replaces this file's forwarding decision and queues.
 */
#include <stdlib.h>

#include "bytes.h"
#include "net.h"
#include "rdma_codec.h"
#include "util.h"

struct sim_switch {
    struct sim_node node;
    struct rdma_decode_config dcfg;
};

static bool dest_host(const struct sim_network *net, const struct rdma_pkt *pkt, uint32_t *src,
                      uint32_t *dst)
{
    uint32_t s, d;
    if (pkt->present & RDMA_HDR_IP) {
        s = get_be32(pkt->ip.src) - sim__host_ip4(0);
        d = get_be32(pkt->ip.dst) - sim__host_ip4(0);
    } else if (pkt->present & RDMA_HDR_IPV6) {
        s = get_be32(pkt->ipv6.src + 12) - 1;
        d = get_be32(pkt->ipv6.dst + 12) - 1;
    } else {
        return false;
    }
    if (d >= net->nhosts)
        return false;
    *src = s;
    *dst = d;
    return true;
}

static void sw_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f)
{
    struct sim_switch *sw = (struct sim_switch *)n;
    struct sim_network *net = n->net;
    struct rdma_pkt pkt;
    uint32_t src, dst, out;
    (void)in;
    enum rdma_status st = rdma_decode(&sw->dcfg, RDMA_LINKTYPE_ETHERNET, f->data, f->len, f->len, &pkt);
    if (st != RDMA_OK || !(pkt.present & RDMA_HDR_UDP) || !dest_host(net, &pkt, &src, &dst) ||
        (out = sim__route(net, n, dst, sim__flow_hash(src, dst, pkt.udp.srcport, n->index))) ==
            UINT32_MAX) {
        n->bad_frames++;
        sim__frame_free(&net->pool, f);
        return;
    }
    sim__port_send(n->ports[out], f);
}

static const struct sim_node_ops switch_node_ops = {
    .receive = sw_receive,
};

static void sw_fini(struct sim_component *c)
{
    struct sim_switch *sw = (struct sim_switch *)c;
    free(sw->node.ports);
    free(sw);
}

static const struct sim_component_ops switch_ops = {
    .type = "switch",
    .fini = sw_fini,
};

struct sim_node *sim__switch_create(struct sim_network *net, uint32_t index)
{
    struct sim_switch *sw = sim__xcalloc(1, sizeof *sw);
    rdma_decode_config_init(&sw->dcfg);
    sw->dcfg.verify_crc = false;
    sw->node.nops = &switch_node_ops;
    sw->node.net = net;
    sw->node.index = index;
    sw->node.kind = CFG_SWITCH;
    sim_component_add(net->sim, &sw->node.comp, &switch_ops, net->cfg->nodes[index].name);
    return &sw->node;
}
