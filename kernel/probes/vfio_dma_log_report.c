// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: the VFIO core can report a device's DMA log. It fills the VMM's
 * bitmap through iova_bitmap, which VFIO built in from v6.1 to v6.9; from
 * v6.10 it comes with CONFIG_IOMMUFD_DRIVER only, and without that the
 * header gives stubs, so that every VFIO_DEVICE_FEATURE_DMA_LOGGING_REPORT
 * fails with -EOPNOTSUPP (Debian's kernels leave it out). This file defines
 * iova_bitmap_free() itself, which builds only where the header declares
 * it rather than defining a stub.
 */
#include <linux/iova_bitmap.h>

void iova_bitmap_free(struct iova_bitmap *bitmap)
{
}
