/* host_cpu.c - what the hosts' CPUs spent on communication, in
 * summary.json's `host_cpu`, from the costs of nic.host_cost (defaults and
 * sources in config/load_tcp.c) and what the run did:
 *
 *   tcp         per message a send() and a recv() system call and two
 *               copies of its bytes (user to kernel at the sender, kernel to
 *               user at the receiver); per TCP segment a host receives
 *               (data or ACK) the kernel's segment processing
 *   ib, roce,   per message a work request posted and a completion polled
 *   iwarp       at the requester, and at the responder too for the
 *               operations that consume a receive; the NIC does the
 *               transport and the copies (zero-copy: placement by DMA)
 *
 * Only messages that completed count, so that the time per byte is that
 * of the bytes delivered. The run spends the same time (host/iwarp/):
 * the sender's system call and copy pace its segments, the kernel's
 * segment work and the receiving application's copy keep the receiving
 * core busy; only the recv() system call is counted without being spent.
 */
#include "host/iwarp/iwarp.h"
#include "observe/observe.h"

struct cpu {
    uint64_t syscalls, copied, segments, posts, polls, bytes;
    unsigned __int128 ps;
};

static void message(struct cpu *c, const struct cfg_msg *m, const struct cfg_nic *src,
                    const struct cfg_nic *dst)
{
    c->bytes += m->size;
    if (src->transport == CFG_TRANSPORT_TCP) {
        c->syscalls += 2;
        c->copied += 2 * m->size;
        c->ps += src->cost.syscall + sim__iw_copy_time(m->size, src->cost.copy_rate) + dst->cost.syscall +
                 sim__iw_copy_time(m->size, dst->cost.copy_rate);
        return;
    }
    c->posts++;
    c->polls++;
    c->ps += src->cost.post + src->cost.poll;
    if (sim__op_uses_recv(m->op)) {
        c->posts++;
        c->polls++;
        c->ps += dst->cost.post + dst->cost.poll;
    }
}

void sim__host_cpu_json(FILE *f, const struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    struct cpu c = {0};
    for (size_t i = 0; i < net->nmsgs; i++)
        if (net->msgs[i].status == SIM_MSG_OK)
            message(&c, &cfg->msgs[i], &cfg->nodes[cfg->msgs[i].src].nic, &cfg->nodes[cfg->msgs[i].dst].nic);
    for (size_t i = 0; i < net->nconns; i++)
        for (int s = 0; s < 2; s++) {
            const struct sim_qp *qp = net->conns[i].qp[s];
            if (!qp->iw || !qp->iw->sockets)
                continue;
            c.segments += qp->iw->tcp.st.segs_in;
            c.ps += (unsigned __int128)qp->iw->tcp.st.segs_in * qp->p->cost.segment;
        }
    fprintf(f, ",\n  \"host_cpu\": {\"bytes\": %llu, \"syscalls\": %llu, \"copied_bytes\": %llu, "
               "\"segments\": %llu, \"posts\": %llu, \"polls\": %llu, \"cpu_ps\": %llu}",
            (unsigned long long)c.bytes, (unsigned long long)c.syscalls, (unsigned long long)c.copied,
            (unsigned long long)c.segments, (unsigned long long)c.posts, (unsigned long long)c.polls,
            (unsigned long long)c.ps);
}
