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

#endif
