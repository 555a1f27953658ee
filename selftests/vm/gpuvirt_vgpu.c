// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU types and the vGPU device, driven the way a VMM drives them: mdev
 * sysfs to create vGPUs, then the VFIO group API to open one, read its
 * config space, size its BARs, map its VRAM slice, take its interrupts and
 * reset it. Every result is checked against the simulated GPU's debugfs
 * "hardware" state where it has one. The negative suite passes oversized
 * ioctl arguments, races SET_IRQS against interrupts, turns Memory Space
 * and Bus Master off under a running user, removes a vGPU that is open
 * (the REQ interrupt), and switches a GPU to mixed-size mode.
 */
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "vgpu_client.h"
#include <linux/gpuvirt_vgpu.h>

#define NEW		GV_SIM_BUS "/new_device"
#define DEL		GV_SIM_BUS "/del_device"
#define TYPES		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define MDEVS		VGPU_MDEVS
#define UUID_A		"6a1f0b42-0000-4000-8000-00000000000a"
#define UUID_B		"6a1f0b42-0000-4000-8000-00000000000b"
#define REGION(i)	VGPU_REGION(i)

static int type_read(const char *type, const char *file, char *buf, size_t len)
{
	char path[256];
	int n;

	snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/%s", type, file);
	n = gv_read(path, buf, len);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n;
}

static int available(const char *type)
{
	char buf[32];

	if (type_read(type, "available_instances", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

static int vgpu_create(const char *type, const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/create", type);
	return gv_write(path, uuid);
}

static int vgpu_remove(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), MDEVS "/%s/remove", uuid);
	return gv_write(path, "1");
}

static unsigned long backed_pages(void)
{
	return gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "backed_pages");
}

/*
 * Users opened by the running test, closed by the teardown even when an
 * assertion cut the test short: removing a vGPU waits for its users, so a
 * test that still held one would wait for itself.
 */
static struct vfio_user *open_users[4];

static void vfio_track(struct vfio_user *u, bool add)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_users); i++) {
		if (add && !open_users[i]) {
			open_users[i] = u;
			return;
		}
		if (!add && open_users[i] == u)
			open_users[i] = NULL;
	}
}

static int vfio_open(struct vfio_user *u, const char *uuid)
{
	int err = vgpu_client_open(u, uuid);

	if (!err)
		vfio_track(u, true);
	return err;
}

static void vfio_close(struct vfio_user *u)
{
	vgpu_client_close(u);
	vfio_track(u, false);
}

static uint32_t cfg_rd(int fd, unsigned int off, unsigned int len)
{
	uint32_t v = 0;

	if (pread(fd, &v, len, REGION(VFIO_PCI_CONFIG_REGION_INDEX) + off) != len)
		return 0xdeadbeef;
	return v;
}

static int cfg_wr(int fd, unsigned int off, uint32_t v, unsigned int len)
{
	return pwrite(fd, &v, len, REGION(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
	       len ? 0 : -errno;
}

static uint32_t reg_rd(int fd, unsigned int reg)
{
	uint32_t v = 0;

	if (pread(fd, &v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) != 4)
		return 0xdeadbeef;
	return v;
}

static int reg_wr(int fd, unsigned int reg, uint32_t v)
{
	return pwrite(fd, &v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) == 4 ?
	       0 : -errno;
}

FIXTURE(vgpu) {
	int kmsg;
};

FIXTURE_SETUP(vgpu)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_setup_h200());
	self->kmsg = gv_kmsg_open();
}

FIXTURE_TEARDOWN(vgpu)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_users); i++)
		if (open_users[i])
			vfio_close(open_users[i]);
	vgpu_remove(UUID_A);
	vgpu_remove(UUID_B);
	if (self->kmsg >= 0)
		close(self->kmsg);
	gv_unload_all();
}

TEST_F(vgpu, types_match_reference)
{
	static const struct { const char *name; int max; unsigned int gb; } c[] = {
		{ "H200-141C", 1, 141 }, { "H200-70C", 2, 70 }, { "H200-35C", 4, 35 },
		{ "H200-28C", 5, 28 }, { "H200-17C", 8, 17 }, { "H200-14C", 10, 14 },
		{ "H200-8C", 16, 8 }, { "H200-7C", 20, 7 }, { "H200-4C", 32, 4 },
	};
	char buf[256], want[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		EXPECT_EQ(c[i].max, available(c[i].name)) TH_LOG("%s", c[i].name);
		ASSERT_LT(0, type_read(c[i].name, "name", buf, sizeof(buf)));
		EXPECT_STREQ(c[i].name, buf);
		ASSERT_LT(0, type_read(c[i].name, "device_api", buf, sizeof(buf)));
		EXPECT_STREQ("vfio-pci", buf);
		ASSERT_LT(0, type_read(c[i].name, "description", buf, sizeof(buf)));
		snprintf(want, sizeof(want), "framebuffer=%uM", c[i].gb * 1024);
		EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s: %s", c[i].name, buf);
		snprintf(want, sizeof(want), "max_instance=%d", c[i].max);
		EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s: %s", c[i].name, buf);
		EXPECT_NE(NULL, strstr(buf, "series=C"));
	}
	/* the other series are offered too */
	EXPECT_EQ(4, available("H200-35Q"));
	EXPECT_LT(0, available("H200-1B"));
	EXPECT_LT(0, available("H200-4A"));
}

TEST_F(vgpu, accounting_is_exact_and_homogeneous)
{
	char uuid[64];
	int i;

	/* fill H200-35C: 4 instances */
	for (i = 0; i < 4; i++) {
		snprintf(uuid, sizeof(uuid), "6a1f0b42-0000-4000-8000-0000000001%02d", i);
		ASSERT_EQ(0, vgpu_create("H200-35C", uuid));
		EXPECT_EQ(3 - i, available("H200-35C"));
		/* homogeneous: every other type is closed */
		EXPECT_EQ(0, available("H200-70C"));
		EXPECT_EQ(0, available("H200-35Q"));
	}
	EXPECT_EQ(-ENOSPC, vgpu_create("H200-35C", UUID_A));
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_A));
	EXPECT_EQ(-EBUSY, vgpu_create("H200-4C", UUID_A));
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_A));

	/* an existing UUID is refused */
	EXPECT_EQ(-EEXIST, vgpu_create("H200-35C",
				       "6a1f0b42-0000-4000-8000-000000000100"));

	/* remove one from the middle, a new one takes its place */
	ASSERT_EQ(0, vgpu_remove("6a1f0b42-0000-4000-8000-000000000102"));
	EXPECT_EQ(1, available("H200-35C"));
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	EXPECT_EQ(0, available("H200-35C"));
	ASSERT_EQ(0, vgpu_remove(UUID_A));

	for (i = 0; i < 4; i++) {
		snprintf(uuid, sizeof(uuid), "6a1f0b42-0000-4000-8000-0000000001%02d", i);
		vgpu_remove(uuid);
	}
	/* all gone: every type is open again */
	EXPECT_EQ(4, available("H200-35C"));
	EXPECT_EQ(2, available("H200-70C"));
	EXPECT_EQ(32, available("H200-4C"));
}

TEST_F(vgpu, gpu_removal_takes_vgpus)
{
	ASSERT_EQ(0, vgpu_create("H200-70C", UUID_A));
	ASSERT_EQ(0, vgpu_create("H200-70C", UUID_B));
	ASSERT_EQ(0, gv_write(DEL, "0"));
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_A));
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_B));
	EXPECT_FALSE(gv_exists("/sys/bus/gpuvirt_sim/devices/sim0/gpu"));
}

