/* output.c - what a run leaves behind: summary.json, messages.csv,
 * ports.csv and pcap/NODE-PORT.pcap, each written under a temporary name
 * and renamed into place once complete, so a reader never sees half a
 * file; and rdmasim-outputs.txt, the list of them, by which the next run
 * into the directory knows what to remove that it does not write again
 * (a pcap of a port no longer traced), and what is not its to touch.
 *
 * Nothing here depends on the wall clock unless asked (wall_time_s), so
 * two runs of one configuration and seed leave identical files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/units.h"
#include "engine/util.h"
#include "host/collective.h"
#include "host/nic.h"
#include "observe/observe.h"
#include "pcie/pcie.h"
#include "rdma_text.h"
#include "sim.h"

struct out_file {
    FILE *f;
    char *path, *tmp;
    struct sim_temp temp; /* removed if the process ends on out of memory */
};

static bool out_open(struct out_file *o, const char *dir, const char *name, char *err, size_t errcap)
{
    o->path = sim__xasprintf("%s/%s", dir, name);
    o->tmp = sim__xasprintf("%s.tmp", o->path);
    o->f = sim__fopen_new(o->tmp);
    if (!o->f) {
        snprintf(err, errcap, "%s: %s", o->tmp, strerror(errno));
        return false;
    }
    sim__temp_hold(&o->temp, o->tmp);
    return true;
}

/* Close the temporary file; it is renamed into place only when every
 * output is complete. */
static bool out_close(struct out_file *o, char *err, size_t errcap)
{
    bool ok = !ferror(o->f);
    if (fclose(o->f))
        ok = false;
    o->f = NULL;
    if (!ok)
        snprintf(err, errcap, "%s: %s", o->tmp, strerror(errno));
    return ok;
}

/* Rename into place (keep) or remove the temporary file; frees o. */
static bool out_finish(struct out_file *o, bool keep, char *err, size_t errcap)
{
    bool ok = keep;
    if (o->f)
        fclose(o->f);
    sim__temp_release(&o->temp);
    if (keep && rename(o->tmp, o->path)) {
        snprintf(err, errcap, "%s: %s", o->path, strerror(errno));
        ok = false;
    }
    if (!ok && o->tmp)
        remove(o->tmp);
    free(o->path);
    free(o->tmp);
    return ok;
}

/* mkdir -p, noting each directory made. */
static int make_dir(struct sim_network *net, const char *path, char *err, size_t errcap)
{
    char *p = sim__xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        if (*s && *s != '/')
            continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0777) == 0) {
            net->made_dirs = sim__xrealloc(net->made_dirs,
                                           (net->nmade_dirs + 1) * sizeof *net->made_dirs);
            net->made_dirs[net->nmade_dirs++] = sim__xstrdup(p);
        } else if (errno != EEXIST) {
            snprintf(err, errcap, "%s: %s", p, strerror(errno));
            rc = -1;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

/* mkdir -p of a directory outputs go into, which must be a directory of
 * its own: not a symbolic link, made by this run or not. */
static int output_dir(struct sim_network *net, const char *path, char *err, size_t errcap)
{
    if (make_dir(net, path, err, errcap))
        return -1;
    struct stat st;
    if (lstat(path, &st)) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errcap, "%s: a symbolic link; outputs go only into a directory itself (give the link's target)",
                 path);
        return -1;
    }
    return 0;
}

/* A rank of a split run other than 0: rank 0 writes the outputs. */
static bool output_elsewhere(const struct sim_network *net)
{
    return net->split_stats && net->split_stats->here != 0;
}

