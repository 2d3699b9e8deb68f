/* telemetry.c - in-band telemetry a switch adds to a frame as it leaves an
 * egress port, for HPCC (Li et al., "HPCC: High Precision Congestion
 * Control", SIGCOMM 2019, section 3.1): into the IOAM pre-allocated trace
 * the sender put in the frame's IPv6 Hop-by-Hop header (RFC 9197 4.4, RFC
 * 9486; codec/ioam.c), when the trace is of the HPCC namespace.
 *
 * What the switch writes is what HPCC's ns-3 switch pushes at dequeue
 * (switch-node.cc, SwitchNotifyDequeue: time, bytes sent, queue length,
 * link rate), in the trace-type fields the namespace defines
 * (rdma_codec.h, RDMA_IOAM_NS_HPCC):
 *
 *   hop_lim, node_id    the frame's hop limit; the switch (its node index)
 *   ts_sec, ts_frac     now, seconds and nanoseconds (PTP format)
 *   ns_data             the egress link's rate, Mb/s
 *   queue_depth         octets queued at the egress port, all classes, after this frame
 *   ns_data_wide        octets the port has put on the wire before this
 *                       frame, with preamble, FCS and gap, so that their
 *                       rate over the link's is its utilization
 *
 * The Hop-by-Hop header lies outside the ICRC and the UDP checksum: the
 * frame stays valid.
 */
#include "fabric/fabric.h"
#include "rdma_bytes.h"
#include "rdma_codec.h"

#define IPV6_HLIM 7
#define NS_PER_S UINT64_C(1000000000)

void sim__telemetry_add(struct sim_switch *sw, struct sim_port *port, const struct sw_item *it)
{
    struct sim_frame *f = it->f;
    size_t at = rdma_ioam_find(f->data, f->len);
    if (!at || rdma_get_be16(f->data + at) != RDMA_IOAM_NS_HPCC)
        return;
    uint64_t ns = sim_now(sw->node.comp.sim) / SIM_NS;
    struct rdma_ioam_node n = {{0}};
    n.v[RDMA_IOAM_hop_lim] = f->data[(it->l3 & SW_L3_OFF) + IPV6_HLIM];
    n.v[RDMA_IOAM_node_id] = sw->node.index;
    n.v[RDMA_IOAM_ts_sec] = ns / NS_PER_S;
    n.v[RDMA_IOAM_ts_frac] = ns % NS_PER_S;
    n.v[RDMA_IOAM_ns_data] = port->p.rate / 1000000;
    n.v[RDMA_IOAM_queue_depth] = sw->sp[port->index].bytes;
    n.v[RDMA_IOAM_ns_data_wide] = port->st.tx_bytes + port->st.tx_frames * port->wire_extra;
    rdma_ioam_push(f->data, f->len, at, &n);
}
