/* pcie_csv.c - what the PCIe model leaves behind: per link and direction
 * counters in pcie.csv and summary.json, and each message's latency
 * breakdown in messages.csv (docs/config.md, Outputs).
 *
 * A message's breakdown splits its completion time at the steps it went
 * through, in order; a step it did not take (no bounce buffer, an inline
 * WQE, no payload) lasts zero, so the parts add up to fct_ps:
 *
 *   posted | copy | doorbell | wqe_fetch | payload_read | wire | dma_write | ack | completion
 *          copied  doorbell   wqe        first_tx       arrived   left     acked    done
 */
#include <inttypes.h>
#include <stdio.h>

#include "host/nic.h"
#include "observe/observe.h"
#include "pcie/pcie.h"

static void link_row(const struct sim_network *net, const struct sim_pcie_host *ph,
                     const struct pcie_link_rt *l, const struct pcie_dir *d, FILE *f, bool json,
                     bool first)
{
    sim_time_t end = sim_now(net->sim);
    sim_time_t busy = d->busy - sim__pcie_busy_after(d, end);
    double rate = l->gen ? sim__pcie_tlp_rate(l->gen, l->width,
                                              ph->cfg->nodes[l - ph->links].link.mps)
                         : (double)ph->cfg->socket_rate;
    double util = end ? (double)busy / (double)end : 0.0;
    if (json) {
        fprintf(f, "%s\n      {\"link\": \"%s\", \"from\": \"%s\", \"to\": \"%s\", \"generation\": %u, "
                   "\"width\": %u, \"tlp_rate_bps\": %.0f, \"mwr_tlps\": %" PRIu64 ", "
                   "\"mrd_tlps\": %" PRIu64 ", \"cpld_tlps\": %" PRIu64 ", \"payload_bytes\": %" PRIu64
                   ", \"wire_bytes\": %" PRIu64 ", \"busy_ps\": %" PRIu64 ", \"utilization\": %.6f}",
                first ? "" : ",", l->name, d->from, d->to, l->gen, l->width, rate, d->tlps[PCIE_MWR],
                d->tlps[PCIE_MRD], d->tlps[PCIE_CPLD], d->payload, d->wire, busy, util);
        return;
    }
    fprintf(f, "%s,%s,%s,%s,", ph->host, l->name, d->from, d->to);
    if (l->gen)
        fprintf(f, "%u,%u,", l->gen, l->width);
    else
        fprintf(f, ",,");
    fprintf(f, "%.0f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f\n",
            rate, d->tlps[PCIE_MWR], d->tlps[PCIE_MRD], d->tlps[PCIE_CPLD], d->payload, d->wire,
            busy, util);
}

static void host_links(const struct sim_network *net, const struct sim_pcie_host *ph, FILE *f,
                       bool json)
{
    bool first = true;
    for (uint32_t i = 0; i < ph->nlinks; i++) {
        const struct pcie_link_rt *l = &ph->links[i];
        if (!l->name) /* a root complex has no uplink */
            continue;
        link_row(net, ph, l, &l->up, f, json, first);
        link_row(net, ph, l, &l->down, f, json, false);
        first = false;
    }
}

static const struct sim_pcie_host *host_pcie(const struct sim_network *net, uint32_t h)
{
    return ((const struct sim_host *)net->nodes[net->host_node[h]])->nic.pcie;
}

void sim__pcie_write_csv(const struct sim_network *net, FILE *f)
{
    fprintf(f, "host,link,from,to,generation,width,tlp_rate_bps,mwr_tlps,mrd_tlps,cpld_tlps,"
               "payload_bytes,wire_bytes,busy_ps,utilization\n");
    for (uint32_t h = 0; h < net->nhosts; h++)
        host_links(net, host_pcie(net, h), f, false);
}

void sim__pcie_write_json(const struct sim_network *net, FILE *f)
{
    fprintf(f, "[");
    for (uint32_t h = 0; h < net->nhosts; h++) {
        const struct sim_pcie_host *ph = host_pcie(net, h);
        fprintf(f, "%s\n    {\"host\": \"%s\", \"links\": [", h ? "," : "", ph->host);
        host_links(net, ph, f, true);
        fprintf(f, "\n    ]}");
    }
    fprintf(f, "\n  ]");
}

void sim__pcie_message_header(FILE *f)
{
    fprintf(f, ",copy_ps,doorbell_ps,wqe_fetch_ps,payload_read_ps,wire_ps,dma_write_ps,ack_ps,"
               "completion_ps,delivery_ps");
}

void sim__pcie_message_row(const struct sim_network *net, size_t msg, FILE *f)
{
    const struct sim_msg *m = &net->msgs[msg];
    const struct sim_pcie_stamps *s = &net->pcie->stamps[msg];
    if (m->status == SIM_MSG_PENDING) {
        fprintf(f, ",,,,,,,,,");
        return;
    }
    const sim_time_t marks[] = {s->copied, s->doorbell, s->wqe, s->first_tx, s->arrived,
                                s->left, s->acked, m->done};
    sim_time_t prev = m->posted;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        sim_time_t t = marks[i] == SIM_TIME_NEVER || marks[i] < prev ? prev : marks[i];
        if (t > m->done)
            t = m->done;
        fprintf(f, ",%" PRIu64, t - prev);
        prev = t;
    }
    /* like fct_ps, a duration from posting: here until the data was in
     * its destination memory */
    if (s->delivered == SIM_TIME_NEVER)
        fprintf(f, ",");
    else
        fprintf(f, ",%" PRIu64, s->delivered - m->posted);
}

/* copies.csv: each GPU-to-GPU copy, its time and bandwidth (10^9 bytes
 * per second, as NVIDIA quotes NVLink). */
void sim__pcie_write_copies(const struct sim_network *net, FILE *f)
{
    const struct sim_pcie_config *pc = net->cfg->pcie;
    fprintf(f, "id,host,src,dst,via,bytes,start_ps,end_ps,time_ps,GBps\n");
    for (size_t i = 0; i < pc->ncopies; i++) {
        const struct cfg_pcie_copy *c = &pc->copies[i];
        const struct sim_pcie_copy_time *t = &net->pcie->copies[i];
        sim_time_t d = t->end - t->start;
        fprintf(f, "%zu,%s,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f\n", i,
                net->cfg->nodes[c->host].name, c->src, c->dst, sim__pcie_via_name(c->via), c->size,
                t->start, t->end, d, d ? (double)c->size / ((double)d / (double)SIM_S) / 1e9 : 0.0);
    }
}

/* cxl.csv: each CXL load or store, its latency and the parts it adds up
 * from (pcie/cxl.c). */
void sim__pcie_write_cxl(const struct sim_network *net, FILE *f)
{
    const struct sim_pcie_config *pc = net->cfg->pcie;
    fprintf(f, "id,host,device,op,start_ps,end_ps,latency_ps,cpu_ps,host_port_ps,link_ps,"
               "request_flits_ps,device_port_ps,media_ps,response_flits_ps,queue_ps\n");
    for (size_t i = 0; i < net->pcie->ncxl; i++) {
        const struct sim_cxl_run *r = &net->pcie->cxl[i];
        const struct cfg_cxl_access *a = &pc->cxl[r->access];
        const struct sim_cxl_parts *p = &r->parts;
        fprintf(f, "%zu,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                i, net->cfg->nodes[a->host].name, a->device, a->store ? "store" : "load", r->start,
                r->end, r->end - r->start, p->cpu, p->host_port, p->link, p->request,
                p->device_port, p->media, p->response, p->queue);
    }
}