TEST_F(vgpu, device_info_and_config_space)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	struct vfio_region_info ri = { .argsz = sizeof(ri) };
	struct vfio_user u;
	unsigned int off, w;
	uint32_t v;
	int fd;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	fd = u.device;

	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	EXPECT_TRUE(info.flags & VFIO_DEVICE_FLAGS_PCI);
	EXPECT_TRUE(info.flags & VFIO_DEVICE_FLAGS_RESET);
	EXPECT_EQ(GPUVIRT_VGPU_DISPLAY_REGION + 1, info.num_regions);
	EXPECT_EQ(VFIO_PCI_NUM_IRQS, info.num_irqs);
	/* argsz below the minimum */
	info.argsz = 4;
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(GPUVIRT_VGPU_PCI_VENDOR_ID, cfg_rd(fd, 0, 2));
	EXPECT_EQ(GPUVIRT_VGPU_PCI_DEVICE_ID, cfg_rd(fd, 2, 2));
	EXPECT_EQ(GPUVIRT_VGPU_PCI_CLASS, cfg_rd(fd, 8, 4) >> 8);
	EXPECT_EQ(GPUVIRT_VGPU_PCI_REVISION, cfg_rd(fd, 8, 1));
	EXPECT_TRUE(cfg_rd(fd, 6, 2) & 0x10);		/* capability list */
	EXPECT_EQ(0x40, cfg_rd(fd, 0x34, 1));
	EXPECT_EQ(0x05, cfg_rd(fd, 0x40, 1));		/* MSI */
	EXPECT_EQ(1, cfg_rd(fd, 0x3d, 1));		/* INTA# */

	/* every offset and width reads; read-only fields ignore writes */
	for (w = 1; w <= 4; w *= 2)
		for (off = 0; off + w <= 256; off += w)
			ASSERT_NE(0xdeadbeef, cfg_rd(fd, off, w)) TH_LOG("%u/%u", off, w);
	EXPECT_EQ(0, cfg_wr(fd, 0, 0xffffffff, 4));
	EXPECT_EQ(GPUVIRT_VGPU_PCI_VENDOR_ID, cfg_rd(fd, 0, 2));
	EXPECT_EQ(0, cfg_wr(fd, 8, 0, 4));
	EXPECT_EQ(GPUVIRT_VGPU_PCI_CLASS, cfg_rd(fd, 8, 4) >> 8);
	/* past the end */
	EXPECT_EQ(-1, pread(fd, &v, 4, REGION(VFIO_PCI_CONFIG_REGION_INDEX) + 256));

	/* BAR sizing: BAR0 4 KiB, BAR2 the slice rounded up to a power of 2 */
	EXPECT_EQ(0, cfg_wr(fd, 0x10, 0xffffffff, 4));
	EXPECT_EQ(0xfffff000, cfg_rd(fd, 0x10, 4));
	EXPECT_EQ(0, cfg_wr(fd, 0x18, 0xffffffff, 4));
	EXPECT_EQ(0, cfg_wr(fd, 0x1c, 0xffffffff, 4));
	EXPECT_EQ(0x0000000c, cfg_rd(fd, 0x18, 4));	/* 64-bit, prefetchable */
	EXPECT_EQ(0xfffffff0, cfg_rd(fd, 0x1c, 4));	/* 64 GiB */

	ri.index = VFIO_PCI_BAR2_REGION_INDEX;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &ri));
	EXPECT_EQ(64ULL << 30, ri.size);
	EXPECT_TRUE(ri.flags & VFIO_REGION_INFO_FLAG_MMAP);
	EXPECT_TRUE(ri.flags & VFIO_REGION_INFO_FLAG_CAPS);
	EXPECT_LT(sizeof(ri), ri.argsz);	/* asks for room for the sparse cap */
	ri.index = GPUVIRT_VGPU_DISPLAY_REGION + 1;
	ri.argsz = sizeof(ri);
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &ri));
	EXPECT_EQ(EINVAL, errno);

	/* BAR0 registers */
	EXPECT_EQ(GPUVIRT_VGPU_MAGIC, reg_rd(fd, GPUVIRT_VGPU_REG_MAGIC));
	EXPECT_EQ(GPUVIRT_VGPU_VERSION, reg_rd(fd, GPUVIRT_VGPU_REG_VERSION));
	EXPECT_EQ(35ULL << 30, reg_rd(fd, GPUVIRT_VGPU_REG_VRAM_SIZE_LO) |
	      (uint64_t)reg_rd(fd, GPUVIRT_VGPU_REG_VRAM_SIZE_HI) << 32);
	EXPECT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_SCRATCH, 0x5a5a1234));
	EXPECT_EQ(0x5a5a1234, reg_rd(fd, GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_MAGIC, 0));
	EXPECT_EQ(GPUVIRT_VGPU_MAGIC, reg_rd(fd, GPUVIRT_VGPU_REG_MAGIC));

	/* reset restores config space and registers */
	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_RESET));
	EXPECT_EQ(0, reg_rd(fd, GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_EQ(0, cfg_rd(fd, 0x10, 4));
	vfio_close(&u);
}

TEST_F(vgpu, vram_mmap_isolation_and_reset)
{
	const size_t len = 4 << 20;
	struct vfio_user a, b;
	unsigned long before;
	uint8_t *ma, *mb, buf[4096];
	size_t i;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_B));
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));

	before = backed_pages();
	EXPECT_EQ(0, before);	/* nothing backed until touched */
	(void)before;

	ma = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		  REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, ma);
	for (i = 0; i < len; i++)
		ma[i] = (uint8_t)(i * 7 + 1);
	/* the hardware backed exactly what was touched */
	EXPECT_EQ(len / 4096, backed_pages());

	/* pread sees what the mapping wrote */
	ASSERT_EQ(sizeof(buf), pread(a.device, buf, sizeof(buf),
				     REGION(VFIO_PCI_BAR2_REGION_INDEX) + 8192));
	for (i = 0; i < sizeof(buf); i++)
		ASSERT_EQ((uint8_t)((8192 + i) * 7 + 1), buf[i]);

	/* the other vGPU sees zeros, through mmap and pread */
	mb = mmap(NULL, len, PROT_READ, MAP_SHARED, b.device,
		  REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, mb);
	for (i = 0; i < len; i += 512)
		ASSERT_EQ(0, mb[i]) TH_LOG("vGPU B sees A's data at %zu", i);
	ASSERT_EQ(sizeof(buf), pread(b.device, buf, sizeof(buf),
				     REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	for (i = 0; i < sizeof(buf); i++)
		ASSERT_EQ(0, buf[i]);

	/* mappings beyond the slice, or private, are refused */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, a.device,
				   REGION(VFIO_PCI_BAR2_REGION_INDEX) + (35ULL << 30)));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, a.device,
				   REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, a.device,
				   REGION(VFIO_PCI_BAR0_REGION_INDEX)));
	/* past the slice, inside the BAR: reads zero */
	ASSERT_EQ(16, pread(a.device, buf, 16,
			    REGION(VFIO_PCI_BAR2_REGION_INDEX) + (35ULL << 30)));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, buf[i]);

	/* reset: the slice reads zero, even through the live mapping */
	EXPECT_EQ(0, ioctl(a.device, VFIO_DEVICE_RESET));
	for (i = 0; i < len; i += 512)
		ASSERT_EQ(0, ma[i]) TH_LOG("not zero after reset at %zu", i);

	munmap(ma, len);
	munmap(mb, len);
	vfio_close(&a);
	vfio_close(&b);

	/*
	 * Recreate: fresh, zeroed VRAM, and A's backing is freed. B's reads
	 * through its mapping backed its pages too.
	 */
	ASSERT_EQ(0, vgpu_remove(UUID_A));
	EXPECT_EQ(len / 4096, backed_pages());
	ASSERT_EQ(0, vgpu_remove(UUID_B));
	EXPECT_EQ(0, backed_pages());
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(sizeof(buf), pread(a.device, buf, sizeof(buf),
				     REGION(VFIO_PCI_BAR2_REGION_INDEX) + 8192));
	for (i = 0; i < sizeof(buf); i++)
		ASSERT_EQ(0, buf[i]);
	vfio_close(&a);
}

TEST_F(vgpu, host_memory_cap_and_fault_knob)
{
	static uint8_t buf[1 << 20];
	struct vfio_user u;

	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, vgpu_create("H200-141C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));

	/* fault knob: the next allocation fails, cleanly */
	ASSERT_EQ(0, gv_write(GV_SIM_DEBUGFS "/sim0/fail_vram_alloc", "1"));
	EXPECT_EQ(-1, pwrite(u.device, buf, 4096, REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(0, backed_pages());
	EXPECT_EQ(4096, pwrite(u.device, buf, 4096, REGION(VFIO_PCI_BAR2_REGION_INDEX)));

	/* a 1 MiB host cap: the second MiB is refused with ENOSPC, no OOM */
	ASSERT_EQ(0, gv_write("/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb", "1"));
	EXPECT_EQ(sizeof(buf) - 4096,
		  pwrite(u.device, buf, sizeof(buf) - 4096,
			 REGION(VFIO_PCI_BAR2_REGION_INDEX) + 4096));
	EXPECT_EQ(-1, pwrite(u.device, buf, 4096,
			     REGION(VFIO_PCI_BAR2_REGION_INDEX) + (1 << 20)));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(256, backed_pages());
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "host_mem_cap_mb=1 reached"));
	ASSERT_EQ(0, gv_write("/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb", "512"));
	vfio_close(&u);
}

static int wait_eventfd(int efd, int ms)
{
	struct pollfd p = { efd, POLLIN, 0 };
	uint64_t cnt;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	return read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) ? (int)cnt : -EIO;
}

static int set_irq_none(int fd, unsigned int index, unsigned int action,
			unsigned int count)
{
	struct vfio_irq_set s = {
		.argsz = sizeof(s),
		.flags = VFIO_IRQ_SET_DATA_NONE | action,
		.index = index, .start = 0, .count = count,
	};

	return ioctl(fd, VFIO_DEVICE_SET_IRQS, &s) ? -errno : 0;
}

