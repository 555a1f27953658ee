// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sriov vGPU model: vGPUs are the GPU's PCI virtual functions.
 *
 * A GPU is in one vGPU model at a time. In the mdev model (the default)
 * its vGPUs are mdev devices made from its types (mdev.c). In the sriov
 * model, as on NVIDIA's GPUs since vGPU 17, on AMD's MxGPU and on Intel's
 * data centre GPUs, the admin enables the PF's VFs (sriov_numvfs) and
 * gives a VF a type; the VF then is the vGPU, a VFIO device with the same
 * guest ABI that a VMM takes by PCI address:
 *
 *   <gpu device>/gpuvirt/vgpu_model	mdev | sriov (no vGPUs, GIs or VFs)
 *   <gpu device>/sriov_numvfs		0..max_vfs (the PCI core's file)
 *   <VF>/gpuvirt/creatable_vgpu_types	"ID : vGPU Name", the types with room
 *   <VF>/gpuvirt/current_vgpu_type	the VF's type id, 0 for none; write an
 *					id to make the vGPU, 0 to remove it
 *   <VF>/gpuvirt/vgpu_uuid		the vGPU's UUID, empty for none
 *   <VF>/gpuvirt/weight, min_pct,	the vGPU's settings, read and written
 *	max_pct, frame_rate_limiter	as an mdev vGPU's are (sysfs.c);
 *					-ENODEV while the VF has no type
 *
 * as NVIDIA lays out nvidia/creatable_vgpu_types and current_vgpu_type.
 * A type id is the type's position, from 1, among the GPU's own parent's
 * types, time-sliced then MIG-backed, and a VF's vGPU is placed exactly as
 * an mdev of that type is: the same accounting, the same GI choice. So an
 * mdev vGPU and a VF vGPU of one type are the same to the guest and to the
 * scheduler; the backend is told of each VF's resources (vf_provision).
 *
 * Locking: a VF's lock, then the GPU's lock, then whatever the vGPU's
 * creation takes. Enabling and disabling VFs (gpuvirt_sriov_configure())
 * must not hold the GPU's lock, since the PCI core probes and removes the
 * VFs meanwhile and that takes it; @changing keeps typing out instead.
 * Removing a VF waits for the VM that holds its vGPU with the VF's lock
 * only (gpuvirt_vf_untype()): the GPU's lock is never held across a wait
 * for a VM.
 */
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uuid.h>

#include "sriov.h"
#include "vgpu.h"

bool gpuvirt_gpu_sriov(struct gpuvirt_gpu *gpu)
{
	return gpu->sriov && gpu->sriov->on;
}

/**
 * gpuvirt_sriov_gpu_add() - note whether a GPU can have VF vGPUs
 * @gpu: a GPU being registered
 *
 * Return: 0 or -ENOMEM.
 */
int gpuvirt_sriov_gpu_add(struct gpuvirt_gpu *gpu)
{
	if (!dev_is_pci(gpu->dev) || !to_pci_dev(gpu->dev)->is_physfn ||
	    !gpu->max_vfs || !gpu->ops->vf_provision || !gpu->ops->vf_release)
		return 0;
	gpu->sriov = kzalloc(struct_size(gpu->sriov, vf, gpu->max_vfs),
			     GFP_KERNEL);
	return gpu->sriov ? 0 : -ENOMEM;
}

/**
 * gpuvirt_sriov_gpu_close() - a GPU going away disables its VFs
 * @gpu: a GPU being unregistered, its lock not held
 *
 * Removes every VF vGPU, waiting for its VFIO user as an mdev's removal
 * does. Called from the backend's remove of the PF, under the PF's device
 * lock, which also serialises sriov_numvfs.
 */
void gpuvirt_sriov_gpu_close(struct gpuvirt_gpu *gpu)
{
	if (!gpu->sriov)
		return;
	mutex_lock(&gpu->lock);
	gpu->sriov->closing = true;
	mutex_unlock(&gpu->lock);
	if (pci_num_vf(to_pci_dev(gpu->dev)))
		pci_disable_sriov(to_pci_dev(gpu->dev));
}

void gpuvirt_sriov_gpu_del(struct gpuvirt_gpu *gpu)
{
	kfree(gpu->sriov);
	gpu->sriov = NULL;
}

/* Does any VF have a type? Under the GPU's lock. */
static bool gpuvirt_sriov_typed(struct gpuvirt_gpu *gpu)
{
	unsigned int i;

	lockdep_assert_held(&gpu->lock);
	for (i = 0; i < gpu->max_vfs; i++)
		if (gpu->sriov->vf[i] && gpu->sriov->vf[i]->type_id)
			return true;
	return false;
}

/**
 * gpuvirt_sriov_model_check() - may a GPU be in a vGPU model
 * @gpu: the GPU, its lock held
 * @sriov: true for the sriov model
 * @why: filled in when not
 *
 * What the GPU's lock guards of a switch between the mdev and the sriov
 * model: the GPU's SR-IOV, its GIs and its VFs. That it has no vGPUs is
 * checked where the switch is made, in the critical section vGPUs are
 * placed in (gpuvirt_mdev_reconfigure()).
 *
 * Return: 0, also when the GPU is in that model already; -EOPNOTSUPP for
 * the sriov model on a GPU without SR-IOV; -EBUSY while the GPU has a GI
 * or enabled VFs.
 */
int gpuvirt_sriov_model_check(struct gpuvirt_gpu *gpu, bool sriov,
			      struct gpuvirt_gpu_why *why)
{
	struct gpuvirt_sriov *sr = gpu->sriov;

	lockdep_assert_held(&gpu->lock);
	if (sriov == gpuvirt_gpu_sriov(gpu))
		return 0;
	if (!sr)
		return gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_VGPU_MODEL,
					   GPUVIRT_GPU_REFUSED_NO_SRIOV,
					   "GPU %s has no SR-IOV", gpu->name);
	if (gpu->mig && gpu->mig->layout.nr)
		return gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_VGPU_MODEL,
					   GPUVIRT_GPU_REFUSED_GIS,
					   "GPU %s has GPU instances; destroy them first",
					   gpu->name);
	if (sr->nr_vfs || sr->changing)
		return gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_VGPU_MODEL,
					   GPUVIRT_GPU_REFUSED_VFS,
					   "GPU %s has VFs enabled; write 0 to sriov_numvfs first",
					   gpu->name);
	return 0;
}

