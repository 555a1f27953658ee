// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest-visible vGPU: an emulated PCI device over VFIO, described in
 * Documentation/vgpu/vgpu-abi.rst and include/uapi/linux/gpuvirt_vgpu.h.
 *
 * Emulated: PCI config space with an MSI capability and INTx, BAR0
 * registers, BAR2 as the vGPU's VRAM slice (read, write and mmap, backed on
 * demand by the backend), INTx and MSI through eventfds, and reset, which
 * zeroes the slice; the command ring is run by engine.c. Not yet: revoking
 * BAR2 mappings when PCI_COMMAND_MEMORY is cleared.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/pci_regs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/gpuvirt_vgpu.h>

#include "vgpu.h"

#define GPUVIRT_VGPU_OFFSET_SHIFT	40
#define GPUVIRT_VGPU_OFFSET_MASK	((1ULL << GPUVIRT_VGPU_OFFSET_SHIFT) - 1)
#define GPUVIRT_VGPU_INDEX(off)		((off) >> GPUVIRT_VGPU_OFFSET_SHIFT)
#define GPUVIRT_VGPU_REGION(idx)	((u64)(idx) << GPUVIRT_VGPU_OFFSET_SHIFT)

#define GPUVIRT_VGPU_MSI_CAP		0x40

static struct gpuvirt_vgpu *to_vgpu(struct vfio_device *vdev)
{
	return container_of(vdev, struct gpuvirt_vgpu, vdev);
}

static const struct gpuvirt_backend_ops *vgpu_ops(struct gpuvirt_vgpu *vgpu)
{
	return vgpu->mp->gpu->ops;
}

/* Config space: values and the bits the guest may change. */

static void cfg_set(u8 *a, unsigned int off, u64 val, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		a[off + i] = (val >> (8 * i)) & 0xff;
}

static u32 cfg_get(const u8 *a, unsigned int off, unsigned int len)
{
	u32 v = 0;
	unsigned int i;

	for (i = 0; i < len; i++)
		v |= (u32)a[off + i] << (8 * i);
	return v;
}

