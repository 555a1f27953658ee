// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decimal numbers and sizes, see size.h. Pure logic, also built into
 * gpuvirtctl and the userspace unit tests.
 */
#include "size.h"

int gpuvirt_parse_dec(const char *s, size_t n, u64 max, u64 *out)
{
	u64 v = 0, d;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (u64)(s[i] - '0');
		/* v * 10 + d <= max, without wrapping when max < d */
		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int gpuvirt_parse_size(const char *s, size_t n, u64 *out)
{
	unsigned int shift = 0;
	u64 v;
	int err;

	if (n) {
		switch (s[n - 1]) {
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
		}
		if (shift)
			n--;
	}
	err = gpuvirt_parse_dec(s, n, U64_MAX >> shift, &v);
	if (err)
		return err;
	*out = v << shift;
	return 0;
}
