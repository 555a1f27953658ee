// SPDX-License-Identifier: GPL-2.0-only
/*
 * Numbers, sizes, durations and UUIDs, see units.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/size.h"
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
	/* The grammar of the sim's new_device file, from the same code. */
	return gpuvirt_parse_size(s, strlen(s), val) ? -1 : 0;
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

size_t units_format_time(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		uint64_t ns;
		const char *name;
	} units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" },
	};
	uint64_t whole, tenths;
	size_t i;
	int n;

	if (ns == UINT64_MAX)
		return (size_t)snprintf(buf, len, "inf");
	if (!ns)
		return (size_t)snprintf(buf, len, "0");

	for (i = 0; i + 1 < sizeof(units) / sizeof(units[0]); i++)
		if (ns >= units[i].ns)
			break;
	whole = ns / units[i].ns;
	tenths = (ns % units[i].ns * 10 + units[i].ns / 2) / units[i].ns;
	if (tenths == 10) {
		whole++;
		tenths = 0;
	}
	/* 999.96ms rounds to 1s, not 1000ms. */
	if (whole == 1000 && i > 0) {
		i--;
		whole = 1;
	}
	if (tenths)
		n = snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%s", whole,
			     tenths, units[i].name);
	else
		n = snprintf(buf, len, "%" PRIu64 "%s", whole, units[i].name);
	return n < 0 ? 0 : (size_t)n;
}

int units_parse_uuid(const char *s, char out[UNITS_UUID_LEN])
{
	char tmp[UNITS_UUID_LEN];
	int i, d;

	for (i = 0; i < UNITS_UUID_LEN - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			tmp[i] = '-';
			continue;
		}
		d = hex_digit(s[i]);
		if (d < 0)
			return -1;
		tmp[i] = "0123456789abcdef"[d];
	}
	if (s[i])
		return -1;
	tmp[i] = '\0';
	memcpy(out, tmp, sizeof(tmp));
	return 0;
}

void units_format_uuid4(const uint8_t bytes[16], char out[UNITS_UUID_LEN])
{
	uint8_t b[16];

	memcpy(b, bytes, sizeof(b));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);	/* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	snprintf(out, UNITS_UUID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

int units_parse_type_line(char *line, unsigned long *id, char **name)
{
	char *p, *end, *n;
	unsigned long val;

	for (p = line; isspace((unsigned char)*p); p++)
		;
	if (!isdigit((unsigned char)*p))
		return -1;	/* the header, or a blank line */
	errno = 0;
	val = strtoul(p, &end, 10);
	if (errno || !val || val > 0xffffffffUL ||
	    (*end && !isspace((unsigned char)*end) && *end != ':'))
		return -1;
	/* the name: what follows the ':' separator, or the number */
	for (n = end; isspace((unsigned char)*n); n++)
		;
	if (*n == ':')
		n++;
	while (isspace((unsigned char)*n))
		n++;
	for (p = n + strlen(n); p > n && isspace((unsigned char)p[-1]); p--)
		p[-1] = '\0';
	if (!*n)
		return -1;
	*id = val;
	*name = n;
	return 0;
}