/**
 * gpuvirt_sriov_model_set() - publish a GPU's vGPU model
 * @gpu: the GPU, its lock held
 * @sriov: true for the sriov model
 *
 * For gpuvirt_gpu_configure(), once gpuvirt_sriov_model_check() and the
 * GPU's own parent (gpuvirt_mdev_reconfigure()) took the model; the
 * caller announces the change.
 */
void gpuvirt_sriov_model_set(struct gpuvirt_gpu *gpu, bool sriov)
{
	lockdep_assert_held(&gpu->lock);
	if (sriov == gpuvirt_gpu_sriov(gpu))
		return;
	mutex_lock(&gpuvirt_registry.lock);
	gpu->sriov->on = sriov;
	gpuvirt_registry_changed();
	mutex_unlock(&gpuvirt_registry.lock);
	dev_info(gpu->dev, "gpuvirt: GPU %u now has %s vGPUs\n", gpu->id,
		 sriov ? "SR-IOV" : "mdev");
}

/**
 * gpuvirt_sriov_configure() - enable or disable a GPU's VFs
 * @gpu: the GPU
 * @num_vfs: how many VFs, or 0 to disable them
 *
 * For the backend's PF driver's sriov_configure, which the PCI core calls
 * under the PF's device lock.
 *
 * Return: @num_vfs, or -errno: -EPERM in the mdev model, -EBUSY while a VF
 * has a type, -ENODEV once the GPU is going away, or the PCI core's error.
 */
