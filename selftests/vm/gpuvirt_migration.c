// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU live migration through VFIO migration v2, driven the way QEMU does:
 * the source goes RUNNING -> PRE_COPY (where the kernel has it) ->
 * STOP_COPY and its stream is read to EOF; the destination, a vGPU of the
 * same type, goes STOP -> RESUMING, takes the stream, then STOP -> RUNNING.
 * A workload started on the source finishes on the destination and its
 * results are checked, with the registers, the ring, config space and VRAM.
 * Then every refusal: other type, unknown version, truncated, corrupted and
 * replayed streams, data-fd use after the state moved on, reset, close and
 * removal mid-migration, and the arcs the uAPI forbids; and the DMA log,
 * always clean, that VMMs start before a migration. Each is checked
 * through VFIO and against the core's debugfs (vgpus/<uuid>/migration).
 */
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "vgpu_client.h"
#include <linux/gpuvirt_vgpu.h>

/* v6.2 uAPI, absent from older userspace headers */
#ifndef VFIO_MIGRATION_PRE_COPY
#define VFIO_MIGRATION_PRE_COPY		(1 << 2)
#define VFIO_DEVICE_STATE_PRE_COPY	6
#define VFIO_DEVICE_STATE_PRE_COPY_P2P	7
struct vfio_precopy_info {
	__u32 argsz;
	__u32 flags;
	__aligned_u64 initial_bytes;
	__aligned_u64 dirty_bytes;
};
#define VFIO_MIG_GET_PRECOPY_INFO	_IO(VFIO_TYPE, VFIO_BASE + 21)
#define VFIO_DEVICE_FEATURE_MIG_DATA_SIZE	9
struct vfio_device_feature_mig_data_size {
	__aligned_u64 stop_copy_length;
};
#endif

#define TYPES		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define TYPE		"H200-4C"
#define OTHER_TYPE	"H200-8C"
#define UUID_A		"6a1f0b42-0000-4000-8000-0000000000a1"
#define UUID_B		"6a1f0b42-0000-4000-8000-0000000000b1"
#define UUID_C		"6a1f0b42-0000-4000-8000-0000000000c1"
#define VGPU_DEBUGFS	GV_DEBUGFS "/gpus/sim0/vgpus/"
#define MAP_LEN		(16u << 20)
#define HDR_SIZE	64
#define REC_SIZE	16
#define PAGE		4096

static int vgpu_create(const char *type, const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/create", type);
	return gv_write(path, uuid);
}

static int vgpu_remove(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/remove", uuid);
	return gv_write(path, "1");
}

static unsigned long long mig_kv(const char *uuid, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), VGPU_DEBUGFS "%s/migration", uuid);
	return gv_kv_u64(path, key);
}

static bool mig_state_is(const char *uuid, const char *want)
{
	char path[256], val[32];

	snprintf(path, sizeof(path), VGPU_DEBUGFS "%s/migration", uuid);
	return !gv_kv(path, "state", val, sizeof(val)) && !strcmp(val, want);
}

static bool kernel_has_pre_copy(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &maj, &min);
	return maj > 6 || (maj == 6 && min >= 2);
}

/* VFIO_DEVICE_FEATURE helpers; 0 or -errno. */
static int feature(int fd, uint32_t flags, void *data, size_t len)
{
	char buf[sizeof(struct vfio_device_feature) + 64];
	struct vfio_device_feature *f = (void *)buf;

	memset(buf, 0, sizeof(buf));
	f->argsz = sizeof(*f) + len;
	f->flags = flags;
	memcpy(f->data, data, len);
	if (ioctl(fd, VFIO_DEVICE_FEATURE, f))
		return -errno;
	memcpy(data, f->data, len);
	return 0;
}

/* Set the migration state; *data_fd gets the fd returned, or -1. */
static int mig_set(int fd, uint32_t state, int *data_fd)
{
	struct vfio_device_feature_mig_state st = {
		.device_state = state, .data_fd = -1,
	};
	int err = feature(fd, VFIO_DEVICE_FEATURE_SET |
			  VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE, &st, sizeof(st));

	if (data_fd)
		*data_fd = err ? -1 : st.data_fd;
	else if (!err && st.data_fd >= 0)
		close(st.data_fd);
	return err;
}

static int mig_get(int fd)
{
	struct vfio_device_feature_mig_state st = { 0 };
	int err = feature(fd, VFIO_DEVICE_FEATURE_GET |
			  VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE, &st, sizeof(st));

	return err ?: (int)st.device_state;
}

/* A stream in memory. */
struct stream {
	uint8_t *p;
	size_t len, cap;
};

static void stream_free(struct stream *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* Read a data fd until EOF (0) or -ENOMSG; returns that, or -errno. */
static int stream_read(int dfd, struct stream *s)
{
	ssize_t n;

	for (;;) {
		if (s->cap - s->len < (1u << 20)) {
			s->cap = s->cap ? 2 * s->cap : 4u << 20;
			s->p = realloc(s->p, s->cap);
			if (!s->p)
				return -ENOMEM;
		}
		n = read(dfd, s->p + s->len, s->cap - s->len);
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		s->len += n;
	}
}

/* Write @len bytes in pieces of odd sizes, as a VMM's buffers land. */
static int stream_write(int dfd, const uint8_t *p, size_t len)
{
	size_t done = 0, piece = 1000;
	ssize_t n;

	while (done < len) {
		n = write(dfd, p + done, len - done < piece ? len - done : piece);
		if (n < 0)
			return -errno;
		done += n;
		piece = piece * 3 + 7;
	}
	return 0;
}

static uint32_t reg(int fd, unsigned int r)
{
	uint32_t v = 0xdeadbeef;

	vgpu_reg_read(fd, r, &v);
	return v;
}

static uint32_t cfg_rd(int fd, unsigned int off, unsigned int len)
{
	uint32_t v = 0;

	if (pread(fd, &v, len, VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX) + off) != len)
		return 0xdeadbeef;
	return v;
}

static int cfg_wr(int fd, unsigned int off, uint32_t v, unsigned int len)
{
	return pwrite(fd, &v, len, VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
	       len ? 0 : -errno;
}

static struct vfio_user *open_users[4];

static int vfio_open(struct vfio_user *u, const char *uuid)
{
	unsigned int i;
	int err = vgpu_client_open(u, uuid);

	for (i = 0; !err && i < ARRAY_SIZE(open_users); i++)
		if (!open_users[i]) {
			open_users[i] = u;
			break;
		}
	return err;
}

static void vfio_close(struct vfio_user *u)
{
	unsigned int i;

	vgpu_client_close(u);
	for (i = 0; i < ARRAY_SIZE(open_users); i++)
		if (open_users[i] == u)
			open_users[i] = NULL;
}

/*
 * The workload: NPKT COMPUTE packets of STEPS steps, each followed by a
 * FENCE with seqno i + 1 at its own address, so that the result of every
 * packet, and the count of completed ones, can be checked, and a packet
 * run twice or lost would show (DONE counts completions; a COMPUTE resumed
 * at the wrong step gives another result).
 */
#define NPKT		32
#define STEPS		100000	/* 100 ms each: work is left at the stop, even on a slow kernel */
#define RES_OFF		0x100000
#define FENCE_OFF	0x200000
#define FILL_OFF	0x400000
#define FILL_LEN	0x100000

static void submit(struct vgpu_ring *r)
{
	unsigned int i;
	uint32_t fill[] = {
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0),
		FILL_OFF, 0, FILL_LEN, 0, 0x5eed5eed,
	};

	vgpu_ring_put(r, fill, 6);
	for (i = 0; i < NPKT; i++) {
		uint32_t c[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
			STEPS, RES_OFF + 8 * i, 0, 1000 + i,
		};
		uint32_t f[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
					 GPUVIRT_VGPU_PKT_FLAG_IRQ),
			i + 1, FENCE_OFF + 4 * i, 0,
		};

		vgpu_ring_put(r, c, 5);
		vgpu_ring_put(r, f, 4);
	}
}

static bool results_ok(const uint8_t *vram)
{
	unsigned int i;
	uint64_t x;
	uint32_t fence;

	for (i = 0; i < NPKT; i++) {
		memcpy(&x, vram + RES_OFF + 8 * i, 8);
		memcpy(&fence, vram + FENCE_OFF + 4 * i, 4);
		if (x != vgpu_compute_ref(1000 + i, STEPS) || fence != i + 1)
			return false;
	}
	for (i = 0; i < FILL_LEN; i += 4)
		if (*(const uint32_t *)(vram + FILL_OFF + i) != 0x5eed5eed)
			return false;
	return true;
}

FIXTURE(mig) {
	int kmsg;
	bool pre_copy;
};

FIXTURE_SETUP(mig)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_setup_h200());
	/* so that a vGPU of another type can sit beside them */
	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/vgpu_mode",
			      "mixed"));
	ASSERT_EQ(0, vgpu_create(TYPE, UUID_A));
	ASSERT_EQ(0, vgpu_create(TYPE, UUID_B));
	self->kmsg = gv_kmsg_open();
	self->pre_copy = kernel_has_pre_copy();
}

FIXTURE_TEARDOWN(mig)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_users); i++)
		if (open_users[i])
			vfio_close(open_users[i]);
	vgpu_remove(UUID_A);
	vgpu_remove(UUID_B);
	vgpu_remove(UUID_C);
	if (self->kmsg >= 0)
		close(self->kmsg);
	gv_unload_all();
}

/*
 * QEMU's save sequence on a running device, for any VFIO device: with
 * pre-copy, RUNNING -> PRE_COPY, the initial data read to its end, then
 * PRE_COPY_P2P -> STOP_COPY on the same data fd; without, RUNNING_P2P ->
 * STOP -> STOP_COPY. Either way the stream is read to EOF and the device
 * left in STOP. 0 or -errno.
 */
