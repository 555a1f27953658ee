// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tiny bare-metal guest that drives the gpuvirt vGPU from inside a VM,
 * the way a guest driver would: it finds the device on its own PCI bus,
 * places the BARs, checks the identity and the display limits, draws a
 * picture into its VRAM slice, has the engine copy and fill part of it
 * through the command ring, and flips head 0 to the result.
 *
 * It reports every step on QEMU's debug console (I/O port 0xe9) as
 * "key: value" lines, ends with "result: pass" or "result: fail <why>",
 * then "ready", and halts with the picture on screen so that the host can
 * take a screendump. selftests/vm/vgpu_guest.sh runs it and holds the
 * expected picture (keep draw_a() and the constants below in step).
 *
 * With "mode=live" on its command line (QEMU's -append) it works instead
 * without end, checking every result and flipping a numbered frame each
 * round, so that it can be migrated while it works: see run_live() and
 * selftests/vm/vgpu_migrate_qemu.sh.
 */
#include <stdint.h>

#include "../../../include/uapi/linux/gpuvirt_vgpu.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

/* Where the guest places the BARs: above its RAM, in QEMU's PCI hole. */
#define REGS_GPA	0x20000000u
#define VRAM_GPA	0x40000000u
#define VRAM_GPA_MAX	0x40000000u	/* BAR2 must fit below 2 GiB */

/* The picture, and where things live in the slice. */
#define W		320
#define H		240
#define STRIDE		((W + 32) * 4)	/* padded lines, to test the stride */
#define RING_OFF	0x0u
#define RING_SIZE	0x1000u
#define FENCE_OFF	0x2000u
#define COMPUTE_OFF	0x3000u
#define FRAME_A		0x100000u
#define FRAME_B		0x200000u
#define BAND_Y		100
#define BAND_H		40
#define BAND_RGB	0x00ff8000u
#define BOX_X		8
#define BOX_Y		8
#define BOX_N		16
#define BOX_RGB		0x00ffffffu
#define FENCE_SEQ	7u
#define COMPUTE_US	1000u
#define COMPUTE_SEED	42u

static inline void outb(u16 port, u8 v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(u16 port, u32 v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline u8 inb(u16 port)
{
	u8 v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline u32 inl(u16 port)
{
	u32 v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void puts_(const char *s)
{
	while (*s)
		outb(0xe9, (u8)*s++);
}

static void put_hex(u32 v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[11];
	int i;

	buf[0] = '0';
	buf[1] = 'x';
	for (i = 0; i < 8; i++)
		buf[2 + i] = digits[(v >> (28 - 4 * i)) & 0xf];
	buf[10] = 0;
	puts_(buf);
}

static void put_dec(u32 v)
{
	char buf[11];
	int i = 10;

	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	puts_(buf + i);
}

static void kv_hex(const char *key, u32 v)
{
	puts_(key);
	puts_(": ");
	put_hex(v);
	puts_("\n");
}

static void kv_dec(const char *key, u32 v)
{
	puts_(key);
	puts_(": ");
	put_dec(v);
	puts_("\n");
}

/* PCI configuration mechanism #1, bus 0 (where the VMM puts the device). */
static u32 cfg_addr(u32 dev, u32 off)
{
	return 0x80000000u | (dev << 11) | (off & 0xfc);
}

static u32 cfg_read(u32 dev, u32 off)
{
	outl(0xcf8, cfg_addr(dev, off));
	return inl(0xcfc);
}

static void cfg_write(u32 dev, u32 off, u32 v)
{
	outl(0xcf8, cfg_addr(dev, off));
	outl(0xcfc, v);
}

static volatile u32 *regs;
static volatile u32 *vram;

static u32 rd(u32 off)
{
	return regs[off / 4];
}

static void wr(u32 off, u32 v)
{
	regs[off / 4] = v;
}

static u32 head_rd(u32 reg)
{
	return rd(GPUVIRT_VGPU_REG_HEAD(0) + reg);
}

static void head_wr(u32 reg, u32 v)
{
	wr(GPUVIRT_VGPU_REG_HEAD(0) + reg, v);
}

static void vram_wr(u32 off, u32 v)
{
	vram[off / 4] = v;
}

static u32 vram_rd(u32 off)
{
	return vram[off / 4];
}

/* Frame A, the picture the CPU draws: gradients under a checkerboard. */
static u32 pixel_a(u32 x, u32 y)
{
	u32 r = x * 255 / (W - 1);
	u32 g = y * 255 / (H - 1);
	u32 b = ((x / 20 + y / 20) & 1) ? 0xc0 : 0x30;

	return r << 16 | g << 8 | b;
}

static void draw_a(void)
{
	u32 x, y;

	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++)
			vram_wr(FRAME_A + y * STRIDE + x * 4, pixel_a(x, y));
}

static u32 fails;

static void fail(const char *why, u32 got)
{
	puts_("fail: ");
	puts_(why);
	puts_(" got ");
	put_hex(got);
	puts_("\n");
	fails++;
}

static void expect(const char *what, u32 got, u32 want)
{
	if (got != want)
		fail(what, got);
}

static u32 find_device(void)
{
	u32 dev, id;

	for (dev = 0; dev < 32; dev++) {
		id = cfg_read(dev, 0x00);
		if (id == (GPUVIRT_VGPU_PCI_DEVICE_ID << 16 |
			   GPUVIRT_VGPU_PCI_VENDOR_ID))
			return dev;
	}
	return 32;
}

/* Size a 32-bit BAR, then place it at @gpa. */
static u32 place_bar32(u32 dev, u32 off, u32 gpa)
{
	u32 size;

	cfg_write(dev, off, 0xffffffffu);
	size = ~(cfg_read(dev, off) & ~0xfu) + 1;
	cfg_write(dev, off, gpa);
	return size;
}

/* Size BAR2, 64-bit: only a size under 4 GiB can go where we put it. */
static u32 place_bar2(u32 dev, u32 *hi_mask)
{
	u32 lo;

	cfg_write(dev, 0x18, 0xffffffffu);
	cfg_write(dev, 0x1c, 0xffffffffu);
	lo = cfg_read(dev, 0x18);
	*hi_mask = cfg_read(dev, 0x1c);
	cfg_write(dev, 0x18, VRAM_GPA);
	cfg_write(dev, 0x1c, 0);
	return ~(lo & ~0xfu) + 1;
}

static void report_firmware_view(u32 dev)
{
	u32 cap;

	kv_hex("pci.slot", dev);
	kv_hex("pci.id", cfg_read(dev, 0x00));
	kv_hex("pci.class_rev", cfg_read(dev, 0x08));
	kv_hex("pci.subsys", cfg_read(dev, 0x2c));
	kv_hex("pci.command_status", cfg_read(dev, 0x04));
	kv_hex("fw.bar0", cfg_read(dev, 0x10));
	kv_hex("fw.bar2_lo", cfg_read(dev, 0x18));
	kv_hex("fw.bar2_hi", cfg_read(dev, 0x1c));
	kv_hex("pci.int", cfg_read(dev, 0x3c));
	cap = cfg_read(dev, 0x34) & 0xff;
	kv_hex("pci.cap_ptr", cap);
	if (cap)
		kv_hex("pci.cap0", cfg_read(dev, cap));
}

static void ring_put(u32 *tail, u32 v)
{
	vram_wr(RING_OFF + *tail, v);
	*tail = (*tail + 4) & (RING_SIZE - 1);
}

static void submit_work(void)
{
	u32 tail = 0;
	u32 spins = 0;
	u32 seq;

	wr(GPUVIRT_VGPU_REG_RING_BASE_LO, RING_OFF);
	wr(GPUVIRT_VGPU_REG_RING_BASE_HI, 0);
	wr(GPUVIRT_VGPU_REG_RING_SIZE, RING_SIZE);

	/* frame B = frame A, a band filled across it, a computation */
	ring_put(&tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COPY, 7, 0));
	ring_put(&tail, FRAME_B);
	ring_put(&tail, 0);
	ring_put(&tail, FRAME_A);
	ring_put(&tail, 0);
	ring_put(&tail, STRIDE * H);
	ring_put(&tail, 0);
	ring_put(&tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0));
	ring_put(&tail, FRAME_B + BAND_Y * STRIDE);
	ring_put(&tail, 0);
	ring_put(&tail, BAND_H * STRIDE);
	ring_put(&tail, 0);
	ring_put(&tail, BAND_RGB);
	ring_put(&tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0));
	ring_put(&tail, COMPUTE_US);
	ring_put(&tail, COMPUTE_OFF);
	ring_put(&tail, 0);
	ring_put(&tail, COMPUTE_SEED);
	ring_put(&tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0));
	ring_put(&tail, FENCE_SEQ);
	ring_put(&tail, FENCE_OFF);
	ring_put(&tail, 0);
	asm volatile("sfence" ::: "memory");
	wr(GPUVIRT_VGPU_REG_RING_TAIL, tail);

	do {
		seq = rd(GPUVIRT_VGPU_REG_FENCE);
	} while (seq != FENCE_SEQ &&
		 !(rd(GPUVIRT_VGPU_REG_STATUS) & GPUVIRT_VGPU_STATUS_ERROR) &&
		 ++spins < 100000000u);
	kv_dec("ring.fence", seq);
	kv_dec("ring.error", rd(GPUVIRT_VGPU_REG_ERROR));
	kv_dec("ring.done", rd(GPUVIRT_VGPU_REG_DONE_LO));
	kv_dec("ring.head", rd(GPUVIRT_VGPU_REG_RING_HEAD));
	expect("fence register", seq, FENCE_SEQ);
	expect("fence write-back", vram_rd(FENCE_OFF), FENCE_SEQ);
	expect("packets done", rd(GPUVIRT_VGPU_REG_DONE_LO), 4);
	expect("ring head", rd(GPUVIRT_VGPU_REG_RING_HEAD), tail);
}

