// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest-visible vGPU: an emulated PCI device over VFIO, described in
 * Documentation/vgpu/vgpu-abi.rst and include/uapi/linux/gpuvirt_vgpu.h.
 *
 * Emulated: PCI config space with an MSI capability and INTx, BAR0
 * registers, BAR2 as the vGPU's VRAM slice (read, write and mmap, backed on
 * demand by the backend), INTx and MSI through eventfds, the VFIO device
 * request interrupt, and reset, which zeroes the slice; the command ring is
 * run by engine.c. The command register's Memory Space bit gates BAR0 and
 * BAR2 (accesses fail with -EIO and BAR2 mappings are zapped and fault with
 * SIGBUS while it is clear), and its Bus Master bit gates MSI.
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/idr.h>
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

/*
 * BAR2 mappings: page offsets.
 *
 * Clearing Memory Space must revoke every mapping of the slice, which takes
 * unmap_mapping_pages() on the address_space the VMAs are in, over their
 * page offsets. That address_space is vm_file->f_mapping of the VFIO device
 * file, and it is not the vGPU's own on every kernel: on 6.1 the file is
 * an anon_inode_getfile() file whose f_mapping is the one anon inode that
 * all such files share (perf events, KVM vCPUs, every VFIO device, ...);
 * 6.12 gives each VFIO device an inode of its own. So the mmap handler
 * moves every BAR2 VMA to page offsets that belong to this vGPU alone,
 * bar2_pgoff + page of BAR2, as vfio-pci did on 6.1 (it set vm_pgoff to the
 * BAR's PFN), and the zap covers exactly that range.
 *
 * The ranges start at GPUVIRT_VGPU_PGOFF_BASE pages (byte offset 2^62) and
 * are 2^GPUVIRT_VGPU_PGOFF_SHIFT pages (16 TiB) each, one per vGPU, indexed
 * by an IDA: they never overlap each other, and every one ends below 2^51
 * pages, so byte offsets still fit a loff_t. Other users of the shared
 * inode use small offsets (perf: 0 and its AUX area, KVM: a few pages) or
 * PFNs (vfio-pci on 6.1: below 2^40). Only a process that maps, say, a perf
 * AUX area at an offset above 4 EiB on purpose lands in our range, and then
 * a zap of ours merely makes its fault-driven pages fault in again:
 * even_cows is false, so private COW copies are never dropped. A vGPU's
 * index is freed only in release, when no mapping of it is left.
 *
 * The alternative, zapping through vfio_device::inode, exists only on the
 * newer kernel; this way one mechanism serves both.
 */
#define GPUVIRT_VGPU_PGOFF_BASE		BIT(50)
#define GPUVIRT_VGPU_PGOFF_SHIFT	32
#define GPUVIRT_VGPU_PGOFF_SLOTS	(1U << (50 - GPUVIRT_VGPU_PGOFF_SHIFT))

