/* pcap.c - pcap files of the frames crossing a port, written with libpcap
 * (nanosecond timestamps, Ethernet link type, optional snap length) under
 * a temporary name and renamed into place when the run is complete. Each
 * is a tap on its port (net/net.h): the port tells it of every frame.
 * A file stops growing at the configuration's trace_limit; the frames it
 * leaves out are counted, and the run's notes say so. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util.h"
#include "net/net.h"
#include "observe/observe.h"

struct sim_pcap {
    struct sim_tap tap; /* first, for the downcast */
    pcap_t *dead;
    pcap_dumper_t *dump;
    char *path, *tmp;
    uint32_t snaplen;
    uint64_t limit, bytes; /* the file's size limit (0: none) and its size so far */
    uint64_t cut;          /* frames left out at the limit */
    struct sim_temp temp; /* removed if the process ends on out of memory */
};

static void write_frame(struct sim_tap *tap, sim_time_t t, const struct sim_frame *f)
{
    struct sim_pcap *pc = (struct sim_pcap *)tap;
    struct pcap_pkthdr h;
    memset(&h, 0, sizeof h);
    h.ts.tv_sec = (time_t)(t / SIM_S);
    h.ts.tv_usec = (suseconds_t)(t % SIM_S / SIM_NS); /* nanoseconds: the file says so */
    h.len = f->len;
    h.caplen = f->len < pc->snaplen ? f->len : pc->snaplen;
    uint64_t rec = PCAP_RECORD_HEADER + h.caplen;
    /* once a frame is left out, so are all after it: no gap in the middle */
    if (pc->cut || (pc->limit && pc->bytes + rec > pc->limit)) {
        pc->cut++;
        return;
    }
    pc->bytes += rec;
    pcap_dump((u_char *)pc->dump, &h, f->data);
}

struct sim_pcap *sim__pcap_open(const char *path, uint32_t snaplen, uint64_t limit, char *err,
                                size_t errcap)
{
    pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
                                                        PCAP_TSTAMP_PRECISION_NANO);
    if (!dead) {
        snprintf(err, errcap, "%s: cannot set up libpcap", path);
        return NULL;
    }
    /* allocated before the file exists: nothing allocated from here on
     * could end the process and leave it */
    struct sim_pcap *pc = sim__xcalloc(1, sizeof *pc);
    char *tmp = sim__xasprintf("%s.tmp", path);
    char *copy = sim__xstrdup(path);
    FILE *f = sim__fopen_new(tmp);
    pcap_dumper_t *dump = f ? pcap_dump_fopen(dead, f) : NULL;
    if (!dump) {
        if (f)
            snprintf(err, errcap, "%s: %s", tmp, pcap_geterr(dead));
        else
            snprintf(err, errcap, "%s: %s", tmp, strerror(errno));
        if (f) {
            fclose(f);
            remove(tmp);
        }
        pcap_close(dead);
        free(tmp);
        free(copy);
        free(pc);
        return NULL;
    }
    *pc = (struct sim_pcap){.tap = {.frame = write_frame}, .dead = dead, .dump = dump,
                            .path = copy, .tmp = tmp, .snaplen = snaplen,
                            .limit = limit, .bytes = PCAP_FILE_HEADER};
    sim__temp_hold(&pc->temp, pc->tmp);
    return pc;
}

struct sim_tap *sim__pcap_tap(struct sim_pcap *pc) { return &pc->tap; }

void sim__traces_cut(const struct sim_network *net, uint64_t *files, uint64_t *frames)
{
    *files = net->pcap_cut_files;
    *frames = net->pcap_cut_frames;
    for (size_t i = 0; net->pcaps && i < net->nports; i++) {
        const struct sim_pcap *pc = net->pcaps[i];
        if (pc && pc->cut) {
            ++*files;
            *frames += pc->cut;
        }
    }
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
    sim__temp_release(&pc->temp);
    if (rc == 0 && rename(pc->tmp, pc->path))
        rc = -1;
    if (rc)
        remove(pc->tmp);
    free(pc->path);
    free(pc->tmp);
    free(pc);
    return rc;
}

int sim__traces_close(struct sim_network *net, bool keep, char *err, size_t errcap)
{
    int rc = 0;
    for (size_t i = 0; net->pcaps && i < net->nports; i++) {
        struct sim_port *p = &net->ports[i];
        struct sim_pcap *pc = net->pcaps[i];
        if (!pc)
            continue;
        /* the port's taps are only ever this capture's */
        p->tap = NULL;
        net->pcap_cut_frames += pc->cut;
        net->pcap_cut_files += pc->cut > 0;
        if (sim__pcap_close(pc, keep) && keep) {
            snprintf(err, errcap, "%s: cannot write the pcap file", p->name);
            rc = -1;
            keep = false; /* the run's outputs are incomplete: remove the rest */
        }
        net->pcaps[i] = NULL;
    }
    return rc;
}