TEST_F(vgpu, interrupts)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii) };
	struct vfio_user u;
	int fd, msi, intx;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	fd = u.device;

	ii.index = VFIO_PCI_INTX_IRQ_INDEX;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ii));
	EXPECT_EQ(1, ii.count);
	ii.index = VFIO_PCI_MSI_IRQ_INDEX;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ii));
	EXPECT_EQ(1, ii.count);
	ii.index = VFIO_PCI_MSIX_IRQ_INDEX;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ii));
	EXPECT_EQ(0, ii.count);

	/* misuse: trigger before any eventfd, an index without vectors */
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSIX_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_MASK, 1));
	EXPECT_EQ(-EBADF, vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, 12345));
	EXPECT_EQ(-EINVAL, vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, -2));

	/* MSI: enabled in config space, raised through the register */
	msi = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	intx = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, msi));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_INTX_IRQ_INDEX, intx));
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 1, 2));	/* MSI enable */
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1, wait_eventfd(msi, 2000));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(intx, 100));
	EXPECT_EQ(GPUVIRT_VGPU_IRQ_SW, reg_rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(0, reg_rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));

	/* INTx when MSI is off; masked INTx stays quiet until unmasked */
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 0, 2));
	ASSERT_EQ(0, set_irq_none(fd, VFIO_PCI_INTX_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_MASK, 1));
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(intx, 100));
	ASSERT_EQ(0, set_irq_none(fd, VFIO_PCI_INTX_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_UNMASK, 1));
	EXPECT_EQ(1, wait_eventfd(intx, 2000));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(msi, 100));

	/* the VMM's own trigger, and disabling */
	EXPECT_EQ(0, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	EXPECT_EQ(1, wait_eventfd(msi, 2000));
	EXPECT_EQ(0, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_TRIGGER, 0));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	close(msi);
	close(intx);
	vfio_close(&u);
}

TEST_F(vgpu, remove_while_open)
{
	struct vfio_user u;
	uint8_t *m;
	pid_t pid;
	int st;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, u.device,
		 REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0x3c, 1 << 20);

	/* remove blocks until the user lets go, then completes */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* the child must not hold the device itself */
		munmap(m, 1 << 20);
		vfio_close(&u);
		_exit(vgpu_remove(UUID_A) ? 1 : 0);
	}
	usleep(500 * 1000);
	EXPECT_EQ(0, waitpid(pid, &st, WNOHANG));
	munmap(m, 1 << 20);
	vfio_close(&u);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_A));
	EXPECT_EQ(0, backed_pages());
	EXPECT_EQ(4, available("H200-35C"));
}

/* A ring of 4 KiB at slice offset 0, written through the BAR2 mapping. */
struct ring {
	int fd;
	uint32_t *vram;		/* the first 8 MiB of the slice, mapped */
	uint32_t tail;		/* bytes */
};

#define RING_MAP	(8u << 20)

static int ring_setup(struct ring *r, int fd)
{
	r->fd = fd;
	r->tail = 0;
	r->vram = mmap(NULL, RING_MAP, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (r->vram == MAP_FAILED)
		return -errno;
	return reg_wr(fd, GPUVIRT_VGPU_REG_RING_BASE_LO, 0) ?:
	       reg_wr(fd, GPUVIRT_VGPU_REG_RING_BASE_HI, 0) ?:
	       reg_wr(fd, GPUVIRT_VGPU_REG_RING_SIZE, 4096);
}

static void ring_put(struct ring *r, const uint32_t *dw, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		r->vram[r->tail / 4] = dw[i];
		r->tail = (r->tail + 4) & 4095;
	}
}

static int ring_kick(struct ring *r)
{
	return reg_wr(r->fd, GPUVIRT_VGPU_REG_RING_TAIL, r->tail);
}

/* Wait until the engine has taken everything or stopped; 0 or -ETIMEDOUT. */
static int ring_idle(struct ring *r, int ms)
{
	for (; ms > 0; ms -= 10) {
		uint32_t st = reg_rd(r->fd, GPUVIRT_VGPU_REG_STATUS);

		if (!(st & GPUVIRT_VGPU_STATUS_BUSY) ||
		    (st & GPUVIRT_VGPU_STATUS_ERROR))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static uint64_t compute_ref(uint32_t seed, uint32_t rounds)
{
	uint64_t x = seed;

	while (rounds--)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	return x;
}

TEST_F(vgpu, ring_runs_packets)
{
	const uint32_t fill[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0),
				  0x10000, 0, 0x100000, 0, 0xc0ffee11 };
	const uint32_t copy[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COPY, 7, 0),
				  0x200000, 0, 0x10000, 0, 0x2000, 0 };
	const uint32_t comp[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
				  300, 0x300000, 0, 77 };
	const uint32_t nop[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_NOP, 1, 0) };
	const uint32_t fence[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
						    GPUVIRT_VGPU_PKT_FLAG_IRQ),
				   42, 0x400000, 0 };
	struct vfio_user u;
	struct ring r;
	uint64_t res;
	int msi;
	unsigned int i;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	EXPECT_TRUE(reg_rd(u.device, GPUVIRT_VGPU_REG_CAPS) & GPUVIRT_VGPU_CAP_RING);
	ASSERT_EQ(0, ring_setup(&r, u.device));
	msi = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_EQ(0, vgpu_client_set_irq(u.device, VFIO_PCI_MSI_IRQ_INDEX, msi));
	ASSERT_EQ(0, cfg_wr(u.device, 0x42, 1, 2));

	ring_put(&r, fill, 6);
	ring_put(&r, copy, 7);
	ring_put(&r, comp, 5);
	ring_put(&r, nop, 1);
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	ASSERT_EQ(1, wait_eventfd(msi, 10000));

	EXPECT_EQ(42, reg_rd(u.device, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_EQ(5, reg_rd(u.device, GPUVIRT_VGPU_REG_DONE_LO));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(r.tail, reg_rd(u.device, GPUVIRT_VGPU_REG_RING_HEAD));
	EXPECT_TRUE(reg_rd(u.device, GPUVIRT_VGPU_REG_IRQ_STATUS) &
		    GPUVIRT_VGPU_IRQ_FENCE);
	/* the work really happened in VRAM */
	for (i = 0; i < 0x100000 / 4; i += 97)
		ASSERT_EQ(0xc0ffee11, r.vram[0x10000 / 4 + i]) TH_LOG("fill @%u", i);
	EXPECT_EQ(0, r.vram[(0x10000 + 0x100000) / 4]);	/* and no further */
	for (i = 0; i < 0x2000 / 4; i++)
		ASSERT_EQ(0xc0ffee11, r.vram[0x200000 / 4 + i]);
	EXPECT_EQ(0, r.vram[(0x200000 + 0x2000) / 4]);
	memcpy(&res, &r.vram[0x300000 / 4], 8);
	EXPECT_EQ(compute_ref(77, 300), res);
	EXPECT_EQ(42, r.vram[0x400000 / 4]);

	munmap(r.vram, RING_MAP);
	close(msi);
	vfio_close(&u);
}

TEST_F(vgpu, ring_bad_packets_stop_only_this_vgpu)
{
	const uint32_t outside[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0),
				     0, 9, 0x1000, 0, 1 };	/* dst 36 GiB */
	const uint32_t straddle[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COPY, 7, 0),
				      0x100000, 0, 0xbffff000, 8, 0x2000, 0 };
	const uint32_t badop[] = { GPUVIRT_VGPU_PKT(0x77, 1, 0) };
	const uint32_t badlen[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 2, 0), 1 };
	const uint32_t misaligned[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0),
					1, 0x1001, 0 };
	const uint32_t fence[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0),
				   7, 0xffffffff, 0xffffffff };
	const uint32_t longcomp[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
				      GPUVIRT_VGPU_COMPUTE_MAX_US + 1, 0x1000, 0, 1 };
	const struct { const uint32_t *p; unsigned int n; uint32_t err; } bad[] = {
		{ longcomp, 5, GPUVIRT_VGPU_ERR_ARG },
		{ outside, 6, GPUVIRT_VGPU_ERR_ADDRESS },
		{ straddle, 7, GPUVIRT_VGPU_ERR_ADDRESS },
		{ badop, 1, GPUVIRT_VGPU_ERR_OPCODE },
		{ badlen, 2, GPUVIRT_VGPU_ERR_LENGTH },
		{ misaligned, 4, GPUVIRT_VGPU_ERR_ALIGN },
	};
	struct vfio_user u;
	struct ring r;
	unsigned int i;
	uint32_t head;
	int msi;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	ASSERT_EQ(0, ring_setup(&r, u.device));
	msi = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_EQ(0, vgpu_client_set_irq(u.device, VFIO_PCI_MSI_IRQ_INDEX, msi));
	ASSERT_EQ(0, cfg_wr(u.device, 0x42, 1, 2));

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		head = r.tail;
		ring_put(&r, bad[i].p, bad[i].n);
		ASSERT_EQ(0, ring_kick(&r));
		ASSERT_EQ(1, wait_eventfd(msi, 5000)) TH_LOG("case %u", i);
		EXPECT_EQ(bad[i].err, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR))
			TH_LOG("case %u", i);
		EXPECT_EQ(head, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR_HEAD));
		EXPECT_TRUE(reg_rd(u.device, GPUVIRT_VGPU_REG_STATUS) &
			    GPUVIRT_VGPU_STATUS_ERROR);
		EXPECT_TRUE(reg_rd(u.device, GPUVIRT_VGPU_REG_IRQ_STATUS) &
			    GPUVIRT_VGPU_IRQ_ERROR);
		/* clear and go on: the next good packet runs */
		ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
		ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_CONTROL,
				    GPUVIRT_VGPU_CTRL_CLEAR_ERROR));
		EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));
		ring_put(&r, fence, 4);
		ASSERT_EQ(0, ring_kick(&r));
		ASSERT_EQ(0, ring_idle(&r, 5000));
		EXPECT_EQ(7, reg_rd(u.device, GPUVIRT_VGPU_REG_FENCE));
		ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	}

	/* a garbage ring: stops with some error, never hurts the host */
	for (i = 0; i < 1024; i++)
		r.vram[i] = 0x9e3779b9u * (i + 1);
	r.tail = 4092;
	ASSERT_EQ(0, ring_kick(&r));
	ASSERT_EQ(0, ring_idle(&r, 5000));
	EXPECT_TRUE(reg_rd(u.device, GPUVIRT_VGPU_REG_STATUS) &
		    GPUVIRT_VGPU_STATUS_ERROR);

	/*
	 * A tail outside the ring is refused and not kept: clearing the error
	 * cannot move HEAD outside the ring (and so outside the slice).
	 */
	ASSERT_EQ(0, ioctl(u.device, VFIO_DEVICE_RESET));
	munmap(r.vram, RING_MAP);
	ASSERT_EQ(0, ring_setup(&r, u.device));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_RING_TAIL, 0x80000));
	EXPECT_EQ(GPUVIRT_VGPU_ERR_RING, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_RING_TAIL));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_CONTROL,
			    GPUVIRT_VGPU_CTRL_CLEAR_ERROR));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_RING_HEAD));
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	ASSERT_EQ(0, ring_idle(&r, 5000));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(r.tail, reg_rd(u.device, GPUVIRT_VGPU_REG_RING_HEAD));

	/* a bad ring setup is refused at the doorbell */
	ASSERT_EQ(0, ioctl(u.device, VFIO_DEVICE_RESET));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_RING_SIZE, 3000));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_RING_TAIL, 4));
	EXPECT_EQ(GPUVIRT_VGPU_ERR_RING, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));

	/* after reset the vGPU works again */
	ASSERT_EQ(0, ioctl(u.device, VFIO_DEVICE_RESET));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));
	munmap(r.vram, RING_MAP);
	ASSERT_EQ(0, ring_setup(&r, u.device));
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	ASSERT_EQ(0, ring_idle(&r, 5000));
	EXPECT_EQ(7, reg_rd(u.device, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_EQ(0, reg_rd(u.device, GPUVIRT_VGPU_REG_ERROR));

	munmap(r.vram, RING_MAP);
	close(msi);
	vfio_close(&u);
}

TEST_F(vgpu, two_vgpus_share_the_engine)
{
	const uint32_t comp[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
				  2000, 0x100000, 0, 5 };
	struct vfio_user a, b;
	struct ring ra, rb;
	unsigned int i;
	uint64_t res;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_B));
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	ASSERT_EQ(0, ring_setup(&ra, a.device));
	ASSERT_EQ(0, ring_setup(&rb, b.device));
	/* 10 x 2 ms of modelled work each */
	for (i = 0; i < 10; i++) {
		ring_put(&ra, comp, 5);
		ring_put(&rb, comp, 5);
	}
	ASSERT_EQ(0, ring_kick(&ra));
	ASSERT_EQ(0, ring_kick(&rb));
	ASSERT_EQ(0, ring_idle(&ra, 20000));
	ASSERT_EQ(0, ring_idle(&rb, 20000));
	EXPECT_EQ(10, reg_rd(a.device, GPUVIRT_VGPU_REG_DONE_LO));
	EXPECT_EQ(10, reg_rd(b.device, GPUVIRT_VGPU_REG_DONE_LO));
	memcpy(&res, &ra.vram[0x100000 / 4], 8);
	EXPECT_EQ(compute_ref(5, 2000), res);
	memcpy(&res, &rb.vram[0x100000 / 4], 8);
	EXPECT_EQ(compute_ref(5, 2000), res);
	munmap(ra.vram, RING_MAP);
	munmap(rb.vram, RING_MAP);
	vfio_close(&a);
	vfio_close(&b);
}

