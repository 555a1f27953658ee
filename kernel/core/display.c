// SPDX-License-Identifier: GPL-2.0-only
/*
 * Display heads of a vGPU (Documentation/vgpu/vgpu-abi.rst, "Display
 * heads"). Every vGPU has GPUVIRT_VGPU_HEADS_MAX head register blocks; its
 * type offers the first profile->heads of them, up to the type's maximum
 * resolution. The guest stages a mode in a head's registers and commits
 * it by writing HEAD_CONTROL. A commit is checked in full before it takes
 * effect: a refused one sets HEAD_ERROR and turns the head off, so a head
 * never scans out anything but its own vGPU's slice.
 *
 * The VMM sees head 0 as the primary plane: VFIO_DEVICE_QUERY_GFX_PLANE
 * describes it as a region plane, and the display region
 * (GPUVIRT_VGPU_DISPLAY_REGION) is a read-only window on the slice that
 * starts at head 0's scanout base.
 *
 * Locking: the state is under the vGPU's lock; slice pages are read under
 * its memory_lock held for read, which orders them against reset zeroing
 * the slice (vgpu.h).
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "catalogue.h"
#include "display.h"
#include "vgpu.h"

#define GPUVIRT_DISPLAY_BPP	4	/* bytes per pixel of XRGB8888 */
/*
 * Mappings of the display region sit at these page offsets past the
 * vGPU's BAR2 range start (vgpu.c, "BAR2 mappings"): BAR2 takes at most
 * 2^28 pages of the vGPU's 2^32 (a 1 TiB custom GPU's whole VRAM), so the
 * upper half is free; gpuvirt_display_init() asserts it at build time and
 * gpuvirt_display_mmap() checks it for each vGPU.
 */
#define GPUVIRT_DISPLAY_PGOFF	BIT(31)

static void gpuvirt_display_zap(struct gpuvirt_vgpu *vgpu);

static struct gpuvirt_display *to_disp(struct gpuvirt_vgpu *vgpu)
{
	return &vgpu->display;
}

/* Vblanks of @h so far: counted at the type's rate while it is enabled. */
static u32 gpuvirt_display_vblanks(struct gpuvirt_display *d,
				   const struct gpuvirt_display_head *h)
{
	u64 delta;

	if (!(h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE))
		return h->vblank_base;
	delta = ktime_get_ns() - h->vblank_epoch_ns;
	return h->vblank_base + (u32)mul_u64_u32_div(delta, d->frl,
						     NSEC_PER_SEC);
}

/*
 * A flip waiting for its vblank takes effect once the clock has passed
 * it; called before anything looks at a head. Under the vGPU's lock.
 */
static void gpuvirt_display_settle(struct gpuvirt_vgpu *vgpu,
				   struct gpuvirt_display_head *h)
{
	if (h->flip_pending && ktime_get_ns() >= h->flip_due_ns) {
		h->active = h->pending;
		h->flip_pending = 0;
		h->flips++;
		if (h == &vgpu->display.st.heads[0])
			gpuvirt_display_zap(vgpu);
	}
}

/*
 * The next vblank of @h after now: a whole number of frames from the epoch.
 * A type without a frame rate has no vblank to wait for: now.
 */
static u64 gpuvirt_display_next_vblank(struct gpuvirt_display *d,
				       const struct gpuvirt_display_head *h)
{
	u64 frames;

	if (!d->frl)
		return ktime_get_ns();
	frames = mul_u64_u32_div(ktime_get_ns() - h->vblank_epoch_ns,
				 d->frl, NSEC_PER_SEC) + 1;

	/* rounded up, so that the counter has reached the frame by then */
	return h->vblank_epoch_ns +
	       div_u64(frames * NSEC_PER_SEC + d->frl - 1, d->frl);
}

/* One frame period, at least one jiffy. */
static unsigned long gpuvirt_display_period(struct gpuvirt_display *d)
{
	return max(1UL, msecs_to_jiffies(MSEC_PER_SEC / max(d->frl, 1U)));
}

static bool gpuvirt_display_wants_irq(struct gpuvirt_display *d)
{
	unsigned int i;

	for (i = 0; i < d->heads; i++) {
		u32 c = d->st.heads[i].control;

		if ((c & GPUVIRT_VGPU_HEAD_CTRL_ENABLE) &&
		    (c & GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ))
			return true;
	}
	return false;
}

static void gpuvirt_display_vblank_work(struct work_struct *work)
{
	struct gpuvirt_display *d = container_of(to_delayed_work(work),
						 struct gpuvirt_display,
						 vblank_work);
	struct gpuvirt_vgpu *vgpu = container_of(d, struct gpuvirt_vgpu,
						 display);

	mutex_lock(&vgpu->lock);
	/* a stopped device raises nothing; running again restarts this */
	if (!vgpu->mig_stopped && gpuvirt_display_wants_irq(d)) {
		vgpu->irq_status |= GPUVIRT_VGPU_IRQ_VBLANK;
		gpuvirt_vgpu_irq_raise(vgpu);
		schedule_delayed_work(&d->vblank_work,
				      gpuvirt_display_period(d));
	}
	mutex_unlock(&vgpu->lock);
}

