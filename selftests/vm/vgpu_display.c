// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU display heads, driven as a guest driver and a VMM drive them: the
 * "guest" programs a mode through BAR0 and draws into BAR2, the "VMM" asks
 * VFIO_DEVICE_QUERY_GFX_PLANE for the primary plane and reads it from the
 * display region, pixel by pixel. Refused modes (a head the type lacks,
 * beyond its maximum resolution, a bad format or stride, a scanout past
 * the slice) must leave the head off with the reason in HEAD_ERROR, and no
 * plane may show another vGPU's VRAM. The core's debugfs
 * (vgpus/<uuid>/display) must show the same head state.
 */
#include <linux/vfio.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"
#include <linux/gpuvirt_vgpu.h>

#define TYPES		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define UUID_A		"6a1f0b42-0000-4000-8000-0000000000da"
#define UUID_B		"6a1f0b42-0000-4000-8000-0000000000db"
#define REGION(i)	VGPU_REGION(i)
#define BAR0		REGION(VFIO_PCI_BAR0_REGION_INDEX)
#define BAR2		REGION(VFIO_PCI_BAR2_REGION_INDEX)
#define DISP		REGION(GPUVIRT_VGPU_DISPLAY_REGION)
#define XR24		GPUVIRT_VGPU_FMT_XRGB8888
#define GIB		(1ULL << 30)

static int vgpu_create(const char *type, const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/create", type);
	return gv_write(path, uuid);
}

static void vgpu_remove(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/remove", uuid);
	gv_write(path, "1");
}

static uint32_t rd(int fd, unsigned int reg)
{
	uint32_t v = 0;

	if (pread(fd, &v, 4, BAR0 + reg) != 4)
		return 0xdeadbeef;
	return v;
}

static int wr(int fd, unsigned int reg, uint32_t v)
{
	return pwrite(fd, &v, 4, BAR0 + reg) == 4 ? 0 : -errno;
}

static uint32_t hrd(int fd, unsigned int head, unsigned int r)
{
	return rd(fd, GPUVIRT_VGPU_REG_HEAD(head) + r);
}

/* Stage a mode on @head and commit it with @ctrl; HEAD_ERROR after. */
static uint32_t set_mode(int fd, unsigned int head, uint64_t base, uint32_t w,
			 uint32_t h, uint32_t stride, uint32_t fmt,
			 uint32_t ctrl)
{
	unsigned int r = GPUVIRT_VGPU_REG_HEAD(head);

	if (wr(fd, r + GPUVIRT_VGPU_HEAD_BASE_LO, (uint32_t)base) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_BASE_HI, base >> 32) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_WIDTH, w) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_HEIGHT, h) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_STRIDE, stride) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_FORMAT, fmt) ||
	    wr(fd, r + GPUVIRT_VGPU_HEAD_CONTROL, ctrl))
		return 0xdeadbeef;
	return hrd(fd, head, GPUVIRT_VGPU_HEAD_ERROR);
}

static int query(int fd, struct vfio_device_gfx_plane_info *p, uint32_t flags)
{
	memset(p, 0, sizeof(*p));
	p->argsz = sizeof(*p);
	p->flags = flags;
	p->drm_plane_type = 1;	/* DRM_PLANE_TYPE_PRIMARY */
	return ioctl(fd, VFIO_DEVICE_QUERY_GFX_PLANE, p) ? -errno : 0;
}

/* The test picture: every pixel differs from its neighbours. */
static uint32_t pixel(uint32_t x, uint32_t y)
{
	return (x * 0x010203u + y * 0x0a0b0cu) & 0xffffff;
}

/* Draw a w x h picture at @base of the slice, lines @stride apart. */
static int draw(int fd, uint64_t base, uint32_t w, uint32_t h, uint32_t stride)
{
	uint32_t *line = malloc(stride), x, y;
	int err = 0;

	if (!line)
		return -ENOMEM;
	for (y = 0; y < h && !err; y++) {
		memset(line, 0xee, stride);	/* padding: not part of the plane */
		for (x = 0; x < w; x++)
			line[x] = pixel(x, y);
		if (pwrite(fd, line, stride, BAR2 + base + (uint64_t)y * stride) !=
		    stride)
			err = -errno;
	}
	free(line);
	return err;
}

