/* rxbuf.h - the NIC's receive buffer: frames wait there until the NIC takes
 * them in at its processing rate, and PFC pauses the link when it fills.
 */
#ifndef SIM_HOST_RXBUF_H
#define SIM_HOST_RXBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"

/* ---- the NIC's receive buffer (rxbuf.c) ------------------------------------------------ */
struct sim_nic;
struct sim_rxbuf {
    struct sim_frame *head, *tail;
    uint64_t bytes, cap, xoff, xon, rate;
    bool busy;
};
void sim__rxbuf_init(struct sim_nic *nic);
/* A frame arrived: queue it, or drop it when the buffer is full. */
void sim__rxbuf_put(struct sim_nic *nic, struct sim_frame *f);
/* NIC_RX: the frame at the head has been taken in. */
void sim__rxbuf_done(struct sim_nic *nic);

#endif