static int qemu_save(int fd, bool pre_copy, struct stream *s)
{
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	int dfd, nfd, err;

	if (pre_copy) {
		err = mig_set(fd, VFIO_DEVICE_STATE_PRE_COPY, &dfd);
		if (err)
			return err;
		/*
		 * The uAPI asks for ENOMSG at pre-copy's temporary end of
		 * stream; mtty returns 0 there. QEMU takes both, so does this.
		 */
		err = stream_read(dfd, s);
		if (!err || err == -ENOMSG)
			err = ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi) ? -errno :
			      pi.initial_bytes ? -EAGAIN : 0;
		if (!err)
			err = mig_set(fd, VFIO_DEVICE_STATE_PRE_COPY_P2P, NULL) ?:
			      mig_set(fd, VFIO_DEVICE_STATE_STOP_COPY, &nfd);
		if (!err && nfd >= 0) {
			close(nfd);
			err = -EPROTO;	/* the pre-copy fd carries on */
		}
	} else {
		err = mig_set(fd, VFIO_DEVICE_STATE_RUNNING_P2P, NULL) ?:
		      mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL) ?:
		      mig_set(fd, VFIO_DEVICE_STATE_STOP_COPY, &dfd);
		if (err)
			return err;
	}
	if (!err)
		err = stream_read(dfd, s) ?: mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL);
	close(dfd);
	return err;
}

/* QEMU's resume sequence, to RUNNING; 0 or -errno. */
static int qemu_resume(int fd, const struct stream *s)
{
	int rfd, err;

	err = mig_set(fd, VFIO_DEVICE_STATE_RESUMING, &rfd);
	if (err)
		return err;
	err = stream_write(rfd, s->p, s->len) ?:
	      mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL) ?:
	      mig_set(fd, VFIO_DEVICE_STATE_RUNNING, NULL);
	close(rfd);
	return err;
}

TEST_F(mig, feature_advertised)
{
	struct vfio_device_feature_migration mf = { 0 };
	struct vfio_user a;
	uint32_t want = VFIO_MIGRATION_STOP_COPY | VFIO_MIGRATION_P2P;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, feature(a.device, VFIO_DEVICE_FEATURE_GET |
			     VFIO_DEVICE_FEATURE_MIGRATION, &mf, sizeof(mf)));
	if (self->pre_copy)
		want |= VFIO_MIGRATION_PRE_COPY;
	EXPECT_EQ(want, mf.flags);
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(a.device));
	EXPECT_TRUE(mig_state_is(UUID_A, "running"));
	vfio_close(&a);
}

/* Fill pages [first, first + n) of the slice through BAR2 with a pattern. */
static int write_pages(int fd, unsigned int first, unsigned int n, uint8_t seed)
{
	uint8_t buf[PAGE];
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(buf, seed + i, sizeof(buf));
		if (pwrite(fd, buf, PAGE, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
			   (uint64_t)(first + i) * PAGE * 7) != PAGE)
			return -errno;
	}
	return 0;
}

/* DMA_LOGGING_START over @n ranges at 4 KiB pages; 0 or -errno. */
static int log_start(int fd, const struct vfio_device_feature_dma_logging_range *r,
		     unsigned int n)
{
	struct vfio_device_feature_dma_logging_control c = {
		.page_size = PAGE,
		.num_ranges = n,
		.ranges = (uintptr_t)r,
	};

	return feature(fd, VFIO_DEVICE_FEATURE_SET |
		       VFIO_DEVICE_FEATURE_DMA_LOGGING_START, &c, sizeof(c));
}

/* DMA_LOGGING_REPORT of [@iova, @iova + @len) into @bitmap; 0 or -errno. */
static int log_report(int fd, uint64_t iova, uint64_t len, void *bitmap)
{
	struct vfio_device_feature_dma_logging_report r = {
		.iova = iova,
		.length = len,
		.page_size = PAGE,
		.bitmap = (uintptr_t)bitmap,
	};

	return feature(fd, VFIO_DEVICE_FEATURE_GET |
		       VFIO_DEVICE_FEATURE_DMA_LOGGING_REPORT, &r, sizeof(r));
}

/*
 * The vGPU's DMA log, which VMMs that want the device to track its DMA
 * (QEMU from 8.1 by default) start before they migrate. Where the kernel's
 * VFIO core can report a log (kernel/compat.h: iova_bitmap, which Debian's
 * kernels from 6.10 leave out) it is offered, reports nothing dirty while
 * the device works on its own slice (a vGPU never writes guest memory),
 * refuses reports outside the ranges it was started for or when not
 * started, and stops on stop and on close. Elsewhere it is not offered at
 * all, as VFIO's probe and debugfs both say. Checked through VFIO and in
 * the core's debugfs.
 */
#define LOG_SPAN	(64ull << 20)
TEST_F(mig, dma_log_is_clean_and_checked)
{
	const struct vfio_device_feature_dma_logging_range r[] = {
		{ .iova = 0, .length = LOG_SPAN },
		{ .iova = 1ull << 32, .length = LOG_SPAN },
	};
	size_t bits = LOG_SPAN / PAGE / 8;
	unsigned char *bitmap = calloc(1, bits), *zero = calloc(1, bits);
	unsigned long long reports, offered;
	struct vfio_user a;
	char dummy[8];
	int i;

	ASSERT_NE(NULL, bitmap);
	ASSERT_NE(NULL, zero);
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	offered = mig_kv(UUID_A, "dma_log_offered");
	ASSERT_GE(1ull, offered);
	if (!offered) {
		TH_LOG("this kernel's VFIO core reports no DMA log: none offered");
		EXPECT_EQ(-ENOTTY, feature(a.device, VFIO_DEVICE_FEATURE_PROBE |
					   VFIO_DEVICE_FEATURE_SET |
					   VFIO_DEVICE_FEATURE_DMA_LOGGING_START,
					   dummy, 0));
		EXPECT_EQ(-ENOTTY, log_start(a.device, r, ARRAY_SIZE(r)));
		EXPECT_EQ(0ull, mig_kv(UUID_A, "dma_log_starts"));
		vfio_close(&a);
		goto out;
	}
	EXPECT_EQ(0, feature(a.device, VFIO_DEVICE_FEATURE_PROBE |
			     VFIO_DEVICE_FEATURE_SET |
			     VFIO_DEVICE_FEATURE_DMA_LOGGING_START, dummy, 0));
	/* not started: no report */
	EXPECT_EQ(-EINVAL, log_report(a.device, 0, LOG_SPAN, bitmap));
	EXPECT_EQ(0ull, mig_kv(UUID_A, "dma_logging"));

	ASSERT_EQ(0, log_start(a.device, r, ARRAY_SIZE(r)));
	EXPECT_EQ(1ull, mig_kv(UUID_A, "dma_logging"));
	EXPECT_EQ(1ull, mig_kv(UUID_A, "dma_log_starts"));
	EXPECT_EQ(-EBUSY, log_start(a.device, r, ARRAY_SIZE(r)));
	EXPECT_EQ(1ull, mig_kv(UUID_A, "dma_log_starts"));

	/* the device works on its slice; the guest's pages stay clean */
	ASSERT_EQ(0, write_pages(a.device, 0, 16, 0x40));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, log_report(a.device, r[i].iova, LOG_SPAN, bitmap));
		EXPECT_EQ(0, memcmp(bitmap, zero, bits));
	}
	reports = mig_kv(UUID_A, "dma_log_reports");
	EXPECT_LE(2ull, reports);

	/* outside the ranges started: across their top, past it */
	EXPECT_EQ(-EINVAL, log_report(a.device, (1ull << 32) + LOG_SPAN - PAGE,
				      2 * PAGE, bitmap));
	EXPECT_EQ(-EINVAL, log_report(a.device, (1ull << 32) + LOG_SPAN,
				      PAGE, bitmap));
	EXPECT_EQ(reports, mig_kv(UUID_A, "dma_log_reports"));

	EXPECT_EQ(0, feature(a.device, VFIO_DEVICE_FEATURE_SET |
			     VFIO_DEVICE_FEATURE_DMA_LOGGING_STOP, dummy, 0));
	EXPECT_EQ(0ull, mig_kv(UUID_A, "dma_logging"));
	EXPECT_EQ(-EINVAL, log_report(a.device, 0, LOG_SPAN, bitmap));

	/* started again, then the device is closed: the log stops */
	ASSERT_EQ(0, log_start(a.device, r, 1));
	EXPECT_EQ(2ull, mig_kv(UUID_A, "dma_log_starts"));
	vfio_close(&a);
	EXPECT_EQ(0ull, mig_kv(UUID_A, "dma_logging"));
out:
	free(bitmap);
	free(zero);
}

/* A STOP_COPY stream of A with @pages written pages; its state size. */
static uint32_t save_stopped(struct __test_metadata *_metadata, int fd,
			     struct stream *s)
{
	int dfd;
	uint32_t state_size;

	EXPECT_EQ(0, mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL));
	EXPECT_EQ(0, mig_set(fd, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
	EXPECT_LE(0, dfd);
	EXPECT_EQ(0, stream_read(dfd, s));
	EXPECT_EQ(0, mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL));
	/* the state moved on: the data fd is dead */
	EXPECT_EQ(-1, read(dfd, &state_size, 4));
	EXPECT_EQ(ENODEV, errno);
	close(dfd);
	memcpy(&state_size, s->p + 20, 4);
	return state_size;
}

