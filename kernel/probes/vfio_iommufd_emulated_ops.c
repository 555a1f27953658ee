// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: vfio_device_ops has the iommufd callbacks and vfio.h provides the
 * vfio_iommufd_emulated_*() helpers for emulated devices (NULL stubs when
 * CONFIG_IOMMUFD is off). They arrived in v6.2; v6.1 has neither.
 */
#include <linux/vfio.h>

const struct vfio_device_ops probe_ops = {
	.bind_iommufd	= vfio_iommufd_emulated_bind,
	.unbind_iommufd	= vfio_iommufd_emulated_unbind,
	.attach_ioas	= vfio_iommufd_emulated_attach_ioas,
	.detach_ioas	= vfio_iommufd_emulated_detach_ioas,
};