/* Bring the netlink copy of head @head up to date. Under the vGPU's lock. */
static void gpuvirt_display_publish(struct gpuvirt_display *d,
				    unsigned int head)
{
	const struct gpuvirt_display_head *h = &d->st.heads[head];
	struct gpuvirt_display_mode *m = &d->summary.mode[head];
	bool on = h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE;
	/* the mode shown, or the one a waiting flip will show */
	const struct gpuvirt_display_mode *src =
		h->flip_pending ? &h->pending : &h->active;

	WRITE_ONCE(m->width, on ? src->width : 0);
	WRITE_ONCE(m->height, on ? src->height : 0);
	WRITE_ONCE(m->stride, on ? src->stride : 0);
	WRITE_ONCE(m->format, on ? src->format : 0);
	WRITE_ONCE(d->summary.on, on ? d->summary.on | BIT(head) :
				  d->summary.on & ~BIT(head));
}

/**
 * gpuvirt_display_init() - set the limits from the vGPU's type
 * @vgpu: the vGPU, being initialised
 */
void gpuvirt_display_init(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	const struct gpuvirt_profile *p = vgpu->type->profile;

	/* a scanout base on a page: a page of the plane is a page of the slice */
	BUILD_BUG_ON(GPUVIRT_VGPU_SCANOUT_ALIGN != PAGE_SIZE);
	/* the largest BAR2 stays below the display range's page offsets */
	BUILD_BUG_ON((roundup_pow_of_two(GPUVIRT_CUSTOM_VRAM_MAX) >> PAGE_SHIFT) >
		     GPUVIRT_DISPLAY_PGOFF);
	memset(&d->st, 0, sizeof(d->st));
	d->heads = min_t(u32, p->heads, GPUVIRT_VGPU_HEADS_MAX);
	d->max_width = p->max_width;
	d->max_height = p->max_height;
	d->frl = p->frl;
	d->frl_off = false;
	INIT_DELAYED_WORK(&d->vblank_work, gpuvirt_display_vblank_work);
}

/**
 * gpuvirt_display_reset() - every head off, every register zero
 * @vgpu: the vGPU; its lock is held
 *
 * The vblank work, if queued, finds nothing to do and stops.
 */
void gpuvirt_display_reset(struct gpuvirt_vgpu *vgpu)
{
	unsigned int i;

	lockdep_assert_held(&vgpu->lock);
	memset(&to_disp(vgpu)->st, 0, sizeof(to_disp(vgpu)->st));
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++)
		gpuvirt_display_publish(to_disp(vgpu), i);
	gpuvirt_display_zap(vgpu);
}

/**
 * gpuvirt_display_stop() - wait for the vblank work; the device is closing
 * @vgpu: the vGPU; its lock is not held
 */
void gpuvirt_display_stop(struct gpuvirt_vgpu *vgpu)
{
	cancel_delayed_work_sync(&to_disp(vgpu)->vblank_work);
}

/**
 * gpuvirt_display_hold() - no vblank interrupt while the device is stopped
 * @vgpu: the vGPU; its lock is held and mig_stopped was just set
 *
 * A vblank work already running waits for the lock, then sees mig_stopped
 * and does nothing; one not yet started does not start.
 */
void gpuvirt_display_hold(struct gpuvirt_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);
	cancel_delayed_work(&to_disp(vgpu)->vblank_work);
}

/**
 * gpuvirt_display_run() - the device runs again: vblanks resume
 * @vgpu: the vGPU; its lock is held and mig_stopped was just cleared
 */
void gpuvirt_display_run(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_display *d = to_disp(vgpu);

	lockdep_assert_held(&vgpu->lock);
	if (gpuvirt_display_wants_irq(d))
		mod_delayed_work(gpuvirt_system_wq, &d->vblank_work,
				 gpuvirt_display_period(d));
}