static DEFINE_IDA(gpuvirt_vgpu_bar2_ida);

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
	/*
	 * Memory Space and Bus Master come out of reset enabled, as on a
	 * device its host driver has enabled (vfio-pci's virtual command
	 * register starts from that state too): a VFIO client that never
	 * touches config space finds working BARs and MSI. A guest programs
	 * the register anyway, and QEMU clears these bits before it resets.
	 */
	cfg_set(c, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
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

/*
 * Memory Space enable. The command register changes only under both
 * memory_lock (write) and lock, so either lock makes this stable.
 */
static bool gpuvirt_vgpu_mem_enabled(struct gpuvirt_vgpu *vgpu)
{
	return cfg_get(vgpu->cfg, PCI_COMMAND, 2) & PCI_COMMAND_MEMORY;
}

/*
 * Interrupts: deliver the vGPU's interrupt on MSI if enabled, else INTx.
 * An MSI is a memory write by the device, which it may not issue while
 * Bus Master is clear: the cause stays pending in IRQ_STATUS and nothing
 * is signalled, now or when Bus Master is set again. INTx is a wire, not
 * a write, and ignores Bus Master. It is level-triggered and automasked,
 * as VFIO_IRQ_INFO_AUTOMASKED says: signalling it masks it, and nothing
 * more is signalled until the user unmasks it (VFIO_IRQ_SET_ACTION_UNMASK),
 * when a cause still pending signals it again.
 */
void gpuvirt_vgpu_irq_raise(struct gpuvirt_vgpu *vgpu)
{
	unsigned int m = GPUVIRT_VGPU_MSI_CAP;
	u16 cmd, msi;

	lockdep_assert_held(&vgpu->lock);
	if (!vgpu->irq_status)
		return;
	if (vgpu->mig_stopped) {
		vgpu->irq_held = true;	/* signalled when it runs */
		return;
	}
	msi = cfg_get(vgpu->cfg, m + PCI_MSI_FLAGS, 2);
	cmd = cfg_get(vgpu->cfg, PCI_COMMAND, 2);
	if (msi & PCI_MSI_FLAGS_ENABLE) {
		if (!(cmd & PCI_COMMAND_MASTER)) {
			vgpu->msi_suppressed++;
			return;
		}
		if (vgpu->msi_trigger)
			gpuvirt_eventfd_signal(vgpu->msi_trigger);
		return;
	}
	if (!(cmd & PCI_COMMAND_INTX_DISABLE) && !vgpu->intx_masked &&
	    vgpu->intx_trigger) {
		vgpu->intx_masked = true;
		gpuvirt_eventfd_signal(vgpu->intx_trigger);
	}
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
	u32 val;

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
		       GPUVIRT_VGPU_CAP_RING | GPUVIRT_VGPU_CAP_DISPLAY;
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
		break;
	}
	/* display hook: the display and head registers (display.c) */
	if (gpuvirt_display_reg_read(vgpu, reg, &val))
		return val;
	return 0;	/* reserved: reads as zero */
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
	    !gpuvirt_slice_contains(vgpu->vram_size, r->base, r->size) ||
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
		gpuvirt_sched_ring(vgpu);
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
			gpuvirt_ring_clear(r);
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
		/* display hook; anything else is read-only or reserved */
		gpuvirt_display_reg_write(vgpu, reg, val);
		break;
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
 * BAR2 mappings: zap every page of the slice mapped by any process; the
 * next access faults (gpuvirt_vgpu_vm_fault()). Called with memory_lock
 * held for write, so no fault can map a page again until it is dropped.
 */
static void gpuvirt_vgpu_bar2_zap(struct gpuvirt_vgpu *vgpu)
{
	lockdep_assert_held_write(&vgpu->memory_lock);
	if (vgpu->bar2_mapping)
		unmap_mapping_pages(vgpu->bar2_mapping, vgpu->bar2_pgoff,
				    DIV_ROUND_UP(vgpu->vram_size, PAGE_SIZE),
				    false);
}

/* Does config access [off, off + len) touch the command register? */
static bool gpuvirt_vgpu_cfg_cmd(unsigned int off, unsigned int len)
{
	return off < PCI_COMMAND + 2 && off + len > PCI_COMMAND;
}

/*
 * Config space and BAR0 take accesses of any length, split into naturally
 * aligned pieces of at most 4 bytes, the way a VMM reads config space in
 * one go. BAR0 does not respond while Memory Space is off: -EIO. A config
 * write to the command register takes memory_lock for write, and when it
 * turns Memory Space off it zaps the BAR2 mappings before any BAR2 access
 * can run again.
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
		bool cmd, revoke = false, bar_off = false;

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

		cmd = write && index == VFIO_PCI_CONFIG_REGION_INDEX &&
		      gpuvirt_vgpu_cfg_cmd(o, len);
		if (cmd)
			down_write(&vgpu->memory_lock);
		mutex_lock(&vgpu->lock);
		if (index == VFIO_PCI_BAR0_REGION_INDEX &&
		    !gpuvirt_vgpu_mem_enabled(vgpu)) {
			bar_off = true;
		} else {
			revoke = gpuvirt_vgpu_mem_enabled(vgpu);
			gpuvirt_vgpu_access(vgpu, index, o, &val, len, write);
			revoke &= !gpuvirt_vgpu_mem_enabled(vgpu);
		}
		mutex_unlock(&vgpu->lock);
		if (cmd) {
			if (revoke)
				gpuvirt_vgpu_bar2_zap(vgpu);
			up_write(&vgpu->memory_lock);
		}
		if (bar_off)
			return done ? done : -EIO;

		raw = cpu_to_le32(val);
		if (!write && copy_to_user(ubuf + done, &raw, len))
			return done ? done : -EFAULT;
		done += len;
	}
	return done;
}

/**
 * gpuvirt_vgpu_slice_page() - the host page behind a byte of the slice
 * @vgpu: the vGPU
 * @off: offset in its slice, from the guest or the VMM: untrusted
 * @len: bytes to be accessed from @off, within one page
 * @alloc: back the page if it is not
 *
 * Every guest- or VMM-given offset becomes a VRAM address here, and only
 * here: it is checked against this vGPU's slice, not the GPU's VRAM, and
 * the access may not run past the page.
 *
 * Return: the page with a reference held, NULL if it is not backed and
 * !@alloc, ERR_PTR(-EFAULT) for a range outside the slice or across a
 * page, or the backend's error.
 */
struct page *gpuvirt_vgpu_slice_page(struct gpuvirt_vgpu *vgpu, u64 off,
				     size_t len, bool alloc)
{
	if (!gpuvirt_slice_contains(vgpu->vram_size, off, len) ||
	    len > PAGE_SIZE - offset_in_page(off))
		return ERR_PTR(-EFAULT);
	return vgpu_ops(vgpu)->vram_page(vgpu->mp->gpu, vgpu->vram_offset + off,
					 alloc);
}

/*
 * One piece of BAR2, within one page, between the slice and @buf. Past the
 * slice, up to the power-of-two BAR size, reads return zero and writes are
 * dropped. -EIO while Memory Space is off.
 */
static int gpuvirt_vgpu_vram_xfer(struct gpuvirt_vgpu *vgpu, u64 off,
				  void *buf, size_t n, bool write)
{
	struct page *page = NULL;
	int err = 0;
	void *p;

	down_read(&vgpu->memory_lock);
	if (!gpuvirt_vgpu_mem_enabled(vgpu)) {
		err = -EIO;
		goto out;
	}
	if (off < vgpu->vram_size) {
		page = gpuvirt_vgpu_slice_page(vgpu, off, n, write);
		if (IS_ERR(page)) {
			err = PTR_ERR(page);
			goto out;
		}
	}
	if (!page) {
		if (!write)
			memset(buf, 0, n);	/* never written, or past the slice */
		goto out;
	}
	p = kmap_local_page(page);
	if (write)
		memcpy(p + offset_in_page(off), buf, n);
	else
		memcpy(buf, p + offset_in_page(off), n);
	kunmap_local(p);
	put_page(page);
	if (write)
		gpuvirt_migration_dirty(&vgpu->mig, off, n);
out:
	up_read(&vgpu->memory_lock);
	return err;
}

/*
 * BAR2: the VRAM slice, page by page through the backend. The data goes
 * through a bounce page so that no user copy runs under memory_lock: the
 * user buffer may itself be a mapping of this BAR2, whose fault takes
 * memory_lock too.
 */
static ssize_t gpuvirt_vgpu_rw_vram(struct gpuvirt_vgpu *vgpu, u64 off,
				    char __user *ubuf, size_t count, bool write)
{
	size_t done = 0;
	void *bounce;
	int err = 0;

	if (off >= vgpu->bar2_size)
		return -EINVAL;
	count = min_t(u64, count, vgpu->bar2_size - off);
	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;

	while (done < count) {
		u64 o = off + done;
		size_t n = min_t(u64, count - done, PAGE_SIZE - offset_in_page(o));

		if (o < vgpu->vram_size)
			n = min_t(u64, n, vgpu->vram_size - o);
		if (write && copy_from_user(bounce, ubuf + done, n)) {
			err = -EFAULT;
			break;
		}
		err = gpuvirt_vgpu_vram_xfer(vgpu, o, bounce, n, write);
		if (err)
			break;
		if (!write && copy_to_user(ubuf + done, bounce, n)) {
			err = -EFAULT;
			break;
		}
		done += n;
		cond_resched();
	}
	kfree(bounce);
	return done ? done : err;
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
	case GPUVIRT_VGPU_DISPLAY_REGION:	/* display hook: read-only */
		ret = write ? -EINVAL :
		      gpuvirt_display_region_read(vgpu,
						  *ppos & GPUVIRT_VGPU_OFFSET_MASK,
						  ubuf, count);
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

/*
 * BAR2 faults map GPUVIRT_VGPU_FAULT_AROUND pages at once: the faulting one
 * and the others of its naturally aligned block that the VMA covers. A
 * first write to VRAM then costs one fault per block instead of one per
 * page, which is most of what backing on demand cost over a first write
 * to anonymous memory (bench/README.md, bar2_first_touch). A write fault
 * backs the whole block; a read fault only maps the neighbours that are
 * backed already, so that reading VRAM does not back more of it than it
 * did. Every page still comes from the backend's vram_page(): zeroed when
 * it is first backed, and charged to the host memory cap, whose refusal
 * ends the fault-around quietly (only the faulting page's own refusal is
 * the guest's SIGBUS).
 *
 * While migration tracks writes (pre-copy), a fault maps its own page
 * alone. Every page mapped counts as written, as a store through it would
 * not fault again; mapping a block would send up to 16 pages again for
 * each one the guest wrote, and pre-copy would stop converging at a write
 * rate 16 times lower than it has to.
 */
#define GPUVIRT_VGPU_FAULT_AROUND	16

/*
 * Back (if @alloc) and map BAR2 page @pg at @addr; memory_lock held.
 * Returns 0, -EBUSY (mapped already), -ENOENT (not backed, !@alloc),
 * -ENOSPC for any failure to back it (the host memory cap, or the
 * allocation) or vm_insert_page()'s error.
 */
static int gpuvirt_vgpu_map_page(struct gpuvirt_vgpu *vgpu,
				 struct vm_area_struct *vma, unsigned long addr,
				 unsigned long pg, bool alloc)
{
	struct page *page;
	int err;

	page = gpuvirt_vgpu_slice_page(vgpu, (u64)pg << PAGE_SHIFT, PAGE_SIZE,
				       alloc);
	if (IS_ERR(page))
		return -ENOSPC;
	if (!page)
		return -ENOENT;
	/* a mapping may be written without another fault: count it written */
	gpuvirt_migration_dirty(&vgpu->mig, (u64)pg << PAGE_SHIFT, PAGE_SIZE);
	err = vm_insert_page(vma, addr, page);
	put_page(page);		/* the mapping holds its own reference */
	return err;
}

/*
 * BAR2 mmap: pages are backed on first touch and inserted by the fault
 * handler itself, under memory_lock: a zap that runs after the handler has
 * dropped the lock therefore sees the pages it inserted, so no mapping
 * survives Memory Space going off. While it is off every fault is SIGBUS.
 */
static vm_fault_t gpuvirt_vgpu_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gpuvirt_vgpu *vgpu = vma->vm_private_data;
	unsigned long pages = DIV_ROUND_UP(vgpu->vram_size, PAGE_SIZE);
	unsigned long pg = vmf->pgoff - vgpu->bar2_pgoff;
	unsigned long first, last, vma_first, p;
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int err;

	if (vmf->pgoff < vgpu->bar2_pgoff || pg >= pages)
		return VM_FAULT_SIGBUS;

	down_read(&vgpu->memory_lock);
	if (!gpuvirt_vgpu_mem_enabled(vgpu))
		goto out;
	err = gpuvirt_vgpu_map_page(vgpu, vma, vmf->address & PAGE_MASK, pg,
				    true);
	if (!err || err == -EBUSY)	/* -EBUSY: a racing fault mapped it */
		ret = VM_FAULT_NOPAGE;
	else if (err == -ENOMEM)
		ret = VM_FAULT_OOM;	/* a page table, not backing */
	/* Out of backing (-ENOSPC) is the guest's SIGBUS, never the host's OOM. */
	if (ret != VM_FAULT_NOPAGE || gpuvirt_migration_tracking(&vgpu->mig))
		goto out;

	/* the rest of the block, inside the VMA and the slice */
	vma_first = vma->vm_pgoff - vgpu->bar2_pgoff;
	first = max(round_down(pg, GPUVIRT_VGPU_FAULT_AROUND), vma_first);
	last = min3(round_down(pg, GPUVIRT_VGPU_FAULT_AROUND) +
		    GPUVIRT_VGPU_FAULT_AROUND - 1,
		    vma_first + vma_pages(vma) - 1, pages - 1);
	for (p = first; p <= last; p++) {
		if (p == pg)
			continue;
		err = gpuvirt_vgpu_map_page(vgpu, vma,
					    vma->vm_start +
					    ((p - vma_first) << PAGE_SHIFT),
					    p, write);
		if (err && err != -EBUSY && err != -ENOENT)
			break;	/* out of backing, or of page tables */
	}
out:
	up_read(&vgpu->memory_lock);
	return ret;
}

static const struct vm_operations_struct gpuvirt_vgpu_vm_ops = {
	.fault = gpuvirt_vgpu_vm_fault,
};

/*
 * Map part of the slice. The VMA moves to the vGPU's own page offsets
 * (see "BAR2 mappings" at the top), and the address_space it is in is
 * remembered for the zap. All files of one VFIO device share one
 * address_space on both kernels; should that ever differ, the mapping is
 * refused rather than left unrevocable.
 */
static int gpuvirt_vgpu_mmap(struct vfio_device *vdev,
			     struct vm_area_struct *vma)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	struct address_space *mapping = vma->vm_file->f_mapping;
	u64 start = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	int err = 0;

	if (GPUVIRT_VGPU_INDEX(start) == GPUVIRT_VGPU_DISPLAY_REGION)
		return gpuvirt_display_mmap(vgpu, vma,	/* display hook */
					    start & GPUVIRT_VGPU_OFFSET_MASK);
	if (GPUVIRT_VGPU_INDEX(start) != VFIO_PCI_BAR2_REGION_INDEX)
		return -EINVAL;
	start &= GPUVIRT_VGPU_OFFSET_MASK;
	if (start >= vgpu->vram_size || len > vgpu->vram_size - start)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	down_write(&vgpu->memory_lock);
	if (!vgpu->bar2_mapping)
		vgpu->bar2_mapping = mapping;
	else if (vgpu->bar2_mapping != mapping)
		err = -EINVAL;
	up_write(&vgpu->memory_lock);
	if (err)
		return err;

	vma->vm_pgoff = vgpu->bar2_pgoff + (start >> PAGE_SHIFT);
	/* pages go in with vm_insert_page(); never grown by mremap() */
	gpuvirt_vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND);
	vma->vm_ops = &gpuvirt_vgpu_vm_ops;
	vma->vm_private_data = vgpu;
	return 0;
}

