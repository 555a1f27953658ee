// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpuvirt_sim bus: simulated GPUs are created and destroyed by writing
 * to /sys/bus/gpuvirt_sim/new_device and del_device, the way netdevsim does
 * it. Each one is a device on this bus, bound to the gpuvirt_sim driver,
 * which creates the GPU's PCI domain and function (pci.c); the
 * gpuvirt_sim PCI driver binds to the function and registers it with the
 * gpuvirt core.
 *
 *   echo "0 h200-141gb" > /sys/bus/gpuvirt_sim/new_device
 *   echo "1 custom 24G 4" > /sys/bus/gpuvirt_sim/new_device
 *   echo 0 > /sys/bus/gpuvirt_sim/del_device
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "sim.h"
#include "spec.h"

struct dentry *gpuvirt_sim_debugfs_root;

/*
 * Serialises new_device and del_device and protects gpuvirt_sim_devs.
 * gpuvirt_sim_enable is cleared at module exit under the lock, so that no
 * device is added after the bus starts going away.
 */
static DEFINE_MUTEX(gpuvirt_sim_bus_lock);
static LIST_HEAD(gpuvirt_sim_devs);
static bool gpuvirt_sim_enable;

GPUVIRT_DEFINE_BUS(gpuvirt_sim_bus);

static void gpuvirt_sim_dev_release(struct device *dev)
{
	kfree(to_gpuvirt_sim_dev(dev));
}

static const struct device_type gpuvirt_sim_dev_type = {
	.name = "gpuvirt_sim_gpu",
	.release = gpuvirt_sim_dev_release,
};

static struct gpuvirt_sim_dev *gpuvirt_sim_dev_find(u32 id)
{
	struct gpuvirt_sim_dev *sdev;

	lockdep_assert_held(&gpuvirt_sim_bus_lock);
	list_for_each_entry(sdev, &gpuvirt_sim_devs, list)
		if (sdev->gpu.id == id)
			return sdev;
	return NULL;
}

static int gpuvirt_sim_spec_apply(struct gpuvirt_sim_dev *sdev,
				  const struct gpuvirt_sim_spec *spec)
{
	const struct gpuvirt_model *model;

	sdev->gpu.id = spec->id;
	snprintf(sdev->gpu.name, sizeof(sdev->gpu.name), "sim%u", spec->id);
	strscpy(sdev->gpu.model_name, spec->model,
		sizeof(sdev->gpu.model_name));

	if (!strcmp(spec->model, GPUVIRT_MODEL_CUSTOM)) {
		sdev->gpu.vram_size = spec->vram_size;
		sdev->gpu.engines = spec->engines;
		return 0;
	}

	model = gpuvirt_model_lookup(spec->model);
	if (!model) {
		pr_err("gpuvirt_sim: unknown model \"%s\"; the models are a100-40gb, a100-80gb, h100-80gb, h200-141gb and custom\n",
		       spec->model);
		return -EINVAL;
	}
	sdev->gpu.model = model;
	sdev->gpu.vram_size = model->vram_size;
	sdev->gpu.engines = model->engines;
	return 0;
}

static ssize_t new_device_store(gpuvirt_bus_type_cb *bus, const char *buf,
				size_t count)
{
	struct gpuvirt_sim_spec spec;
	struct gpuvirt_sim_dev *sdev;
	const char *why;
	int err;

	err = gpuvirt_sim_parse_new(buf, count, &spec, &why);
	if (err) {
		pr_err("gpuvirt_sim: new_device: %s\n", why);
		return err;
	}

	mutex_lock(&gpuvirt_sim_bus_lock);
	if (!gpuvirt_sim_enable) {
		err = -ENODEV;
		goto err_unlock;
	}
	if (gpuvirt_sim_dev_find(spec.id)) {
		pr_err("gpuvirt_sim: new_device: a GPU with id %u exists\n",
		       spec.id);
		err = -EEXIST;
		goto err_unlock;
	}

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev) {
		err = -ENOMEM;
		goto err_unlock;
	}
	err = gpuvirt_sim_spec_apply(sdev, &spec);
	if (err)
		goto err_free_sdev;
	if (spec.id > GPUVIRT_SIM_ID_MAX) {
		pr_err("gpuvirt_sim: new_device: id %u is too large: GPU <id> is PCI domain %#x + id, and ids go up to %u\n",
		       spec.id, GPUVIRT_SIM_PCI_DOMAIN_BASE, GPUVIRT_SIM_ID_MAX);
		err = -EINVAL;
		goto err_free_sdev;
	}

	sdev->dev.bus = &gpuvirt_sim_bus;
	sdev->dev.type = &gpuvirt_sim_dev_type;
	device_initialize(&sdev->dev);
	err = dev_set_name(&sdev->dev, "%s", sdev->gpu.name);
	if (err)
		goto err_put_device;

	/* Probing is synchronous, so probe_err is final when this returns. */
	sdev->probe_err = -ENODEV;
	err = device_add(&sdev->dev);
	if (err)
		goto err_put_device;
	if (!sdev->dev.driver) {
		err = sdev->probe_err;
		goto err_del_device;
	}

	list_add_tail(&sdev->list, &gpuvirt_sim_devs);
	mutex_unlock(&gpuvirt_sim_bus_lock);
	return count;