/* ---- The negative suite ---- */

#define JUNK		0xa5

static bool all_junk(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != JUNK)
			return false;
	return true;
}

/*
 * Oversized arguments: argsz past the structure, the bytes after it set to
 * junk. Every call must do exactly what it does with the exact argsz, and
 * leave the extra bytes alone, except where VFIO defines a capability
 * chain there (BAR2's sparse mmap capability). One byte short is EINVAL.
 */
TEST_F(vgpu, ioctl_argsz_oversized_and_short)
{
	struct { struct vfio_device_info i; uint8_t tail[64]; } dbig;
	struct { struct vfio_region_info i; uint8_t tail[64]; } rbig;
	struct { struct vfio_irq_info i; uint8_t tail[64]; } ibig;
	struct { struct vfio_pci_hot_reset_info i; uint8_t tail[64]; } hbig;
	uint8_t sbuf[sizeof(struct vfio_irq_set) + 4 + 64], scopy[sizeof(sbuf)];
	struct vfio_irq_set *s = (struct vfio_irq_set *)sbuf;
	struct vfio_pci_hot_reset_info hexact;
	struct vfio_region_info_cap_sparse_mmap *sp;
	struct vfio_device_info dexact;
	struct vfio_region_info rexact;
	struct vfio_irq_info iexact;
	uint8_t junk[64];
	struct vfio_user u;
	unsigned int idx;
	int fd, efd;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	fd = u.device;

	/* GET_INFO: the same answer, nothing written past the structure */
	memset(&dexact, JUNK, sizeof(dexact));
	dexact.argsz = sizeof(dexact);
	memset(&dbig, JUNK, sizeof(dbig));
	dbig.i.argsz = sizeof(dbig);
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_INFO, &dexact));
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_INFO, &dbig));
	EXPECT_EQ(VFIO_PCI_NUM_IRQS, dbig.i.num_irqs);
	EXPECT_EQ(sizeof(dbig), dbig.i.argsz);
	EXPECT_EQ(0, memcmp((uint8_t *)&dexact + 4, (uint8_t *)&dbig.i + 4,
			    sizeof(dexact) - 4));
	EXPECT_TRUE(all_junk(dbig.tail, sizeof(dbig.tail)));
	dexact.argsz = offsetof(struct vfio_device_info, num_irqs) + 3;
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_INFO, &dexact));
	EXPECT_EQ(EINVAL, errno);

	/* GET_REGION_INFO, every index */
	for (idx = 0; idx < VFIO_PCI_NUM_REGIONS; idx++) {
		memset(&rexact, JUNK, sizeof(rexact));
		rexact.argsz = sizeof(rexact);
		rexact.index = idx;
		memset(&rbig, JUNK, sizeof(rbig));
		rbig.i.argsz = sizeof(rbig);
		rbig.i.index = idx;
		ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &rexact));
		ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &rbig));
		EXPECT_EQ(rexact.flags, rbig.i.flags) TH_LOG("region %u", idx);
		EXPECT_EQ(rexact.size, rbig.i.size) TH_LOG("region %u", idx);
		EXPECT_EQ(rexact.offset, rbig.i.offset) TH_LOG("region %u", idx);
		EXPECT_EQ(sizeof(rbig), rbig.i.argsz) TH_LOG("region %u", idx);
		if (idx != VFIO_PCI_BAR2_REGION_INDEX) {
			EXPECT_EQ(sizeof(rexact), rexact.argsz);
			EXPECT_EQ(0, rbig.i.cap_offset);
			EXPECT_TRUE(all_junk(rbig.tail, sizeof(rbig.tail)))
				TH_LOG("region %u wrote past the structure", idx);
			continue;
		}
		/* 35 GiB in a 64 GiB BAR: the sparse mmap capability chain */
		EXPECT_TRUE(rbig.i.flags & VFIO_REGION_INFO_FLAG_CAPS);
		EXPECT_EQ(sizeof(rexact) + 32, rexact.argsz);	/* asks for room */
		EXPECT_EQ(0, rexact.cap_offset);
		EXPECT_EQ(sizeof(rbig.i), rbig.i.cap_offset);
		sp = (struct vfio_region_info_cap_sparse_mmap *)rbig.tail;
		EXPECT_EQ(VFIO_REGION_INFO_CAP_SPARSE_MMAP, sp->header.id);
		EXPECT_EQ(1, sp->header.version);
		EXPECT_EQ(0, sp->header.next);
		EXPECT_EQ(1, sp->nr_areas);
		EXPECT_EQ(0, sp->areas[0].offset);
		EXPECT_EQ(35ULL << 30, sp->areas[0].size);
		/* the chain is 32 bytes; the rest stays as it was */
		EXPECT_TRUE(all_junk(rbig.tail + 32, sizeof(rbig.tail) - 32));
	}
	rexact.argsz = sizeof(rexact) - 1;
	rexact.index = VFIO_PCI_BAR0_REGION_INDEX;
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, &rexact));
	EXPECT_EQ(EINVAL, errno);

	/* GET_IRQ_INFO, every index */
	for (idx = 0; idx < VFIO_PCI_NUM_IRQS; idx++) {
		memset(&iexact, JUNK, sizeof(iexact));
		iexact.argsz = sizeof(iexact);
		iexact.index = idx;
		memset(&ibig, JUNK, sizeof(ibig));
		ibig.i.argsz = sizeof(ibig);
		ibig.i.index = idx;
		ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &iexact));
		ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ibig));
		EXPECT_EQ(iexact.flags, ibig.i.flags) TH_LOG("irq %u", idx);
		EXPECT_EQ(iexact.count, ibig.i.count) TH_LOG("irq %u", idx);
		EXPECT_EQ(sizeof(ibig), ibig.i.argsz);
		EXPECT_TRUE(all_junk(ibig.tail, sizeof(ibig.tail)))
			TH_LOG("irq %u wrote past the structure", idx);
	}
	iexact.argsz = sizeof(iexact) - 1;
	iexact.index = VFIO_PCI_MSI_IRQ_INDEX;
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &iexact));
	EXPECT_EQ(EINVAL, errno);

	/*
	 * Reset: RESET takes no argument, so whatever arg points at is never
	 * read or written; the PCI hot reset ioctls are not the vGPU's, with
	 * any argsz.
	 */
	memset(junk, JUNK, sizeof(junk));
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_SCRATCH, 0x1234));
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_RESET, junk));
	EXPECT_EQ(0, reg_rd(fd, GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_TRUE(all_junk(junk, sizeof(junk)));
	memset(&hexact, JUNK, sizeof(hexact));
	hexact.argsz = sizeof(hexact);
	memset(&hbig, JUNK, sizeof(hbig));
	hbig.i.argsz = sizeof(hbig);
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &hexact));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, &hbig));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(sizeof(hbig), hbig.i.argsz);
	EXPECT_TRUE(all_junk((uint8_t *)&hbig.i + 4, sizeof(hbig) - 4));

	/* SET_IRQS: an eventfd with junk after it; the kernel writes nothing */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	memset(sbuf, JUNK, sizeof(sbuf));
	s->argsz = sizeof(sbuf);
	s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = VFIO_PCI_MSI_IRQ_INDEX;
	s->start = 0;
	s->count = 1;
	memcpy(s->data, &efd, sizeof(efd));
	memcpy(scopy, sbuf, sizeof(sbuf));
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, sbuf));
	EXPECT_EQ(0, memcmp(scopy, sbuf, sizeof(sbuf)));
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 1, 2));
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1, wait_eventfd(efd, 2000));
	/* DATA_BOOL: one byte of data, then junk; signals once */
	s->flags = VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->data[0] = 1;
	memcpy(scopy, sbuf, sizeof(sbuf));
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, sbuf));
	EXPECT_EQ(0, memcmp(scopy, sbuf, sizeof(sbuf)));
	EXPECT_EQ(1, wait_eventfd(efd, 2000));
	/* DATA_NONE, count 0: disables, whatever follows */
	s->flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->count = 0;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, sbuf));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	/* one byte short of the eventfd */
	s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->count = 1;
	s->argsz = sizeof(*s) + sizeof(int32_t) - 1;
	EXPECT_EQ(-1, ioctl(fd, VFIO_DEVICE_SET_IRQS, sbuf));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_MSI_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	close(efd);
	vfio_close(&u);
}