/* Called with memory_lock held for write: it rewrites the command register. */
static void gpuvirt_vgpu_reset(struct gpuvirt_vgpu *vgpu)
{
	lockdep_assert_held_write(&vgpu->memory_lock);
	lockdep_assert_held(&vgpu->lock);
	gpuvirt_vgpu_cfg_init(vgpu);
	vgpu->scratch = 0;
	vgpu->irq_status = 0;
	vgpu->irq_held = false;
	memset(&vgpu->ring, 0, sizeof(vgpu->ring));
	gpuvirt_display_reset(vgpu);	/* display hook */
	gpuvirt_sched_kick(vgpu);	/* nothing to run any more */
	vgpu_ops(vgpu)->vram_zero(vgpu->mp->gpu, vgpu->vram_offset,
				  vgpu->vram_size);
}

/*
 * Reset as one step for every BAR2 access: the mappings are zapped and
 * memory_lock held, so a store through a mapping lands either before the
 * slice is zeroed, and is zeroed, or after the reset. The slice is zeroed
 * in place, so the mappings fault the same pages in again.
 */
static void gpuvirt_vgpu_reset_locked(struct gpuvirt_vgpu *vgpu)
{
	down_write(&vgpu->memory_lock);
	gpuvirt_vgpu_bar2_zap(vgpu);
	mutex_lock(&vgpu->lock);
	gpuvirt_vgpu_reset(vgpu);
	mutex_unlock(&vgpu->lock);
	up_write(&vgpu->memory_lock);
}

