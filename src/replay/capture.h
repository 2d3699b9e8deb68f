/* capture.h - frames from a capture file (see capture.c). */
#ifndef RDMASIM_REPLAY_CAPTURE_H
#define RDMASIM_REPLAY_CAPTURE_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>

struct capture {
    pcap_t *pc;         /* libpcap, for what is not a classic pcap file */
    int fd;
    bool swapped, nano;
    int linktype;
    uint32_t snaplen;
    uint64_t size, pos;
    uint8_t *win;
    uint64_t win_off, win_len;
    char error[128];
};

struct capture_frame {
    uint64_t sec;
    uint32_t nsec;
    uint32_t caplen, len;
    const uint8_t *data; /* valid until the next capture_next() */
};

/* False, with the reason in err, when the file cannot be read as a capture. */
bool capture_open(struct capture *c, const char *path, char *err, size_t errlen);
/* 1: a frame; 0: end of file; -1: a damaged record (c->error says why). */
int capture_next(struct capture *c, struct capture_frame *f);
void capture_close(struct capture *c);

#endif
