/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences between the supported kernels (Debian's 6.1 and
 * 6.12 lines). Each shim is fed by a compile probe in kernel/probes/, whose
 * result scripts/compat-probe.sh writes to compat-probed.h in the per-kernel
 * build tree. There are no version checks here: a kernel either has an API
 * or it does not.
 *
 * This is the one file where checkpatch's CONST_STRUCT check is waived: its
 * job is to name the writable types that old kernels still require.
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

/*
 * 2026-12: bus_register(), struct device and struct device_driver take a
 * const struct bus_type since v6.4/v6.5; v6.1 needs it writable. Define a
 * bus with GPUVIRT_DEFINE_BUS(name) so it is const where it can be.
 * Probe: const_bus_type.
 */
#ifdef GPUVIRT_HAVE_CONST_BUS_TYPE
#define GPUVIRT_DEFINE_BUS(name)	static const struct bus_type name
#else
#define GPUVIRT_DEFINE_BUS(name)	static struct bus_type name
#endif

/*
 * 2026-12: vfio_device_ops gained bind_iommufd, unbind_iommufd, attach_ioas
 * and detach_ioas, with the vfio_iommufd_physical_*() helpers for a physical
 * device, in v6.2; 6.1 has none. Use GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS inside
 * a vfio_device_ops initializer (after including <linux/vfio.h>): it fills
 * those members where they exist (the helpers are NULL there when
 * CONFIG_IOMMUFD is off) and is empty on 6.1.
 * Probe: vfio_iommufd_physical_ops.
 */
#ifdef GPUVIRT_HAVE_VFIO_IOMMUFD_PHYSICAL_OPS
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS				\
	.bind_iommufd	= vfio_iommufd_physical_bind,			\
	.unbind_iommufd	= vfio_iommufd_physical_unbind,			\
	.attach_ioas	= vfio_iommufd_physical_attach_ioas,		\
	.detach_ioas	= vfio_iommufd_physical_detach_ioas,
#else
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS
#endif

/*
 * 2026-12: the same callbacks for emulated (mdev) devices use the
 * vfio_iommufd_emulated_*() helpers, also new in v6.2.
 * Probe: vfio_iommufd_emulated_ops.
 */
#ifdef GPUVIRT_HAVE_VFIO_IOMMUFD_EMULATED_OPS
#define GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS				\
	.bind_iommufd	= vfio_iommufd_emulated_bind,			\
	.unbind_iommufd	= vfio_iommufd_emulated_unbind,			\
	.attach_ioas	= vfio_iommufd_emulated_attach_ioas,		\
	.detach_ioas	= vfio_iommufd_emulated_detach_ioas,
#else
#define GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS
#endif

/*
 * 2026-12: a VFIO driver's release callback must end with
 * vfio_free_device() on v6.1; since v6.4 the core frees the device and the
 * function is gone. Call gpuvirt_vfio_release_done() at the end of release.
 * Probe: vfio_free_device.
 */
#ifdef GPUVIRT_HAVE_VFIO_FREE_DEVICE
#define gpuvirt_vfio_release_done(vdev)	vfio_free_device(vdev)
#else
#define gpuvirt_vfio_release_done(vdev)	((void)(vdev))
#endif

/*
 * 2026-12: eventfd_signal() lost its count argument in v6.8; v6.1 takes
 * (ctx, 1). Probe: eventfd_signal_one_arg.
 */
#ifdef GPUVIRT_HAVE_EVENTFD_SIGNAL_ONE_ARG
#define gpuvirt_eventfd_signal(ctx)	eventfd_signal(ctx)
#else
#define gpuvirt_eventfd_signal(ctx)	eventfd_signal(ctx, 1)
#endif

#endif /* GPUVIRT_COMPAT_H */
