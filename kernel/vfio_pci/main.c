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
 *  - on every open, re-checks that the device's IOMMU group is still viable
 *    (each member driverless, a bridge, or bound to a driver that manages
 *    DMA itself: vfio-pci, a variant such as this one, pci-stub) and that the
 *    device has a reset method, and records who opened it;
 *  - on every close, makes sure the device was reset (by vfio-pci-core,
 *    or here when the core could not) and checks that it came back: its
 *    vendor and device IDs read back from config space unchanged. A device
 *    that fails the check is quarantined: opens are refused with -EIO until
 *    the administrator clears it (echo 0 > .../quarantine);
 *  - counts opens, closes, resets and failures, and shows them, the last
 *    opener and the device's IOMMU group in debugfs, under
 *    /sys/kernel/debug/gpuvirt_vfio_pci/<bdf>/, with a fault knob
 *    (fail_check) that makes the next post-close checks fail;
 *  - reports opens, closes and quarantines to gpuvirt's netlink monitor
 *    group, and its state of each device to gpuvirt's pt-get request,
 *    through the gpuvirt core (kernel/gpuvirt_pt.h), which it therefore
 *    needs loaded.
 *
 * What it does not do (yet): no device-specific quirks, regions or
 * migration; no Intel IGD OpRegion, SR-IOV or "ids=" parameter and no QAT
 * denylist as vfio-pci has.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>
#include <linux/vgaarb.h>

#include "compat.h"
#include "gpuvirt_pt.h"

static bool allow_boot_vga;
module_param(allow_boot_vga, bool, 0444);
MODULE_PARM_DESC(allow_boot_vga,
		 "Allow binding the boot VGA device, which the host console may be using (default: N)");

static bool require_reset;
module_param(require_reset, bool, 0644);
MODULE_PARM_DESC(require_reset,
		 "Refuse to open a device that has no reset method (default: N, only log it)");

#define GPUVIRT_VFIO_PCI_REASON_LEN	128

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
 * @vendor_device: the vendor (low 16 bits) and device ID read at probe, what
 *	the post-close check expects to read back; set once at probe
 * @open_count: successful open_device() calls
 * @close_count: close_device() calls
 * @refused_count: opens refused by the checks (quarantine, viability, reset)
 * @reset_count: successful resets after a close
 * @failure_count: failed resets and failed post-close checks
 * @fail_check: fault injection: the next @fail_check post-close checks fail
 *	as if the device had not come back
 * @state_lock: protects the members below it
 * @quarantined: a post-close check failed; opens are refused until cleared
 * @reason: why it is quarantined, for debugfs and the log
 * @opener_pid: thread group id of the last opener, 0 before any open
 * @opener_comm: its command name
 * @is_open: the device is open now
 * @node: entry in gpuvirt_vfio_pci_devices, from the end of probe to the
 *	start of remove
 *
 * The VFIO core calls open_device() and close_device() with the device set
 * lock held, so they never race with each other; the counters are atomic
 * because debugfs reads them without that lock. @state_lock is taken by
 * open_device(), close_device() and the debugfs files, all of which may
 * sleep, and nests inside the device set lock; nothing is called with it
 * held but string copies.
 */
struct gpuvirt_vfio_pci_device {
	struct vfio_pci_core_device core_device;
	struct dentry *debugfs_dir;
	int iommu_group_id;
	u32 vendor_device;
	atomic_t open_count;
	atomic_t close_count;
	atomic_t refused_count;
	atomic_t reset_count;
	atomic_t failure_count;
	atomic_t fail_check;
	struct mutex state_lock; /* see above */
	bool quarantined;
	char reason[GPUVIRT_VFIO_PCI_REASON_LEN];
	pid_t opener_pid;
	char opener_comm[TASK_COMM_LEN];
	bool is_open;
	struct list_head node;
};

/*
 * The bound devices, for the core's pt requests (gpuvirt_vfio_pci_state()).
 * A device is on the list only while it is fully set up; the lock nests
 * outside every device's @state_lock.
 */
static LIST_HEAD(gpuvirt_vfio_pci_devices);
static DEFINE_MUTEX(gpuvirt_vfio_pci_devices_lock);

static struct gpuvirt_vfio_pci_device *
to_gpuvirt_vfio_pci_device(struct vfio_device *core_vdev)
{
	return container_of(core_vdev, struct gpuvirt_vfio_pci_device,
			    core_device.vdev);
}

