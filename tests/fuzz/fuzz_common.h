/* fuzz_common.h - what the libFuzzer targets share: the property check
 * that stops a run on the input that broke it, and the link types a frame
 * may be decoded as. Each target defines FUZZ_TARGET (its name in the
 * message) before including this. */
#ifndef TESTS_FUZZ_COMMON_H
#define TESTS_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "rdma_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: property violated: %s\n", FUZZ_TARGET, what);
        abort();
    }
}

static const unsigned fuzz_linktypes[] = {
    RDMA_LINKTYPE_ETHERNET, RDMA_LINKTYPE_LINUX_SLL, RDMA_LINKTYPE_LINUX_SLL2,
    RDMA_LINKTYPE_INFINIBAND, RDMA_LINKTYPE_ERF,
};
#define FUZZ_NLINKTYPES (sizeof fuzz_linktypes / sizeof fuzz_linktypes[0])

#endif
