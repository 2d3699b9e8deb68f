/* gunzip.h - reading gzip-compressed captures (gunzip.c). */
#ifndef RDMASIM_GUNZIP_H
#define RDMASIM_GUNZIP_H

#include <stdbool.h>
#include <stdio.h>

/* Whether fd is a regular file that begins with the gzip magic (1f 8b),
 * read without moving its offset. A pipe is read as it comes: what was
 * read to look could not be given back to libpcap. */
bool capture__is_gzip(int fd);
/* The decompressed bytes of the gzip file at path as a stream, or NULL
 * with errno set. */
FILE *capture__gunzip(const char *path);

#endif