static void check_compute(void)
{
	u64 x = COMPUTE_SEED;
	u32 i;

	for (i = 0; i < COMPUTE_US; i++)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	kv_hex("compute.lo", vram_rd(COMPUTE_OFF));
	kv_hex("compute.hi", vram_rd(COMPUTE_OFF + 4));
	expect("compute result low", vram_rd(COMPUTE_OFF), (u32)x);
	expect("compute result high", vram_rd(COMPUTE_OFF + 4), (u32)(x >> 32));
}

static void stage_mode(u32 base, u32 width)
{
	head_wr(GPUVIRT_VGPU_HEAD_BASE_LO, base);
	head_wr(GPUVIRT_VGPU_HEAD_BASE_HI, 0);
	head_wr(GPUVIRT_VGPU_HEAD_WIDTH, width);
	head_wr(GPUVIRT_VGPU_HEAD_HEIGHT, H);
	head_wr(GPUVIRT_VGPU_HEAD_STRIDE, STRIDE);
	head_wr(GPUVIRT_VGPU_HEAD_FORMAT, GPUVIRT_VGPU_FMT_XRGB8888);
}

static void commit(const char *what, u32 want_error)
{
	u32 err;

	head_wr(GPUVIRT_VGPU_HEAD_CONTROL, GPUVIRT_VGPU_HEAD_CTRL_ENABLE);
	err = head_rd(GPUVIRT_VGPU_HEAD_ERROR);
	puts_("head0.");
	puts_(what);
	puts_(": error ");
	put_dec(err);
	puts_(" control ");
	put_dec(head_rd(GPUVIRT_VGPU_HEAD_CONTROL));
	puts_("\n");
	expect(what, err, want_error);
	expect("head on after the commit", head_rd(GPUVIRT_VGPU_HEAD_CONTROL),
	       want_error ? 0 : GPUVIRT_VGPU_HEAD_CTRL_ENABLE);
}

