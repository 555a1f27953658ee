// SPDX-License-Identifier: GPL-2.0-only
/*
 * VFIO migration v2 for vGPUs: the state machine of linux/vfio.h, walked one
 * arc at a time with vfio_mig_get_next_state(), and the data files.
 *
 * States and what the device does in them:
 *   RUNNING, RUNNING_P2P            runs (it does no peer-to-peer DMA, so
 *                                   P2P changes nothing)
 *   PRE_COPY, PRE_COPY_P2P (v6.2+)  runs; a save file sends VRAM while
 *                                   writes to it are tracked and re-sent
 *   STOP                            its engine work is stopped at a
 *                                   packet or chunk boundary
 *   STOP_COPY                       stopped; the save file sends the rest
 *   RESUMING                        stopped; a resume file takes a stream
 *
 * The stream (migration.h): a header naming the format version, the vGPU
 * type and its framebuffer size, then records: PAGE and ZERO records for
 * the VRAM slice, page by page (never-written pages are not sent, and a
 * page written again during pre-copy is sent again; the last copy wins),
 * one STATE record with the device state, and an END record carrying the
 * CRC32 of everything before it. A resume file checks the header as soon
 * as it has it, each record as it comes, and the CRC and completeness on
 * RESUMING -> STOP; a stream it refuses is refused with -EINVAL and a
 * kernel log line saying why. The destination's slice is zeroed when it
 * enters RESUMING, so pages the stream does not carry read as zero.
 *
 * Write tracking during pre-copy: the device reports every VRAM write by
 * its engine and by BAR accesses through gpuvirt_migration_dirty(); CPU
 * mappings of VRAM are revoked when tracking starts and at each collection
 * (ops->cpu_revoke), so that the next store through one faults, and the
 * fault reports it.
 *
 * DMA logging (VFIO_DEVICE_FEATURE_DMA_LOGGING_*): a vGPU reads and writes
 * its own VRAM slice and never guest memory, so it has no DMA to log, and
 * every report of its log is clean. The log is there for the VMMs that
 * migrate a VFIO device only if the device or the IOMMU tracks its DMA
 * (QEMU from 8.1, unless told enable-migration=on, and so libvirt): with it
 * they migrate a vGPU on the type1 container and under iommufd alike. A
 * report is checked as a real log's would be: the log must be started, and
 * the range reported must lie within the ranges it was started for. The
 * device offers the log only where the VFIO core can report it (compat.h).
 *
 * Copies: in STOP_COPY a page goes from VRAM straight to the reader's
 * buffer, and on resume from the writer's buffer straight into the
 * destination's VRAM page, once the record naming it has been checked
 * against the destination's slice. The stopped device does not write its
 * VRAM, so the CRC taken of a page before it is read out covers what the
 * reader gets; a VMM that writes the slice meanwhile (BAR accesses still
 * work) only gets a stream its destination refuses. During pre-copy the
 * device runs and may write a page under the copy, so a page is copied
 * into the file's buffer first and the CRC taken of that copy.
 *
 * Locking, outermost first: the state mutex; a data file's lock (held
 * across user copies, so nothing that a fault takes may be held while it
 * is taken); the device's own locks (ops); the dirty and stats spinlocks.
 * A data file holds a reference to the VRAM page it is copying to or from
 * between calls, and drops it when it is disabled.
 * A data file reaches its device only under its lock and while it is not
 * disabled: every file is disabled, under its lock, when the state moves
 * on, on reset and when the device closes, which it does before it can be
 * removed. A file that outlives its device therefore never touches it.
 */
#include <linux/anon_inodes.h>
#include <linux/crc32.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/interval_tree.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gpuvirt.h"
#include "migration.h"
#include "netlink-gen-names.h"

#define GPUVIRT_MIGF_REC	sizeof(struct gpuvirt_migration_rec)
#define GPUVIRT_MIGF_PAGE_REC	(GPUVIRT_MIGF_REC + PAGE_SIZE)

enum gpuvirt_migf_phase {
	GPUVIRT_MIGF_PRECOPY,
	GPUVIRT_MIGF_STOPCOPY,
	GPUVIRT_MIGF_RESUMING,
};

/* What a resume file is receiving. */
enum gpuvirt_migf_part {
	GPUVIRT_MIGF_HDR,
	GPUVIRT_MIGF_RECORD,
	GPUVIRT_MIGF_PAYLOAD,
};

/**
 * struct gpuvirt_migf - a migration data file
 * @filp: the file
 * @m: the device; used only under @lock while not @disabled
 * @lock: protects everything below. Taken inside the state mutex and
 *	before the device's locks; held across user copies.
 * @disabled: the state moved on, or the device was reset or closed: every
 *	call fails with -ENODEV
 * @phase: enum gpuvirt_migf_phase
 * @npages: pages in the slice
 * @pending: save: pages still to send
 * @cursor: save: where the search of @pending goes on
 * @initial_left: save: pages of the first pass not sent yet
 * @dirty_left: save: pages collected as written and not sent yet
 * @hdr_done: the header was sent (save) or received and accepted (resume)
 * @state: the device state: snapshot at STOP_COPY, or received
 * @state_done: the STATE record was sent, or received
 * @end_done: the END record was sent, or received and checked
 * @eof_seen: save: the end of the stream was read once
 * @crc: CRC32 of the stream up to what @buf and @page hold (resume: up to
 *	what was received)
 * @buf: save: the record being read out (or its header alone, when its
 *	payload comes from @page); resume: the part being received, but for
 *	a page's payload, which goes to @page
 * @buf_len: bytes in @buf; resume: bytes of the part received
 * @buf_pos: save: bytes of @buf already read
 * @buf_initial: save: @buf belongs to the first pass
 * @page: the VRAM page of the PAGE record in progress, with a reference:
 *	save (STOP_COPY): the payload to read out after @buf; resume: where
 *	the payload goes, in the destination's slice. NULL when none.
 * @page_pos: save: bytes of @page already read
 * @part: resume: enum gpuvirt_migf_part
 * @need: resume: bytes the part has
 * @rec_tag: resume: the tag of the record whose payload is coming
 * @rec_arg: resume: its argument
 * @broken: resume: the stream was refused; nothing more is taken
 * @total: stream bytes through the file
 * @t0: save: when STOP_COPY was entered (local_clock())
 */
