// SPDX-License-Identifier: GPL-2.0-only
/*
 * Numbers and sizes, see units.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include "units.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse digits in @base up to the first non-digit; *end points past them. */
static int parse_digits(const char *s, unsigned int base, uint64_t *val,
			const char **end)
{
	uint64_t v = 0;
	const char *p;
	int d;

	for (p = s; (d = hex_digit(*p)) >= 0 && (unsigned int)d < base; p++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -1;
		v = v * base + (uint64_t)d;
	}
	if (p == s)
		return -1;
	*val = v;
	*end = p;
	return 0;
}

int units_parse_u64(const char *s, uint64_t *val)
{
	const char *end;
	unsigned int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (parse_digits(s, base, val, &end) || *end)
		return -1;
	return 0;
}

int units_parse_size(const char *s, uint64_t *val)
{
	unsigned int shift;
	const char *end;
	uint64_t v;

	if (parse_digits(s, 10, &v, &end))
		return -1;
	switch (*end) {
	case '\0':
		shift = 0;
		break;
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'T': case 't':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (shift && end[1])
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*val = v << shift;
	return 0;
}

size_t units_format_size(char *buf, size_t len, uint64_t bytes)
{
	static const char suffix[] = "KMGTPE";
	unsigned int shift = 0;
	int n;

	while (bytes && shift < 60 && !((bytes >> shift) & 1023))
		shift += 10;

	if (shift)
		n = snprintf(buf, len, "%" PRIu64 "%c", bytes >> shift,
			     suffix[shift / 10 - 1]);
	else
		n = snprintf(buf, len, "%" PRIu64, bytes);
	return n < 0 ? 0 : (size_t)n;
}
