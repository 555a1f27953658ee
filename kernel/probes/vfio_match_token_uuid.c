// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: vfio_device_ops has match_token_uuid, the VF token check, and
 * vfio-pci-core exports vfio_pci_core_match_token_uuid() for it (v6.17,
 * with VFIO_DEVICE_BIND_FLAG_TOKEN). From then on vfio_pci_core_match()
 * calls ops->match_token_uuid unconditionally, so a driver that uses it
 * as its match op must set both.
 */
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

const struct vfio_device_ops probe_ops = {
	.match			= vfio_pci_core_match,
	.match_token_uuid	= vfio_pci_core_match_token_uuid,
};
