/* message.c - the life of a message as the network counts it: its status
 * names, and the end of the run once the last one has finished, and the
 * last of the other work the workload runs beside them (NVLink copies).
 */
#include "net/net.h"

const char *sim__msg_status_name(unsigned st)
{
    static const char *const names[] = {
#define SIM__MS_NAME(name, str) str,
        SIM_MSG_STATUSES(SIM__MS_NAME)
#undef SIM__MS_NAME
    };
    return st < sizeof names / sizeof names[0] ? names[st] : "?";
}

void sim__message_finished(struct sim_network *net, uint32_t msg)
{
    (void)msg;
    if (++net->finished == net->nmsgs && !net->transfers_left)
        sim_stop(net->sim);
}

void sim__transfer_finished(struct sim_network *net)
{
    if (!--net->transfers_left && net->finished == net->nmsgs)
        sim_stop(net->sim);
}