struct gpuvirt_migf {
	struct file *filp;
	struct gpuvirt_migration *m;
	struct mutex lock;	/* see above */
	bool disabled;
	enum gpuvirt_migf_phase phase;
	unsigned long npages;
	unsigned long *pending;
	unsigned long cursor;
	unsigned long initial_left;
	unsigned long dirty_left;
	bool hdr_done;
	void *state;
	bool state_done;
	bool end_done;
	bool eof_seen;
	u32 crc;
	u8 *buf;
	size_t buf_len;
	size_t buf_pos;
	bool buf_initial;
	struct page *page;
	size_t page_pos;
	enum gpuvirt_migf_part part;
	size_t need;
	u32 rec_tag;
	u64 rec_arg;
	bool broken;
	u64 total;
	u64 t0;
};

/* The spec's names (Documentation/netlink/specs/gpuvirt.yaml), generated */
static const char * const gpuvirt_migration_state_names[] =
	GPUVIRT_MIGRATION_STATE_NAMES;

const char *gpuvirt_migration_state_name(enum vfio_device_mig_state state)
{
	/* the spec's numbers are the uAPI's */
	BUILD_BUG_ON((int)GPUVIRT_MIGRATION_STATE_RUNNING_P2P !=
		     (int)VFIO_DEVICE_STATE_RUNNING_P2P);
	if ((unsigned int)state < ARRAY_SIZE(gpuvirt_migration_state_names))
		return gpuvirt_migration_state_names[state];
	return "unknown";
}

/* Change the state; the state mutex is held. */
static void gpuvirt_migration_set(struct gpuvirt_migration *m,
				  enum vfio_device_mig_state state)
{
	lockdep_assert_held(&m->state_mutex);
	m->state = state;
	spin_lock(&m->stats_lock);
	m->stats.state = state;
	spin_unlock(&m->stats_lock);
}

unsigned int gpuvirt_migration_flags(void)
{
	unsigned int flags = VFIO_MIGRATION_STOP_COPY | VFIO_MIGRATION_P2P;

#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
	flags |= VFIO_MIGRATION_PRE_COPY;
#endif
	return flags;
}

/* Is the device's engine work stopped in @state? */
static bool gpuvirt_migration_stopped(enum vfio_device_mig_state state)
{
	return state == VFIO_DEVICE_STATE_STOP ||
	       state == VFIO_DEVICE_STATE_STOP_COPY ||
	       state == VFIO_DEVICE_STATE_RESUMING;
}

static void gpuvirt_migration_count(struct gpuvirt_migration *m, u64 *ctr,
				    u64 add)
{
	spin_lock(&m->stats_lock);
	*ctr += add;
	spin_unlock(&m->stats_lock);
}

/**
 * gpuvirt_migration_dirty() - the device wrote VRAM
 * @m: the device
 * @off: first byte written, in the slice
 * @len: bytes written
 *
 * Call after the write, from any context that may take a spinlock.
 */
void gpuvirt_migration_dirty(struct gpuvirt_migration *m, u64 off, u64 len)
{
	unsigned long first, last;

	if (!len || off >= m->vram_size)
		return;
	first = off >> PAGE_SHIFT;
	last = (min(off + len, m->vram_size) - 1) >> PAGE_SHIFT;
	spin_lock(&m->dirty_lock);
	if (m->dirty)
		bitmap_set(m->dirty, first, last - first + 1);
	spin_unlock(&m->dirty_lock);
}

/**
 * gpuvirt_migration_tracking() - are the device's writes being tracked?
 * @m: the device
 *
 * For a CPU fault on VRAM, which holds what ops->cpu_revoke() takes
 * against new mappings: tracking cannot start under it, and if it stops
 * meanwhile the fault merely maps less than it could have.
 *
 * Return: true while a pre-copy save file tracks the writes.
 */
bool gpuvirt_migration_tracking(struct gpuvirt_migration *m)
{
	return READ_ONCE(m->dirty);
}

static void gpuvirt_migration_track_stop(struct gpuvirt_migration *m)
{
	unsigned long *d;

	spin_lock(&m->dirty_lock);
	d = m->dirty;
	WRITE_ONCE(m->dirty, NULL);
	spin_unlock(&m->dirty_lock);
	kvfree(d);
}

/*
 * Does the backed page at @off read as zero? The backend backs VRAM in
 * blocks larger than a page, so a block's pages that were never written
 * are backed and zero: they need no record, as the destination's slice is
 * zeroed when it enters RESUMING.
 */
static bool gpuvirt_migration_page_zero(struct gpuvirt_migration *m, u64 off)
{
	struct page *page = m->gpu->ops->vram_page(m->gpu, off, false);
	bool zero;
	void *p;

	if (IS_ERR_OR_NULL(page))
		return !page;
	p = kmap_local_page(page);
	zero = !memchr_inv(p, 0, PAGE_SIZE);
	kunmap_local(p);
	put_page(page);
	return zero;
}

/*
 * Set in @map the pages of the slice that are backed and not zero; return
 * how many. The backend's vram_next walks only what is backed, so this
 * costs the pages written, not the slice. A page written after the scan is
 * caught by the dirty tracking, which is on before it runs.
 */
static unsigned long gpuvirt_migration_scan(struct gpuvirt_migration *m,
					    unsigned long *map)
{
	const struct gpuvirt_backend_ops *ops = m->gpu->ops;
	u64 end = m->vram_offset + m->vram_size, off = m->vram_offset;
	unsigned long n = 0;

	for (;;) {
		off = ops->vram_next(m->gpu, off, end);
		if (off >= end)
			break;
		if (!gpuvirt_migration_page_zero(m, off)) {
			if (map)
				__set_bit((off - m->vram_offset) >> PAGE_SHIFT,
					  map);
			n++;
		}
		off += PAGE_SIZE;
		if (!(off & ((1024 << PAGE_SHIFT) - 1)))
			cond_resched();
	}
	return n;
}

/* Data files. */

/* Drop the reference to the VRAM page in progress; the file's lock held. */
static void gpuvirt_migf_put_page(struct gpuvirt_migf *f)
{
	if (f->page) {
		put_page(f->page);
		f->page = NULL;
	}
}

static void gpuvirt_migf_disable(struct gpuvirt_migf *f)
{
	mutex_lock(&f->lock);
	f->disabled = true;
	f->m = NULL;
	gpuvirt_migf_put_page(f);
	mutex_unlock(&f->lock);
}

