// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: VFIO migration has the PRE_COPY states, VFIO_MIG_GET_PRECOPY_INFO
 * and the migration_get_data_size op (VFIO_DEVICE_FEATURE_MIG_DATA_SIZE),
 * all three added together in v6.2. v6.1 has STOP_COPY and P2P only.
 */
#include <linux/vfio.h>

static int __maybe_unused probe_size(struct vfio_device *vdev,
				     unsigned long *len)
{
	*len = VFIO_MIGRATION_PRE_COPY + VFIO_DEVICE_STATE_PRE_COPY_P2P +
	       VFIO_MIG_GET_PRECOPY_INFO;
	return 0;
}

static const struct vfio_migration_ops probe_ops __maybe_unused = {
	.migration_get_data_size = probe_size,
};
