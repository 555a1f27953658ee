// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: struct vfio_device_ops has the iommufd callbacks and vfio.h provides
 * the vfio_iommufd_physical_*() helpers for them (NULL stubs when
 * CONFIG_IOMMUFD is off). Both arrived in v6.2; v6.1 has neither.
 */
#include <linux/vfio.h>

const struct vfio_device_ops probe_ops = {
	.bind_iommufd	= vfio_iommufd_physical_bind,
	.unbind_iommufd	= vfio_iommufd_physical_unbind,
	.attach_ioas	= vfio_iommufd_physical_attach_ioas,
	.detach_ioas	= vfio_iommufd_physical_detach_ioas,
};
