/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Live migration, save and restore of a vGPU through VFIO migration v2:
 * the uAPI state machine, the data files and the stream format. The device
 * itself (what its state is, how it stops) stays with its implementation,
 * which fills in struct gpuvirt_migration_dev_ops: an mdev vGPU today
 * (vgpu.c), an SR-IOV VF vGPU later. Documentation/vgpu-abi.rst,
 * "Migration", describes the stream.
 */
#ifndef GPUVIRT_MIGRATION_H
#define GPUVIRT_MIGRATION_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/vfio.h>

struct gpuvirt_gpu;
struct gpuvirt_migration;
struct gpuvirt_migf;

/**
 * gpuvirt_slice_contains() - is [@off, @off + @len) inside a slice?
 * @size: the slice's size in bytes
 * @off: an offset in the slice, as a guest or a VMM gave it: untrusted
 * @len: bytes from @off
 *
 * The one range check of every guest- or VMM-given VRAM offset before it
 * becomes an address (gpuvirt_vgpu_slice_page(), the ring and packet
 * checks, a stream's page records): no overflow for any values.
 */
static inline bool gpuvirt_slice_contains(u64 size, u64 off, u64 len)
{
	return len <= size && off <= size - len;
}

/* Stream format: "GVLM", version 1. All fields little-endian. */
#define GPUVIRT_MIGRATION_MAGIC		0x4d4c5647
#define GPUVIRT_MIGRATION_VERSION	1
#define GPUVIRT_MIGRATION_TYPE_MAX	32

/**
 * struct gpuvirt_migration_hdr - the stream's first bytes
 * @magic: GPUVIRT_MIGRATION_MAGIC
 * @version: GPUVIRT_MIGRATION_VERSION
 * @hdr_size: sizeof(struct gpuvirt_migration_hdr)
 * @fb_size: the source's framebuffer (VRAM slice) size in bytes
 * @page_size: the size of a PAGE record's payload
 * @state_size: the size of the STATE record's payload
 * @type: the source's vGPU type name, NUL-padded
 * @reserved: zero
 */
struct gpuvirt_migration_hdr {
	__le32 magic;
	__le16 version;
	__le16 hdr_size;
	__le64 fb_size;
	__le32 page_size;
	__le32 state_size;
	char type[GPUVIRT_MIGRATION_TYPE_MAX];
	__le64 reserved;
};

/* Record tags. */
enum {
	GPUVIRT_MIGRATION_REC_PAGE = 1,	/* @arg: page offset; payload: it */
	GPUVIRT_MIGRATION_REC_ZERO,	/* @arg: page offset; reads as zero */
	GPUVIRT_MIGRATION_REC_STATE,	/* payload: the device state */
	GPUVIRT_MIGRATION_REC_END,	/* @arg: CRC32 of all bytes before */
};

/**
 * struct gpuvirt_migration_rec - a record header, followed by @len bytes
 * @tag: GPUVIRT_MIGRATION_REC_*
 * @len: payload bytes
 * @arg: per tag, above
 */
struct gpuvirt_migration_rec {
	__le32 tag;
	__le32 len;
	__le64 arg;
};

/**
 * struct gpuvirt_migration_dev_ops - what the device gives the migration code
 * @state_size: bytes of the device state (everything the guest can observe
 *	apart from VRAM)
 * @stop: @stop true: stop running the device's work, at a packet or chunk
 *	boundary, and return only once nothing runs; false: let it run again.
 *	Called with the state mutex held.
 * @save: write the device state, @state_size bytes, into @buf. The device
 *	is stopped. Called with the state mutex held.
 * @load: check the device state in @buf and take it on, or refuse it with
 *	-EINVAL after logging why; a refused state changes nothing. The device
 *	is stopped. Called with the state mutex held.
 * @reset: reset the device as VFIO_DEVICE_RESET does. Called with the
 *	state mutex held.
 * @changed: the migration state changed; announce it. Called with no lock
 *	of the migration code held.
 * @cpu_revoke: take the lock that keeps CPU mappings of VRAM from being
 *	made, and revoke them all, so that the next store through a mapping
 *	faults and is counted (gpuvirt_migration_dirty()); @revoke false drops
 *	the lock. Called with a data file's lock held.
 */
struct gpuvirt_migration_dev_ops {
	size_t state_size;
	void (*stop)(struct gpuvirt_migration *m, bool stop);
	void (*save)(struct gpuvirt_migration *m, void *buf);
	int (*load)(struct gpuvirt_migration *m, const void *buf);
	void (*reset)(struct gpuvirt_migration *m);
	void (*changed)(struct gpuvirt_migration *m);
	void (*cpu_revoke)(struct gpuvirt_migration *m, bool revoke);
};