/*
 * SET_IRQS from several threads at once while interrupts are raised: by
 * IRQ_RAISE, by FENCE packets on the ring, by SET_IRQS itself, with MSI,
 * Bus Master and INTx masking toggled under them. Nothing may break (the
 * runner scans the kernel log), no call may fail except as documented
 * (EINVAL for a trigger without an eventfd), and afterwards a clean set-up
 * delivers interrupts again. The storm lasts 3 s, and then on until every
 * thread has made more than STORM_ROUNDS rounds: a busy host stretches it,
 * and only a thread that hangs makes it end short (after STORM_MAX_S).
 */
#define STORM_ROUNDS	10
#define STORM_MAX_S	30

struct storm {
	int fd;
	struct ring *ring;
	int stop;
	int thread;
	int bad[7];		/* first unexpected -errno per thread */
	unsigned long ops[7];
};

static void storm_bad(struct storm *st, int t, int err)
{
	if (err && !st->bad[t])
		st->bad[t] = err;
}

static bool storm_running(struct storm *st)
{
	return !__atomic_load_n(&st->stop, __ATOMIC_RELAXED);
}

/* Eventfds come and go on one index; INTx is also masked and unmasked. */
static void storm_eventfds(struct storm *st, int t, unsigned int index)
{
	uint64_t cnt;
	int efd;

	while (storm_running(st)) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0) {
			storm_bad(st, t, -errno);
			return;
		}
		storm_bad(st, t, vgpu_client_set_irq(st->fd, index, efd));
		if (index == VFIO_PCI_INTX_IRQ_INDEX) {
			storm_bad(st, t, set_irq_none(st->fd, index,
						      VFIO_IRQ_SET_ACTION_MASK, 1));
			storm_bad(st, t, set_irq_none(st->fd, index,
						      VFIO_IRQ_SET_ACTION_UNMASK, 1));
		}
		usleep(50);
		if (read(efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
			storm_bad(st, t, -errno);
		if (st->ops[t] & 1)
			storm_bad(st, t, vgpu_client_set_irq(st->fd, index, -1));
		else
			storm_bad(st, t, set_irq_none(st->fd, index,
						      VFIO_IRQ_SET_ACTION_TRIGGER, 0));
		close(efd);	/* the vGPU may still hold it: no matter */
		st->ops[t]++;
	}
}

/* The VMM's own triggers, DATA_NONE and DATA_BOOL, on every index. */
static void storm_triggers(struct storm *st, int t)
{
	static const unsigned int idx[] = { VFIO_PCI_INTX_IRQ_INDEX,
		VFIO_PCI_MSI_IRQ_INDEX, VFIO_PCI_REQ_IRQ_INDEX };
	char buf[sizeof(struct vfio_irq_set) + 1];
	struct vfio_irq_set *s = (struct vfio_irq_set *)buf;
	int err;

	while (storm_running(st)) {
		unsigned int i = idx[st->ops[t] % 3];

		if (st->ops[t] & 1) {
			err = set_irq_none(st->fd, i, VFIO_IRQ_SET_ACTION_TRIGGER, 1);
		} else {
			s->argsz = sizeof(buf);
			s->flags = VFIO_IRQ_SET_DATA_BOOL |
				   VFIO_IRQ_SET_ACTION_TRIGGER;
			s->index = i;
			s->start = 0;
			s->count = 1;
			s->data[0] = st->ops[t] & 2 ? 1 : 0;
			err = ioctl(st->fd, VFIO_DEVICE_SET_IRQS, s) ? -errno : 0;
		}
		if (err != -EINVAL)	/* EINVAL: no eventfd at this moment */
			storm_bad(st, t, err);
		st->ops[t]++;
	}
}

/* Interrupt sources, and MSI enable and Bus Master toggled under them. */
static void storm_sources(struct storm *st, int t)
{
	const uint32_t fence[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
						    GPUVIRT_VGPU_PKT_FLAG_IRQ),
				   1, 0x400000, 0 };
	struct ring *r = st->ring;
	uint32_t cmd = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;

	while (storm_running(st)) {
		unsigned long n = st->ops[t];

		storm_bad(st, t, reg_wr(st->fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
					GPUVIRT_VGPU_IRQ_SW));
		if (reg_rd(st->fd, GPUVIRT_VGPU_REG_RING_HEAD) == r->tail) {
			ring_put(r, fence, 4);
			storm_bad(st, t, ring_kick(r));
		}
		if (!(n % 3))
			storm_bad(st, t, cfg_wr(st->fd, 0x42, n & 8 ? 0 : 1, 2));
		if (!(n % 5))
			storm_bad(st, t, cfg_wr(st->fd, PCI_COMMAND, n & 16 ?
						cmd & ~PCI_COMMAND_MASTER : cmd, 2));
		if (!(n % 7))
			storm_bad(st, t, reg_wr(st->fd, GPUVIRT_VGPU_REG_IRQ_STATUS,
						~0u));
		st->ops[t]++;
	}
}