/* Why @m cannot be scanned out by head @head, or DERR_NONE. */
static u32 gpuvirt_display_check(struct gpuvirt_vgpu *vgpu, unsigned int head,
				 const struct gpuvirt_display_mode *m)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	u64 size;
	u32 line;

	if (head >= d->heads)
		return GPUVIRT_VGPU_DERR_HEAD;
	if (!m->width || !m->height || m->width > d->max_width ||
	    m->height > d->max_height)
		return GPUVIRT_VGPU_DERR_MODE;
	if (m->format != GPUVIRT_VGPU_FMT_XRGB8888)
		return GPUVIRT_VGPU_DERR_FORMAT;
	if (check_mul_overflow(m->width, (u32)GPUVIRT_DISPLAY_BPP, &line) ||
	    m->stride < line || m->stride > GPUVIRT_VGPU_STRIDE_MAX ||
	    m->stride % GPUVIRT_DISPLAY_BPP)
		return GPUVIRT_VGPU_DERR_STRIDE;
	if (!IS_ALIGNED(m->base, GPUVIRT_VGPU_SCANOUT_ALIGN))
		return GPUVIRT_VGPU_DERR_ALIGN;
	/* at most STRIDE_MAX times a u32: no overflow */
	size = (u64)m->stride * m->height;
	if (!gpuvirt_slice_contains(vgpu->vram_size, m->base, size))
		return GPUVIRT_VGPU_DERR_RANGE;
	return GPUVIRT_VGPU_DERR_NONE;
}

/**
 * gpuvirt_display_summary() - the heads that are on and their modes
 * @vgpu: the vGPU; any lock, or none, may be held
 * @out: filled in: @out->on, and the mode of each head that is on (a
 *	vGPU dump reads this for every vGPU, most with no head on)
 */
void gpuvirt_display_summary(struct gpuvirt_vgpu *vgpu,
			     struct gpuvirt_display_summary *out)
{
	const struct gpuvirt_display_summary *s = &to_disp(vgpu)->summary;
	unsigned int i;

	out->on = READ_ONCE(s->on);
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		if (!(out->on & BIT(i)))
			continue;
		out->mode[i].base = 0;
		out->mode[i].width = READ_ONCE(s->mode[i].width);
		out->mode[i].height = READ_ONCE(s->mode[i].height);
		out->mode[i].stride = READ_ONCE(s->mode[i].stride);
		out->mode[i].format = READ_ONCE(s->mode[i].format);
	}
}

/* HEAD_CONTROL: commit the staged mode, or turn the head off. */
static void gpuvirt_display_commit_head(struct gpuvirt_vgpu *vgpu,
					unsigned int head, u32 val)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	struct gpuvirt_display_head *h = &d->st.heads[head];
	bool was_on = h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE;
	u32 err = GPUVIRT_VGPU_DERR_NONE;

	val &= GPUVIRT_VGPU_HEAD_CTRL_ENABLE | GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ;
	if (val & GPUVIRT_VGPU_HEAD_CTRL_ENABLE)
		err = gpuvirt_display_check(vgpu, head, &h->staged);
	gpuvirt_display_settle(vgpu, h);
	h->error = err;
	h->flip_pending = 0;	/* a newer commit replaces a waiting flip */
	if (err || !(val & GPUVIRT_VGPU_HEAD_CTRL_ENABLE)) {
		/* the counter stops while the head is off, and goes on later */
		h->vblank_base = gpuvirt_display_vblanks(d, h);
		h->control = err ? 0 : val;
		memset(&h->active, 0, sizeof(h->active));
		return;
	}
	h->control = val;
	h->commits++;
	if (!was_on) {
		h->vblank_epoch_ns = ktime_get_ns();
		h->active = h->staged;
		h->flips++;
	} else if (d->frl_off || !d->frl) {
		h->active = h->staged;	/* the limiter is off: at once */
		h->flips++;
	} else {
		/* a flip: shown from the next vblank on */
		h->pending = h->staged;
		h->flip_pending = 1;
		h->flip_due_ns = gpuvirt_display_next_vblank(d, h);
	}
	if (gpuvirt_display_wants_irq(d))
		schedule_delayed_work(&d->vblank_work,
				      gpuvirt_display_period(d));
}

static void gpuvirt_display_commit(struct gpuvirt_vgpu *vgpu,
				   unsigned int head, u32 val)
{
	gpuvirt_display_commit_head(vgpu, head, val);
	gpuvirt_display_publish(to_disp(vgpu), head);
	if (!head)
		gpuvirt_display_zap(vgpu);	/* the plane may have moved */
}

/* Migration ------------------------------------------------------------- */

static void gpuvirt_display_mode_save(struct gpuvirt_display_saved_mode *out,
				      const struct gpuvirt_display_mode *m)
{
	out->base = cpu_to_le64(m->base);
	out->width = cpu_to_le32(m->width);
	out->height = cpu_to_le32(m->height);
	out->stride = cpu_to_le32(m->stride);
	out->format = cpu_to_le32(m->format);
}

static void gpuvirt_display_mode_load(struct gpuvirt_display_mode *m,
				      const struct gpuvirt_display_saved_mode *in)
{
	m->base = le64_to_cpu(in->base);
	m->width = le32_to_cpu(in->width);
	m->height = le32_to_cpu(in->height);
	m->stride = le32_to_cpu(in->stride);
	m->format = le32_to_cpu(in->format);
}

