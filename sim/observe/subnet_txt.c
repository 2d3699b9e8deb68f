/* subnet_txt.c - subnet.txt: the InfiniBand subnet as the subnet manager
 * set it up (net/subnet.c), in the two forms an IB engineer reads:
 * the topology as `ibnetdiscover` prints it (a block per switch and channel
 * adapter, one line per connected port with the peer's GUID, port, name,
 * LID and link width and speed) and each switch's linear forwarding table
 * as `ibroute` prints it (LID, output port, destination).
 *
 * GUIDs are made up from the node's place in the configuration:
 * 0x0002000000000000 + node index + 1 for a node, and its port GUID the
 * same for a channel adapter's single port.
 */
#include <inttypes.h>

#include "net/ib.h"
#include "observe/observe.h"

static uint64_t guid(uint32_t node) { return UINT64_C(0x0002000000000000) + node + 1; }

static const char *rate(const struct sim_port *p, char *buf, size_t cap)
{
    if (sim__ib_rate_name(p->p.rate, p->p.lanes, buf, cap))
        return buf;
    snprintf(buf, cap, "%gGbps", (double)p->p.rate / 1e9);
    return buf;
}

static uint32_t node_lid(const struct sim_network *net, const struct sim_node *n)
{
    if (n->kind == CFG_HOST)
        return sim__ib_host_lid(net, net->node_host[n->index]);
    return sim__ib_switch_lid(net, net->routes.slot_of_node[n->index]);
}

static void topology(const struct sim_network *net, FILE *f)
{
    const struct sim_config *cfg = net->cfg;
    char r[32];
    fprintf(f, "# Topology (ibnetdiscover)\n");
    for (size_t i = 0; i < cfg->nnodes; i++) {
        const struct sim_node *n = net->nodes[i];
        bool sw = n->kind == CFG_SWITCH;
        fprintf(f, "\n%s\t%u \"%c-%016" PRIx64 "\"\t\t# \"%s\"", sw ? "Switch" : "Ca", n->nports,
                sw ? 'S' : 'H', guid((uint32_t)i), cfg->nodes[i].name);
        if (sw)
            fprintf(f, " base port 0 lid %u lmc 0\n", node_lid(net, n));
        else
            fprintf(f, "\n");
        for (uint32_t p = 0; p < n->nports; p++) {
            const struct sim_port *port = n->ports[p];
            const struct sim_node *peer = port->peer->node;
            bool psw = peer->kind == CFG_SWITCH;
            fprintf(f, "[%u]", p + 1);
            if (!sw)
                fprintf(f, "(%016" PRIx64 ")", guid((uint32_t)i));
            fprintf(f, "\t\"%c-%016" PRIx64 "\"[%u]", psw ? 'S' : 'H', guid(peer->index),
                    port->peer->index + 1);
            if (!psw)
                fprintf(f, "(%016" PRIx64 ")", guid(peer->index));
            fprintf(f, "\t\t# ");
            if (!sw)
                fprintf(f, "lid %u lmc %u ", node_lid(net, n), cfg->ib.lmc);
            fprintf(f, "\"%s\" lid %u %s\n", cfg->nodes[peer->index].name, node_lid(net, peer),
                    rate(port, r, sizeof r));
        }
    }
}

static void forwarding(const struct sim_network *net, FILE *f)
{
    const struct sim_config *cfg = net->cfg;
    const struct sim_subnet *s = net->subnet;
    fprintf(f, "\n# Linear forwarding tables (ibroute), routing engine %s\n",
            sim__routing_name(cfg->routing));
    for (uint32_t slot = 0; slot < s->nswitch; slot++) {
        uint32_t node = s->switch_node[slot];
        const struct sim_node *sw = net->nodes[node];
        fprintf(f, "\nUnicast lids [0x1-0x%x] of switch Lid %u guid 0x%016" PRIx64 " (%s):\n",
                s->nlids - 1, sim__ib_switch_lid(net, slot), guid(node), cfg->nodes[node].name);
        fprintf(f, "  Lid  Out   Destination\n       Port     Info \n");
        uint32_t valid = 0;
        for (uint32_t lid = 1; lid < s->nlids; lid++) {
            uint16_t port = sim__ib_lft(net, sw, lid);
            if (port == SIM_IB_NO_PORT)
                continue;
            valid++;
            uint32_t hosts_lids = net->nhosts << cfg->ib.lmc;
            if (lid <= hosts_lids) {
                uint32_t h = (lid - 1) >> cfg->ib.lmc, dn = net->host_node[h];
                fprintf(f, "0x%04x %03u : (Channel Adapter portguid 0x%016" PRIx64 ": '%s')\n", lid, port,
                        guid(dn), cfg->nodes[dn].name);
            } else {
                uint32_t dn = s->switch_node[lid - 1 - hosts_lids];
                fprintf(f, "0x%04x %03u : (Switch portguid 0x%016" PRIx64 ": '%s')\n", lid, port, guid(dn),
                        cfg->nodes[dn].name);
            }
        }
        fprintf(f, "%u valid lids dumped \n", valid);
    }
}

void sim__subnet_write(const struct sim_network *net, FILE *f)
{
    fprintf(f, "# InfiniBand subnet: %u LIDs, LMC %u, %u data VLs, routing engine %s\n\n",
            net->subnet->nlids - 1, net->cfg->ib.lmc, net->cfg->ib.vls,
            sim__routing_name(net->cfg->routing));
    topology(net, f);
    forwarding(net, f);
}