static void *storm_thread(void *arg)
{
	struct storm *st = arg;
	int t = __atomic_fetch_add(&st->thread, 1, __ATOMIC_RELAXED);

	/* two threads an index: eventfds are replaced while installed */
	switch (t) {
	case 0:
	case 1:
		storm_eventfds(st, t, VFIO_PCI_MSI_IRQ_INDEX);
		break;
	case 2:
	case 3:
		storm_eventfds(st, t, VFIO_PCI_INTX_IRQ_INDEX);
		break;
	case 4:
		storm_eventfds(st, t, VFIO_PCI_REQ_IRQ_INDEX);
		break;
	case 5:
		storm_triggers(st, t);
		break;
	default:
		storm_sources(st, t);
		break;
	}
	return NULL;
}

/* Whether every storm thread has made more than STORM_ROUNDS rounds. */
static bool storm_enough(struct storm *st, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&st->ops[i], __ATOMIC_RELAXED) <= STORM_ROUNDS)
			return false;
	return true;
}

TEST_F(vgpu, set_irqs_concurrent)
{
	const uint32_t fence[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
						    GPUVIRT_VGPU_PKT_FLAG_IRQ),
				   2, 0x400000, 0 };
	struct storm st = { 0 };
	pthread_t th[7];
	struct vfio_user u;
	struct ring r;
	unsigned int i;
	int msi, intx;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	ASSERT_EQ(0, ring_setup(&r, u.device));
	st.fd = u.device;
	st.ring = &r;

	for (i = 0; i < ARRAY_SIZE(th); i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, storm_thread, &st));
	sleep(3);
	for (i = 3; i < STORM_MAX_S && !storm_enough(&st, ARRAY_SIZE(th)); i++)
		sleep(1);
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < ARRAY_SIZE(th); i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < ARRAY_SIZE(th); i++) {
		EXPECT_EQ(0, st.bad[i]) TH_LOG("thread %u: %s", i, strerror(-st.bad[i]));
		EXPECT_LT(STORM_ROUNDS, st.ops[i])
			TH_LOG("thread %u hardly ran in %d s", i, STORM_MAX_S);
		TH_LOG("thread %u: %lu rounds", i, st.ops[i]);
	}

	/* a clean set-up: MSI from IRQ_RAISE and from a fence, then INTx */
	ASSERT_EQ(0, ring_idle(&r, 5000));
	msi = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	intx = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_EQ(0, cfg_wr(u.device, PCI_COMMAND,
			    PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2));
	ASSERT_EQ(0, set_irq_none(u.device, VFIO_PCI_INTX_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_UNMASK, 1));
	ASSERT_EQ(0, vgpu_client_set_irq(u.device, VFIO_PCI_MSI_IRQ_INDEX, msi));
	ASSERT_EQ(0, vgpu_client_set_irq(u.device, VFIO_PCI_INTX_IRQ_INDEX, intx));
	ASSERT_EQ(0, cfg_wr(u.device, 0x42, 1, 2));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1, wait_eventfd(msi, 2000));
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	EXPECT_EQ(1, wait_eventfd(msi, 5000));
	EXPECT_EQ(2, reg_rd(u.device, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(intx, 100));
	ASSERT_EQ(0, cfg_wr(u.device, 0x42, 0, 2));
	ASSERT_EQ(0, reg_wr(u.device, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1, wait_eventfd(intx, 2000));
	munmap(r.vram, RING_MAP);
	close(msi);
	close(intx);
	vfio_close(&u);
}

/* Access one byte of a mapping; 0, or -EFAULT when it raised SIGBUS. */
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;

static void bus_handler(int sig)
{
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int touch(volatile uint8_t *p, bool write, uint8_t *val)
{
	struct sigaction sa = { .sa_handler = bus_handler }, old;
	int ret = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(bus_jmp, 1)) {
		bus_armed = 1;
		if (write)
			*p = *val;
		else
			*val = *p;
	} else {
		ret = -EFAULT;
	}
	bus_armed = 0;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}

/* Is the page at @addr in this process's page tables? 1, 0 or -errno. */
static int page_present(const void *addr)
{
	uint64_t e;
	ssize_t n;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &e, sizeof(e), (uintptr_t)addr / 4096 * sizeof(e));
	close(fd);
	return n == sizeof(e) ? (int)(e >> 63) : -EIO;
}

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 13 + 5);
}

/* First byte of @p[0, len) that is not pat(@off + i), or -1. */
static long pat_mismatch(const uint8_t *p, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(off + i))
			return i;
	return -1;
}

/*
 * Memory Space off: BAR0 and BAR2 accesses fail with EIO, every mapping of
 * BAR2 is revoked (its pages leave the page tables, and touching them is
 * SIGBUS), and nothing of another vGPU is touched. Memory Space on again:
 * the same mapping sees the same data. A reset turns it on again.
 */
TEST_F(vgpu, memory_disable_revokes_bars)
{
	const size_t len = 1 << 20;
	const uint16_t cmd = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	uint8_t *ma, *mb, *late, buf[64], v = 0x77;
	struct vfio_user a, b;
	unsigned long backed;
	uint32_t x = 0;
	size_t i;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_B));
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	ASSERT_EQ(0, vfio_open(&b, UUID_B));
	/* out of reset, memory and bus master are on */
	EXPECT_EQ(cmd, cfg_rd(a.device, PCI_COMMAND, 2));

	ma = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		  REGION(VFIO_PCI_BAR2_REGION_INDEX));
	mb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b.device,
		  REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, ma);
	ASSERT_NE(MAP_FAILED, mb);
	for (i = 0; i < len; i++) {
		ma[i] = pat(i);
		mb[i] = ~pat(i);
	}
	ASSERT_EQ(1, page_present(ma));
	ASSERT_EQ(1, page_present(mb + len - 4096));
	backed = backed_pages();

	/* Memory Space off on A */
	ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY, 2));
	EXPECT_EQ(cmd & ~PCI_COMMAND_MEMORY, cfg_rd(a.device, PCI_COMMAND, 2));
	/* A's pages left the page tables, B's did not */
	EXPECT_EQ(0, page_present(ma));
	EXPECT_EQ(0, page_present(ma + len / 2));
	EXPECT_EQ(0, page_present(ma + len - 4096));
	EXPECT_EQ(1, page_present(mb));
	EXPECT_EQ(1, page_present(mb + len - 4096));
	/* touching A's mapping is SIGBUS, reading or writing */
	EXPECT_EQ(-EFAULT, touch(ma, false, &v));
	EXPECT_EQ(-EFAULT, touch(ma + len / 2 + 3, false, &v));
	EXPECT_EQ(-EFAULT, touch(ma + len - 1, true, &v));
	/* a new mapping can be made, and does not work either */
	late = mmap(NULL, 4096, PROT_READ, MAP_SHARED, a.device,
		    REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, late);
	EXPECT_EQ(-EFAULT, touch(late, false, &v));
	/* the BARs do not answer through the region either */
	EXPECT_EQ(-1, pread(a.device, &x, 4,
			    REGION(VFIO_PCI_BAR0_REGION_INDEX) + GPUVIRT_VGPU_REG_MAGIC));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(-1, pwrite(a.device, &x, 4,
			     REGION(VFIO_PCI_BAR0_REGION_INDEX) + GPUVIRT_VGPU_REG_SCRATCH));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(-1, pread(a.device, buf, sizeof(buf),
			    REGION(VFIO_PCI_BAR2_REGION_INDEX)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(-1, pwrite(a.device, buf, sizeof(buf),
			     REGION(VFIO_PCI_BAR2_REGION_INDEX) + 4096));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(-1, pread(a.device, buf, sizeof(buf),
			    REGION(VFIO_PCI_BAR2_REGION_INDEX) + (35ULL << 30)));
	EXPECT_EQ(EIO, errno);
	/* config space still answers; B works; no backing was dropped */
	EXPECT_EQ(GPUVIRT_VGPU_PCI_VENDOR_ID, cfg_rd(a.device, 0, 2));
	EXPECT_EQ(GPUVIRT_VGPU_MAGIC, reg_rd(b.device, GPUVIRT_VGPU_REG_MAGIC));
	EXPECT_EQ((uint8_t)~pat(len - 1), mb[len - 1]);
	EXPECT_EQ(backed, backed_pages());

	/* Memory Space on: the same mapping, the same data */
	ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND, cmd, 2));
	EXPECT_EQ(0, touch(ma + 5, false, &v));
	EXPECT_EQ(pat(5), v);
	EXPECT_EQ(-1, pat_mismatch(ma, 0, len));
	EXPECT_EQ(pat(0), late[0]);
	EXPECT_EQ(GPUVIRT_VGPU_MAGIC, reg_rd(a.device, GPUVIRT_VGPU_REG_MAGIC));
	ASSERT_EQ(sizeof(buf), pread(a.device, buf, sizeof(buf),
				     REGION(VFIO_PCI_BAR2_REGION_INDEX) + 4096));
	EXPECT_EQ(-1, pat_mismatch(buf, 4096, sizeof(buf)));

	/* off again, then a reset: memory is on after it, and zeroed */
	ASSERT_EQ(0, cfg_wr(a.device, PCI_COMMAND, 0, 2));
	EXPECT_EQ(-EFAULT, touch(ma, false, &v));
	ASSERT_EQ(0, ioctl(a.device, VFIO_DEVICE_RESET));
	EXPECT_EQ(cmd, cfg_rd(a.device, PCI_COMMAND, 2));
	EXPECT_EQ(0, touch(ma + 100, false, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, ma[len - 1]);

	munmap(late, 4096);
	munmap(ma, len);
	munmap(mb, len);
	vfio_close(&a);
	vfio_close(&b);
}