/**
 * gpuvirt_display_save() - the heads, for a migration stream
 * @vgpu: the vGPU; its lock is held
 * @sv: filled in
 *
 * A flip whose vblank has passed is shown first; the vblank counter is
 * saved as a count, since the destination's clock is another.
 */
void gpuvirt_display_save(struct gpuvirt_vgpu *vgpu,
			  struct gpuvirt_display_saved *sv)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	unsigned int i;

	lockdep_assert_held(&vgpu->lock);
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		struct gpuvirt_display_head *h = &d->st.heads[i];
		struct gpuvirt_display_saved_head *o = &sv->heads[i];

		gpuvirt_display_settle(vgpu, h);
		gpuvirt_display_mode_save(&o->staged, &h->staged);
		gpuvirt_display_mode_save(&o->active, &h->active);
		gpuvirt_display_mode_save(&o->pending, &h->pending);
		o->control = cpu_to_le32(h->control);
		o->error = cpu_to_le32(h->error);
		o->vblanks = cpu_to_le32(gpuvirt_display_vblanks(d, h));
		o->flip_pending = cpu_to_le32(h->flip_pending);
		o->flips = cpu_to_le32(h->flips);
		o->reserved = 0;
		o->commits = cpu_to_le64(h->commits);
	}
}

static bool gpuvirt_display_mode_zero(const struct gpuvirt_display_mode *m)
{
	return !m->base && !m->width && !m->height && !m->stride && !m->format;
}

/**
 * gpuvirt_display_load_validate() - check the heads of a stream, all of them
 * @vgpu: the destination vGPU
 * @sv: the heads of a stream: untrusted
 * @st: filled in with the state to commit, when they pass
 *
 * The one check of the display's part of a stream, before anything is
 * committed. Each field is checked whether the head is on or not: a head
 * that is on must be one the type offers, and the mode it shows (and a
 * waiting flip's) must pass the checks a commit passes here, inside this
 * vGPU's slice; a head that is off shows nothing, so a stream that gives
 * it a mode is refused. A waiting flip's mode on a head that is off is
 * dropped (the guest cannot see it), and so is everything derived: the
 * clock epochs, the flip deadline and the netlink summary are recomputed
 * by gpuvirt_display_load_commit().
 *
 * Return: NULL, or why not.
 */
const char *gpuvirt_display_load_validate(struct gpuvirt_vgpu *vgpu,
					  const struct gpuvirt_display_saved *sv,
					  struct gpuvirt_display_state *st)
{
	const u32 ctrl = GPUVIRT_VGPU_HEAD_CTRL_ENABLE |
			 GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		const struct gpuvirt_display_saved_head *o = &sv->heads[i];
		struct gpuvirt_display_head *h = &st->heads[i];

		h->control = le32_to_cpu(o->control);
		h->error = le32_to_cpu(o->error);
		h->flip_pending = le32_to_cpu(o->flip_pending);
		if (h->control & ~ctrl || h->flip_pending > 1 || o->reserved ||
		    h->error > GPUVIRT_VGPU_DERR_ALIGN)
			return "display head register out of range";
		gpuvirt_display_mode_load(&h->staged, &o->staged);
		gpuvirt_display_mode_load(&h->active, &o->active);
		gpuvirt_display_mode_load(&h->pending, &o->pending);
		h->vblank_base = le32_to_cpu(o->vblanks);
		h->flips = le32_to_cpu(o->flips);
		h->commits = le64_to_cpu(o->commits);
		if (!(h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE)) {
			if (h->flip_pending)
				return "display flip on a head that is off";
			if (!gpuvirt_display_mode_zero(&h->active))
				return "display head that is off with a scanout";
			memset(&h->pending, 0, sizeof(h->pending));
			continue;
		}
		if (gpuvirt_display_check(vgpu, i, &h->active))
			return "display mode the vGPU cannot scan out";
		if (!h->flip_pending)
			memset(&h->pending, 0, sizeof(h->pending));
		else if (gpuvirt_display_check(vgpu, i, &h->pending))
			return "display flip the vGPU cannot scan out";
	}
	return NULL;
}

/**
 * gpuvirt_display_load_commit() - take the heads that passed validation
 * @vgpu: the vGPU; its lock is held and the device is stopped
 * @st: from gpuvirt_display_load_validate()
 *
 * The vblank counters go on from the saved counts at this vGPU's clock; a
 * waiting flip shows from the next vblank. Mappings of the display region
 * fault in again from the new plane. No vblank interrupt comes before the
 * device runs (gpuvirt_display_run()).
 */
