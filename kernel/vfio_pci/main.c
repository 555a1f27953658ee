// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirt_vfio_pci - vfio-pci-core variant driver for gpuvirt GPU passthrough
 *
 * What it does:
 *  - binds a PCI device only when the administrator asks for it through the
 *    device's driver_override; its id table matches nothing on its own, so
 *    loading the module claims no device;
 *  - hands the device to user space (QEMU) through VFIO, using
 *    vfio-pci-core for config space, BARs, interrupts, reset and DMA
 *    ownership, exactly as vfio-pci does for a plain device;
 *  - refuses the boot VGA device, which the host console is likely to be
 *    using, unless the allow_boot_vga module parameter is set;
 *  - counts how often user space opened and closed each device, and shows
 *    the counts and the device's IOMMU group in debugfs, under
 *    /sys/kernel/debug/gpuvirt_vfio_pci/<bdf>/.
 *
 * What it does not do (yet): no device-specific quirks, regions or
 * migration; no Intel IGD OpRegion, SR-IOV or "ids=" parameter and no QAT
 * denylist as vfio-pci has; nothing of the gpuvirt mediated GPU core.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>
#include <linux/vgaarb.h>

#include "compat.h"

static bool allow_boot_vga;
module_param(allow_boot_vga, bool, 0444);
MODULE_PARM_DESC(allow_boot_vga,
		 "Allow binding the boot VGA device, which the host console may be using (default: N)");

/*
 * Root of this driver's debugfs tree. Written only at module init and exit,
 * when no device can be bound, and read only by probe; no lock needed.
 */
static struct dentry *gpuvirt_vfio_pci_debugfs_root;

/**
 * struct gpuvirt_vfio_pci_device - one device bound to gpuvirt_vfio_pci
 * @core_device: the vfio-pci-core device; must stay first, vfio_alloc_device()
 *	and vfio-pci-core's drvdata both point here
 * @debugfs_dir: /sys/kernel/debug/gpuvirt_vfio_pci/<bdf>/; set at probe and
 *	cleared at remove, both under the PCI device lock
 * @iommu_group_id: id of the device's IOMMU group, set once at probe
 * @open_count: successful open_device() calls
 * @close_count: close_device() calls
 *
 * The VFIO core calls open_device() and close_device() with the device set
 * lock held, so they never race with each other; the counters are atomic
 * because debugfs reads them without that lock.
 */
struct gpuvirt_vfio_pci_device {
	struct vfio_pci_core_device core_device;
	struct dentry *debugfs_dir;
	int iommu_group_id;
	atomic_t open_count;
	atomic_t close_count;
};

static struct gpuvirt_vfio_pci_device *
to_gpuvirt_vfio_pci_device(struct vfio_device *core_vdev)
{
	return container_of(core_vdev, struct gpuvirt_vfio_pci_device,
			    core_device.vdev);
}

static int gpuvirt_vfio_pci_open_device(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);
	int ret;

	ret = vfio_pci_core_enable(&gvdev->core_device);
	if (ret)
		return ret;

	vfio_pci_core_finish_enable(&gvdev->core_device);
	atomic_inc(&gvdev->open_count);
	return 0;
}

static void gpuvirt_vfio_pci_close_device(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);

	vfio_pci_core_close_device(core_vdev);
	atomic_inc(&gvdev->close_count);
}

static const struct vfio_device_ops gpuvirt_vfio_pci_ops = {
	.name		= "gpuvirt-vfio-pci",
	.init		= vfio_pci_core_init_dev,
	.release	= vfio_pci_core_release_dev,
	.open_device	= gpuvirt_vfio_pci_open_device,
	.close_device	= gpuvirt_vfio_pci_close_device,
	.ioctl		= vfio_pci_core_ioctl,
	.device_feature	= vfio_pci_core_ioctl_feature,
	.read		= vfio_pci_core_read,
	.write		= vfio_pci_core_write,
	.mmap		= vfio_pci_core_mmap,
	.request	= vfio_pci_core_request,
	.match		= vfio_pci_core_match,
	GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS
};

static int gpuvirt_vfio_pci_open_count_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	seq_printf(s, "%d\n", atomic_read(&gvdev->open_count));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_open_count);

static int gpuvirt_vfio_pci_close_count_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	seq_printf(s, "%d\n", atomic_read(&gvdev->close_count));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_close_count);

static int gpuvirt_vfio_pci_iommu_group_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	seq_printf(s, "%d\n", gvdev->iommu_group_id);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_iommu_group);