TEST_F(mig, stop_copy_stream_is_sparse_and_exact)
{
	struct vfio_user a;
	struct stream s = { 0 };
	unsigned long long sz;
	uint32_t state_size, magic;
	const unsigned int pages = 37;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, write_pages(a.device, 3, pages, 0x40));
	/* the sim backs whole blocks: more pages are backed than written, */
	ASSERT_LE(pages, gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "backed_pages"));
	if (self->pre_copy) {
		struct vfio_device_feature_mig_data_size ds = { 0 };

		ASSERT_EQ(0, feature(a.device, VFIO_DEVICE_FEATURE_GET |
				     VFIO_DEVICE_FEATURE_MIG_DATA_SIZE,
				     &ds, sizeof(ds)));
		sz = ds.stop_copy_length;
	}
	state_size = save_stopped(_metadata, a.device, &s);
	memcpy(&magic, s.p, 4);
	EXPECT_EQ(0x4d4c5647, magic);
	EXPECT_EQ(0, memcmp(s.p + 24, TYPE, strlen(TYPE)));
	/* and the stream holds only those written: the header, a record per
	 * written page, the state, the end */
	EXPECT_EQ(HDR_SIZE + pages * (REC_SIZE + PAGE) + REC_SIZE + state_size +
		  REC_SIZE, s.len);
	if (self->pre_copy)
		EXPECT_EQ(sz, s.len);
	EXPECT_EQ(1, mig_kv(UUID_A, "saves"));
	EXPECT_EQ(s.len, mig_kv(UUID_A, "bytes_saved"));
	EXPECT_EQ(1, mig_kv(UUID_A, "engine_stopped"));
	EXPECT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	EXPECT_EQ(0, mig_kv(UUID_A, "engine_stopped"));
	stream_free(&s);
	vfio_close(&a);
}

/*
 * The whole QEMU sequence with a workload: see the file's header.
 */
TEST_F(mig, live_migration_carries_the_workload)
{
	struct vfio_user a, b;
	struct vgpu_ring ra;
	struct stream s = { 0 };
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	uint8_t *va, *vb;
	uint32_t regs_a[6], done_stop, msi_on = PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_64BIT;
	static const unsigned int regnums[6] = {
		GPUVIRT_VGPU_REG_RING_HEAD, GPUVIRT_VGPU_REG_RING_TAIL,
		GPUVIRT_VGPU_REG_FENCE, GPUVIRT_VGPU_REG_DONE_LO,
		GPUVIRT_VGPU_REG_SCRATCH, GPUVIRT_VGPU_REG_IRQ_STATUS,
	};
	unsigned int i;
	int dfd, rfd, err;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	va = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		  VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, va);
	vb = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, b.device,
		  VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, vb);

	/* guest-visible state that must travel */
	ASSERT_EQ(0, cfg_wr(a.device, PCI_BASE_ADDRESS_0, 0xfe000000, 4));
	ASSERT_EQ(0, cfg_wr(a.device, 0x44, 0xfee00000, 4));	/* MSI address */
	ASSERT_EQ(0, cfg_wr(a.device, 0x4c, 0x4041, 2));	/* MSI data */
	ASSERT_EQ(0, cfg_wr(a.device, 0x42, msi_on, 2));
	ASSERT_EQ(0, vgpu_reg_write(a.device, GPUVIRT_VGPU_REG_SCRATCH, 0x12345678));
	ASSERT_EQ(0, vgpu_reg_write(a.device, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	ASSERT_EQ(0, vgpu_ring_setup(&ra, a.device, va, 4096));
	submit(&ra);
	ASSERT_EQ(0, vgpu_ring_kick(&ra));
	usleep(50000);

	if (self->pre_copy) {
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_PRE_COPY, &dfd));
		ASSERT_LE(0, dfd);
		EXPECT_TRUE(mig_state_is(UUID_A, "pre-copy"));
		EXPECT_EQ(1, mig_kv(UUID_A, "tracking"));
		ASSERT_EQ(0, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
		/* the header and every backed page, at least the ring's */
		EXPECT_LE(HDR_SIZE + REC_SIZE + PAGE, pi.initial_bytes);
		EXPECT_EQ(0, (pi.initial_bytes - HDR_SIZE) % (REC_SIZE + PAGE));
		/* read the first pass; the engine keeps writing meanwhile */
		err = stream_read(dfd, &s);
		EXPECT_EQ(-ENOMSG, err);
		ASSERT_EQ(0, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
		EXPECT_EQ(0, pi.initial_bytes);
		/* CPU stores through the mapping are tracked: 3 new pages */
		for (i = 0; i < 3; i++)
			va[0x800000 + i * PAGE] = 0x77;
		ASSERT_EQ(0, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
		EXPECT_LE(3 * (REC_SIZE + PAGE), pi.dirty_bytes);
		EXPECT_EQ(0, pi.dirty_bytes % (REC_SIZE + PAGE));
		err = stream_read(dfd, &s);
		EXPECT_EQ(-ENOMSG, err);
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_PRE_COPY_P2P, NULL));
		/* PRE_COPY_P2P -> STOP_COPY keeps the same data fd */
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &rfd));
		EXPECT_EQ(-1, rfd);
		EXPECT_EQ(-1, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
		EXPECT_EQ(EINVAL, errno);
	} else {
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING_P2P, NULL));
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
		ASSERT_LE(0, dfd);
	}
	EXPECT_EQ(1, mig_kv(UUID_A, "engine_stopped"));
	EXPECT_EQ(0, mig_kv(UUID_A, "tracking"));
	EXPECT_EQ(0, stream_read(dfd, &s));
	EXPECT_EQ(0, read(dfd, &i, 4));		/* EOF stays EOF */
	EXPECT_EQ(1, mig_kv(UUID_A, "saves"));
	EXPECT_LT(0, mig_kv(UUID_A, "last_stop_copy_ns"));
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(dfd);

	/* the source is quiet and holds work not done yet */
	for (i = 0; i < 6; i++)
		regs_a[i] = reg(a.device, regnums[i]);
	done_stop = regs_a[3];
	EXPECT_NE(regs_a[0], regs_a[1]);
	EXPECT_GT(2 * NPKT + 1, done_stop);
	usleep(100000);
	EXPECT_EQ(done_stop, reg(a.device, GPUVIRT_VGPU_REG_DONE_LO));
	EXPECT_EQ(regs_a[0], reg(a.device, GPUVIRT_VGPU_REG_RING_HEAD));

	/* the destination, as QEMU drives it */
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
	ASSERT_LE(0, rfd);
	EXPECT_TRUE(mig_state_is(UUID_B, "resuming"));
	EXPECT_EQ(0, stream_write(rfd, s.p, s.len));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	EXPECT_EQ(-1, write(rfd, s.p, 16));	/* the state moved on */
	EXPECT_EQ(ENODEV, errno);
	close(rfd);
	EXPECT_EQ(1, mig_kv(UUID_B, "resumes"));
	EXPECT_EQ(s.len, mig_kv(UUID_B, "bytes_resumed"));

	/* B is A as it stopped: registers, config space, VRAM */
	for (i = 0; i < 6; i++)
		EXPECT_EQ(regs_a[i], reg(b.device, regnums[i]));
	EXPECT_EQ(0x12345678, reg(b.device, GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_EQ(GPUVIRT_VGPU_IRQ_SW,
		  reg(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS) & GPUVIRT_VGPU_IRQ_SW);
	EXPECT_EQ(cfg_rd(a.device, PCI_BASE_ADDRESS_0, 4),
		  cfg_rd(b.device, PCI_BASE_ADDRESS_0, 4));
	EXPECT_EQ(0xfe000000, cfg_rd(b.device, PCI_BASE_ADDRESS_0, 4) & ~0xfu);
	EXPECT_EQ(cfg_rd(a.device, PCI_COMMAND, 2), cfg_rd(b.device, PCI_COMMAND, 2));
	EXPECT_EQ(0xfee00000, cfg_rd(b.device, 0x44, 4));
	EXPECT_EQ(0x4041, cfg_rd(b.device, 0x4c, 2));
	EXPECT_EQ(msi_on, cfg_rd(b.device, 0x42, 2));
	EXPECT_EQ(0, memcmp(va, vb, MAP_LEN));

	/* the workload carries on at B and its results are right */
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	EXPECT_EQ(0, mig_kv(UUID_B, "engine_stopped"));
	ra.device = b.device;
	EXPECT_EQ(0, vgpu_ring_idle(&ra, 60000));
	EXPECT_EQ(0, reg(b.device, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(2 * NPKT + 1, reg(b.device, GPUVIRT_VGPU_REG_DONE_LO));
	EXPECT_EQ(NPKT, reg(b.device, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_TRUE(results_ok(vb));
	/* and the source, stopped, did none of it */
	EXPECT_EQ(done_stop, reg(a.device, GPUVIRT_VGPU_REG_DONE_LO));

	munmap(va, MAP_LEN);
	munmap(vb, MAP_LEN);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

/* Resume @s into @fd; the errno of the write, or of RESUMING -> STOP. */
static int resume(int fd, const uint8_t *p, size_t len)
{
	int rfd, err;

	err = mig_set(fd, VFIO_DEVICE_STATE_RESUMING, &rfd);
	if (err)
		return err;
	err = stream_write(rfd, p, len) ?: mig_set(fd, VFIO_DEVICE_STATE_STOP, NULL);
	close(rfd);
	return err;
}

/*
 * An interrupt cause pending when the source stopped is pending at the
 * destination, whose VMM has new eventfds: the device signals it again
 * when it runs, on MSI (Bus Master on) and on INTx, as a level interrupt
 * that was never acknowledged would still be asserted. Not while stopped.
 */
TEST_F(mig, pending_interrupt_signalled_after_resume)
{
	static const struct {
		const char *name;
		bool msi;
	} how[] = { { "MSI", true }, { "INTx", false } };
	struct vfio_user a, b;
	unsigned int i;
	uint64_t n;
	int dfd, efd;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	for (i = 0; i < ARRAY_SIZE(how); i++) {
		struct stream s = { 0 };

		TH_LOG("%s", how[i].name);
		ASSERT_EQ(0, ioctl(a.device, VFIO_DEVICE_RESET));
		ASSERT_EQ(0, ioctl(b.device, VFIO_DEVICE_RESET));
		ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND,
				    PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2));
		if (how[i].msi) {
			ASSERT_EQ(0, cfg_wr(a.device, 0x44, 0xfee00000, 4));
			ASSERT_EQ(0, cfg_wr(a.device, 0x4c, 0x4041, 2));
			ASSERT_EQ(0, cfg_wr(a.device, 0x42, PCI_MSI_FLAGS_ENABLE |
					    PCI_MSI_FLAGS_64BIT, 2));
		}
		/* raised with no eventfd at the source: nobody saw it */
		ASSERT_EQ(0, vgpu_reg_write(a.device, GPUVIRT_VGPU_REG_IRQ_RAISE,
					    GPUVIRT_VGPU_IRQ_SW));
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
		ASSERT_EQ(0, stream_read(dfd, &s));
		close(dfd);
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));

		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, resume(b.device, s.p, s.len));
		stream_free(&s);
		efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ASSERT_LE(0, efd);
		ASSERT_EQ(0, vgpu_client_set_irq(b.device, how[i].msi ?
						 VFIO_PCI_MSI_IRQ_INDEX :
						 VFIO_PCI_INTX_IRQ_INDEX, efd));
		/* stopped: pending, not signalled */
		EXPECT_EQ(GPUVIRT_VGPU_IRQ_SW,
			  reg(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS));
		EXPECT_EQ(-1, read(efd, &n, sizeof(n)));
		EXPECT_EQ(EAGAIN, errno);
		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
		EXPECT_EQ((ssize_t)sizeof(n), read(efd, &n, sizeof(n)));
		EXPECT_EQ(1, n);
		/* acknowledged, it is not signalled again */
		ASSERT_EQ(0, vgpu_reg_write(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS,
					    GPUVIRT_VGPU_IRQ_SW));
		EXPECT_EQ(0, reg(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS));
		EXPECT_EQ(-1, read(efd, &n, sizeof(n)));
		ASSERT_EQ(0, vgpu_client_set_irq(b.device, how[i].msi ?
						 VFIO_PCI_MSI_IRQ_INDEX :
						 VFIO_PCI_INTX_IRQ_INDEX, -1));
		close(efd);
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	}
	vfio_close(&b);
	vfio_close(&a);
}

/* After a refusal: still RESUMING; a reset makes B reusable. */
static void back_to_running(struct __test_metadata *_metadata, int fd)
{
	EXPECT_EQ(VFIO_DEVICE_STATE_RESUMING, mig_get(fd));
	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_RESET));
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(fd));
}