static void check_display_limits(u32 vram_size)
{
	u32 max_w = rd(GPUVIRT_VGPU_REG_DISP_MAX_WIDTH);

	kv_dec("disp.heads", rd(GPUVIRT_VGPU_REG_DISP_HEADS));
	kv_dec("disp.max_width", max_w);
	kv_dec("disp.max_height", rd(GPUVIRT_VGPU_REG_DISP_MAX_HEIGHT));
	kv_dec("disp.frl", rd(GPUVIRT_VGPU_REG_DISP_FRL));

	/* a mode wider than the type allows, and a scanout past the slice */
	stage_mode(FRAME_A, max_w + 1);
	commit("too_wide", GPUVIRT_VGPU_DERR_MODE);
	stage_mode(vram_size - GPUVIRT_VGPU_SCANOUT_ALIGN, W);
	commit("past_slice", GPUVIRT_VGPU_DERR_RANGE);
}

static void check_frame_b(void)
{
	expect("B pixel (0,0)", vram_rd(FRAME_B), pixel_a(0, 0));
	expect("B pixel (300,50)", vram_rd(FRAME_B + 50 * STRIDE + 300 * 4),
	       pixel_a(300, 50));
	expect("B band pixel (5,120)",
	       vram_rd(FRAME_B + 120 * STRIDE + 5 * 4), BAND_RGB);
	expect("B box pixel (10,10)",
	       vram_rd(FRAME_B + 10 * STRIDE + 10 * 4), BOX_RGB);
}

