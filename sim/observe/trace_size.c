/* trace_size.c - how large the pcap files of a run will be, told before
 * the run so that a trace of a long run does not fill a disk unannounced.
 *
 * Each message's frames are followed along the path the switches choose
 * (ideal.c): its data packets one way and its acknowledgements (one per
 * ack_request_every packets and one at the end) the other, each counted in
 * the file of every traced port on the way, cut to the snap length, with
 * its pcap record header. Retransmissions, PFC frames and CNPs come on
 * top, so this is the size of a run without trouble.
 */
#include <stdlib.h>

#include "engine/util.h"
#include "host/nic.h"
#include "observe/ideal.h"
#include "observe/observe.h"
#include "sim.h"

/* The BTH and the largest extended headers of a first packet (RETH with
 * immediate data), above the transport's framing. */
#define RC_HEADERS (12 + 16 + 4)

static bool traced(const struct sim_network *net, const struct sim_port *p)
{
    return net->cfg->nodes[p->node->index].trace || net->cfg->links[p->link].trace;
}

/* n frames of len bytes along path, into the files of its traced ports. */
static void along(const struct sim_network *net, const struct sim_path *path, uint64_t n, uint64_t len,
                  uint64_t *bytes)
{
    /* an InfiniBand trace holds ERF records, 16 bytes of header each */
    uint64_t rec = PCAP_RECORD_HEADER + (net->subnet ? 16 : 0) +
                   (len < net->cfg->snaplen ? len : net->cfg->snaplen);
    for (uint32_t h = 0; h < path->n; h++) {
        const struct sim_port *ends[2] = {path->hop[h].port, path->hop[h].port->peer};
        for (int e = 0; e < 2; e++)
            if (traced(net, ends[e]))
                bytes[ends[e] - net->ports] += n * rec;
    }
}

static void message(const struct sim_network *net, size_t id, uint64_t *bytes)
{
    const struct cfg_msg *m = &net->cfg->msgs[id];
    const struct sim_conn *c = &net->conns[net->msgs[id].conn];
    int req = c->host[0] == m->src ? 0 : 1;
    const struct sim_qp *rq = c->qp[req], *rs = c->qp[1 - req];
    struct sim_path fwd, rev;
    sim__path(net, net->node_host[m->src], net->node_host[m->dst], rq->sport, &fwd);
    sim__path(net, net->node_host[m->dst], net->node_host[m->src], rs->sport, &rev);
    uint64_t hdr = rq->nic->transport->overhead(rq->nic) + RC_HEADERS;
    uint64_t mtu = rq->mtu, full = m->size / mtu, rest = m->size % mtu;
    uint64_t pkts = sim__op_is_atomic(m->op) ? 1 : full + (rest || !full);
    uint64_t every = net->cfg->nic.ack_request_every;
    /* a READ's data comes back; its request goes out in one packet */
    const struct sim_path *data = m->op == SIM_OP_READ ? &rev : &fwd;
    const struct sim_path *acks = m->op == SIM_OP_READ ? &fwd : &rev;
    along(net, data, full, hdr + mtu, bytes);
    if (rest || !full)
        along(net, data, 1, hdr + rest, bytes);
    along(net, acks, 1 + (every && m->op != SIM_OP_READ ? pkts / every : 0), hdr, bytes);
    sim__path_free(&fwd);
    sim__path_free(&rev);
}

uint64_t sim_network_trace_estimate(const struct sim_network *net, size_t *files)
{
    const struct sim_config *cfg = net->cfg;
    uint64_t *bytes = sim__xcalloc(net->nports, sizeof *bytes);
    *files = 0;
    for (size_t i = 0; i < net->nports; i++)
        if (traced(net, &net->ports[i])) {
            bytes[i] = PCAP_FILE_HEADER;
            ++*files;
        }
    for (size_t i = 0; *files && i < net->nmsgs; i++)
        if (!net->cfg->msgs[i].nvlink) /* over an NVSwitch: no frame */
            message(net, i, bytes);
    uint64_t total = 0;
    for (size_t i = 0; i < net->nports; i++) {
        uint64_t b = bytes[i];
        if (cfg->stop != SIM_TIME_NEVER) {
            /* a port cannot see more than its link carries both ways by
             * the stop time; record headers add at most a quarter (16 bytes
             * to a 64-byte frame) */
            unsigned __int128 most = (unsigned __int128)net->ports[i].p.rate * cfg->stop / SIM_S / 8 * 2 * 5 / 4;
            if (most < b)
                b = (uint64_t)most + PCAP_FILE_HEADER;
        }
        if (cfg->trace_limit && b > cfg->trace_limit)
            b = cfg->trace_limit;
        total += b;
    }
    free(bytes);
    return total;
}