static void gpuvirt_vgpu_cfg_init(struct gpuvirt_vgpu *vgpu)
{
	u8 *c = vgpu->cfg, *w = vgpu->cfg_wmask;
	unsigned int m = GPUVIRT_VGPU_MSI_CAP;

	memset(c, 0, GPUVIRT_VGPU_CFG_SIZE);
	memset(w, 0, GPUVIRT_VGPU_CFG_SIZE);

	cfg_set(c, PCI_VENDOR_ID, GPUVIRT_VGPU_PCI_VENDOR_ID, 2);
	cfg_set(c, PCI_DEVICE_ID, GPUVIRT_VGPU_PCI_DEVICE_ID, 2);
	cfg_set(w, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
		PCI_COMMAND_PARITY | PCI_COMMAND_SERR |
		PCI_COMMAND_INTX_DISABLE, 2);
	cfg_set(c, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	cfg_set(c, PCI_REVISION_ID, GPUVIRT_VGPU_PCI_REVISION, 1);
	cfg_set(c, PCI_CLASS_PROG, GPUVIRT_VGPU_PCI_CLASS, 3);
	cfg_set(w, PCI_CACHE_LINE_SIZE, 0xff, 1);
	cfg_set(w, PCI_LATENCY_TIMER, 0xff, 1);
	cfg_set(c, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL, 1);

	/* BAR0: 32-bit memory, registers. Size bits read back as zero. */
	cfg_set(c, PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_SPACE_MEMORY |
		PCI_BASE_ADDRESS_MEM_TYPE_32, 4);
	cfg_set(w, PCI_BASE_ADDRESS_0, ~(u32)(GPUVIRT_VGPU_REGS_SIZE - 1), 4);

	/* BAR2+3: 64-bit prefetchable memory, the VRAM slice. */
	cfg_set(c, PCI_BASE_ADDRESS_2, PCI_BASE_ADDRESS_SPACE_MEMORY |
		PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH, 4);
	cfg_set(w, PCI_BASE_ADDRESS_2, ~(vgpu->bar2_size - 1) & ~0xfULL, 8);

	cfg_set(c, PCI_SUBSYSTEM_VENDOR_ID, GPUVIRT_VGPU_PCI_VENDOR_ID, 2);
	cfg_set(c, PCI_SUBSYSTEM_ID, GPUVIRT_VGPU_PCI_DEVICE_ID, 2);
	cfg_set(c, PCI_CAPABILITY_LIST, m, 1);
	cfg_set(w, PCI_INTERRUPT_LINE, 0xff, 1);
	cfg_set(c, PCI_INTERRUPT_PIN, 1, 1);	/* INTA# */

	/* MSI: 64-bit addresses, one vector. */
	cfg_set(c, m + PCI_CAP_LIST_ID, PCI_CAP_ID_MSI, 1);
	cfg_set(c, m + PCI_CAP_LIST_NEXT, 0, 1);
	cfg_set(c, m + PCI_MSI_FLAGS, PCI_MSI_FLAGS_64BIT, 2);
	cfg_set(w, m + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2);
	cfg_set(w, m + PCI_MSI_ADDRESS_LO, 0xfffffffc, 4);
	cfg_set(w, m + PCI_MSI_ADDRESS_HI, 0xffffffff, 4);
	cfg_set(w, m + PCI_MSI_DATA_64, 0xffff, 2);
}

/* Interrupts: deliver the vGPU's interrupt on MSI if enabled, else INTx. */
void gpuvirt_vgpu_irq_raise(struct gpuvirt_vgpu *vgpu)
{
	unsigned int m = GPUVIRT_VGPU_MSI_CAP;
	u16 cmd, msi;

	lockdep_assert_held(&vgpu->lock);
	if (!vgpu->irq_status)
		return;
	msi = cfg_get(vgpu->cfg, m + PCI_MSI_FLAGS, 2);
	cmd = cfg_get(vgpu->cfg, PCI_COMMAND, 2);
	if (msi & PCI_MSI_FLAGS_ENABLE) {
		if (vgpu->msi_trigger)
			gpuvirt_eventfd_signal(vgpu->msi_trigger);
		return;
	}
	if (!(cmd & PCI_COMMAND_INTX_DISABLE) && !vgpu->intx_masked &&
	    vgpu->intx_trigger)
		gpuvirt_eventfd_signal(vgpu->intx_trigger);
}

static void gpuvirt_vgpu_cfg_write(struct gpuvirt_vgpu *vgpu,
				   unsigned int off, u32 val, unsigned int len)
{
	unsigned int i;

	lockdep_assert_held(&vgpu->lock);
	for (i = 0; i < len; i++) {
		u8 w = vgpu->cfg_wmask[off + i], b = (val >> (8 * i)) & 0xff;

		vgpu->cfg[off + i] = (vgpu->cfg[off + i] & ~w) | (b & w);
	}
}

/* BAR0 registers. */
static u32 gpuvirt_vgpu_reg_read(struct gpuvirt_vgpu *vgpu, unsigned int reg)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	lockdep_assert_held(&vgpu->lock);
	switch (reg) {
	case GPUVIRT_VGPU_REG_MAGIC:
		return GPUVIRT_VGPU_MAGIC;
	case GPUVIRT_VGPU_REG_VERSION:
		return GPUVIRT_VGPU_VERSION;
	case GPUVIRT_VGPU_REG_VRAM_SIZE_LO:
		return lower_32_bits(vgpu->vram_size);
	case GPUVIRT_VGPU_REG_VRAM_SIZE_HI:
		return upper_32_bits(vgpu->vram_size);
	case GPUVIRT_VGPU_REG_CAPS:
		return GPUVIRT_VGPU_CAP_VRAM | GPUVIRT_VGPU_CAP_SWIRQ |
		       GPUVIRT_VGPU_CAP_RING;
	case GPUVIRT_VGPU_REG_STATUS:
		return GPUVIRT_VGPU_STATUS_READY |
		       (r->head != r->tail ? GPUVIRT_VGPU_STATUS_BUSY : 0) |
		       (r->error ? GPUVIRT_VGPU_STATUS_ERROR : 0);
	case GPUVIRT_VGPU_REG_RING_BASE_LO:
		return lower_32_bits(r->base);
	case GPUVIRT_VGPU_REG_RING_BASE_HI:
		return upper_32_bits(r->base);
	case GPUVIRT_VGPU_REG_RING_SIZE:
		return r->size;
	case GPUVIRT_VGPU_REG_RING_HEAD:
		return r->head;
	case GPUVIRT_VGPU_REG_RING_TAIL:
		return r->tail;
	case GPUVIRT_VGPU_REG_FENCE:
		return r->fence;
	case GPUVIRT_VGPU_REG_ERROR:
		return r->error;
	case GPUVIRT_VGPU_REG_ERROR_HEAD:
		return r->error_head;
	case GPUVIRT_VGPU_REG_DONE_LO:
		return lower_32_bits(r->done);
	case GPUVIRT_VGPU_REG_DONE_HI:
		return upper_32_bits(r->done);
	case GPUVIRT_VGPU_REG_SCRATCH:
		return vgpu->scratch;
	case GPUVIRT_VGPU_REG_IRQ_STATUS:
		return vgpu->irq_status;
	default:
		return 0;	/* reserved: reads as zero */
	}
}