/*
 * Wait until @want flips have taken effect on @head: a flip waits for the
 * next vblank. The bound only keeps a broken device from hanging the test.
 */
static int wait_flips(int fd, unsigned int head, uint32_t want)
{
	unsigned int i;

	for (i = 0; i < 1000; i++) {
		if (hrd(fd, head, GPUVIRT_VGPU_HEAD_FLIPS) >= want)
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/* "headN" of the core's debugfs for the vGPU. */
static int debugfs_head(const char *uuid, unsigned int head, char *val,
			size_t len)
{
	char path[256], key[16];

	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/display",
		 uuid);
	snprintf(key, sizeof(key), "head%u", head);
	return gv_kv(path, key, val, len);
}

static unsigned long long debugfs_u64(const char *uuid, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/display",
		 uuid);
	return gv_kv_u64(path, key);
}

FIXTURE(display) {
	struct vfio_user a, b;
};

FIXTURE_SETUP(display)
{
	self->a.device = self->b.device = -1;
	self->a.group = self->b.group = -1;
	self->a.container = self->b.container = -1;
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_setup_h200());
}

FIXTURE_TEARDOWN(display)
{
	vgpu_client_close(&self->a);
	vgpu_client_close(&self->b);
	vgpu_remove(UUID_A);
	vgpu_remove(UUID_B);
	gv_unload_all();
}

