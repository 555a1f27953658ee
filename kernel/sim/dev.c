// SPDX-License-Identifier: GPL-2.0-only
/*
 * A simulated GPU: registers with the gpuvirt core when the gpuvirt_sim
 * PCI driver binds to its function (pci.c), and shows its "hardware" state in debugfs so that tests can
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
	seq_printf(m, "pci: %s\n", pci_name(sdev->pdev));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_hw);

/*
 * The GPU's PCI function @pdev was bound: register the GPU on it. The sim
 * device gets a "gpu" link to the function, so that scripts find the
 * GPU's sysfs directory from /sys/bus/gpuvirt_sim/devices/sim<ID>.
 */
int gpuvirt_sim_dev_probe(struct gpuvirt_sim_dev *sdev, struct pci_dev *pdev)
{
	int err;

	sdev->pdev = pdev;
	sdev->gpu.dev = &pdev->dev;
	sdev->gpu.ops = &gpuvirt_sim_backend_ops;

	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->dev),
					   gpuvirt_sim_debugfs_root);
	debugfs_create_file("hw", 0400, sdev->debugfs, sdev,
			    &gpuvirt_sim_hw_fops);
	gpuvirt_sim_pci_debugfs_init(sdev);
	gpuvirt_sim_vram_init(sdev);
	gpuvirt_sim_engine_init(sdev);

	err = sysfs_create_link(&sdev->dev.kobj, &pdev->dev.kobj, "gpu");
	if (err)
		goto err_vram_fini;
	err = gpuvirt_gpu_register(&sdev->gpu);
	if (err)
		goto err_remove_link;
	return 0;

err_remove_link:
	sysfs_remove_link(&sdev->dev.kobj, "gpu");
err_vram_fini:
	gpuvirt_sim_vram_fini(sdev);
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
	sdev->pdev = NULL;
	return err;
}

void gpuvirt_sim_dev_remove(struct gpuvirt_sim_dev *sdev)
{
	gpuvirt_gpu_unregister(&sdev->gpu);
	sysfs_remove_link(&sdev->dev.kobj, "gpu");
	debugfs_remove_recursive(sdev->debugfs);
	gpuvirt_sim_vram_fini(sdev);
	sdev->debugfs = NULL;
	sdev->pdev = NULL;
}