/* debugfs is best effort: a failure here must not fail the probe. */
static void gpuvirt_vfio_pci_debugfs_add(struct gpuvirt_vfio_pci_device *gvdev)
{
	struct pci_dev *pdev = gvdev->core_device.pdev;
	struct dentry *dir;

	dir = debugfs_create_dir(pci_name(pdev), gpuvirt_vfio_pci_debugfs_root);
	debugfs_create_file("open_count", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_open_count_fops);
	debugfs_create_file("close_count", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_close_count_fops);
	debugfs_create_file("iommu_group", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_iommu_group_fops);
	gvdev->debugfs_dir = dir;
}

static void gpuvirt_vfio_pci_debugfs_remove(struct gpuvirt_vfio_pci_device *gvdev)
{
	/* Waits for readers still inside the files, which use gvdev. */
	debugfs_remove_recursive(gvdev->debugfs_dir);
	gvdev->debugfs_dir = NULL;
}

/* The same test as the PCI core's boot_vga sysfs attribute. */
static bool gpuvirt_vfio_pci_is_boot_vga(struct pci_dev *pdev)
{
	struct pci_dev *vga_dev = vga_default_device();

	if (vga_dev)
		return pdev == vga_dev;

	return pdev->resource[PCI_ROM_RESOURCE].flags & IORESOURCE_ROM_SHADOW;
}

static int gpuvirt_vfio_pci_probe(struct pci_dev *pdev,
				  const struct pci_device_id *id)
{
	struct gpuvirt_vfio_pci_device *gvdev;
	struct iommu_group *group;
	int ret;

	if (gpuvirt_vfio_pci_is_boot_vga(pdev)) {
		if (!allow_boot_vga) {
			pci_warn(pdev, "refusing the boot VGA device: the host console may be using it (load with allow_boot_vga=1 to override)\n");
			return -EBUSY;
		}
		pci_warn(pdev, "binding the boot VGA device (allow_boot_vga=1)\n");
	}

	gvdev = vfio_alloc_device(gpuvirt_vfio_pci_device, core_device.vdev,
				  &pdev->dev, &gpuvirt_vfio_pci_ops);
	if (IS_ERR(gvdev))
		return PTR_ERR(gvdev);

	atomic_set(&gvdev->open_count, 0);
	atomic_set(&gvdev->close_count, 0);
	/* vfio-pci-core looks its device up through the drvdata. */
	dev_set_drvdata(&pdev->dev, &gvdev->core_device);

	ret = vfio_pci_core_register_device(&gvdev->core_device);
	if (ret)
		goto err_put_vdev;

	/* Registration succeeds only with a group, but stay defensive. */
	group = iommu_group_get(&pdev->dev);
	gvdev->iommu_group_id = group ? iommu_group_id(group) : -1;
	iommu_group_put(group);

	gpuvirt_vfio_pci_debugfs_add(gvdev);
	return 0;

err_put_vdev:
	vfio_put_device(&gvdev->core_device.vdev);
	return ret;
}

static void gpuvirt_vfio_pci_remove(struct pci_dev *pdev)
{
	struct vfio_pci_core_device *core_device = dev_get_drvdata(&pdev->dev);
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(&core_device->vdev);

	gpuvirt_vfio_pci_debugfs_remove(gvdev);
	vfio_pci_core_unregister_device(core_device);
	vfio_put_device(&core_device->vdev);
}

/* Match everything, but only through driver_override, as vfio-pci does. */
static const struct pci_device_id gpuvirt_vfio_pci_table[] = {
	{ PCI_DRIVER_OVERRIDE_DEVICE_VFIO(PCI_ANY_ID, PCI_ANY_ID) },
	{}
};
MODULE_DEVICE_TABLE(pci, gpuvirt_vfio_pci_table);

static struct pci_driver gpuvirt_vfio_pci_driver = {
	.name			= "gpuvirt_vfio_pci",
	.id_table		= gpuvirt_vfio_pci_table,
	.probe			= gpuvirt_vfio_pci_probe,
	.remove			= gpuvirt_vfio_pci_remove,
	.err_handler		= &vfio_pci_core_err_handlers,
	.driver_managed_dma	= true,
};

static int __init gpuvirt_vfio_pci_init(void)
{
	int ret;

	gpuvirt_vfio_pci_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);

	ret = pci_register_driver(&gpuvirt_vfio_pci_driver);
	if (ret)
		goto err_remove_debugfs;

	return 0;

err_remove_debugfs:
	debugfs_remove_recursive(gpuvirt_vfio_pci_debugfs_root);
	return ret;
}
module_init(gpuvirt_vfio_pci_init);

static void __exit gpuvirt_vfio_pci_exit(void)
{
	pci_unregister_driver(&gpuvirt_vfio_pci_driver);
	debugfs_remove_recursive(gpuvirt_vfio_pci_debugfs_root);
}
module_exit(gpuvirt_vfio_pci_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("gpuvirt developers");
MODULE_DESCRIPTION("vfio-pci-core variant driver for gpuvirt GPU passthrough");