/* Head @h's register @r. */
#define HEAD(h, r)	(GPUVIRT_VGPU_REG_HEAD(h) + GPUVIRT_VGPU_HEAD_##r)

/*
 * The display heads are the guest's too: a mode set on A's head 0 is on
 * B's after the move, with its flips, a vblank counter that goes on from
 * where it was, and the same primary plane for the VMM.
 */
TEST_F(mig, display_heads_travel)
{
	struct vfio_device_gfx_plane_info pa = { 0 }, pb = { 0 };
	struct vfio_user a, b;
	struct stream s = { 0 };
	uint32_t vblanks, flips;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_LE(1, reg(a.device, GPUVIRT_VGPU_REG_DISP_HEADS));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, BASE_LO), 0x100000));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, BASE_HI), 0));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, WIDTH), 640));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, HEIGHT), 480));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, STRIDE), 2560));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, FORMAT),
				    GPUVIRT_VGPU_FMT_XRGB8888));
	ASSERT_EQ(0, vgpu_reg_write(a.device, HEAD(0, CONTROL),
				    GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE, reg(a.device, HEAD(0, ERROR)));
	usleep(100000);
	vblanks = reg(a.device, HEAD(0, VBLANK));
	flips = reg(a.device, HEAD(0, FLIPS));
	EXPECT_LT(0, vblanks);
	EXPECT_EQ(1, flips);
	pa.argsz = sizeof(pa);
	pa.flags = VFIO_GFX_PLANE_TYPE_REGION;
	pa.drm_plane_type = 1;
	ASSERT_EQ(0, ioctl(a.device, VFIO_DEVICE_QUERY_GFX_PLANE, &pa));

	save_stopped(_metadata, a.device, &s);
	ASSERT_EQ(0, resume(b.device, s.p, s.len));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));

	EXPECT_EQ(GPUVIRT_VGPU_HEAD_CTRL_ENABLE, reg(b.device, HEAD(0, CONTROL)));
	EXPECT_EQ(0x100000, reg(b.device, HEAD(0, BASE_LO)));
	EXPECT_EQ(640, reg(b.device, HEAD(0, WIDTH)));
	EXPECT_EQ(480, reg(b.device, HEAD(0, HEIGHT)));
	EXPECT_EQ(2560, reg(b.device, HEAD(0, STRIDE)));
	EXPECT_EQ(GPUVIRT_VGPU_FMT_XRGB8888, reg(b.device, HEAD(0, FORMAT)));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_NONE, reg(b.device, HEAD(0, ERROR)));
	EXPECT_EQ(flips, reg(b.device, HEAD(0, FLIPS)));
	EXPECT_LE(vblanks, reg(b.device, HEAD(0, VBLANK)));
	pb.argsz = sizeof(pb);
	pb.flags = VFIO_GFX_PLANE_TYPE_REGION;
	pb.drm_plane_type = 1;
	ASSERT_EQ(0, ioctl(b.device, VFIO_DEVICE_QUERY_GFX_PLANE, &pb));
	EXPECT_EQ(pa.drm_format, pb.drm_format);
	EXPECT_EQ(pa.width, pb.width);
	EXPECT_EQ(pa.height, pb.height);
	EXPECT_EQ(pa.stride, pb.stride);
	EXPECT_EQ(pa.size, pb.size);
	EXPECT_EQ(640, pb.width);
	/* and the core's view of B agrees */
	{
		char path[256], *buf = malloc(4096);

		ASSERT_NE(NULL, buf);
		snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/display",
			 UUID_B);
		ASSERT_LT(0, gv_read(path, buf, 4096));
		EXPECT_NE(NULL, strstr(buf, "head0: enabled=1 vblank_irq=0 base=0x100000 width=640 height=480 stride=2560"))
			TH_LOG("%s", buf);
		free(buf);
	}
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

TEST_F(mig, bad_streams_are_refused)
{
	struct vfio_user a, b, c;
	struct stream s = { 0 };
	uint8_t *bad;
	uint16_t ver = 99;
	uint8_t buf[PAGE];

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_EQ(0, write_pages(a.device, 0, 5, 0x10));
	save_stopped(_metadata, a.device, &s);
	ASSERT_LT(HDR_SIZE + 5 * (REC_SIZE + PAGE), s.len);
	bad = malloc(s.len);
	ASSERT_NE(NULL, bad);

	/* truncated */
	EXPECT_EQ(-EINVAL, resume(b.device, s.p, s.len - 100));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "the stream ended early"));
	back_to_running(_metadata, b.device);

	/* unknown version */
	memcpy(bad, s.p, s.len);
	memcpy(bad + 4, &ver, 2);
	EXPECT_EQ(-EINVAL, resume(b.device, bad, s.len));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "unknown format version"));
	back_to_running(_metadata, b.device);

	/* corrupted page payload: the CRC in the end record */
	memcpy(bad, s.p, s.len);
	bad[HDR_SIZE + REC_SIZE + 100] ^= 0x01;
	EXPECT_EQ(-EINVAL, resume(b.device, bad, s.len));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "checksum mismatch"));
	back_to_running(_metadata, b.device);

	/* corrupted record header: a page outside the slice */
	memcpy(bad, s.p, s.len);
	memset(bad + HDR_SIZE + 8, 0xff, 8);
	EXPECT_EQ(-EINVAL, resume(b.device, bad, s.len));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "bad page record"));
	back_to_running(_metadata, b.device);

	/* replayed: the stream twice into one file */
	memcpy(bad, s.p, s.len);
	{
		int rfd;

		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
		EXPECT_EQ(0, stream_write(rfd, s.p, s.len));
		EXPECT_EQ(-EINVAL, stream_write(rfd, s.p, s.len));
		EXPECT_TRUE(gv_kmsg_find(self->kmsg, "data after the end record"));
		/* and nothing more is taken from it */
		EXPECT_EQ(-1, write(rfd, s.p, 1));
		EXPECT_EQ(EINVAL, errno);
		close(rfd);
		back_to_running(_metadata, b.device);
	}
	EXPECT_LE(5, mig_kv(UUID_B, "refused"));
	EXPECT_EQ(0, mig_kv(UUID_B, "resumes"));

	/* the destination is still good: the real stream goes in */
	EXPECT_EQ(0, resume(b.device, s.p, s.len));
	EXPECT_EQ(1, mig_kv(UUID_B, "resumes"));
	ASSERT_EQ(PAGE, pread(b.device, buf, PAGE,
			      VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) + 4 * PAGE * 7));
	EXPECT_EQ(0x14, buf[0]);
	EXPECT_EQ(0x14, buf[PAGE - 1]);
	EXPECT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));

	/* other type */
	ASSERT_EQ(0, vgpu_create(OTHER_TYPE, UUID_C));
	ASSERT_EQ(0, vfio_open(&c, UUID_C));
	EXPECT_EQ(-EINVAL, resume(c.device, s.p, s.len));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "it is of vGPU type " TYPE));
	back_to_running(_metadata, c.device);
	vfio_close(&c);

	free(bad);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