/**
 * struct gpuvirt_migration_stats - a device's migration state and counters
 * @state: the migration state, a copy of struct gpuvirt_migration.state
 *	readable under the stats lock (netlink reads it under a spinlock)
 * @saves: streams read to their end
 * @resumes: streams taken on (RESUMING -> STOP)
 * @refused: streams refused on resume
 * @bytes_saved: stream bytes read from save files
 * @bytes_resumed: stream bytes written to resume files
 * @last_stop_copy_ns: the last save's time from entering STOP_COPY to the
 *	end of its stream
 * @dma_logging: a DMA log is started (struct gpuvirt_migration_log)
 * @dma_log_starts: DMA logs started
 * @dma_log_reports: DMA log reports given (each clean)
 */
struct gpuvirt_migration_stats {
	u32 state;
	u64 saves;
	u64 resumes;
	u64 refused;
	u64 bytes_saved;
	u64 bytes_resumed;
	u64 last_stop_copy_ns;
	bool dma_logging;
	u64 dma_log_starts;
	u64 dma_log_reports;
};

/**
 * struct gpuvirt_migration_log - the device's DMA log, while started
 * @on: started (VFIO_DEVICE_FEATURE_DMA_LOGGING_START), not yet stopped
 * @first: the lowest IOVA of the ranges it was started for
 * @last: the highest IOVA of those ranges (inclusive)
 * @page_size: the page size it was started with
 */
struct gpuvirt_migration_log {
	bool on;
	u64 first;
	u64 last;
	u64 page_size;
};

/**
 * struct gpuvirt_migration - one device's migration state
 * @vdev: the VFIO device
 * @ops: the device's side
 * @gpu: the GPU whose VRAM holds the device's slice
 * @vram_offset: first byte of the slice in the GPU's VRAM
 * @vram_size: size of the slice; a multiple of PAGE_SIZE
 * @type: the device's type name, written into and checked against streams
 * @state_mutex: protects @state, @save, @resume and @log, and serialises
 *	state changes. Outermost: taken before a data file's
 *	lock, before the device's own locks (@ops run under it), and never
 *	held across a user copy.
 * @state: the uAPI migration state
 * @save: the open save file (PRE_COPY, STOP_COPY), or NULL
 * @resume: the open resume file (RESUMING), or NULL
 * @log: the DMA log (gpuvirt_migration_log_start())
 * @stats: counters, under @stats_lock
 * @dirty_lock: protects @dirty. Innermost: taken inside the device's locks
 *	and inside mmap_lock (faults).
 * @dirty: pages written since the last collection, while a save file
 *	tracks them (PRE_COPY), else NULL. Set under @dirty_lock and inside
 *	ops->cpu_revoke(), so a fault that holds the device's lock against
 *	revocation reads it stably (gpuvirt_migration_tracking())
 * @stats_lock: protects @stats, which the data files update under their
 *	own lock. Innermost.
 */
struct gpuvirt_migration {
	struct vfio_device *vdev;
	const struct gpuvirt_migration_dev_ops *ops;
	struct gpuvirt_gpu *gpu;
	u64 vram_offset;
	u64 vram_size;
	const char *type;
	struct mutex state_mutex;	/* see above */
	enum vfio_device_mig_state state;
	struct gpuvirt_migf *save;
	struct gpuvirt_migf *resume;
	struct gpuvirt_migration_log log;
	struct gpuvirt_migration_stats stats;
	spinlock_t dirty_lock;		/* see above */
	unsigned long *dirty;
	spinlock_t stats_lock;		/* see above */
};

void gpuvirt_migration_init(struct gpuvirt_migration *m,
			    struct vfio_device *vdev,
			    const struct gpuvirt_migration_dev_ops *ops,
			    struct gpuvirt_gpu *gpu, u64 vram_offset,
			    u64 vram_size, const char *type);
void gpuvirt_migration_fini(struct gpuvirt_migration *m);
void gpuvirt_migration_close(struct gpuvirt_migration *m);
void gpuvirt_migration_reset(struct gpuvirt_migration *m);
void gpuvirt_migration_dirty(struct gpuvirt_migration *m, u64 off, u64 len);
bool gpuvirt_migration_tracking(struct gpuvirt_migration *m);
void gpuvirt_migration_get(struct gpuvirt_migration *m,
			   struct gpuvirt_migration_stats *stats);
const char *gpuvirt_migration_state_name(enum vfio_device_mig_state state);

/* The device's struct vfio_migration_ops call these. */
struct file *gpuvirt_migration_set_state(struct gpuvirt_migration *m,
					 enum vfio_device_mig_state new);
int gpuvirt_migration_get_state(struct gpuvirt_migration *m,
				enum vfio_device_mig_state *state);
int gpuvirt_migration_data_size(struct gpuvirt_migration *m,
				unsigned long *len);
/* The device's struct vfio_log_ops call these. */
int gpuvirt_migration_log_start(struct gpuvirt_migration *m,
				struct rb_root_cached *ranges, u32 nnodes,
				u64 *page_size);
int gpuvirt_migration_log_stop(struct gpuvirt_migration *m);
int gpuvirt_migration_log_report(struct gpuvirt_migration *m,
				 unsigned long iova, unsigned long length);
/* What to put in vfio_device.migration_flags. */
unsigned int gpuvirt_migration_flags(void);

#endif /* GPUVIRT_MIGRATION_H */