static void wait_vblanks(u32 n)
{
	u32 start = head_rd(GPUVIRT_VGPU_HEAD_VBLANK);
	u32 spins = 0;

	while (head_rd(GPUVIRT_VGPU_HEAD_VBLANK) - start < n &&
	       ++spins < 100000000u)
		;
	kv_dec("head0.vblank", head_rd(GPUVIRT_VGPU_HEAD_VBLANK));
	if (head_rd(GPUVIRT_VGPU_HEAD_VBLANK) - start < n)
		fail("vblank counter did not advance", head_rd(GPUVIRT_VGPU_HEAD_VBLANK));
}

/*
 * Find the vGPU, place its BARs and check that it is one of ours with
 * displays. Returns the slice size, or 0 after reporting the failure.
 */
static u32 setup_device(void)
{
	u32 dev, bar0_size, bar2_size, bar2_hi, vram_size;

	dev = find_device();
	if (dev == 32) {
		puts_("result: fail no vGPU on bus 0\nready\n");
		return 0;
	}
	report_firmware_view(dev);

	/* memory decoding off while the BARs move */
	cfg_write(dev, 0x04, 0);
	bar0_size = place_bar32(dev, 0x10, REGS_GPA);
	bar2_size = place_bar2(dev, &bar2_hi);
	kv_hex("bar0.size", bar0_size);
	kv_hex("bar2.size", bar2_size);
	kv_hex("bar2.hi_mask", bar2_hi);
	if (bar2_hi != 0xffffffffu || bar2_size > VRAM_GPA_MAX) {
		puts_("result: fail BAR2 too large for this guest\nready\n");
		return 0;
	}
	cfg_write(dev, 0x04, 0x0006);	/* memory space, bus master */
	regs = (volatile u32 *)REGS_GPA;
	vram = (volatile u32 *)VRAM_GPA;

	kv_hex("reg.magic", rd(GPUVIRT_VGPU_REG_MAGIC));
	kv_dec("reg.version", rd(GPUVIRT_VGPU_REG_VERSION));
	kv_hex("reg.caps", rd(GPUVIRT_VGPU_REG_CAPS));
	vram_size = rd(GPUVIRT_VGPU_REG_VRAM_SIZE_LO);
	kv_hex("reg.vram_size", vram_size);
	expect("magic", rd(GPUVIRT_VGPU_REG_MAGIC), GPUVIRT_VGPU_MAGIC);
	expect("vram size high", rd(GPUVIRT_VGPU_REG_VRAM_SIZE_HI), 0);
	if (fails || !(rd(GPUVIRT_VGPU_REG_CAPS) & GPUVIRT_VGPU_CAP_DISPLAY)) {
		puts_("result: fail not a vGPU with displays\nready\n");
		return 0;
	}
	return vram_size;
}