/* The registers and the debugfs file say what each series offers. */
TEST_F(display, limits_follow_the_type)
{
	static const struct {
		const char *type;
		uint32_t heads, w, h, frl;
	} t[] = {
		{ "H200-4Q", 4, 7680, 4320, 60 },
		{ "H200-2B", 4, 5120, 2880, 45 },
		{ "H200-4A", 1, 1280, 1024, 60 },
		{ "H200-4C", 1, 4096, 2160, 60 },
	};
	char buf[64];
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		ASSERT_EQ(0, vgpu_create(t[i].type, UUID_A)) TH_LOG("%s", t[i].type);
		ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
		fd = self->a.device;
		EXPECT_TRUE(rd(fd, GPUVIRT_VGPU_REG_CAPS) & GPUVIRT_VGPU_CAP_DISPLAY);
		EXPECT_EQ(t[i].heads, rd(fd, GPUVIRT_VGPU_REG_DISP_HEADS));
		EXPECT_EQ(t[i].w, rd(fd, GPUVIRT_VGPU_REG_DISP_MAX_WIDTH));
		EXPECT_EQ(t[i].h, rd(fd, GPUVIRT_VGPU_REG_DISP_MAX_HEIGHT));
		EXPECT_EQ(t[i].frl, rd(fd, GPUVIRT_VGPU_REG_DISP_FRL));
		EXPECT_EQ(t[i].heads, debugfs_u64(UUID_A, "heads"));
		EXPECT_EQ(t[i].frl, debugfs_u64(UUID_A, "frl"));
		snprintf(buf, sizeof(buf), "%ux%u", t[i].w, t[i].h);
		{
			char path[256], val[64];

			snprintf(path, sizeof(path),
				 GV_DEBUGFS "/gpus/sim0/vgpus/%s/display", UUID_A);
			ASSERT_EQ(0, gv_kv(path, "max_resolution", val, sizeof(val)));
			EXPECT_STREQ(buf, val);
		}

		/* the largest mode is accepted on the last head offered */
		EXPECT_EQ(GPUVIRT_VGPU_DERR_NONE,
			  set_mode(fd, t[i].heads - 1, 0, t[i].w, t[i].h,
				   t[i].w * 4, XR24,
				   GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
		EXPECT_EQ(GPUVIRT_VGPU_HEAD_CTRL_ENABLE,
			  hrd(fd, t[i].heads - 1, GPUVIRT_VGPU_HEAD_CONTROL));
		/* one more column, or one more line, is not */
		EXPECT_EQ(GPUVIRT_VGPU_DERR_MODE,
			  set_mode(fd, 0, 0, t[i].w + 1, t[i].h, (t[i].w + 1) * 4,
				   XR24, GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
		EXPECT_EQ(0, hrd(fd, 0, GPUVIRT_VGPU_HEAD_CONTROL));
		EXPECT_EQ(GPUVIRT_VGPU_DERR_MODE,
			  set_mode(fd, 0, 0, t[i].w, t[i].h + 1, t[i].w * 4,
				   XR24, GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
		EXPECT_EQ(0, hrd(fd, 0, GPUVIRT_VGPU_HEAD_CONTROL));
		/* the heads the type does not offer refuse any mode */
		if (t[i].heads < GPUVIRT_VGPU_HEADS_MAX) {
			EXPECT_EQ(GPUVIRT_VGPU_DERR_HEAD,
				  set_mode(fd, t[i].heads, 0, 640, 480, 2560,
					   XR24, GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
			EXPECT_EQ(0, hrd(fd, t[i].heads,
					 GPUVIRT_VGPU_HEAD_CONTROL));
			ASSERT_EQ(0, debugfs_head(UUID_A, t[i].heads, buf,
						  sizeof(buf)));
			EXPECT_EQ(0, strncmp(buf, "enabled=0 ", 10)) TH_LOG("%s", buf);
		}
		vgpu_client_close(&self->a);
		vgpu_remove(UUID_A);
	}
}

/* A mode set through BAR0 and a picture drawn in BAR2 reach the VMM intact. */
TEST_F(display, primary_plane_shows_the_picture)
{
	const uint32_t w = 640, h = 480, stride = 640 * 4 + 256;
	const uint64_t base = 16ULL << 20;
	struct vfio_device_gfx_plane_info p;
	char rbuf[sizeof(struct vfio_region_info) + 64];
	struct vfio_region_info *ri = (struct vfio_region_info *)rbuf;
	struct vfio_region_info_cap_type *cap;
	struct vfio_device_info di = { .argsz = sizeof(di) };
	uint32_t *shown, *map, x, y, bad = 0;
	char dbg[256], want[256];
	int fd;

	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	fd = self->a.device;

	/* the display region: index 9, read-only, typed */
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_INFO, &di));
	EXPECT_EQ(GPUVIRT_VGPU_DISPLAY_REGION + 1, di.num_regions);
	memset(rbuf, 0, sizeof(rbuf));
	ri->argsz = sizeof(rbuf);
	ri->index = GPUVIRT_VGPU_DISPLAY_REGION;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, ri));
	EXPECT_EQ(4 * GIB, ri->size);
	EXPECT_EQ(DISP, ri->offset);
	EXPECT_EQ(VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_MMAP |
		  VFIO_REGION_INFO_FLAG_CAPS, ri->flags);
	ASSERT_EQ(sizeof(*ri), ri->cap_offset);
	cap = (struct vfio_region_info_cap_type *)(rbuf + ri->cap_offset);
	EXPECT_EQ(VFIO_REGION_INFO_CAP_TYPE, cap->header.id);
	EXPECT_EQ(VFIO_REGION_TYPE_PCI_VENDOR_TYPE | GPUVIRT_VGPU_PCI_VENDOR_ID,
		  cap->type);
	EXPECT_EQ(GPUVIRT_VGPU_DISPLAY_REGION_SUBTYPE, cap->subtype);

	/* probing: region planes yes, dma-bufs no */
	EXPECT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_PROBE |
			   VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(-EINVAL, query(fd, &p, VFIO_GFX_PLANE_TYPE_PROBE |
				 VFIO_GFX_PLANE_TYPE_DMABUF));
	EXPECT_EQ(-EINVAL, query(fd, &p, VFIO_GFX_PLANE_TYPE_DMABUF));
	/* head 0 off: nothing to show */
	ASSERT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(0, p.drm_format);
	EXPECT_EQ(0, p.size);
	EXPECT_EQ(GPUVIRT_VGPU_DISPLAY_REGION, p.region_index);

	ASSERT_EQ(0, draw(fd, base, w, h, stride));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, base, w, h, stride, XR24,
			   GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
	/* the registers read back what was staged */
	EXPECT_EQ(base, hrd(fd, 0, GPUVIRT_VGPU_HEAD_BASE_LO));
	EXPECT_EQ(stride, hrd(fd, 0, GPUVIRT_VGPU_HEAD_STRIDE));
	EXPECT_EQ(XR24, hrd(fd, 0, GPUVIRT_VGPU_HEAD_FORMAT));

	ASSERT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(XR24, p.drm_format);
	EXPECT_EQ(0, p.drm_format_mod);
	EXPECT_EQ(w, p.width);
	EXPECT_EQ(h, p.height);
	EXPECT_EQ(stride, p.stride);
	EXPECT_EQ(stride * h, p.size);
	EXPECT_EQ(GPUVIRT_VGPU_DISPLAY_REGION, p.region_index);

	/* what the VMM reads is the picture, pixel for pixel */
	shown = malloc(p.size + 8192);
	ASSERT_NE(NULL, shown);
	ASSERT_EQ((ssize_t)p.size, pread(fd, shown, p.size, DISP));
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			if (shown[y * (stride / 4) + x] != pixel(x, y) && !bad++)
				TH_LOG("first bad pixel %u,%u: %08x", x, y,
				       shown[y * (stride / 4) + x]);
	EXPECT_EQ(0, bad);
	/* past the plane the region reads zeros, not the rest of the slice */
	ASSERT_EQ(0, draw(fd, base + p.size + 4096 - p.size % 4096, 16, 16, 64));
	ASSERT_EQ(8192, pread(fd, shown, 8192, DISP + p.size));
	for (x = 0; x < 8192 / 4; x++)
		if (shown[x])
			bad++;
	EXPECT_EQ(0, bad);
	/* the region is read-only */
	EXPECT_EQ(-1, pwrite(fd, shown, 4, DISP));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, DISP));
	/* a VMM maps it (QEMU does) and sees the same picture, then zeros */
	map = mmap(NULL, p.size + 8192, PROT_READ, MAP_SHARED, fd, DISP);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(-1, mprotect(map, 4096, PROT_READ | PROT_WRITE));
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			if (map[y * (stride / 4) + x] != pixel(x, y))
				bad++;
	EXPECT_EQ(0, bad);
	for (x = 0; x < 4096 / 4; x++)
		if (map[(p.size + 4096 - p.size % 4096) / 4 + x])
			bad++;
	EXPECT_EQ(0, bad);
	free(shown);

	/* the core's debugfs shows the head as the device does */
	ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
	snprintf(want, sizeof(want),
		 "enabled=1 vblank_irq=0 base=0x%llx width=%u height=%u stride=%u format=0x%08x error=0",
		 (unsigned long long)base, w, h, stride, XR24);
	EXPECT_EQ(0, strncmp(dbg, want, strlen(want))) TH_LOG("%s", dbg);

	/* a flip to another base shows the other picture, from the next
	 * vblank on (the frame rate limiter is on)
	 */
	ASSERT_EQ(0, draw(fd, 0, w, h, w * 4));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, 0, w, h, w * 4, XR24,
			   GPUVIRT_VGPU_HEAD_CTRL_ENABLE));
	ASSERT_EQ(0, wait_flips(fd, 0, 2));
	ASSERT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(w * 4, p.stride);
	/* the mapping follows the flip: its last line is the new picture's */
	for (x = 0; x < w; x++)
		if (map[479 * w + x] != pixel(x, 479))
			bad++;
	EXPECT_EQ(0, bad);
	{
		uint32_t line[640];

		ASSERT_EQ(sizeof(line), pread(fd, line, sizeof(line),
					      DISP + 479 * w * 4));
		for (x = 0; x < w; x++)
			if (line[x] != pixel(x, 479))
				bad++;
		EXPECT_EQ(0, bad);
	}
	/* two mode sets accepted on head 0 */
	ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
	EXPECT_NE(NULL, strstr(dbg, " commits=2")) TH_LOG("%s", dbg);

	/* reset turns the display off; the mapping reads black */
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_RESET));
	EXPECT_EQ(0, map[0]);
	munmap(map, stride * h + 8192);
	ASSERT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(0, p.size);
	EXPECT_EQ(0, hrd(fd, 0, GPUVIRT_VGPU_HEAD_CONTROL));
	ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
	EXPECT_EQ(0, strncmp(dbg, "enabled=0 ", 10)) TH_LOG("%s", dbg);
}