TEST_F(mig, forbidden_arcs_and_dead_fds)
{
	struct vfio_user a;
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	int dfd;
	uint8_t b;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	/* ERROR is never asked for; past the end of the enum */
	EXPECT_EQ(-EINVAL, mig_set(a.device, VFIO_DEVICE_STATE_ERROR, NULL));
	EXPECT_EQ(-EINVAL, mig_set(a.device, 99, NULL));
	if (!self->pre_copy)
		EXPECT_EQ(-EINVAL, mig_set(a.device, VFIO_DEVICE_STATE_PRE_COPY, NULL));
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(a.device));

	/* a reset mid-migration ends it; the file is dead */
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
	EXPECT_EQ(1, read(dfd, &b, 1));
	EXPECT_EQ(-1, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
	EXPECT_EQ(self->pre_copy ? EINVAL : ENOTTY, errno);
	EXPECT_EQ(0, ioctl(a.device, VFIO_DEVICE_RESET));
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(a.device));
	EXPECT_EQ(0, mig_kv(UUID_A, "engine_stopped"));
	EXPECT_EQ(-1, read(dfd, &b, 1));
	EXPECT_EQ(ENODEV, errno);
	close(dfd);

	/* a close mid-migration ends it; reopened, it is RUNNING */
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RESUMING, &dfd));
	vfio_close(&a);
	EXPECT_EQ(-1, write(dfd, &b, 1));
	EXPECT_EQ(ENODEV, errno);
	close(dfd);
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(a.device));

	/* removal while a data file is open: the file outlives the vGPU */
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
	vfio_close(&a);
	ASSERT_EQ(0, vgpu_remove(UUID_A));
	EXPECT_EQ(-1, read(dfd, &b, 1));
	EXPECT_EQ(ENODEV, errno);
	close(dfd);
}

/* gpuvirtctl, built next to the test or named by GPUVIRT_BIN */
static void ctl_path(char *buf, size_t len)
{
	const char *bin = getenv("GPUVIRT_BIN");

	snprintf(buf, len, "%s/gpuvirtctl", bin ? bin : "build/user");
}

/* Does the output of `gpuvirtctl ARGS` contain @needle? */
static bool ctl_has(const char *args, const char *needle)
{
	char cmd[512], line[8192];
	bool found = false;
	FILE *p;

	ctl_path(cmd, sizeof(cmd));
	strncat(cmd, " ", sizeof(cmd) - strlen(cmd) - 1);
	strncat(cmd, args, sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, needle) != NULL;
	pclose(p);
	return found;
}

/*
 * Netlink and gpuvirtctl report the state and the counters, and the
 * monitor group sees each state change as a vgpu change event.
 */
TEST_F(mig, netlink_and_monitor_report_migration)
{
	static const char *const want[] = { "stop", "stop-copy", "stop", "running" };
	char ctl[256], out[] = "/tmp/gv-mig-monXXXXXX", line[8192];
	struct stream s = { 0 };
	struct vfio_user a;
	unsigned int i, seen = 0;
	FILE *f;
	pid_t mon;
	int fd, dfd;

	ctl_path(ctl, sizeof(ctl));
	fd = mkstemp(out);
	ASSERT_LE(0, fd);
	mon = fork();
	ASSERT_LE(0, mon);
	if (!mon) {
		dup2(fd, 1);
		execl(ctl, "gpuvirtctl", "-j", "monitor", NULL);
		_exit(127);
	}
	/* until the monitor has printed one, it may not be subscribed yet */
	for (i = 0; i < 50 && lseek(fd, 0, SEEK_END) <= 0; i++) {
		ctl_has("sched set gpu 0 timeslice 0", "");
		usleep(200000);
	}
	EXPECT_LT(0, lseek(fd, 0, SEEK_END));

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, write_pages(a.device, 0, 3, 0x20));
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
	EXPECT_TRUE(ctl_has("-j vgpu show uuid " UUID_A,
			    "\"migration\":{\"state\":\"stop\""));
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
	EXPECT_EQ(0, stream_read(dfd, &s));
	EXPECT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(dfd);
	EXPECT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	EXPECT_TRUE(ctl_has("-j vgpu show uuid " UUID_A, "\"saves\":1,"));
	snprintf(line, sizeof(line), "\"bytes-saved\":%zu,", s.len);
	EXPECT_TRUE(ctl_has("-j vgpu show uuid " UUID_A, line));
	EXPECT_TRUE(ctl_has("-j vgpu show uuid " UUID_A,
			    "\"migration\":{\"state\":\"running\""));
	EXPECT_TRUE(ctl_has("vgpu show uuid " UUID_A, "migration running"));

	/* the events, in order */
	for (i = 0; i < 50; i++) {
		f = fopen(out, "r");
		ASSERT_NE(NULL, f);
		seen = 0;
		while (fgets(line, sizeof(line), f)) {
			char needle[64];

			if (seen == ARRAY_SIZE(want) || !strstr(line, UUID_A))
				continue;
			snprintf(needle, sizeof(needle),
				 "\"migration\":{\"state\":\"%s\"", want[seen]);
			if (strstr(line, "\"event\":\"change\"") &&
			    strstr(line, needle))
				seen++;
		}
		fclose(f);
		if (seen == ARRAY_SIZE(want))
			break;
		usleep(100000);
	}
	EXPECT_EQ(ARRAY_SIZE(want), seen);
	kill(mon, SIGTERM);
	waitpid(mon, NULL, 0);
	close(fd);
	unlink(out);
	stream_free(&s);
	vfio_close(&a);
}

/*
 * The client itself, checked against the kernel's own migration driver:
 * the mtty sample (v6.7+ has VFIO migration) goes through qemu_save() and
 * qemu_resume(), and its UART scratch registers travel.
 */
#define MTTY_TYPES	"/sys/class/mdev_bus/mtty/mdev_supported_types"

FIXTURE(mtty) {
	bool loaded;
};

FIXTURE_SETUP(mtty)
{
	const char *ko = getenv("GPUVIRT_KO_DIR");
	char cmd[512];

	if (!ko)
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	snprintf(cmd, sizeof(cmd), "%s/mdev-samples/mtty.ko", ko);
	if (!gv_exists(cmd))
		SKIP(return, "no %s (make mdev-samples KVER=...)", cmd);
	ASSERT_EQ(0, gv_unload_all());
	snprintf(cmd, sizeof(cmd),
		 "modprobe -a vfio mdev vfio_iommu_type1 && insmod %s/mdev-samples/mtty.ko",
		 ko);
	ASSERT_EQ(0, system(cmd));
	self->loaded = true;
	ASSERT_EQ(0, gv_write(MTTY_TYPES "/mtty-2/create", UUID_A));
	ASSERT_EQ(0, gv_write(MTTY_TYPES "/mtty-2/create", UUID_B));
}

FIXTURE_TEARDOWN(mtty)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_users); i++)
		if (open_users[i])
			vfio_close(open_users[i]);
	vgpu_remove(UUID_A);
	vgpu_remove(UUID_B);
	if (self->loaded && system("rmmod mtty"))
		fprintf(stderr, "# rmmod mtty failed\n");
}

static int uart_scr(int fd, unsigned int port, uint8_t *v, bool write)
{
	off_t off = VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX + port) + 7;
	ssize_t n = write ? pwrite(fd, v, 1, off) : pread(fd, v, 1, off);

	return n == 1 ? 0 : -errno;
}

TEST_F(mtty, client_migrates_the_kernel_sample)
{
	struct vfio_device_feature_migration mf = { 0 };
	struct vfio_user a, b;
	struct stream s = { 0 };
	uint8_t v0 = 0x5a, v1 = 0xa5, got;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	if (feature(a.device, VFIO_DEVICE_FEATURE_GET |
		    VFIO_DEVICE_FEATURE_MIGRATION, &mf, sizeof(mf)))
		SKIP(return, "this kernel's mtty has no VFIO migration");
	ASSERT_EQ(0, uart_scr(a.device, 0, &v0, true));
	ASSERT_EQ(0, uart_scr(a.device, 1, &v1, true));
	ASSERT_EQ(0, qemu_save(a.device,
			       !!(mf.flags & VFIO_MIGRATION_PRE_COPY), &s));
	EXPECT_EQ(VFIO_DEVICE_STATE_STOP, mig_get(a.device));
	EXPECT_LT(0, s.len);
	ASSERT_EQ(0, qemu_resume(b.device, &s));
	EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(b.device));
	ASSERT_EQ(0, uart_scr(b.device, 0, &got, false));
	EXPECT_EQ(v0, got);
	ASSERT_EQ(0, uart_scr(b.device, 1, &got, false));
	EXPECT_EQ(v1, got);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

