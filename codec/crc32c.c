/* crc32c.c - the CRC32c MPA protects each FPDU with (RFC 5044 4.4).
 *
 * The iSCSI CRC of RFC 3720 B.4: polynomial 0x1EDC6F41, reflected, initial
 * value and final xor 0xFFFFFFFF; the FPDU carries it least significant
 * byte first. ISA-L's crc32_iscsi returns the register before the final
 * xor, hence the complement.
 */
#include <isa-l/crc.h>

#include "rdma_iwarp.h"

uint32_t rdma_crc32c(const uint8_t *p, size_t len)
{
    /* ISA-L takes a non-const pointer but only reads through it. */
    return ~crc32_iscsi((unsigned char *)(uintptr_t)p, (int)len, 0xffffffffu);
}
