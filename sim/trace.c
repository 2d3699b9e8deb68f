/* trace.c - pcap files of the frames crossing a port, written with libpcap
 * (nanosecond timestamps, Ethernet link type, optional snap length) under
 * a temporary name and renamed into place when the run is complete. */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "util.h"

struct sim_pcap {
    pcap_t *dead;
    pcap_dumper_t *dump;
    char *path, *tmp;
    uint32_t snaplen;
};

struct sim_pcap *sim__pcap_open(const char *path, uint32_t snaplen, char *err, size_t errcap)
{
    pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
                                                        PCAP_TSTAMP_PRECISION_NANO);
    if (!dead) {
        snprintf(err, errcap, "%s: cannot set up libpcap", path);
        return NULL;
    }
    char *tmp = sim__xasprintf("%s.tmp", path);
    pcap_dumper_t *dump = pcap_dump_open(dead, tmp);
    if (!dump) {
        snprintf(err, errcap, "%s", pcap_geterr(dead));
        pcap_close(dead);
        free(tmp);
        return NULL;
    }
    struct sim_pcap *pc = sim__xcalloc(1, sizeof *pc);
    *pc = (struct sim_pcap){.dead = dead, .dump = dump, .path = sim__xstrdup(path), .tmp = tmp,
                            .snaplen = snaplen};
    return pc;
}

void sim__pcap_write(struct sim_pcap *pc, sim_time_t t, const struct sim_frame *f)
{
    struct pcap_pkthdr h;
    memset(&h, 0, sizeof h);
    h.ts.tv_sec = (time_t)(t / SIM_S);
    h.ts.tv_usec = (suseconds_t)(t % SIM_S / SIM_NS); /* nanoseconds: the file says so */
    h.len = f->len;
    h.caplen = f->len < pc->snaplen ? f->len : pc->snaplen;
    pcap_dump((u_char *)pc->dump, &h, f->data);
}

int sim__pcap_close(struct sim_pcap *pc, bool keep)
{
    if (!pc)
        return 0;
    int rc = keep ? 0 : -1;
    if (pcap_dump_flush(pc->dump))
        rc = -1;
    pcap_dump_close(pc->dump);
    pcap_close(pc->dead);
    if (rc == 0 && rename(pc->tmp, pc->path))
        rc = -1;
    if (rc)
        remove(pc->tmp);
    free(pc->path);
    free(pc->tmp);
    free(pc);
    return rc;
}