/*
 * Ring setup is checked when the doorbell rings: a ring that does not fit
 * the slice, or a tail outside the ring, stops it with ERR_RING.
 */
static void gpuvirt_vgpu_doorbell(struct gpuvirt_vgpu *vgpu, u32 tail)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	if (!r->size)
		return;		/* ring off: nothing to ring */
	if (!is_power_of_2(r->size) || r->size < GPUVIRT_VGPU_RING_SIZE_MIN ||
	    r->size > GPUVIRT_VGPU_RING_SIZE_MAX || (r->base & 0xfff) ||
	    r->size > vgpu->vram_size || r->base > vgpu->vram_size - r->size ||
	    tail >= r->size || (tail & 3)) {
		/* TAIL keeps its last valid value, so HEAD never leaves the ring */
		if (!r->error) {
			r->error = GPUVIRT_VGPU_ERR_RING;
			r->error_head = r->head;
			vgpu->irq_status |= GPUVIRT_VGPU_IRQ_ERROR;
			gpuvirt_vgpu_irq_raise(vgpu);
		}
		return;
	}
	r->tail = tail;
	if (!r->error)
		gpuvirt_sched_kick(vgpu);
}

static void gpuvirt_vgpu_reg_write(struct gpuvirt_vgpu *vgpu, unsigned int reg,
				   u32 val)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	lockdep_assert_held(&vgpu->lock);
	switch (reg) {
	case GPUVIRT_VGPU_REG_RING_BASE_LO:
	case GPUVIRT_VGPU_REG_RING_BASE_HI:
	case GPUVIRT_VGPU_REG_RING_SIZE:
		/* the ring is set up while idle: HEAD restarts at 0 */
		if (r->head != r->tail)
			break;
		if (reg == GPUVIRT_VGPU_REG_RING_BASE_LO)
			r->base = (r->base & ~0xffffffffULL) | val;
		else if (reg == GPUVIRT_VGPU_REG_RING_BASE_HI)
			r->base = (r->base & 0xffffffffULL) | (u64)val << 32;
		else
			r->size = val;
		r->head = 0;
		r->tail = 0;
		break;
	case GPUVIRT_VGPU_REG_RING_TAIL:
		gpuvirt_vgpu_doorbell(vgpu, val);
		break;
	case GPUVIRT_VGPU_REG_CONTROL:
		if (val & GPUVIRT_VGPU_CTRL_CLEAR_ERROR) {
			r->error = GPUVIRT_VGPU_ERR_NONE;
			r->error_head = 0;
			r->head = r->tail;
		}
		break;
	case GPUVIRT_VGPU_REG_SCRATCH:
		vgpu->scratch = val;
		break;
	case GPUVIRT_VGPU_REG_IRQ_STATUS:
		vgpu->irq_status &= ~val;
		break;
	case GPUVIRT_VGPU_REG_IRQ_RAISE:
		vgpu->irq_status |= val & GPUVIRT_VGPU_IRQ_SW;
		gpuvirt_vgpu_irq_raise(vgpu);
		break;
	default:
		break;	/* read-only or reserved: ignored */
	}
}