/*
 * May @dev stay in an IOMMU group that user space owns? Driverless, a PCI
 * bridge, or bound to a PCI driver that manages DMA itself (vfio-pci and
 * its variants, pci-stub, pcieport), as the kernel's DMA ownership rules
 * want. The driver pointer is a snapshot: the VFIO core enforces the same
 * rule when the group is attached; this check reports it by name at open.
 */
struct gpuvirt_vfio_pci_culprit {
	struct device *dev;
	const char *driver;
};

static int gpuvirt_vfio_pci_viable_one(struct device *dev, void *data)
{
	struct device_driver *drv = READ_ONCE(dev->driver);
	struct gpuvirt_vfio_pci_culprit *bad = data;
	struct pci_dev *pdev;

	if (!drv)
		return 0;
	if (dev_is_pci(dev)) {
		pdev = to_pci_dev(dev);
		if (pci_is_bridge(pdev) || to_pci_driver(drv)->driver_managed_dma)
			return 0;
	}
	bad->dev = dev;
	bad->driver = drv->name;
	return -EBUSY;
}

static int gpuvirt_vfio_pci_check_group(struct gpuvirt_vfio_pci_device *gvdev)
{
	struct pci_dev *pdev = gvdev->core_device.pdev;
	struct gpuvirt_vfio_pci_culprit bad = { };
	struct iommu_group *group;
	int ret;

	group = iommu_group_get(&pdev->dev);
	if (!group) {
		pci_warn(pdev, "refusing open: the device has no IOMMU group\n");
		return -ENODEV;
	}
	ret = iommu_group_for_each_dev(group, &bad,
				       gpuvirt_vfio_pci_viable_one);
	if (ret && bad.dev)
		pci_warn(pdev, "refusing open: %s in IOMMU group %d is bound to host driver %s\n",
			 dev_name(bad.dev), gvdev->iommu_group_id, bad.driver);
	iommu_group_put(group);
	return ret;
}

/* Does the PCI core know a way to reset the function? */
static bool gpuvirt_vfio_pci_can_reset(struct pci_dev *pdev)
{
	return pdev->reset_methods[0] != 0;
}

/* The device's state for the core; takes @state_lock. */
static void gpuvirt_vfio_pci_fill_state(struct gpuvirt_vfio_pci_device *gvdev,
					struct gpuvirt_pt_state *st)
{
	memset(st, 0, sizeof(*st));
	st->opens = atomic_read(&gvdev->open_count);
	st->closes = atomic_read(&gvdev->close_count);
	st->refused = atomic_read(&gvdev->refused_count);
	st->resets = atomic_read(&gvdev->reset_count);
	st->failures = atomic_read(&gvdev->failure_count);
	mutex_lock(&gvdev->state_lock);
	st->open = gvdev->is_open;
	st->quarantined = gvdev->quarantined;
	st->opener_pid = gvdev->opener_pid;
	strscpy(st->opener_comm, gvdev->opener_comm, sizeof(st->opener_comm));
	strscpy(st->reason, gvdev->reason, sizeof(st->reason));
	mutex_unlock(&gvdev->state_lock);
}

/* Tell gpuvirt's netlink monitor group what happened. */
static void gpuvirt_vfio_pci_notify(struct gpuvirt_vfio_pci_device *gvdev,
				    enum gpuvirt_pt_event event)
{
	struct gpuvirt_pt_state st;

	gpuvirt_vfio_pci_fill_state(gvdev, &st);
	gpuvirt_pt_notify(gvdev->core_device.pdev, event, &st);
}

/* The provider's state op: the core asks about @pdev. */
static int gpuvirt_vfio_pci_state(struct pci_dev *pdev,
				  struct gpuvirt_pt_state *st)
{
	struct gpuvirt_vfio_pci_device *gvdev;
	int ret = -ENODEV;

