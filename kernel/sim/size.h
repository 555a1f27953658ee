/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Decimal numbers and sizes as an administrator types them, in the sim's
 * new_device file and on gpuvirtctl's command line and configuration file.
 * Pure logic, built into the sim module, into gpuvirtctl and into the
 * userspace unit tests, so that a size reads the same everywhere.
 */
#ifndef GPUVIRT_SIM_SIZE_H
#define GPUVIRT_SIM_SIZE_H

#include "pure.h"

/**
 * gpuvirt_parse_dec() - parse a decimal number
 * @s: the text, not NUL-terminated
 * @n: its length
 * @max: the largest value accepted
 * @out: the value, written only on success
 *
 * Only the digits 0-9: no sign, no blanks, no prefix.
 *
 * Return: 0, -EINVAL when @s is empty or holds a character other than a
 * digit, -ERANGE when the number is above @max.
 */
int gpuvirt_parse_dec(const char *s, size_t n, u64 max, u64 *out);

/**
 * gpuvirt_parse_size() - parse a size in bytes
 * @s: the text, not NUL-terminated
 * @n: its length
 * @out: the size in bytes, written only on success
 *
 * A decimal number of bytes, optionally followed by one of the binary
 * suffixes K, M, G and T (or k, m, g, t): "4096", "512M", "24G".
 *
 * Return: 0, -EINVAL when @s is no such text, -ERANGE when the size does
 * not fit in 64 bits.
 */
int gpuvirt_parse_size(const char *s, size_t n, u64 *out);

#endif /* GPUVIRT_SIM_SIZE_H */