/* The same client and sequence between two vGPUs, results checked. */
TEST_F(mig, client_sequence_on_vgpus)
{
	struct vfio_user a, b;
	struct stream s = { 0 };

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_EQ(0, write_pages(a.device, 1, 9, 0x30));
	ASSERT_EQ(0, vgpu_reg_write(a.device, GPUVIRT_VGPU_REG_SCRATCH, 0xc0ffee));
	ASSERT_EQ(0, qemu_save(a.device, self->pre_copy, &s));
	ASSERT_EQ(0, qemu_resume(b.device, &s));
	EXPECT_EQ(0xc0ffee, reg(b.device, GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_EQ(1, mig_kv(UUID_B, "resumes"));
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

/*
 * Security: a stream and the VMM that writes it are untrusted
 * (vgpu-abi.rst, "Security"). These tests patch a real stream as a hostile
 * VMM would, reseal it with a correct CRC, and check what the device then
 * shows and does.
 */

/* Record tags and the display's part of STATE (kernel/core/display.h). */
#define REC_PAGE	1
#define REC_STATE	3
#define REC_END		4
#define SAVED_MODE	24	/* base, width, height, stride, format */
#define SAVED_HEAD	(3 * SAVED_MODE + 32)
#define SAVED_HEADS	4	/* at the end of STATE */
#define NEIGHBOUR	171	/* the neighbour's pattern byte */
#define PLANE_W		256
#define PLANE_H		256
#define PLANE_LEN	(PLANE_W * 4 * PLANE_H)
#define SLICE		(4ULL << 30)	/* H200-4C */

/* The kernel's crc32_le(): reflected, polynomial 0xedb88320, no final xor. */
static uint32_t crc32_le(uint32_t crc, const uint8_t *p, size_t n)
{
	unsigned int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return crc;
}

/* The offset of the first record with @tag, or 0. */
static size_t stream_find(const struct stream *s, uint32_t tag)
{
	size_t off = HDR_SIZE;
	uint32_t t, len;

	while (off + REC_SIZE <= s->len) {
		memcpy(&t, s->p + off, 4);
		memcpy(&len, s->p + off + 4, 4);
		if (t == tag)
			return off;
		off += REC_SIZE + len;
	}
	return 0;
}

/* Recompute the END record's CRC, as a VMM forging a stream would. */
static void stream_reseal(struct stream *s)
{
	size_t end = stream_find(s, REC_END);
	uint64_t crc;

	if (!end)
		return;
	crc = crc32_le(~0U, s->p, end);
	memcpy(s->p + end + 8, &crc, 8);
}

/* Head @h of the STATE record in @s. */
static uint8_t *stream_head(const struct stream *s, unsigned int h)
{
	size_t st = stream_find(s, REC_STATE);
	uint32_t len;

	if (!st)
		return NULL;
	memcpy(&len, s->p + st + 4, 4);
	return s->p + st + REC_SIZE + len - SAVED_HEADS * SAVED_HEAD +
	       h * SAVED_HEAD;
}

/* Set a saved mode: which 0 staged, 1 active, 2 pending. */
static void saved_mode(uint8_t *head, unsigned int which, uint64_t base,
		       uint32_t w, uint32_t h, uint32_t stride)
{
	uint8_t *m = head + which * SAVED_MODE;
	uint32_t fmt = GPUVIRT_VGPU_FMT_XRGB8888;

	memcpy(m, &base, 8);
	memcpy(m + 8, &w, 4);
	memcpy(m + 12, &h, 4);
	memcpy(m + 16, &stride, 4);
	memcpy(m + 20, &fmt, 4);
}

/* How many bytes of @p are the neighbour's pattern. */
static size_t neighbour_bytes(const uint8_t *p, size_t n)
{
	size_t i, hits = 0;

	for (i = 0; i < n; i++)
		hits += p[i] == NEIGHBOUR;
	return hits;
}

/*
 * What the display region of @fd shows, by pread and through a mapping:
 * the bytes of the neighbour's pattern found in the first PLANE_LEN.
 */
static size_t display_leak(struct __test_metadata *_metadata, int fd)
{
	struct vfio_device_gfx_plane_info pl = {
		.argsz = sizeof(pl), .flags = VFIO_GFX_PLANE_TYPE_REGION,
	};
	struct vfio_region_info ri = {
		.argsz = sizeof(ri), .index = GPUVIRT_VGPU_DISPLAY_REGION,
	};
	uint8_t *buf = malloc(PLANE_LEN), *map;
	size_t hits;

	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_QUERY_GFX_PLANE, &pl));
	TH_LOG("plane: %ux%u stride %u size %u", pl.width, pl.height,
	       pl.stride, pl.size);
	EXPECT_EQ(PLANE_LEN, pread(fd, buf, PLANE_LEN,
				   VGPU_REGION(GPUVIRT_VGPU_DISPLAY_REGION)));
	hits = neighbour_bytes(buf, PLANE_LEN);
	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &ri));
	map = mmap(NULL, PLANE_LEN, PROT_READ, MAP_SHARED, fd, ri.offset);
	EXPECT_NE(MAP_FAILED, map);
	if (map != MAP_FAILED) {
		hits += neighbour_bytes(map, PLANE_LEN);
		munmap(map, PLANE_LEN);
	}
	free(buf);
	return hits;
}

/*
 * Finding of the review: a head that is off carried an active mode the
 * destination never checked, and the display region read it, so a stream
 * could point head 0 at a neighbour's slice, or past a page. Such a
 * stream is refused, or shows nothing outside the slice.
 */
/* A vGPU's vram-offset, from gpuvirtctl -j; ~0 if not found. */
static uint64_t vram_offset(const char *uuid)
{
	char cmd[512], line[8192], *k;
	uint64_t off = ~0ULL;
	FILE *p;

	ctl_path(cmd, sizeof(cmd));
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
		 " -j vgpu show uuid %s", uuid);
	p = popen(cmd, "r");
	if (!p)
		return off;
	while (fgets(line, sizeof(line), p)) {
		k = strstr(line, "\"vram-offset\":");
		if (k)
			off = strtoull(k + strlen("\"vram-offset\":"), NULL, 10);
	}
	pclose(p);
	return off;
}

TEST_F(mig, off_head_cannot_scan_out_past_the_slice)
{
	uint64_t bases[] = {
		0, 0, SLICE, SLICE - 2048, SLICE - PLANE_LEN / 2, 2048,
		SLICE + (64ULL << 30), ~0ULL & ~0xfffULL, -SLICE,
	};
	struct vfio_user a, b;
	struct stream s = { 0 }, bad = { 0 };
	uint8_t *pat = malloc(1 << 20), *head;
	unsigned int i, refused = 0;
	char line[512];
	int rc;

	ASSERT_NE(NULL, pat);
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	/* the neighbour B holds 1 MiB of its pattern at the start of its slice */
	memset(pat, NEIGHBOUR, 1 << 20);
	ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	ASSERT_EQ(1 << 20, pwrite(b.device, pat, 1 << 20,
				  VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	/* first, the neighbour's slice as seen from A's, and half a page short */
	ASSERT_NE(~0ULL, vram_offset(UUID_A));
	ASSERT_NE(~0ULL, vram_offset(UUID_B));
	bases[0] = vram_offset(UUID_B) - vram_offset(UUID_A);
	bases[1] = bases[0] - 2048;
	save_stopped(_metadata, a.device, &s);
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	bad.p = malloc(s.len);
	bad.len = s.len;
	ASSERT_NE(NULL, bad.p);

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		TH_LOG("head 0 off, active base 0x%llx",
		       (unsigned long long)bases[i]);
		memcpy(bad.p, s.p, s.len);
		head = stream_head(&bad, 0);
		ASSERT_NE(NULL, head);
		saved_mode(head, 1, bases[i], PLANE_W, PLANE_H, PLANE_W * 4);
		stream_reseal(&bad);
		rc = resume(a.device, bad.p, bad.len);
		if (rc) {
			EXPECT_EQ(-EINVAL, rc);
			EXPECT_TRUE(gv_kmsg_find(self->kmsg, "migration stream refused"));
			back_to_running(_metadata, a.device);
			refused++;
			continue;
		}
		ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
		EXPECT_EQ(0, display_leak(_metadata, a.device));
		/* what the hardware scans out: nothing, the head is off */
		snprintf(line, sizeof(line), VGPU_DEBUGFS "%s/display", UUID_A);
		EXPECT_EQ(0, gv_kv(line, "head0", line, sizeof(line)));
		EXPECT_NE(NULL, strstr(line, "enabled=0 ")) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, "base=0x0 ")) TH_LOG("%s", line);
	}
	TH_LOG("%u of %zu streams refused", refused, ARRAY_SIZE(bases));
	/* the neighbour is unharmed */
	ASSERT_EQ(1 << 20, pread(b.device, pat, 1 << 20,
				 VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(1u << 20, neighbour_bytes(pat, 1 << 20));
	free(pat);
	stream_free(&bad);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

/* Head 0 on at 640x480 with its vblank interrupt, on MSI to @efd. */
static void vblank_on(struct __test_metadata *_metadata, int fd, int efd)
{
	ASSERT_EQ(0, cfg_wr(fd, PCI_COMMAND,
			    PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2));
	ASSERT_EQ(0, cfg_wr(fd, 0x44, 0xfee00000, 4));
	ASSERT_EQ(0, cfg_wr(fd, 0x4c, 0x4041, 2));
	ASSERT_EQ(0, cfg_wr(fd, 0x42, PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_64BIT, 2));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, efd));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, BASE_LO), 0));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, BASE_HI), 0));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, WIDTH), 640));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, HEIGHT), 480));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, STRIDE), 640 * 4));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, FORMAT), GPUVIRT_VGPU_FMT_XRGB8888));
	ASSERT_EQ(0, vgpu_reg_write(fd, HEAD(0, CONTROL),
				    GPUVIRT_VGPU_HEAD_CTRL_ENABLE |
				    GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ));
}

/* Does @efd get signalled within @ms? Its count is consumed. */
static bool signalled(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(efd, &n, sizeof(n)) == sizeof(n);
}

/*
 * A stopped device raises no interrupt and changes no state (linux/vfio.h):
 * in STOP, STOP_COPY and RESUMING no eventfd is signalled and IRQ_STATUS
 * holds still, though head 0 asks for vblank interrupts; they come again
 * once the device runs. The wait is several frames at the type's 60 Hz.
 */
TEST_F(mig, stopped_device_raises_no_interrupt)
{
	static const uint32_t stops[] = {
		VFIO_DEVICE_STATE_STOP, VFIO_DEVICE_STATE_STOP_COPY,
	};
	struct vfio_user a, b;
	struct stream s = { 0 };
	uint32_t st;
	unsigned int i;
	int efd_a, efd_b, dfd = -1, rfd;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	efd_a = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	efd_b = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_LE(0, efd_a);
	ASSERT_LE(0, efd_b);
	vblank_on(_metadata, a.device, efd_a);
	ASSERT_TRUE(signalled(efd_a, 2000));	/* running: vblanks come */

	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
	for (i = 0; i < ARRAY_SIZE(stops); i++) {
		if (stops[i] == VFIO_DEVICE_STATE_STOP_COPY)
			ASSERT_EQ(0, mig_set(a.device, stops[i], &dfd));
		TH_LOG("state %u", stops[i]);
		signalled(efd_a, 0);	/* what came before the stop */
		st = reg(a.device, GPUVIRT_VGPU_REG_IRQ_STATUS);
		EXPECT_FALSE(signalled(efd_a, 300));
		EXPECT_EQ(st, reg(a.device, GPUVIRT_VGPU_REG_IRQ_STATUS));
	}
	ASSERT_EQ(0, stream_read(dfd, &s));
	close(dfd);
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	EXPECT_TRUE(signalled(efd_a, 2000));	/* and again once running */

	/* the destination: RESUMING, then STOP with the heads loaded */
	ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND,
			    PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2));
	ASSERT_EQ(0, vgpu_client_set_irq(b.device, VFIO_PCI_MSI_IRQ_INDEX, -1));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
	ASSERT_EQ(0, stream_write(rfd, s.p, s.len));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(rfd);
	ASSERT_EQ(0, vgpu_client_set_irq(b.device, VFIO_PCI_MSI_IRQ_INDEX, efd_b));
	st = reg(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS);
	EXPECT_FALSE(signalled(efd_b, 300));
	EXPECT_EQ(st, reg(b.device, GPUVIRT_VGPU_REG_IRQ_STATUS));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	EXPECT_TRUE(signalled(efd_b, 2000));

	vgpu_client_set_irq(a.device, VFIO_PCI_MSI_IRQ_INDEX, -1);
	vgpu_client_set_irq(b.device, VFIO_PCI_MSI_IRQ_INDEX, -1);
	close(efd_a);
	close(efd_b);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

