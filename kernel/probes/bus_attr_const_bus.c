// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: bus attribute show/store callbacks take a const struct bus_type.
 * The driver core made these callbacks const in the v6.3 merge window;
 * v6.1 still passes a mutable pointer.
 */
#include <linux/device.h>

static ssize_t probe_store(const struct bus_type *bus, const char *buf,
			   size_t count)
{
	return count;
}

struct bus_attribute probe_attr = __ATTR(probe, 0200, NULL, probe_store);
