// SPDX-License-Identifier: GPL-2.0-only
/*
 * A simulated GPU: registers with the gpuvirt core when the gpuvirt_sim
 * driver binds, and shows its "hardware" state in debugfs so that tests can
 * check what the core asked of it.
 *
 * Simulated: the identity and sizes of a GPU, its VRAM, backed on demand
 * (vram.c), and its engines, which run commands at modelled cost (exec.c).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sim.h"

static const struct gpuvirt_backend_ops gpuvirt_sim_backend_ops = {
	.name		= GPUVIRT_SIM_DRV_NAME,
	.vram_page	= gpuvirt_sim_vram_page,
	.vram_zero	= gpuvirt_sim_vram_zero,
	.vram_discard	= gpuvirt_sim_vram_discard,
	.vram_next	= gpuvirt_sim_vram_next,
	.exec		= gpuvirt_sim_exec,
	.engine_reset	= gpuvirt_sim_engine_reset,
	.reset		= gpuvirt_sim_reset,
};

static int gpuvirt_sim_hw_show(struct seq_file *m, void *v)
{
	struct gpuvirt_sim_dev *sdev = m->private;

	seq_printf(m, "id: %u\n", sdev->gpu.id);
	seq_printf(m, "model: %s\n", sdev->gpu.model_name);
	seq_printf(m, "vram_size: %llu\n", sdev->gpu.vram_size);
	seq_printf(m, "engines: %u\n", sdev->gpu.engines);
	seq_printf(m, "registered: %d\n", sdev->gpu.registered);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_hw);

int gpuvirt_sim_dev_probe(struct gpuvirt_sim_dev *sdev)
{
	int err;

	sdev->gpu.dev = &sdev->dev;
	sdev->gpu.ops = &gpuvirt_sim_backend_ops;

	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->dev),
					   gpuvirt_sim_debugfs_root);
	debugfs_create_file("hw", 0400, sdev->debugfs, sdev,
			    &gpuvirt_sim_hw_fops);
	gpuvirt_sim_vram_init(sdev);
	gpuvirt_sim_engine_init(sdev);

	err = gpuvirt_gpu_register(&sdev->gpu);
	if (err)
		goto err_vram_fini;
	return 0;

err_vram_fini:
	gpuvirt_sim_vram_fini(sdev);
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
	return err;
}

void gpuvirt_sim_dev_remove(struct gpuvirt_sim_dev *sdev)
{
	gpuvirt_gpu_unregister(&sdev->gpu);
	debugfs_remove_recursive(sdev->debugfs);
	gpuvirt_sim_vram_fini(sdev);
	sdev->debugfs = NULL;
}