void gpuvirt_display_load_commit(struct gpuvirt_vgpu *vgpu,
				 const struct gpuvirt_display_state *st)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	u64 now = ktime_get_ns();
	unsigned int i;

	lockdep_assert_held(&vgpu->lock);
	d->st = *st;
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		struct gpuvirt_display_head *h = &d->st.heads[i];

		h->vblank_epoch_ns = now;
		if (h->flip_pending)
			h->flip_due_ns = gpuvirt_display_next_vblank(d, h);
		gpuvirt_display_publish(d, i);
	}
	gpuvirt_display_zap(vgpu);
}

/* The head and register a BAR0 offset names, false if not a head's. */
static bool gpuvirt_display_head_reg(unsigned int reg, unsigned int *head,
				     unsigned int *r)
{
	if (reg < GPUVIRT_VGPU_REG_HEAD(0) ||
	    reg >= GPUVIRT_VGPU_REG_HEAD(GPUVIRT_VGPU_HEADS_MAX))
		return false;
	*head = (reg - GPUVIRT_VGPU_REG_HEAD(0)) / 0x40;
	*r = (reg - GPUVIRT_VGPU_REG_HEAD(0)) % 0x40;
	return true;
}

/**
 * gpuvirt_display_reg_read() - read a display register
 * @vgpu: the vGPU; its lock is held
 * @reg: BAR0 offset, 4-byte aligned
 * @val: the value, when the offset is a display register
 *
 * Return: whether @reg is a display register.
 */
bool gpuvirt_display_reg_read(struct gpuvirt_vgpu *vgpu, unsigned int reg,
			      u32 *val)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	struct gpuvirt_display_head *h;
	unsigned int head, r;

	lockdep_assert_held(&vgpu->lock);
	switch (reg) {
	case GPUVIRT_VGPU_REG_DISP_HEADS:
		*val = d->heads;
		return true;
	case GPUVIRT_VGPU_REG_DISP_MAX_WIDTH:
		*val = d->max_width;
		return true;
	case GPUVIRT_VGPU_REG_DISP_MAX_HEIGHT:
		*val = d->max_height;
		return true;
	case GPUVIRT_VGPU_REG_DISP_FRL:
		*val = d->frl;
		return true;
	case GPUVIRT_VGPU_REG_DISP_STATUS:
		*val = d->frl_off ? 0 : GPUVIRT_VGPU_DISP_FRL_ON;
		return true;
	}
	if (!gpuvirt_display_head_reg(reg, &head, &r))
		return false;
	h = &d->st.heads[head];
	gpuvirt_display_settle(vgpu, h);
	switch (r) {
	case GPUVIRT_VGPU_HEAD_CONTROL:
		*val = h->control;
		break;
	case GPUVIRT_VGPU_HEAD_BASE_LO:
		*val = lower_32_bits(h->staged.base);
		break;
	case GPUVIRT_VGPU_HEAD_BASE_HI:
		*val = upper_32_bits(h->staged.base);
		break;
	case GPUVIRT_VGPU_HEAD_WIDTH:
		*val = h->staged.width;
		break;
	case GPUVIRT_VGPU_HEAD_HEIGHT:
		*val = h->staged.height;
		break;
	case GPUVIRT_VGPU_HEAD_STRIDE:
		*val = h->staged.stride;
		break;
	case GPUVIRT_VGPU_HEAD_FORMAT:
		*val = h->staged.format;
		break;
	case GPUVIRT_VGPU_HEAD_ERROR:
		*val = h->error;
		break;
	case GPUVIRT_VGPU_HEAD_VBLANK:
		*val = gpuvirt_display_vblanks(d, h);
		break;
	case GPUVIRT_VGPU_HEAD_FLIPS:
		*val = h->flips;
		break;
	default:
		*val = 0;	/* reserved */
	}
	return true;
}

/**
 * gpuvirt_display_reg_write() - write a display register
 * @vgpu: the vGPU; its lock is held
 * @reg: BAR0 offset, 4-byte aligned
 * @val: the value
 *
 * Return: whether @reg is a display register.
 */
bool gpuvirt_display_reg_write(struct gpuvirt_vgpu *vgpu, unsigned int reg,
			       u32 val)
{
	struct gpuvirt_display_mode *m;
	unsigned int head, r;

	lockdep_assert_held(&vgpu->lock);
	if (!gpuvirt_display_head_reg(reg, &head, &r))
		return false;
	m = &to_disp(vgpu)->st.heads[head].staged;
	switch (r) {
	case GPUVIRT_VGPU_HEAD_CONTROL:
		gpuvirt_display_commit(vgpu, head, val);
		break;
	case GPUVIRT_VGPU_HEAD_BASE_LO:
		m->base = (m->base & ~0xffffffffULL) | val;
		break;
	case GPUVIRT_VGPU_HEAD_BASE_HI:
		m->base = (m->base & 0xffffffffULL) | (u64)val << 32;
		break;
	case GPUVIRT_VGPU_HEAD_WIDTH:
		m->width = val;
		break;
	case GPUVIRT_VGPU_HEAD_HEIGHT:
		m->height = val;
		break;
	case GPUVIRT_VGPU_HEAD_STRIDE:
		m->stride = val;
		break;
	case GPUVIRT_VGPU_HEAD_FORMAT:
		m->format = val;
		break;
	default:
		break;	/* read-only or reserved */
	}
	return true;
}