/*
 * One naturally aligned access of 1, 2 or 4 bytes to config space or BAR0.
 * BAR0 registers are 32 bits: narrower reads return the addressed bytes,
 * narrower writes are ignored.
 */
static int gpuvirt_vgpu_access(struct gpuvirt_vgpu *vgpu, unsigned int index,
			       unsigned int off, u32 *val, unsigned int len,
			       bool write)
{
	unsigned int reg = off & ~3U, shift = 8 * (off & 3);

	lockdep_assert_held(&vgpu->lock);
	if (index == VFIO_PCI_CONFIG_REGION_INDEX) {
		if (write)
			gpuvirt_vgpu_cfg_write(vgpu, off, *val, len);
		else
			*val = cfg_get(vgpu->cfg, off, len);
		return 0;
	}
	if (write) {
		if (len == 4)
			gpuvirt_vgpu_reg_write(vgpu, reg, *val);
		return 0;
	}
	*val = gpuvirt_vgpu_reg_read(vgpu, reg) >> shift;
	if (len < 4)
		*val &= (1U << (8 * len)) - 1;
	return 0;
}

/*
 * Config space and BAR0 take accesses of any length, split into naturally
 * aligned pieces of at most 4 bytes, the way a VMM reads config space in
 * one go.
 */
static ssize_t gpuvirt_vgpu_rw_small(struct gpuvirt_vgpu *vgpu, u64 pos,
				     char __user *ubuf, size_t count,
				     bool write)
{
	unsigned int index = GPUVIRT_VGPU_INDEX(pos);
	u64 off = pos & GPUVIRT_VGPU_OFFSET_MASK;
	u64 size = index == VFIO_PCI_CONFIG_REGION_INDEX ?
		   GPUVIRT_VGPU_CFG_SIZE : GPUVIRT_VGPU_REGS_SIZE;
	size_t done = 0;
	__le32 raw;
	u32 val;

	if (off >= size || count > size - off)
		return -EINVAL;

	while (done < count) {
		unsigned int o = off + done, len;

		if (!(o & 3) && count - done >= 4)
			len = 4;
		else if (!(o & 1) && count - done >= 2)
			len = 2;
		else
			len = 1;

		raw = 0;
		if (write && copy_from_user(&raw, ubuf + done, len))
			return done ? done : -EFAULT;
		val = le32_to_cpu(raw);

		mutex_lock(&vgpu->lock);
		gpuvirt_vgpu_access(vgpu, index, o, &val, len, write);
		mutex_unlock(&vgpu->lock);

		raw = cpu_to_le32(val);
		if (!write && copy_to_user(ubuf + done, &raw, len))
			return done ? done : -EFAULT;
		done += len;
	}
	return done;
}

/*
 * BAR2: the VRAM slice, page by page through the backend. Past the slice,
 * up to the power-of-two BAR size, reads return zero and writes are
 * dropped.
 */
