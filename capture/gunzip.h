/* gunzip.h - reading gzip-compressed captures (gunzip.c). */
#ifndef RDMASIM_GUNZIP_H
#define RDMASIM_GUNZIP_H

#include <stdbool.h>
#include <stdio.h>

/* Whether the stream begins with the gzip magic (1f 8b); it is rewound. */
bool capture__is_gzip(FILE *fp);
/* The decompressed bytes of the gzip file at path as a stream, or NULL
 * with errno set. */
FILE *capture__gunzip(const char *path);

#endif