int gpuvirt_sriov_configure(struct gpuvirt_gpu *gpu, int num_vfs)
{
	struct pci_dev *pdev = to_pci_dev(gpu->dev);
	struct gpuvirt_sriov *sr = gpu->sriov;
	int err = 0;

	if (!sr)
		return -EOPNOTSUPP;
	mutex_lock(&gpu->lock);
	if (!gpu->registered || sr->closing) {
		err = -ENODEV;
	} else if (num_vfs && !sr->on) {
		pci_warn(pdev, "gpuvirt: GPU %u is in the mdev vGPU model; write sriov to gpuvirt/vgpu_model first\n",
			 gpu->id);
		err = -EPERM;
	} else if (!num_vfs && gpuvirt_sriov_typed(gpu)) {
		pci_warn(pdev, "gpuvirt: GPU %u has VFs with a vGPU type; write 0 to their current_vgpu_type first\n",
			 gpu->id);
		err = -EBUSY;
	} else {
		sr->changing = true;
	}
	mutex_unlock(&gpu->lock);
	if (err)
		return err;

	if (num_vfs)
		err = pci_enable_sriov(pdev, num_vfs);
	else
		pci_disable_sriov(pdev);

	mutex_lock(&gpu->lock);
	sr->changing = false;
	sr->nr_vfs = pci_num_vf(pdev);
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_CHANGE_NTF);
	mutex_unlock(&gpu->lock);
	return err ?: num_vfs;
}
EXPORT_SYMBOL_GPL(gpuvirt_sriov_configure);

/* The GPU's own parent's types: time-sliced, then MIG-backed. */
static unsigned int gpuvirt_vf_types(struct gpuvirt_gpu *gpu)
{
	return gpu->mdev->nr_types + gpu->mdev->nr_mig_types;
}

/*
 * Give @vf the type @id: make its vGPU, have the backend provision the VF,
 * and offer it to VFIO users. Under the VF's and the GPU's locks.
 */
static int gpuvirt_vf_type(struct gpuvirt_vf *vf, u32 id)
{
	struct gpuvirt_gpu *gpu = vf->gpu;
	struct gpuvirt_vf_config cfg;
	struct gpuvirt_vgpu *vgpu;
	int err;

	if (!id || id > gpuvirt_vf_types(gpu))
		return -EINVAL;
	if (!gpu->registered || gpu->sriov->changing || gpu->sriov->closing)
		return -EBUSY;

	uuid_gen(&vf->uuid);
	vf->pending = &gpu->mdev->types[id - 1];
	vgpu = vfio_alloc_device(gpuvirt_vgpu, vdev, &vf->pdev->dev,
				 &gpuvirt_vgpu_vf_ops);
	vf->pending = NULL;
	if (IS_ERR(vgpu))
		return PTR_ERR(vgpu);

	cfg.type = vgpu->type->profile->name;
	cfg.vram_offset = vgpu->vram_offset;
	cfg.vram_size = vgpu->vram_size;
	cfg.engines = vgpu->mp->engines;
	cfg.ctx = vgpu->mp->ctx_base + vgpu->slot;
	cfg.gi = vgpu->mp->gi ? (int)vgpu->mp->gi->id : -1;
	err = gpu->ops->vf_provision(gpu, vf->index, &cfg);
	if (err)
		goto err_put_vgpu;
	err = vfio_register_emulated_iommu_dev(&vgpu->vdev);
	if (err)
		goto err_release_vf;

	vf->vgpu = vgpu;
	vf->type_id = id;
	gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_ADD_NTF);
	return 0;

err_release_vf:
	gpu->ops->vf_release(gpu, vf->index);
err_put_vgpu:
	vfio_put_device(&vgpu->vdev);
	return err;
}

/*
 * Take @vf's type away. Refused while a VFIO user has it open unless
 * @force, when the VF itself is going away: then wait for the user to
 * close it, as an mdev's removal does, with only the VF's lock held (its
 * files are gone by then, so nothing waits for it): the GPU's lock is
 * taken only around what it guards, so that the GPU's other requests and
 * its other VFs' files never wait on a VM. Under the VF's lock.
 */
static int gpuvirt_vf_untype(struct gpuvirt_vf *vf, bool force)
{
	struct gpuvirt_vgpu *vgpu = vf->vgpu;
	struct gpuvirt_gpu *gpu = vf->gpu;

	lockdep_assert_held(&vf->lock);
	if (!vgpu)
		return 0;
	mutex_lock(&vgpu->lock);
	if (vgpu->opened && !force) {
		mutex_unlock(&vgpu->lock);
		return -EBUSY;
	}
	vgpu->retiring = true;	/* nobody opens it from now on */
	mutex_unlock(&vgpu->lock);

	gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_DEL_NTF);
	vfio_unregister_group_dev(&vgpu->vdev);	/* waits for its user */
	gpu->ops->vf_release(gpu, vf->index);

	/* typed until now: the VFs stay enabled meanwhile */
	mutex_lock(&gpu->lock);
	vf->vgpu = NULL;
	vf->type_id = 0;
	mutex_unlock(&gpu->lock);
	vfio_put_device(&vgpu->vdev);
	return 0;
}