/*
 * The default mode: check the display limits, draw frame A, have the
 * engine make frame B from it, flip to B and stop with it on screen.
 */
static void run_once(u32 vram_size)
{
	u32 x, y;

	check_display_limits(vram_size);

	draw_a();
	stage_mode(FRAME_A, W);
	commit("mode_a", 0);
	wait_vblanks(2);

	submit_work();
	check_compute();
	for (y = BOX_Y; y < BOX_Y + BOX_N; y++)
		for (x = BOX_X; x < BOX_X + BOX_N; x++)
			vram_wr(FRAME_B + y * STRIDE + x * 4, BOX_RGB);
	check_frame_b();

	/* the flip: same mode, frame B */
	head_wr(GPUVIRT_VGPU_HEAD_BASE_LO, FRAME_B);
	commit("flip_b", 0);
	wait_vblanks(2);
	kv_dec("head0.flips", head_rd(GPUVIRT_VGPU_HEAD_FLIPS));

	if (fails) {
		puts_("result: fail ");
		put_dec(fails);
		puts_(" checks\n");
	} else {
		puts_("result: pass\n");
	}
	puts_("ready\n");
}

/*
 * The live mode ("mode=live" on the command line), for migration tests:
 * it never stops. Each round, numbered by seq from 1, rings five packets
 * and checks every result when their fence arrives:
 *   FILL    the back frame with bg(seq)
 *   FILL    WORK_FILL with pattern(seq)
 *   COPY    WORK_FILL to WORK_COPY
 *   COMPUTE LIVE_COMPUTE_US steps from seed seq into COMPUTE_OFF
 *   FENCE   seq
 * then draws seq in decimal on the back frame, flips head 0 to it and
 * waits until the flip is shown. The frame on screen after round seq is
 * bg(seq) with seq in white digits (keep font[], bg() and the layout in
 * step with selftests/vm/vgpu_migrate_qemu.sh).
 *
 * Each round ends with one line on the debug console:
 *   live: seq=N done=D checked=C bad=B flip=F
 * D is the device's count of packets completed since the start, which
 * must be 5 * N: a packet lost or run twice shows there. C counts the
 * checks made, B those that failed; each failure also prints
 *   live: seq=N mismatch WHAT got X want Y
 * F is 1 when the round's frame was flipped to and shown, 0 when the host
 * held the flips: a byte 'h' on COM1 holds them from the next round on
 * (the work goes on), 'g' lets them go again; each is acknowledged with
 * "live: hold" or "live: go". So the host can know which frame is on
 * screen while the guest runs on, after a migration for one.
 */
#define WORK_FILL	0x4000u
#define WORK_COPY	0x5000u
#define WORK_LEN	0x1000u
#define LIVE_COMPUTE_US	200u
#define LIVE_PKTS	5u
#define DIGITS		8u
#define DIGIT_X		16u
#define DIGIT_Y		16u
#define DIGIT_SCALE	4u
#define DIGIT_STEP	16u
#define DIGIT_RGB	0x00ffffffu
#define SPINS		100000000u
#define COM1		0x3f8
#define COM1_LSR	(COM1 + 5)
#define LSR_DATA_READY	0x01u

/* 3x5 digits, rows top first, 3 bits a row, the left column highest */
static const u16 font[10] = {
	0x7b6f, 0x2c97, 0x73e7, 0x73cf, 0x5bc9,
	0x79cf, 0x79ef, 0x7249, 0x7bef, 0x7bcf,
};

static u32 bg(u32 seq)
{
	u32 h = seq * 0x9e3779b1u;

	h ^= h >> 15;
	return h & 0x007f7f7fu;	/* never the digits' white */
}

