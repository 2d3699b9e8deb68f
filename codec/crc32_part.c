/* crc32_part.c - the CRC-32 of bytes that are not held, from their own CRC.
 *
 * CRC-32 (zlib's, the ICRC's) is linear over GF(2): for a message A
 * followed by B,
 *   crc(A B) = crc(A) * x^(8 |B|) mod P  +  crc(B)
 * with P the CRC-32 polynomial and + the exclusive or (the pre- and
 * post-conditioning ones cancel out in the sum; Stigge et al., "Reversing
 * CRC - Theory and Practice", 2006, and zlib's crc32_combine rest on the
 * same identity). So a simulator that knows a payload only as a pattern
 * computes the pattern's CRC once, and every frame carrying it costs the
 * CRC of its headers and one multiplication, not a pass over its payload.
 *
 * Polynomials are held reflected, as the CRC is: bit 31 is the coefficient
 * of x^0, bit 0 that of x^31.
 */
#include <isa-l/crc.h>

#include "rdma_codec.h"

#define POLY 0xedb88320u /* x^32 + x^26 + ... + 1, reflected, without x^32 */
#define X0 0x80000000u   /* the polynomial 1 */

/* a * b mod P. b is multiplied by x once per coefficient of a, and added
 * where a has a one: 32 rounds without a branch. */
static uint32_t gf2_multiply(uint32_t a, uint32_t b)
{
    uint32_t product = 0;
    for (int i = 31; i >= 0; i--) {
        product ^= b & (0u - (a >> i & 1u));
        b = (b >> 1) ^ (POLY & (0u - (b & 1u)));
    }
    return product;
}

/* x^(8 n) mod P, by squaring: x^8, x^16, x^32, ... multiplied in for each
 * bit of n. */
static uint32_t x_pow_bytes(uint32_t n)
{
    uint32_t result = X0, square = X0 >> 8; /* x^8 */
    for (; n; n >>= 1) {
        if (n & 1)
            result = gf2_multiply(result, square);
        square = gf2_multiply(square, square);
    }
    return result;
}

/* Multiplying by a fixed polynomial is linear in the other factor, so the
 * product is the sum of the products of its nibbles, each a lookup. */
void rdma_crc32_part_init(struct rdma_crc32_part *part, const uint8_t *bytes, uint32_t len)
{
    uint32_t shift = x_pow_bytes(len);
    part->len = len;
    part->crc = crc32_gzip_refl(0, bytes, len);
    for (unsigned k = 0; k < 8; k++)
        for (uint32_t v = 0; v < 16; v++)
            part->times[k][v] = gf2_multiply(shift, v << 4 * k);
}

uint32_t rdma_crc32_append(uint32_t crc, const struct rdma_crc32_part *part)
{
    uint32_t product = part->crc;
    for (unsigned k = 0; k < 8; k++)
        product ^= part->times[k][crc >> 4 * k & 15];
    return product;
}

