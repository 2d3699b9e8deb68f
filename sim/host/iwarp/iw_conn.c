/* iw_conn.c - an iWARP queue pair's connection: its TCP endpoint, the MPA
 * Request/Reply exchange (RFC 5044 7.1, revision 1), and its frames
 * between the NIC and the endpoint.
 *
 *   initiator (active)                      responder (passive)
 *   SYN ------------------------------------>
 *   <------------------------------- SYN,ACK
 *   ACK, MPA Request (M: markers wanted, C) ->
 *   <------------------- MPA Reply (M, C), FPDUs may follow at once
 *   FPDUs (only once the Reply arrived) ---->
 *
 * Each side's M bit says whether it wants markers in what it receives
 * (RFC 5044 7.1.2); CRC is always offered, so both directions use it.
 * Markers count from the first octet after the sender's MPA frame (the
 * first FPDU's, RFC 5044 4.3 as DESIGN.md notes).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "host/iwarp/iwarp.h"
#include "rdma_bytes.h"

#define ETH_LEN 14
#define TCP_LEN 20

static struct sim_iw *iw_of(struct sim_qp *qp) { return qp->iw; }

static void established(struct sim_qp *qp, uint32_t snd_seq, uint32_t rcv_seq)
{
    struct sim_iw *iw = iw_of(qp);
    (void)snd_seq;
    iw->acc_seq = rcv_seq;
    if (iw->sockets) /* sockets: the bytes follow at once */
        iw->tx_ready = iw->rx_ready = true;
    else if (iw->tcp.active)
        iw->mpa_tx_due = true; /* the initiator speaks first */
}

static void failed(struct sim_qp *qp) { sim__iw_error(qp, SIM_MSG_RETRY_EXCEEDED); }

static const struct sim_tcp_ulp_ops iw_ulp = {
    .next = sim__iw_next,
    .fill = sim__iw_fill,
    .acked = sim__iw_acked,
    .deliver = sim__iw_deliver,
    .established = established,
    .failed = failed,
};

void sim__iw_attach(struct sim_qp *qp, bool active, uint16_t lport, uint16_t rport, uint32_t mss,
                    uint32_t iss)
{
    struct sim_iw *iw = sim__xcalloc(1, sizeof *iw);
    qp->iw = iw;
    iw->sockets = qp->p->transport == CFG_TRANSPORT_TCP;
    iw->want_markers = qp->p->mpa_markers && !iw->sockets;
    for (int q = 0; q < SIM_IW_QUEUES; q++)
        iw->msn_tx[q] = iw->msn_rx[q] = 1;
    sim__tcp_init(&iw->tcp, qp, &iw_ulp, active, lport, rport, mss, iss);
}

void sim__iw_start(struct sim_qp *qp) { sim__tcp_open(&qp->iw->tcp); }

void sim__iw_expect(struct sim_qp *qp, uint32_t mr, uint64_t off, uint32_t len)
{
    struct sim_iw *iw = qp->iw;
    if (iw->nin == iw->in_cap) {
        iw->in_cap = iw->in_cap ? 2 * iw->in_cap : 16;
        iw->in = sim__xrealloc(iw->in, iw->in_cap * sizeof *iw->in);
    }
    iw->in[iw->nin++] = (struct sim_iw_in){mr, off, len};
}

void sim__iw_free(struct sim_qp *qp)
{
    struct sim_iw *iw = qp->iw;
    if (!iw)
        return;
    sim__tcp_fini(&iw->tcp);
    free(iw->recs);
    free(iw->reads);
    free(iw->acc);
    free(iw->scratch);
    free(iw->in);
    free(iw);
}

struct sim_frame *sim__iw_pull(struct sim_qp *qp) { return sim__tcp_output(&qp->iw->tcp); }

static void segment(struct sim_nic *nic, struct sim_frame *f);

/* tcp: the receiving core starts on the oldest waiting frame, once done
 * with what it was doing (the last segment, and the application's copy of
 * its data, iw_rx.c). */