static u32 pattern(u32 seq)
{
	return (seq * 0x01000193u) ^ 0xa5a5a5a5u;
}

static u32 live_seq, live_checked, live_bad, live_hold;

/* What the host said on COM1; a port with no UART reads all ones. */
static void live_read_host(void)
{
	u8 lsr, c;

	for (;;) {
		lsr = inb(COM1_LSR);
		if (lsr == 0xff || !(lsr & LSR_DATA_READY))
			return;
		c = inb(COM1);
		if (c == 'h' || c == 'g') {
			live_hold = c == 'h';
			puts_(live_hold ? "live: hold\n" : "live: go\n");
		}
	}
}

static void live_expect(const char *what, u32 got, u32 want)
{
	live_checked++;
	if (got == want)
		return;
	live_bad++;
	puts_("live: seq=");
	put_dec(live_seq);
	puts_(" mismatch ");
	puts_(what);
	puts_(" got ");
	put_hex(got);
	puts_(" want ");
	put_hex(want);
	puts_("\n");
}

static void ring_put64(u32 *tail, u32 v)
{
	ring_put(tail, v);
	ring_put(tail, 0);
}

static void live_submit(u32 *tail, u32 back)
{
	u32 seq = live_seq;

	ring_put(tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0));
	ring_put64(tail, back);
	ring_put64(tail, STRIDE * H);
	ring_put(tail, bg(seq));
	ring_put(tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0));
	ring_put64(tail, WORK_FILL);
	ring_put64(tail, WORK_LEN);
	ring_put(tail, pattern(seq));
	ring_put(tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COPY, 7, 0));
	ring_put64(tail, WORK_COPY);
	ring_put64(tail, WORK_FILL);
	ring_put64(tail, WORK_LEN);
	ring_put(tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0));
	ring_put(tail, LIVE_COMPUTE_US);
	ring_put64(tail, COMPUTE_OFF);
	ring_put(tail, seq);
	ring_put(tail, GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0));
	ring_put(tail, seq);
	ring_put64(tail, FENCE_OFF);
	asm volatile("sfence" ::: "memory");
	wr(GPUVIRT_VGPU_REG_RING_TAIL, *tail);
}

static void live_check(u32 tail, u32 back, u32 done0)
{
	u32 seq = live_seq, spins = 0, fence, i;
	u64 x = seq;

	do {
		fence = rd(GPUVIRT_VGPU_REG_FENCE);
	} while (fence != seq &&
		 !(rd(GPUVIRT_VGPU_REG_STATUS) & GPUVIRT_VGPU_STATUS_ERROR) &&
		 ++spins < SPINS);
	live_expect("fence register", fence, seq);
	live_expect("ring error", rd(GPUVIRT_VGPU_REG_ERROR), 0);
	live_expect("ring head", rd(GPUVIRT_VGPU_REG_RING_HEAD), tail);
	live_expect("packets done", rd(GPUVIRT_VGPU_REG_DONE_LO) - done0,
		    seq * LIVE_PKTS);
	live_expect("fence write-back", vram_rd(FENCE_OFF), seq);
	live_expect("fill first", vram_rd(WORK_FILL), pattern(seq));
	live_expect("fill last", vram_rd(WORK_FILL + WORK_LEN - 4), pattern(seq));
	live_expect("copy first", vram_rd(WORK_COPY), pattern(seq));
	live_expect("copy last", vram_rd(WORK_COPY + WORK_LEN - 4), pattern(seq));
	for (i = 0; i < LIVE_COMPUTE_US; i++)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	live_expect("compute low", vram_rd(COMPUTE_OFF), (u32)x);
	live_expect("compute high", vram_rd(COMPUTE_OFF + 4), (u32)(x >> 32));
	live_expect("frame first", vram_rd(back), bg(seq));
	live_expect("frame last", vram_rd(back + (H - 1) * STRIDE + (W - 1) * 4),
		    bg(seq));
}