static unsigned long long msi_suppressed(const char *uuid)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/msi_suppressed",
		 uuid);
	if (gv_read(path, buf, sizeof(buf)) <= 0)
		return ~0ULL;
	return strtoull(buf, NULL, 0);
}

/*
 * BAR2 fault-around and block backing: a first write to unbacked VRAM
 * through a mapping backs and maps the faulting page's whole aligned
 * block of 16 pages at once (the sim backs VRAM 64 KiB at a time). Those
 * pages are zeroed, even where the previous tenant of the same VRAM
 * wrote, and charged to the host memory cap. A read fault backs one block
 * too, no more; fault-around never maps outside the VMA; and at the cap a
 * write is SIGBUS with exactly the cap backed.
 */
TEST_F(vgpu, vram_fault_around_zeroed_and_capped)
{
	const size_t len = 2 << 20, blk = 16 * 4096;
	char range_a[64] = "", range_b[64] = "";
	unsigned long base;
	struct vfio_user a;
	uint8_t *m, *m2, v = 0x77;
	size_t i, nonzero;

	/* a previous tenant fills 2 MiB of its slice, then goes */
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&a, UUID_A));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		 REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0xa5, len);
	EXPECT_EQ(len / 4096, backed_pages());
	ASSERT_EQ(0, gv_kv(GV_SIM_DEBUGFS "/sim0/vram", "backed_range",
			   range_a, sizeof(range_a)));
	munmap(m, len);
	vfio_close(&a);
	ASSERT_EQ(0, vgpu_remove(UUID_A));
	EXPECT_EQ(0, backed_pages());

	/* the next tenant gets the same VRAM */
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_B));
	ASSERT_EQ(0, vfio_open(&a, UUID_B));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		 REGION(VFIO_PCI_BAR2_REGION_INDEX));
	ASSERT_NE(MAP_FAILED, m);

	/* one byte written inside block 1: that whole block, and only it */
	m[blk + 5 * 4096 + 7] = 0x5c;
	EXPECT_EQ(16, backed_pages());
	ASSERT_EQ(0, gv_kv(GV_SIM_DEBUGFS "/sim0/vram", "backed_range",
			   range_b, sizeof(range_b)));
	base = strtoul(range_a, NULL, 16);
	EXPECT_EQ(base + blk, strtoul(range_b, NULL, 16))
		TH_LOG("A backed %s, B %s: not the same VRAM", range_a, range_b);
	EXPECT_EQ(1, page_present(m + blk));
	EXPECT_EQ(1, page_present(m + 2 * blk - 4096));
	EXPECT_EQ(0, page_present(m));
	EXPECT_EQ(0, page_present(m + 2 * blk));
	/* freshly backed pages read zero: nothing of the previous tenant */
	for (i = blk, nonzero = 0; i < 2 * blk; i++)
		nonzero += m[i] != 0;
	EXPECT_EQ(1, nonzero);
	EXPECT_EQ(0x5c, m[blk + 5 * 4096 + 7]);
	EXPECT_EQ(16, backed_pages());	/* reading them faulted nothing in */

	/* a read fault on an unbacked block backs that block, no more */
	EXPECT_EQ(0, touch(m + 3 * blk + 4096, false, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(32, backed_pages());
	EXPECT_EQ(1, page_present(m + 3 * blk));
	EXPECT_EQ(0, page_present(m + 4 * blk));
	for (i = 3 * blk, nonzero = 0; i < 4 * blk; i++)
		nonzero += m[i] != 0;
	EXPECT_EQ(0, nonzero);

	/* a two-page mapping in the middle of block 8: only its pages mapped */
	m2 = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a.device,
		  REGION(VFIO_PCI_BAR2_REGION_INDEX) + 8 * blk + 3 * 4096);
	ASSERT_NE(MAP_FAILED, m2);
	m2[4096 + 1] = 1;
	EXPECT_EQ(48, backed_pages());
	EXPECT_EQ(1, page_present(m2));
	EXPECT_EQ(0, m2[0]);
	EXPECT_EQ(0, page_present(m + 8 * blk));	/* not through this VMA */
	munmap(m2, 2 * 4096);

	/*
	 * A 1 MiB (256-page) host cap: writes page by page from block 16 on
	 * end in SIGBUS, with exactly the cap backed; the page that faulted
	 * is not mapped.
	 */
	ASSERT_EQ(0, gv_write("/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb", "1"));
	for (i = 16 * blk; i < len; i += 4096)
		if (touch(m + i, true, &v))
			break;
	EXPECT_LT(i, len);
	EXPECT_EQ(256, backed_pages());
	EXPECT_EQ(256, gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "host_pages_all_gpus"));
	EXPECT_EQ(0, page_present(m + i));
	EXPECT_TRUE(gv_kmsg_find(self->kmsg, "host_mem_cap_mb=1 reached"));
	ASSERT_EQ(0, gv_write("/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb", "512"));
	/* under the cap again, the same page backs */
	EXPECT_EQ(0, touch(m + i, true, &v));
	EXPECT_EQ(v, m[i]);

	munmap(m, len);
	vfio_close(&a);
}

/*
 * Bus Master off: the device may not write its MSI message. The interrupt
 * cause is still set in IRQ_STATUS, nothing is signalled (not even later,
 * when Bus Master comes back), and INTx, a wire, is not affected. Bus
 * Master on: new interrupts are delivered.
 */
TEST_F(vgpu, bus_master_gates_msi)
{
	const uint32_t nop[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_NOP, 1, 0) };
	uint32_t fence[] = { GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
					      GPUVIRT_VGPU_PKT_FLAG_IRQ),
			     9, 0x400000, 0 };
	const uint16_t cmd = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	struct vfio_user u;
	struct ring r;
	int fd, msi, intx;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	fd = u.device;
	ASSERT_EQ(0, ring_setup(&r, fd));
	msi = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	intx = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, msi));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_INTX_IRQ_INDEX, intx));
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 1, 2));
	EXPECT_EQ(0, msi_suppressed(UUID_A));

	/* Bus Master off: a fence with IRQ runs, its MSI is not sent */
	ASSERT_EQ(0, cfg_wr(fd, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER, 2));
	ring_put(&r, nop, 1);
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	ASSERT_EQ(0, ring_idle(&r, 5000));
	EXPECT_EQ(9, reg_rd(fd, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(msi, 300));
	EXPECT_EQ(GPUVIRT_VGPU_IRQ_FENCE, reg_rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(1, msi_suppressed(UUID_A));
	/* and a software interrupt neither */
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(msi, 200));
	EXPECT_EQ(GPUVIRT_VGPU_IRQ_FENCE | GPUVIRT_VGPU_IRQ_SW,
		  reg_rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(2, msi_suppressed(UUID_A));

	/* INTx is not gated by Bus Master */
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 0, 2));
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1, wait_eventfd(intx, 2000));
	ASSERT_EQ(0, cfg_wr(fd, 0x42, 1, 2));

	/* Bus Master on: what was pending is not sent by itself */
	ASSERT_EQ(0, cfg_wr(fd, PCI_COMMAND, cmd, 2));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(msi, 200));
	/* a new interrupt is */
	ASSERT_EQ(0, reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	fence[1] = 10;
	ring_put(&r, fence, 4);
	ASSERT_EQ(0, ring_kick(&r));
	EXPECT_EQ(1, wait_eventfd(msi, 5000));
	EXPECT_EQ(10, reg_rd(fd, GPUVIRT_VGPU_REG_FENCE));
	EXPECT_EQ(GPUVIRT_VGPU_IRQ_FENCE, reg_rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(2, msi_suppressed(UUID_A));

	munmap(r.vram, RING_MAP);
	close(msi);
	close(intx);
	vfio_close(&u);
}

/*
 * The REQ interrupt: removing a vGPU that is open signals the user's REQ
 * eventfd, and the removal completes once the user closes the device.
 */
TEST_F(vgpu, remove_signals_request_irq)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii),
				    .index = VFIO_PCI_REQ_IRQ_INDEX };
	char buf[sizeof(struct vfio_irq_set) + 1];
	struct vfio_irq_set *s = (struct vfio_irq_set *)buf;
	struct vfio_user u;
	int fd, req, st;
	pid_t pid;

	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	ASSERT_EQ(0, vfio_open(&u, UUID_A));
	fd = u.device;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ii));
	EXPECT_EQ(1, ii.count);
	EXPECT_EQ(VFIO_IRQ_INFO_EVENTFD, ii.flags);

	/* the trigger forms, as for the other indexes */
	req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, req);
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_REQ_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_REQ_IRQ_INDEX, req));
	EXPECT_EQ(0, set_irq_none(fd, VFIO_PCI_REQ_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	EXPECT_EQ(1, wait_eventfd(req, 1000));
	s->argsz = sizeof(buf);
	s->flags = VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = VFIO_PCI_REQ_IRQ_INDEX;
	s->start = 0;
	s->count = 1;
	s->data[0] = 0;
	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, s));
	EXPECT_EQ(-ETIMEDOUT, wait_eventfd(req, 100));
	s->data[0] = 1;
	EXPECT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, s));
	EXPECT_EQ(1, wait_eventfd(req, 1000));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_REQ_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_MASK, 1));
	EXPECT_EQ(0, set_irq_none(fd, VFIO_PCI_REQ_IRQ_INDEX,
				  VFIO_IRQ_SET_ACTION_TRIGGER, 0));
	EXPECT_EQ(-EINVAL, set_irq_none(fd, VFIO_PCI_REQ_IRQ_INDEX,
					VFIO_IRQ_SET_ACTION_TRIGGER, 1));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_REQ_IRQ_INDEX, req));

	/* remove from another process: it asks us, and waits for us */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		vfio_close(&u);	/* the child must not hold the device */
		_exit(vgpu_remove(UUID_A) ? 1 : 0);
	}
	EXPECT_LE(1, wait_eventfd(req, 10000)) TH_LOG("no REQ while removing");
	EXPECT_EQ(0, waitpid(pid, &st, WNOHANG));
	EXPECT_EQ(GPUVIRT_VGPU_MAGIC, reg_rd(fd, GPUVIRT_VGPU_REG_MAGIC));

	/* we let go: the removal completes */
	vfio_close(&u);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_FALSE(gv_exists(MDEVS "/" UUID_A));
	EXPECT_EQ(4, available("H200-35C"));
	close(req);
}

