// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU types and the vGPU device, driven the way a VMM drives them: mdev
 * sysfs to create vGPUs, then the VFIO group API to open one, read its
 * config space, size its BARs, map its VRAM slice, take its interrupts and
 * reset it. Every result is checked against the simulated GPU's debugfs
 * "hardware" state where it has one.
 */
#include <linux/vfio.h>
#include <poll.h>
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
#define TYPES		"/sys/class/mdev_bus/sim0/mdev_supported_types"
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
	ASSERT_EQ(0, gv_unload_all());
	ASSERT_EQ(0, system("modprobe -q vfio_iommu_type1"));
	ASSERT_EQ(0, gv_module_load(GV_CORE));
	ASSERT_EQ(0, gv_module_load(GV_SIM));
	ASSERT_EQ(0, gv_write(NEW, "0 h200-141gb"));
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
	EXPECT_FALSE(gv_exists("/sys/class/mdev_bus/sim0"));
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
	EXPECT_EQ(VFIO_PCI_NUM_REGIONS, info.num_regions);
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
	ri.index = VFIO_PCI_NUM_REGIONS;
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

TEST_HARNESS_MAIN
