/* rdmap.c - the RDMAP opcode table (RFC 5040 4.3, RFC 7306 8) and the names
 * of atomic operations and Terminate errors, generated from the X-macro
 * lists of rdma_iwarp.h.
 */
#include "rdma_iwarp.h"

const struct rdma_rdmap_opcode_info rdma_rdmap_opcodes[16] = {
#define ENTRY(name, v, str, fl) [v] = {str, fl},
    RDMA_RDMAP_OPCODES(ENTRY)
#undef ENTRY
};

const char *rdma_rdmap_atomic_op_name(unsigned op)
{
    switch (op) {
#define NAME(name, v, str)                                                     \
    case v:                                                                    \
        return str;
        RDMA_RDMAP_ATOMIC_OPS(NAME)
#undef NAME
    }
    return 0;
}

const char *rdma_term_layer_name(unsigned layer)
{
    switch (layer) {
#define NAME(v, str)                                                           \
    case v:                                                                    \
        return str;
        RDMA_TERM_LAYERS(NAME)
#undef NAME
    }
    return 0;
}

struct term_name {
    uint8_t layer, etype;
    int16_t code; /* -1: the name of the error type */
    const char *name;
};

static const struct term_name term_names[] = {
#define ENTRY(l, t, c, str) {l, t, c, str},
    RDMA_TERM_ERRORS(ENTRY)
#undef ENTRY
};

static const char *term_lookup(unsigned layer, unsigned etype, int code)
{
    for (size_t i = 0; i < sizeof term_names / sizeof term_names[0]; i++) {
        const struct term_name *t = &term_names[i];
        if (t->layer == layer && t->etype == etype && t->code == code)
            return t->name;
    }
    return 0;
}

const char *rdma_term_etype_name(unsigned layer, unsigned etype)
{
    return term_lookup(layer, etype, -1);
}

const char *rdma_term_error_name(unsigned layer, unsigned etype, unsigned code)
{
    return term_lookup(layer, etype, (int)code);
}
