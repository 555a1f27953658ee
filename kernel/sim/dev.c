// SPDX-License-Identifier: GPL-2.0-only
/*
 * A simulated GPU: registers with the gpuvirt core when the gpuvirt_sim
 * PCI driver binds to its function (pci.c), and shows its "hardware" state
 * in debugfs so that tests can check what the core asked of it.
 *
 * Simulated: the identity and sizes of a GPU, its VRAM, backed on demand
 * (vram.c), and its engines, which run commands at modelled cost (exec.c).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sim.h"

static struct gpuvirt_sim_dev *to_sdev(struct gpuvirt_gpu *gpu)
{
	return container_of(gpu, struct gpuvirt_sim_dev, gpu);
}

/*
 * SR-IOV: the "firmware" takes a VF's resources, checking them as hardware
 * would: inside VRAM, on engines the GPU has, on a VF that is free.
 */
static int gpuvirt_sim_vf_provision(struct gpuvirt_gpu *gpu, unsigned int vf,
				    const struct gpuvirt_vf_config *cfg)
{
	struct gpuvirt_sim_vfs *v = &to_sdev(gpu)->vfs;
	int err = 0;

	if (vf >= GPUVIRT_SIM_PCI_VFS || !cfg->vram_size ||
	    cfg->vram_offset + cfg->vram_size > gpu->vram_size ||
	    cfg->vram_offset + cfg->vram_size < cfg->vram_offset ||
	    !cfg->engines || cfg->engines & ~GENMASK_ULL(gpu->engines - 1, 0))
		return -EINVAL;
	if (atomic_add_unless(&v->fail_provision, -1, 0))
		return -EIO;
	mutex_lock(&v->lock);
	if (v->vf[vf].type[0]) {
		err = -EBUSY;
	} else {
		strscpy(v->vf[vf].type, cfg->type, sizeof(v->vf[vf].type));
		v->vf[vf].cfg = *cfg;
		v->vf[vf].cfg.type = v->vf[vf].type;
		v->provisions++;
	}
	mutex_unlock(&v->lock);
	return err;
}

static void gpuvirt_sim_vf_release(struct gpuvirt_gpu *gpu, unsigned int vf)
{
	struct gpuvirt_sim_vfs *v = &to_sdev(gpu)->vfs;

	if (vf >= GPUVIRT_SIM_PCI_VFS)
		return;
	mutex_lock(&v->lock);
	WARN_ON(!v->vf[vf].type[0]);
	memset(&v->vf[vf], 0, sizeof(v->vf[vf]));
	v->releases++;
	mutex_unlock(&v->lock);
}

/* <debugfs>/gpuvirt_sim/sim<ID>/vfs: one line per provisioned VF */
static int gpuvirt_sim_vfs_show(struct seq_file *m, void *v)
{
	struct gpuvirt_sim_vfs *vfs = m->private;
	unsigned int i;

	mutex_lock(&vfs->lock);
	seq_printf(m, "provisions: %llu\nreleases: %llu\n", vfs->provisions,
		   vfs->releases);
	for (i = 0; i < GPUVIRT_SIM_PCI_VFS; i++) {
		const struct gpuvirt_vf_config *c = &vfs->vf[i].cfg;

		if (!vfs->vf[i].type[0])
			continue;
		seq_printf(m, "vf %u: type %s vram_offset %llu vram_size %llu engines %#llx ctx %u gi %d\n",
			   i, c->type, c->vram_offset, c->vram_size,
			   c->engines, c->ctx, c->gi);
	}
	mutex_unlock(&vfs->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_vfs);

static const struct gpuvirt_backend_ops gpuvirt_sim_backend_ops = {
	.name		= GPUVIRT_SIM_DRV_NAME,
	.vram_page	= gpuvirt_sim_vram_page,
	.vram_zero	= gpuvirt_sim_vram_zero,
	.vram_discard	= gpuvirt_sim_vram_discard,
	.vram_next	= gpuvirt_sim_vram_next,
	.exec		= gpuvirt_sim_exec,
	.engine_reset	= gpuvirt_sim_engine_reset,
	.reset		= gpuvirt_sim_reset,
	.vf_provision	= gpuvirt_sim_vf_provision,
	.vf_release	= gpuvirt_sim_vf_release,
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
	sdev->gpu.max_vfs = pci_sriov_get_totalvfs(pdev);
	mutex_init(&sdev->vfs.lock);
	memset(sdev->vfs.vf, 0, sizeof(sdev->vfs.vf));

	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->dev),
					   gpuvirt_sim_debugfs_root);
	debugfs_create_file("hw", 0400, sdev->debugfs, sdev,
			    &gpuvirt_sim_hw_fops);
	gpuvirt_sim_pci_debugfs_init(sdev);
	debugfs_create_file("vfs", 0400, sdev->debugfs, &sdev->vfs,
			    &gpuvirt_sim_vfs_fops);
	gpuvirt_sim_debugfs_knob("fail_vf_provision", sdev->debugfs,
				 &sdev->vfs.fail_provision);
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