/*
 * BAR2 is a power of two; only the VRAM slice at its start may be mapped.
 * Say so with a sparse mmap capability, so that a VMM maps the slice and
 * traps the rest.
 */
static int gpuvirt_vgpu_sparse_cap(struct gpuvirt_vgpu *vgpu,
				   struct vfio_info_cap *caps)
{
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
	err = vfio_info_add_capability(caps, &sparse->header, size);
	kfree(sparse);
	return err;
}

/*
 * VFIO_DEVICE_GET_REGION_INFO: @info holds the request (argsz, index);
 * fill in its flags, size and offset, and add the region's capabilities
 * to @caps. The caller copies both out and frees @caps' buffer, on error
 * too: the VFIO core, whose get_region_info_caps op this is, or
 * gpuvirt_vgpu_region_info_ioctl() on older kernels (compat.h).
 */
static int gpuvirt_vgpu_get_region_info(struct vfio_device *vdev,
					struct vfio_region_info *info,
					struct vfio_info_cap *caps)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	int err;

	info->cap_offset = 0;
	info->flags = 0;
	info->size = 0;
	switch (info->index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info->size = GPUVIRT_VGPU_CFG_SIZE;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR0_REGION_INDEX:
		info->size = GPUVIRT_VGPU_REGS_SIZE;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR2_REGION_INDEX:
		info->size = vgpu->bar2_size;
		info->flags = VFIO_REGION_INFO_FLAG_READ |
			      VFIO_REGION_INFO_FLAG_WRITE |
			      VFIO_REGION_INFO_FLAG_MMAP;
		break;
	case GPUVIRT_VGPU_DISPLAY_REGION:	/* display hook */
		err = gpuvirt_display_region_info(vgpu, info, caps);
		if (err)
			return err;
		break;
	default:
		if (info->index >= VFIO_PCI_NUM_REGIONS)
			return -EINVAL;
		break;	/* a region the device does not have: size 0 */
	}
	info->offset = GPUVIRT_VGPU_REGION(info->index);

	if (info->index == VFIO_PCI_BAR2_REGION_INDEX &&
	    vgpu->vram_size < vgpu->bar2_size)
		return gpuvirt_vgpu_sparse_cap(vgpu, caps);
	return 0;
}

#ifndef GPUVIRT_HAVE_VFIO_GET_REGION_INFO_CAPS
/*
 * Before v6.19 the VFIO core passes VFIO_DEVICE_GET_REGION_INFO to the
 * ioctl op: do here what later cores do around get_region_info_caps.
 * When @arg's argsz is too small for the capability chain, say how much
 * is needed.
 */
static long gpuvirt_vgpu_region_info_ioctl(struct vfio_device *vdev,
					   unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_region_info, offset);
	struct vfio_region_info __user *uinfo = (void __user *)arg;
	struct vfio_info_cap caps = { .buf = NULL, .size = 0 };
	struct vfio_region_info info;
	int err;

	if (copy_from_user(&info, uinfo, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;

	err = gpuvirt_vgpu_get_region_info(vdev, &info, &caps);
	if (err)
		goto out_free_caps;
	if (caps.size) {
		info.flags |= VFIO_REGION_INFO_FLAG_CAPS;
		if (info.argsz < sizeof(info) + caps.size) {
			info.argsz = sizeof(info) + caps.size;
			info.cap_offset = 0;
		} else {
			vfio_info_cap_shift(&caps, sizeof(info));
			if (copy_to_user(uinfo + 1, caps.buf, caps.size)) {
				err = -EFAULT;
				goto out_free_caps;
			}
			info.cap_offset = sizeof(info);
		}
	}
	if (copy_to_user(uinfo, &info, minsz))
		err = -EFAULT;
out_free_caps:
	kfree(caps.buf);
	return err;
}
#endif

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
	case VFIO_PCI_REQ_IRQ_INDEX:
		info.flags = VFIO_IRQ_INFO_EVENTFD;
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
	switch (hdr.index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		slot = &vgpu->intx_trigger;
		break;
	case VFIO_PCI_MSI_IRQ_INDEX:
		slot = &vgpu->msi_trigger;
		break;
	case VFIO_PCI_REQ_IRQ_INDEX:
		slot = &vgpu->req_trigger;
		break;
	default:
		return -EINVAL;
	}
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

	mutex_lock(&vgpu->lock);
	switch (action) {
	case VFIO_IRQ_SET_ACTION_TRIGGER:
		if (type == VFIO_IRQ_SET_DATA_NONE && !hdr.count) {
			err = gpuvirt_vgpu_set_trigger(slot, -1);
			/* INTx disabled, as vfio-pci's: it comes back unmasked */
			if (slot == &vgpu->intx_trigger)
				vgpu->intx_masked = false;
		} else if (type == VFIO_IRQ_SET_DATA_EVENTFD) {
			err = gpuvirt_vgpu_set_trigger(slot, fd);
		} else if (!*slot) {
			err = -EINVAL;	/* nothing to trigger yet */
		} else if (type == VFIO_IRQ_SET_DATA_NONE || data[0]) {
			gpuvirt_eventfd_signal(*slot);
		}
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
		/* the PCI regions, then the display region */
		info.num_regions = GPUVIRT_VGPU_DISPLAY_REGION + 1;
		info.num_irqs = VFIO_PCI_NUM_IRQS;
		return copy_to_user((void __user *)arg, &info, minsz) ?
			-EFAULT : 0;
	}
#ifndef GPUVIRT_HAVE_VFIO_GET_REGION_INFO_CAPS
	case VFIO_DEVICE_GET_REGION_INFO:
		return gpuvirt_vgpu_region_info_ioctl(vdev, arg);
#endif
	case VFIO_DEVICE_GET_IRQ_INFO:
		return gpuvirt_vgpu_irq_info(arg);
	case VFIO_DEVICE_SET_IRQS:
		return gpuvirt_vgpu_set_irqs(vgpu, arg);
	case VFIO_DEVICE_RESET:
		/* ends any migration too, as the uAPI wants */
		gpuvirt_migration_reset(&vgpu->mig);
		return 0;
	case VFIO_DEVICE_QUERY_GFX_PLANE:	/* display hook */
		return gpuvirt_display_query_plane(vgpu, arg);
	}
	return -ENOTTY;
}