/* Every kind of bad mode is refused and leaves the head off. */
TEST_F(display, bad_modes_are_refused)
{
	const uint64_t slice = 4 * GIB;
	char dbg[256];
	int fd;

	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	fd = self->a.device;

	EXPECT_EQ(GPUVIRT_VGPU_DERR_MODE,
		  set_mode(fd, 0, 0, 0, 480, 2560, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_MODE,
		  set_mode(fd, 0, 0, 640, 0, 2560, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_FORMAT,
		  set_mode(fd, 0, 0, 640, 480, 2560, 0, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_FORMAT,
		  set_mode(fd, 0, 0, 640, 480, 2560, 0x36314752 /* RG16 */, 1));
	/* stride: too small, not a whole pixel, too large */
	EXPECT_EQ(GPUVIRT_VGPU_DERR_STRIDE,
		  set_mode(fd, 0, 0, 640, 480, 2556, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_STRIDE,
		  set_mode(fd, 0, 0, 640, 480, 2562, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_STRIDE,
		  set_mode(fd, 0, 0, 640, 480, GPUVIRT_VGPU_STRIDE_MAX + 4,
			   XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_ALIGN,
		  set_mode(fd, 0, 0x800, 640, 480, 2560, XR24, 1));
	/* scanout past the slice: by one page, at the end, far beyond,
	 * and bases where base + size wraps 64 bits
	 */
	EXPECT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, slice - 2560 * 480, 640, 480, 2560, XR24,
			   1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(fd, 0, slice - 4096, 640, 480, 2560, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(fd, 0, slice, 640, 480, 2560, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(fd, 0, 0xfffffffffffff000ULL, 640, 480, 2560, XR24,
			   1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(fd, 0, 0x8000000000000000ULL, 7680, 4320,
			   GPUVIRT_VGPU_STRIDE_MAX, XR24, 1));
	/* a refusal leaves the head off, and says so in debugfs */
	EXPECT_EQ(0, hrd(fd, 0, GPUVIRT_VGPU_HEAD_CONTROL));
	ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
	EXPECT_NE(NULL, strstr(dbg, "enabled=0 ")) TH_LOG("%s", dbg);
	EXPECT_NE(NULL, strstr(dbg, "error=5 ")) TH_LOG("%s", dbg);
	/* turning a head off clears the error */
	EXPECT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, 0, 640, 480, 2560, XR24, 0));
	/* a refused commit on an enabled head turns it off */
	EXPECT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, 0, 640, 480, 2560, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(fd, 0, slice, 640, 480, 2560, XR24, 1));
	EXPECT_EQ(0, hrd(fd, 0, GPUVIRT_VGPU_HEAD_CONTROL));
}

/*
 * Two tenants side by side on one GPU: whatever A programs, its plane
 * never shows B's VRAM, which lies right after A's slice.
 */
TEST_F(display, no_plane_shows_another_tenant)
{
	const uint64_t slice = 4 * GIB;
	const uint32_t w = 1024, h = 768, stride = 4096;
	const uint64_t size = (uint64_t)stride * h;
	struct vfio_device_gfx_plane_info p;
	uint32_t *buf, i, leaked = 0;

	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_B));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->b, UUID_B));

	/* B's secret at the start of its slice */
	buf = malloc(size);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < size / 4; i++)
		buf[i] = 0x5ec2e700 | (i & 0xff);
	ASSERT_EQ((ssize_t)size, pwrite(self->b.device, buf, size, BAR2));

	/* A's last legal scanout ends exactly at the end of its slice */
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(self->a.device, 0, slice - size, w, h, stride, XR24,
			   1));
	/* one page further is refused, and so is B's offset seen from A */
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(self->a.device, 0, slice - size + 4096, w, h,
			   stride, XR24, 1));
	EXPECT_EQ(GPUVIRT_VGPU_DERR_RANGE,
		  set_mode(self->a.device, 0, slice, w, h, stride, XR24, 1));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(self->a.device, 0, slice - size, w, h, stride, XR24,
			   1));
	ASSERT_EQ(0, query(self->a.device, &p, VFIO_GFX_PLANE_TYPE_REGION));
	EXPECT_EQ(size, p.size);

	/* every byte of A's region, right up to its end, is not B's */
	memset(buf, 0xff, size);
	ASSERT_EQ((ssize_t)size, pread(self->a.device, buf, size, DISP));
	for (i = 0; i < size / 4; i++)
		if ((buf[i] & 0xffffff00) == 0x5ec2e700)
			leaked++;
	EXPECT_EQ(0, leaked);
	/* the region ends with the slice */
	EXPECT_EQ(-1, pread(self->a.device, buf, 4, DISP + slice));
	EXPECT_EQ(EINVAL, errno);
	/* B, meanwhile, shows its own VRAM */
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(self->b.device, 0, 0, w, h, stride, XR24, 1));
	ASSERT_EQ(4096, pread(self->b.device, buf, 4096, DISP));
	EXPECT_EQ(0x5ec2e700, buf[0]);
	EXPECT_EQ(0x5ec2e7ff, buf[255]);
	free(buf);
}

