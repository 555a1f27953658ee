// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: the VFIO core answers VFIO_DEVICE_GET_REGION_INFO itself and asks
 * the driver through vfio_device_ops::get_region_info_caps, and
 * vfio-pci-core exports its answer, vfio_pci_ioctl_get_region_info(), for
 * variant drivers. Both came in v6.19; from then on the ioctl never
 * reaches ops->ioctl, and vfio_pci_core_ioctl() no longer handles it.
 */
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

static int probe_region_info(struct vfio_device *vdev,
			     struct vfio_region_info *info,
			     struct vfio_info_cap *caps)
{
	return 0;
}

const struct vfio_device_ops probe_ops = {
	.get_region_info_caps	= probe_region_info,
};

const struct vfio_device_ops probe_pci_ops = {
	.get_region_info_caps	= vfio_pci_ioctl_get_region_info,
};