int sim_network_claim_output(struct sim_network *net, const char *dir, char *err, size_t errcap)
{
    if (net->out_lock || output_elsewhere(net))
        return 0;
    if (output_dir(net, dir, err, errcap))
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errcap, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        if (errno == EWOULDBLOCK)
            snprintf(err, errcap, "%s: another run is writing its outputs there; wait for it or give another --out",
                     dir);
        else
            snprintf(err, errcap, "%s: cannot lock: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    net->out_lock = fd + 1;
    return 0;
}

void sim__output_dirs_release(struct sim_network *net, bool keep)
{
    for (size_t i = net->nmade_dirs; i-- > 0;) {
        if (!keep)
            rmdir(net->made_dirs[i]); /* only if empty: never anyone's files */
        free(net->made_dirs[i]);
    }
    free(net->made_dirs);
    net->made_dirs = NULL;
    net->nmade_dirs = 0;
    if (net->out_lock)
        close(net->out_lock - 1); /* and with it the lock */
    net->out_lock = 0;
}

static void json_string(FILE *f, const char *s) { rdma_json_fputs(s, f); }

static const char *node_name(const struct sim_network *net, uint32_t node)
{
    return net->cfg->nodes[node].name;
}

/* ---- traces ------------------------------------------------------------------ */
/* A new directory under TMPDIR, for as long as the captures are opened. */
static char *private_dir(char *err, size_t errcap)
{
    const char *tmp = getenv("TMPDIR");
    char *path = sim__xasprintf("%s/rdmasim-rank-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(path)) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

int sim_network_open_traces(struct sim_network *net, const char *dir, char *err, size_t errcap)
{
    const struct sim_config *cfg = net->cfg;
    bool any = false;
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port *p = &net->ports[i];
        if (cfg->nodes[p->node->index].trace || cfg->links[p->link].trace)
            any = true;
    }
    if (sim_network_claim_output(net, dir, err, errcap))
        return -1;
    if (!any)
        return 0;
    /* a rank of a split run other than 0 writes its ports' captures into
     * a directory of its own, and hands them to rank 0 at the end */
    bool elsewhere = output_elsewhere(net);
    char *pdir = elsewhere ? private_dir(err, errcap) : sim__xasprintf("%s/pcap", dir);
    int rc = !pdir ? -1 : elsewhere ? 0 : output_dir(net, pdir, err, errcap);
    for (size_t i = 0; !rc && i < net->nports; i++) {
        struct sim_port *p = &net->ports[i];
        if (!cfg->nodes[p->node->index].trace && !cfg->links[p->link].trace)
            continue;
        if (elsewhere && sim_component_remote(net->sim, &p->comp))
            continue;
        char *path = sim__xasprintf("%s/%s.pcap", pdir, p->name);
        if (!net->pcaps)
            net->pcaps = sim__xcalloc(net->nports, sizeof *net->pcaps);
        net->pcaps[i] = sim__pcap_open(path, cfg->snaplen, cfg->trace_limit,
                                       !cfg->ib.enable                 ? SIM_PCAP_ETHERNET
                                       : cfg->ib.trace_flow_control ? SIM_PCAP_ERF
                                                                       : SIM_PCAP_ERF_DATA,
                                       net->fill, err, errcap);
        if (net->pcaps[i] && elsewhere && sim__pcap_detach(net->pcaps[i])) {
            snprintf(err, errcap, "%s: %s", path, strerror(errno));
            rc = -1;
        }
        if (net->pcaps[i]) {
            struct sim_tap *tap = sim__pcap_tap(net->pcaps[i]);
            tap->next = p->tap;
            p->tap = tap;
        } else {
            rc = -1;
        }
        free(path);
    }
    /* its captures have no names: a rank killed leaves nothing there */
    if (elsewhere && pdir)
        rmdir(pdir);
    free(pdir);
    return rc;
}

/* ---- data checks ------------------------------------------------------------------ */
static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Compare every completed message's destination with its source. */
void sim__verify(struct sim_network *net)
{
    const struct sim_config *cfg = net->cfg;
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        struct sim_msg *msg = &net->msgs[i];
        msg->data_ok = -1;
        if (msg->status != SIM_MSG_OK)
            continue;
        struct sim_host *src = (struct sim_host *)net->nodes[m->src];
        struct sim_host *dst = (struct sim_host *)net->nodes[m->dst];
        const struct sim_mr *l = &src->mrs[msg->lmr], *r = &dst->mrs[msg->rmr];
        if (sim__op_is_atomic(m->op)) {
            uint64_t orig = m->initial, final;
            if (m->op == SIM_OP_CAS)
                final = orig == m->compare ? m->swap_add : orig;
            else
                final = orig + m->swap_add;
            msg->data_ok = le64(l->bytes) == orig && le64(r->bytes) == final;
            continue;
        }
        if (!l->bytes || !r->bytes)
            continue;
        msg->data_ok = !memcmp(l->bytes, r->bytes, m->size) &&
                       (!m->coll || sim__coll_check(net, (uint32_t)i));
        if (m->op == SIM_OP_SEND_INV && r->valid)
            msg->data_ok = 0;
    }
}

/* ---- summary.json ------------------------------------------------------------------ */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void percentiles(FILE *f, const char *name, uint64_t *v, size_t n, double scale)
{
    fprintf(f, "    \"%s\": {", name);
    if (n) {
        qsort(v, n, sizeof *v, cmp_u64);
        long double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += v[i];
        fprintf(f, "\"mean\": %.6f, \"p50\": %.6f, \"p99\": %.6f, \"max\": %.6f",
                (double)(sum / n) / scale, (double)v[(n - 1) / 2] / scale,
                (double)v[(n * 99 + 99) / 100 - 1] / scale, (double)v[n - 1] / scale);
    }
    fprintf(f, "}");
}

static void write_nic(FILE *f, const struct cfg_nic *n)
{
    char t[32];
    sim__format_time(n->timeout, t, sizeof t);
    char w[32];
    sim__format_time(n->ooo_window, w, sizeof w);
    fprintf(f, "{\"mtu\": %u, \"ack_coalesce\": %u, \"ack_request_every\": %u, "
               "\"max_rd_atomic\": %u, \"timeout\": \"%s\", \"retry_count\": %u, "
               "\"rnr_retry\": %u, \"rnr_timer\": %u, \"ipv6\": %s, \"ecn\": %u, \"dscp\": %u, "
               "\"ooo\": %s, \"ooo_window\": \"%s\", \"cc\": \"%s\"",
            n->mtu, n->ack_coalesce, n->ack_request_every, n->max_rd_atomic, t, n->retry_count,
            n->rnr_retry, n->rnr_timer, n->ipv6 ? "true" : "false", n->ecn, n->dscp,
            n->ooo ? "true" : "false", w,
            n->fab.cc == CFG_CC_IBCC                               ? "ibcc"
            : n->fab.cc == CFG_CC_DCTCP                            ? "dctcp"
            : n->fab.cc == CFG_CC_TIMELY                           ? "timely"
            : n->fab.cc == CFG_CC_HPCC                             ? "hpcc"
            : n->fab.cc == CFG_CC_NONE || !n->fab.dcqcn.enable ? "none"
                                                                   : "dcqcn");
    if (cfg_transport_tcp(n->transport)) /* RoCE summaries stay as they were */
        sim__tcp_nic_json(f, n);
    fputc('}', f);
}

/* A run split over MPI ranks: what each rank did, beside the wall time
 * (both differ between runs that write the same results). */
static void parallel_json(FILE *f, const struct sim_split_stats *ps)
{
    fprintf(f, ",\n  \"parallel\": {\"ranks\": %u, \"lookahead_ps\": %llu, \"cut_links\": %zu, "
               "\"per_rank\": [",
            ps->nranks, (unsigned long long)ps->lookahead, ps->cut_links);
    for (unsigned r = 0; r < ps->nranks; r++) {
        const struct sim_rank_stats *st = &ps->rank[r];
        fprintf(f, "%s\n    {\"rank\": %u, \"events\": %llu, \"frames_out\": %llu, \"frames_in\": %llu, "
                   "\"windows\": %llu, \"busy_s\": %.3f, \"wait_s\": %.3f, \"run_s\": %.3f}",
                r ? "," : "", r, (unsigned long long)st->events, (unsigned long long)st->frames_out,
                (unsigned long long)st->frames_in, (unsigned long long)st->windows, st->busy_s,
                st->wait_s, st->run_s);
    }
    fprintf(f, "\n  ]}");
}

/* The notes on a run, in the order they are told; each writes its text and
 * returns true when it applies. */
static bool note_timeouts(const struct sim_network *net, char *buf, size_t cap)
{
    struct sim_totals t;
    sim_network_totals(net, &t);
    if (!t.timeouts_without_loss)
        return false;
    /* the parameters of the first queue pair it happened to: hosts may
     * have their own nic settings */
    const struct sim_qp *qp = NULL;
    for (size_t i = 0; !qp && i < net->nconns; i++)
        for (int s = 0; !qp && s < 2; s++)
            if (net->conns[i].qp[s]->st.rto_dups)
                qp = net->conns[i].qp[s];
    const struct cfg_nic *n = qp ? qp->p : &net->cfg->nic;
    char to[32];
    sim__format_time(n->timeout, to, sizeof to);
    snprintf(buf, cap,
             "%llu of %llu retransmission timeouts fired with nothing lost: every packet the "
             "queue pair had sent had reached the responder%s. The timeout (%s%s%s) is shorter than a queue pair took to be "
             "acknowledged (the responder acknowledges when asked, every %u packets and at the end of "
             "each message); raise nic.timeout or lower nic.ack_request_every",
             (unsigned long long)t.timeouts_without_loss, (unsigned long long)t.timeouts,
             t.dropped || t.lost || t.bad_frames || t.unroutable ? "" : ", and no frame was dropped or lost in the run",
             to, qp ? " at " : "", qp ? net->cfg->nodes[qp->nic->host->node.index].name : "",
             n->ack_request_every);
    return true;
}

static bool note_trace_limit(const struct sim_network *net, char *buf, size_t cap)
{
    uint64_t files, frames;
    sim__traces_cut(net, &files, &frames);
    if (!files)
        return false;
    snprintf(buf, cap,
             "%llu pcap file%s reached trace_limit (%llu bytes) and left out the %llu frames that came "
             "after; raise trace_limit, lower snaplen or trace fewer ports to keep them",
             (unsigned long long)files, files == 1 ? "" : "s",
             (unsigned long long)net->cfg->trace_limit, (unsigned long long)frames);
    return true;
}

bool sim_network_note(const struct sim_network *net, size_t i, char *buf, size_t cap)
{
    static bool (*const notes[])(const struct sim_network *, char *, size_t) = {note_timeouts,
                                                                                 note_trace_limit};
    for (size_t k = 0; cap && k < sizeof notes / sizeof notes[0]; k++)
        if (notes[k](net, buf, cap) && i-- == 0)
            return true;
    return false;
}

static void write_summary(struct sim_network *net, FILE *f, double wall)
{
    const struct sim_config *cfg = net->cfg;
    struct sim_totals t;
    sim_network_totals(net, &t);
    size_t nswitch = 0;
    for (size_t i = 0; i < cfg->nnodes; i++)
        nswitch += cfg->nodes[i].kind == CFG_SWITCH;
    char stop[32] = "none";
    if (cfg->stop != SIM_TIME_NEVER)
        sim__format_time(cfg->stop, stop, sizeof stop);
    fprintf(f, "{\n  \"config\": {\n    \"file\": ");
    json_string(f, cfg->path);
    /* The seed is any 64-bit number: as a string, "0x" and sixteen hex
     * digits, as decode and replay write 64-bit values, since JSON readers
     * such as jq keep numbers exact only below 2^53. */
    fprintf(f, ",\n    \"seed\": \"0x%016llx\",\n    \"payload\": \"%s\",\n    \"stop\": \"%s\",\n"
               "    \"hosts\": %u,\n    \"switches\": %zu,\n    \"links\": %zu,\n"
               "    \"messages\": %zu,\n    \"nic\": ",
            (unsigned long long)cfg->seed, cfg->payload_data ? "data" : "none", stop, net->nhosts,
            nswitch, cfg->nlinks, cfg->nmsgs);
    write_nic(f, &cfg->nic);
    fprintf(f, ",\n    \"fabric\": \"%s\",\n    \"routing\": \"%s\"\n  },\n",
            cfg->ib.enable ? "infiniband" : "roce", sim__routing_name(cfg->routing));

    uint64_t *fct = sim__xcalloc(net->nmsgs, sizeof *fct);
    uint64_t *slow = sim__xcalloc(net->nmsgs, sizeof *slow);
    size_t n = 0;
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct sim_msg *m = &net->msgs[i];
        if (m->status != SIM_MSG_OK)
            continue;
        fct[n] = m->done - m->posted;
        /* slowdown in millionths, so that it sorts and prints exactly */
        slow[n] = m->ideal ? (uint64_t)((unsigned __int128)fct[n] * 1000000 / m->ideal) : 1000000;
        n++;
    }
    fprintf(f, "  \"totals\": {\n"
               "    \"messages\": %llu,\n    \"completed\": %llu,\n    \"failed\": %llu,\n"
               "    \"pending\": %llu,\n    \"data_verified\": %llu,\n    \"data_corrupted\": %llu,\n"
               "    \"bytes\": %llu,\n    \"frames\": %llu,\n    \"retransmitted\": %llu,\n"
               "    \"tail_drops\": %llu,\n    \"link_losses\": %llu,\n    \"bad_frames_dropped\": %llu,\n"
               "    \"unroutable\": %llu,\n"
               "    \"timeouts\": %llu,\n    \"timeouts_without_loss\": %llu,\n"
               "    \"end_time_ps\": %llu,\n    \"events\": %llu,\n",
            (unsigned long long)t.messages, (unsigned long long)t.completed,
            (unsigned long long)t.failed,
            (unsigned long long)(t.messages - t.completed - t.failed), (unsigned long long)t.verified,
            (unsigned long long)t.corrupted, (unsigned long long)t.bytes,
            (unsigned long long)t.frames, (unsigned long long)t.retransmitted,
            (unsigned long long)t.dropped, (unsigned long long)t.lost,
            (unsigned long long)t.bad_frames, (unsigned long long)t.unroutable, (unsigned long long)t.timeouts,
            (unsigned long long)t.timeouts_without_loss, (unsigned long long)t.end,
            (unsigned long long)sim_events_processed(net->sim));
    percentiles(f, "fct_us", fct, n, 1e6);
    fprintf(f, ",\n");
    percentiles(f, "slowdown", slow, n, 1e6);
    fprintf(f, "\n  },\n");
    free(fct);
    free(slow);
    fprintf(f, "  \"notes\": [");
    char note[1024];
    for (size_t i = 0; sim_network_note(net, i, note, sizeof note); i++) {
        fprintf(f, "%s\n    ", i ? "," : "");
        json_string(f, note);
    }
    fprintf(f, "%s],\n", sim_network_note(net, 0, note, sizeof note) ? "\n  " : "");

    fprintf(f, "  \"ports\": [");
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port *p = &net->ports[i];
        fprintf(f, "%s\n    {\"port\": \"%s\", \"peer\": \"%s\", \"tx_frames\": %llu, "
                   "\"tx_bytes\": %llu, \"rx_frames\": %llu, \"rx_bytes\": %llu, "
                   "\"tail_drops\": %llu, \"lost\": %llu, \"corrupted\": %llu, "
                   "\"max_queue_bytes\": %llu",
                i ? "," : "", p->name, p->peer->name, (unsigned long long)p->st.tx_frames,
                (unsigned long long)p->st.tx_bytes, (unsigned long long)p->st.rx_frames,
                (unsigned long long)p->st.rx_bytes, (unsigned long long)p->st.drops,
                (unsigned long long)p->st.lost, (unsigned long long)p->st.corrupted,
                (unsigned long long)p->st.max_queue);
        sim__fabric_port_json(f, p);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"flows\": [");
    for (size_t i = 0; i < net->nconns; i++) {
        const struct sim_conn *c = &net->conns[i];
        fprintf(f, "%s\n    {\"hosts\": [\"%s\", \"%s\"], \"qp\": %u, \"qpn\": [%u, %u], "
                   "\"path_mtu\": %u, \"sides\": [",
                i ? "," : "", node_name(net, c->host[0]), node_name(net, c->host[1]), c->qp_id,
                c->qp[0]->qpn, c->qp[1]->qpn, c->path_mtu);
        for (int s = 0; s < 2; s++) {
            const struct sim_qp_stats *st = &c->qp[s]->st;
            fprintf(f, "%s{\"completed\": %llu, \"bytes\": %llu, \"tx_packets\": %llu, "
                       "\"retransmitted\": %llu, \"rx_packets\": %llu, \"acks\": %llu, "
                       "\"naks_seq\": %llu, \"rnr_naks\": %llu, \"naks_other\": %llu, "
                       "\"timeouts\": %llu, \"timeouts_without_loss\": %llu, \"go_back_n\": %llu, "
                       "\"held_out_of_order\": %llu",
                    s ? ", " : "", (unsigned long long)st->completed, (unsigned long long)st->bytes,
                    (unsigned long long)st->tx_packets, (unsigned long long)st->retransmitted,
                    (unsigned long long)st->rx_packets, (unsigned long long)st->acks,
                    (unsigned long long)st->naks_seq, (unsigned long long)st->rnr_naks,
                    (unsigned long long)st->naks_other, (unsigned long long)st->timeouts,
                    (unsigned long long)c->qp[1 - s]->st.rto_dups, (unsigned long long)st->rewinds,
                    (unsigned long long)st->ooo_held);
            if (c->qp[s]->iw)
                sim__tcp_side_json(f, c->qp[s]);
            fputc('}', f);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ],\n");
    sim__fabric_summary_json(f, net);
    sim__host_cpu_json(f, net);
    if (net->pcie) {
        fprintf(f, ",\n  \"pcie\": ");
        sim__pcie_write_json(net, f);
    }
    if (wall >= 0) {
        /* how this process ran (rank 0's, in a run split over ranks):
         * its CPU time in the run (set-up and outputs left out), the
         * frames in flight at most and the memory holding them, and the
         * peak resident set */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(f, ",\n  \"wall_time_s\": %.3f", wall);
        fprintf(f, ",\n  \"run_cpu_s\": %.6f", net->run_cpu_s);
        fprintf(f, ",\n  \"memory\": {\"frames_in_flight_peak\": %llu, \"frames_in_flight_peak_bytes\": %llu, "
                   "\"frame_pool_bytes\": %llu, \"peak_rss_bytes\": %llu}",
                (unsigned long long)net->pool.peak, (unsigned long long)net->pool.peak_bytes,
                (unsigned long long)sim__pool_bytes(&net->pool), (unsigned long long)ru.ru_maxrss * 1024);
    }
    if (wall >= 0 && net->split_stats)
        parallel_json(f, net->split_stats);
    fprintf(f, "\n}\n");
}