static int gpuvirt_vgpu_open(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);

	/* a VF's vGPU whose type is being cleared is not opened again */
	mutex_lock(&vgpu->lock);
	if (vgpu->retiring) {
		mutex_unlock(&vgpu->lock);
		return -ENODEV;
	}
	vgpu->opened = true;
	mutex_unlock(&vgpu->lock);
	gpuvirt_sched_attach(vgpu);
	gpuvirt_vgpu_reset_locked(vgpu);
	return 0;
}

static void gpuvirt_vgpu_close(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);

	/* ending a migration at close signals nobody */
	mutex_lock(&vgpu->lock);
	vgpu->irq_held = false;
	mutex_unlock(&vgpu->lock);
	gpuvirt_migration_close(&vgpu->mig);
	gpuvirt_sched_detach(vgpu);
	gpuvirt_display_stop(vgpu);	/* display hook: before the lock */
	mutex_lock(&vgpu->lock);
	gpuvirt_display_reset(vgpu);
	gpuvirt_vgpu_set_trigger(&vgpu->intx_trigger, -1);
	gpuvirt_vgpu_set_trigger(&vgpu->msi_trigger, -1);
	gpuvirt_vgpu_set_trigger(&vgpu->req_trigger, -1);
	vgpu->intx_masked = false;
	vgpu->opened = false;
	mutex_unlock(&vgpu->lock);
}

/*
 * The VFIO core calls this while it waits in vfio_unregister_group_dev()
 * for the user to let go of a vGPU being removed: once at once, then every
 * 10 s (@count counts the calls). Relay it on the REQ eventfd, which QEMU
 * answers by unplugging the device from the guest and closing it.
 */
static void gpuvirt_vgpu_request(struct vfio_device *vdev, unsigned int count)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);

	mutex_lock(&vgpu->lock);
	if (vgpu->req_trigger) {
		if (!(count % 10))
			dev_notice_ratelimited(vdev->dev,
					       "asking the user to release the vGPU (#%u)\n",
					       count);
		gpuvirt_eventfd_signal(vgpu->req_trigger);
	} else if (!count) {
		dev_notice(vdev->dev,
			   "no request eventfd: removal waits until the user releases the vGPU\n");
	}
	mutex_unlock(&vgpu->lock);
}

/*
 * Migration: the device's side (migration.c has the state machine and the
 * stream). What travels besides VRAM is struct gpuvirt_vgpu_saved: config
 * space, the BAR0 registers, pending interrupt causes, the ring and the
 * packet in progress with its progress. Scheduler settings and telemetry
 * stay with the host.
 */

/**
 * struct gpuvirt_vgpu_saved - the device state in a migration stream
 * @cfg: config space; only the bits the guest may write are taken
 * @scratch: SCRATCH
 * @irq_status: IRQ_STATUS
 * @ring_size: RING_SIZE
 * @ring_head: RING_HEAD
 * @ring_tail: RING_TAIL
 * @ring_fence: FENCE
 * @ring_error: ERROR
 * @ring_error_head: ERROR_HEAD
 * @cmd_active: a packet is in progress at RING_HEAD
 * @cmd_dwords: its length
 * @cmd_header: its header dword
 * @cmd_seqno: FENCE: its seqno
 * @cmd_op: its command: enum gpuvirt_cmd_op
 * @reserved: zero
 * @ring_base: RING_BASE
 * @ring_done: DONE
 * @ring_busy_ns: modelled engine time used
 * @cmd_dst: the command's destination
 * @cmd_src: its source
 * @cmd_len: its length
 * @cmd_value: its immediate
 * @cmd_done: its progress
 * @cmd_state: the backend's progress state
 * @display: the display heads (display.c)
 */
struct gpuvirt_vgpu_saved {
	u8 cfg[GPUVIRT_VGPU_CFG_SIZE];
	__le32 scratch;
	__le32 irq_status;
	__le32 ring_size;
	__le32 ring_head;
	__le32 ring_tail;
	__le32 ring_fence;
	__le32 ring_error;
	__le32 ring_error_head;
	__le32 cmd_active;
	__le32 cmd_dwords;
	__le32 cmd_header;
	__le32 cmd_seqno;
	__le32 cmd_op;
	__le32 reserved;
	__le64 ring_base;
	__le64 ring_done;
	__le64 ring_busy_ns;
	__le64 cmd_dst;
	__le64 cmd_src;
	__le64 cmd_len;
	__le64 cmd_value;
	__le64 cmd_done;
	__le64 cmd_state;
	struct gpuvirt_display_saved display;
};

static struct gpuvirt_vgpu *mig_to_vgpu(struct gpuvirt_migration *m)
{
	return container_of(m, struct gpuvirt_vgpu, mig);
}

/*
 * The engine runs a vGPU's ring one chunk at a time under its lock, and
 * looks at mig_stopped before each: once the flag is set under the lock,
 * no chunk runs, and the one that ran last ended at a boundary.
 *
 * A device that runs again after a resume signals the interrupt causes
 * that came pending in the stream: the source's VMM may never have
 * delivered them, and the destination's eventfds have seen nothing, while
 * a level interrupt never acknowledged is still asserted. A device merely
 * paused and continued signals nothing again: what it raised was sent.
 */
static void gpuvirt_vgpu_mig_stop(struct gpuvirt_migration *m, bool stop)
{
	struct gpuvirt_vgpu *vgpu = mig_to_vgpu(m);

	mutex_lock(&vgpu->lock);
	vgpu->mig_stopped = stop;
	if (stop) {
		gpuvirt_display_hold(vgpu);
	} else {
		if (vgpu->irq_held) {
			vgpu->irq_held = false;
			gpuvirt_vgpu_irq_raise(vgpu);
		}
		gpuvirt_display_run(vgpu);
	}
	gpuvirt_sched_kick(vgpu);
	mutex_unlock(&vgpu->lock);
}

