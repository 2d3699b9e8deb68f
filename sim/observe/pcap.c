/* pcap.c - pcap files of the frames crossing a port, written with libpcap
 * (nanosecond timestamps, optional snap length) under a temporary name and
 * renamed into place when the run is complete. Each is a tap on its port
 * (net/net.h): the port tells it of every frame. A file stops growing at
 * the configuration's trace_limit; the frames it leaves out are counted,
 * and the run's notes say so.
 *
 * Ethernet links are written as Ethernet (link type 1). InfiniBand links
 * are written as Endace ERF records (link type 197), as InfiniBand
 * sniffers write them and Wireshark reads them: data packets with the
 * InfiniBand record type (21), flow control packets with the InfiniBand
 * link type (25).
 *
 *   | ERF: timestamp (64-bit LE fixed point) | type | flags | rlen | lctr | wlen | packet ... |
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/util.h"
#include "net/ib.h"
#include "net/net.h"
#include "rdma_bytes.h"
#include "rdma_codec.h"
#include "observe/observe.h"

struct sim_pcap {
    struct sim_tap tap; /* first, for the downcast */
    bool erf;
    bool link_packets; /* with erf: the flow control packets too */
    pcap_t *dead;
    pcap_dumper_t *dump;
    char *path, *tmp;
    uint32_t snaplen;
    uint64_t limit, bytes; /* the file's size limit (0: none) and its size so far */
    uint64_t cut;          /* frames left out at the limit */
    struct sim_temp temp; /* removed if the process ends on out of memory */
    int reader;           /* detached: a descriptor + 1 that reads the file back */
    const uint8_t *fill;  /* the payload of frames that leave it out */
    uint8_t whole[SIM_FRAME_MAX]; /* where such a frame is put together */
};

#define ERF_HDR 16

/* An ERF record around an InfiniBand packet; the snap length applies to
 * the packet, and the record holds what was kept (rlen), the packet's
 * length (wlen) and the time as seconds << 32 | binary fraction. */
static void write_erf(struct sim_pcap *pc, struct pcap_pkthdr *h, sim_time_t t,
                      const struct sim_frame *f)
{
    uint8_t rec[ERF_HDR + SIM_MAX_PAYLOAD + 256];
    uint32_t keep = h->caplen;
    if (keep > sizeof rec - ERF_HDR)
        keep = sizeof rec - ERF_HDR;
    uint64_t ts = (t / SIM_S) << 32 | (uint64_t)((unsigned __int128)(t % SIM_S) << 32) / SIM_S;
    for (int i = 0; i < 8; i++)
        rec[i] = (uint8_t)(ts >> (8 * i));
    rec[8] = f->len == SIM_IB_FC_LEN ? RDMA_ERF_TYPE_INFINIBAND_LINK : RDMA_ERF_TYPE_INFINIBAND;
    rec[9] = 0; /* interface 0 */
    rdma_put_be16(rec + 10, (uint16_t)(ERF_HDR + keep));
    rdma_put_be16(rec + 12, 0); /* nothing lost */
    rdma_put_be16(rec + 14, (uint16_t)f->len);
    const uint8_t *b = sim__frame_bytes(f, pc->fill, rec + ERF_HDR, keep);
    if (b != rec + ERF_HDR)
        memcpy(rec + ERF_HDR, b, keep);
    h->caplen = ERF_HDR + keep;
    h->len = ERF_HDR + f->len;
    pcap_dump((u_char *)pc->dump, h, rec);
}

static void write_frame(struct sim_tap *tap, sim_time_t t, const struct sim_frame *f)
{
    struct sim_pcap *pc = (struct sim_pcap *)tap;
    if (pc->erf && !pc->link_packets && f->len == SIM_IB_FC_LEN)
        return;
    struct pcap_pkthdr h;
    memset(&h, 0, sizeof h);
    h.ts.tv_sec = (time_t)(t / SIM_S);
    h.ts.tv_usec = (suseconds_t)(t % SIM_S / SIM_NS); /* nanoseconds: the file says so */
    h.len = f->len;
    h.caplen = f->len < pc->snaplen ? f->len : pc->snaplen;
    uint64_t rec = PCAP_RECORD_HEADER + (pc->erf ? ERF_HDR : 0) + h.caplen;
    /* once a frame is left out, so are all after it: no gap in the middle */
    if (pc->cut || (pc->limit && pc->bytes + rec > pc->limit)) {
        pc->cut++;
        return;
    }
    pc->bytes += rec;
    if (pc->erf)
        write_erf(pc, &h, t, f);
    else
        pcap_dump((u_char *)pc->dump, &h, sim__frame_bytes(f, pc->fill, pc->whole, h.caplen));
}

struct sim_pcap *sim__pcap_open(const char *path, uint32_t snaplen, uint64_t limit, enum sim_pcap_kind kind,
                                const uint8_t *fill, char *err, size_t errcap)
{
    bool erf = kind != SIM_PCAP_ETHERNET;
    pcap_t *dead = pcap_open_dead_with_tstamp_precision(erf ? DLT_ERF : DLT_EN10MB,
                                                        (int)snaplen + (erf ? ERF_HDR : 0),
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
    *pc = (struct sim_pcap){.tap = {.frame = write_frame}, .erf = erf,
                            .link_packets = kind == SIM_PCAP_ERF, .dead = dead, .dump = dump,
                            .path = copy, .tmp = tmp, .snaplen = snaplen, .fill = fill,
                            .limit = limit, .bytes = PCAP_FILE_HEADER};
    sim__temp_hold(&pc->temp, pc->tmp);
    return pc;
}

struct sim_tap *sim__pcap_tap(struct sim_pcap *pc) { return &pc->tap; }

int sim__pcap_detach(struct sim_pcap *pc)
{
    /* the dumper's own stream only writes */
    int fd = open(pc->tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    pc->reader = fd + 1;
    sim__temp_release(&pc->temp);
    return unlink(pc->tmp);
}

int sim__pcap_take(struct sim_pcap *pc, uint8_t **bytes, size_t *n, uint64_t *cut)
{
    *bytes = NULL;
    if (!pc->reader || pcap_dump_flush(pc->dump))
        return -1;
    int fd = pc->reader - 1;
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 0)
        return -1;
    *bytes = sim__xmalloc((size_t)size + 1);
    for (off_t got = 0; got < size;) {
        ssize_t r = pread(fd, *bytes + got, (size_t)(size - got), got);
        if (r <= 0) {
            free(*bytes);
            *bytes = NULL;
            return -1;
        }
        got += r;
    }
    *n = (size_t)size;
    *cut = pc->cut;
    return 0;
}

int sim__pcap_replace(struct sim_pcap *pc, const uint8_t *bytes, size_t n, uint64_t cut)
{
    FILE *f = pcap_dump_file(pc->dump);
    if (pcap_dump_flush(pc->dump) || ftruncate(fileno(f), 0))
        return -1;
    rewind(f);
    if (fwrite(bytes, 1, n, f) != n || fflush(f))
        return -1;
    pc->bytes = n;
    pc->cut = cut;
    return 0;
}

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
    if (pc->reader) {
        close(pc->reader - 1);
        rc = -1; /* nameless: nothing to rename */
    }
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