static ssize_t gpuvirt_vgpu_rw_vram(struct gpuvirt_vgpu *vgpu, u64 off,
				    char __user *ubuf, size_t count, bool write)
{
	const struct gpuvirt_backend_ops *ops = vgpu_ops(vgpu);
	size_t done = 0;

	if (off >= vgpu->bar2_size)
		return -EINVAL;
	count = min_t(u64, count, vgpu->bar2_size - off);

	while (done < count) {
		u64 o = off + done;
		size_t n = min_t(u64, count - done, PAGE_SIZE - offset_in_page(o));
		struct page *page = NULL;
		void *p;
		int err = 0;

		if (o < vgpu->vram_size) {
			n = min_t(u64, n, vgpu->vram_size - o);
			page = ops->vram_page(vgpu->mp->gpu, vgpu->vram_offset + o,
					      write);
			if (IS_ERR(page))
				return done ? done : PTR_ERR(page);
		}

		if (!page) {
			if (!write && clear_user(ubuf + done, n))
				err = -EFAULT;
		} else {
			p = kmap_local_page(page);
			if (write)
				err = copy_from_user(p + offset_in_page(o),
						     ubuf + done, n) ? -EFAULT : 0;
			else
				err = copy_to_user(ubuf + done,
						   p + offset_in_page(o), n) ? -EFAULT : 0;
			kunmap_local(p);
			put_page(page);
		}
		if (err)
			return done ? done : err;
		done += n;
		cond_resched();
	}
	return done;
}

static ssize_t gpuvirt_vgpu_rw(struct vfio_device *vdev, char __user *ubuf,
			       size_t count, loff_t *ppos, bool write)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	unsigned int index = GPUVIRT_VGPU_INDEX(*ppos);
	ssize_t ret;

	switch (index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
	case VFIO_PCI_BAR0_REGION_INDEX:
		ret = gpuvirt_vgpu_rw_small(vgpu, *ppos, ubuf, count, write);
		break;
	case VFIO_PCI_BAR2_REGION_INDEX:
		ret = gpuvirt_vgpu_rw_vram(vgpu, *ppos & GPUVIRT_VGPU_OFFSET_MASK,
					   ubuf, count, write);
		break;
	default:
		ret = -EINVAL;
	}
	if (ret > 0)
		*ppos += ret;
	return ret;
}

static ssize_t gpuvirt_vgpu_read(struct vfio_device *vdev, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return gpuvirt_vgpu_rw(vdev, ubuf, count, ppos, false);
}

static ssize_t gpuvirt_vgpu_write(struct vfio_device *vdev,
				  const char __user *ubuf, size_t count,
				  loff_t *ppos)
{
	return gpuvirt_vgpu_rw(vdev, (char __user *)ubuf, count, ppos, true);
}

/* BAR2 mmap: pages are backed on first touch and held by the mapping. */
static vm_fault_t gpuvirt_vgpu_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gpuvirt_vgpu *vgpu = vma->vm_private_data;
	u64 off = ((u64)vmf->pgoff << PAGE_SHIFT) & GPUVIRT_VGPU_OFFSET_MASK;
	struct page *page;

	if (off >= vgpu->vram_size)
		return VM_FAULT_SIGBUS;
	page = vgpu_ops(vgpu)->vram_page(vgpu->mp->gpu, vgpu->vram_offset + off,
					 true);
	/* Out of backing is the guest's SIGBUS, never the host's OOM. */
	if (IS_ERR_OR_NULL(page))
		return VM_FAULT_SIGBUS;
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct gpuvirt_vgpu_vm_ops = {
	.fault = gpuvirt_vgpu_vm_fault,
};

static int gpuvirt_vgpu_mmap(struct vfio_device *vdev,
			     struct vm_area_struct *vma)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	u64 start = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;

	if (GPUVIRT_VGPU_INDEX(start) != VFIO_PCI_BAR2_REGION_INDEX)
		return -EINVAL;
	start &= GPUVIRT_VGPU_OFFSET_MASK;
	if (start >= vgpu->vram_size || len > vgpu->vram_size - start)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	vma->vm_ops = &gpuvirt_vgpu_vm_ops;
	vma->vm_private_data = vgpu;
	return 0;
}

