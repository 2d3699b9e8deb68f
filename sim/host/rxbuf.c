/* rxbuf.c - a NIC's receive buffer, for NICs slower than their link.
 *
 * With `rx_rate` set, frames arriving at the NIC wait in a FIFO of
 * `rx_buffer` bytes and are taken in one at a time, each costing its
 * length at rx_rate. A frame that does not fit is dropped. With PFC on,
 * the NIC pauses its priority when the buffer holds more than
 * rx_buffer - headroom (the headroom of its link, pfc.c), and resumes it
 * once the buffer has drained two largest frames below that.
 *
 *   link --> [ rx_buffer: ....xoff.. headroom ] --rx_rate--> NIC
 */
#include "engine/util.h"
#include "host/nic.h"

void sim__rxbuf_init(struct sim_nic *nic)
{
    const struct sim_network *net = nic->host->node.net;
    const struct cfg_nic_fabric *p = &net->cfg->nodes[nic->host->node.index].nic.fab;
    struct sim_rxbuf *rx = &nic->rx;
    const struct cfg_link_params *lp = &nic->port->p;
    uint64_t headroom = sim__pfc_headroom(lp), frame = sim__max_frame(lp);
    rx->rate = p->rx_rate;
    /* on InfiniBand the receive buffer is the VL's, and credits keep it
     * from overflowing (net/ib_link.c) */
    rx->cap = nic->port->ib ? UINT64_MAX : p->rx_buffer;
    /* the configuration check keeps the buffer above headroom and frames */
    rx->xoff = rx->cap > headroom ? rx->cap - headroom : 0;
    rx->xon = rx->xoff > 2 * frame ? rx->xoff - 2 * frame : 0;
    if (rx->rate && p->pfc)
        nic->port->st.headroom = rx->cap - rx->xoff;
}

static void start(struct sim_nic *nic)
{
    struct sim_rxbuf *rx = &nic->rx;
    struct sim_host *h = nic->host;
    rx->busy = true;
    sim_schedule(h->node.comp.sim, sim_now(h->node.comp.sim) + sim__ser_time(rx->head->len, rx->rate),
                 &h->node.comp, SIM_HOST_NIC_RX, NULL);
}

void sim__rxbuf_put(struct sim_nic *nic, struct sim_frame *f)
{
    struct sim_rxbuf *rx = &nic->rx;
    if (rx->bytes + f->len > rx->cap) {
        nic->port->st.drops++;
        sim__frame_free(&nic->host->node.net->pool, f);
        return;
    }
    f->next = NULL;
    if (rx->tail)
        rx->tail->next = f;
    else
        rx->head = f;
    rx->tail = f;
    rx->bytes += f->len;
    if (rx->bytes > nic->port->st.max_queue)
        nic->port->st.max_queue = rx->bytes;
    if (nic->port->pfc.honour && rx->bytes > rx->xoff) {
        sim__pfc_xoff(nic->port, nic->prio);
        if (rx->bytes - rx->xoff > nic->port->st.max_headroom)
            nic->port->st.max_headroom = rx->bytes - rx->xoff;
    }
    if (!rx->busy)
        start(nic);
}

void sim__rxbuf_done(struct sim_nic *nic)
{
    struct sim_rxbuf *rx = &nic->rx;
    struct sim_frame *f = rx->head;
    rx->head = f->next;
    if (!rx->head)
        rx->tail = NULL;
    f->next = NULL;
    rx->bytes -= f->len;
    rx->busy = false;
    if (rx->bytes <= rx->xon)
        sim__pfc_xon(nic->port, nic->prio);
    if (rx->head)
        start(nic);
    sim__nic_take(nic, f);
}