/*
 * Head 0's scanout, zero-sized while it is off, and whatever its state
 * says, nothing that is not inside the slice; under the vGPU's lock.
 */
static void gpuvirt_display_primary(struct gpuvirt_vgpu *vgpu, u64 *base,
				    u64 *size)
{
	struct gpuvirt_display_head *h = &to_disp(vgpu)->st.heads[0];

	gpuvirt_display_settle(vgpu, h);
	*base = h->active.base;
	*size = (u64)h->active.stride * h->active.height;
	if (!(h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE) ||
	    !IS_ALIGNED(*base, PAGE_SIZE) ||
	    !gpuvirt_slice_contains(vgpu->vram_size, *base, *size))
		*size = 0;
}

/**
 * gpuvirt_display_query_plane() - VFIO_DEVICE_QUERY_GFX_PLANE
 * @vgpu: the vGPU
 * @arg: the user's struct vfio_device_gfx_plane_info
 *
 * Region planes only; the primary plane is head 0, and there is no cursor
 * plane. While head 0 is off the plane has no format and size 0, which
 * tells a VMM that there is nothing to show.
 *
 * Return: 0 or -errno.
 */
int gpuvirt_display_query_plane(struct gpuvirt_vgpu *vgpu, unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_device_gfx_plane_info,
					  region_index);
	struct vfio_device_gfx_plane_info plane;
	struct gpuvirt_display_head *h = &to_disp(vgpu)->st.heads[0];
	u32 flags;

	if (copy_from_user(&plane, (void __user *)arg, minsz))
		return -EFAULT;
	if (plane.argsz < minsz)
		return -EINVAL;
	flags = plane.flags;
	if (flags & VFIO_GFX_PLANE_TYPE_PROBE)
		return flags == (VFIO_GFX_PLANE_TYPE_PROBE |
				 VFIO_GFX_PLANE_TYPE_REGION) ? 0 : -EINVAL;
	/* no cursor plane; QEMU asks with drm_plane_type 0 for the primary */
	if (flags != VFIO_GFX_PLANE_TYPE_REGION ||
	    plane.drm_plane_type == 2 /* DRM_PLANE_TYPE_CURSOR */)
		return -EINVAL;

	mutex_lock(&vgpu->lock);
	gpuvirt_display_settle(vgpu, h);
	plane.drm_format = h->active.format;
	plane.drm_format_mod = 0;	/* DRM_FORMAT_MOD_LINEAR */
	plane.width = h->active.width;
	plane.height = h->active.height;
	plane.stride = h->active.stride;
	plane.size = (u32)((u64)h->active.stride * h->active.height);
	mutex_unlock(&vgpu->lock);
	plane.x_pos = 0;
	plane.y_pos = 0;
	plane.x_hot = 0;
	plane.y_hot = 0;
	plane.region_index = GPUVIRT_VGPU_DISPLAY_REGION;
	return copy_to_user((void __user *)arg, &plane, minsz) ? -EFAULT : 0;
}

/**
 * gpuvirt_display_region_info() - VFIO_DEVICE_GET_REGION_INFO of the
 * display region
 * @vgpu: the vGPU
 * @info: index and argsz from the user; size and flags are filled in
 * @caps: the region's capability chain, which gets the type capability
 *
 * The region is as large as the slice, the most a plane can take, so that
 * it never has to change size; it is read-only and carries a type
 * capability: VFIO_REGION_TYPE_PCI_VENDOR_TYPE | the vendor ID, subtype
 * GPUVIRT_VGPU_DISPLAY_REGION_SUBTYPE.
 *
 * Return: 0 or -errno.
 */
int gpuvirt_display_region_info(struct gpuvirt_vgpu *vgpu,
				struct vfio_region_info *info,
				struct vfio_info_cap *caps)
{
	struct vfio_region_info_cap_type cap = {
		.header.id = VFIO_REGION_INFO_CAP_TYPE,
		.header.version = 1,
		.type = VFIO_REGION_TYPE_PCI_VENDOR_TYPE |
			GPUVIRT_VGPU_PCI_VENDOR_ID,
		.subtype = GPUVIRT_VGPU_DISPLAY_REGION_SUBTYPE,
	};

	info->size = vgpu->vram_size;
	info->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_MMAP;
	return vfio_info_add_capability(caps, &cap.header, sizeof(cap));
}

/*
 * One piece of the display region, within one page of the slice, into
 * @buf: the slice at head 0's base plus @off, zeros past the plane or
 * while head 0 is off.
 */
