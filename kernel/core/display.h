/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Display heads of a vGPU: the BAR0 head registers, the vblank counter and
 * interrupt, and the primary plane a VMM reads through
 * VFIO_DEVICE_QUERY_GFX_PLANE and the display region
 * (Documentation/vgpu/vgpu-abi.rst, "Display heads").
 */
#ifndef GPUVIRT_DISPLAY_H
#define GPUVIRT_DISPLAY_H

#include <linux/types.h>
#include <linux/workqueue.h>
#include <uapi/linux/gpuvirt_vgpu.h>

struct gpuvirt_vgpu;
struct vfio_info_cap;
struct vfio_region_info;
struct vm_area_struct;

/**
 * struct gpuvirt_display_mode - one head's mode, as staged or as committed
 * @base: scanout offset in the vGPU's slice
 * @width: pixels
 * @height: lines
 * @stride: bytes from one line to the next
 * @format: GPUVIRT_VGPU_FMT_*
 */
struct gpuvirt_display_mode {
	u64 base;
	u32 width;
	u32 height;
	u32 stride;
	u32 format;
};

/**
 * struct gpuvirt_display_head - one head's guest-visible state
 * @staged: what the mode registers read; committed by HEAD_CONTROL
 * @active: the mode scanned out while HEAD_CTRL_ENABLE is set in
 *	@control; checked against the type and the slice when committed
 * @control: HEAD_CONTROL as last committed
 * @error: GPUVIRT_VGPU_DERR_* of the last commit
 * @vblank_base: vblanks counted up to @vblank_epoch_ns
 * @vblank_epoch_ns: ktime_get_ns() when the head was last enabled; the
 *	counter runs from there at the type's frame rate while enabled
 * @commits: commits accepted (mode sets and flips)
 * @pending: a flip committed while the frame rate limiter was on, shown
 *	from the vblank at @flip_due_ns on
 * @flip_pending: @pending is waiting
 * @flips: commits that took effect: shown on the head (HEAD_FLIPS)
 * @flip_due_ns: when @pending takes effect
 */
struct gpuvirt_display_head {
	struct gpuvirt_display_mode staged;
	struct gpuvirt_display_mode active;
	u32 control;
	u32 error;
	u32 vblank_base;
	u32 pad;
	u64 vblank_epoch_ns;
	u64 commits;
	struct gpuvirt_display_mode pending;
	u32 flip_pending;
	u32 flips;
	u64 flip_due_ns;
};

/**
 * struct gpuvirt_display_state - everything the guest can see of the
 * display, plain fixed-size integers and nothing else: no pointers, no
 * host resources, so that it can be saved and restored as it is (for
 * migration, @vblank_epoch_ns is rebased: fold the counter into
 * @vblank_base on save, set the epoch to the destination's clock on load)
 * @heads: every head register block, offered or not
 */
struct gpuvirt_display_state {
	struct gpuvirt_display_head heads[GPUVIRT_VGPU_HEADS_MAX];
};

/**
 * struct gpuvirt_display_summary - what netlink reports of the heads
 * @on: bit n set while head n is on
 * @mode: each head's mode as last committed: base 0 (of a head that is
 *	off, gpuvirt_display_summary() fills in nothing)
 */
struct gpuvirt_display_summary {
	u32 on;
	struct gpuvirt_display_mode mode[GPUVIRT_VGPU_HEADS_MAX];
};

/**
 * struct gpuvirt_display_saved_mode - a mode in a migration stream
 * @base: scanout offset in the slice
 * @width: pixels
 * @height: lines
 * @stride: bytes from one line to the next
 * @format: GPUVIRT_VGPU_FMT_*
 */
struct gpuvirt_display_saved_mode {
	__le64 base;
	__le32 width;
	__le32 height;
	__le32 stride;
	__le32 format;
};

/**
 * struct gpuvirt_display_saved_head - one head in a migration stream
 * @staged: the mode registers as the guest last wrote them
 * @active: the mode scanned out, while @control enables the head
 * @pending: a flip waiting for its vblank, while @flip_pending
 * @control: HEAD_CONTROL
 * @error: HEAD_ERROR
 * @vblanks: the vblank counter when saved; it goes on from there
 * @flip_pending: 1 while @pending waits; it shows from the destination's
 *	next vblank
 * @flips: HEAD_FLIPS
 * @reserved: zero
 * @commits: commits accepted
 */
