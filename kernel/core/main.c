// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirt core: shares GPUs with virtual machines.
 *
 * This module holds the GPU registry that backends register with, the
 * gpuvirt generic netlink family and the core's debugfs tree. vGPU types,
 * the scheduler, MIG and the passthrough checks build on it.
 */
#include <linux/module.h>

#include "gpuvirt.h"
#include "vgpu.h"

static int __init gpuvirt_init(void)
{
	int err;

	err = gpuvirt_debugfs_init();
	if (err)
		return err;

	err = gpuvirt_gi_init();
	if (err)
		goto err_debugfs_exit;

	err = gpuvirt_mdev_init();
	if (err)
		goto err_gi_exit;

	err = gpuvirt_nl_init();
	if (err)
		goto err_mdev_exit;

	return 0;

err_mdev_exit:
	gpuvirt_mdev_exit();
err_gi_exit:
	gpuvirt_gi_exit();
err_debugfs_exit:
	gpuvirt_debugfs_exit();
	return err;
}

static void __exit gpuvirt_exit(void)
{
	gpuvirt_nl_exit();
	gpuvirt_mdev_exit();
	gpuvirt_gi_exit();
	gpuvirt_debugfs_exit();
	WARN_ON(!xa_empty(&gpuvirt_registry.gpus));
}

module_init(gpuvirt_init);
module_exit(gpuvirt_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("gpuvirt developers");
MODULE_DESCRIPTION("GPU sharing for virtual machines: registry, netlink, debugfs");