/* Vblanks count while a head is on, and raise IRQ_VBLANK when asked. */
TEST_F(display, vblank_counter_and_interrupt)
{
	char irqbuf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *irq = (struct vfio_irq_set *)irqbuf;
	struct pollfd pfd;
	uint32_t v0, v1, tries;
	uint16_t msi_on = 1;
	uint64_t cnt;
	int32_t efd;
	int fd;

	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	fd = self->a.device;

	EXPECT_EQ(0, hrd(fd, 1, GPUVIRT_VGPU_HEAD_VBLANK));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 1, 0, 640, 480, 2560, XR24, 1));
	/* it advances (waiting as long as needed, not judging the rate) */
	v0 = hrd(fd, 1, GPUVIRT_VGPU_HEAD_VBLANK);
	for (tries = 0; tries < 200; tries++) {
		usleep(20000);
		v1 = hrd(fd, 1, GPUVIRT_VGPU_HEAD_VBLANK);
		if (v1 > v0)
			break;
	}
	EXPECT_LT(v0, v1);
	/* it stands still while the head is off */
	ASSERT_EQ(0, wr(fd, GPUVIRT_VGPU_REG_HEAD(1) + GPUVIRT_VGPU_HEAD_CONTROL,
			0));
	v0 = hrd(fd, 1, GPUVIRT_VGPU_HEAD_VBLANK);
	usleep(50000);
	EXPECT_EQ(v0, hrd(fd, 1, GPUVIRT_VGPU_HEAD_VBLANK));
	/* no interrupt was asked for */
	EXPECT_EQ(0, rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS) &
		     GPUVIRT_VGPU_IRQ_VBLANK);

	/* the interrupt, on MSI */
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	irq->argsz = sizeof(irqbuf);
	irq->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	irq->index = VFIO_PCI_MSI_IRQ_INDEX;
	irq->start = 0;
	irq->count = 1;
	memcpy(irq->data, &efd, sizeof(efd));
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_SET_IRQS, irq));
	ASSERT_EQ(2, pwrite(fd, &msi_on, 2,
			    REGION(VFIO_PCI_CONFIG_REGION_INDEX) + 0x42));
	ASSERT_EQ(0, wr(fd, GPUVIRT_VGPU_REG_HEAD(1) + GPUVIRT_VGPU_HEAD_CONTROL,
			GPUVIRT_VGPU_HEAD_CTRL_ENABLE |
			GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ));
	pfd.fd = efd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	ASSERT_EQ(sizeof(cnt), read(efd, &cnt, sizeof(cnt)));
	EXPECT_LE(1, cnt);
	EXPECT_TRUE(rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS) &
		    GPUVIRT_VGPU_IRQ_VBLANK);
	ASSERT_EQ(0, wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS,
			GPUVIRT_VGPU_IRQ_VBLANK));
	/* and another one after the acknowledgement */
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_TRUE(rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS) &
		    GPUVIRT_VGPU_IRQ_VBLANK);
	/* off: the interrupts stop (the last one may be in flight) */
	ASSERT_EQ(0, wr(fd, GPUVIRT_VGPU_REG_HEAD(1) + GPUVIRT_VGPU_HEAD_CONTROL,
			0));
	usleep(100000);
	ASSERT_EQ(0, wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	(void)!read(efd, &cnt, sizeof(cnt));
	EXPECT_EQ(0, poll(&pfd, 1, 200));
	EXPECT_EQ(0, rd(fd, GPUVIRT_VGPU_REG_IRQ_STATUS));
	close(efd);
}