struct writer {
	int fd;
	const uint8_t *p;
	size_t len;
	int err;
};

/*
 * Write the stream in record-sized pieces, its records over and over after
 * the header, until the file refuses.
 */
static void *writer_run(void *arg)
{
	struct writer *w = arg;
	size_t done = 0;
	ssize_t n;

	for (;;) {
		n = write(w->fd, w->p + done, w->len - done < REC_SIZE + PAGE ?
			  w->len - done : REC_SIZE + PAGE);
		if (n < 0) {
			w->err = errno;
			break;
		}
		done += n;
		if (done == w->len)
			done = HDR_SIZE;
	}
	return NULL;
}

/*
 * A reset during RESUMING ends the resume before it zeroes the slice: no
 * page of the stream lands after the zeroing. B has 64 MiB backed far up
 * its slice, so that zeroing takes long, while a writer keeps storing
 * pages near its start.
 */
#define RACE_PAGES	64
#define RACE_RECS	256
TEST_F(mig, reset_during_resume_stores_nothing_after)
{
	struct vfio_user a, b;
	struct stream s = { 0 };
	struct writer w;
	pthread_t t;
	uint8_t *forged, *pg = malloc(PAGE), *big = malloc(64 << 20);
	unsigned int i, round, stray = 0;
	size_t len;
	int rfd;

	ASSERT_NE(NULL, pg);
	ASSERT_NE(NULL, big);
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	save_stopped(_metadata, a.device, &s);
	/* the header, then page records of 0x5a over the first pages, no end */
	len = HDR_SIZE + (size_t)RACE_RECS * (REC_SIZE + PAGE);
	forged = malloc(len);
	ASSERT_NE(NULL, forged);
	memcpy(forged, s.p, HDR_SIZE);
	for (i = 0; i < RACE_RECS; i++) {
		uint8_t *r = forged + HDR_SIZE + (size_t)i * (REC_SIZE + PAGE);
		uint32_t tag = REC_PAGE, plen = PAGE;
		uint64_t arg = i % RACE_PAGES;

		memcpy(r, &tag, 4);
		memcpy(r + 4, &plen, 4);
		memcpy(r + 8, &arg, 8);
		memset(r + REC_SIZE, 0x5a, PAGE);
	}
	memset(big, 0x11, 64 << 20);

	for (round = 0; round < 5; round++) {
		ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
		ASSERT_EQ(64 << 20, pwrite(b.device, big, 64 << 20,
					   VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
					   (2ULL << 30)));
		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
		w = (struct writer){ .fd = rfd, .p = forged, .len = len };
		ASSERT_EQ(0, pthread_create(&t, NULL, writer_run, &w));
		usleep(50000);
		ASSERT_EQ(0, ioctl(b.device, VFIO_DEVICE_RESET));
		pthread_join(t, NULL);
		close(rfd);
		EXPECT_EQ(ENODEV, w.err);	/* the reset ended the resume */
		EXPECT_EQ(VFIO_DEVICE_STATE_RUNNING, mig_get(b.device));
		ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
		for (i = 0; i < RACE_PAGES; i++) {
			ASSERT_EQ(PAGE, pread(b.device, pg, PAGE,
					      VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
					      (uint64_t)i * PAGE));
			stray += !!memchr(pg, 0x5a, PAGE);
		}
	}
	TH_LOG("pages stored after the reset zeroed the slice: %u", stray);
	EXPECT_EQ(0, stray);
	free(forged);
	free(big);
	free(pg);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

/*
 * Pages whose every byte differs from its neighbours' and from the same
 * byte of other pages, so that a payload copied to the wrong place within
 * a page, or into another page, shows.
 */
static const unsigned int pat_pages[] = { 0, 1, 2, 3, 100, 4095 };

static uint8_t pat_byte(unsigned int pg, unsigned int i)
{
	return (uint8_t)(pg * 37 + i * 7 + (i >> 8) * 13 + 1);
}

static int pat_write(int fd)
{
	uint8_t buf[PAGE];
	unsigned int k, i;

	for (k = 0; k < ARRAY_SIZE(pat_pages); k++) {
		for (i = 0; i < PAGE; i++)
			buf[i] = pat_byte(pat_pages[k], i);
		if (pwrite(fd, buf, PAGE, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
			   (uint64_t)pat_pages[k] * PAGE) != PAGE)
			return -errno;
	}
	return 0;
}

/* Pages of the pattern that are not exactly in place in @fd's slice. */
static unsigned int pat_wrong(int fd)
{
	unsigned int k, i, wrong = 0;
	uint8_t buf[PAGE];

	for (k = 0; k < ARRAY_SIZE(pat_pages); k++) {
		if (pread(fd, buf, PAGE, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
			  (uint64_t)pat_pages[k] * PAGE) != PAGE) {
			wrong++;
			continue;
		}
		for (i = 0; i < PAGE; i++)
			if (buf[i] != pat_byte(pat_pages[k], i))
				break;
		wrong += i < PAGE;
	}
	return wrong;
}

/*
 * Read sizes and write pieces that end everywhere in a record: inside its
 * header, at its end, one byte into the payload, in the middle, one byte
 * short of the end, and across several records.
 */
static const size_t odd_sizes[] = {
	5, 11, 1, 2047, 2047, 1, 16, 4096, 3, 4113, 4112, 1, 15, 17, 8225,
};

static int stream_read_odd(int dfd, struct stream *s)
{
	unsigned int k = 0;
	ssize_t n;

	for (;;) {
		size_t want = odd_sizes[k++ % ARRAY_SIZE(odd_sizes)];

		if (s->cap - s->len < want) {
			s->cap = s->cap ? 2 * s->cap : 4u << 20;
			s->p = realloc(s->p, s->cap);
			if (!s->p)
				return -ENOMEM;
		}
		n = read(dfd, s->p + s->len, want);
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		s->len += n;
	}
}

static int stream_write_odd(int dfd, const uint8_t *p, size_t len)
{
	size_t done = 0, want;
	unsigned int k = 0;
	ssize_t n;

	while (done < len) {
		want = odd_sizes[k++ % ARRAY_SIZE(odd_sizes)];
		n = write(dfd, p + done, len - done < want ? len - done : want);
		if (n < 0)
			return -errno;
		done += n;
	}
	return 0;
}

/*
 * STOP_COPY sends a page from VRAM straight to the reader, and a resume
 * takes a payload straight into the destination's page: reads of any
 * size give the stream that large reads give, and writes that end
 * anywhere in a record put every byte in its place.
 */
TEST_F(mig, odd_reads_and_writes_carry_every_byte)
{
	struct stream big = { 0 }, odd = { 0 };
	struct vfio_user a, b;
	uint64_t pg;
	size_t st, off;
	uint32_t tag;
	unsigned int found = 0, i;
	int dfd, rfd;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	ASSERT_EQ(0, pat_write(a.device));
	ASSERT_EQ(0, pat_wrong(a.device));
	save_stopped(_metadata, a.device, &big);
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP_COPY, &dfd));
	EXPECT_EQ(0, stream_read_odd(dfd, &odd));
	close(dfd);
	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_STOP, NULL));

	/* the same records, up to the device state */
	st = stream_find(&big, REC_STATE);
	ASSERT_NE(0, st);
	ASSERT_EQ(big.len, odd.len);
	EXPECT_EQ(0, memcmp(big.p, odd.p, st));
	/* and every pattern page in it, byte for byte */
	for (off = HDR_SIZE; off < st; off += REC_SIZE + PAGE) {
		memcpy(&tag, odd.p + off, 4);
		memcpy(&pg, odd.p + off + 8, 8);
		ASSERT_EQ(REC_PAGE, tag);
		for (i = 0; i < PAGE; i++)
			if (odd.p[off + REC_SIZE + i] != pat_byte(pg, i))
				break;
		EXPECT_EQ(PAGE, i) TH_LOG("page %llu differs at byte %u",
					  (unsigned long long)pg, i);
		found++;
	}
	EXPECT_EQ(ARRAY_SIZE(pat_pages), found);

	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
	EXPECT_EQ(0, stream_write_odd(rfd, odd.p, odd.len));
	EXPECT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(rfd);
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	EXPECT_EQ(0, pat_wrong(b.device));
	EXPECT_EQ(1, mig_kv(UUID_B, "resumes"));
	EXPECT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	stream_free(&odd);
	stream_free(&big);
	vfio_close(&b);
	vfio_close(&a);
}

/*
 * While pre-copy tracks writes, a store through a BAR2 mapping dirties
 * the page it hit and no other: the pass after it carries exactly those
 * pages, though two of them share a 16-page block that a fault outside
 * tracking maps whole. Stores into a block mapped before tracking began
 * fault again, since tracking revokes every mapping as it starts.
 */