static void gpuvirt_vgpu_reset(struct gpuvirt_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);
	gpuvirt_vgpu_cfg_init(vgpu);
	vgpu->scratch = 0;
	vgpu->irq_status = 0;
	memset(&vgpu->ring, 0, sizeof(vgpu->ring));
	vgpu_ops(vgpu)->vram_zero(vgpu->mp->gpu, vgpu->vram_offset,
				  vgpu->vram_size);
}

/*
 * BAR2 is a power of two; only the VRAM slice at its start may be mapped.
 * Say so with a sparse mmap capability, so that a VMM maps the slice and
 * traps the rest.
 */
static int gpuvirt_vgpu_sparse_cap(struct gpuvirt_vgpu *vgpu,
				   struct vfio_region_info *info,
				   unsigned long arg)
{
	struct vfio_info_cap caps = { .buf = NULL, .size = 0 };
	struct vfio_region_info_cap_sparse_mmap *sparse;
	size_t size = struct_size(sparse, areas, 1);
	int err;

	sparse = kzalloc(size, GFP_KERNEL);
	if (!sparse)
		return -ENOMEM;
	sparse->header.id = VFIO_REGION_INFO_CAP_SPARSE_MMAP;
	sparse->header.version = 1;
	sparse->nr_areas = 1;
	sparse->areas[0].offset = 0;
	sparse->areas[0].size = vgpu->vram_size;
	err = vfio_info_add_capability(&caps, &sparse->header, size);
	kfree(sparse);
	if (err)
		return err;

	info->flags |= VFIO_REGION_INFO_FLAG_CAPS;
	if (info->argsz < sizeof(*info) + caps.size) {
		/* too small for the capability: say how much is needed */
		info->argsz = sizeof(*info) + caps.size;
		info->cap_offset = 0;
	} else {
		vfio_info_cap_shift(&caps, sizeof(*info));
		if (copy_to_user((void __user *)arg + sizeof(*info), caps.buf,
				 caps.size))
			err = -EFAULT;
		info->cap_offset = sizeof(*info);
	}
	kfree(caps.buf);
	return err;
}