static int frl_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == GPUVIRT_A_VGPU_FRAME_RATE_LIMITER)
			*(int *)data = mnl_attr_get_u8(a);
	return MNL_CB_OK;
}

/* vgpu-set's frame-rate-limiter, and what vgpu-get says of it. */
static int nl_frl(struct nl *nl, const char *uuid, int set)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family,
					set >= 0 ? GPUVIRT_CMD_VGPU_SET :
					GPUVIRT_CMD_VGPU_GET, 0);
	int got = -1, err;

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	if (set >= 0) {
		mnl_attr_put_u8(nlh, GPUVIRT_A_VGPU_FRAME_RATE_LIMITER, set);
		return nl_talk(nl, nlh, NULL, NULL);
	}
	err = nl_talk(nl, nlh, frl_cb, &got);
	return err ?: got;
}

static int sysfs_frl(const char *uuid, const char *set)
{
	char path[256], buf[16];
	int n;

	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/gpuvirt/frame_rate_limiter",
		 uuid);
	if (set)
		return gv_write(path, set);
	n = gv_read(path, buf, sizeof(buf));
	return n < 0 ? n : atoi(buf);
}

/*
 * The frame rate limiter: on by default, flips wait for a vblank, so no
 * more flips take effect than vblanks pass; off (sysfs or netlink), every
 * flip takes effect at once.
 */
