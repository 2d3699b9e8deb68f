/* unit.h - what the codec's Check suites share: the real captures, reference
 * CRCs and checksums written from the specifications (bit by bit, sharing no
 * code with codec/icrc.c), and whole-packet comparisons.
 */
#ifndef UNIT_H
#define UNIT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "rdma_codec.h"
#include "../check_run.h"

#define UNIT_FRAME_MAX 4096
#define UNIT_ETH_MIN_FRAME 60 /* 802.3 minimum frame without the FCS */

/* ---- reference CRCs and checksums ------------------------------------- */

/* How the packet starting at `l3` is covered by the invariant CRC. */
enum unit_crc {
    UNIT_CRC_NONE,   /* not an InfiniBand transport packet (PFC, PAUSE) */
    UNIT_CRC_ROCEV2, /* l3 is the IPv4 or IPv6 header */
    UNIT_CRC_ROCEV1, /* l3 is the GRH */
    UNIT_CRC_IB,     /* l3 is the LRH; ICRC then VCRC */
};

/* zlib CRC-32 (reflected 0xEDB88320), continuing from `crc`; start with 0. */
uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t len);
/* ICRC of the packet at l3 up to `len` bytes (the ICRC excluded), with the
 * variant fields masked as IBA vol. 1 7.8.1 and annex A17.3.3 say. */
uint32_t ref_icrc(enum unit_crc kind, const uint8_t *l3, size_t len);
/* VCRC (IBA vol. 1 7.8.2): CRC-16, polynomial 0x100B, LSB first. */
uint16_t ref_vcrc(const uint8_t *lrh, size_t len);
/* RFC 1071 one's complement sum of 16-bit words, not inverted. */
uint32_t ref_sum16(uint32_t sum, const uint8_t *p, size_t len);
uint16_t ref_fold(uint32_t sum);
/* UDP checksum of the datagram at `udp` (RFC 768; RFC 8200 8.1 for IPv6)
 * summed with its checksum field: 0xffff when the checksum is right. */
uint16_t ref_udp_verify(const uint8_t *ip, const uint8_t *udp, size_t udp_len);

/* Recompute what a sender derives from the other bytes of a packet at l3
 * ending at `end` (ICRC included; VCRC after it for IB): the IPv4 header
 * checksum, the ICRC and the VCRC. Tests that change a header byte call it
 * so that the change is the only thing wrong with the frame. */
void unit_seal(enum unit_crc kind, uint8_t *frame, size_t l3, size_t end);

/* ---- real captures ----------------------------------------------------- */

struct unit_frame {
    uint8_t *data;
    uint32_t caplen;
    uint32_t len; /* on the wire */
};

struct unit_capture {
    char *path;
    const char *name; /* file name inside path */
    int linktype;
    size_t count;
    struct unit_frame *frames;
};

/* Every .pcap file in pcaps/real of the source tree (TOP_SRCDIR, or the source
 * directory this test was built from), sorted by name. */
size_t unit_load_captures(struct unit_capture **out);
void unit_free_captures(struct unit_capture *caps, size_t n);

/* ---- packets ------------------------------------------------------------ */

enum rdma_status unit_decode(unsigned linktype, const uint8_t *frame, size_t caplen,
                             size_t wirelen, struct rdma_pkt *pkt);

/* Every field of the headers named by `headers` (RDMA_HDR_* bits) equal. */
void unit_assert_headers_eq(const struct rdma_pkt *a, const struct rdma_pkt *b, uint32_t headers,
                            const char *what);
/* Every field of every header present in a, and the payload, equal in b. */
void unit_assert_pkt_eq(const struct rdma_pkt *a, const struct rdma_pkt *b, const char *what);

/* encode(decode(frame)) gives the frame back (for Ethernet: padded to 60
 * bytes with zeros) and decode(encode(decode(frame))) == decode(frame). */
void unit_assert_roundtrip(unsigned linktype, const uint8_t *frame, size_t len, const char *what);

/* Every prefix shorter than `needed` bytes decodes to RDMA_TRUNCATED with
 * the full wire length; longer prefixes (only Ethernet padding is missing)
 * decode as the whole frame does. */
void unit_assert_prefixes(unsigned linktype, const uint8_t *frame, size_t len, size_t needed,
                          const char *what);


#endif