/* ---- CSV files ------------------------------------------------------------------------ */
static void write_messages(struct sim_network *net, FILE *f)
{
    const struct sim_config *cfg = net->cfg;
    fprintf(f, "id,src,dst,qp,op,bytes,start_ps,end_ps,fct_ps,ideal_ps,slowdown,retransmissions,"
               "status,data");
    if (net->pcie)
        sim__pcie_message_header(f);
    fputc('\n', f);
    for (size_t i = 0; i < net->nmsgs; i++) {
        const struct cfg_msg *m = &cfg->msgs[i];
        const struct sim_msg *msg = &net->msgs[i];
        bool done = msg->status != SIM_MSG_PENDING;
        fprintf(f, "%zu,%s,%s,%u,%s,%llu,%llu,", i, node_name(net, m->src), node_name(net, m->dst),
                m->qp, sim__op_name(m->op), (unsigned long long)m->size,
                (unsigned long long)m->start);
        if (done) {
            uint64_t fct = msg->done - msg->posted;
            fprintf(f, "%llu,%llu,", (unsigned long long)msg->done, (unsigned long long)fct);
            fprintf(f, "%llu,", (unsigned long long)msg->ideal);
            if (msg->ideal)
                fprintf(f, "%.6f,", (double)fct / (double)msg->ideal);
            else
                fprintf(f, ",");
        } else {
            fprintf(f, ",,%llu,,", (unsigned long long)msg->ideal);
        }
        fprintf(f, "%u,%s,%s", msg->retx, sim__msg_status_name(msg->status),
                msg->data_ok < 0 ? "unchecked" : msg->data_ok ? "ok" : "corrupted");
        if (net->pcie)
            sim__pcie_message_row(net, i, f);
        fputc('\n', f);
    }
}