static void gpuvirt_display_xfer(struct gpuvirt_vgpu *vgpu, u64 off,
				 void *buf, size_t n)
{
	struct page *page = NULL;
	u64 base, size;
	size_t shown;
	void *p;

	down_read(&vgpu->memory_lock);
	mutex_lock(&vgpu->lock);
	gpuvirt_display_primary(vgpu, &base, &size);
	mutex_unlock(&vgpu->lock);
	if (off < size)
		page = gpuvirt_vgpu_slice_page(vgpu, base + off, n, false);
	if (IS_ERR_OR_NULL(page)) {
		memset(buf, 0, n);	/* off, past the plane, or unbacked */
		goto out;
	}
	/* the plane's last line may end inside the page: zeros past it */
	shown = min_t(u64, n, size - off);
	p = kmap_local_page(page);
	memcpy(buf, p + offset_in_page(base + off), shown);
	kunmap_local(p);
	put_page(page);
	memset(buf + shown, 0, n - shown);
out:
	up_read(&vgpu->memory_lock);
}

/**
 * gpuvirt_display_region_read() - read the display region
 * @vgpu: the vGPU
 * @off: offset in the region
 * @ubuf: the user's buffer
 * @count: bytes wanted
 *
 * Return: bytes read, or -errno if none.
 */
ssize_t gpuvirt_display_region_read(struct gpuvirt_vgpu *vgpu, u64 off,
				    char __user *ubuf, size_t count)
{
	size_t done = 0;
	void *bounce;
	int err = 0;

	if (off >= vgpu->vram_size)
		return -EINVAL;
	count = min_t(u64, count, vgpu->vram_size - off);
	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (done < count) {
		u64 o = off + done;
		/* base is page aligned: a piece within a page of the region
		 * is within a page of the slice
		 */
		size_t n = min_t(u64, count - done,
				 PAGE_SIZE - offset_in_page(o));

		gpuvirt_display_xfer(vgpu, o, bounce, n);
		if (copy_to_user(ubuf + done, bounce, n)) {
			err = -EFAULT;
			break;
		}
		done += n;
		cond_resched();
	}
	kfree(bounce);
	return done ? done : err;
}

/*
 * Mappings of the display region: every page of them is zapped when head
 * 0's plane moves, changes size or goes off, and faults in again from the
 * new plane. Under the vGPU's lock, which the fault handler takes too, so
 * no fault can insert a page of the old plane after the zap.
 */
static void gpuvirt_display_zap(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_display *d = to_disp(vgpu);

	lockdep_assert_held(&vgpu->lock);
	if (d->mapping)
		unmap_mapping_pages(d->mapping,
				    vgpu->bar2_pgoff + GPUVIRT_DISPLAY_PGOFF,
				    DIV_ROUND_UP(vgpu->vram_size, PAGE_SIZE),
				    false);
}

/*
 * A page of the display region: the slice's page at head 0's base while it
 * lies in the plane (backed if it was not, as the guest's own drawing
 * would), else the blank page, so that a VMM racing a mode change reads
 * black rather than dying of SIGBUS.
 */
static vm_fault_t gpuvirt_display_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gpuvirt_vgpu *vgpu = vma->vm_private_data;
	struct gpuvirt_display *d = to_disp(vgpu);
	unsigned long first = vgpu->bar2_pgoff + GPUVIRT_DISPLAY_PGOFF;
	u64 off = (u64)(vmf->pgoff - first) << PAGE_SHIFT, base, size;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct page *page = NULL;
	int err;

	if (vmf->pgoff < first || off >= vgpu->vram_size)
		return VM_FAULT_SIGBUS;
	down_read(&vgpu->memory_lock);
	mutex_lock(&vgpu->lock);
	gpuvirt_display_primary(vgpu, &base, &size);
	if (off < size) {
		page = gpuvirt_vgpu_slice_page(vgpu, base + off, PAGE_SIZE,
					       true);
		if (IS_ERR(page))
			page = NULL;	/* out of backing: show blank */
	}
	if (!page) {
		page = d->blank;
		get_page(page);
	}
	err = vm_insert_page(vma, vmf->address & PAGE_MASK, page);
	put_page(page);
	if (!err || err == -EBUSY)
		ret = VM_FAULT_NOPAGE;
	else if (err == -ENOMEM)
		ret = VM_FAULT_OOM;
	mutex_unlock(&vgpu->lock);
	up_read(&vgpu->memory_lock);
	return ret;
}

static const struct vm_operations_struct gpuvirt_display_vm_ops = {
	.fault = gpuvirt_display_vm_fault,
};

/**
 * gpuvirt_display_mmap() - map the display region, read-only
 * @vgpu: the vGPU
 * @vma: the mapping
 * @start: its offset in the region
 *
 * Return: 0 or -errno.
 */