	mutex_lock(&gpuvirt_vfio_pci_devices_lock);
	list_for_each_entry(gvdev, &gpuvirt_vfio_pci_devices, node) {
		if (gvdev->core_device.pdev == pdev) {
			gpuvirt_vfio_pci_fill_state(gvdev, st);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&gpuvirt_vfio_pci_devices_lock);
	return ret;
}

static const struct gpuvirt_pt_provider gpuvirt_vfio_pci_provider = {
	.state	= gpuvirt_vfio_pci_state,
};

static int gpuvirt_vfio_pci_open_checks(struct gpuvirt_vfio_pci_device *gvdev)
{
	struct pci_dev *pdev = gvdev->core_device.pdev;
	int ret;

	mutex_lock(&gvdev->state_lock);
	if (gvdev->quarantined) {
		pci_warn(pdev, "refusing open: quarantined (%s); clear with echo 0 > /sys/kernel/debug/%s/%s/quarantine\n",
			 gvdev->reason, KBUILD_MODNAME, pci_name(pdev));
		mutex_unlock(&gvdev->state_lock);
		return -EIO;
	}
	mutex_unlock(&gvdev->state_lock);

	ret = gpuvirt_vfio_pci_check_group(gvdev);
	if (ret)
		return ret;

	if (!gpuvirt_vfio_pci_can_reset(pdev)) {
		if (require_reset) {
			pci_warn(pdev, "refusing open: the device has no reset method (require_reset=1)\n");
			return -EBUSY;
		}
		pci_notice(pdev, "opened without a reset method: state may carry over between users\n");
	}
	return 0;
}

static int gpuvirt_vfio_pci_open_device(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);
	int ret;

	ret = gpuvirt_vfio_pci_open_checks(gvdev);
	if (ret)
		goto err_count_refusal;

	ret = vfio_pci_core_enable(&gvdev->core_device);
	if (ret)
		return ret;

	vfio_pci_core_finish_enable(&gvdev->core_device);
	atomic_inc(&gvdev->open_count);

	mutex_lock(&gvdev->state_lock);
	gvdev->opener_pid = task_tgid_nr(current);
	get_task_comm(gvdev->opener_comm, current);
	gvdev->is_open = true;
	mutex_unlock(&gvdev->state_lock);
	gpuvirt_vfio_pci_notify(gvdev, GPUVIRT_PT_EVENT_OPEN);
	return 0;

err_count_refusal:
	atomic_inc(&gvdev->refused_count);
	return ret;
}

/*
 * After a close: make sure the function was reset, then check that the
 * device still answers with the IDs it had at probe. A device that does
 * not is quarantined.
 *
 * vfio-pci-core resets the function on close when it can, and then clears
 * needs_reset; only when it could not (its trylock failed) is the reset
 * done here. The device is held out of runtime suspend meanwhile: the core
 * has just dropped its PM reference, and a runtime suspend that saved the
 * config space in the middle of a reset here would give the device back
 * with its BARs cleared at the next resume.
 */
static void gpuvirt_vfio_pci_reset_and_verify(struct gpuvirt_vfio_pci_device *gvdev)
{
	struct vfio_pci_core_device *vdev = &gvdev->core_device;
	struct pci_dev *pdev = vdev->pdev;
	char reason[GPUVIRT_VFIO_PCI_REASON_LEN] = "";
	u32 id = 0;
	int pm, ret;

	pm = pm_runtime_resume_and_get(&pdev->dev);
	if (pm < 0) {
		atomic_inc(&gvdev->failure_count);
		pci_warn(pdev, "cannot resume the device after close: %d\n", pm);
	} else if (!vdev->needs_reset) {
		atomic_inc(&gvdev->reset_count);
	} else if (gpuvirt_vfio_pci_can_reset(pdev)) {
		/* Fails with -EAGAIN while the device lock is held (unbind). */
		ret = pci_try_reset_function(pdev);
		if (!ret) {
			atomic_inc(&gvdev->reset_count);
		} else if (ret != -EAGAIN) {
			atomic_inc(&gvdev->failure_count);
			pci_warn(pdev, "reset after close failed: %d\n", ret);
		}
	}

	ret = pci_read_config_dword(pdev, PCI_VENDOR_ID, &id);
	if (atomic_add_unless(&gvdev->fail_check, -1, 0))
		snprintf(reason, sizeof(reason),
			 "post-close check failed (injected through fail_check)");
	else if (ret)
		snprintf(reason, sizeof(reason),
			 "config space unreadable after close (%d)", ret);
	else if (id != gvdev->vendor_device)
		snprintf(reason, sizeof(reason),
			 "IDs read %04x:%04x after close, expected %04x:%04x",
			 id & 0xffff, id >> 16, gvdev->vendor_device & 0xffff,
			 gvdev->vendor_device >> 16);
	if (pm >= 0)
		pm_runtime_put(&pdev->dev);
	if (!reason[0]) {
		gpuvirt_vfio_pci_notify(gvdev, GPUVIRT_PT_EVENT_CLOSE);
		return;
	}

	atomic_inc(&gvdev->failure_count);
	mutex_lock(&gvdev->state_lock);
	gvdev->quarantined = true;
	strscpy(gvdev->reason, reason, sizeof(gvdev->reason));
	mutex_unlock(&gvdev->state_lock);
	pci_warn(pdev, "quarantined: %s; opens are refused until cleared\n",
		 reason);
	gpuvirt_vfio_pci_notify(gvdev, GPUVIRT_PT_EVENT_QUARANTINE);
}