static void write_ports(struct sim_network *net, FILE *f)
{
    sim_time_t end = sim_now(net->sim);
    fprintf(f, "port,node,peer,rate_bps,delay_ps,tx_frames,tx_bytes,rx_frames,rx_bytes,"
               "tail_drops,lost,corrupted,max_queue_bytes,utilization\n");
    for (size_t i = 0; i < net->nports; i++) {
        const struct sim_port *p = &net->ports[i];
        fprintf(f, "%s,%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6f\n", p->name,
                node_name(net, p->node->index), p->peer->name, (unsigned long long)p->p.rate,
                (unsigned long long)p->p.delay, (unsigned long long)p->st.tx_frames,
                (unsigned long long)p->st.tx_bytes, (unsigned long long)p->st.rx_frames,
                (unsigned long long)p->st.rx_bytes, (unsigned long long)p->st.drops,
                (unsigned long long)p->st.lost, (unsigned long long)p->st.corrupted,
                (unsigned long long)p->st.max_queue,
                end ? (double)p->st.busy / (double)end : 0.0);
    }
}

/* ---- the list of outputs ------------------------------------------------------------ */
#define OUTPUT_LIST "rdmasim-outputs.txt"

/* written here, in this order, then the fabric's (fabric_csv.c) */
static const char *const out_names[] = {"messages.csv",    "ports.csv",       "pcie.csv",
                                        "subnet.txt",      "collectives.csv", "collectives.txt",
                                        "copies.csv",      "cxl.csv",         "summary.json",
                                        "pfc.csv",         "qlen.csv",        "rates.csv"};