/*
 * Mixed-size mode through <gpu>/gpuvirt/vgpu_mode: refused while the GPU
 * has a vGPU, in either direction; once on, types of different sizes and
 * series share the GPU and available_instances stays exact.
 *
 * Expected counts, from fbacct.c and profiles.c: the H200 has 141 GiB, and
 * a type with mixed-size maximum M may start at k * (141 GiB / M), rounded
 * down to a MiB; the strides are 70.5 (M 2), 35.25 (4), 17.625 (8),
 * 8.8125 (16) and 4.40625 GiB (32). 28C's M is 4, 14C's and 17C's 8, 8C's
 * and 7C's 16. Then:
 *   70C (A) goes to 0: [0, 70) is taken.
 *   4C (B) goes to its first free start, 16 * 4.40625 = 70.5: [70.5, 74.5).
 *   35Q (C) goes to 3 * 35.25 = 105.75: [105.75, 140.75).
 */
#define VGPU_MODE	GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/vgpu_mode"

static const char *const mixed_types[] = {
	"H200-141C", "H200-70C", "H200-35C", "H200-28C", "H200-17C",
	"H200-14C", "H200-8C", "H200-7C", "H200-4C", "H200-35Q",
};

static int vgpu_mode(char *buf, size_t len)
{
	int n = gv_read(VGPU_MODE, buf, len);

	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

static bool avail_is(struct __test_metadata *_metadata, const char *step,
		     const int *want)
{
	bool ok = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mixed_types); i++) {
		int got = available(mixed_types[i]);

		if (got != want[i]) {
			TH_LOG("%s: %s has %d available, expected %d", step,
			       mixed_types[i], got, want[i]);
			ok = false;
		}
	}
	return ok;
}

static void mixed_uuid(char *buf, size_t len, unsigned int i)
{
	snprintf(buf, len, "6a1f0b42-0000-4000-8000-0000000003%02u", i);
}

TEST_F(vgpu, mixed_size_mode)
{
	/* in the order of mixed_types */
	static const int homog[] = { 1, 2, 4, 5, 8, 10, 16, 20, 32, 4 };
	static const int empty[] = { 1, 2, 4, 4, 8, 8, 16, 16, 32, 4 };
	static const int a[] = { 0, 1, 2, 2, 4, 4, 8, 8, 16, 2 };
	static const int ab[] = { 0, 0, 1, 1, 3, 3, 7, 7, 15, 1 };
	static const int abc[] = { 0, 0, 0, 0, 1, 1, 3, 3, 7, 0 };
	static const int bc[] = { 0, 1, 2, 2, 5, 5, 11, 11, 23, 2 };
	static const char *uuid_c = "6a1f0b42-0000-4000-8000-0000000003ff";
	char mode[32], uuid[64];
	unsigned int i;

	ASSERT_TRUE(gv_exists(VGPU_MODE));
	ASSERT_LT(0, vgpu_mode(mode, sizeof(mode)));
	EXPECT_STREQ("homogeneous", mode);
	EXPECT_TRUE(avail_is(_metadata, "homogeneous", homog));

	/* no switch while a vGPU exists; the current mode is always fine */
	ASSERT_EQ(0, vgpu_create("H200-70C", UUID_A));
	EXPECT_EQ(-EBUSY, gv_write(VGPU_MODE, "mixed"));
	EXPECT_EQ(0, gv_write(VGPU_MODE, "homogeneous"));
	EXPECT_EQ(-EINVAL, gv_write(VGPU_MODE, "buddy"));
	ASSERT_LT(0, vgpu_mode(mode, sizeof(mode)));
	EXPECT_STREQ("homogeneous", mode);
	ASSERT_EQ(0, vgpu_remove(UUID_A));

	ASSERT_EQ(0, gv_write(VGPU_MODE, "mixed"));
	ASSERT_LT(0, vgpu_mode(mode, sizeof(mode)));
	EXPECT_STREQ("mixed", mode);
	EXPECT_TRUE(avail_is(_metadata, "mixed, empty", empty));

	ASSERT_EQ(0, vgpu_create("H200-70C", UUID_A));
	EXPECT_TRUE(avail_is(_metadata, "70C", a));
	ASSERT_EQ(0, vgpu_create("H200-4C", UUID_B));
	EXPECT_TRUE(avail_is(_metadata, "70C+4C", ab));
	ASSERT_EQ(0, vgpu_create("H200-35Q", uuid_c));
	EXPECT_TRUE(avail_is(_metadata, "70C+4C+35Q", abc));
	EXPECT_EQ(-EBUSY, gv_write(VGPU_MODE, "homogeneous"));
	EXPECT_EQ(0, gv_write(VGPU_MODE, "mixed"));
	ASSERT_LT(0, vgpu_mode(mode, sizeof(mode)));
	EXPECT_STREQ("mixed", mode);
	EXPECT_EQ(-ENOSPC, vgpu_create("H200-35C",
				       "6a1f0b42-0000-4000-8000-0000000003fe"));

	/* exact: as many 4C as announced fit, and not one more */
	for (i = 0; i < (unsigned int)abc[8]; i++) {
		mixed_uuid(uuid, sizeof(uuid), i);
		ASSERT_EQ(0, vgpu_create("H200-4C", uuid)) TH_LOG("4C #%u", i);
		EXPECT_EQ(abc[8] - 1 - (int)i, available("H200-4C"));
	}
	mixed_uuid(uuid, sizeof(uuid), i);
	EXPECT_EQ(-ENOSPC, vgpu_create("H200-4C", uuid));
	EXPECT_EQ(0, available("H200-17C"));
	for (i = 0; i < (unsigned int)abc[8]; i++) {
		mixed_uuid(uuid, sizeof(uuid), i);
		ASSERT_EQ(0, vgpu_remove(uuid));
	}
	EXPECT_TRUE(avail_is(_metadata, "70C+4C+35Q again", abc));

	/* removing frees exactly the removed slice */
	ASSERT_EQ(0, vgpu_remove(UUID_A));
	EXPECT_TRUE(avail_is(_metadata, "4C+35Q", bc));
	ASSERT_EQ(0, vgpu_remove(UUID_B));
	ASSERT_EQ(0, vgpu_remove(uuid_c));
	EXPECT_TRUE(avail_is(_metadata, "mixed, empty again", empty));

	/* back to homogeneous: one type per GPU again */
	ASSERT_EQ(0, gv_write(VGPU_MODE, "homogeneous"));
	EXPECT_TRUE(avail_is(_metadata, "homogeneous again", homog));
	ASSERT_EQ(0, vgpu_create("H200-35C", UUID_A));
	EXPECT_EQ(-EBUSY, vgpu_create("H200-4C", UUID_B));
	EXPECT_EQ(0, available("H200-4C"));
	ASSERT_EQ(0, vgpu_remove(UUID_A));
}

TEST_HARNESS_MAIN