static void gpuvirt_vfio_pci_close_device(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);

	vfio_pci_core_close_device(core_vdev);
	atomic_inc(&gvdev->close_count);

	mutex_lock(&gvdev->state_lock);
	gvdev->is_open = false;
	mutex_unlock(&gvdev->state_lock);

	gpuvirt_vfio_pci_reset_and_verify(gvdev);
}

static int gpuvirt_vfio_pci_init_dev(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);

	mutex_init(&gvdev->state_lock);
	return vfio_pci_core_init_dev(core_vdev);
}

static void gpuvirt_vfio_pci_release_dev(struct vfio_device *core_vdev)
{
	struct gpuvirt_vfio_pci_device *gvdev =
		to_gpuvirt_vfio_pci_device(core_vdev);

	mutex_destroy(&gvdev->state_lock);
	vfio_pci_core_release_dev(core_vdev);
}

static const struct vfio_device_ops gpuvirt_vfio_pci_ops = {
	.name		= "gpuvirt-vfio-pci",
	.init		= gpuvirt_vfio_pci_init_dev,
	.release	= gpuvirt_vfio_pci_release_dev,
	.open_device	= gpuvirt_vfio_pci_open_device,
	.close_device	= gpuvirt_vfio_pci_close_device,
	.ioctl		= vfio_pci_core_ioctl,
	GPUVIRT_VFIO_PCI_REGION_INFO_OPS
	.device_feature	= vfio_pci_core_ioctl_feature,
	.read		= vfio_pci_core_read,
	.write		= vfio_pci_core_write,
	.mmap		= vfio_pci_core_mmap,
	.request	= vfio_pci_core_request,
	.match		= vfio_pci_core_match,
	GPUVIRT_VFIO_PCI_MATCH_TOKEN_OPS
	GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS
	GPUVIRT_VFIO_IOMMUFD_PHYSICAL_PASID_OPS
};

static int gpuvirt_vfio_pci_iommu_group_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	seq_printf(s, "%d\n", gvdev->iommu_group_id);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_iommu_group);

/* "pid 1234 comm qemu-system-x86 open", or "none" before any open. */
static int gpuvirt_vfio_pci_opener_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	mutex_lock(&gvdev->state_lock);
	if (gvdev->opener_pid)
		seq_printf(s, "pid %d comm %s %s\n", gvdev->opener_pid,
			   gvdev->opener_comm,
			   gvdev->is_open ? "open" : "closed");
	else
		seq_puts(s, "none\n");
	mutex_unlock(&gvdev->state_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_opener);

/* The quarantine reason, "none" when the device is not quarantined. */
static int gpuvirt_vfio_pci_reason_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vfio_pci_device *gvdev = s->private;

	mutex_lock(&gvdev->state_lock);
	seq_printf(s, "%s\n", gvdev->quarantined ? gvdev->reason : "none");
	mutex_unlock(&gvdev->state_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_vfio_pci_reason);

/* quarantine: reads 0 or 1; 0 clears it, 1 sets it by hand. */
static int gpuvirt_vfio_pci_quarantine_get(void *data, u64 *val)
{
	struct gpuvirt_vfio_pci_device *gvdev = data;

	mutex_lock(&gvdev->state_lock);
	*val = gvdev->quarantined;
	mutex_unlock(&gvdev->state_lock);
	return 0;
}

