/* nic.c - the NIC between a host's queue pairs and its port.
 *
 * Transmission is pulled, not pushed: whenever the port has finished a
 * frame, the NIC asks the queue pairs in its ring, round robin, for one
 * packet (responses before requests within a queue pair) and builds the
 * frame just in time. Nothing queues inside the NIC, so PSNs and
 * timestamps are those of the moment a frame goes on the wire, and a rate
 * limiter (DCQCN) later needs only to decide which queue pair may go.
 */
#include <assert.h>
#include <string.h>

#include "nic.h"
#include "util.h"

static int find_opcode(uint32_t want, const char *op)
{
    const uint32_t mask = RDMA_OPF_REQUEST | RDMA_OPF_RESPONSE | RDMA_OPF_SEND | RDMA_OPF_WRITE |
                          RDMA_OPF_READ | RDMA_OPF_ATOMIC | RDMA_OPF_ACK | RDMA_OPF_FIRST |
                          RDMA_OPF_MIDDLE | RDMA_OPF_LAST | RDMA_OPF_IMM | RDMA_OPF_INV;
    for (unsigned c = 0; c < 0x20; c++) {
        const struct rdma_opcode_info *info = &rdma_opcodes[c];
        if (info->name && info->transport == RDMA_TRANSPORT_RC && (info->flags & mask) == want &&
            (!op || !strcmp(info->op, op)))
            return (int)c;
    }
    return -1;
}

void sim__opcodes_init(struct sim_opcodes *o)
{
    static const uint32_t pos[4] = {RDMA_OPF_ONLY, RDMA_OPF_FIRST, RDMA_OPF_MIDDLE, RDMA_OPF_LAST};
    const uint32_t req = RDMA_OPF_REQUEST, rsp = RDMA_OPF_RESPONSE;
    memset(o, 0xff, sizeof *o);
    for (int p = 0; p < 4; p++) {
        bool last = pos[p] & RDMA_OPF_LAST;
        uint32_t w = req | RDMA_OPF_WRITE | pos[p], s = req | RDMA_OPF_SEND | pos[p];
        o->req[SIM_OP_WRITE][p] = (uint8_t)find_opcode(w, NULL);
        o->req[SIM_OP_WRITE_IMM][p] = (uint8_t)find_opcode(w | (last ? RDMA_OPF_IMM : 0), NULL);
        o->req[SIM_OP_SEND][p] = (uint8_t)find_opcode(s, NULL);
        o->req[SIM_OP_SEND_IMM][p] = (uint8_t)find_opcode(s | (last ? RDMA_OPF_IMM : 0), NULL);
        o->req[SIM_OP_SEND_INV][p] = (uint8_t)find_opcode(s | (last ? RDMA_OPF_INV : 0), NULL);
        o->read_resp[p] = (uint8_t)find_opcode(rsp | RDMA_OPF_READ | pos[p], NULL);
    }
    o->req[SIM_OP_READ][SIM_POS_ONLY] = (uint8_t)find_opcode(req | RDMA_OPF_READ | RDMA_OPF_ONLY, NULL);
    o->req[SIM_OP_CAS][SIM_POS_ONLY] =
        (uint8_t)find_opcode(req | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, "CmpSwap");
    o->req[SIM_OP_FAA][SIM_POS_ONLY] =
        (uint8_t)find_opcode(req | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, "FetchAdd");
    o->ack = (uint8_t)find_opcode(rsp | RDMA_OPF_ACK, NULL);
    o->atomic_ack = (uint8_t)find_opcode(rsp | RDMA_OPF_ATOMIC | RDMA_OPF_ONLY, NULL);
}

const uint8_t *sim__nic_payload(struct sim_nic *nic, uint32_t mr, uint64_t off, uint32_t len)
{
    struct sim_host *h = nic->host;
    const struct sim_mr *r = &h->mrs[mr];
    if (!r->bytes)
        return nic->staging; /* the fill pattern */
    nic->dma->read(h, r, off, nic->staging, len);
    return nic->staging;
}

void sim__nic_place(struct sim_nic *nic, uint32_t mr, uint64_t off, const uint8_t *src, uint32_t len)
{
    struct sim_host *h = nic->host;
    nic->dma->write(h, &h->mrs[mr], off, src, len);
}

static void ring_append(struct sim_nic *nic, struct sim_qp *qp)
{
    if (qp->in_ring)
        return;
    qp->in_ring = true;
    qp->ring_next = NULL;
    if (nic->ring_tail)
        nic->ring_tail->ring_next = qp;
    else
        nic->ring_head = qp;
    nic->ring_tail = qp;
}

static void pull(struct sim_nic *nic)
{
    struct rdma_pkt pkt;
    while (nic->ring_head) {
        struct sim_qp *qp = nic->ring_head;
        nic->ring_head = qp->ring_next;
        if (!nic->ring_head)
            nic->ring_tail = NULL;
        qp->in_ring = false;
        memset(&pkt, 0, sizeof pkt);
        if (!sim__resp_next(qp, &pkt) && !sim__req_next(qp, &pkt))
            continue;
        struct sim_frame *f = nic->transport->frame(nic, qp, &pkt);
        assert(f);
        sim__port_send(nic->port, f);
        /* back to the end of the ring: round robin, one packet per turn */
        ring_append(nic, qp);
        return;
    }
}

void sim__nic_wake(struct sim_nic *nic, struct sim_qp *qp)
{
    ring_append(nic, qp);
    if (sim__port_idle(nic->port))
        pull(nic);
}

void sim__nic_tx_ready(struct sim_node *n, struct sim_port *port)
{
    (void)port;
    pull(&((struct sim_host *)n)->nic);
}

void sim__nic_receive(struct sim_node *n, struct sim_port *in, struct sim_frame *f)
{
    struct sim_host *h = (struct sim_host *)n;
    struct sim_nic *nic = &h->nic;
    struct rdma_pkt pkt;
    (void)in;
    /* dropped: a bad ICRC, a malformed frame, or no such queue pair */
    if (!nic->transport->parse(nic, f, &pkt) || pkt.bth.destqp - SIM_QPN_BASE >= nic->nqps) {
        n->bad_frames++;
    } else {
        struct sim_qp *qp = nic->qps[pkt.bth.destqp - SIM_QPN_BASE];
        qp->st.rx_packets++;
        if (pkt.op->flags & RDMA_OPF_REQUEST)
            sim__resp_receive(qp, &pkt);
        else
            sim__comp_receive(qp, &pkt);
    }
    sim__frame_free(&n->net->pool, f);
}
