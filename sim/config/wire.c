/* wire.c - what a frame costs on an Ethernet link, for the configuration's
 * buffer checks (load_fabric.c) and the buffers the run sizes from it
 * (fabric/switch.c, host/rxbuf.c): both must agree to the byte.
 */
#include "config/wire.h"

/* PFC headroom: the bytes that can still arrive on a link after its
 * receiver decides to pause it. With time 0 the arrival that makes the
 * decision (frames count once their last bit is in), and the sender
 * obeying a pause the moment it arrives:
 *   - the PFC frame waits for the frame the receiver is sending (at most
 *     one largest frame) and for up to one PFC frame per priority ahead
 *     of it, then is serialized itself;
 *   - it propagates for the link delay d;
 *   - the sender finishes the frame it has started (one largest frame);
 *   - that frame's last bit propagates for d.
 * Frames whose last bit arrives in that window left the sender in a
 * window just as long, shifted by d, so they are at most its length at
 * line rate plus the frame straddling its start:
 *   headroom = rate * 2d + 3 * largest frame + 8 PFC frames   (wire bytes)
 * which counts preamble, FCS and gap, and so bounds the buffered bytes.
 * IEEE 802.1Qbb-2011 annex N lists the same delays (with a response time
 * that is zero here); the rule of thumb "2 x rate x delay + MTU" leaves
 * out the frames in progress at both ends and the one being received. */
uint64_t sim__queue_cap(const struct cfg_switch *s, uint64_t port_buffer, uint64_t pool,
                        uint32_t nports)
{
    if (!s->shared_buffer)
        return port_buffer;
    if (s->lossless)
        return s->shared_buffer;
    return (uint64_t)(s->alpha * (double)pool / (1 + s->alpha)) + (uint64_t)nports * s->reserved;
}

uint64_t sim__pfc_headroom(const struct cfg_link_params *lp)
{
    unsigned __int128 bits = (unsigned __int128)lp->rate * 2 * lp->delay;
    uint64_t wire = (uint64_t)((bits + 8 * SIM_S - 1) / (8 * SIM_S));
    return wire + 3 * (sim__max_frame(lp) + SIM_ETH_WIRE_EXTRA) + SIM_PRIOS * SIM_PFC_FRAME_WIRE;
}