static int gpuvirt_vfio_pci_quarantine_set(void *data, u64 val)
{
	struct gpuvirt_vfio_pci_device *gvdev = data;
	struct pci_dev *pdev = gvdev->core_device.pdev;

	if (val > 1)
		return -EINVAL;
	mutex_lock(&gvdev->state_lock);
	if (gvdev->quarantined != !!val)
		pci_info(pdev, "quarantine %s by the administrator\n",
			 val ? "set" : "cleared");
	gvdev->quarantined = val;
	strscpy(gvdev->reason, val ? "set by the administrator" : "",
		sizeof(gvdev->reason));
	mutex_unlock(&gvdev->state_lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(gpuvirt_vfio_pci_quarantine_fops,
			 gpuvirt_vfio_pci_quarantine_get,
			 gpuvirt_vfio_pci_quarantine_set, "%llu\n");

/* fail_check: how many of the next post-close checks fail (tests). */
static int gpuvirt_vfio_pci_fail_check_get(void *data, u64 *val)
{
	struct gpuvirt_vfio_pci_device *gvdev = data;

	*val = atomic_read(&gvdev->fail_check);
	return 0;
}

static int gpuvirt_vfio_pci_fail_check_set(void *data, u64 val)
{
	struct gpuvirt_vfio_pci_device *gvdev = data;

	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&gvdev->fail_check, (int)val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(gpuvirt_vfio_pci_fail_check_fops,
			 gpuvirt_vfio_pci_fail_check_get,
			 gpuvirt_vfio_pci_fail_check_set, "%llu\n");

/* debugfs is best effort: a failure here must not fail the probe. */
static void gpuvirt_vfio_pci_debugfs_add(struct gpuvirt_vfio_pci_device *gvdev)
{
	struct pci_dev *pdev = gvdev->core_device.pdev;
	struct dentry *dir;

	dir = debugfs_create_dir(pci_name(pdev), gpuvirt_vfio_pci_debugfs_root);
	debugfs_create_atomic_t("open_count", 0444, dir, &gvdev->open_count);
	debugfs_create_atomic_t("close_count", 0444, dir, &gvdev->close_count);
	debugfs_create_atomic_t("refused_count", 0444, dir,
				&gvdev->refused_count);
	debugfs_create_atomic_t("reset_count", 0444, dir, &gvdev->reset_count);
	debugfs_create_atomic_t("failure_count", 0444, dir,
				&gvdev->failure_count);
	debugfs_create_file("iommu_group", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_iommu_group_fops);
	debugfs_create_file("opener", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_opener_fops);
	debugfs_create_file("quarantine_reason", 0444, dir, gvdev,
			    &gpuvirt_vfio_pci_reason_fops);
	debugfs_create_file_unsafe("quarantine", 0600, dir, gvdev,
				   &gpuvirt_vfio_pci_quarantine_fops);
	debugfs_create_file_unsafe("fail_check", 0600, dir, gvdev,
				   &gpuvirt_vfio_pci_fail_check_fops);
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
	atomic_set(&gvdev->refused_count, 0);
	atomic_set(&gvdev->reset_count, 0);
	atomic_set(&gvdev->failure_count, 0);
	atomic_set(&gvdev->fail_check, 0);
	gvdev->vendor_device = (u32)pdev->device << 16 | pdev->vendor;
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
	mutex_lock(&gpuvirt_vfio_pci_devices_lock);
	list_add_tail(&gvdev->node, &gpuvirt_vfio_pci_devices);
	mutex_unlock(&gpuvirt_vfio_pci_devices_lock);
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

	mutex_lock(&gpuvirt_vfio_pci_devices_lock);
	list_del(&gvdev->node);
	mutex_unlock(&gpuvirt_vfio_pci_devices_lock);
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

	ret = gpuvirt_pt_provider_register(&gpuvirt_vfio_pci_provider);
	if (ret)
		goto err_remove_debugfs;

	ret = pci_register_driver(&gpuvirt_vfio_pci_driver);
	if (ret)
		goto err_unregister_provider;

	return 0;

err_unregister_provider:
	gpuvirt_pt_provider_unregister(&gpuvirt_vfio_pci_provider);
err_remove_debugfs:
	debugfs_remove_recursive(gpuvirt_vfio_pci_debugfs_root);
	return ret;
}
module_init(gpuvirt_vfio_pci_init);

static void __exit gpuvirt_vfio_pci_exit(void)
{
	pci_unregister_driver(&gpuvirt_vfio_pci_driver);
	gpuvirt_pt_provider_unregister(&gpuvirt_vfio_pci_provider);
	debugfs_remove_recursive(gpuvirt_vfio_pci_debugfs_root);
}
module_exit(gpuvirt_vfio_pci_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("gpuvirt developers");
MODULE_DESCRIPTION("vfio-pci-core variant driver for gpuvirt GPU passthrough");