/* Disable both files and stop tracking; the state mutex is held. */
static void gpuvirt_migration_drop_files(struct gpuvirt_migration *m)
{
	lockdep_assert_held(&m->state_mutex);
	if (m->save) {
		gpuvirt_migf_disable(m->save);
		fput(m->save->filp);
		m->save = NULL;
	}
	if (m->resume) {
		gpuvirt_migf_disable(m->resume);
		fput(m->resume->filp);
		m->resume = NULL;
	}
	gpuvirt_migration_track_stop(m);
}

static int gpuvirt_migf_release(struct inode *inode, struct file *filp)
{
	struct gpuvirt_migf *f = filp->private_data;

	gpuvirt_migf_put_page(f);
	mutex_destroy(&f->lock);
	kvfree(f->pending);
	kvfree(f->state);
	kvfree(f->buf);
	kfree(f);
	return 0;
}

/*
 * Collect the pages written since the last collection into @pending.
 * Returns how many pages are pending then.
 */
static unsigned long gpuvirt_migf_collect(struct gpuvirt_migf *f)
{
	struct gpuvirt_migration *m = f->m;

	m->ops->cpu_revoke(m, true);
	spin_lock(&m->dirty_lock);
	if (m->dirty) {
		bitmap_or(f->pending, f->pending, m->dirty, f->npages);
		bitmap_zero(m->dirty, f->npages);
	}
	spin_unlock(&m->dirty_lock);
	m->ops->cpu_revoke(m, false);
	f->cursor = 0;
	f->dirty_left = bitmap_weight(f->pending, f->npages);
	return f->dirty_left;
}

/*
 * Put a record header in @buf; the caller appends a payload that goes
 * through @buf.
 */
static void gpuvirt_migf_rec(struct gpuvirt_migf *f, u32 tag, u32 len, u64 arg)
{
	struct gpuvirt_migration_rec *r = (void *)f->buf;

	r->tag = cpu_to_le32(tag);
	r->len = cpu_to_le32(len);
	r->arg = cpu_to_le64(arg);
	f->buf_len = GPUVIRT_MIGF_REC;
}

/*
 * A PAGE record, or a ZERO record for a page that is not backed. Stopped,
 * the page's bytes go to the reader from the page itself (@page); during
 * pre-copy, through @buf.
 */
static int gpuvirt_migf_page_rec(struct gpuvirt_migf *f, unsigned long pg)
{
	struct gpuvirt_migration *m = f->m;
	struct page *page;
	void *p;

	page = m->gpu->ops->vram_page(m->gpu, m->vram_offset +
				      ((u64)pg << PAGE_SHIFT), false);
	if (IS_ERR(page))
		return PTR_ERR(page);
	if (!page) {
		gpuvirt_migf_rec(f, GPUVIRT_MIGRATION_REC_ZERO, 0, pg);
		return 0;
	}
	gpuvirt_migf_rec(f, GPUVIRT_MIGRATION_REC_PAGE, PAGE_SIZE, pg);
	if (f->phase == GPUVIRT_MIGF_STOPCOPY) {
		f->page = page;
		f->page_pos = 0;
		return 0;
	}
	p = kmap_local_page(page);
	memcpy(f->buf + GPUVIRT_MIGF_REC, p, PAGE_SIZE);
	kunmap_local(p);
	put_page(page);
	f->buf_len += PAGE_SIZE;
	return 0;
}

/* Extend @crc over @len bytes of @page from @off. */
static u32 gpuvirt_migf_page_crc(u32 crc, struct page *page, size_t off,
				 size_t len)
{
	void *p = kmap_local_page(page);

	crc = crc32_le(crc, p + off, len);
	kunmap_local(p);
	return crc;
}

static void gpuvirt_migf_hdr(struct gpuvirt_migf *f)
{
	struct gpuvirt_migration_hdr *h = (void *)f->buf;
	struct gpuvirt_migration *m = f->m;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(GPUVIRT_MIGRATION_MAGIC);
	h->version = cpu_to_le16(GPUVIRT_MIGRATION_VERSION);
	h->hdr_size = cpu_to_le16(sizeof(*h));
	h->fb_size = cpu_to_le64(m->vram_size);
	h->page_size = cpu_to_le32(PAGE_SIZE);
	h->state_size = cpu_to_le32(m->ops->state_size);
	strscpy_pad(h->type, m->type, sizeof(h->type));
	f->buf_len = sizeof(*h);
}

/*
 * Put the next piece of the stream in @buf. Returns 1, 0 at the end of
 * the stream, -ENOMSG when pre-copy has nothing more for now, or an
 * errno.
 */
static int gpuvirt_migf_produce(struct gpuvirt_migf *f)
{
	unsigned long pg = f->npages;
	int err;

	f->buf_pos = 0;
	f->buf_len = 0;
	f->buf_initial = false;
	if (!f->hdr_done) {
		gpuvirt_migf_hdr(f);
		f->hdr_done = true;
		f->buf_initial = true;
		goto emit;
	}
	for (;;) {
		pg = find_next_bit(f->pending, f->npages, f->cursor);
		if (pg < f->npages || f->phase != GPUVIRT_MIGF_PRECOPY ||
		    !gpuvirt_migf_collect(f))
			break;
	}
	if (pg < f->npages) {
		err = gpuvirt_migf_page_rec(f, pg);
		if (err)
			return err;
		__clear_bit(pg, f->pending);
		f->cursor = pg + 1;
		if (f->initial_left) {
			f->initial_left--;
			f->buf_initial = true;
		} else if (f->dirty_left) {
			f->dirty_left--;
		}
		goto emit;
	}
	if (f->phase == GPUVIRT_MIGF_PRECOPY)
		return -ENOMSG;
	if (!f->state_done) {
		gpuvirt_migf_rec(f, GPUVIRT_MIGRATION_REC_STATE,
				 f->m->ops->state_size, 0);
		memcpy(f->buf + GPUVIRT_MIGF_REC, f->state,
		       f->m->ops->state_size);
		f->buf_len += f->m->ops->state_size;
		f->state_done = true;
		goto emit;
	}
	if (!f->end_done) {
		/* the CRC covers everything before the END record */
		gpuvirt_migf_rec(f, GPUVIRT_MIGRATION_REC_END, 0, f->crc);
		f->end_done = true;
		return 1;
	}
	return 0;

emit:
	f->crc = crc32_le(f->crc, f->buf, f->buf_len);
	if (f->page)
		f->crc = gpuvirt_migf_page_crc(f->crc, f->page, 0, PAGE_SIZE);
	return 1;
}