#define NOUT_NAMES (sizeof out_names / sizeof out_names[0])
#define NWRITTEN 9 /* out_names written by sim_network_write, summary.json last */

/* Whether this run writes out_names[i]: pcie.csv with PCIe modelled,
 * subnet.txt on InfiniBand, the collectives' files with collectives,
 * copies.csv with copies between GPUs, cxl.csv with CXL accesses. */
static bool writes(const struct sim_network *net, size_t i)
{
    return (i != 2 || net->pcie) && (i != 3 || net->subnet) &&
           ((i != 4 && i != 5) || net->cfg->ncolls) &&
           (i != 6 || (net->pcie && net->cfg->pcie->ncopies)) &&
           (i != 7 || (net->pcie && net->cfg->pcie->ncxl));
}

/* A name a run writes: one of out_names or pcap/NAME.pcap. Only these are
 * taken from an earlier run's list, so that no list, however edited, makes
 * a run remove anything else. */
static bool output_name(const char *name)
{
    for (size_t i = 0; i < NOUT_NAMES; i++)
        if (!strcmp(name, out_names[i]))
            return true;
    size_t n = strlen(name);
    return !strncmp(name, "pcap/", 5) && n > 10 && !strcmp(name + n - 5, ".pcap") &&
           !strchr(name + 5, '/');
}