static int gpuvirt_vgpu_region_info(struct gpuvirt_vgpu *vgpu,
				    unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_region_info, offset);
	struct vfio_region_info info;

	if (copy_from_user(&info, (void __user *)arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;

	info.cap_offset = 0;
	info.flags = 0;
	info.size = 0;
	switch (info.index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info.size = GPUVIRT_VGPU_CFG_SIZE;
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR0_REGION_INDEX:
		info.size = GPUVIRT_VGPU_REGS_SIZE;
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR2_REGION_INDEX:
		info.size = vgpu->bar2_size;
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE |
			     VFIO_REGION_INFO_FLAG_MMAP;
		break;
	default:
		if (info.index >= VFIO_PCI_NUM_REGIONS)
			return -EINVAL;
		break;	/* a region the device does not have: size 0 */
	}
	info.offset = GPUVIRT_VGPU_REGION(info.index);

	if (info.index == VFIO_PCI_BAR2_REGION_INDEX &&
	    vgpu->vram_size < vgpu->bar2_size) {
		int err = gpuvirt_vgpu_sparse_cap(vgpu, &info, arg);

		if (err)
			return err;
	}
	return copy_to_user((void __user *)arg, &info, minsz) ? -EFAULT : 0;
}

static int gpuvirt_vgpu_irq_info(unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_info, count);
	struct vfio_irq_info info;

	if (copy_from_user(&info, (void __user *)arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz || info.index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;

	info.flags = 0;
	info.count = 0;
	switch (info.index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE |
			     VFIO_IRQ_INFO_AUTOMASKED;
		info.count = 1;
		break;
	case VFIO_PCI_MSI_IRQ_INDEX:
		info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE;
		info.count = 1;
		break;
	default:
		break;
	}
	return copy_to_user((void __user *)arg, &info, minsz) ? -EFAULT : 0;
}

/* Replace an eventfd; fd -1 clears it. */
static int gpuvirt_vgpu_set_trigger(struct eventfd_ctx **slot, s32 fd)
{
	struct eventfd_ctx *ctx = NULL;

	if (fd >= 0) {
		ctx = eventfd_ctx_fdget(fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	} else if (fd != -1) {
		return -EINVAL;
	}
	if (*slot)
		eventfd_ctx_put(*slot);
	*slot = ctx;
	return 0;
}

static int gpuvirt_vgpu_set_irqs(struct gpuvirt_vgpu *vgpu, unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_set, count);
	struct vfio_irq_set hdr;
	struct eventfd_ctx **slot;
	size_t data_size = 0;
	u8 data[4] = { 0 };
	s32 fd;
	u32 action, type;
	int err;

	if (copy_from_user(&hdr, (void __user *)arg, minsz))
		return -EFAULT;
	err = vfio_set_irqs_validate_and_prepare(&hdr, 1, VFIO_PCI_NUM_IRQS,
						 &data_size);
	if (err)
		return err;
	/* the device has no vector of the other indexes */
	if (hdr.index != VFIO_PCI_INTX_IRQ_INDEX &&
	    hdr.index != VFIO_PCI_MSI_IRQ_INDEX)
		return -EINVAL;
	if (data_size > sizeof(data))
		return -EINVAL;
	if (data_size &&
	    copy_from_user(data, (void __user *)(arg + minsz), data_size))
		return -EFAULT;
	memcpy(&fd, data, sizeof(fd));

	action = hdr.flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
	type = hdr.flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
	/* only DATA_NONE may come without data: it disables a trigger */
	if (!hdr.count && type != VFIO_IRQ_SET_DATA_NONE)
		return -EINVAL;
	slot = hdr.index == VFIO_PCI_INTX_IRQ_INDEX ? &vgpu->intx_trigger :
						      &vgpu->msi_trigger;

	mutex_lock(&vgpu->lock);
	switch (action) {
	case VFIO_IRQ_SET_ACTION_TRIGGER:
		if (type == VFIO_IRQ_SET_DATA_NONE && !hdr.count)
			err = gpuvirt_vgpu_set_trigger(slot, -1);
		else if (type == VFIO_IRQ_SET_DATA_EVENTFD)
			err = gpuvirt_vgpu_set_trigger(slot, fd);
		else if (!*slot)
			err = -EINVAL;	/* nothing to trigger yet */
		else if (type == VFIO_IRQ_SET_DATA_NONE || data[0])
			gpuvirt_eventfd_signal(*slot);
		break;
	case VFIO_IRQ_SET_ACTION_MASK:
	case VFIO_IRQ_SET_ACTION_UNMASK:
		if (hdr.index != VFIO_PCI_INTX_IRQ_INDEX || !hdr.count ||
		    type == VFIO_IRQ_SET_DATA_EVENTFD) {
			err = -EINVAL;
			break;
		}
		if (type == VFIO_IRQ_SET_DATA_NONE || data[0])
			vgpu->intx_masked = action == VFIO_IRQ_SET_ACTION_MASK;
		if (!vgpu->intx_masked)
			gpuvirt_vgpu_irq_raise(vgpu);
		break;
	default:
		err = -EINVAL;
	}
	mutex_unlock(&vgpu->lock);
	return err;
}

static long gpuvirt_vgpu_ioctl(struct vfio_device *vdev, unsigned int cmd,
			       unsigned long arg)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	unsigned long minsz;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info info;

		minsz = offsetofend(struct vfio_device_info, num_irqs);
		if (copy_from_user(&info, (void __user *)arg, minsz))
			return -EFAULT;
		if (info.argsz < minsz)
			return -EINVAL;
		info.flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
		info.num_regions = VFIO_PCI_NUM_REGIONS;
		info.num_irqs = VFIO_PCI_NUM_IRQS;
		return copy_to_user((void __user *)arg, &info, minsz) ?
			-EFAULT : 0;
	}
	case VFIO_DEVICE_GET_REGION_INFO:
		return gpuvirt_vgpu_region_info(vgpu, arg);
	case VFIO_DEVICE_GET_IRQ_INFO:
		return gpuvirt_vgpu_irq_info(arg);
	case VFIO_DEVICE_SET_IRQS:
		return gpuvirt_vgpu_set_irqs(vgpu, arg);
	case VFIO_DEVICE_RESET:
		mutex_lock(&vgpu->lock);
		gpuvirt_vgpu_reset(vgpu);
		mutex_unlock(&vgpu->lock);
		return 0;
	}
	return -ENOTTY;
}