struct gpuvirt_display_saved_head {
	struct gpuvirt_display_saved_mode staged;
	struct gpuvirt_display_saved_mode active;
	struct gpuvirt_display_saved_mode pending;
	__le32 control;
	__le32 error;
	__le32 vblanks;
	__le32 flip_pending;
	__le32 flips;
	__le32 reserved;
	__le64 commits;
};

/**
 * struct gpuvirt_display_saved - the display's part of a migration stream:
 * every head register block, offered or not
 * @heads: the heads
 */
struct gpuvirt_display_saved {
	struct gpuvirt_display_saved_head heads[GPUVIRT_VGPU_HEADS_MAX];
};

/**
 * struct gpuvirt_display - a vGPU's display
 * @st: the guest-visible state; under the vGPU's lock
 * @heads: heads the type offers (profile num_heads); fixed from init
 * @max_width: widest mode the type allows; fixed from init
 * @max_height: tallest mode; fixed from init
 * @frl: vblanks per second (profile frl_config); fixed from init
 * @frl_off: the frame rate limiter is off (an administrator's setting,
 *	like NVIDIA's frame_rate_limiter=0): flips take effect at once
 *	instead of at the next vblank. Host configuration, not guest state;
 *	written under the vGPU's lock, read with READ_ONCE() without it
 *	(netlink reads it under the scheduler's spinlock)
 * @summary: a copy of the heads' state for netlink, which reads it under
 *	the scheduler's spinlock: written field by field with WRITE_ONCE()
 *	under the vGPU's lock at every commit and reset, read with
 *	READ_ONCE(). A reader may see one commit half applied, never a
 *	torn value.
 * @mapping: the address_space mappings of the display region are in, once
 *	mapped; under the vGPU's lock
 * @blank: a zeroed page mappings show where the plane has no pixels;
 *	allocated at the first mmap, freed at release
 * @vblank_work: raises IRQ_VBLANK at @frl per second while a head asks
 *	for it; takes the vGPU's lock, so it is cancelled outside it
 */
struct gpuvirt_display {
	struct gpuvirt_display_state st;
	u32 heads;
	u32 max_width;
	u32 max_height;
	u32 frl;
	bool frl_off;
	struct gpuvirt_display_summary summary;
	struct address_space *mapping;
	struct page *blank;
	struct delayed_work vblank_work;
};

/* Hooks called from vgpu.c. */
void gpuvirt_display_init(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_save(struct gpuvirt_vgpu *vgpu,
			  struct gpuvirt_display_saved *sv);
const char *gpuvirt_display_load_validate(struct gpuvirt_vgpu *vgpu,
					  const struct gpuvirt_display_saved *sv,
					  struct gpuvirt_display_state *st);
void gpuvirt_display_load_commit(struct gpuvirt_vgpu *vgpu,
				 const struct gpuvirt_display_state *st);
void gpuvirt_display_reset(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_stop(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_hold(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_run(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_debugfs_add(struct gpuvirt_vgpu *vgpu);
bool gpuvirt_display_frl(struct gpuvirt_vgpu *vgpu);
void gpuvirt_display_summary(struct gpuvirt_vgpu *vgpu,
			     struct gpuvirt_display_summary *out);
void gpuvirt_display_set_frl(struct gpuvirt_vgpu *vgpu, bool on);
bool gpuvirt_display_reg_read(struct gpuvirt_vgpu *vgpu, unsigned int reg,
			      u32 *val);
bool gpuvirt_display_reg_write(struct gpuvirt_vgpu *vgpu, unsigned int reg,
			       u32 val);
int gpuvirt_display_query_plane(struct gpuvirt_vgpu *vgpu, unsigned long arg);
int gpuvirt_display_region_info(struct gpuvirt_vgpu *vgpu,
				struct vfio_region_info *info,
				struct vfio_info_cap *caps);
int gpuvirt_display_mmap(struct gpuvirt_vgpu *vgpu, struct vm_area_struct *vma,
			 u64 start);
void gpuvirt_display_release(struct gpuvirt_vgpu *vgpu);
ssize_t gpuvirt_display_region_read(struct gpuvirt_vgpu *vgpu, u64 off,
				    char __user *ubuf, size_t count);

#endif /* GPUVIRT_DISPLAY_H */