err_del_device:
	device_del(&sdev->dev);
err_put_device:
	put_device(&sdev->dev);	/* frees sdev through the release callback */
	goto err_unlock;
err_free_sdev:
	kfree(sdev);
err_unlock:
	mutex_unlock(&gpuvirt_sim_bus_lock);
	return err;
}
static BUS_ATTR_WO(new_device);

static void gpuvirt_sim_dev_destroy(struct gpuvirt_sim_dev *sdev)
{
	list_del(&sdev->list);
	device_unregister(&sdev->dev);
}

static ssize_t del_device_store(gpuvirt_bus_type_cb *bus, const char *buf,
				size_t count)
{
	struct gpuvirt_sim_dev *sdev;
	const char *why;
	u32 id;
	int err;

	err = gpuvirt_sim_parse_del(buf, count, &id, &why);
	if (err) {
		pr_err("gpuvirt_sim: del_device: %s\n", why);
		return err;
	}

	mutex_lock(&gpuvirt_sim_bus_lock);
	sdev = gpuvirt_sim_dev_find(id);
	if (!sdev) {
		pr_err("gpuvirt_sim: del_device: no GPU with id %u\n", id);
		err = -ENOENT;
		goto out_unlock;
	}
	gpuvirt_sim_dev_destroy(sdev);
	err = count;
out_unlock:
	mutex_unlock(&gpuvirt_sim_bus_lock);
	return err;
}
static BUS_ATTR_WO(del_device);

static struct attribute *gpuvirt_sim_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(gpuvirt_sim_bus);

static int gpuvirt_sim_probe(struct device *dev)
{
	struct gpuvirt_sim_dev *sdev = to_gpuvirt_sim_dev(dev);

	sdev->probe_err = gpuvirt_sim_pci_add(sdev);
	return sdev->probe_err;
}

static void gpuvirt_sim_remove(struct device *dev)
{
	gpuvirt_sim_pci_del(to_gpuvirt_sim_dev(dev));
}

GPUVIRT_DEFINE_BUS(gpuvirt_sim_bus) = {
	.name		= GPUVIRT_SIM_DRV_NAME,
	.bus_groups	= gpuvirt_sim_bus_groups,
	.probe		= gpuvirt_sim_probe,
	.remove		= gpuvirt_sim_remove,
};

static struct device_driver gpuvirt_sim_driver = {
	.name		= GPUVIRT_SIM_DRV_NAME,
	.bus		= &gpuvirt_sim_bus,
	.owner		= THIS_MODULE,
	.suppress_bind_attrs = true,
};

static int __init gpuvirt_sim_init(void)
{
	int err;

	gpuvirt_sim_debugfs_root = debugfs_create_dir(GPUVIRT_SIM_DRV_NAME,
						      NULL);

	err = bus_register(&gpuvirt_sim_bus);
	if (err)
		goto err_debugfs_remove;

	err = pci_register_driver(&gpuvirt_sim_pci_driver);
	if (err)
		goto err_bus_unregister;

	err = pci_register_driver(&gpuvirt_sim_vf_driver);
	if (err)
		goto err_pci_unregister;

	err = driver_register(&gpuvirt_sim_driver);
	if (err)
		goto err_vf_unregister;

	mutex_lock(&gpuvirt_sim_bus_lock);
	gpuvirt_sim_enable = true;
	mutex_unlock(&gpuvirt_sim_bus_lock);
	return 0;

err_vf_unregister:
	pci_unregister_driver(&gpuvirt_sim_vf_driver);
err_pci_unregister:
	pci_unregister_driver(&gpuvirt_sim_pci_driver);
err_bus_unregister:
	bus_unregister(&gpuvirt_sim_bus);
err_debugfs_remove:
	debugfs_remove_recursive(gpuvirt_sim_debugfs_root);
	return err;
}

static void __exit gpuvirt_sim_exit(void)
{
	struct gpuvirt_sim_dev *sdev, *tmp;

	mutex_lock(&gpuvirt_sim_bus_lock);
	gpuvirt_sim_enable = false;
	list_for_each_entry_safe(sdev, tmp, &gpuvirt_sim_devs, list)
		gpuvirt_sim_dev_destroy(sdev);
	mutex_unlock(&gpuvirt_sim_bus_lock);

	driver_unregister(&gpuvirt_sim_driver);
	pci_unregister_driver(&gpuvirt_sim_vf_driver);
	pci_unregister_driver(&gpuvirt_sim_pci_driver);
	bus_unregister(&gpuvirt_sim_bus);
	debugfs_remove_recursive(gpuvirt_sim_debugfs_root);
}

module_init(gpuvirt_sim_init);
module_exit(gpuvirt_sim_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("gpuvirt developers");
MODULE_DESCRIPTION("Simulated GPUs for gpuvirt");