static void gpuvirt_vgpu_mig_save(struct gpuvirt_migration *m, void *buf)
{
	struct gpuvirt_vgpu *vgpu = mig_to_vgpu(m);
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;
	struct gpuvirt_vgpu_saved *sv = buf;

	memset(sv, 0, sizeof(*sv));
	mutex_lock(&vgpu->lock);
	memcpy(sv->cfg, vgpu->cfg, sizeof(sv->cfg));
	sv->scratch = cpu_to_le32(vgpu->scratch);
	sv->irq_status = cpu_to_le32(vgpu->irq_status);
	sv->ring_size = cpu_to_le32(r->size);
	sv->ring_head = cpu_to_le32(r->head);
	sv->ring_tail = cpu_to_le32(r->tail);
	sv->ring_fence = cpu_to_le32(r->fence);
	sv->ring_error = cpu_to_le32(r->error);
	sv->ring_error_head = cpu_to_le32(r->error_head);
	sv->ring_base = cpu_to_le64(r->base);
	sv->ring_done = cpu_to_le64(r->done);
	sv->ring_busy_ns = cpu_to_le64(r->busy_ns);
	if (r->cmd_active) {
		sv->cmd_active = cpu_to_le32(1);
		sv->cmd_dwords = cpu_to_le32(r->cmd_dwords);
		sv->cmd_header = cpu_to_le32(r->cmd_header);
		sv->cmd_seqno = cpu_to_le32(r->cmd_seqno);
		sv->cmd_op = cpu_to_le32(r->cmd.op);
		sv->cmd_dst = cpu_to_le64(r->cmd.dst);
		sv->cmd_src = cpu_to_le64(r->cmd.src);
		sv->cmd_len = cpu_to_le64(r->cmd.len);
		sv->cmd_value = cpu_to_le64(r->cmd.value);
		sv->cmd_done = cpu_to_le64(r->cmd.done);
		sv->cmd_state = cpu_to_le64(r->cmd.state);
	}
	gpuvirt_display_save(vgpu, &sv->display);
	mutex_unlock(&vgpu->lock);
}

static int gpuvirt_vgpu_mig_refuse(struct gpuvirt_vgpu *vgpu, const char *what)
{
	dev_notice_ratelimited(vgpu->vdev.dev,
			       "migration stream refused: device state: %s\n",
			       what);
	return -EINVAL;
}

/* Check the ring and packet in @r as the doorbell and the decoder would. */
static const char *gpuvirt_vgpu_mig_check(struct gpuvirt_vgpu *vgpu,
					  const struct gpuvirt_vgpu_ring *r)
{
	const struct gpuvirt_cmd *c = &r->cmd;
	u64 len;

	if (r->error > GPUVIRT_VGPU_ERR_HANG)
		return "unknown ring error";
	if (!r->size)
		return r->head || r->tail || r->cmd_active ?
		       "ring off with work" : NULL;
	if (!is_power_of_2(r->size) || r->size < GPUVIRT_VGPU_RING_SIZE_MIN ||
	    r->size > GPUVIRT_VGPU_RING_SIZE_MAX || (r->base & 0xfff) ||
	    !gpuvirt_slice_contains(vgpu->vram_size, r->base, r->size))
		return "ring outside the slice";
	if (r->head >= r->size || r->tail >= r->size || ((r->head | r->tail) & 3))
		return "ring head or tail out of range";
	if (!r->cmd_active)
		return NULL;
	if (!r->cmd_dwords || r->cmd_dwords > 8 || c->done > c->len)
		return "packet in progress out of range";
	len = c->op == GPUVIRT_CMD_COMPUTE ? 8 : c->len;
	switch (c->op) {
	case GPUVIRT_CMD_NOP:
		return NULL;
	case GPUVIRT_CMD_COPY:
		if (!gpuvirt_slice_contains(vgpu->vram_size, c->src, c->len))
			return "packet in progress outside the slice";
		fallthrough;
	case GPUVIRT_CMD_WRITE:
	case GPUVIRT_CMD_FILL:
	case GPUVIRT_CMD_COMPUTE:
		if (c->op == GPUVIRT_CMD_COMPUTE &&
		    c->len > GPUVIRT_VGPU_COMPUTE_MAX_US)
			return "packet in progress out of range";
		if (!gpuvirt_slice_contains(vgpu->vram_size, c->dst, len))
			return "packet in progress outside the slice";
		return NULL;
	default:
		return "unknown command in progress";
	}
}

/*
 * Validate the device state of a stream, every object of it, into @r and
 * @disp; nothing is committed. NULL, or why it is refused.
 */
static const char *gpuvirt_vgpu_mig_validate(struct gpuvirt_vgpu *vgpu,
					     const struct gpuvirt_vgpu_saved *sv,
					     struct gpuvirt_vgpu_ring *r,
					     struct gpuvirt_display_state *disp)
{
	const char *bad;

	if (le32_to_cpu(sv->cmd_active) > 1 || sv->reserved)
		return "reserved fields set";
	memset(r, 0, sizeof(*r));
	r->size = le32_to_cpu(sv->ring_size);
	r->head = le32_to_cpu(sv->ring_head);
	r->tail = le32_to_cpu(sv->ring_tail);
	r->fence = le32_to_cpu(sv->ring_fence);
	r->error = le32_to_cpu(sv->ring_error);
	r->error_head = le32_to_cpu(sv->ring_error_head);
	r->base = le64_to_cpu(sv->ring_base);
	r->done = le64_to_cpu(sv->ring_done);
	r->busy_ns = le64_to_cpu(sv->ring_busy_ns);
	r->cmd_active = le32_to_cpu(sv->cmd_active);
	if (r->cmd_active) {
		r->cmd_dwords = le32_to_cpu(sv->cmd_dwords);
		r->cmd_header = le32_to_cpu(sv->cmd_header);
		r->cmd_seqno = le32_to_cpu(sv->cmd_seqno);
		r->cmd.op = le32_to_cpu(sv->cmd_op);
		r->cmd.dst = le64_to_cpu(sv->cmd_dst);
		r->cmd.src = le64_to_cpu(sv->cmd_src);
		r->cmd.len = le64_to_cpu(sv->cmd_len);
		r->cmd.value = le64_to_cpu(sv->cmd_value);
		r->cmd.done = le64_to_cpu(sv->cmd_done);
		r->cmd.state = le64_to_cpu(sv->cmd_state);
	}
	bad = gpuvirt_vgpu_mig_check(vgpu, r);
	if (bad)
		return bad;
	return gpuvirt_display_load_validate(vgpu, &sv->display, disp);
}