int gpuvirt_display_mmap(struct gpuvirt_vgpu *vgpu, struct vm_area_struct *vma,
			 u64 start)
{
	struct gpuvirt_display *d = to_disp(vgpu);
	struct address_space *mapping = vma->vm_file->f_mapping;
	u64 len = vma->vm_end - vma->vm_start;
	struct page *blank;
	int err = 0;

	if (start >= vgpu->vram_size || len > vgpu->vram_size - start ||
	    !(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_WRITE))
		return -EINVAL;
	/* BAR2's pages below, the vGPU's next range above: never shared */
	if (vgpu->bar2_size >> PAGE_SHIFT > GPUVIRT_DISPLAY_PGOFF ||
	    DIV_ROUND_UP(vgpu->vram_size, PAGE_SIZE) > GPUVIRT_DISPLAY_PGOFF)
		return -EINVAL;
	blank = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!blank)
		return -ENOMEM;
	mutex_lock(&vgpu->lock);
	if (!d->blank) {
		d->blank = blank;
		blank = NULL;
	}
	if (!d->mapping)
		d->mapping = mapping;
	else if (d->mapping != mapping)
		err = -EINVAL;	/* could not be zapped: refuse */
	mutex_unlock(&vgpu->lock);
	if (blank)
		__free_page(blank);
	if (err)
		return err;

	vma->vm_pgoff = vgpu->bar2_pgoff + GPUVIRT_DISPLAY_PGOFF +
			(start >> PAGE_SHIFT);
	/* read-only for good: no mprotect() to writable */
	gpuvirt_vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND);
	gpuvirt_vm_flags_clear(vma, VM_MAYWRITE);
	vma->vm_ops = &gpuvirt_display_vm_ops;
	vma->vm_private_data = vgpu;
	return 0;
}

/**
 * gpuvirt_display_release() - free what the display holds; no mapping of
 * it is left
 * @vgpu: the vGPU, being released
 */
void gpuvirt_display_release(struct gpuvirt_vgpu *vgpu)
{
	if (to_disp(vgpu)->blank)
		__free_page(to_disp(vgpu)->blank);
}

static int gpuvirt_display_debugfs_show(struct seq_file *s, void *unused)
{
	struct gpuvirt_vgpu *vgpu = s->private;
	struct gpuvirt_display *d = to_disp(vgpu);
	unsigned int i;

	mutex_lock(&vgpu->lock);
	seq_printf(s, "heads: %u\nmax_resolution: %ux%u\nfrl: %u\nframe_rate_limiter: %u\n",
		   d->heads, d->max_width, d->max_height, d->frl, !d->frl_off);
	for (i = 0; i < GPUVIRT_VGPU_HEADS_MAX; i++) {
		struct gpuvirt_display_head *h = &d->st.heads[i];

		gpuvirt_display_settle(vgpu, h);
		seq_printf(s,
			   "head%u: enabled=%u vblank_irq=%u base=0x%llx width=%u height=%u stride=%u format=0x%08x error=%u vblanks=%u commits=%llu flips=%u flip_pending=%u\n",
			   i, !!(h->control & GPUVIRT_VGPU_HEAD_CTRL_ENABLE),
			   !!(h->control & GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ),
			   h->active.base, h->active.width, h->active.height,
			   h->active.stride, h->active.format, h->error,
			   gpuvirt_display_vblanks(d, h), h->commits, h->flips,
			   h->flip_pending);
	}
	mutex_unlock(&vgpu->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_display_debugfs);

/**
 * gpuvirt_display_debugfs_add() - vgpus/<uuid>/display
 * @vgpu: the vGPU, whose debugfs directory exists
 */
void gpuvirt_display_debugfs_add(struct gpuvirt_vgpu *vgpu)
{
	debugfs_create_file("display", 0400, vgpu->debugfs, vgpu,
			    &gpuvirt_display_debugfs_fops);
}

/**
 * gpuvirt_display_frl() - is the vGPU's frame rate limiter on?
 * @vgpu: the vGPU
 *
 * Return: true when flips wait for the next vblank (the default).
 */
bool gpuvirt_display_frl(struct gpuvirt_vgpu *vgpu)
{
	return !READ_ONCE(to_disp(vgpu)->frl_off);
}

/**
 * gpuvirt_display_set_frl() - turn the frame rate limiter on or off
 * @vgpu: the vGPU
 * @on: flips wait for the next vblank
 *
 * Takes effect with the next flip; a flip already waiting keeps its
 * vblank. The setting survives resets and reopening, as configuration.
 */
void gpuvirt_display_set_frl(struct gpuvirt_vgpu *vgpu, bool on)
{
	mutex_lock(&vgpu->lock);
	WRITE_ONCE(to_disp(vgpu)->frl_off, !on);
	mutex_unlock(&vgpu->lock);
}
