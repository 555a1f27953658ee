// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: bus_register() and struct device take a const struct bus_type.
 * The driver core made bus types constant during v6.4-v6.5; v6.1 still
 * needs them writable.
 */
#include <linux/device.h>

static const struct bus_type probe_bus = { .name = "gpuvirt_probe" };

static int __maybe_unused probe_const_bus_type(struct device *dev)
{
	dev->bus = &probe_bus;
	return bus_register(&probe_bus);
}
