/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Numbers and sizes as the user types and reads them. Pure functions, shared
 * by the argument parser and the printer.
 */
#ifndef GPUVIRTCTL_UNITS_H
#define GPUVIRTCTL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse an unsigned number: decimal, or hex with a 0x prefix. No sign, no
 * blanks, no trailing characters. Returns 0, or -1 if @s is not a number
 * that fits in 64 bits.
 */
int units_parse_u64(const char *s, uint64_t *val);

/*
 * Parse a size: a decimal number of bytes, optionally followed by one of the
 * binary suffixes K, M, G, T (or k, m, g, t). Returns 0, or -1.
 */
int units_parse_size(const char *s, uint64_t *val);

/*
 * Format @bytes with the largest binary suffix that represents it exactly
 * (512M, 141G, 1536K, 100). Returns the length snprintf() would.
 */
size_t units_format_size(char *buf, size_t len, uint64_t bytes);

#endif /* GPUVIRTCTL_UNITS_H */