TEST_F(mig, precopy_store_dirties_only_its_page)
{
	static const uint64_t pages[] = { 0x800, 0x801, 0x90f };
	struct vfio_precopy_info pi = { .argsz = sizeof(pi) };
	struct stream s = { 0 };
	struct vfio_user a;
	unsigned int i, j, found = 0;
	uint64_t pg;
	uint32_t tag;
	uint8_t *va;
	size_t off;
	int dfd;

	if (!self->pre_copy)
		SKIP(return, "no pre-copy before Linux 6.2");
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	va = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		  VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, va);
	ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	va[0x800 * PAGE + 5 * PAGE] = 0x11;	/* maps 0x800..0x80f */

	ASSERT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_PRE_COPY, &dfd));
	ASSERT_LE(0, dfd);
	EXPECT_EQ(-ENOMSG, stream_read(dfd, &s));
	ASSERT_EQ(0, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
	EXPECT_EQ(0, pi.initial_bytes);
	EXPECT_EQ(0, pi.dirty_bytes);	/* a quiet device */
	stream_free(&s);

	for (i = 0; i < ARRAY_SIZE(pages); i++)
		va[pages[i] * PAGE + 8] = 0x77 + i;
	ASSERT_EQ(0, ioctl(dfd, VFIO_MIG_GET_PRECOPY_INFO, &pi));
	EXPECT_EQ(ARRAY_SIZE(pages) * (REC_SIZE + PAGE), pi.dirty_bytes);
	EXPECT_EQ(-ENOMSG, stream_read(dfd, &s));
	ASSERT_EQ(ARRAY_SIZE(pages) * (REC_SIZE + PAGE), s.len);
	for (off = 0; off + REC_SIZE + PAGE <= s.len; off += REC_SIZE + PAGE) {
		memcpy(&tag, s.p + off, 4);
		memcpy(&pg, s.p + off + 8, 8);
		ASSERT_EQ(REC_PAGE, tag);
		for (j = 0; j < ARRAY_SIZE(pages); j++)
			if (pages[j] == pg)
				break;
		ASSERT_GT(ARRAY_SIZE(pages), j)
			TH_LOG("page 0x%llx was sent", (unsigned long long)pg);
		EXPECT_EQ(0x77 + j, s.p[off + REC_SIZE + 8]);
		found |= 1u << j;
	}
	EXPECT_EQ((1u << ARRAY_SIZE(pages)) - 1, found);

	stream_free(&s);
	close(dfd);
	EXPECT_EQ(0, mig_set(a.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	munmap(va, MAP_LEN);
	vfio_close(&a);
}

/*
 * A page record naming a page outside the destination's slice is refused
 * when its header is complete, before any of its payload is taken, even
 * with a good CRC and written in pieces: the first page past the slice,
 * the first page of the neighbour's, and numbers whose byte offset wraps
 * around 64 bits to a page inside the slice or the neighbour's. Nothing
 * of the neighbour changes, and no VRAM is backed for any of it.
 */
TEST_F(mig, page_record_outside_the_slice_touches_nothing)
{
	const uint64_t npages = SLICE / PAGE;
	uint64_t args[] = {
		npages, npages + 1, 0, 1ULL << 52, 0, ~0ULL,
	};
	struct vfio_user a, b, *dst, *nb;
	struct stream s = { 0 }, bad = { 0 };
	uint8_t *buf = malloc(2 * PAGE);
	unsigned long long backed;
	uint64_t oa, ob;
	unsigned int i;
	size_t first;
	int rfd;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	/* the destination is the vGPU whose slice lies below the other's */
	oa = vram_offset(UUID_A);
	ob = vram_offset(UUID_B);
	ASSERT_NE(~0ULL, oa);
	ASSERT_NE(~0ULL, ob);
	dst = oa < ob ? &a : &b;
	nb = oa < ob ? &b : &a;
	args[2] = (oa < ob ? ob - oa : oa - ob) / PAGE;
	args[4] = (1ULL << 52) + args[2];
	ASSERT_LE(npages, args[2]);
	memset(buf, NEIGHBOUR, 2 * PAGE);
	ASSERT_EQ(0, cfg_wr(nb->device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	ASSERT_EQ(2 * PAGE, pwrite(nb->device, buf, 2 * PAGE,
				   VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	ASSERT_EQ(0, cfg_wr(dst->device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	ASSERT_EQ(0, write_pages(dst->device, 0, 2, 0x30));
	save_stopped(_metadata, dst->device, &s);
	first = stream_find(&s, REC_PAGE);
	ASSERT_EQ(HDR_SIZE, first);
	backed = gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "backed_pages");
	bad.p = malloc(s.len);
	bad.len = s.len;
	ASSERT_NE(NULL, bad.p);

	for (i = 0; i < ARRAY_SIZE(args); i++) {
		TH_LOG("page record for page 0x%llx", (unsigned long long)args[i]);
		memcpy(bad.p, s.p, s.len);
		memcpy(bad.p + first + 8, &args[i], 8);
		memset(bad.p + first + REC_SIZE, NEIGHBOUR ^ 0xff, PAGE);
		stream_reseal(&bad);
		ASSERT_EQ(0, mig_set(dst->device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, mig_set(dst->device, VFIO_DEVICE_STATE_RESUMING, &rfd));
		/* the header, then the bad record's header and half its payload */
		ASSERT_EQ(HDR_SIZE, write(rfd, bad.p, HDR_SIZE));
		EXPECT_EQ(-1, write(rfd, bad.p + first, REC_SIZE + PAGE / 2));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_TRUE(gv_kmsg_find(self->kmsg, "bad page record"));
		/* nothing more is taken, and the stream is refused */
		EXPECT_EQ(-1, write(rfd, bad.p + first + REC_SIZE + PAGE / 2,
				    bad.len - first - REC_SIZE - PAGE / 2));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-EINVAL, mig_set(dst->device, VFIO_DEVICE_STATE_STOP, NULL));
		close(rfd);
		back_to_running(_metadata, dst->device);
		ASSERT_EQ(0, mig_set(dst->device, VFIO_DEVICE_STATE_STOP, NULL));
		ASSERT_EQ(0, mig_set(dst->device, VFIO_DEVICE_STATE_RESUMING, &rfd));
		EXPECT_EQ(-EINVAL, stream_write_odd(rfd, bad.p, bad.len));
		close(rfd);
		back_to_running(_metadata, dst->device);
	}
	EXPECT_LE(2 * ARRAY_SIZE(args), mig_kv(dst == &a ? UUID_A : UUID_B,
					       "refused"));
	EXPECT_EQ(backed, gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "backed_pages"));
	/* the neighbour is unharmed */
	ASSERT_EQ(2 * PAGE, pread(nb->device, buf, 2 * PAGE,
				  VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(2 * PAGE, neighbour_bytes(buf, 2 * PAGE));
	/* and the real stream still goes in */
	EXPECT_EQ(0, resume(dst->device, s.p, s.len));
	free(buf);
	stream_free(&bad);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

#define HOST_CAP	"/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb"

/*
 * A resume write that fails after it consumed bytes (no backing under the
 * host memory cap) breaks the stream: a VMM that carries on gets EINVAL,
 * never a destination with a page silently zero. A write that faults on
 * the user's buffer consumes only what it reports.
 */
TEST_F(mig, failed_resume_write_breaks_the_stream)
{
	struct vfio_user a, b;
	struct stream s = { 0 };
	char cap[32] = "";
	uint8_t pg[PAGE], *two;
	size_t first, rest;
	ssize_t n;
	int rfd;

	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_EQ(0, write_pages(a.device, 0, 4, 0x40));
	save_stopped(_metadata, a.device, &s);
	first = stream_find(&s, REC_PAGE);
	ASSERT_EQ(HDR_SIZE, first);
	rest = first + REC_SIZE + PAGE;

	/* no backing: the first page record fails with ENOSPC */
	ASSERT_LT(0, gv_read(HOST_CAP, cap, sizeof(cap)));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
	ASSERT_EQ(HDR_SIZE, write(rfd, s.p, HDR_SIZE));
	ASSERT_EQ(0, gv_write(HOST_CAP, "0"));
	n = write(rfd, s.p + first, REC_SIZE + PAGE);
	EXPECT_EQ(-1, n);
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_EQ(0, gv_write(HOST_CAP, cap));
	/* carrying on is refused, and so is the stream */
	EXPECT_EQ(-1, write(rfd, s.p + rest, s.len - rest));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(rfd);
	if (mig_get(b.device) == VFIO_DEVICE_STATE_STOP) {
		/* taken anyway: then the page must be there */
		ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
		ASSERT_EQ(PAGE, pread(b.device, pg, PAGE,
				      VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
		EXPECT_EQ(0x40, pg[0]);
	}
	back_to_running(_metadata, b.device);

	/* a fault in the middle of a record: a short write, then the rest */
	two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	memcpy(two + PAGE - REC_SIZE - 100, s.p + first, REC_SIZE + 100);
	ASSERT_EQ(0, munmap(two + PAGE, PAGE));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RESUMING, &rfd));
	ASSERT_EQ(HDR_SIZE, write(rfd, s.p, HDR_SIZE));
	n = write(rfd, two + PAGE - REC_SIZE - 100, REC_SIZE + PAGE);
	TH_LOG("write across the hole: %zd (%s)", n, n < 0 ? strerror(errno) : "short");
	if (n < 0) {
		EXPECT_EQ(EFAULT, errno);
		n = 0;
	}
	EXPECT_GT(REC_SIZE + PAGE, n);
	EXPECT_EQ(0, stream_write(rfd, s.p + first + n, s.len - first - n));
	EXPECT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_STOP, NULL));
	close(rfd);
	ASSERT_EQ(0, mig_set(b.device, VFIO_DEVICE_STATE_RUNNING, NULL));
	ASSERT_EQ(0, cfg_wr(b.device, PCI_COMMAND, PCI_COMMAND_MEMORY, 2));
	ASSERT_EQ(PAGE, pread(b.device, pg, PAGE,
			      VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(0x40, pg[0]);
	EXPECT_EQ(0x40, pg[PAGE - 1]);
	munmap(two, PAGE);
	stream_free(&s);
	vfio_close(&b);
	vfio_close(&a);
}

TEST_HARNESS_MAIN
