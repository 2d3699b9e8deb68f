/* units.h - numbers with units, written as people write them: 100Gbps,
 * 1.5us, 64KiB, 4096, 1e-6, 0.1%.
 *
 * Values are parsed exactly in decimal (1.5us is 1500000 ps, never a
 * binary fraction) and must come out as a whole number of the base unit.
 * Each parser returns NULL on success or a static text saying what is wrong.
 */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

const char *sim__parse_time(const char *s, uint64_t *ps);     /* needs a unit */
const char *sim__parse_rate(const char *s, uint64_t *bps);    /* needs a unit */
const char *sim__parse_size(const char *s, uint64_t *bytes);  /* bare number: bytes */
const char *sim__parse_uint(const char *s, uint64_t max, uint64_t *v); /* decimal or 0x */
const char *sim__parse_prob(const char *s, double *p);        /* 0..1, or a percentage */
const char *sim__parse_bool(const char *s, int *b);

/* Format a time back for the summary: "1.5us", "1ms". */
void sim__format_time(uint64_t ps, char *buf, size_t cap);

#endif
