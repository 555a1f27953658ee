/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences between the supported kernels (Debian's 6.1 and
 * 6.12 lines). Each shim is fed by a compile probe in kernel/probes/, whose
 * result scripts/compat-probe.sh writes to compat-probed.h in the per-kernel
 * build tree. There are no version checks here: a kernel either has an API
 * or it does not.
 */
#ifndef GPUVIRT_COMPAT_H
#define GPUVIRT_COMPAT_H

#include "compat-probed.h"

/*
 * 2026-12: bus attribute callbacks take a const struct bus_type since v6.3;
 * v6.1 passes a mutable one. Probe: bus_attr_const_bus.
 */
#ifdef GPUVIRT_HAVE_BUS_ATTR_CONST_BUS
#define gpuvirt_bus_type_cb	const struct bus_type
#else
#define gpuvirt_bus_type_cb	struct bus_type
#endif

#endif /* GPUVIRT_COMPAT_H */
