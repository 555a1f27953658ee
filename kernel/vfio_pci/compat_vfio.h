/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VFIO API differences between the kernels gpuvirt_vfio_pci builds for.
 * Every shim keys on a compile probe from kernel/probes/, never on a version
 * number; scripts/compat-probe.sh writes the results to compat-probed.h.
 */
#ifndef GPUVIRT_VFIO_PCI_COMPAT_VFIO_H
#define GPUVIRT_VFIO_PCI_COMPAT_VFIO_H

#include <linux/vfio.h>

#include "compat-probed.h"

/*
 * 2026-12: vfio_device_ops gained bind_iommufd, unbind_iommufd, attach_ioas
 * and detach_ioas, with the vfio_iommufd_physical_*() helpers for a physical
 * device, in v6.2; 6.1 has none. Use GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS inside
 * a vfio_device_ops initializer: it fills those members where they exist (the
 * helpers are NULL there when CONFIG_IOMMUFD is off) and is empty on 6.1.
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

#endif /* GPUVIRT_VFIO_PCI_COMPAT_VFIO_H */