TEST_F(display, frame_rate_limiter)
{
	uint32_t f0, f1, v0, v1, i;
	struct nl nl;
	int fd;

	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	fd = self->a.device;
	ASSERT_EQ(0, nl_open(&nl));

	EXPECT_EQ(1, sysfs_frl(UUID_A, NULL));
	EXPECT_EQ(1, nl_frl(&nl, UUID_A, -1));
	EXPECT_EQ(1, debugfs_u64(UUID_A, "frame_rate_limiter"));
	EXPECT_EQ(GPUVIRT_VGPU_DISP_FRL_ON, rd(fd, GPUVIRT_VGPU_REG_DISP_STATUS));

	/* enabling a head shows its mode at once: one flip */
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, 0, 640, 480, 2560, XR24, 1));
	EXPECT_EQ(1, hrd(fd, 0, GPUVIRT_VGPU_HEAD_FLIPS));
	v0 = hrd(fd, 0, GPUVIRT_VGPU_HEAD_VBLANK);
	f0 = hrd(fd, 0, GPUVIRT_VGPU_HEAD_FLIPS);
	/* flips as fast as the guest can commit them */
	for (i = 0; i < 200; i++)
		ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
			  set_mode(fd, 0, (i & 1) << 22, 640, 480, 2560, XR24,
				   1));
	f1 = hrd(fd, 0, GPUVIRT_VGPU_HEAD_FLIPS);
	v1 = hrd(fd, 0, GPUVIRT_VGPU_HEAD_VBLANK);
	/* at most one flip per vblank */
	EXPECT_LE(f1 - f0, v1 - v0) TH_LOG("flips %u, vblanks %u", f1 - f0, v1 - v0);
	/* the last flip waits for a vblank, then shows */
	for (i = 0; i < 500; i++) {
		char dbg[256];

		ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
		if (strstr(dbg, " flip_pending=0"))
			break;
		usleep(10000);
	}
	ASSERT_GT(500, i);
	{
		struct vfio_device_gfx_plane_info p;
		char dbg[256];

		ASSERT_EQ(0, query(fd, &p, VFIO_GFX_PLANE_TYPE_REGION));
		ASSERT_EQ(0, debugfs_head(UUID_A, 0, dbg, sizeof(dbg)));
		/* the last commit (i = 199) had base 4 MiB */
		EXPECT_NE(NULL, strstr(dbg, "base=0x400000 ")) TH_LOG("%s", dbg);
	}

	/* off through sysfs: every flip shows at once */
	EXPECT_EQ(-EINVAL, sysfs_frl(UUID_A, "2"));
	ASSERT_EQ(0, sysfs_frl(UUID_A, "0"));
	EXPECT_EQ(0, sysfs_frl(UUID_A, NULL));
	EXPECT_EQ(0, nl_frl(&nl, UUID_A, -1));
	EXPECT_EQ(0, debugfs_u64(UUID_A, "frame_rate_limiter"));
	EXPECT_EQ(0, rd(fd, GPUVIRT_VGPU_REG_DISP_STATUS));
	f0 = hrd(fd, 0, GPUVIRT_VGPU_HEAD_FLIPS);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
			  set_mode(fd, 0, (i & 1) << 22, 640, 480, 2560, XR24,
				   1));
	EXPECT_EQ(f0 + 200, hrd(fd, 0, GPUVIRT_VGPU_HEAD_FLIPS));

	/* on again through netlink; out of range is refused */
	EXPECT_EQ(-ERANGE, nl_frl(&nl, UUID_A, 2));
	EXPECT_EQ(0, sysfs_frl(UUID_A, NULL));
	ASSERT_EQ(0, nl_frl(&nl, UUID_A, 1));
	EXPECT_EQ(1, sysfs_frl(UUID_A, NULL));
	EXPECT_EQ(GPUVIRT_VGPU_DISP_FRL_ON, rd(fd, GPUVIRT_VGPU_REG_DISP_STATUS));
	/* the setting is configuration: a reset keeps it */
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_RESET));
	EXPECT_EQ(1, nl_frl(&nl, UUID_A, -1));
	nl_close(&nl);
}

