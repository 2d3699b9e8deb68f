/* fields.h - expand the header field lists of rdma_codec.h into code.
 *
 * DECODE_FIELDS(LIST, h, p) reads every field of header `h` from bytes `p`;
 * ENCODE_FIELDS writes them back. Both come from the same list, so decode
 * and encode are mirrors by construction.
 */
#ifndef RDMA_FIELDS_H
#define RDMA_FIELDS_H

#include "bytes.h"

#define FIELD_DECODE_(name, type, byte, shift, width)                          \
    h__->name = (type)get_bits(p__ + (byte), shift, width);
#define ARRAY_DECODE_(name, byte, len, kind) memcpy(h__->name, p__ + (byte), len);
#define FIELD_ENCODE_(name, type, byte, shift, width)                          \
    put_bits(p__ + (byte), shift, width, h__->name);
#define ARRAY_ENCODE_(name, byte, len, kind) memcpy(p__ + (byte), h__->name, len);

#define DECODE_FIELDS(LIST, h, p)                                              \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        const uint8_t *p__ = (p);                                              \
        LIST(FIELD_DECODE_, ARRAY_DECODE_)                                     \
    } while (0)

#define ENCODE_FIELDS(LIST, h, p)                                              \
    do {                                                                       \
        __typeof__(h) h__ = (h);                                               \
        uint8_t *p__ = (p);                                                    \
        LIST(FIELD_ENCODE_, ARRAY_ENCODE_)                                     \
    } while (0)

/* The extended transport headers after the BTH, in wire order (which is
 * their bits' order): X(field list, header bit, member of struct rdma_pkt),
 * for the code that walks them, so that no walk can leave one out. */
#define RDMA_EXT_HEADERS(X)                                                    \
    X(RDMA_RDETH_FIELDS, RDETH, rdeth)                                         \
    X(RDMA_DETH_FIELDS, DETH, deth)                                            \
    X(RDMA_XRCETH_FIELDS, XRCETH, xrceth)                                      \
    X(RDMA_RETH_FIELDS, RETH, reth)                                            \
    X(RDMA_ATOMICETH_FIELDS, ATOMICETH, atomiceth)                             \
    X(RDMA_AETH_FIELDS, AETH, aeth)                                            \
    X(RDMA_ATOMICACKETH_FIELDS, ATOMICACKETH, atomicacketh)                    \
    X(RDMA_IMMDT_FIELDS, IMMDT, immdt)                                         \
    X(RDMA_IETH_FIELDS, IETH, ieth)

#endif
