// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core's debugfs view: <debugfs>/gpuvirt/gpus/<name>/ for each
 * registered GPU, holding what the core believes about it. Tests compare it
 * with the netlink answers and with the backend's own debugfs.
 *
 * debugfs failures are never fatal and never reported: debugfs is a
 * debugging aid, and its API is built to be called with error pointers.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "gpuvirt.h"

static const char * const gpuvirt_mode_names[] = {
	[GPUVIRT_GPU_MODE_TIMESLICED] = "timesliced",
	[GPUVIRT_GPU_MODE_MIG] = "mig",
};

static int gpuvirt_debugfs_info_show(struct seq_file *m, void *v)
{
	struct gpuvirt_gpu *gpu = m->private;

	/*
	 * The file is removed under the registry lock before the GPU can be
	 * freed, and debugfs waits for running readers on removal.
	 */
	seq_printf(m, "id: %u\n", gpu->id);
	seq_printf(m, "name: %s\n", gpu->name);
	seq_printf(m, "model: %s\n", gpu->model_name);
	seq_printf(m, "vram_size: %llu\n", gpu->vram_size);
	seq_printf(m, "engines: %u\n", gpu->engines);
	seq_printf(m, "mode: %s\n", gpu->mode < ARRAY_SIZE(gpuvirt_mode_names) ?
		   gpuvirt_mode_names[gpu->mode] : "unknown");
	seq_printf(m, "backend: %s\n", gpu->ops->name);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_debugfs_info);

void gpuvirt_debugfs_gpu_add(struct gpuvirt_gpu *gpu)
{
	gpu->debugfs = debugfs_create_dir(gpu->name,
					  gpuvirt_registry.debugfs_gpus);
	debugfs_create_file("info", 0400, gpu->debugfs, gpu,
			    &gpuvirt_debugfs_info_fops);
}

void gpuvirt_debugfs_gpu_del(struct gpuvirt_gpu *gpu)
{
	debugfs_remove_recursive(gpu->debugfs);
	gpu->debugfs = NULL;
}

int gpuvirt_debugfs_init(void)
{
	gpuvirt_registry.debugfs = debugfs_create_dir("gpuvirt", NULL);
	gpuvirt_registry.debugfs_gpus =
		debugfs_create_dir("gpus", gpuvirt_registry.debugfs);
	return 0;
}

void gpuvirt_debugfs_exit(void)
{
	debugfs_remove_recursive(gpuvirt_registry.debugfs);
	gpuvirt_registry.debugfs = NULL;
	gpuvirt_registry.debugfs_gpus = NULL;
}