static void draw_number(u32 base, u32 n)
{
	u32 d, r, c, sx, sy, bits, x0;

	for (d = 0; d < DIGITS; d++) {
		bits = font[n % 10];
		n /= 10;
		x0 = DIGIT_X + (DIGITS - 1 - d) * DIGIT_STEP;
		for (r = 0; r < 5; r++)
			for (c = 0; c < 3; c++) {
				if (!(bits & (1u << (14 - (r * 3 + c)))))
					continue;
				for (sy = 0; sy < DIGIT_SCALE; sy++)
					for (sx = 0; sx < DIGIT_SCALE; sx++)
						vram_wr(base + (DIGIT_Y + r * DIGIT_SCALE + sy) * STRIDE +
							(x0 + c * DIGIT_SCALE + sx) * 4,
							DIGIT_RGB);
			}
	}
}

static void live_flip(u32 back)
{
	u32 flips = head_rd(GPUVIRT_VGPU_HEAD_FLIPS), spins = 0;

	head_wr(GPUVIRT_VGPU_HEAD_BASE_LO, back);
	head_wr(GPUVIRT_VGPU_HEAD_CONTROL, GPUVIRT_VGPU_HEAD_CTRL_ENABLE);
	live_expect("flip error", head_rd(GPUVIRT_VGPU_HEAD_ERROR), 0);
	while (head_rd(GPUVIRT_VGPU_HEAD_FLIPS) == flips && ++spins < SPINS)
		;
	live_expect("flip shown", head_rd(GPUVIRT_VGPU_HEAD_FLIPS), flips + 1);
}

static void run_live(void)
{
	u32 tail = 0, back = FRAME_B, done0;

	wr(GPUVIRT_VGPU_REG_RING_BASE_LO, RING_OFF);
	wr(GPUVIRT_VGPU_REG_RING_BASE_HI, 0);
	wr(GPUVIRT_VGPU_REG_RING_SIZE, RING_SIZE);
	stage_mode(FRAME_A, W);
	commit("live_mode", 0);
	done0 = rd(GPUVIRT_VGPU_REG_DONE_LO);
	puts_("live: start\n");
	for (live_seq = 1; ; live_seq++) {
		live_submit(&tail, back);
		live_check(tail, back, done0);
		draw_number(back, live_seq);
		live_read_host();
		if (!live_hold)
			live_flip(back);
		puts_("live: seq=");
		put_dec(live_seq);
		puts_(" done=");
		put_dec(rd(GPUVIRT_VGPU_REG_DONE_LO) - done0);
		puts_(" checked=");
		put_dec(live_checked);
		puts_(" bad=");
		put_dec(live_bad);
		puts_(live_hold ? " flip=0\n" : " flip=1\n");
		/* a held round leaves the back frame the back frame */
		if (!live_hold)
			back ^= FRAME_A ^ FRAME_B;
	}
}

/* The Multiboot information: flags, and the command line if bit 2 is set. */
#define MB_LOADER_MAGIC	0x2badb002u
#define MB_INFO_CMDLINE	(1u << 2)

static int cmdline_has(u32 magic, u32 info, const char *word)
{
	const volatile u32 *mbi = (const volatile u32 *)info;
	const char *line, *s, *w;

	if (magic != MB_LOADER_MAGIC || !info || !(mbi[0] & MB_INFO_CMDLINE))
		return 0;
	line = (const char *)mbi[4];
	for (s = line; *s; s++) {
		if (s > line && s[-1] != ' ')
			continue;
		for (w = word; *w && s[w - word] == *w; w++)
			;
		if (!*w && (s[w - word] == ' ' || !s[w - word]))
			return 1;
	}
	return 0;
}

void guest_main(u32 magic, u32 info);

void guest_main(u32 magic, u32 info)
{
	u32 vram_size;
	int live = cmdline_has(magic, info, "mode=live");

	puts_("gpuvirt test guest\n");
	if (live)
		puts_("mode: live\n");
	vram_size = setup_device();
	if (!vram_size)
		return;
	if (live)
		run_live();
	else
		run_once(vram_size);
}