static void kernel_next(struct sim_host *h)
{
    h->kernel_busy = h->kq_head != NULL;
    if (!h->kernel_busy)
        return;
    sim_time_t now = sim_now(h->node.comp.sim);
    h->kernel_free = (h->kernel_free > now ? h->kernel_free : now) +
                     h->node.net->cfg->nodes[h->node.index].nic.cost.segment;
    sim_schedule(h->node.comp.sim, h->kernel_free, &h->node.comp, SIM_HOST_KERNEL_RX, NULL);
}

void sim__iw_kernel_event(struct sim_nic *nic)
{
    struct sim_host *h = nic->host;
    struct sim_frame *f = h->kq_head;
    h->kq_head = f->next;
    if (!h->kq_head)
        h->kq_tail = NULL;
    f->next = NULL;
    segment(nic, f);
    kernel_next(h);
}

/* A frame for this NIC. An RNIC's TCP takes it at once; with plain TCP
 * the kernel takes it after its segment processing (nic.host_cost
 * segment), one frame after the other on one core: that delays the ACKs
 * a host sends and bounds the segments it takes in per second. */
void sim__iw_take(struct sim_nic *nic, struct sim_frame *f)
{
    if (nic->transport != &sim__transport_tcp) {
        segment(nic, f);
        return;
    }
    struct sim_host *h = nic->host;
    f->next = NULL;
    if (h->kq_tail)
        h->kq_tail->next = f;
    else
        h->kq_head = f;
    h->kq_tail = f;
    if (!h->kernel_busy)
        kernel_next(h);
}

/* Find the frame's connection by the TCP destination port and check the
 * segment (IPv4 header and TCP checksums: a bit error on the way makes
 * the segment vanish, as TCP expects). */
static void segment(struct sim_nic *nic, struct sim_frame *f)
{
    struct sim_node *n = &nic->host->node;
    struct rdma_pkt pkt;
    struct rdma_tcp th;
    struct rdma_tcp_options opt;
    const uint8_t *payload;
    uint32_t len, idx;
    bool kept = false;
    enum rdma_status st = rdma_decode(&nic->dcfg, RDMA_LINKTYPE_ETHERNET, f->data, f->len, f->len, &pkt);
    if (st != RDMA_OK || !rdma_tcp_decode(&pkt, f->data, &th, &payload, &len) ||
        !rdma_tcp_checksum_ok(&pkt, f->data) ||
        (idx = (uint32_t)th.dstport - SIM_TCP_PORT_BASE) >= nic->nqps || !nic->qps[idx]->iw ||
        th.srcport != nic->qps[idx]->iw->tcp.rport ||
        rdma_tcp_options_decode(payload - (th.doff * 4 - TCP_LEN), th.doff * 4u - TCP_LEN, &opt) !=
            RDMA_OK) {
        n->bad_frames++;
        sim__frame_free(&n->net->pool, f);
        return;
    }
    struct sim_qp *qp = nic->qps[idx];
    qp->st.rx_packets++;
    sim__tcp_input(&qp->iw->tcp, f, &pkt, &th, &opt, payload, len, &kept);
    if (!kept)
        sim__frame_free(&n->net->pool, f);
}

/* What a full segment adds around its FPDU's DDP/RDMAP headers and
 * payload: Ethernet, IPv4 or IPv6, TCP, and MPA's length and CRC. */
static uint32_t overhead(const struct sim_nic *nic)
{
    const struct cfg_nic *p = &nic->host->node.net->cfg->nodes[nic->host->node.index].nic;
    return ETH_LEN + (p->ipv6 ? 40 : 20) + TCP_LEN + 2 + RDMA_MPA_CRC_LEN;
}

/* Only the cost of a frame is asked of it (observe/ideal.c): the queue
 * pairs' frames come from their TCP endpoints. */
const struct sim_transport_ops sim__transport_iwarp = {
    .name = "iWARP",
    .overhead = overhead,
};

/* Plain TCP: a full segment adds Ethernet, IPv4 or IPv6 and TCP. */
static uint32_t tcp_overhead(const struct sim_nic *nic)
{
    const struct cfg_nic *p = &nic->host->node.net->cfg->nodes[nic->host->node.index].nic;
    return ETH_LEN + (p->ipv6 ? 40 : 20) + TCP_LEN;
}

const struct sim_transport_ops sim__transport_tcp = {
    .name = "TCP",
    .overhead = tcp_overhead,
};
