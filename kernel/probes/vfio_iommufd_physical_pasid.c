// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: vfio_device_ops has pasid_attach_ioas and pasid_detach_ioas, with
 * the vfio_iommufd_physical_pasid_*() helpers for a physical device (NULL
 * stubs when CONFIG_IOMMUFD is off). They came in v6.15, for
 * VFIO_DEVICE_ATTACH_PASID on the device cdev.
 */
#include <linux/vfio.h>

const struct vfio_device_ops probe_ops = {
	.pasid_attach_ioas	= vfio_iommufd_physical_pasid_attach_ioas,
	.pasid_detach_ioas	= vfio_iommufd_physical_pasid_detach_ioas,
};