/* The outputs of this run, relative to its directory, the list itself last. */
static char **outputs_of(const struct sim_network *net, size_t *n)
{
    char **names = sim__xcalloc(NOUT_NAMES + net->nports + 1, sizeof *names);
    *n = 0;
    for (size_t i = 0; i < NOUT_NAMES; i++)
        if (writes(net, i))
            names[(*n)++] = sim__xstrdup(out_names[i]);
    for (size_t i = 0; net->pcaps && i < net->nports; i++)
        if (net->pcaps[i])
            names[(*n)++] = sim__xasprintf("pcap/%s.pcap", net->ports[i].name);
    names[(*n)++] = sim__xstrdup(OUTPUT_LIST);
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Remove what an earlier run's list names and this run did not write (and
 * pcap/, once that leaves it empty), then put this run's list in place.
 * Like the outputs, the list is never read through a symbolic link, nor
 * are files removed under a pcap/ that is one. */
static bool own_outputs(const char *dir, char **names, size_t n, char *err, size_t errcap)
{
    char *path = sim__xasprintf("%s/%s", dir, OUTPUT_LIST);
    char *pdir = sim__xasprintf("%s/pcap", dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *old = fd >= 0 ? fdopen(fd, "r") : NULL;
    struct stat st;
    bool pcap_dir = lstat(pdir, &st) == 0 && S_ISDIR(st.st_mode);
    free(path);
    if (!old && fd >= 0)
        close(fd);
    if (old) {
        char line[1024];
        while (fgets(line, sizeof line, old)) {
            line[strcspn(line, "\n")] = 0;
            bool again = false;
            for (size_t i = 0; i < n && !again; i++)
                again = !strcmp(line, names[i]);
            if (again || !output_name(line) || (!strncmp(line, "pcap/", 5) && !pcap_dir))
                continue;
            char *stale = sim__xasprintf("%s/%s", dir, line);
            remove(stale);
            free(stale);
        }
        fclose(old);
        if (pcap_dir)
            rmdir(pdir); /* only if empty: a user's files stay */
    }
    free(pdir);
    struct out_file o = {0};
    if (!out_open(&o, dir, OUTPUT_LIST, err, errcap))
        return false;
    for (size_t i = 0; i < n; i++)
        fprintf(o.f, "%s\n", names[i]);
    bool ok = out_close(&o, err, errcap);
    return out_finish(&o, ok, err, errcap) && ok;
}

/* Every file is written under a temporary name first; the fabric's files
 * and the pcaps are then put into place, the earlier run's leftovers
 * removed and the list of outputs written, and the other text files
 * renamed last, summary.json at the very end: a directory without
 * summary.json is not complete. */
int sim_network_write(struct sim_network *net, const char *dir, double wall_seconds, char *err,
                      size_t errcap)
{
    if (output_elsewhere(net))
        return 0;
    if (sim_network_claim_output(net, dir, err, errcap))
        return -1;
    struct out_file o[NWRITTEN] = {{0}}; /* the first of out_names */
    size_t nlisted;
    char **listed = outputs_of(net, &nlisted);
    bool ok = true;
    for (size_t i = 0; ok && i < NWRITTEN; i++) {
        if (!writes(net, i))
            continue;
        ok = out_open(&o[i], dir, out_names[i], err, errcap);
        if (!ok)
            break;
        if (i == 0)
            write_messages(net, o[i].f);
        else if (i == 1)
            write_ports(net, o[i].f);
        else if (i == 2)
            sim__pcie_write_csv(net, o[i].f);
        else if (i == 3)
            sim__subnet_write(net, o[i].f);
        else if (i == 4)
            sim__coll_write_csv(net, o[i].f);
        else if (i == 5)
            sim__coll_write_table(net, o[i].f);
        else if (i == 6)
            sim__pcie_write_copies(net, o[i].f);
        else if (i == 7)
            sim__pcie_write_cxl(net, o[i].f);
        else
            write_summary(net, o[i].f, wall_seconds);
        ok = out_close(&o[i], err, errcap);
    }
    if (ok && sim__fabric_write(net, dir, err, errcap))
        ok = false;
    if (sim__traces_close(net, ok, err, errcap))
        ok = false;
    if (ok && !own_outputs(dir, listed, nlisted, err, errcap))
        ok = false;
    free_names(listed, nlisted);
    for (size_t i = 0; i < NWRITTEN; i++)
        if (o[i].path && !out_finish(&o[i], ok, err, errcap))
            ok = false;
    sim__output_dirs_release(net, ok);
    return ok ? 0 : -1;
}