/**
 * gpuvirt_vf_add() - a GPU's VF appeared: make it typeable
 * @pdev: the VF, being bound to the backend's VF driver
 *
 * Takes the VF's driver data. Return: 0, -ENODEV when its PF is not a
 * registered GPU in the sriov model, or -ENOMEM.
 */
int gpuvirt_vf_add(struct pci_dev *pdev)
{
	struct gpuvirt_gpu *gpu;
	struct gpuvirt_vf *vf;
	int index, err;

	gpu = gpuvirt_gpu_get_by_dev(&pci_physfn(pdev)->dev);
	if (!gpu)
		return -ENODEV;
	index = pci_iov_vf_id(pdev);
	vf = kzalloc(sizeof(*vf), GFP_KERNEL);
	if (!vf) {
		err = -ENOMEM;
		goto err_put_gpu;
	}
	vf->pdev = pdev;
	vf->gpu = gpu;
	vf->index = index;
	mutex_init(&vf->lock);

	mutex_lock(&gpu->lock);
	if (!gpu->sriov || index < 0 || index >= gpu->max_vfs ||
	    gpu->sriov->vf[index]) {
		err = -ENODEV;
	} else {
		gpu->sriov->vf[index] = vf;
		err = 0;
	}
	mutex_unlock(&gpu->lock);
	if (err)
		goto err_free_vf;
	dev_set_drvdata(&pdev->dev, vf);
	return 0;

err_free_vf:
	mutex_destroy(&vf->lock);
	kfree(vf);
err_put_gpu:
	gpuvirt_gpu_put(gpu);
	return err;
}
EXPORT_SYMBOL_GPL(gpuvirt_vf_add);

/**
 * gpuvirt_vf_del() - a GPU's VF is going away
 * @pdev: the VF, being unbound from the backend's VF driver
 *
 * Removes its vGPU, waiting for a VFIO user to close it.
 */
void gpuvirt_vf_del(struct pci_dev *pdev)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(&pdev->dev);
	struct gpuvirt_gpu *gpu = vf->gpu;

	mutex_lock(&vf->lock);
	gpuvirt_vf_untype(vf, true);
	mutex_lock(&gpu->lock);
	gpu->sriov->vf[vf->index] = NULL;
	mutex_unlock(&gpu->lock);
	mutex_unlock(&vf->lock);

	dev_set_drvdata(&pdev->dev, NULL);
	mutex_destroy(&vf->lock);
	kfree(vf);
	gpuvirt_gpu_put(gpu);
}
EXPORT_SYMBOL_GPL(gpuvirt_vf_del);

/**
 * gpuvirt_vf_name() - the PCI address of the VF a vGPU is made on
 * @vgpu: a vGPU made on a VF
 *
 * Return: the VF's PCI address, for netlink.
 */
const char *gpuvirt_vf_name(const struct gpuvirt_vgpu *vgpu)
{
	return pci_name(vgpu->vf->pdev);
}

/* sysfs ------------------------------------------------------------------ */

static ssize_t creatable_vgpu_types_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	struct gpuvirt_gpu *gpu = vf->gpu;
	unsigned int i;
	int n;

	n = sysfs_emit(buf, "ID    : vGPU Name\n");
	mutex_lock(&vf->lock);
	/* a VF with a type can take no other */
	for (i = 0; !vf->type_id && i < gpuvirt_vf_types(gpu); i++)
		if (gpuvirt_type_available(&gpu->mdev->types[i]))
			n += sysfs_emit_at(buf, n, "%-5u : %s\n", i + 1,
					   gpu->mdev->types[i].profile->name);
	mutex_unlock(&vf->lock);
	return n;
}
static DEVICE_ATTR_RO(creatable_vgpu_types);

static ssize_t current_vgpu_type_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	u32 id;

	mutex_lock(&vf->lock);
	id = vf->type_id;
	mutex_unlock(&vf->lock);
	return sysfs_emit(buf, "%u\n", id);
}