/* Output of "gpuvirtctl ARGS" into @buf; its exit status. */
static int ctl(char *buf, size_t len, const char *args)
{
	char cmd[512];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/gpuvirtctl %s 2>&1", getenv("GPUVIRT_BIN"),
		 args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	return pclose(f);
}

/* gpuvirtctl vgpu show reports the heads that are on and the limiter. */
TEST_F(display, gpuvirtctl_shows_heads)
{
	char out[8192];
	int fd;

	if (!getenv("GPUVIRT_BIN"))
		SKIP(return, "GPUVIRT_BIN is not set");
	ASSERT_EQ(0, vgpu_create("H200-4Q", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&self->a, UUID_A));
	fd = self->a.device;

	ASSERT_EQ(0, ctl(out, sizeof(out), "-j vgpu show uuid " UUID_A));
	EXPECT_NE(NULL, strstr(out, "\"frame-rate-limiter\":true")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"heads\":4")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"heads-on\":0")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\"head\":"));

	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 0, 0, 1920, 1080, 7680, XR24, 1));
	ASSERT_EQ(GPUVIRT_VGPU_DERR_NONE,
		  set_mode(fd, 2, 16 << 20, 1280, 720, 5120, XR24, 1));
	/* a refused mode shows nothing for its head */
	ASSERT_EQ(GPUVIRT_VGPU_DERR_MODE,
		  set_mode(fd, 3, 0, 8000, 720, 32000, XR24, 1));
	ASSERT_EQ(0, sysfs_frl(UUID_A, "0"));

	ASSERT_EQ(0, ctl(out, sizeof(out), "-j vgpu show uuid " UUID_A));
	EXPECT_NE(NULL, strstr(out, "\"frame-rate-limiter\":false")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"heads-on\":2")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out,
		"\"head\":[{\"index\":0,\"width\":1920,\"height\":1080,\"format\":\"XR24\",\"stride\":7680},"
		"{\"index\":2,\"width\":1280,\"height\":720,\"format\":\"XR24\",\"stride\":5120}]"))
		TH_LOG("%s", out);

	ASSERT_EQ(0, ctl(out, sizeof(out), "vgpu show uuid " UUID_A));
	EXPECT_NE(NULL, strstr(out, "frame-rate-limiter false heads 4 heads-on 2 head0 1920x1080 XR24 stride 7680 head2 1280x720 XR24 stride 5120"))
		TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