/* Save: bytes of the record in progress not read yet. */
static size_t gpuvirt_migf_unread(struct gpuvirt_migf *f)
{
	return f->buf_len - f->buf_pos + (f->page ? PAGE_SIZE - f->page_pos : 0);
}

/*
 * Save: copy up to @len bytes of what is left of the record in progress
 * to @ubuf. Returns the bytes copied, or -EFAULT with none taken.
 */
static ssize_t gpuvirt_migf_send(struct gpuvirt_migf *f, char __user *ubuf,
				 size_t len)
{
	unsigned long left;
	size_t n;
	void *p;

	if (f->buf_pos < f->buf_len) {
		n = min(len, f->buf_len - f->buf_pos);
		if (copy_to_user(ubuf, f->buf + f->buf_pos, n))
			return -EFAULT;
		f->buf_pos += n;
		return n;
	}
	n = min(len, PAGE_SIZE - f->page_pos);
	p = kmap_local_page(f->page);
	left = copy_to_user(ubuf, p + f->page_pos, n);
	kunmap_local(p);
	if (left)
		return -EFAULT;
	f->page_pos += n;
	if (f->page_pos == PAGE_SIZE)
		gpuvirt_migf_put_page(f);
	return n;
}

/* The end of a save stream was read: count the save. */
static void gpuvirt_migf_saved(struct gpuvirt_migf *f)
{
	struct gpuvirt_migration *m = f->m;

	f->eof_seen = true;
	spin_lock(&m->stats_lock);
	m->stats.saves++;
	m->stats.last_stop_copy_ns = local_clock() - f->t0;
	spin_unlock(&m->stats_lock);
}

static ssize_t gpuvirt_migf_read(struct file *filp, char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct gpuvirt_migf *f = filp->private_data;
	size_t done = 0;
	ssize_t ret = 0;

	if (pos)
		return -ESPIPE;
	mutex_lock(&f->lock);
	if (f->disabled) {
		ret = -ENODEV;
		goto out_unlock;
	}
	while (done < len) {
		if (!gpuvirt_migf_unread(f)) {
			ret = gpuvirt_migf_produce(f);
			if (ret <= 0)
				break;
		}
		ret = gpuvirt_migf_send(f, ubuf + done, len - done);
		if (ret < 0)
			break;
		done += ret;
	}
	if (len && !ret && !done && !f->eof_seen)
		gpuvirt_migf_saved(f);
	if (done) {
		f->total += done;
		gpuvirt_migration_count(f->m, &f->m->stats.bytes_saved, done);
		ret = done;
	}
out_unlock:
	mutex_unlock(&f->lock);
	return ret;
}