static ssize_t current_vgpu_type_store(struct device *dev,
				       struct device_attribute *attr,
				       const char *buf, size_t count)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	u32 id;
	int err;

	err = kstrtou32(buf, 0, &id);
	if (err)
		return err;
	if (mutex_lock_killable(&vf->lock))
		return -EINTR;
	if (!id) {
		err = gpuvirt_vf_untype(vf, false);
	} else if (vf->type_id == id) {
		err = 0;
	} else if (vf->type_id) {
		err = -EBUSY;	/* write 0 first */
	} else if (mutex_lock_killable(&vf->gpu->lock)) {
		err = -EINTR;
	} else {
		err = gpuvirt_vf_type(vf, id);
		mutex_unlock(&vf->gpu->lock);
	}
	mutex_unlock(&vf->lock);
	if (err == -EBUSY)
		pci_info(to_pci_dev(dev), "gpuvirt: the VF %s\n",
			 id ? "has a vGPU type, or its GPU is changing; write 0 first" :
			      "is open; it keeps its type until closed");
	return err ?: count;
}
static DEVICE_ATTR_RW(current_vgpu_type);

static ssize_t vgpu_uuid_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	ssize_t n;

	mutex_lock(&vf->lock);
	n = vf->type_id ? sysfs_emit(buf, "%pUl\n", &vf->uuid) :
			  sysfs_emit(buf, "\n");
	mutex_unlock(&vf->lock);
	return n;
}
static DEVICE_ATTR_RO(vgpu_uuid);

/*
 * The vGPU's settings: the mdev vGPU's files, on the VF. The VF's lock
 * keeps its vGPU from being cleared (current_vgpu_type 0) under the call;
 * the VF itself stays while its files do, since the PCI core removes the
 * driver's groups, draining calls in progress, before gpuvirt_vf_del(),
 * also when the GPU goes. Without a type there is no vGPU to set: -ENODEV,
 * as for a file of an mdev that is gone, whatever is written.
 */
static ssize_t gpuvirt_vf_param_show(struct device *dev, char *buf,
				     enum gpuvirt_vgpu_param p)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	ssize_t n;

	mutex_lock(&vf->lock);
	n = vf->vgpu ? gpuvirt_vgpu_param_show(vf->vgpu, buf, p) : -ENODEV;
	mutex_unlock(&vf->lock);
	return n;
}

static ssize_t gpuvirt_vf_param_store(struct device *dev, const char *buf,
				      size_t count, enum gpuvirt_vgpu_param p)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(dev);
	ssize_t n;

	mutex_lock(&vf->lock);
	n = vf->vgpu ? gpuvirt_vgpu_param_store(vf->vgpu, buf, count, p) :
		       -ENODEV;
	mutex_unlock(&vf->lock);
	return n;
}

#define GPUVIRT_VF_PARAM(name, p)					\
static const enum gpuvirt_vgpu_param name##_param = (p);		\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return gpuvirt_vf_param_show(dev, buf, name##_param);		\
}									\
static ssize_t name##_store(struct device *dev,				\
			    struct device_attribute *attr,		\
			    const char *buf, size_t count)		\
{									\
	return gpuvirt_vf_param_store(dev, buf, count, name##_param);	\
}									\
static DEVICE_ATTR_RW(name)

GPUVIRT_VF_PARAM(weight, GPUVIRT_VGPU_PARAM_WEIGHT);
GPUVIRT_VF_PARAM(min_pct, GPUVIRT_VGPU_PARAM_MIN_PCT);
GPUVIRT_VF_PARAM(max_pct, GPUVIRT_VGPU_PARAM_MAX_PCT);
GPUVIRT_VF_PARAM(frame_rate_limiter, GPUVIRT_VGPU_PARAM_FRL);

static struct attribute *gpuvirt_vf_attrs[] = {
	&dev_attr_creatable_vgpu_types.attr,
	&dev_attr_current_vgpu_type.attr,
	&dev_attr_vgpu_uuid.attr,
	&dev_attr_weight.attr,
	&dev_attr_min_pct.attr,
	&dev_attr_max_pct.attr,
	&dev_attr_frame_rate_limiter.attr,
	NULL,
};

static const struct attribute_group gpuvirt_vf_group = {
	.name	= "gpuvirt",
	.attrs	= gpuvirt_vf_attrs,
};

const struct attribute_group *gpuvirt_vf_groups[] = {
	&gpuvirt_vf_group,
	NULL,
};
EXPORT_SYMBOL_GPL(gpuvirt_vf_groups);