static int gpuvirt_vgpu_open(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);

	gpuvirt_sched_attach(vgpu);
	mutex_lock(&vgpu->lock);
	gpuvirt_vgpu_reset(vgpu);
	mutex_unlock(&vgpu->lock);
	return 0;
}

static void gpuvirt_vgpu_close(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);

	gpuvirt_sched_detach(vgpu);
	mutex_lock(&vgpu->lock);
	gpuvirt_vgpu_set_trigger(&vgpu->intx_trigger, -1);
	gpuvirt_vgpu_set_trigger(&vgpu->msi_trigger, -1);
	vgpu->intx_masked = false;
	mutex_unlock(&vgpu->lock);
}

/* Runs inside vfio_alloc_device(): place the vGPU's framebuffer. */
static int gpuvirt_vgpu_init(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	struct mdev_device *mdev = to_mdev_device(vdev->dev);
	struct gpuvirt_type *type = container_of(mdev->type,
						 struct gpuvirt_type, mtype);
	struct gpuvirt_mdev_parent *mp = type->parent;
	u64 offset;
	int err;

	mutex_lock(&mp->lock);
	err = gpuvirt_fb_place(&mp->fb, type->profile, &offset);
	mutex_unlock(&mp->lock);
	if (err)
		return err;

	vgpu->mp = mp;
	vgpu->type = type;
	vgpu->vram_offset = offset;
	vgpu->vram_size = type->profile->fb_size;
	vgpu->bar2_size = roundup_pow_of_two(vgpu->vram_size);
	mutex_init(&vgpu->lock);
	INIT_LIST_HEAD(&vgpu->run_node);
	vgpu->detached = true;	/* until opened */
	gpuvirt_vgpu_cfg_init(vgpu);
	return 0;
}

/* The last reference is gone: nothing maps the slice any more. */
static void gpuvirt_vgpu_release(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	struct gpuvirt_mdev_parent *mp = vgpu->mp;

	vgpu_ops(vgpu)->vram_discard(mp->gpu, vgpu->vram_offset,
				     vgpu->vram_size);
	mutex_lock(&mp->lock);
	WARN_ON(gpuvirt_fb_release(&mp->fb, vgpu->vram_offset));
	mutex_unlock(&mp->lock);
	mutex_destroy(&vgpu->lock);
	gpuvirt_vfio_release_done(vdev);
}

const struct vfio_device_ops gpuvirt_vgpu_ops = {
	.name		= "gpuvirt-vgpu",
	.init		= gpuvirt_vgpu_init,
	.release	= gpuvirt_vgpu_release,
	.open_device	= gpuvirt_vgpu_open,
	.close_device	= gpuvirt_vgpu_close,
	.read		= gpuvirt_vgpu_read,
	.write		= gpuvirt_vgpu_write,
	.mmap		= gpuvirt_vgpu_mmap,
	.ioctl		= gpuvirt_vgpu_ioctl,
	GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS
};
