/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Numbers, sizes, durations and UUIDs as the user types and reads them. Pure
 * functions, shared by the argument parser and the printer.
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
 * binary suffixes K, M, G, T (or k, m, g, t), as gpuvirt_parse_size() of
 * kernel/sim/size.c, which the sim's new_device file uses too. Returns 0,
 * or -1.
 */
int units_parse_size(const char *s, uint64_t *val);

/*
 * Format @bytes with the largest binary suffix that represents it exactly
 * (512M, 141G, 1536K, 100). Returns the length snprintf() would.
 */
size_t units_format_size(char *buf, size_t len, uint64_t bytes);

/*
 * Format a duration of @ns nanoseconds in the largest unit of s, ms, us and
 * ns it reaches, rounded to one decimal that is left out when it is 0
 * (1.5s, 250us, 2ms, 999ns); 0 is "0" and UINT64_MAX, "no bound", is
 * "inf". Returns the length snprintf() would.
 */
size_t units_format_time(char *buf, size_t len, uint64_t ns);

/* A UUID in its canonical text form, 36 characters and a NUL. */
#define UNITS_UUID_LEN	37

/*
 * Parse a UUID in the 8-4-4-4-12 hex form, either case, into its canonical
 * lower-case form in @out. Returns 0, or -1 (and @out untouched).
 */
int units_parse_uuid(const char *s, char out[UNITS_UUID_LEN]);

/*
 * Format 16 random bytes as a version 4 (random) UUID: the version and
 * variant bits are set in the text, not in @bytes.
 */
void units_format_uuid4(const uint8_t bytes[16], char out[UNITS_UUID_LEN]);

/*
 * One line of a VF's creatable_vgpu_types, as NVIDIA's vGPU driver and
 * gpuvirt's SR-IOV GPUs both write it: "ID : vGPU Name" under a header,
 * "3     : H200-35C". On a line that lists a type, store its id (1 or more)
 * in @id, point @name at the name within @line (cut of the newline and
 * trailing blanks) and return 0; return -1 for the header, a blank line or
 * anything else.
 */
int units_parse_type_line(char *line, unsigned long *id, char **name);

#endif /* GPUVIRTCTL_UNITS_H */