/*
 * Take the device state of a stream: everything is validated first, then
 * committed in one step under the locks. Config space keeps the bits the
 * type owns; the interrupt causes keep only the defined ones.
 */
static int gpuvirt_vgpu_mig_load(struct gpuvirt_migration *m, const void *buf)
{
	struct gpuvirt_vgpu *vgpu = mig_to_vgpu(m);
	const struct gpuvirt_vgpu_saved *sv = buf;
	struct gpuvirt_display_state *disp;
	struct gpuvirt_vgpu_ring r;
	const char *bad;
	unsigned int i;

	disp = kmalloc(sizeof(*disp), GFP_KERNEL);
	if (!disp)
		return -ENOMEM;
	bad = gpuvirt_vgpu_mig_validate(vgpu, sv, &r, disp);
	if (bad) {
		kfree(disp);
		return gpuvirt_vgpu_mig_refuse(vgpu, bad);
	}

	/* the command register may turn Memory Space off: revoke mappings */
	down_write(&vgpu->memory_lock);
	gpuvirt_vgpu_bar2_zap(vgpu);
	mutex_lock(&vgpu->lock);
	gpuvirt_vgpu_cfg_init(vgpu);
	for (i = 0; i < GPUVIRT_VGPU_CFG_SIZE; i++)
		vgpu->cfg[i] = (vgpu->cfg[i] & ~vgpu->cfg_wmask[i]) |
			       (sv->cfg[i] & vgpu->cfg_wmask[i]);
	vgpu->scratch = le32_to_cpu(sv->scratch);
	vgpu->irq_status = le32_to_cpu(sv->irq_status) &
			   (GPUVIRT_VGPU_IRQ_SW | GPUVIRT_VGPU_IRQ_FENCE |
			    GPUVIRT_VGPU_IRQ_ERROR | GPUVIRT_VGPU_IRQ_VBLANK);
	vgpu->ring = r;
	vgpu->irq_held = true;
	gpuvirt_display_load_commit(vgpu, disp);
	gpuvirt_sched_kick(vgpu);
	mutex_unlock(&vgpu->lock);
	up_write(&vgpu->memory_lock);
	kfree(disp);
	return 0;
}

static void gpuvirt_vgpu_mig_reset(struct gpuvirt_migration *m)
{
	gpuvirt_vgpu_reset_locked(mig_to_vgpu(m));
}

static void gpuvirt_vgpu_mig_changed(struct gpuvirt_migration *m)
{
	gpuvirt_vgpu_notify(mig_to_vgpu(m), GPUVIRT_CMD_VGPU_CHANGE_NTF);
}

static void gpuvirt_vgpu_mig_cpu_revoke(struct gpuvirt_migration *m,
					bool revoke)
{
	struct gpuvirt_vgpu *vgpu = mig_to_vgpu(m);

	if (revoke) {
		down_write(&vgpu->memory_lock);
		gpuvirt_vgpu_bar2_zap(vgpu);
	} else {
		up_write(&vgpu->memory_lock);
	}
}

static const struct gpuvirt_migration_dev_ops gpuvirt_vgpu_mig_dev_ops = {
	.state_size	= sizeof(struct gpuvirt_vgpu_saved),
	.stop		= gpuvirt_vgpu_mig_stop,
	.save		= gpuvirt_vgpu_mig_save,
	.load		= gpuvirt_vgpu_mig_load,
	.reset		= gpuvirt_vgpu_mig_reset,
	.changed	= gpuvirt_vgpu_mig_changed,
	.cpu_revoke	= gpuvirt_vgpu_mig_cpu_revoke,
};

static struct file *
gpuvirt_vgpu_mig_set_state(struct vfio_device *vdev,
			   enum vfio_device_mig_state new_state)
{
	return gpuvirt_migration_set_state(&to_vgpu(vdev)->mig, new_state);
}

static int gpuvirt_vgpu_mig_get_state(struct vfio_device *vdev,
				      enum vfio_device_mig_state *state)
{
	return gpuvirt_migration_get_state(&to_vgpu(vdev)->mig, state);
}

#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
static int gpuvirt_vgpu_mig_data_size(struct vfio_device *vdev,
				      unsigned long *len)
{
	return gpuvirt_migration_data_size(&to_vgpu(vdev)->mig, len);
}
#endif

static const struct vfio_migration_ops gpuvirt_vgpu_mig_ops = {
	.migration_set_state	= gpuvirt_vgpu_mig_set_state,
	.migration_get_state	= gpuvirt_vgpu_mig_get_state,
#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
	.migration_get_data_size = gpuvirt_vgpu_mig_data_size,
#endif
};

#ifdef GPUVIRT_HAVE_VFIO_DMA_LOG_REPORT
static int gpuvirt_vgpu_log_start(struct vfio_device *vdev,
				  struct rb_root_cached *ranges, u32 nnodes,
				  u64 *page_size)
{
	return gpuvirt_migration_log_start(&to_vgpu(vdev)->mig, ranges, nnodes,
					   page_size);
}

static int gpuvirt_vgpu_log_stop(struct vfio_device *vdev)
{
	return gpuvirt_migration_log_stop(&to_vgpu(vdev)->mig);
}

static int gpuvirt_vgpu_log_read_and_clear(struct vfio_device *vdev,
					   unsigned long iova,
					   unsigned long length,
					   struct iova_bitmap *dirty)
{
	return gpuvirt_migration_log_report(&to_vgpu(vdev)->mig, iova, length);
}

/* A vGPU does no DMA to guest memory: its log is always clean. */
static const struct vfio_log_ops gpuvirt_vgpu_log_ops = {
	.log_start		= gpuvirt_vgpu_log_start,
	.log_stop		= gpuvirt_vgpu_log_stop,
	.log_read_and_clear	= gpuvirt_vgpu_log_read_and_clear,
};

#define GPUVIRT_VGPU_LOG_OPS	(&gpuvirt_vgpu_log_ops)
#else
#define GPUVIRT_VGPU_LOG_OPS	NULL	/* compat.h */
#endif

/*
 * Runs inside vfio_alloc_device(): place the vGPU's framebuffer. @vf is
 * the VF the vGPU is made on (sriov.c), or NULL for an mdev.
 */