#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
static long gpuvirt_migf_ioctl(struct file *filp, unsigned int cmd,
			       unsigned long arg)
{
	unsigned long minsz = offsetofend(struct vfio_precopy_info, dirty_bytes);
	struct gpuvirt_migf *f = filp->private_data;
	struct vfio_precopy_info info;
	size_t unread;
	long err = 0;

	if (cmd != VFIO_MIG_GET_PRECOPY_INFO)
		return -ENOTTY;
	if (copy_from_user(&info, (void __user *)arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;

	mutex_lock(&f->lock);
	if (f->disabled || f->phase != GPUVIRT_MIGF_PRECOPY) {
		err = -EINVAL;
		goto out_unlock;
	}
	unread = gpuvirt_migf_unread(f);
	info.flags = 0;
	info.initial_bytes = (f->hdr_done ? 0 : sizeof(struct gpuvirt_migration_hdr)) +
			     (u64)f->initial_left * GPUVIRT_MIGF_PAGE_REC +
			     (f->buf_initial ? unread : 0);
	spin_lock(&f->m->dirty_lock);
	info.dirty_bytes = f->m->dirty ?
			   bitmap_weight(f->m->dirty, f->npages) : 0;
	spin_unlock(&f->m->dirty_lock);
	info.dirty_bytes = (info.dirty_bytes + f->dirty_left) *
			   GPUVIRT_MIGF_PAGE_REC +
			   (f->buf_initial ? 0 : unread);
out_unlock:
	mutex_unlock(&f->lock);
	if (err)
		return err;
	return copy_to_user((void __user *)arg, &info, minsz) ? -EFAULT : 0;
}
#endif

static const struct file_operations gpuvirt_migf_save_fops = {
	.owner		= THIS_MODULE,
	.read		= gpuvirt_migf_read,
#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
	.unlocked_ioctl	= gpuvirt_migf_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
#endif
	.release	= gpuvirt_migf_release,
};

/* Resume: take one complete part of the stream from @buf. */

static int gpuvirt_migf_refuse(struct gpuvirt_migf *f, const char *why,
			       u64 a, u64 b)
{
	dev_notice_ratelimited(f->m->vdev->dev,
			       "migration stream refused at byte %llu: %s (%llu, %llu)\n",
			       f->total, why, a, b);
	return -EINVAL;
}

static int gpuvirt_migf_take_hdr(struct gpuvirt_migf *f)
{
	const struct gpuvirt_migration_hdr *h = (void *)f->buf;
	struct gpuvirt_migration *m = f->m;
	char type[GPUVIRT_MIGRATION_TYPE_MAX + 1];

	if (le32_to_cpu(h->magic) != GPUVIRT_MIGRATION_MAGIC)
		return gpuvirt_migf_refuse(f, "not a gpuvirt vGPU stream (magic)",
					   le32_to_cpu(h->magic),
					   GPUVIRT_MIGRATION_MAGIC);
	if (le16_to_cpu(h->version) != GPUVIRT_MIGRATION_VERSION)
		return gpuvirt_migf_refuse(f, "unknown format version (stream, known)",
					   le16_to_cpu(h->version),
					   GPUVIRT_MIGRATION_VERSION);
	if (le16_to_cpu(h->hdr_size) != sizeof(*h) ||
	    le32_to_cpu(h->page_size) != PAGE_SIZE ||
	    le32_to_cpu(h->state_size) != m->ops->state_size || h->reserved)
		return gpuvirt_migf_refuse(f, "header layout differs (page size, state size)",
					   le32_to_cpu(h->page_size),
					   le32_to_cpu(h->state_size));
	memcpy(type, h->type, sizeof(h->type));
	type[sizeof(h->type)] = '\0';
	if (strcmp(type, m->type)) {
		dev_notice_ratelimited(m->vdev->dev,
				       "migration stream refused: it is of vGPU type %s, this vGPU is %s\n",
				       type, m->type);
		return -EINVAL;
	}
	if (le64_to_cpu(h->fb_size) != m->vram_size)
		return gpuvirt_migf_refuse(f, "framebuffer size differs (stream, this vGPU)",
					   le64_to_cpu(h->fb_size), m->vram_size);
	return 0;
}

/*
 * The destination's page for the page record just checked (@rec_arg, in
 * the slice): backed with @alloc, for a PAGE record whose payload is
 * copied into it as it comes; else NULL if it is not backed. An ERR_PTR
 * when it cannot be backed, after saying so.
 */
static struct page *gpuvirt_migf_dest_page(struct gpuvirt_migf *f, bool alloc)
{
	struct gpuvirt_migration *m = f->m;
	struct page *page;

	page = m->gpu->ops->vram_page(m->gpu, m->vram_offset +
				      (f->rec_arg << PAGE_SHIFT), alloc);
	if (IS_ERR(page))
		dev_notice_ratelimited(m->vdev->dev,
				       "migration stream refused: no backing for VRAM page %llu (%ld)\n",
				       f->rec_arg, PTR_ERR(page));
	return page;
}

/* A ZERO record: the page reads as zero from now on. */
static int gpuvirt_migf_take_zero(struct gpuvirt_migf *f)
{
	struct page *page = gpuvirt_migf_dest_page(f, false);

	if (IS_ERR(page))
		return PTR_ERR(page);
	if (!page)
		return 0;	/* reads as zero already */
	clear_highpage(page);
	put_page(page);
	return 0;
}

/* A record header is complete: check it, and say what comes next. */
static int gpuvirt_migf_take_rec(struct gpuvirt_migf *f)
{
	const struct gpuvirt_migration_rec *r = (void *)f->buf;
	u32 tag = le32_to_cpu(r->tag), len = le32_to_cpu(r->len);
	u64 arg = le64_to_cpu(r->arg);
	struct page *page;

	if (f->state_done && tag != GPUVIRT_MIGRATION_REC_END)
		return gpuvirt_migf_refuse(f, "record after the device state (tag, len)",
					   tag, len);
	switch (tag) {
	case GPUVIRT_MIGRATION_REC_PAGE:
	case GPUVIRT_MIGRATION_REC_ZERO:
		/*
		 * The argument is a page number (so its offset is page-aligned),
		 * and the page must lie in this vGPU's slice: a PAGE record's
		 * payload is copied into it as it arrives.
		 */
		if (len != (tag == GPUVIRT_MIGRATION_REC_PAGE ? PAGE_SIZE : 0) ||
		    arg >= f->npages ||
		    !gpuvirt_slice_contains(f->m->vram_size, arg << PAGE_SHIFT,
					    PAGE_SIZE))
			return gpuvirt_migf_refuse(f, "bad page record (page, len)",
						   arg, len);
		break;
	case GPUVIRT_MIGRATION_REC_STATE:
		if (len != f->m->ops->state_size)
			return gpuvirt_migf_refuse(f, "bad state record (len, expected)",
						   len, f->m->ops->state_size);
		break;
	case GPUVIRT_MIGRATION_REC_END:
		if (len || !f->state_done)
			return gpuvirt_migf_refuse(f, "misplaced end record (len, state)",
						   len, f->state_done);
		if (arg != f->crc)
			return gpuvirt_migf_refuse(f, "checksum mismatch (stream, computed)",
						   arg, f->crc);
		f->end_done = true;
		return 0;
	default:
		return gpuvirt_migf_refuse(f, "unknown record (tag, len)", tag, len);
	}
	f->crc = crc32_le(f->crc, f->buf, GPUVIRT_MIGF_REC);
	f->rec_tag = tag;
	f->rec_arg = arg;
	if (tag == GPUVIRT_MIGRATION_REC_ZERO)
		return gpuvirt_migf_take_zero(f);
	if (tag == GPUVIRT_MIGRATION_REC_PAGE) {
		page = gpuvirt_migf_dest_page(f, true);
		if (IS_ERR(page))
			return PTR_ERR(page);
		f->page = page;
	}
	f->part = GPUVIRT_MIGF_PAYLOAD;
	f->need = len;
	return 0;
}

static int gpuvirt_migf_take(struct gpuvirt_migf *f)
{
	int err = 0;

	switch (f->part) {
	case GPUVIRT_MIGF_HDR:
		err = gpuvirt_migf_take_hdr(f);
		if (err)
			return err;
		f->crc = crc32_le(f->crc, f->buf, f->buf_len);
		f->hdr_done = true;
		break;
	case GPUVIRT_MIGF_RECORD:
		f->buf_len = 0;
		f->need = GPUVIRT_MIGF_REC;
		return gpuvirt_migf_take_rec(f);
	case GPUVIRT_MIGF_PAYLOAD:
		if (f->rec_tag == GPUVIRT_MIGRATION_REC_PAGE) {
			/* in its page already, and in the CRC as it came */
			gpuvirt_migf_put_page(f);
			break;
		}
		f->crc = crc32_le(f->crc, f->buf, f->buf_len);
		memcpy(f->state, f->buf, f->buf_len);
		f->state_done = true;
		break;
	}
	f->part = GPUVIRT_MIGF_RECORD;
	f->need = GPUVIRT_MIGF_REC;
	f->buf_len = 0;
	return err;
}

/*
 * Take @n bytes of the part being received from @ubuf: a page's payload
 * straight into the destination's page, anything else into @buf. 0, or
 * -EFAULT with nothing taken (what reached the page before the fault is
 * written again when the VMM writes those bytes again).
 */
static int gpuvirt_migf_recv(struct gpuvirt_migf *f, const char __user *ubuf,
			     size_t n)
{
	unsigned long left;
	void *p;

	if (!f->page)
		return copy_from_user(f->buf + f->buf_len, ubuf, n) ? -EFAULT : 0;
	p = kmap_local_page(f->page);
	left = copy_from_user(p + f->buf_len, ubuf, n);
	if (!left)
		f->crc = crc32_le(f->crc, p + f->buf_len, n);
	kunmap_local(p);
	return left ? -EFAULT : 0;
}

static ssize_t gpuvirt_migf_write(struct file *filp, const char __user *ubuf,
				  size_t len, loff_t *pos)
{
	struct gpuvirt_migf *f = filp->private_data;
	size_t done = 0, n;
	ssize_t ret = 0;

	if (pos)
		return -ESPIPE;
	mutex_lock(&f->lock);
	if (f->disabled) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (f->broken) {
		ret = -EINVAL;
		goto out_unlock;
	}
	while (done < len) {
		if (f->end_done) {
			gpuvirt_migf_refuse(f, "data after the end record (bytes, total)",
					    len - done, f->total);
			ret = -EINVAL;
			break;
		}
		n = min(len - done, f->need - f->buf_len);
		/*
		 * A fault consumes nothing of this piece: the write is short
		 * (or fails with EFAULT), and the VMM may write the rest.
		 */
		if (gpuvirt_migf_recv(f, ubuf + done, n)) {
			if (!done)
				ret = -EFAULT;
			break;
		}
		f->buf_len += n;
		f->total += n;
		done += n;
		if (f->buf_len == f->need) {
			ret = gpuvirt_migf_take(f);
			if (ret)
				break;
		}
	}
	gpuvirt_migration_count(f->m, &f->m->stats.bytes_resumed, done);
	/*
	 * A part taken in vain (refused, or a page with no backing) consumed
	 * its bytes and moved the CRC: the stream cannot go on, whatever the
	 * VMM writes next.
	 */
	if (ret && ret != -EFAULT) {
		f->broken = true;
		gpuvirt_migration_count(f->m, &f->m->stats.refused, 1);
	}
	if (!ret)
		ret = done;
out_unlock:
	mutex_unlock(&f->lock);
	return ret;
}

static const struct file_operations gpuvirt_migf_resume_fops = {
	.owner		= THIS_MODULE,
	.write		= gpuvirt_migf_write,
	.release	= gpuvirt_migf_release,
};

static struct gpuvirt_migf *gpuvirt_migf_new(struct gpuvirt_migration *m,
					     enum gpuvirt_migf_phase phase)
{
	bool save = phase != GPUVIRT_MIGF_RESUMING;
	size_t bufsz = GPUVIRT_MIGF_REC +
		       max3(PAGE_SIZE, m->ops->state_size,
			    sizeof(struct gpuvirt_migration_hdr));
	struct gpuvirt_migf *f;
	int err = -ENOMEM;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->m = m;
	f->phase = phase;
	f->npages = m->vram_size >> PAGE_SHIFT;
	f->crc = ~0U;
	f->part = GPUVIRT_MIGF_HDR;
	f->need = sizeof(struct gpuvirt_migration_hdr);
	mutex_init(&f->lock);
	f->buf = kvzalloc(bufsz, GFP_KERNEL_ACCOUNT);
	if (!f->buf)
		goto err_free;
	f->state = kvzalloc(m->ops->state_size, GFP_KERNEL_ACCOUNT);
	if (!f->state)
		goto err_free_buf;
	if (save) {
		f->pending = kvcalloc(BITS_TO_LONGS(f->npages), sizeof(long),
				      GFP_KERNEL_ACCOUNT);
		if (!f->pending)
			goto err_free_state;
	}
	f->filp = anon_inode_getfile("gpuvirt_vgpu_mig",
				     save ? &gpuvirt_migf_save_fops :
					    &gpuvirt_migf_resume_fops,
				     f, save ? O_RDONLY : O_WRONLY);
	if (IS_ERR(f->filp)) {
		err = PTR_ERR(f->filp);
		goto err_free_pending;
	}
	stream_open(f->filp->f_inode, f->filp);
	return f;

err_free_pending:
	kvfree(f->pending);
err_free_state:
	kvfree(f->state);
err_free_buf:
	kvfree(f->buf);
err_free:
	mutex_destroy(&f->lock);
	kfree(f);
	return ERR_PTR(err);
}

/* STOP -> STOP_COPY, or (PRE_COPY) RUNNING[_P2P] -> PRE_COPY[_P2P]. */
static struct file *gpuvirt_migration_save_open(struct gpuvirt_migration *m,
						bool precopy)
{
	struct gpuvirt_migf *f;
	unsigned long *dirty;

	f = gpuvirt_migf_new(m, precopy ? GPUVIRT_MIGF_PRECOPY :
					  GPUVIRT_MIGF_STOPCOPY);
	if (IS_ERR(f))
		return ERR_CAST(f);
	if (precopy) {
		dirty = kvcalloc(BITS_TO_LONGS(f->npages), sizeof(long),
				 GFP_KERNEL_ACCOUNT);
		if (!dirty) {
			fput(f->filp);
			return ERR_PTR(-ENOMEM);
		}
		/* from here on every write is counted: scan after */
		m->ops->cpu_revoke(m, true);
		spin_lock(&m->dirty_lock);
		WRITE_ONCE(m->dirty, dirty);
		spin_unlock(&m->dirty_lock);
		m->ops->cpu_revoke(m, false);
	} else {
		m->ops->save(m, f->state);
		f->t0 = local_clock();
	}
	f->initial_left = gpuvirt_migration_scan(m, f->pending);
	m->save = f;
	get_file(f->filp);
	return f->filp;
}

#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
/* PRE_COPY_P2P -> STOP_COPY: the device is stopped now; the rest goes. */
static void gpuvirt_migration_save_stop_copy(struct gpuvirt_migration *m)
{
	struct gpuvirt_migf *f = m->save;

	mutex_lock(&f->lock);
	f->t0 = local_clock();
	f->phase = GPUVIRT_MIGF_STOPCOPY;
	m->ops->save(m, f->state);
	gpuvirt_migf_collect(f);
	mutex_unlock(&f->lock);
	gpuvirt_migration_track_stop(m);
}
#endif

/* STOP -> RESUMING: a clean slice, and a file to write the stream to. */
static struct file *gpuvirt_migration_resume_open(struct gpuvirt_migration *m)
{
	struct gpuvirt_migf *f;

	f = gpuvirt_migf_new(m, GPUVIRT_MIGF_RESUMING);
	if (IS_ERR(f))
		return ERR_CAST(f);
	m->gpu->ops->vram_zero(m->gpu, m->vram_offset, m->vram_size);
	m->resume = f;
	get_file(f->filp);
	return f->filp;
}

/* RESUMING -> STOP: the stream must be whole; the device takes its state. */
static int gpuvirt_migration_resume_finish(struct gpuvirt_migration *m)
{
	struct gpuvirt_migf *f = m->resume;
	int err = 0;

	mutex_lock(&f->lock);
	if (f->broken) {
		/* refused and counted already */
		mutex_unlock(&f->lock);
		return -EINVAL;
	}
	if (!f->end_done) {
		err = gpuvirt_migf_refuse(f, "the stream ended early (bytes, part)",
					  f->total, f->part);
	} else {
		err = m->ops->load(m, f->state);
		if (err)
			f->broken = true;
	}
	mutex_unlock(&f->lock);
	gpuvirt_migration_count(m, err ? &m->stats.refused : &m->stats.resumes,
				1);
	return err;
}

/* One arc of the state machine, as vfio_mig_get_next_state() gives them. */
static struct file *gpuvirt_migration_step(struct gpuvirt_migration *m,
					   enum vfio_device_mig_state new)
{
	enum vfio_device_mig_state cur = m->state;
	int err;

	if ((cur == VFIO_DEVICE_STATE_RUNNING &&
	     new == VFIO_DEVICE_STATE_RUNNING_P2P) ||
	    (cur == VFIO_DEVICE_STATE_RUNNING_P2P &&
	     new == VFIO_DEVICE_STATE_RUNNING))
		return NULL;
	if (cur == VFIO_DEVICE_STATE_RUNNING_P2P &&
	    new == VFIO_DEVICE_STATE_STOP) {
		m->ops->stop(m, true);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP &&
	    new == VFIO_DEVICE_STATE_RUNNING_P2P) {
		m->ops->stop(m, false);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP && new == VFIO_DEVICE_STATE_STOP_COPY)
		return gpuvirt_migration_save_open(m, false);
	if (cur == VFIO_DEVICE_STATE_STOP_COPY && new == VFIO_DEVICE_STATE_STOP) {
		gpuvirt_migration_drop_files(m);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP && new == VFIO_DEVICE_STATE_RESUMING)
		return gpuvirt_migration_resume_open(m);
	if (cur == VFIO_DEVICE_STATE_RESUMING && new == VFIO_DEVICE_STATE_STOP) {
		err = gpuvirt_migration_resume_finish(m);
		if (err)
			return ERR_PTR(err);
		gpuvirt_migration_drop_files(m);
		return NULL;
	}
#ifdef GPUVIRT_HAVE_VFIO_MIG_PRE_COPY
	if ((cur == VFIO_DEVICE_STATE_PRE_COPY &&
	     new == VFIO_DEVICE_STATE_PRE_COPY_P2P) ||
	    (cur == VFIO_DEVICE_STATE_PRE_COPY_P2P &&
	     new == VFIO_DEVICE_STATE_PRE_COPY))
		return NULL;
	if ((cur == VFIO_DEVICE_STATE_RUNNING &&
	     new == VFIO_DEVICE_STATE_PRE_COPY) ||
	    (cur == VFIO_DEVICE_STATE_RUNNING_P2P &&
	     new == VFIO_DEVICE_STATE_PRE_COPY_P2P))
		return gpuvirt_migration_save_open(m, true);
	if ((cur == VFIO_DEVICE_STATE_PRE_COPY &&
	     new == VFIO_DEVICE_STATE_RUNNING) ||
	    (cur == VFIO_DEVICE_STATE_PRE_COPY_P2P &&
	     new == VFIO_DEVICE_STATE_RUNNING_P2P)) {
		gpuvirt_migration_drop_files(m);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_PRE_COPY_P2P &&
	    new == VFIO_DEVICE_STATE_STOP_COPY) {
		m->ops->stop(m, true);
		gpuvirt_migration_save_stop_copy(m);
		return NULL;
	}
#endif
	/* vfio_mig_get_next_state() gives no other arc */
	return ERR_PTR(-EINVAL);
}

/**
 * gpuvirt_migration_set_state() - the .migration_set_state op
 * @m: the device
 * @new: the state asked for
 *
 * Return: the data file the final arc opened, NULL, or an ERR_PTR; on an
 * error the device stays in the last state it reached.
 */
struct file *gpuvirt_migration_set_state(struct gpuvirt_migration *m,
					 enum vfio_device_mig_state new)
{
	enum vfio_device_mig_state next, old;
	struct file *ret = NULL;
	int err;

	mutex_lock(&m->state_mutex);
	old = m->state;
	while (m->state != new) {
		err = vfio_mig_get_next_state(m->vdev, m->state, new, &next);
		if (err) {
			ret = ERR_PTR(err);
			break;
		}
		ret = gpuvirt_migration_step(m, next);
		if (IS_ERR(ret))
			break;
		gpuvirt_migration_set(m, next);
		/* only the last arc may open a file */
		if (ret && next != new) {
			fput(ret);
			ret = ERR_PTR(-EINVAL);
			break;
		}
	}
	next = m->state;
	mutex_unlock(&m->state_mutex);
	if (next != old)
		m->ops->changed(m);
	return ret;
}

int gpuvirt_migration_get_state(struct gpuvirt_migration *m,
				enum vfio_device_mig_state *state)
{
	mutex_lock(&m->state_mutex);
	*state = m->state;
	mutex_unlock(&m->state_mutex);
	return 0;
}

/*
 * What STOP_COPY would send now: the header, a record per backed page,
 * the device state and the end record.
 */
int gpuvirt_migration_data_size(struct gpuvirt_migration *m,
				unsigned long *len)
{
	unsigned long pages = gpuvirt_migration_scan(m, NULL);

	*len = sizeof(struct gpuvirt_migration_hdr) +
	       pages * GPUVIRT_MIGF_PAGE_REC +
	       GPUVIRT_MIGF_REC + m->ops->state_size + GPUVIRT_MIGF_REC;
	return 0;
}

/*
 * Back to RUNNING, with no file open; the state mutex is held. Returns
 * whether the state changed.
 */
static bool gpuvirt_migration_to_running(struct gpuvirt_migration *m)
{
	lockdep_assert_held(&m->state_mutex);
	gpuvirt_migration_drop_files(m);
	if (gpuvirt_migration_stopped(m->state))
		m->ops->stop(m, false);
	if (m->state == VFIO_DEVICE_STATE_RUNNING)
		return false;
	gpuvirt_migration_set(m, VFIO_DEVICE_STATE_RUNNING);
	return true;
}

/**
 * gpuvirt_migration_reset() - reset the device (VFIO_DEVICE_RESET)
 * @m: the device
 *
 * The uAPI's reset: any migration in progress ends, its files are
 * disabled, and the device is RUNNING again.
 */
void gpuvirt_migration_reset(struct gpuvirt_migration *m)
{
	bool changed;

	mutex_lock(&m->state_mutex);
	/*
	 * The data files first: once disabled (under each file's lock) no
	 * resume write can store a page, so none lands after the zeroing.
	 */
	gpuvirt_migration_drop_files(m);
	m->ops->reset(m);
	changed = gpuvirt_migration_to_running(m);
	mutex_unlock(&m->state_mutex);
	if (changed)
		m->ops->changed(m);
}

/* Start, or stop with @on false, the DMA log; the state mutex held. */
static void gpuvirt_migration_log_set(struct gpuvirt_migration *m, bool on)
{
	lockdep_assert_held(&m->state_mutex);
	m->log.on = on;
	spin_lock(&m->stats_lock);
	m->stats.dma_logging = on;
	m->stats.dma_log_starts += on;
	spin_unlock(&m->stats_lock);
}

/**
 * gpuvirt_migration_log_start() - start the device's DMA log
 * @m: the device
 * @ranges: the IOVA ranges to log, as the VFIO core checked them: each
 *	aligned to *@page_size, none overlapping, none past ULONG_MAX
 * @nnodes: the number of ranges, at least one
 * @page_size: the page size asked for; kept, since any will do
 *
 * Return: 0; -EINVAL for a page size that is no power of two; -EBUSY if
 * the log is already started.
 */
int gpuvirt_migration_log_start(struct gpuvirt_migration *m,
				struct rb_root_cached *ranges, u32 nnodes,
				u64 *page_size)
{
	struct interval_tree_node *node;
	u64 first = ULONG_MAX, last = 0;
	int err = 0;

	if (!is_power_of_2(*page_size))
		return -EINVAL;
	for (node = interval_tree_iter_first(ranges, 0, ULONG_MAX); node;
	     node = interval_tree_iter_next(node, 0, ULONG_MAX)) {
		first = min_t(u64, first, node->start);
		last = max_t(u64, last, node->last);
	}
	if (!nnodes || first > last)
		return -EINVAL;

	mutex_lock(&m->state_mutex);
	if (m->log.on) {
		err = -EBUSY;
		goto out_unlock;
	}
	m->log.first = first;
	m->log.last = last;
	m->log.page_size = *page_size;
	gpuvirt_migration_log_set(m, true);
out_unlock:
	mutex_unlock(&m->state_mutex);
	return err;
}

/**
 * gpuvirt_migration_log_stop() - stop the device's DMA log
 * @m: the device
 *
 * Return: 0, whether or not the log was started.
 */
int gpuvirt_migration_log_stop(struct gpuvirt_migration *m)
{
	mutex_lock(&m->state_mutex);
	if (m->log.on)
		gpuvirt_migration_log_set(m, false);
	mutex_unlock(&m->state_mutex);
	return 0;
}

/**
 * gpuvirt_migration_log_report() - report the DMA log's dirty pages
 * @m: the device
 * @iova: the first IOVA of the range reported (from the VMM: untrusted)
 * @length: its length in bytes
 *
 * The device wrote no guest page, so no bit of the VMM's bitmap is set.
 *
 * Return: 0; -EINVAL when the log is not started or the range is not
 * within the ranges it was started for.
 */
int gpuvirt_migration_log_report(struct gpuvirt_migration *m,
				 unsigned long iova, unsigned long length)
{
	int err = 0;

	mutex_lock(&m->state_mutex);
	if (!m->log.on || !length || iova < m->log.first ||
	    iova > m->log.last || length - 1 > m->log.last - iova)
		err = -EINVAL;
	else
		gpuvirt_migration_count(m, &m->stats.dma_log_reports, 1);
	mutex_unlock(&m->state_mutex);
	return err;
}

/*
 * The device is being closed: end any migration and stop the DMA log; it
 * opens RUNNING, with no log.
 */
void gpuvirt_migration_close(struct gpuvirt_migration *m)
{
	bool changed;

	mutex_lock(&m->state_mutex);
	changed = gpuvirt_migration_to_running(m);
	if (m->log.on)
		gpuvirt_migration_log_set(m, false);
	mutex_unlock(&m->state_mutex);
	if (changed)
		m->ops->changed(m);
}

/* State and counters; may be called under a spinlock. */
void gpuvirt_migration_get(struct gpuvirt_migration *m,
			   struct gpuvirt_migration_stats *stats)
{
	spin_lock(&m->stats_lock);
	*stats = m->stats;
	spin_unlock(&m->stats_lock);
}

void gpuvirt_migration_init(struct gpuvirt_migration *m,
			    struct vfio_device *vdev,
			    const struct gpuvirt_migration_dev_ops *ops,
			    struct gpuvirt_gpu *gpu, u64 vram_offset,
			    u64 vram_size, const char *type)
{
	memset(m, 0, sizeof(*m));
	m->vdev = vdev;
	m->ops = ops;
	m->gpu = gpu;
	m->vram_offset = vram_offset;
	m->vram_size = vram_size;
	m->type = type;
	m->state = VFIO_DEVICE_STATE_RUNNING;
	m->stats.state = m->state;
	mutex_init(&m->state_mutex);
	spin_lock_init(&m->dirty_lock);
	spin_lock_init(&m->stats_lock);
}

/* The device is being freed; it was closed, so no file is open. */
void gpuvirt_migration_fini(struct gpuvirt_migration *m)
{
	WARN_ON_ONCE(m->save || m->resume || m->dirty);
	mutex_destroy(&m->state_mutex);
}