static int gpuvirt_vgpu_init_type(struct gpuvirt_vgpu *vgpu,
				  struct gpuvirt_type *type,
				  struct gpuvirt_vf *vf)
{
	struct vfio_device *vdev = &vgpu->vdev;
	struct gpuvirt_mdev_parent *mp;
	u64 offset;
	int err, id;

	/* BAR2 must fit the vGPU's range of mmap offsets */
	if (roundup_pow_of_two(type->profile->fb_size) >> PAGE_SHIFT >
	    1UL << GPUVIRT_VGPU_PGOFF_SHIFT)
		return -E2BIG;
	id = ida_alloc_max(&gpuvirt_vgpu_bar2_ida, GPUVIRT_VGPU_PGOFF_SLOTS - 1,
			   GFP_KERNEL);
	if (id < 0)
		return id;

	mp = gpuvirt_mdev_place(type, &offset, vf);
	if (IS_ERR(mp)) {
		err = PTR_ERR(mp);
		goto err_ida;
	}

	vgpu->mp = mp;
	vgpu->type = type;
	vgpu->vf = vf;
	if (vf)
		snprintf(vgpu->uuid, sizeof(vgpu->uuid), "%pUl", &vf->uuid);
	else
		strscpy(vgpu->uuid, dev_name(vdev->dev), sizeof(vgpu->uuid));
	vgpu->vram_offset = mp->vram_base + offset;
	vgpu->vram_size = type->profile->fb_size;
	vgpu->bar2_size = roundup_pow_of_two(vgpu->vram_size);
	vgpu->bar2_id = id;
	vgpu->bar2_pgoff = GPUVIRT_VGPU_PGOFF_BASE +
			   ((unsigned long)id << GPUVIRT_VGPU_PGOFF_SHIFT);
	init_rwsem(&vgpu->memory_lock);
	mutex_init(&vgpu->lock);
	vgpu->detached = true;	/* until opened */
	gpuvirt_vgpu_cfg_init(vgpu);
	gpuvirt_display_init(vgpu);	/* display hook */
	gpuvirt_migration_init(&vgpu->mig, vdev, &gpuvirt_vgpu_mig_dev_ops,
			       mp->gpu, vgpu->vram_offset, vgpu->vram_size,
			       type->profile->name);
	vdev->migration_flags = gpuvirt_migration_flags();
	vdev->mig_ops = &gpuvirt_vgpu_mig_ops;
	vdev->log_ops = GPUVIRT_VGPU_LOG_OPS;

	err = gpuvirt_sched_add(vgpu);
	if (err)
		goto err_fb_release;
	gpuvirt_debugfs_vgpu_add(vgpu);
	debugfs_create_u64("msi_suppressed", 0400, vgpu->debugfs,
			   &vgpu->msi_suppressed);
	gpuvirt_display_debugfs_add(vgpu);	/* display hook */
	return 0;

err_fb_release:
	gpuvirt_migration_fini(&vgpu->mig);
	mutex_destroy(&vgpu->lock);
	mutex_lock(&mp->lock);
	gpuvirt_fb_release(&mp->fb, offset);
	mutex_unlock(&mp->lock);
err_ida:
	ida_free(&gpuvirt_vgpu_bar2_ida, id);
	return err;
}

static int gpuvirt_vgpu_init(struct vfio_device *vdev)
{
	struct mdev_device *mdev = to_mdev_device(vdev->dev);

	return gpuvirt_vgpu_init_type(to_vgpu(vdev),
				      container_of(mdev->type,
						   struct gpuvirt_type, mtype),
				      NULL);
}

/* The VF's type is the one being set (gpuvirt_vf_type_set()). */
static int gpuvirt_vgpu_vf_init(struct vfio_device *vdev)
{
	struct gpuvirt_vf *vf = dev_get_drvdata(vdev->dev);

	return gpuvirt_vgpu_init_type(to_vgpu(vdev), vf->pending, vf);
}

/* The last reference is gone: nothing maps the slice any more. */
static void gpuvirt_vgpu_release(struct vfio_device *vdev)
{
	struct gpuvirt_vgpu *vgpu = to_vgpu(vdev);
	struct gpuvirt_mdev_parent *mp = vgpu->mp;

	gpuvirt_debugfs_vgpu_del(vgpu);
	gpuvirt_display_release(vgpu);	/* display hook */
	gpuvirt_sched_remove(vgpu);
	vgpu_ops(vgpu)->vram_discard(mp->gpu, vgpu->vram_offset,
				     vgpu->vram_size);
	mutex_lock(&mp->lock);
	WARN_ON(gpuvirt_fb_release(&mp->fb, vgpu->vram_offset - mp->vram_base));
	mutex_unlock(&mp->lock);
	gpuvirt_migration_fini(&vgpu->mig);
	mutex_destroy(&vgpu->lock);
	/* the last mapping went with the last file: the range is free */
	ida_free(&gpuvirt_vgpu_bar2_ida, vgpu->bar2_id);
	gpuvirt_vfio_release_done(vdev);
}

/* The core answers VFIO_DEVICE_GET_REGION_INFO through this (compat.h). */
#ifdef GPUVIRT_HAVE_VFIO_GET_REGION_INFO_CAPS
#define GPUVIRT_VGPU_REGION_INFO_OP					\
	.get_region_info_caps = gpuvirt_vgpu_get_region_info,
#else
#define GPUVIRT_VGPU_REGION_INFO_OP
#endif

/* One guest ABI: the mdev vGPU and the VF vGPU differ only in init. */
#define GPUVIRT_VGPU_OPS(init_fn) {					\
	.name		= "gpuvirt-vgpu",				\
	.init		= init_fn,					\
	.release	= gpuvirt_vgpu_release,				\
	.open_device	= gpuvirt_vgpu_open,				\
	.close_device	= gpuvirt_vgpu_close,				\
	.read		= gpuvirt_vgpu_read,				\
	.write		= gpuvirt_vgpu_write,				\
	.mmap		= gpuvirt_vgpu_mmap,				\
	.ioctl		= gpuvirt_vgpu_ioctl,				\
	GPUVIRT_VGPU_REGION_INFO_OP					\
	.request	= gpuvirt_vgpu_request,				\
	GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS				\
}

const struct vfio_device_ops gpuvirt_vgpu_ops =
	GPUVIRT_VGPU_OPS(gpuvirt_vgpu_init);
const struct vfio_device_ops gpuvirt_vgpu_vf_ops =
	GPUVIRT_VGPU_OPS(gpuvirt_vgpu_vf_init);
