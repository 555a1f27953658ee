// SPDX-License-Identifier: GPL-2.0-only
/*
 * vgpu_fuzz: what a hostile VMM or guest writes into a vGPU must never show
 * it anything of another tenant (Documentation/vgpu/vgpu-abi.rst; issue:
 * "a hostile VMM or guest reads nothing of another tenant").
 *
 * Four vGPUs of one type sit side by side on a simulated H200 in
 * homogeneous mode, slots 0 to 3: a neighbour N1, the destination DST,
 * a neighbour N2 and the source SRC, so that DST has a neighbour on each
 * side. The neighbours' first and last MiB (and, once its streams are
 * taken, the source's) hold a signature: 16-byte units of an 8-byte tag
 * and the unit's owner and offset, so that any of it read back through DST
 * is found and named. N1 and N2 run work on their rings all along, whose
 * results are checked as each batch completes and at the end.
 *
 * stream  The source is given state worth mutating (config space, a
 *         pending interrupt, a ring stopped with a packet in progress,
 *         display heads on, on with vblank interrupts, turned off and
 *         refused, pages written) and saved; from that stream and a
 *         variant with head 0 turned off, each fuzzed stream applies one
 *         to six mutations (header fields, record tags, lengths, order,
 *         duplicates, truncation, page indexes and contents, every field
 *         of the device state and of each head), recomputes the CRC
 *         (mostly), and is resumed into DST the way a VMM does: STOP ->
 *         RESUMING, written in pieces, RESUMING -> STOP -> RUNNING. A
 *         stream must be refused with EINVAL and a "migration stream
 *         refused" line on DST in the kernel log, or be taken and then
 *         stay inside DST's slice: stopped, DST shows exactly the stream's
 *         pages and plane and raises no interrupt; running, its ring is
 *         rung, its registers, BAR2, region 9 (pread and mmap) and
 *         VFIO_DEVICE_QUERY_GFX_PLANE are read; saved again, its stream is
 *         well formed and carries nothing of another tenant.
 * display The guest's path: random modes, bases, strides, sizes, formats,
 *         enables, flips and odd-width writes through BAR0 on DST's four
 *         heads, checked against a model of the ABI's rules (HEAD_ERROR,
 *         HEAD_CONTROL, the registers, debugfs), then the plane read
 *         through VFIO_DEVICE_QUERY_GFX_PLANE and region 9 (pread, with
 *         pieces across pages, and mmap) against DST's own known content.
 *
 * Usage: vgpu_fuzz [stream|display|all] [-s SEED] [-n COUNT] [-t SECONDS]
 *                  [-i INDEX] [-T TYPE] [-w DIR] [-v]
 * With no arguments: both modes, a small budget (80 streams, 250 display
 * rounds: about 30 s under TCG), as a normal VM test. The seed is
 * $GPUVIRT_SEED or else taken from the clock, and printed; -s SEED -n COUNT
 * repeats a run, -s SEED -i INDEX one stream of it (the source's timing is
 * taken out of its streams, so the same seed makes the same streams). The
 * output is KTAP: one nested result per check, with the streams run and
 * the refusals by reason. Exit 0 when every check held, 1 when one did
 * not, 4 (skip) outside the test VM.
 *
 * DST's backing is freed only when it is removed: past 128 MiB of it, DST
 * is made anew in its slot, so that a long run never meets the sim's
 * host_mem_cap_mb.
 */
#include <ctype.h>
#include <inttypes.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>

#include "gpuvirt_test.h"
#include "vgpu_client.h"
#include "vgpu_stream.h"
#include <linux/gpuvirt_vgpu.h>

#define TYPES		GV_SIM_BUS "/devices/sim0/gpu/mdev_supported_types"
#define VGPU_DEBUGFS	GV_DEBUGFS "/gpus/sim0/vgpus/"
#define BAR0		VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX)
#define BAR2		VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)
#define CFG		VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX)
#define DISP		VGPU_REGION(GPUVIRT_VGPU_DISPLAY_REGION)
#define XR24		GPUVIRT_VGPU_FMT_XRGB8888
#define PAGE		((uint64_t)4096)
#define MIB		((uint64_t)1 << 20)
#define HEAD_REG(h, r)	(GPUVIRT_VGPU_REG_HEAD(h) + GPUVIRT_VGPU_HEAD_##r)
#define ENABLE		GPUVIRT_VGPU_HEAD_CTRL_ENABLE
#define VBL_IRQ		GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ

/* The signature of another tenant, and the content of DST's own. */
#define NBR_TAG		0x9d3b5f1eab4e4252ULL
#define OWN_TAG		0x6c1d7e294f574e47ULL
#define SIG_LEN		MIB	/* at each end of a neighbour's slice */

/* The neighbours' work: a ring after the first signature MiB. */
#define NW_RING		(SIG_LEN)
#define NW_RING_SIZE	4096u
#define NW_RES		(SIG_LEN + 0x10000)
#define NW_FENCES	(SIG_LEN + 0x18000)
#define NW_SLOTS	128u
#define NW_STEPS	3000u

/* The source's layout. */
#define S_RING		0x10000ULL
#define S_RING_SIZE	8192u
#define S_PLANE		0x100000ULL	/* head 0: 256 x 128, stride 1024 */
#define S_PLANE_W	256u
#define S_PLANE_H	128u
#define S_PLANE_STRIDE	1024u
#define S_HEAD1		0x200000ULL	/* head 1: 640 x 480 */
#define S_FILL		0x300000ULL
#define S_FILL_LEN	0x10000u
#define S_FENCE		0x400000ULL
#define S_COMPUTE	0x400100ULL
#define S_NCOMPUTE	3u
#define S_STEPS		100000u		/* the most a COMPUTE takes: 100 ms */

/* DST's own content for the display fuzzer: its first and last MiBs. */
#define OWN_LO		(4 * MIB)
#define OWN_HI		(1 * MIB)

enum { T_N1, T_DST, T_N2, T_SRC, T_NR };
static const char *const tenant_names[T_NR] = { "n1", "dst", "n2", "src" };
static const char *const tenant_uuids[T_NR] = {
	"6a1f0b42-0000-4000-8000-0000000000f1",
	"6a1f0b42-0000-4000-8000-0000000000f2",
	"6a1f0b42-0000-4000-8000-0000000000f3",
	"6a1f0b42-0000-4000-8000-0000000000f4",
};

struct tenant {
	const char *name, *uuid;
	struct vfio_user u;
	int fd;
	uint64_t off;		/* of its slice in the GPU's VRAM */
	bool signed_;		/* holds the signature */
	/* work (N1, N2) */
	bool works;
	uint32_t tail, seq, batch_seq;
	bool batch_out;
	uint64_t batches;
};

static struct {
	const char *type;
	uint64_t seed;
	long count;		/* -1: the mode's default */
	long index;		/* -i: one stream only, or -1 */
	double seconds;		/* 0: no time bound */
	const char *dump_dir;
	bool verbose;
} opt = { .type = "H200-4Q", .count = -1, .index = -1 };

static struct tenant T[T_NR];
static uint64_t S;		/* slice size */
static uint64_t npages;
static uint64_t gpu_vram;
static uint32_t heads_offered, max_w, max_h;
static int kmsg_fd = -1;
static int efd_intx = -1, efd_msi = -1;
static uint8_t *dst_disp_map, *dst_bar2_map;
static char cur_ctx[160];	/* "stream 17" */
static const char *cur_desc = "";

/* --- reporting --------------------------------------------------------- */

struct check {
	const char *name;
	const char *what;
	unsigned long tried, failed;
	bool skipped;
	const char *skip_why;
};

static struct check *cur_checks;

static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("    # ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static void tried(int c)
{
	cur_checks[c].tried++;
}

static void fail(int c, const char *fmt, ...)
{
	struct check *k = &cur_checks[c];
	char msg[512];
	va_list ap;

	k->tried++;
	k->failed++;
	if (k->failed > 8) {
		if (k->failed == 9)
			diag("[%s] more violations follow, not shown", k->name);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag("VIOLATION [%s] %s: %s", k->name, cur_ctx, msg);
	if (*cur_desc)
		diag("    mutations: %s", cur_desc);
}

/* A check that holds when @ok; counts it either way. */
static bool expect(int c, bool ok, const char *fmt, ...)
{
	struct check *k = &cur_checks[c];
	char msg[512];
	va_list ap;

	if (ok) {
		k->tried++;
		return true;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail(c, "%s", msg);
	return false;
}

static int report(const struct check *c, unsigned int n, const char *mode,
		  int top)
{
	unsigned int i, bad = 0;

	printf("    1..%u\n", n);
	for (i = 0; i < n; i++) {
		if (c[i].skipped) {
			printf("    ok %u %s: %s # SKIP %s\n", i + 1, mode, c[i].what,
			       c[i].skip_why);
			continue;
		}
		if (!c[i].failed && !c[i].tried) {
			printf("    not ok %u %s: %s (never exercised)\n", i + 1,
			       mode, c[i].what);
			bad++;
			continue;
		}
		printf("    %s %u %s: %s (%lu checked, %lu violations)\n",
		       c[i].failed ? "not ok" : "ok", i + 1, mode, c[i].what,
		       c[i].tried, c[i].failed);
		bad += !!c[i].failed;
	}
	printf("%s %d %s\n", bad ? "not ok" : "ok", top, mode);
	fflush(stdout);
	return bad;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- randomness --------------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rbelow(struct rng *r, uint64_t n)
{
	return n ? rnext(r) % n : 0;
}

static bool rchance(struct rng *r, unsigned int pct)
{
	return rbelow(r, 100) < pct;
}

static unsigned int rpick(struct rng *r, const unsigned int *w, unsigned int n)
{
	unsigned int i, sum = 0, x;

	for (i = 0; i < n; i++)
		sum += w[i];
	x = rbelow(r, sum);
	for (i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return n - 1;
}

static struct rng rng_for(uint64_t seed, uint64_t stream, uint64_t index)
{
	struct rng r = { seed ^ (stream * 0xd1342543de82ef95ULL) };

	r.s ^= rnext(&r) + index * 0x9e3779b97f4a7c15ULL;
	rnext(&r);
	return r;
}

/* --- device access ------------------------------------------------------ */

static uint32_t rd(int fd, unsigned int reg)
{
	uint32_t v = 0xdeadbeef;

	if (pread(fd, &v, 4, BAR0 + reg) != 4)
		return 0xdeadbeef;
	return v;
}

static int wr(int fd, unsigned int reg, uint32_t v)
{
	return pwrite(fd, &v, 4, BAR0 + reg) == 4 ? 0 : -errno;
}

static uint16_t cfg_cmd(int fd)
{
	uint16_t v = 0;

	if (pread(fd, &v, 2, CFG + 4) != 2)
		return 0;
	return v;
}

static int bar2_write(int fd, uint64_t off, const void *p, size_t n)
{
	return pwrite(fd, p, n, BAR2 + off) == (ssize_t)n ? 0 : -errno;
}

static int query_plane(int fd, struct vfio_device_gfx_plane_info *p)
{
	memset(p, 0, sizeof(*p));
	p->argsz = sizeof(*p);
	p->flags = VFIO_GFX_PLANE_TYPE_REGION;
	p->drm_plane_type = 1;	/* DRM_PLANE_TYPE_PRIMARY */
	return ioctl(fd, VFIO_DEVICE_QUERY_GFX_PLANE, p) ? -errno : 0;
}

/* Reads through a mapping that may raise SIGBUS. */
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

/* Copy @n bytes out of a mapping; 0, or -EFAULT when it raised SIGBUS. */
static int map_copy(void *dst, const uint8_t *src, size_t n)
{
	if (sigsetjmp(bus_jmp, 1)) {
		bus_armed = 0;
		return -EFAULT;
	}
	bus_armed = 1;
	memcpy(dst, src, n);
	bus_armed = 0;
	return 0;
}

/* --- the signature ------------------------------------------------------ */

static void sig_unit(uint8_t *u, unsigned int owner, uint64_t off)
{
	gvs_put(u, 0, 8, NBR_TAG);
	gvs_put(u, 8, 8, (uint64_t)owner << 56 | off);
}

static void own_unit(uint8_t *u, uint64_t off)
{
	gvs_put(u, 0, 8, OWN_TAG);
	gvs_put(u, 8, 8, off);
}

/* Fill @buf with @owner's signature for slice offset @off (16-aligned). */
static void sig_fill(uint8_t *buf, size_t n, unsigned int owner, uint64_t off)
{
	size_t i;

	for (i = 0; i < n; i += 16)
		sig_unit(buf + i, owner, off + i);
}

static void own_fill(uint8_t *buf, size_t n, uint64_t off)
{
	size_t i;

	for (i = 0; i < n; i += 16)
		own_unit(buf + i, off + i);
}

/*
 * Is another tenant's signature in @p? Names it in @what: the owner and
 * the offset in its slice of the first unit found.
 */
static bool sig_find(const uint8_t *p, size_t n, char *what, size_t wlen)
{
	uint64_t tag = NBR_TAG, v;
	const uint8_t *hit = memmem(p, n, &tag, 8);
	size_t at;

	if (!hit)
		return false;
	at = hit - p;
	v = at + 16 <= n ? gvs_get(hit, 8, 8) : ~(uint64_t)0;
	snprintf(what, wlen, "%s's VRAM (slice offset 0x%" PRIx64 ") at byte 0x%zx",
		 (v >> 56) < T_NR ? tenant_names[v >> 56] : "another tenant",
		 v & (((uint64_t)1 << 56) - 1), at);
	return true;
}

/* --- the kernel log ----------------------------------------------------- */

struct pattern {
	char label[32];
	regex_t re;
};

static struct pattern patterns[32];
static unsigned int npatterns;

static void patterns_load(void)
{
	static const char *const builtin[] = {
		"WARNING:", "BUG:", "kernel BUG at", "Oops", "KASAN", "UBSAN",
		"KFENCE", "possible circular locking|inconsistent lock state",
		"INFO: task .* blocked", "general protection fault",
		"Kernel panic", "refcount_t: ", "list_(add|del) corruption",
	};
	const char *src = getenv("GPUVIRT_SRC");
	char path[PATH_MAX], line[1024];
	FILE *f = NULL;
	unsigned int i;

	if (src) {
		snprintf(path, sizeof(path), "%s/selftests/lib/kernel-reports", src);
		f = fopen(path, "r");
	}
	while (f && npatterns < GVS_ARRAY_SIZE(patterns) &&
	       fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		tab[strcspn(tab + 1, "\n") + 1] = '\0';
		snprintf(patterns[npatterns].label, sizeof(patterns[0].label),
			 "%.31s", line);
		if (!regcomp(&patterns[npatterns].re, tab + 1,
			     REG_EXTENDED | REG_NOSUB))
			npatterns++;
	}
	if (f)
		fclose(f);
	if (npatterns)
		return;
	for (i = 0; i < GVS_ARRAY_SIZE(builtin); i++) {
		snprintf(patterns[npatterns].label, sizeof(patterns[0].label),
			 "%s", builtin[i]);
		if (!regcomp(&patterns[npatterns].re, builtin[i],
			     REG_EXTENDED | REG_NOSUB))
			npatterns++;
	}
}

/* The log lines since the last call. */
struct klog {
	char *text;		/* lines, each ending in '\n' */
	size_t len, cap;
};

static void klog_drain(struct klog *k)
{
	char rec[8192];
	ssize_t n;

	k->len = 0;
	if (k->text)
		k->text[0] = '\0';
	if (kmsg_fd < 0)
		return;
	for (;;) {
		char *msg, *nl;
		size_t m;

		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EPIPE)
				continue;
			break;
		}
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		m = strlen(msg);
		if (k->len + m + 2 > k->cap) {
			size_t cap = (k->len + m + 2) * 2;
			char *t = realloc(k->text, cap);

			if (!t)
				return;
			k->text = t;
			k->cap = cap;
		}
		memcpy(k->text + k->len, msg, m);
		k->len += m;
		k->text[k->len++] = '\n';
		k->text[k->len] = '\0';
	}
}

/* A kernel report in the lines drained: fail @check with it. */
static void klog_scan(const struct klog *k, int check)
{
	const char *line = k->text;

	tried(check);
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		char buf[512];
		size_t m = nl ? (size_t)(nl - line) : strlen(line);
		unsigned int i;

		snprintf(buf, sizeof(buf), "%.*s", (int)m, line);
		for (i = 0; i < npatterns; i++)
			if (!regexec(&patterns[i].re, buf, 0, NULL, 0)) {
				fail(check, "kernel log: %s", buf);
				break;
			}
		line = nl ? nl + 1 : NULL;
	}
}

/*
 * The reason of a "migration stream refused" line about @uuid, without
 * the numbers: what follows "refused", up to " (" or ",". False if none.
 */
static bool klog_refusal(const struct klog *k, const char *uuid, char *why,
			 size_t wlen)
{
	const char *line = k->text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t m = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512], *p, *e;

		snprintf(buf, sizeof(buf), "%.*s", (int)m, line);
		line = nl ? nl + 1 : NULL;
		p = strstr(buf, "migration stream refused");
		if (!p || !strstr(buf, uuid))
			continue;
		p += strlen("migration stream refused");
		if (!strncmp(p, " at byte ", 9)) {
			p += 9;
			while (isdigit((unsigned char)*p))
				p++;
		}
		if (*p == ':')
			p++;
		while (*p == ' ')
			p++;
		e = strstr(p, " (");
		if (e)
			*e = '\0';
		e = strchr(p, ',');
		if (e)
			*e = '\0';
		if (!strncmp(p, "it is of vGPU type", 18))
			p[18] = '\0';
		snprintf(why, wlen, "%s", *p ? p : "(no reason given)");
		return true;
	}
	return false;
}

/* --- set-up ------------------------------------------------------------- */

static int vgpu_create(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/create", opt.type);
	return gv_write(path, uuid);
}

static void vgpu_remove(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/remove", uuid);
	gv_write(path, "1");
}

/* A vGPU's VRAM offset from `gpuvirtctl -j vgpu show`, or ~0. */
static uint64_t vgpu_offset(const char *uuid)
{
	const char *bin = getenv("GPUVIRT_BIN");
	char cmd[512], out[8192];
	uint64_t off = ~(uint64_t)0;
	size_t n;
	FILE *p;
	char *k;

	snprintf(cmd, sizeof(cmd), "%s/gpuvirtctl -j vgpu show uuid %s 2>/dev/null",
		 bin ? bin : "build/user", uuid);
	p = popen(cmd, "r");
	if (!p)
		return off;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	if (pclose(p) || !strstr(out, uuid))
		return off;
	k = strstr(out, "\"vram-offset\":");
	/* JSON leaves out zero values */
	return k ? strtoull(k + strlen("\"vram-offset\":"), NULL, 10) : 0;
}

/* Fill the first and last SIG_LEN of tenant @t with its signature. */
static int tenant_sign(unsigned int t)
{
	uint8_t *buf = malloc(SIG_LEN);
	int err;

	if (!buf)
		return -ENOMEM;
	sig_fill(buf, SIG_LEN, t, 0);
	err = bar2_write(T[t].fd, 0, buf, SIG_LEN);
	sig_fill(buf, SIG_LEN, t, S - SIG_LEN);
	err = err ?: bar2_write(T[t].fd, S - SIG_LEN, buf, SIG_LEN);
	free(buf);
	T[t].signed_ = !err;
	return err;
}

/* Check @pages random pages (all of them with 0) of @t's signature. */
static void tenant_check_sig(unsigned int t, unsigned int pages,
			     struct rng *r, int check)
{
	static uint8_t got[PAGE], want[PAGE];
	unsigned int i, end, n = pages ? pages : 2 * SIG_LEN / PAGE;

	if (!T[t].signed_)
		return;
	for (i = 0; i < n; i++) {
		uint64_t pg = pages ? rbelow(r, 2 * SIG_LEN / PAGE) : i;
		uint64_t off;

		end = pg >= SIG_LEN / PAGE;
		off = end ? S - 2 * SIG_LEN + pg * PAGE : pg * PAGE;
		sig_fill(want, PAGE, t, off);
		if (pread(T[t].fd, got, PAGE, BAR2 + off) != PAGE) {
			fail(check, "%s: pread of its VRAM at 0x%" PRIx64 ": %s",
			     T[t].name, off, strerror(errno));
			continue;
		}
		expect(check, !memcmp(got, want, PAGE),
		       "%s's VRAM at 0x%" PRIx64 " changed", T[t].name, off);
	}
}

/* Write ring dwords at the tenant's tail, wrapping. */
static int nw_put(struct tenant *t, const uint32_t *dw, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (bar2_write(t->fd, NW_RING + t->tail, &dw[i], 4))
			return -errno;
		t->tail = (t->tail + 4) & (NW_RING_SIZE - 1);
	}
	return 0;
}

static int nw_start(struct tenant *t)
{
	t->works = true;
	t->tail = 0;
	t->seq = 0;
	t->batches = 0;
	t->batch_out = false;
	return wr(t->fd, GPUVIRT_VGPU_REG_RING_BASE_LO, (uint32_t)NW_RING) ?:
	       wr(t->fd, GPUVIRT_VGPU_REG_RING_BASE_HI, 0) ?:
	       wr(t->fd, GPUVIRT_VGPU_REG_RING_SIZE, NW_RING_SIZE);
}

/*
 * The neighbour's work: when its ring is idle, check the batch it ran
 * (a COMPUTE and a FENCE) and submit the next. With @wait, wait for the
 * batch out (the end of a run). Every result is checked.
 */
static void nw_step(struct tenant *t, bool wait, int check)
{
	uint32_t st = rd(t->fd, GPUVIRT_VGPU_REG_STATUS), seq, slot;
	unsigned int ms;

	if (!t->works)
		return;
	for (ms = 0; wait && (st & GPUVIRT_VGPU_STATUS_BUSY) &&
	     !(st & GPUVIRT_VGPU_STATUS_ERROR) && ms < 60000; ms += 10) {
		usleep(10000);
		st = rd(t->fd, GPUVIRT_VGPU_REG_STATUS);
	}
	if (!expect(check, !(st & GPUVIRT_VGPU_STATUS_ERROR) &&
		    rd(t->fd, GPUVIRT_VGPU_REG_ERROR) == 0,
		    "%s's ring stopped: ERROR %u at 0x%x", t->name,
		    rd(t->fd, GPUVIRT_VGPU_REG_ERROR),
		    rd(t->fd, GPUVIRT_VGPU_REG_ERROR_HEAD))) {
		t->works = false;
		return;
	}
	if (st & GPUVIRT_VGPU_STATUS_BUSY) {
		expect(check, !wait, "%s's ring never went idle", t->name);
		return;
	}
	if (t->batch_out) {
		uint64_t x = 0, done;
		uint32_t f = 0;

		seq = t->batch_seq;
		slot = seq % NW_SLOTS;
		pread(t->fd, &x, 8, BAR2 + NW_RES + slot * 8);
		pread(t->fd, &f, 4, BAR2 + NW_FENCES + slot * 4);
		done = rd(t->fd, GPUVIRT_VGPU_REG_DONE_LO) |
		       (uint64_t)rd(t->fd, GPUVIRT_VGPU_REG_DONE_HI) << 32;
		expect(check, x == vgpu_compute_ref(seq * 7 + 1, NW_STEPS) &&
		       f == seq && rd(t->fd, GPUVIRT_VGPU_REG_FENCE) == seq &&
		       done == 2 * t->batches,
		       "%s's batch %u: result 0x%" PRIx64 " fence %u/%u done %" PRIu64
		       "/%" PRIu64, t->name, seq, x, f,
		       rd(t->fd, GPUVIRT_VGPU_REG_FENCE), done, 2 * t->batches);
		t->batch_out = false;
	}
	if (wait)
		return;
	seq = ++t->seq;
	slot = seq % NW_SLOTS;
	{
		uint32_t c[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
			NW_STEPS, (uint32_t)(NW_RES + slot * 8), 0, seq * 7 + 1,
		};
		uint32_t f[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0),
			seq, (uint32_t)(NW_FENCES + slot * 4), 0,
		};

		if (nw_put(t, c, 5) || nw_put(t, f, 4) ||
		    wr(t->fd, GPUVIRT_VGPU_REG_RING_TAIL, t->tail)) {
			fail(check, "%s: could not submit work", t->name);
			t->works = false;
			return;
		}
	}
	t->batch_seq = seq;
	t->batch_out = true;
	t->batches++;
}

/* The neighbours, after each stream or round: a few signature pages and the work. */
static void neighbours_step(struct rng *r, int check, bool full)
{
	unsigned int t;

	for (t = 0; t < T_NR; t++) {
		if (t == T_DST)
			continue;
		tenant_check_sig(t, full ? 0 : 1, r, check);
		nw_step(&T[t], false, check);
	}
}

static void neighbours_finish(int check)
{
	struct rng r = { 0 };
	unsigned int t;

	for (t = 0; t < T_NR; t++) {
		if (t == T_DST)
			continue;
		nw_step(&T[t], true, check);
		tenant_check_sig(t, 0, &r, check);
	}
}

/*
 * setup() ran and teardown() has not: the tenants exist. T[] starts zeroed,
 * so an fd of 0 says nothing about whether they do.
 */
static bool tenants_up;

static void teardown(void)
{
	unsigned int t;

	tenants_up = false;
	if (dst_disp_map)
		munmap(dst_disp_map, S);
	if (dst_bar2_map)
		munmap(dst_bar2_map, S);
	dst_disp_map = dst_bar2_map = NULL;
	for (t = 0; t < T_NR; t++) {
		if (T[t].fd >= 0)
			vgpu_client_close(&T[t].u);
		T[t].fd = -1;
		vgpu_remove(tenant_uuids[t]);
	}
	if (efd_intx >= 0)
		close(efd_intx);
	if (efd_msi >= 0)
		close(efd_msi);
	efd_intx = efd_msi = -1;
	gv_unload_all();
}

/* DST's mappings and its interrupts' eventfds. 0 or -errno. */
static int dst_attach(char *why, size_t wlen)
{
	int err;

	dst_disp_map = mmap(NULL, S, PROT_READ, MAP_SHARED, T[T_DST].fd, DISP);
	dst_bar2_map = mmap(NULL, S, PROT_READ, MAP_SHARED, T[T_DST].fd, BAR2);
	if (dst_disp_map == MAP_FAILED || dst_bar2_map == MAP_FAILED) {
		err = -errno;
		dst_disp_map = dst_disp_map == MAP_FAILED ? NULL : dst_disp_map;
		dst_bar2_map = dst_bar2_map == MAP_FAILED ? NULL : dst_bar2_map;
		snprintf(why, wlen, "mapping dst's region 9 and BAR2: %s",
			 strerror(-err));
		return err;
	}
	/* interrupts of DST, which must stay quiet while it is stopped */
	if (efd_intx < 0)
		efd_intx = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd_msi < 0)
		efd_msi = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = vgpu_client_set_irq(T[T_DST].fd, VFIO_PCI_INTX_IRQ_INDEX, efd_intx) ?:
	      vgpu_client_set_irq(T[T_DST].fd, VFIO_PCI_MSI_IRQ_INDEX, efd_msi);
	if (err)
		snprintf(why, wlen, "eventfds on dst: %s", strerror(-err));
	return err;
}

/*
 * DST again, new: what its mappings backed so far (region 9's mapping backs
 * the plane's pages as they are read) is freed with the old one. Same slot.
 */
static unsigned int recycles;

static int dst_recycle(char *why, size_t wlen)
{
	uint64_t off;
	int err;

	recycles++;
	munmap(dst_disp_map, S);
	munmap(dst_bar2_map, S);
	dst_disp_map = dst_bar2_map = NULL;
	vgpu_client_close(&T[T_DST].u);
	T[T_DST].fd = -1;
	vgpu_remove(T[T_DST].uuid);
	err = vgpu_create(T[T_DST].uuid) ?: vgpu_client_open(&T[T_DST].u, T[T_DST].uuid);
	if (err) {
		snprintf(why, wlen, "creating dst again: %s", strerror(-err));
		return err;
	}
	T[T_DST].fd = T[T_DST].u.device;
	off = vgpu_offset(T[T_DST].uuid);
	if (off != ~(uint64_t)0 && off != T[T_DST].off) {
		snprintf(why, wlen, "dst came back at 0x%" PRIx64 ", not 0x%" PRIx64,
			 off, T[T_DST].off);
		return -EINVAL;
	}
	return dst_attach(why, wlen);
}

/* Pages of the GPU's VRAM that host memory backs (the sim's debugfs). */
static uint64_t backed_pages(void)
{
	uint64_t n = gv_kv_u64(GV_SIM_DEBUGFS "/sim0/vram", "backed_pages");

	return n == ~(uint64_t)0 ? 0 : n;
}

static uint64_t backed_base;	/* after set-up */

/*
 * Backing is freed only with the vGPU: what DST's mappings, its ring work
 * and its streams backed piles up. Past 128 MiB of it, DST is made anew,
 * so that the host's cap on backing (host_mem_cap_mb) is never what a
 * stream runs into. 0 or -errno.
 */
static bool dst_backs_too_much(void)
{
	return backed_pages() > backed_base + 128 * MIB / PAGE;
}

static int dst_bound(char *why, size_t wlen)
{
	return dst_backs_too_much() ? dst_recycle(why, wlen) : 0;
}

/* Modules, the GPU, four vGPUs opened, signatures and work. 0 or -errno. */
static int setup(char *why, size_t wlen)
{
	uint64_t lo, hi;
	unsigned int t;
	int err;

	for (t = 0; t < T_NR; t++) {
		memset(&T[t], 0, sizeof(T[t]));
		T[t].name = tenant_names[t];
		T[t].uuid = tenant_uuids[t];
		T[t].fd = -1;
	}
	tenants_up = true;
	err = gv_setup_h200();
	if (err) {
		snprintf(why, wlen, "loading the modules and sim0: %s", strerror(-err));
		return err;
	}
	gpu_vram = gv_kv_u64(GV_DEBUGFS "/gpus/sim0/info", "vram_size");
	for (t = 0; t < T_NR; t++) {
		err = vgpu_create(T[t].uuid);
		if (err) {
			snprintf(why, wlen, "creating %s (%s): %s", T[t].name,
				 opt.type, strerror(-err));
			return err;
		}
	}
	for (t = 0; t < T_NR; t++) {
		err = vgpu_client_open(&T[t].u, T[t].uuid);
		if (err) {
			snprintf(why, wlen, "opening %s: %s", T[t].name, strerror(-err));
			return err;
		}
		T[t].fd = T[t].u.device;
	}
	lo = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_VRAM_SIZE_LO);
	hi = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_VRAM_SIZE_HI);
	S = hi << 32 | lo;
	npages = S / PAGE;
	heads_offered = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_DISP_HEADS);
	max_w = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_DISP_MAX_WIDTH);
	max_h = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_DISP_MAX_HEIGHT);
	if (!S || S % PAGE || S < 16 * MIB || heads_offered > GVS_HEADS) {
		snprintf(why, wlen, "odd vGPU: slice %" PRIu64 " heads %u", S,
			 heads_offered);
		return -EINVAL;
	}
	for (t = 0; t < T_NR; t++) {
		T[t].off = vgpu_offset(T[t].uuid);
		if (T[t].off == ~(uint64_t)0)
			T[t].off = t * S;	/* homogeneous slots, in order */
	}
	if (T[T_N1].off + S != T[T_DST].off || T[T_DST].off + S != T[T_N2].off)
		diag("neighbours are not adjacent to dst: n1 0x%" PRIx64 " dst 0x%" PRIx64
		     " n2 0x%" PRIx64, T[T_N1].off, T[T_DST].off, T[T_N2].off);
	err = dst_attach(why, wlen);
	if (err)
		return err;
	for (t = T_N1; t <= T_N2; t += 2) {
		err = tenant_sign(t) ?: nw_start(&T[t]);
		if (err) {
			snprintf(why, wlen, "signing %s: %s", T[t].name, strerror(-err));
			return err;
		}
	}
	backed_base = backed_pages() + 2 * SIG_LEN / PAGE + 16 * MIB / PAGE;
	diag("%s: slice %" PRIu64 " MiB, %u heads up to %ux%u; n1 at 0x%" PRIx64
	     ", dst at 0x%" PRIx64 ", n2 at 0x%" PRIx64 ", src at 0x%" PRIx64,
	     opt.type, S >> 20, heads_offered, max_w, max_h, T[T_N1].off,
	     T[T_DST].off, T[T_N2].off, T[T_SRC].off);
	return 0;
}

/* Interrupts DST signalled since the last call. */
static uint64_t dst_irqs(void)
{
	uint64_t n, sum = 0;

	if (read(efd_intx, &n, 8) == 8)
		sum += n;
	if (read(efd_msi, &n, 8) == 8)
		sum += n;
	return sum;
}

/* --- the display rules (vgpu-abi.rst, "Display heads") ------------------ */

struct mode {
	uint64_t base;
	uint32_t w, h, stride, fmt;
};

/* HEAD_ERROR for committing @m on @head, in the ABI's order. */
static uint32_t mode_check(unsigned int head, const struct mode *m)
{
	uint64_t size;

	if (head >= heads_offered)
		return GPUVIRT_VGPU_DERR_HEAD;
	if (!m->w || !m->h || m->w > max_w || m->h > max_h)
		return GPUVIRT_VGPU_DERR_MODE;
	if (m->fmt != XR24)
		return GPUVIRT_VGPU_DERR_FORMAT;
	if ((uint64_t)m->w * 4 > m->stride || m->stride > GPUVIRT_VGPU_STRIDE_MAX ||
	    m->stride % 4)
		return GPUVIRT_VGPU_DERR_STRIDE;
	if (m->base % GPUVIRT_VGPU_SCANOUT_ALIGN)
		return GPUVIRT_VGPU_DERR_ALIGN;
	size = (uint64_t)m->stride * m->h;
	if (size > S || m->base > S - size)
		return GPUVIRT_VGPU_DERR_RANGE;
	return GPUVIRT_VGPU_DERR_NONE;
}

static uint64_t mode_size(const struct mode *m)
{
	return (uint64_t)m->stride * m->h;
}

static void mode_get(const uint8_t *st, unsigned int head, unsigned int which,
		     struct mode *m)
{
	size_t o = GVS_HEAD(head, which);

	m->base = gvs_get(st, o + GVS_MODE_BASE, 8);
	m->w = gvs_get(st, o + GVS_MODE_WIDTH, 4);
	m->h = gvs_get(st, o + GVS_MODE_HEIGHT, 4);
	m->stride = gvs_get(st, o + GVS_MODE_STRIDE, 4);
	m->fmt = gvs_get(st, o + GVS_MODE_FORMAT, 4);
}

static void mode_put(uint8_t *st, unsigned int head, unsigned int which,
		     const struct mode *m)
{
	size_t o = GVS_HEAD(head, which);

	gvs_put(st, o + GVS_MODE_BASE, 8, m->base);
	gvs_put(st, o + GVS_MODE_WIDTH, 4, m->w);
	gvs_put(st, o + GVS_MODE_HEIGHT, 4, m->h);
	gvs_put(st, o + GVS_MODE_STRIDE, 4, m->stride);
	gvs_put(st, o + GVS_MODE_FORMAT, 4, m->fmt);
}

/* A head as the core's debugfs shows it (vgpus/<uuid>/display). */
struct dbg_head {
	unsigned int enabled, irq, error, flip_pending;
	struct mode active;
};

static int dbg_heads(const char *uuid, struct dbg_head *h)
{
	char path[256], buf[4096], *line, *save = NULL;
	unsigned int found = 0;

	snprintf(path, sizeof(path), VGPU_DEBUGFS "%s/display", uuid);
	if (gv_read(path, buf, sizeof(buf)) < 0)
		return -errno;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct dbg_head d = { 0 };
		unsigned int i;
		char *fp;

		if (sscanf(line, "head%u: enabled=%u vblank_irq=%u base=0x%" SCNx64
			   " width=%u height=%u stride=%u format=0x%x error=%u",
			   &i, &d.enabled, &d.irq, &d.active.base, &d.active.w,
			   &d.active.h, &d.active.stride, &d.active.fmt,
			   &d.error) != 9 || i >= GVS_HEADS)
			continue;
		fp = strstr(line, "flip_pending=");
		d.flip_pending = fp ? atoi(fp + strlen("flip_pending=")) : 0;
		h[i] = d;
		found |= 1u << i;
	}
	return found == (1u << GVS_HEADS) - 1 ? 0 : -ENOENT;
}

/*
 * Every head that is on holds a mode the ABI allows on it; a head that is
 * off has no active scanout. @where names the view.
 */
static void heads_sane(const struct dbg_head *h, const char *where, int check)
{
	unsigned int i;

	for (i = 0; i < GVS_HEADS; i++) {
		const struct mode *m = &h[i].active;

		if (h[i].enabled)
			expect(check, mode_check(i, m) == GPUVIRT_VGPU_DERR_NONE,
			       "%s: head %u is on with a mode it cannot scan out (base 0x%" PRIx64
			       " %ux%u stride %u format 0x%x: DERR %u)", where, i,
			       m->base, m->w, m->h, m->stride, m->fmt,
			       mode_check(i, m));
		else
			expect(check, !m->base && !m->w && !m->h && !m->stride &&
			       !m->fmt,
			       "%s: head %u is off but has an active scanout (base 0x%" PRIx64
			       " %ux%u stride %u)", where, i, m->base, m->w, m->h,
			       m->stride);
	}
}

/* --- reading the plane -------------------------------------------------- */

/*
 * DST's slice as the caller knows it: byte @x, or -1 when unknown (only
 * the neighbours' signature is looked for then).
 */
typedef int (*slice_fn)(uint64_t x);

/* A plane the device may show: base and size; size 0 is "nothing". */
struct plane {
	uint64_t base, size;
};

/* The checks region 9's reads count in: another tenant, the plane, its end. */
struct rchecks {
	int iso, plane, end;
};

enum { RM_OK, RM_TAIL, RM_BAD };

/*
 * Does @buf (region 9 from @r, @n bytes) show plane @p? Bytes of the plane
 * are the slice's at its base (unknown when @slice is NULL), the rest are
 * zeros; RM_TAIL: it does, but for bytes past the plane's end in its last
 * page, which show the slice (still DST's own) rather than zeros.
 */
static int region_matches(slice_fn slice, const struct plane *p, uint64_t r,
			  const uint8_t *buf, size_t n, size_t *bad)
{
	uint64_t tail_end = (p->size + PAGE - 1) & ~(PAGE - 1);
	bool tail = false;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t o = r + i;
		int want = o < p->size ? (slice ? slice(p->base + o) : -1) : 0;

		if (want < 0 || buf[i] == want)
			continue;
		if (o >= p->size && o < tail_end &&
		    (!slice || buf[i] == slice(p->base + o))) {
			tail = true;
			continue;
		}
		*bad = i;
		return RM_BAD;
	}
	return tail ? RM_TAIL : RM_OK;
}

/*
 * Read region 9 of DST at @r, @n bytes (n <= 2 pages), by pread or through
 * the mapping; check it shows one of the planes @p[0..np) (np 0: none, the
 * region reads zeros) and nothing of another tenant. A mapping shows whole
 * pages: the last page of a plane may show the slice past the plane's end.
 * A pread must read zeros there (the ABI: "beyond it ... zeros").
 */
static void region_check(slice_fn slice, const struct plane *p, unsigned int np,
			 uint64_t r, size_t n, bool mapped,
			 const struct rchecks *c)
{
	static uint8_t buf[2 * PAGE];
	static const struct plane none = { 0, 0 };
	const char *how = mapped ? "mmap" : "pread";
	int best = RM_BAD, got;
	char what[160];
	size_t bad = 0;
	unsigned int i;

	if (r >= S)
		return;
	if (n > S - r)
		n = S - r;
	if (mapped) {
		if (map_copy(buf, dst_disp_map + r, n)) {
			fail(c->plane, "region 9 mapping raised SIGBUS at 0x%" PRIx64, r);
			return;
		}
	} else {
		ssize_t got = pread(T[T_DST].fd, buf, n, DISP + r);

		if (got != (ssize_t)n) {
			fail(c->plane, "pread of region 9 at 0x%" PRIx64 " (%zu bytes): %zd, %s",
			     r, n, got, strerror(errno));
			return;
		}
	}
	if (sig_find(buf, n, what, sizeof(what)))
		fail(c->iso, "region 9 (%s at 0x%" PRIx64 ") shows %s", how, r, what);
	else
		tried(c->iso);
	if (!np)
		best = region_matches(slice, &none, r, buf, n, &bad);
	for (i = 0; i < np && best != RM_OK; i++) {
		size_t b = 0;

		got = region_matches(slice, &p[i], r, buf, n, &b);
		if (got < best)
			best = got;
		if (got == RM_BAD && i == 0)
			bad = b;
	}
	expect(c->plane, best != RM_BAD, "region 9 (%s at 0x%" PRIx64 ", %zu bytes) "
	       "differs from %s at byte 0x%zx: 0x%02x%s", how, r, n,
	       np ? "the plane" : "zeros (no plane)", bad, buf[bad],
	       np ? "" : " (head 0 is off)");
	if (best != RM_BAD && !mapped && c->end >= 0)
		expect(c->end, best == RM_OK, "pread of region 9 at 0x%" PRIx64
		       " (%zu bytes) shows the slice past the plane's end (plane "
		       "size 0x%" PRIx64 ") instead of zeros", r, n,
		       np ? p[0].size : 0);
}

/*
 * Sample region 9: its first pages, the end of each plane and what lies
 * past it, a random page, the end of the region; pread (with pieces that
 * cross pages) and mmap.
 */
static void region_sample(slice_fn slice, const struct plane *p, unsigned int np,
			  struct rng *r, const struct rchecks *c)
{
	uint64_t offs[12];
	unsigned int n = 0, i;

	offs[n++] = 0;
	offs[n++] = PAGE;
	for (i = 0; i < np; i++) {
		if (p[i].size >= PAGE)
			offs[n++] = (p[i].size - 1) & ~(PAGE - 1);
		offs[n++] = (p[i].size + PAGE - 1) & ~(PAGE - 1);
		if (p[i].size)
			offs[n++] = rbelow(r, p[i].size) & ~(PAGE - 1);
	}
	offs[n++] = rbelow(r, S) & ~(PAGE - 1);
	offs[n++] = S - PAGE;
	for (i = 0; i < n; i++) {
		region_check(slice, p, np, offs[i], PAGE, false, c);
		region_check(slice, p, np, offs[i], PAGE, true, c);
	}
	/* pieces across page boundaries, and across the plane's end */
	region_check(slice, p, np, PAGE - 100, 300, false, c);
	for (i = 0; i < np; i++) {
		if (p[i].size > 200 && p[i].size < S)
			region_check(slice, p, np, p[i].size - 150, 300, false, c);
		if (p[i].size % PAGE && p[i].size < S)
			region_check(slice, p, np, p[i].size & ~(PAGE - 1), PAGE,
				     false, c);
	}
}

/* The plane VFIO_DEVICE_QUERY_GFX_PLANE reports must be one of @p. */
static void query_check(const struct mode *m, unsigned int nm, int check)
{
	struct vfio_device_gfx_plane_info q;
	unsigned int i;
	bool ok = false;
	int err = query_plane(T[T_DST].fd, &q);

	if (err) {
		fail(check, "VFIO_DEVICE_QUERY_GFX_PLANE: %s", strerror(-err));
		return;
	}
	if (!nm)
		ok = !q.drm_format && !q.width && !q.height && !q.size;
	for (i = 0; i < nm && !ok; i++)
		ok = q.drm_format == m[i].fmt && q.width == m[i].w &&
		     q.height == m[i].h && q.stride == m[i].stride &&
		     q.size == (uint32_t)mode_size(&m[i]) &&
		     q.region_index == GPUVIRT_VGPU_DISPLAY_REGION;
	if (nm)
		expect(check, ok, "QUERY_GFX_PLANE: format 0x%x %ux%u stride %u size %u; "
		       "head 0 shows %ux%u stride %u", q.drm_format, q.width,
		       q.height, q.stride, q.size, m[0].w, m[0].h, m[0].stride);
	else
		expect(check, ok, "QUERY_GFX_PLANE: format 0x%x %ux%u stride %u size %u "
		       "while head 0 is off", q.drm_format, q.width, q.height,
		       q.stride, q.size);
}

/* ======================================================================== */
/* stream                                                                   */
/* ======================================================================== */

enum {
	SC_CAPTURE, SC_SANITY, SC_FORMAT, SC_REFUSAL, SC_ISOLATION, SC_PLANE,
	SC_PLANE_END, SC_VRAM, SC_HEADS, SC_STOPPED, SC_RESAVE, SC_NEIGHBOURS,
	SC_KLOG, SC_NR
};

static const struct rchecks stream_rchecks = { SC_ISOLATION, SC_PLANE, SC_PLANE_END };
static const struct rchecks refused_rchecks = { SC_ISOLATION, SC_REFUSAL, -1 };

static struct check stream_checks[SC_NR] = {
	[SC_CAPTURE] = { "capture", "a source with ring work, display heads and pages saves a well-formed stream" },
	[SC_SANITY] = { "sanity", "the unmodified streams resume exactly and the source's work completes on dst" },
	[SC_FORMAT] = { "format", "every stream that breaks the format (framing, CRC, header, page index) is refused" },
	[SC_REFUSAL] = { "refusal", "a refused stream fails with EINVAL, leaves dst in RESUMING with no plane, and logs why on dst" },
	[SC_ISOLATION] = { "isolation", "nothing of another tenant is read back through dst (BAR2, region 9 pread and mmap, its saved stream)" },
	[SC_PLANE] = { "plane", "region 9 and QUERY_GFX_PLANE show head 0's plane inside the slice, zeros past its last page and when head 0 is off" },
	[SC_PLANE_END] = { "plane-end", "a pread of region 9 reads zeros past the plane's end, also within its last page" },
	[SC_VRAM] = { "vram", "a resumed slice reads exactly as the stream's pages, zeros elsewhere" },
	[SC_HEADS] = { "heads", "a head that is on holds a mode the ABI allows; a head that is off has no active scanout" },
	[SC_STOPPED] = { "stopped", "stopped after a resume, dst signals no interrupt and IRQ_STATUS does not change" },
	[SC_RESAVE] = { "resave", "dst, resumed and run, saves a well-formed stream" },
	[SC_NEIGHBOURS] = { "neighbours", "the neighbours' VRAM and their work are unharmed" },
	[SC_KLOG] = { "kernel-log", "no kernel report (WARNING, BUG, KASAN, ...) after any stream" },
};

/* A stream being built: the header and a list of records. */
struct mrec {
	uint32_t tag, len;
	uint64_t arg;
	const uint8_t *pl;
	uint32_t plen;
};

struct mstream {
	uint8_t hdr[GVS_HDR_SIZE];
	struct mrec r[512];
	unsigned int n;
	uint8_t state[GVS_STATE_SIZE];
	/* payloads made by mutations, freed with the stream */
	uint8_t *owned[64];
	unsigned int nowned;
	bool nocrc;
	char desc[1024];
};

static uint8_t *ms_alloc(struct mstream *m, size_t n)
{
	uint8_t *p;

	if (m->nowned == GVS_ARRAY_SIZE(m->owned))
		return NULL;
	p = calloc(1, n ? n : 1);
	if (p)
		m->owned[m->nowned++] = p;
	return p;
}

static void ms_free(struct mstream *m)
{
	while (m->nowned)
		free(m->owned[--m->nowned]);
}

static void ms_say(struct mstream *m, const char *fmt, ...)
{
	size_t l = strlen(m->desc);
	va_list ap;

	if (l + 4 >= sizeof(m->desc))
		return;
	if (l)
		strcpy(m->desc + l, "; "), l += 2;
	va_start(ap, fmt);
	vsnprintf(m->desc + l, sizeof(m->desc) - l, fmt, ap);
	va_end(ap);
}

/* The base streams: as captured (head 0 on), and with head 0 turned off. */
static struct gvs_stream base[2];

static int ms_from(struct mstream *m, const struct gvs_stream *s)
{
	struct gvs_view v;
	size_t i;

	if (gvs_parse(s->p, s->len, &v, NULL))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	memcpy(m->hdr, s->p, GVS_HDR_SIZE);
	for (i = 0; i < v.nrecs && i < GVS_ARRAY_SIZE(m->r); i++) {
		struct mrec *r = &m->r[m->n++];

		r->tag = v.recs[i].tag;
		r->len = v.recs[i].len;
		r->arg = v.recs[i].arg;
		r->plen = r->tag == GVS_REC_END ? 0 : r->len;
		r->pl = s->p + v.recs[i].off + GVS_REC_SIZE;
		if (r->tag == GVS_REC_STATE) {
			memcpy(m->state, r->pl, GVS_STATE_SIZE);
			r->pl = m->state;
		}
	}
	gvs_view_free(&v);
	return 0;
}

static int ms_serialize(const struct mstream *m, struct gvs_stream *out)
{
	unsigned int i;
	int err = gvs_stream_append(out, m->hdr, GVS_HDR_SIZE);

	for (i = 0; !err && i < m->n; i++)
		err = gvs_stream_rec(out, m->r[i].tag, m->r[i].len, m->r[i].arg) ?:
		      gvs_stream_append(out, m->r[i].pl, m->r[i].plen);
	return err;
}

static int ms_find(const struct mstream *m, uint32_t tag, struct rng *r)
{
	int idx[512], n = 0;
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->r[i].tag == tag)
			idx[n++] = i;
	return n ? idx[rbelow(r, n)] : -1;
}

static void ms_insert(struct mstream *m, unsigned int at, const struct mrec *r)
{
	if (m->n == GVS_ARRAY_SIZE(m->r))
		return;
	if (at > m->n)
		at = m->n;
	memmove(&m->r[at + 1], &m->r[at], (m->n - at) * sizeof(*r));
	m->r[at] = *r;
	m->n++;
}

static void ms_remove(struct mstream *m, unsigned int at)
{
	memmove(&m->r[at], &m->r[at + 1], (m->n - at - 1) * sizeof(m->r[0]));
	m->n--;
}

/* The index of the STATE record, or the END record, or the end. */
static unsigned int ms_state_at(const struct mstream *m)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->r[i].tag == GVS_REC_STATE || m->r[i].tag == GVS_REC_END)
			return i;
	return m->n;
}

/* Kinds of values, for interesting ones. */
enum kind {
	K_U32, K_U64, K_OFF, K_LEN, K_W, K_H, K_STRIDE, K_FMT, K_CTRL, K_DERR,
	K_BOOL, K_RSIZE, K_RPOS, K_RERR, K_OP, K_DWORDS, K_IRQ, K_PAGE,
};

static const enum kind state_kinds[] = {
	K_U32, K_IRQ, K_RSIZE, K_RPOS, K_RPOS, K_U32, K_RERR, K_RPOS, K_BOOL,
	K_DWORDS, K_U32, K_U32, K_OP, K_U32, K_OFF, K_U64, K_U64, K_OFF, K_OFF,
	K_LEN, K_U64, K_LEN, K_U64,
};

static const enum kind head_kinds[] = {
	K_OFF, K_W, K_H, K_STRIDE, K_FMT, K_OFF, K_W, K_H, K_STRIDE, K_FMT,
	K_OFF, K_W, K_H, K_STRIDE, K_FMT, K_CTRL, K_DERR, K_U32, K_BOOL, K_U32,
	K_U32, K_U64,
};

_Static_assert(GVS_ARRAY_SIZE(state_kinds) == GVS_ARRAY_SIZE(gvs_state_fields),
	       "a kind for every state field");
_Static_assert(GVS_ARRAY_SIZE(head_kinds) == GVS_ARRAY_SIZE(gvs_head_fields),
	       "a kind for every head field");

/*
 * An offset in (or around) the slice, as a base, ring base or address;
 * half of them at the slice's edges and in the other tenants' slices.
 */
static uint64_t off_value(struct rng *r, uint64_t cur, uint64_t size)
{
	uint64_t rel_n1 = T[T_N1].off - T[T_DST].off;
	uint64_t rel_n2 = T[T_N2].off - T[T_DST].off;
	uint64_t rel_src = T[T_SRC].off - T[T_DST].off;
	uint64_t edge[] = {
		S - PAGE, S - 2048, S, S + PAGE, -S, -PAGE, -(uint64_t)2048,
		rel_n1, rel_n2, rel_src, rel_n2 + 2048, rel_n1 + S - PAGE,
		size <= S ? S - size + PAGE : S, rel_src + S - size,
	};
	uint64_t v[] = {
		0, PAGE, S - PAGE, S - 2048, S - 1, S, S + PAGE, 2 * S,
		-S, -PAGE, -(uint64_t)2048, (uint64_t)1 << 32, (uint64_t)1 << 63, ~(uint64_t)0,
		rel_n1, rel_n2, rel_src, rel_n2 + 2048, rel_n1 + S - PAGE,
		gpu_vram - T[T_DST].off, gpu_vram - T[T_DST].off - PAGE,
		rbelow(r, S) & ~(PAGE - 1), rbelow(r, 2 * S) & ~(PAGE - 1),
		rbelow(r, S), rnext(r), cur ^ ((uint64_t)1 << rbelow(r, 64)),
		cur + PAGE * (rbelow(r, 9) - 4), cur | 0x800,
		size <= S ? S - size : 0, size <= S ? S - size + PAGE : S,
		size <= S ? (rbelow(r, S - size + 1) & ~(PAGE - 1)) : 0,
	};

	if (rchance(r, 50))
		return edge[rbelow(r, GVS_ARRAY_SIZE(edge))];
	return v[rbelow(r, GVS_ARRAY_SIZE(v))];
}

static uint64_t interesting(struct rng *r, enum kind k, uint64_t cur,
			    const uint8_t *st)
{
	uint32_t rsize = st ? gvs_get(st, GVS_ST_RING_SIZE, 4) : 4096;

	switch (k) {
	case K_OFF:
		return off_value(r, cur, 0);
	case K_LEN: {
		uint64_t v[] = { 0, 1, 4, 8, PAGE, S, S + 1, S - PAGE, (uint64_t)1 << 32,
				 (uint64_t)1 << 63, ~(uint64_t)0, rbelow(r, S), rnext(r), cur + 1,
				 cur ? cur - 1 : 1, 100000, 100001 };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_W:
	case K_H: {
		uint32_t max = k == K_W ? max_w : max_h;
		uint32_t v[] = { 0, 1, 2, max, max + 1, 1 + rbelow(r, max),
				 1u << 31, ~0u, 16384, 0x40000000 };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_STRIDE: {
		uint32_t v[] = { 0, 4, cur + 4, cur - 4, cur + 2, 4096, 65536, 65540,
				 65532, (uint32_t)rbelow(r, 65537) & ~3u,
				 (uint32_t)rnext(r), ~0u, 0x40000000 };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_FMT: {
		uint32_t v[] = { XR24, 0, XR24 + 1, 0x34325241 /* AR24 */,
				 (uint32_t)rnext(r) };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_CTRL: {
		uint32_t v[] = { 0, 1, 2, 3, 4, 5, 0x80000001, ~0u,
				 (uint32_t)rnext(r) };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_DERR:
		return rchance(r, 80) ? rbelow(r, 8) : rnext(r);
	case K_BOOL: {
		uint32_t v[] = { 0, 1, 2, ~0u, (uint32_t)rnext(r) };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_RSIZE: {
		uint32_t v[] = { 0, 4096, 8192, 65536, 1u << 20, 1u << 21, 2048,
				 4095, 4100, 6144, ~0u, (uint32_t)rnext(r) };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_RPOS: {
		uint32_t v[] = { 0, 4, cur + 4, cur - 4, cur + 1, rsize - 4, rsize,
				 rsize + 4, 2, ~0u, (uint32_t)rbelow(r, rsize + 1) & ~3u,
				 (uint32_t)rnext(r) };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_RERR:
		return rchance(r, 80) ? rbelow(r, 11) : rnext(r);
	case K_OP:
		return rchance(r, 80) ? rbelow(r, 6) : rnext(r);
	case K_DWORDS:
		return rchance(r, 80) ? rbelow(r, 10) : rnext(r);
	case K_IRQ:
		return rchance(r, 80) ? rbelow(r, 32) : rnext(r);
	case K_PAGE: {
		uint64_t v[] = { npages, npages - 1, npages + 1, (uint64_t)1 << 32,
				 (uint64_t)1 << 52, (uint64_t)1 << 63, ~(uint64_t)0, rbelow(r, npages),
				 rnext(r), cur + 1, cur ? cur - 1 : 0, 0,
				 (T[T_N2].off - T[T_DST].off) / PAGE,
				 (uint64_t)-1 - (S / PAGE) + 1 };

		return v[rbelow(r, GVS_ARRAY_SIZE(v))];
	}
	case K_U64:
		switch (rbelow(r, 6)) {
		case 0: return 0;
		case 1: return ~(uint64_t)0;
		case 2: return cur ^ ((uint64_t)1 << rbelow(r, 64));
		case 3: return cur + 1;
		case 4: return (uint64_t)1 << 63;
		default: return rnext(r);
		}
	case K_U32:
	default:
		switch (rbelow(r, 7)) {
		case 0: return 0;
		case 1: return 1;
		case 2: return (uint32_t)~0u;
		case 3: return (uint32_t)(cur ^ (1u << rbelow(r, 32)));
		case 4: return (uint32_t)(cur + 1);
		case 5: return 0x80000000u;
		default: return (uint32_t)rnext(r);
		}
	}
}

/* A mode, mostly one that a head could scan out. */
static void gen_mode(struct rng *r, struct mode *m)
{
	uint32_t wv[] = { 1, 64, 256, 640, 1920, max_w, max_w + 1,
			  1 + (uint32_t)rbelow(r, max_w), 0 };
	uint32_t hv[] = { 1, 48, 128, 480, 1080, max_h, max_h + 1,
			  1 + (uint32_t)rbelow(r, max_h), 0 };

	m->w = wv[rchance(r, 85) ? rbelow(r, 6) : rbelow(r, GVS_ARRAY_SIZE(wv))];
	m->h = hv[rchance(r, 85) ? rbelow(r, 6) : rbelow(r, GVS_ARRAY_SIZE(hv))];
	switch (rbelow(r, 6)) {
	case 0:
		m->stride = (uint32_t)rbelow(r, 65537) & ~3u;
		break;
	case 1:
		m->stride = 65536;
		break;
	case 2:
		m->stride = (m->w * 4 + 255) & ~255u;
		break;
	default:
		m->stride = m->w * 4;
	}
	if (rchance(r, 5))
		m->stride += rchance(r, 50) ? 2 : 4;
	m->fmt = rchance(r, 92) ? XR24 : (uint32_t)interesting(r, K_FMT, 0, NULL);
	m->base = off_value(r, 0, mode_size(m));
}

/* One mutation of the stream's structure; false if it did nothing. */
static bool mutate(struct mstream *m, struct rng *r)
{
	enum {
		M_HDR, M_TYPE, M_TAG, M_LEN, M_DROP, M_DUP, M_MOVE, M_INSERT,
		M_PAGE_ARG, M_PAGE_DATA, M_PAGE_ZERO, M_STATE, M_CFG, M_CMD,
		M_RING, M_HEAD_FIELD, M_HEAD_MODE, M_HEAD_CTRL, M_HEAD_FLIP,
		M_NR
	};
	static const unsigned int w[M_NR] = {
		[M_HDR] = 6, [M_TYPE] = 2, [M_TAG] = 3, [M_LEN] = 3, [M_DROP] = 3,
		[M_DUP] = 2, [M_MOVE] = 2, [M_INSERT] = 2, [M_PAGE_ARG] = 5,
		[M_PAGE_DATA] = 3, [M_PAGE_ZERO] = 2, [M_STATE] = 10, [M_CFG] = 3,
		[M_CMD] = 4, [M_RING] = 4, [M_HEAD_FIELD] = 14, [M_HEAD_MODE] = 20,
		[M_HEAD_CTRL] = 6, [M_HEAD_FLIP] = 4,
	};
	uint8_t *st = m->state;
	unsigned int op = rpick(r, w, M_NR), i, h;
	struct mrec nr = { 0 };
	struct mode md;
	uint64_t v;
	int at;

	h = rchance(r, 60) ? 0 : rbelow(r, GVS_HEADS);
	switch (op) {
	case M_HDR: {
		static const struct { const char *n; unsigned int off, size; enum kind k; } f[] = {
			{ "magic", GVS_HDR_MAGIC, 4, K_U32 },
			{ "version", GVS_HDR_VERSION, 2, K_U32 },
			{ "hdr_size", GVS_HDR_HDR_SIZE, 2, K_U32 },
			{ "fb_size", GVS_HDR_FB_SIZE, 8, K_LEN },
			{ "page_size", GVS_HDR_PAGE_SIZE, 4, K_U32 },
			{ "state_size", GVS_HDR_STATE_SIZE, 4, K_U32 },
			{ "reserved", GVS_HDR_RESERVED, 8, K_U64 },
		};

		i = rbelow(r, GVS_ARRAY_SIZE(f));
		v = interesting(r, f[i].k, gvs_get(m->hdr, f[i].off, f[i].size), st);
		gvs_put(m->hdr, f[i].off, f[i].size, v);
		ms_say(m, "header.%s=0x%" PRIx64, f[i].n,
		       gvs_get(m->hdr, f[i].off, f[i].size));
		return true;
	}
	case M_TYPE: {
		static const char *const names[] = {
			"H200-4C", "H200-8Q", "H200-4Q ", "h200-4q", "", "H200-141Q",
		};

		if (rchance(r, 60)) {
			memset(m->hdr + GVS_HDR_TYPE, 0, GVS_TYPE_MAX);
			i = rbelow(r, GVS_ARRAY_SIZE(names));
			memcpy(m->hdr + GVS_HDR_TYPE, names[i], strlen(names[i]));
			ms_say(m, "header.type=\"%s\"", names[i]);
		} else if (rchance(r, 50)) {
			memset(m->hdr + GVS_HDR_TYPE, 'Q', GVS_TYPE_MAX);
			ms_say(m, "header.type=32 bytes, no NUL");
		} else {
			i = rbelow(r, GVS_TYPE_MAX);
			m->hdr[GVS_HDR_TYPE + i] ^= 1 + rbelow(r, 255);
			ms_say(m, "header.type[%u]^=", i);
		}
		return true;
	}
	case M_TAG:
		if (!m->n)
			return false;
		i = rbelow(r, m->n);
		{
			uint32_t tv[] = { 0, 1, 2, 3, 4, 5, 0x80000001, (uint32_t)rnext(r) };

			m->r[i].tag = tv[rbelow(r, GVS_ARRAY_SIZE(tv))];
		}
		ms_say(m, "record %u: tag=%u", i, m->r[i].tag);
		return true;
	case M_LEN:
		if (!m->n)
			return false;
		i = rbelow(r, m->n);
		{
			uint32_t lv[] = { 0, 4096, 4095, 4097, GVS_STATE_SIZE,
					  GVS_STATE_SIZE - 1, GVS_STATE_SIZE + 8,
					  1u << 31, ~0u, (uint32_t)rbelow(r, 9000) };

			m->r[i].len = lv[rbelow(r, GVS_ARRAY_SIZE(lv))];
		}
		ms_say(m, "record %u (tag %u): len=%u", i, m->r[i].tag, m->r[i].len);
		return true;
	case M_DROP:
		if (!m->n)
			return false;
		i = rbelow(r, m->n);
		ms_say(m, "record %u (tag %u) dropped", i, m->r[i].tag);
		ms_remove(m, i);
		return true;
	case M_DUP:
		if (!m->n)
			return false;
		i = rbelow(r, m->n);
		nr = m->r[i];
		at = rchance(r, 50) ? (int)i + 1 : (int)rbelow(r, m->n + 1);
		ms_insert(m, at, &nr);
		ms_say(m, "record %u (tag %u) again at %d", i, nr.tag, at);
		return true;
	case M_MOVE:
		if (m->n < 2)
			return false;
		i = rbelow(r, m->n);
		nr = m->r[i];
		ms_remove(m, i);
		at = rbelow(r, m->n + 1);
		ms_insert(m, at, &nr);
		ms_say(m, "record %u (tag %u) moved to %d", i, nr.tag, at);
		return true;
	case M_INSERT: {
		uint8_t *pl;

		nr.tag = rchance(r, 70) ? 1 + rbelow(r, 4) : (uint32_t)rnext(r);
		switch (nr.tag) {
		case GVS_REC_PAGE:
			pl = ms_alloc(m, PAGE);
			if (!pl)
				return false;
			nr.arg = rchance(r, 50) ? rbelow(r, npages) :
				 interesting(r, K_PAGE, 0, st);
			own_fill(pl, PAGE, nr.arg * PAGE);
			nr.pl = pl;
			nr.len = nr.plen = PAGE;
			break;
		case GVS_REC_ZERO:
			nr.arg = rchance(r, 50) ? rbelow(r, npages) :
				 interesting(r, K_PAGE, 0, st);
			break;
		case GVS_REC_STATE:
			nr.pl = m->state;
			nr.len = nr.plen = GVS_STATE_SIZE;
			break;
		case GVS_REC_END:
			nr.arg = rnext(r) & 0xffffffff;
			break;
		default:
			nr.len = nr.plen = rbelow(r, 64);
			pl = ms_alloc(m, nr.plen);
			if (!pl)
				return false;
			for (i = 0; i < nr.plen; i++)
				pl[i] = rnext(r);
			nr.pl = pl;
			nr.arg = rnext(r);
		}
		at = rbelow(r, m->n + 1);
		ms_insert(m, at, &nr);
		ms_say(m, "record tag %u arg 0x%" PRIx64 " inserted at %d", nr.tag,
		       nr.arg, at);
		return true;
	}
	case M_PAGE_ARG:
		at = ms_find(m, rchance(r, 80) ? GVS_REC_PAGE : GVS_REC_ZERO, r);
		if (at < 0)
			return false;
		m->r[at].arg = interesting(r, K_PAGE, m->r[at].arg, st);
		ms_say(m, "record %d (tag %u): page=0x%" PRIx64, at, m->r[at].tag,
		       m->r[at].arg);
		return true;
	case M_PAGE_DATA: {
		uint8_t *pl;
		unsigned int k, n;

		at = ms_find(m, GVS_REC_PAGE, r);
		if (at < 0 || m->r[at].plen != PAGE)
			return false;
		pl = ms_alloc(m, PAGE);
		if (!pl)
			return false;
		memcpy(pl, m->r[at].pl, PAGE);
		n = 1 + rbelow(r, 16);
		for (k = 0; k < n; k++)
			pl[rbelow(r, PAGE)] ^= 1 + rbelow(r, 255);
		m->r[at].pl = pl;
		ms_say(m, "record %d: page 0x%" PRIx64 " data changed", at,
		       m->r[at].arg);
		return true;
	}
	case M_PAGE_ZERO:
		at = ms_find(m, GVS_REC_PAGE, r);
		if (at < 0)
			return false;
		if (rchance(r, 50)) {
			m->r[at].tag = GVS_REC_ZERO;
			m->r[at].len = m->r[at].plen = 0;
			ms_say(m, "record %d: page 0x%" PRIx64 " sent as ZERO", at,
			       m->r[at].arg);
		} else {
			nr.tag = GVS_REC_ZERO;
			nr.arg = m->r[at].arg;
			i = at + 1 + rbelow(r, ms_state_at(m) - at);
			ms_insert(m, i, &nr);
			ms_say(m, "ZERO of page 0x%" PRIx64 " at %u", nr.arg, i);
		}
		return true;
	case M_STATE:
		i = rbelow(r, GVS_ARRAY_SIZE(gvs_state_fields));
		v = interesting(r, state_kinds[i],
				gvs_get(st, gvs_state_fields[i].off,
					gvs_state_fields[i].size), st);
		gvs_put(st, gvs_state_fields[i].off, gvs_state_fields[i].size, v);
		ms_say(m, "state.%s=0x%" PRIx64, gvs_state_fields[i].name,
		       gvs_get(st, gvs_state_fields[i].off, gvs_state_fields[i].size));
		return true;
	case M_CFG: {
		unsigned int n = 1 + rbelow(r, 4), k;

		for (k = 0; k < n; k++) {
			i = rchance(r, 60) ? rbelow(r, 0x50) : rbelow(r, GVS_CFG_SIZE);
			st[GVS_ST_CFG + i] = rnext(r);
			ms_say(m, "state.cfg[0x%x]=0x%02x", i, st[GVS_ST_CFG + i]);
		}
		return true;
	}
	case M_CMD: {
		uint64_t len = interesting(r, K_LEN, 0, st);

		gvs_put(st, GVS_ST_CMD_ACTIVE, 4, rchance(r, 90) ? 1 : 2);
		gvs_put(st, GVS_ST_CMD_OP, 4, rchance(r, 90) ? rbelow(r, 5) : rnext(r));
		gvs_put(st, GVS_ST_CMD_DWORDS, 4, rbelow(r, 10));
		gvs_put(st, GVS_ST_CMD_HEADER, 4, rnext(r));
		gvs_put(st, GVS_ST_CMD_DST, 8, off_value(r, 0, len));
		gvs_put(st, GVS_ST_CMD_SRC, 8, off_value(r, 0, len));
		gvs_put(st, GVS_ST_CMD_LEN, 8, len);
		gvs_put(st, GVS_ST_CMD_VALUE, 8, rnext(r));
		gvs_put(st, GVS_ST_CMD_DONE, 8, rchance(r, 50) ? 0 :
			rchance(r, 50) ? len : rbelow(r, len + 2));
		gvs_put(st, GVS_ST_CMD_STATE, 8, rnext(r));
		ms_say(m, "packet in progress: op %u dwords %u dst 0x%" PRIx64
		       " src 0x%" PRIx64 " len 0x%" PRIx64 " done 0x%" PRIx64,
		       (unsigned int)gvs_get(st, GVS_ST_CMD_OP, 4),
		       (unsigned int)gvs_get(st, GVS_ST_CMD_DWORDS, 4),
		       gvs_get(st, GVS_ST_CMD_DST, 8), gvs_get(st, GVS_ST_CMD_SRC, 8),
		       len, gvs_get(st, GVS_ST_CMD_DONE, 8));
		return true;
	}
	case M_RING: {
		uint32_t size = rchance(r, 80) ? 4096u << rbelow(r, 9) :
				(uint32_t)interesting(r, K_RSIZE, 0, st);
		uint64_t rbase = rchance(r, 60) && size <= S ?
				 (rbelow(r, S - size + 1) & ~(PAGE - 1)) :
				 off_value(r, 0, size);

		gvs_put(st, GVS_ST_RING_SIZE, 4, size);
		gvs_put(st, GVS_ST_RING_BASE, 8, rbase);
		gvs_put(st, GVS_ST_RING_HEAD, 4, size ? rbelow(r, size) & ~3u : 0);
		gvs_put(st, GVS_ST_RING_TAIL, 4, size ? rbelow(r, size) & ~3u : 0);
		ms_say(m, "ring: base 0x%" PRIx64 " size 0x%x head 0x%x tail 0x%x",
		       rbase, size, (unsigned int)gvs_get(st, GVS_ST_RING_HEAD, 4),
		       (unsigned int)gvs_get(st, GVS_ST_RING_TAIL, 4));
		return true;
	}
	case M_HEAD_FIELD:
		i = rbelow(r, GVS_ARRAY_SIZE(gvs_head_fields));
		{
			size_t o = GVS_HEAD(h, gvs_head_fields[i].off);
			unsigned int sz = gvs_head_fields[i].size;

			v = interesting(r, head_kinds[i], gvs_get(st, o, sz), st);
			gvs_put(st, o, sz, v);
			ms_say(m, "head%u.%s=0x%" PRIx64, h, gvs_head_fields[i].name,
			       gvs_get(st, o, sz));
		}
		return true;
	case M_HEAD_MODE: {
		static const unsigned int which[] = {
			GVS_HD_STAGED, GVS_HD_ACTIVE, GVS_HD_PENDING,
		};
		static const char *const wn[] = { "staged", "active", "pending" };

		i = rchance(r, 60) ? 1 : rbelow(r, 3);
		gen_mode(r, &md);
		mode_put(st, h, which[i], &md);
		ms_say(m, "head%u.%s={base 0x%" PRIx64 " %ux%u stride %u format 0x%x}",
		       h, wn[i], md.base, md.w, md.h, md.stride, md.fmt);
		return true;
	}
	case M_HEAD_CTRL:
		v = gvs_get(st, GVS_HEAD(h, GVS_HD_CONTROL), 4);
		v = rchance(r, 60) ? v ^ ENABLE : rchance(r, 50) ? v ^ VBL_IRQ :
		    interesting(r, K_CTRL, v, st);
		gvs_put(st, GVS_HEAD(h, GVS_HD_CONTROL), 4, v);
		ms_say(m, "head%u.control=0x%" PRIx64, h, v);
		return true;
	case M_HEAD_FLIP:
		gen_mode(r, &md);
		mode_put(st, h, GVS_HD_PENDING, &md);
		gvs_put(st, GVS_HEAD(h, GVS_HD_FLIP_PENDING), 4, 1);
		ms_say(m, "head%u: flip pending to {base 0x%" PRIx64 " %ux%u stride %u}",
		       h, md.base, md.w, md.h, md.stride);
		return true;
	}
	return false;
}

/* One mutation of the serialized bytes. */
static void mutate_bytes(struct mstream *m, struct gvs_stream *s, struct rng *r)
{
	size_t at;
	uint8_t junk[64];
	unsigned int i, n;

	switch (rbelow(r, 4)) {
	case 0:
		at = rchance(r, 50) ? rbelow(r, s->len) :
		     s->len - 1 - rbelow(r, s->len < 5000 ? s->len : 5000);
		ms_say(m, "truncated to %zu of %zu bytes", at, s->len);
		s->len = at;
		break;
	case 1:
		n = 1 + rbelow(r, sizeof(junk));
		for (i = 0; i < n; i++)
			junk[i] = rnext(r);
		if (rchance(r, 30) && s->len >= GVS_REC_SIZE)
			memcpy(junk, s->p + s->len - GVS_REC_SIZE,
			       n = GVS_REC_SIZE);
		ms_say(m, "%u bytes appended", n);
		gvs_stream_append(s, junk, n);
		m->nocrc = true;	/* the END record is not last */
		break;
	case 2:
		if (s->len <= GVS_REC_SIZE)
			break;
		at = rbelow(r, s->len - GVS_REC_SIZE);
		s->p[at] ^= 1 + rbelow(r, 255);
		ms_say(m, "byte %zu changed", at);
		break;
	default:
		m->nocrc = true;
		if (s->len >= GVS_REC_SIZE && rchance(r, 50))
			s->p[s->len - 8] ^= 1;
		ms_say(m, "CRC left as it is");
	}
}

/* DST's slice as the stream that was taken says: its pages, last wins. */
static struct {
	uint64_t pg;
	const uint8_t *data;	/* NULL: zero */
} model[1024];
static unsigned int nmodel;

static const uint8_t *model_page(uint64_t pg, bool *known)
{
	unsigned int i;

	for (i = nmodel; i-- > 0;)
		if (model[i].pg == pg) {
			*known = true;
			return model[i].data;
		}
	*known = false;
	return NULL;
}

static int model_byte(uint64_t x)
{
	bool known;
	const uint8_t *p;

	if (x >= S)
		return -1;	/* not the slice: never shown */
	p = model_page(x / PAGE, &known);
	return p ? p[x % PAGE] : 0;
}

/* The plane(s) head 0 of state @st may show. */
static unsigned int planes_of(const uint8_t *st, struct plane *p, struct mode *m)
{
	unsigned int n = 0;

	if (!(gvs_get(st, GVS_HEAD(0, GVS_HD_CONTROL), 4) & ENABLE))
		return 0;
	mode_get(st, 0, GVS_HD_ACTIVE, &m[n]);
	p[n].base = m[n].base;
	p[n].size = mode_size(&m[n]);
	n++;
	if (gvs_get(st, GVS_HEAD(0, GVS_HD_FLIP_PENDING), 4)) {
		mode_get(st, 0, GVS_HD_PENDING, &m[n]);
		p[n].base = m[n].base;
		p[n].size = mode_size(&m[n]);
		n++;
	}
	return n;
}

/* Refusals by reason. */
static struct {
	char why[96];
	unsigned long n;
} reasons[48];
static unsigned int nreasons;
/*
 * When the kernel printed each of its last lines of a refused stream, of
 * any device: the kernel rate-limits each of its refusal messages to 10 in
 * 5 s, and one refusal may print more than one line.
 */
static double logged_t[32];
static unsigned int nlogged_t;

static void count_reason(const char *why)
{
	unsigned int i;

	if (nreasons == GVS_ARRAY_SIZE(reasons) - 1)
		why = "(other reasons)";
	for (i = 0; i < nreasons; i++)
		if (!strcmp(reasons[i].why, why))
			break;
	if (i == nreasons)
		snprintf(reasons[nreasons++].why, sizeof(reasons[0].why), "%s", why);
	reasons[i].n++;
}

/* Note the refusal lines in @k as printed at @t (they were just read). */
static void note_logged(const struct klog *k, double t)
{
	const char *p = k->text;

	while (p && (p = strstr(p, "migration stream refused"))) {
		logged_t[nlogged_t++ % GVS_ARRAY_SIZE(logged_t)] = t;
		p++;
	}
}

/*
 * Refusal lines noted in the 5.5 s before @t: at 10 or more, a line the
 * kernel tried to print after @t may have been rate-limited away.
 *
 * The kernel allows each call site 10 lines in a window of 5 s that opens
 * with the first line printed after the last window closed. A line it
 * drops at time p was preceded by 10 printed in the 5 s before p. When @t
 * is taken before p, and each line is noted when it was read (after it was
 * printed), all 10 were noted less than 5 s before @t; the 0.5 s more
 * is for the tick of the kernel's clock. Counting every site together
 * only makes the count larger.
 */
static unsigned int recent_logged(double t)
{
	unsigned int i, n = 0;

	for (i = 0; i < nlogged_t && i < GVS_ARRAY_SIZE(logged_t); i++)
		n += t - logged_t[i] < 5.5;
	return n;
}

static struct {
	unsigned long run, accepted, refused, unlogged_ratelimited;
	unsigned long format_bad;
} sst;

static void dump_stream(const struct gvs_stream *s, long idx)
{
	char path[PATH_MAX];
	FILE *f;

	if (!opt.dump_dir)
		return;
	snprintf(path, sizeof(path), "%s/vgpu_fuzz-%" PRIu64 "-%ld.gvlm",
		 opt.dump_dir, opt.seed, idx);
	f = fopen(path, "w");
	if (!f)
		return;
	fwrite(s->p, 1, s->len, f);
	fclose(f);
	diag("stream written to %s", path);
}

/* Exact VRAM: every page the stream carried, and a few it did not. */
static void vram_check(struct rng *r)
{
	static uint8_t got[PAGE];
	static const uint8_t zero[PAGE];
	unsigned int i, n;
	char what[160];

	if (!(cfg_cmd(T[T_DST].fd) & 2)) {
		tried(SC_VRAM);	/* memory space off: BAR2 does not decode */
		return;
	}
	n = nmodel + 4;
	for (i = 0; i < n; i++) {
		uint64_t pg = i < nmodel ? model[i].pg : rbelow(r, npages);
		bool known;
		const uint8_t *want = model_page(pg, &known);

		if (pread(T[T_DST].fd, got, PAGE, BAR2 + pg * PAGE) != PAGE) {
			fail(SC_VRAM, "pread of BAR2 page 0x%" PRIx64 ": %s", pg,
			     strerror(errno));
			return;
		}
		if (sig_find(got, PAGE, what, sizeof(what)))
			fail(SC_ISOLATION, "BAR2 page 0x%" PRIx64 " shows %s", pg, what);
		expect(SC_VRAM, !memcmp(got, want ? want : zero, PAGE),
		       "BAR2 page 0x%" PRIx64 " is not what the stream sent", pg);
	}
}

/* Reads of a running DST: registers, BAR2 and its mapping, region 9. */
static void running_reads(struct rng *r)
{
	static uint8_t buf[PAGE];
	char what[160];
	unsigned int i;
	bool mem = cfg_cmd(T[T_DST].fd) & 2;

	for (i = 0; i < 0x200; i += 4)
		rd(T[T_DST].fd, i);
	for (i = 0; i < 4; i++)
		rd(T[T_DST].fd, rbelow(r, GPUVIRT_VGPU_REGS_SIZE) & ~3u);
	for (i = 0; i < 6 && mem; i++) {
		uint64_t pg = i < 3 && nmodel ? model[rbelow(r, nmodel)].pg :
			      rbelow(r, npages);

		if (pread(T[T_DST].fd, buf, PAGE, BAR2 + pg * PAGE) == PAGE &&
		    sig_find(buf, PAGE, what, sizeof(what)))
			fail(SC_ISOLATION, "running: BAR2 page 0x%" PRIx64 " shows %s",
			     pg, what);
		if (i >= 3 || !nmodel)
			continue;	/* a mapping backs what it touches: only the stream's pages */
		if (map_copy(buf, dst_bar2_map + pg * PAGE, PAGE)) {
			/* memory space may have been turned off meanwhile */
			if (cfg_cmd(T[T_DST].fd) & 2)
				fail(SC_ISOLATION, "running: BAR2 mapping raised SIGBUS "
				     "at page 0x%" PRIx64 " with memory space on", pg);
		} else if (sig_find(buf, PAGE, what, sizeof(what))) {
			fail(SC_ISOLATION, "running: BAR2 mapping, page 0x%" PRIx64
			     " shows %s", pg, what);
		} else {
			tried(SC_ISOLATION);
		}
	}
}

/* Wait (bounded) for DST's ring to drain or stop. */
static void dst_wait_idle(unsigned int ms)
{
	uint32_t s;

	for (; ms; ms -= ms < 10 ? ms : 10) {
		s = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_STATUS);
		if (s == 0xdeadbeef || !(s & GPUVIRT_VGPU_STATUS_BUSY) ||
		    (s & GPUVIRT_VGPU_STATUS_ERROR))
			return;
		usleep(10000);
	}
}

/* Save the stopped DST and look at what it sends. */
static void resave_check(void)
{
	struct gvs_stream s = { 0 };
	struct gvs_view v;
	struct dbg_head dh[GVS_HEADS];
	const char *why = NULL;
	char what[160];
	size_t i;
	int err = gvs_save(T[T_DST].fd, &s);

	if (err) {
		fail(SC_RESAVE, "saving dst: %s", strerror(-err));
		gvs_stream_free(&s);
		return;
	}
	err = gvs_parse(s.p, s.len, &v, &why);
	expect(SC_RESAVE, !err, "dst's own stream is malformed: %s", why);
	for (i = 0; i < v.nrecs; i++)
		if (v.recs[i].tag == GVS_REC_PAGE &&
		    v.recs[i].off + GVS_REC_SIZE + PAGE <= s.len &&
		    sig_find(s.p + v.recs[i].off + GVS_REC_SIZE, PAGE, what,
			     sizeof(what)))
			fail(SC_ISOLATION, "dst's saved page 0x%" PRIx64 " holds %s",
			     v.recs[i].arg, what);
	tried(SC_ISOLATION);
	if (!err && v.state_off) {
		for (i = 0; i < GVS_HEADS; i++) {
			dh[i].enabled = !!(gvs_get(s.p + v.state_off,
						   GVS_HEAD(i, GVS_HD_CONTROL), 4) &
					   ENABLE);
			mode_get(s.p + v.state_off, i, GVS_HD_ACTIVE, &dh[i].active);
		}
		heads_sane(dh, "dst's saved state", SC_HEADS);
	}
	gvs_view_free(&v);
	gvs_stream_free(&s);
}

/*
 * The checks of a taken stream, while DST is stopped right after the
 * resume: VRAM, heads, plane, interrupts.
 */
static void accepted_stopped(const uint8_t *st, struct rng *r)
{
	struct plane p[2];
	struct mode m[2];
	struct dbg_head dh[GVS_HEADS];
	unsigned int np = planes_of(st, p, m);
	uint32_t irq0 = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_IRQ_STATUS), irq1;
	uint64_t n;

	vram_check(r);
	if (dbg_heads(T[T_DST].uuid, dh))
		fail(SC_HEADS, "dst's debugfs display file: unreadable");
	else
		heads_sane(dh, "dst's debugfs", SC_HEADS);
	query_check(m, np, SC_PLANE);
	region_sample(model_byte, p, np, r, &stream_rchecks);
	usleep(20000);	/* a frame at 60 Hz: time for a stray vblank */
	irq1 = rd(T[T_DST].fd, GPUVIRT_VGPU_REG_IRQ_STATUS);
	n = dst_irqs();
	expect(SC_STOPPED, !n, "stopped dst signalled %" PRIu64 " interrupts", n);
	if (!(cfg_cmd(T[T_DST].fd) & 2))
		return;	/* memory space off: BAR0 does not decode */
	expect(SC_STOPPED, irq0 == irq1, "stopped dst's IRQ_STATUS went 0x%x -> 0x%x",
	       irq0, irq1);
	expect(SC_STOPPED, irq0 == (gvs_get(st, GVS_ST_IRQ_STATUS, 4) & 0xf),
	       "IRQ_STATUS 0x%x after a resume of 0x%x", irq0,
	       (unsigned int)gvs_get(st, GVS_ST_IRQ_STATUS, 4));
}

/*
 * The format as this program reads it: would a destination of DST's type
 * have to refuse @s before even looking at the device state? Why, or NULL.
 */
static const char *format_refuses(const struct gvs_stream *s, struct gvs_view *v)
{
	const char *why = NULL;
	size_t i;

	if (gvs_parse(s->p, s->len, v, &why))
		return why;
	if (strcmp(v->type, opt.type))
		return "another type";
	if (v->fb_size != S)
		return "another framebuffer size";
	for (i = 0; i < v->nrecs; i++)
		if ((v->recs[i].tag == GVS_REC_PAGE || v->recs[i].tag == GVS_REC_ZERO) &&
		    v->recs[i].arg >= npages)
			return "a page outside the slice";
	return NULL;
}

/* Resume @s into DST and check what happens; returns whether it was taken. */
static bool run_stream(const struct gvs_stream *s, struct rng *r, bool sanity,
		       long idx)
{
	struct klog kl = { 0 };
	struct gvs_view v;
	const char *fmt_why = format_refuses(s, &v);
	const uint8_t *st = fmt_why ? NULL : s->p + v.state_off;
	size_t piece, done = 0, i;
	int rfd, err, werr = 0, serr = 0, state;
	unsigned int recent;
	bool taken = false;
	char why[128];
	double t;

	/* the model: the stream's pages, in order */
	nmodel = 0;
	for (i = 0; !fmt_why && i < v.nrecs && nmodel < GVS_ARRAY_SIZE(model); i++) {
		if (v.recs[i].tag == GVS_REC_PAGE) {
			model[nmodel].pg = v.recs[i].arg;
			model[nmodel++].data = s->p + v.recs[i].off + GVS_REC_SIZE;
		} else if (v.recs[i].tag == GVS_REC_ZERO) {
			model[nmodel].pg = v.recs[i].arg;
			model[nmodel++].data = NULL;
		}
	}
	klog_drain(&kl);
	klog_scan(&kl, SC_KLOG);	/* before this stream: the last one's */
	t = now_s();
	note_logged(&kl, t);
	dst_irqs();
	sst.run++;

	err = gvs_mig_set(T[T_DST].fd, VFIO_DEVICE_STATE_RESUMING, &rfd);
	if (err || rfd < 0) {
		fail(SC_REFUSAL, "dst: RUNNING -> RESUMING: %s", strerror(-err));
		goto out;
	}
	switch (rbelow(r, 4)) {
	case 0:
		piece = 0;
		break;
	case 1:
		piece = 1 + rbelow(r, 200);
		break;
	default:
		piece = 1 + rbelow(r, 70000);
	}
	werr = gvs_write_fd(rfd, s->p, s->len, piece, &done);
	if (!werr)
		serr = gvs_mig_set(T[T_DST].fd, VFIO_DEVICE_STATE_STOP, NULL);
	if (werr) {
		/* nothing more is taken once a stream was refused */
		uint8_t b = 0;

		expect(SC_REFUSAL, write(rfd, &b, 1) < 0 && errno == EINVAL,
		       "a refused resume file took more bytes");
	}
	close(rfd);
	err = werr ?: serr;
	if (err) {
		struct vfio_device_gfx_plane_info q;

		sst.refused++;
		/*
		 * Counted back from the stream's start, not from now: the
		 * kernel decided before now, and how long ago depends on
		 * what came after (the close of the file, on a loaded debug
		 * kernel, has taken more than the slack of the window).
		 */
		recent = recent_logged(t);
		expect(SC_REFUSAL, err == -EINVAL, "refused with %s, not EINVAL (%s)",
		       strerror(-err), werr ? "write" : "RESUMING -> STOP");
		state = gvs_mig_get(T[T_DST].fd);
		expect(SC_REFUSAL, state == VFIO_DEVICE_STATE_RESUMING,
		       "refused, and dst is in state %d, not RESUMING", state);
		klog_drain(&kl);
		klog_scan(&kl, SC_KLOG);
		note_logged(&kl, now_s());
		if (klog_refusal(&kl, T[T_DST].uuid, why, sizeof(why))) {
			count_reason(why);
			tried(SC_REFUSAL);
		} else if (recent >= 10) {
			sst.unlogged_ratelimited++;
			count_reason("(not logged: rate-limited)");
		} else {
			count_reason("(not logged)");
			fail(SC_REFUSAL, "refused (%s) without a 'migration stream "
			     "refused' line on dst", strerror(-err));
		}
		/* nothing of a refused stream shows */
		expect(SC_REFUSAL, !query_plane(T[T_DST].fd, &q) && !q.size,
		       "refused, and dst's plane has size %u", q.size);
		region_check(NULL, NULL, 0, 0, PAGE, false, &refused_rchecks);
		if (opt.verbose)
			diag("%s: refused (%s)", cur_ctx, why);
		if (sanity)
			fail(SC_SANITY, "the unmodified stream was refused");
		goto reset;
	}

	sst.accepted++;
	taken = true;
	if (fmt_why) {
		sst.format_bad++;
		fail(SC_FORMAT, "taken, though it breaks the format: %s", fmt_why);
		dump_stream(s, idx);
		goto reset;
	}
	tried(SC_FORMAT);
	if (opt.verbose)
		diag("%s: taken", cur_ctx);
	accepted_stopped(st, r);

	/* run it: the guest rings its doorbell and the VMM reads */
	err = gvs_mig_set(T[T_DST].fd, VFIO_DEVICE_STATE_RUNNING, NULL);
	if (err) {
		fail(SC_REFUSAL, "taken, and STOP -> RUNNING fails: %s", strerror(-err));
		goto reset;
	}
	wr(T[T_DST].fd, GPUVIRT_VGPU_REG_RING_TAIL, gvs_get(st, GVS_ST_RING_TAIL, 4));
	running_reads(r);
	{
		struct plane p[2];
		struct mode m[2];
		unsigned int np = planes_of(st, p, m);

		query_check(m, np, SC_PLANE);
		/* the slice changes as the ring runs: only another tenant is looked for */
		region_sample(np ? NULL : model_byte, p, np, r, &stream_rchecks);
	}
	dst_wait_idle(sanity ? 60000 : 300);
	if (sanity) {
		/* the source's work, completed here: three COMPUTEs and a fence */
		uint64_t x = 0;
		uint32_t f = 0;

		expect(SC_SANITY, rd(T[T_DST].fd, GPUVIRT_VGPU_REG_ERROR) == 0 &&
		       rd(T[T_DST].fd, GPUVIRT_VGPU_REG_FENCE) == 2,
		       "the source's work did not complete on dst: ERROR %u FENCE %u",
		       rd(T[T_DST].fd, GPUVIRT_VGPU_REG_ERROR),
		       rd(T[T_DST].fd, GPUVIRT_VGPU_REG_FENCE));
		for (i = 0; i < S_NCOMPUTE; i++) {
			pread(T[T_DST].fd, &x, 8, BAR2 + S_COMPUTE + 8 * i);
			expect(SC_SANITY, x == vgpu_compute_ref(500 + i, S_STEPS),
			       "COMPUTE %zu's result is wrong on dst", i);
		}
		pread(T[T_DST].fd, &f, 4, BAR2 + S_FENCE + 4);
		expect(SC_SANITY, f == 2, "the last FENCE wrote %u", f);
	}
	err = gvs_mig_set(T[T_DST].fd, VFIO_DEVICE_STATE_STOP, NULL);
	if (err)
		fail(SC_RESAVE, "dst: RUNNING -> STOP: %s", strerror(-err));
	else
		resave_check();
reset:
	if (ioctl(T[T_DST].fd, VFIO_DEVICE_RESET))
		fail(SC_REFUSAL, "VFIO_DEVICE_RESET of dst: %s", strerror(errno));
	state = gvs_mig_get(T[T_DST].fd);
	expect(SC_REFUSAL, state == VFIO_DEVICE_STATE_RUNNING,
	       "after a reset dst is in state %d", state);
out:
	gvs_view_free(&v);
	klog_drain(&kl);
	klog_scan(&kl, SC_KLOG);
	note_logged(&kl, now_s());
	free(kl.text);
	return taken;
}

/* --- the source --------------------------------------------------------- */

static int src_put(uint64_t *tail, const uint32_t *dw, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (bar2_write(T[T_SRC].fd, S_RING + *tail, &dw[i], 4))
			return -errno;
		*tail = (*tail + 4) % S_RING_SIZE;
	}
	return 0;
}

static int src_mode(unsigned int head, uint64_t base, uint32_t w, uint32_t h,
		    uint32_t stride, uint32_t ctrl)
{
	return wr(T[T_SRC].fd, HEAD_REG(head, BASE_LO), (uint32_t)base) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, BASE_HI), base >> 32) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, WIDTH), w) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, HEIGHT), h) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, STRIDE), stride) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, FORMAT), XR24) ?:
	       wr(T[T_SRC].fd, HEAD_REG(head, CONTROL), ctrl);
}

/*
 * Give the source its state, save it with a packet in progress, and make
 * the two base streams; then the source becomes a signed tenant.
 */
static int capture(char *why, size_t wlen)
{
	int fd = T[T_SRC].fd, err, tries;
	uint8_t *buf = malloc(S_PLANE_STRIDE * S_PLANE_H);
	uint64_t tail = 0, pos_compute;
	uint32_t msi = 0x0081;	/* MSI enable, 64-bit */
	struct gvs_view v;
	const char *perr;
	unsigned int i;
	uint8_t *st;

	if (!buf)
		return -ENOMEM;
	/* pages: the plane of head 0, the slice's middle and last pages */
	own_fill(buf, S_PLANE_STRIDE * S_PLANE_H, S_PLANE);
	err = bar2_write(fd, S_PLANE, buf, S_PLANE_STRIDE * S_PLANE_H);
	own_fill(buf, PAGE, S / 2);
	err = err ?: bar2_write(fd, S / 2, buf, PAGE);
	own_fill(buf, PAGE, S - PAGE);
	err = err ?: bar2_write(fd, S - PAGE, buf, PAGE);
	free(buf);
	/* config space, registers, a pending interrupt */
	err = err ?: (pwrite(fd, &(uint32_t){ 0xfee00000 }, 4, CFG + 0x44) == 4 &&
		      pwrite(fd, &(uint16_t){ 0x4041 }, 2, CFG + 0x4c) == 2 &&
		      pwrite(fd, &msi, 2, CFG + 0x42) == 2 ? 0 : -EIO);
	err = err ?: wr(fd, GPUVIRT_VGPU_REG_SCRATCH, 0x5ca1ab1e) ?:
		     wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW);
	/* heads: on; on with vblank interrupts, flipped; on then off; refused */
	err = err ?: src_mode(0, S_PLANE, S_PLANE_W, S_PLANE_H, S_PLANE_STRIDE, ENABLE);
	if (!err && heads_offered > 1) {
		err = src_mode(1, S_HEAD1, 640, 480, 2560, ENABLE | VBL_IRQ) ?:
		      src_mode(1, S_HEAD1 + 0x200000, 640, 480, 2560, ENABLE | VBL_IRQ);
		for (tries = 0; !err && tries < 500 &&
		     rd(fd, HEAD_REG(1, FLIPS)) < 2; tries++)
			usleep(2000);
	}
	if (!err && heads_offered > 2)
		err = src_mode(2, 0x500000, 800, 600, 3200, ENABLE) ?:
		      wr(fd, HEAD_REG(2, CONTROL), 0);
	if (!err && heads_offered > 3)
		err = src_mode(3, S - PAGE, 1024, 768, 4096, ENABLE);
	if (err) {
		snprintf(why, wlen, "setting up the source: %s", strerror(-err));
		return err;
	}
	/* the ring: FILL, FENCE 1, then long COMPUTEs and an interrupting FENCE 2 */
	err = wr(fd, GPUVIRT_VGPU_REG_RING_BASE_LO, (uint32_t)S_RING) ?:
	      wr(fd, GPUVIRT_VGPU_REG_RING_BASE_HI, 0) ?:
	      wr(fd, GPUVIRT_VGPU_REG_RING_SIZE, S_RING_SIZE);
	{
		uint32_t fill[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0),
			(uint32_t)S_FILL, 0, S_FILL_LEN, 0, 0x600df00d,
		};
		uint32_t f1[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, 0),
			1, (uint32_t)S_FENCE, 0,
		};
		uint32_t f2[] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4,
					 GPUVIRT_VGPU_PKT_FLAG_IRQ),
			2, (uint32_t)S_FENCE + 4, 0,
		};

		err = err ?: src_put(&tail, fill, 6) ?: src_put(&tail, f1, 4);
		pos_compute = tail;
		for (i = 0; !err && i < S_NCOMPUTE; i++) {
			uint32_t c[] = {
				GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
				S_STEPS, (uint32_t)(S_COMPUTE + 8 * i), 0, 500 + i,
			};

			err = src_put(&tail, c, 5);
		}
		err = err ?: src_put(&tail, f2, 4) ?:
		      wr(fd, GPUVIRT_VGPU_REG_RING_TAIL, tail);
	}
	for (tries = 0; !err && tries < 5000 &&
	     rd(fd, GPUVIRT_VGPU_REG_FENCE) < 1; tries++)
		usleep(2000);
	if (err || rd(fd, GPUVIRT_VGPU_REG_FENCE) < 1) {
		snprintf(why, wlen, "the source's ring: %s",
			 err ? strerror(-err) : "FENCE 1 never came");
		return err ?: -ETIMEDOUT;
	}
	/* save it with the first COMPUTE in progress */
	for (tries = 0; tries < 40; tries++) {
		gvs_stream_free(&base[0]);
		err = gvs_save(fd, &base[0]);
		if (err) {
			snprintf(why, wlen, "saving the source: %s", strerror(-err));
			return err;
		}
		if (gvs_parse(base[0].p, base[0].len, &v, &perr)) {
			snprintf(why, wlen, "the source's stream: %s", perr);
			gvs_view_free(&v);
			return -EINVAL;
		}
		st = base[0].p + v.state_off;
		if (gvs_get(st, GVS_ST_CMD_ACTIVE, 4) &&
		    gvs_get(st, GVS_ST_RING_HEAD, 4) == pos_compute) {
			gvs_view_free(&v);
			break;
		}
		gvs_view_free(&v);
		gvs_mig_set(fd, VFIO_DEVICE_STATE_RUNNING, NULL);
		usleep(3000);
	}
	if (tries == 40)
		diag("the source was never caught with its first COMPUTE in progress");
	tried(SC_CAPTURE);
	gvs_parse(base[0].p, base[0].len, &v, NULL);
	st = base[0].p + v.state_off;
	/* what timing decides is set to fixed values: the streams are the seed's */
	gvs_put(st, GVS_ST_RING_BUSY_NS, 8, 123456789);
	gvs_put(st, GVS_ST_CMD_DONE, 8, 0);
	gvs_put(st, GVS_ST_CMD_STATE, 8, 0);
	gvs_put(st, GVS_ST_IRQ_STATUS, 4, GPUVIRT_VGPU_IRQ_SW |
		(heads_offered > 1 ? GPUVIRT_VGPU_IRQ_VBLANK : 0));
	for (i = 0; i < GVS_HEADS; i++)
		gvs_put(st, GVS_HEAD(i, GVS_HD_VBLANKS), 4, 1000 * (i + 1));
	gvs_seal(base[0].p, base[0].len);
	diag("source: %zu records, %zu bytes; head %" PRIu64 ", packet in progress %" PRIu64
	     ", %" PRIu64 " done", v.nrecs, base[0].len,
	     gvs_get(st, GVS_ST_RING_HEAD, 4), gvs_get(st, GVS_ST_CMD_ACTIVE, 4),
	     gvs_get(st, GVS_ST_RING_DONE, 8));
	/* the second base: head 0 turned off, as a commit of 0 leaves it */
	base[1].len = 0;
	gvs_stream_append(&base[1], base[0].p, base[0].len);
	st = base[1].p + v.state_off;
	memset(st + GVS_HEAD(0, GVS_HD_ACTIVE), 0, GVS_MODE_SIZE);
	gvs_put(st, GVS_HEAD(0, GVS_HD_CONTROL), 4, 0);
	gvs_seal(base[1].p, base[1].len);
	gvs_view_free(&v);
	for (i = 0; i < 2; i++) {
		expect(SC_CAPTURE, !gvs_parse(base[i].p, base[i].len, &v, &perr),
		       "base stream %u: %s", i, perr);
		gvs_view_free(&v);
	}

	/* the source is a tenant like the others now */
	if (ioctl(fd, VFIO_DEVICE_RESET) || tenant_sign(T_SRC)) {
		snprintf(why, wlen, "resetting and signing the source: %s",
			 strerror(errno));
		return -EIO;
	}
	return 0;
}

static int stream_mode(void)
{
	static const unsigned int nops_w[] = { 45, 30, 15, 5, 3, 2 };
	long n = opt.count >= 0 ? opt.count : 80, i, first = 1, last;
	struct rng nr = rng_for(opt.seed, 1, 0);
	char why[256] = "";
	double t0 = now_s();
	int err;

	cur_checks = stream_checks;
	snprintf(cur_ctx, sizeof(cur_ctx), "set-up");
	printf("    # Subtest: stream\n");
	err = setup(why, sizeof(why)) ?: capture(why, sizeof(why));
	if (err) {
		fail(SC_CAPTURE, "%s", why);
		goto out;
	}
	/* the unmodified streams first: the checks themselves are checked */
	for (i = 0; i < 2 && opt.index < 0; i++) {
		struct rng r = rng_for(opt.seed, 2, i);

		snprintf(cur_ctx, sizeof(cur_ctx), "unmodified stream %ld (head 0 %s)",
			 i, i ? "off" : "on");
		cur_desc = "";
		if (run_stream(&base[i], &r, true, -1 - i))
			tried(SC_SANITY);
		neighbours_step(&nr, SC_NEIGHBOURS, false);
	}
	if (opt.index >= 0) {
		stream_checks[SC_SANITY].skipped = true;
		stream_checks[SC_SANITY].skip_why = "-i runs one stream";
		first = last = opt.index;
	}
	else
		last = n;
	for (i = first; i <= last && (opt.index >= 0 || i <= n); i++) {
		struct rng r = rng_for(opt.seed, 3, i);
		struct mstream *m = calloc(1, sizeof(*m));
		struct gvs_stream s = { 0 };
		unsigned int k, nops, b = rbelow(&r, 2), tries = 0;

		if (opt.seconds && now_s() - t0 > opt.seconds) {
			diag("time budget of %.0f s used after %ld streams", opt.seconds,
			     i - 1);
			free(m);
			break;
		}
		if (!m || ms_from(m, &base[b])) {
			fail(SC_CAPTURE, "the base stream does not parse");
			free(m);
			break;
		}
		nops = 1 + rpick(&r, nops_w, GVS_ARRAY_SIZE(nops_w));
		for (k = 0; k < nops && tries < 100; tries++)
			k += mutate(m, &r);
		ms_serialize(m, &s);
		if (rchance(&r, 15))
			mutate_bytes(m, &s, &r);
		if (!m->nocrc)
			gvs_seal(s.p, s.len);
		snprintf(cur_ctx, sizeof(cur_ctx), "stream %ld (-s %" PRIu64 " -i %ld, base %u)",
			 i, opt.seed, i, b);
		cur_desc = m->desc;
		{
			unsigned long before = 0;
			unsigned int c;

			for (c = 0; c < SC_NR; c++)
				before += stream_checks[c].failed;
			run_stream(&s, &r, false, i);
			for (c = 0; c < SC_NR; c++)
				before -= stream_checks[c].failed;
			if (before)
				dump_stream(&s, i);
		}
		neighbours_step(&nr, SC_NEIGHBOURS, i % 25 == 0);
		cur_desc = "";
		if (i < last && dst_bound(why, sizeof(why))) {
			fail(SC_CAPTURE, "%s", why);
			i = last;
		}
		gvs_stream_free(&s);
		ms_free(m);
		free(m);
	}
	snprintf(cur_ctx, sizeof(cur_ctx), "the end");
	neighbours_finish(SC_NEIGHBOURS);
out:
	diag("stream: %lu streams run in %.1f s: %lu taken, %lu refused "
	     "(%lu not logged, rate-limited); dst made anew %u times",
	     sst.run, now_s() - t0, sst.accepted, sst.refused,
	     sst.unlogged_ratelimited, recycles);
	recycles = 0;
	for (i = 0; i < (long)nreasons; i++)
		diag("  refused %5lu: %s", reasons[i].n, reasons[i].why);
	return 0;
}

/* ======================================================================== */
/* display                                                                  */
/* ======================================================================== */

enum {
	DC_ERRORS, DC_REGS, DC_PLANE, DC_PLANE_END, DC_ISOLATION, DC_HEADS,
	DC_NEIGHBOURS, DC_KLOG, DC_NR
};

static const struct rchecks display_rchecks = { DC_ISOLATION, DC_PLANE, DC_PLANE_END };

static struct check display_checks[DC_NR] = {
	[DC_ERRORS] = { "errors", "every commit through BAR0 sets HEAD_ERROR and HEAD_CONTROL as the ABI's rules say" },
	[DC_REGS] = { "registers", "the head registers read back what was written, widths and offsets as the ABI says" },
	[DC_PLANE] = { "plane", "QUERY_GFX_PLANE and region 9 (pread, pieces across pages, mmap) show exactly head 0's plane, zeros past its last page and when off" },
	[DC_PLANE_END] = { "plane-end", "a pread of region 9 reads zeros past the plane's end, also within its last page" },
	[DC_ISOLATION] = { "isolation", "nothing of another tenant is read back through region 9" },
	[DC_HEADS] = { "heads", "the core's debugfs shows each head as the model has it, and only modes the ABI allows" },
	[DC_NEIGHBOURS] = { "neighbours", "the neighbours' VRAM and their work are unharmed" },
	[DC_KLOG] = { "kernel-log", "no kernel report (WARNING, BUG, KASAN, ...) after any round" },
};

/* The model of DST's heads. */
struct mhead {
	struct mode staged, active, pending;
	uint32_t control, error, flips;
	bool pending_flip;
};

static struct mhead dm[GVS_HEADS];

/* DST's slice in the display rounds: its own content at both ends. */
static int own_byte(uint64_t x)
{
	uint8_t u[16];

	if (x >= S)
		return -1;
	if (x >= OWN_LO && x < S - OWN_HI)
		return 0;
	own_unit(u, x & ~15ULL);
	return u[x & 15];
}

/* Apply a 4-byte register write to the model. */
static void dm_write(unsigned int reg, uint32_t v)
{
	unsigned int h, r;
	struct mhead *m;

	if (reg < GPUVIRT_VGPU_REG_HEAD(0) ||
	    reg >= GPUVIRT_VGPU_REG_HEAD(GPUVIRT_VGPU_HEADS_MAX))
		return;
	h = (reg - GPUVIRT_VGPU_REG_HEAD(0)) / 0x40;
	r = (reg - GPUVIRT_VGPU_REG_HEAD(0)) % 0x40;
	m = &dm[h];
	switch (r) {
	case GPUVIRT_VGPU_HEAD_CONTROL: {
		uint32_t err = 0;
		bool was_on = m->control & ENABLE;

		v &= ENABLE | VBL_IRQ;
		if (v & ENABLE)
			err = mode_check(h, &m->staged);
		/* a flip that was due shows first: the model learns it below */
		m->error = err;
		m->pending_flip = false;
		if (err || !(v & ENABLE)) {
			m->control = err ? 0 : v;
			memset(&m->active, 0, sizeof(m->active));
			break;
		}
		m->control = v;
		if (!was_on) {
			m->active = m->staged;
			m->flips++;
		} else {
			/* the limiter is on (the default): shown at the next vblank */
			m->pending = m->staged;
			m->pending_flip = true;
		}
		break;
	}
	case GPUVIRT_VGPU_HEAD_BASE_LO:
		m->staged.base = (m->staged.base & ~(uint64_t)0xffffffff) | v;
		break;
	case GPUVIRT_VGPU_HEAD_BASE_HI:
		m->staged.base = (m->staged.base & (uint64_t)0xffffffff) | (uint64_t)v << 32;
		break;
	case GPUVIRT_VGPU_HEAD_WIDTH:
		m->staged.w = v;
		break;
	case GPUVIRT_VGPU_HEAD_HEIGHT:
		m->staged.h = v;
		break;
	case GPUVIRT_VGPU_HEAD_STRIDE:
		m->staged.stride = v;
		break;
	case GPUVIRT_VGPU_HEAD_FORMAT:
		m->staged.fmt = v;
		break;
	}
}

/*
 * A BAR0 write of @n bytes at @reg, as the device splits it: naturally
 * aligned pieces of 4, 2 or 1 bytes, of which only the 4-byte ones write.
 */
static void dm_settle(unsigned int h, bool wait);

static int disp_write(unsigned int reg, const uint8_t *val, size_t n)
{
	size_t o = 0;
	unsigned int a, sz;

	/*
	 * A commit drops a flip still waiting, unless its vblank passed: wait
	 * for a waiting flip first, so that the model knows which.
	 */
	for (o = 0; o < n; o += sz) {
		a = reg + o;
		for (sz = 4; sz > 1 && (a % sz || sz > n - o); sz /= 2)
			;
		if (sz == 4 && a >= GPUVIRT_VGPU_REG_HEAD(0) &&
		    a < GPUVIRT_VGPU_REG_HEAD(GVS_HEADS) &&
		    (a - GPUVIRT_VGPU_REG_HEAD(0)) % 0x40 == GPUVIRT_VGPU_HEAD_CONTROL &&
		    dm[(a - GPUVIRT_VGPU_REG_HEAD(0)) / 0x40].pending_flip)
			dm_settle((a - GPUVIRT_VGPU_REG_HEAD(0)) / 0x40, true);
	}
	if (pwrite(T[T_DST].fd, val, n, BAR0 + reg) != (ssize_t)n)
		return -errno;
	o = 0;
	while (o < n) {
		unsigned int a = reg + o, sz = 4;

		while (sz > 1 && (a % sz || sz > n - o))
			sz /= 2;
		if (sz == 4)
			dm_write(a, gvs_get(val, o, 4));
		o += sz;
	}
	return 0;
}

static int disp_wr(unsigned int reg, uint32_t v)
{
	uint8_t b[4];

	gvs_put(b, 0, 4, v);
	return disp_write(reg, b, 4);
}

static struct {
	unsigned long rounds, commits, refused, flips, odd_writes;
	unsigned long derr[8];
} dst_;

/* Stage @m on @head and commit @ctrl. */
static void disp_commit(unsigned int head, const struct mode *m, uint32_t ctrl)
{
	disp_wr(HEAD_REG(head, BASE_LO), (uint32_t)m->base);
	disp_wr(HEAD_REG(head, BASE_HI), m->base >> 32);
	disp_wr(HEAD_REG(head, WIDTH), m->w);
	disp_wr(HEAD_REG(head, HEIGHT), m->h);
	disp_wr(HEAD_REG(head, STRIDE), m->stride);
	disp_wr(HEAD_REG(head, FORMAT), m->fmt);
	disp_wr(HEAD_REG(head, CONTROL), ctrl);
	dst_.commits++;
	dst_.derr[dm[head].error & 7]++;
	if (dm[head].error)
		dst_.refused++;
}

/* Read FLIPS: a pending flip that shows now is applied to the model. */
static void dm_settle(unsigned int h, bool wait)
{
	uint32_t f;
	unsigned int i;

	for (i = 0; i < (wait ? 300u : 1u); i++) {
		f = rd(T[T_DST].fd, HEAD_REG(h, FLIPS));
		if (dm[h].pending_flip && f == dm[h].flips + 1) {
			dm[h].active = dm[h].pending;
			dm[h].pending_flip = false;
			dm[h].flips++;
			dst_.flips++;
		}
		if (!dm[h].pending_flip)
			break;
		usleep(2000);
	}
	expect(DC_REGS, f == dm[h].flips, "head %u: FLIPS %u, model %u%s", h, f,
	       dm[h].flips, dm[h].pending_flip ? " (a flip pending)" : "");
	expect(DC_REGS, !wait || !dm[h].pending_flip,
	       "head %u: a flip was not shown in 600 ms", h);
}

/*
 * A base at which a plane of @size fits in the slice (size <= S), mostly
 * where DST's own content is: at the start of the slice, or ending with it.
 */
static uint64_t fit_base(struct rng *r, uint64_t size)
{
	uint64_t room = S - size;

	switch (rbelow(r, 4)) {
	case 0:
		return rbelow(r, (room < OWN_LO ? room : OWN_LO) + 1) & ~(PAGE - 1);
	case 1:
		return room & ~(PAGE - 1);
	case 2:
		return 0;
	default:
		return rbelow(r, room + 1) & ~(PAGE - 1);
	}
}

static void display_round(struct rng *r)
{
	static const unsigned int ow[] = { 40, 12, 12, 10, 8, 6 };
	unsigned int nops = 1 + rbelow(r, 4), k, h, i;
	struct dbg_head dh[GVS_HEADS];
	struct plane p[2];
	struct mode mm[2];
	unsigned int np = 0;
	struct mode md;
	bool settle = rchance(r, 70);

	for (k = 0; k < nops; k++) {
		h = rchance(r, 50) ? 0 : rbelow(r, GVS_HEADS);
		switch (rpick(r, ow, GVS_ARRAY_SIZE(ow))) {
		case 0:	/* a mode set, or a flip when the head is on */
			gen_mode(r, &md);
			if (rchance(r, 60) && mode_size(&md) <= S)
				md.base = fit_base(r, mode_size(&md));
			disp_commit(h, &md, rchance(r, 85) ? ENABLE | (rchance(r, 20) ?
				    VBL_IRQ : 0) : (uint32_t)interesting(r, K_CTRL, 0, NULL));
			break;
		case 1:	/* a flip: a new base, same geometry */
			md = dm[h].control & ENABLE ? dm[h].active : dm[h].staged;
			md.base = off_value(r, md.base, mode_size(&md));
			if (rchance(r, 60) && mode_size(&md) <= S)
				md.base = fit_base(r, mode_size(&md));
			disp_commit(h, &md, dm[h].control ? dm[h].control : ENABLE);
			break;
		case 2:	/* off */
			disp_wr(HEAD_REG(h, CONTROL), rchance(r, 70) ? 0 : VBL_IRQ);
			break;
		case 3: {	/* one register, any value */
			static const enum kind rk[] = {
				K_CTRL, K_OFF, K_OFF, K_W, K_H, K_STRIDE, K_FMT,
				K_U32, K_U32, K_U32,
			};
			unsigned int reg = rbelow(r, 16) * 4;
			uint64_t v = reg / 4 < GVS_ARRAY_SIZE(rk) ?
				     interesting(r, rk[reg / 4], 0, NULL) : rnext(r);

			if (reg == GPUVIRT_VGPU_HEAD_BASE_HI)
				v >>= 32;
			disp_wr(GPUVIRT_VGPU_REG_HEAD(h) + reg, (uint32_t)v);
			if (reg == GPUVIRT_VGPU_HEAD_CONTROL)
				dst_.commits++;
			break;
		}
		case 4: {	/* an odd width or offset, anywhere in 0x80..0x200 */
			static const unsigned int widths[] = { 1, 2, 3, 4, 8, 12 };
			unsigned int n = widths[rbelow(r, GVS_ARRAY_SIZE(widths))];
			unsigned int reg = 0x80 + rbelow(r, 0x180 - n);
			uint8_t b[16];

			for (i = 0; i < n; i++)
				b[i] = rnext(r);
			if (rchance(r, 50))
				b[0] &= ENABLE | VBL_IRQ;
			disp_write(reg, b, n);
			dst_.odd_writes++;
			break;
		}
		default:	/* a wait for the next vblank */
			usleep(17000);
		}
	}
	/* the registers, against the model */
	for (h = 0; h < GVS_HEADS; h++) {
		struct mhead *m = &dm[h];

		dm_settle(h, settle);
		expect(DC_ERRORS, rd(T[T_DST].fd, HEAD_REG(h, ERROR)) == m->error &&
		       rd(T[T_DST].fd, HEAD_REG(h, CONTROL)) == m->control,
		       "head %u: HEAD_ERROR %u HEAD_CONTROL 0x%x; the rules say %u and 0x%x "
		       "(staged base 0x%" PRIx64 " %ux%u stride %u format 0x%x)",
		       h, rd(T[T_DST].fd, HEAD_REG(h, ERROR)),
		       rd(T[T_DST].fd, HEAD_REG(h, CONTROL)), m->error, m->control,
		       m->staged.base, m->staged.w, m->staged.h, m->staged.stride,
		       m->staged.fmt);
		expect(DC_REGS,
		       rd(T[T_DST].fd, HEAD_REG(h, BASE_LO)) == (uint32_t)m->staged.base &&
		       rd(T[T_DST].fd, HEAD_REG(h, BASE_HI)) == m->staged.base >> 32 &&
		       rd(T[T_DST].fd, HEAD_REG(h, WIDTH)) == m->staged.w &&
		       rd(T[T_DST].fd, HEAD_REG(h, HEIGHT)) == m->staged.h &&
		       rd(T[T_DST].fd, HEAD_REG(h, STRIDE)) == m->staged.stride &&
		       rd(T[T_DST].fd, HEAD_REG(h, FORMAT)) == m->staged.fmt,
		       "head %u: the mode registers do not read back what was written",
		       h);
	}
	/* the core's view */
	if (dbg_heads(T[T_DST].uuid, dh)) {
		fail(DC_HEADS, "dst's debugfs display file: unreadable");
	} else {
		heads_sane(dh, "dst's debugfs", DC_HEADS);
		for (h = 0; h < GVS_HEADS; h++) {
			/* reading the file shows a flip whose vblank passed */
			const struct mode *a = dm[h].pending_flip && !dh[h].flip_pending ?
					       &dm[h].pending : &dm[h].active;

			expect(DC_HEADS, dh[h].enabled == !!(dm[h].control & ENABLE) &&
			       dh[h].error == dm[h].error &&
			       (!dh[h].enabled ||
				(dh[h].active.base == a->base && dh[h].active.w == a->w &&
				 dh[h].active.h == a->h &&
				 dh[h].active.stride == a->stride)),
			       "head %u in debugfs: enabled=%u error=%u base 0x%" PRIx64
			       " %ux%u stride %u; the model: on %u error %u base 0x%" PRIx64
			       " %ux%u stride %u", h, dh[h].enabled, dh[h].error,
			       dh[h].active.base, dh[h].active.w, dh[h].active.h,
			       dh[h].active.stride, !!(dm[h].control & ENABLE),
			       dm[h].error, a->base, a->w, a->h, a->stride);
		}
	}
	/* the plane */
	if (dm[0].control & ENABLE) {
		mm[np] = dm[0].active;
		p[np].base = mm[np].base;
		p[np++].size = mode_size(&dm[0].active);
		if (dm[0].pending_flip) {
			mm[np] = dm[0].pending;
			p[np].base = mm[np].base;
			p[np++].size = mode_size(&dm[0].pending);
		}
	}
	query_check(mm, np, DC_PLANE);
	region_sample(own_byte, p, np, r, &display_rchecks);
	dst_.rounds++;
}

/* DST reset, its own content at both ends of the slice, the model reset. */
static int display_prepare(char *why, size_t wlen)
{
	uint8_t *buf = malloc(OWN_LO);
	int err;

	if (!buf || ioctl(T[T_DST].fd, VFIO_DEVICE_RESET)) {
		snprintf(why, wlen, "resetting dst");
		free(buf);
		return -EIO;
	}
	own_fill(buf, OWN_LO, 0);
	err = bar2_write(T[T_DST].fd, 0, buf, OWN_LO);
	own_fill(buf, OWN_HI, S - OWN_HI);
	err = err ?: bar2_write(T[T_DST].fd, S - OWN_HI, buf, OWN_HI);
	free(buf);
	if (err)
		snprintf(why, wlen, "writing dst's VRAM: %s", strerror(-err));
	memset(dm, 0, sizeof(dm));
	return err;
}

static int display_mode(void)
{
	long n = opt.count >= 0 ? opt.count : 250, i;
	struct rng r = rng_for(opt.seed, 4, 0), nr = rng_for(opt.seed, 5, 0);
	struct klog kl = { 0 };
	char why[256] = "";
	double t0 = now_s();
	int err = 0;

	cur_checks = display_checks;
	cur_desc = "";
	snprintf(cur_ctx, sizeof(cur_ctx), "set-up");
	printf("    # Subtest: display\n");
	/* after the stream mode, in the same run, only dst is made anew */
	if (tenants_up)
		err = dst_recycle(why, sizeof(why));
	else
		err = setup(why, sizeof(why));
	if (!err && !T[T_SRC].signed_)
		err = tenant_sign(T_SRC);
	if (err) {
		fail(DC_NEIGHBOURS, "%s", why[0] ? why : "signing the source");
		goto out;
	}
	err = display_prepare(why, sizeof(why));
	if (err) {
		fail(DC_HEADS, "%s", why);
		goto out;
	}
	klog_drain(&kl);
	for (i = 1; i <= n; i++) {
		if (dst_backs_too_much() &&
		    (dst_recycle(why, sizeof(why)) ||
		     display_prepare(why, sizeof(why)))) {
			fail(DC_HEADS, "%s", why);
			break;
		}
		if (opt.seconds && now_s() - t0 > opt.seconds) {
			diag("time budget of %.0f s used after %ld rounds", opt.seconds,
			     i - 1);
			break;
		}
		snprintf(cur_ctx, sizeof(cur_ctx), "display round %ld (-s %" PRIu64 ")",
			 i, opt.seed);
		display_round(&r);
		klog_drain(&kl);
		klog_scan(&kl, DC_KLOG);
		neighbours_step(&nr, DC_NEIGHBOURS, i % 50 == 0);
	}
	snprintf(cur_ctx, sizeof(cur_ctx), "the end");
	neighbours_finish(DC_NEIGHBOURS);
	klog_drain(&kl);
	klog_scan(&kl, DC_KLOG);
out:
	free(kl.text);
	diag("display: %lu rounds in %.1f s: %lu commits (%lu refused: mode %lu, "
	     "format %lu, stride %lu, align %lu, range %lu, head %lu), %lu flips "
	     "shown, %lu odd-width writes; dst made anew %u times", dst_.rounds,
	     now_s() - t0, dst_.commits,
	     dst_.refused, dst_.derr[GPUVIRT_VGPU_DERR_MODE],
	     dst_.derr[GPUVIRT_VGPU_DERR_FORMAT], dst_.derr[GPUVIRT_VGPU_DERR_STRIDE],
	     dst_.derr[GPUVIRT_VGPU_DERR_ALIGN], dst_.derr[GPUVIRT_VGPU_DERR_RANGE],
	     dst_.derr[GPUVIRT_VGPU_DERR_HEAD], dst_.flips, dst_.odd_writes,
	     recycles);
	return 0;
}

/* ======================================================================== */

static void usage(void)
{
	fprintf(stderr,
		"usage: vgpu_fuzz [stream|display|all] [-s SEED] [-n COUNT] [-t SECONDS]\n"
		"                 [-i INDEX] [-T TYPE] [-w DIR] [-v]\n"
		"  -s SEED     the run's seed (default: $GPUVIRT_SEED, else the clock)\n"
		"  -n COUNT    streams (stream) or rounds (display); default 80 and 250\n"
		"  -t SECONDS  start no new stream or round after SECONDS, per mode\n"
		"  -i INDEX    only stream INDEX of SEED (stream mode)\n"
		"  -T TYPE     the vGPUs' type (default H200-4Q; four must fit on an H200)\n"
		"  -w DIR      write each stream that broke a check to DIR\n"
		"  -v          say what happened to every stream\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool do_stream = true, do_display = true, seeded = false;
	struct sigaction sa = { .sa_handler = on_sigbus };
	int c, bad = 0, top = 0;

	if (argc > 1 && argv[1][0] != '-') {
		if (!strcmp(argv[1], "stream"))
			do_display = false;
		else if (!strcmp(argv[1], "display"))
			do_stream = false;
		else if (strcmp(argv[1], "all"))
			usage();
		argc--;
		argv++;
	}
	while ((c = getopt(argc, argv, "s:n:t:i:T:w:vh")) != -1) {
		switch (c) {
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'n':
			opt.count = strtol(optarg, NULL, 0);
			break;
		case 't':
			opt.seconds = strtod(optarg, NULL);
			break;
		case 'i':
			opt.index = strtol(optarg, NULL, 0);
			do_display = false;
			break;
		case 'T':
			opt.type = optarg;
			break;
		case 'w':
			opt.dump_dir = optarg;
			break;
		case 'v':
			opt.verbose = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!seeded && getenv("GPUVIRT_SEED") && *getenv("GPUVIRT_SEED")) {
		opt.seed = strtoull(getenv("GPUVIRT_SEED"), NULL, 0);
		seeded = true;
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = (uint64_t)ts.tv_sec * 1000003 + ts.tv_nsec / 1000;
		opt.seed %= 1000000000;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!getenv("GPUVIRT_KO_DIR")) {
		printf("1..0 # SKIP GPUVIRT_KO_DIR is not set: not in the test VM\n");
		return 4;
	}
	printf("1..%d\n", do_stream + do_display);
	printf("# vgpu_fuzz %s -s %" PRIu64,
	       do_stream && do_display ? "all" : do_stream ? "stream" : "display",
	       opt.seed);
	if (opt.count >= 0)
		printf(" -n %ld", opt.count);
	if (opt.index >= 0)
		printf(" -i %ld", opt.index);
	if (opt.seconds)
		printf(" -t %g", opt.seconds);
	printf(" -T %s\n", opt.type);
	sigaction(SIGBUS, &sa, NULL);
	patterns_load();
	kmsg_fd = gv_kmsg_open();
	if (do_stream) {
		stream_mode();
		bad += report(stream_checks, SC_NR, "stream", ++top);
	}
	if (do_display) {
		display_mode();
		bad += report(display_checks, DC_NR, "display", ++top);
	}
	teardown();
	printf("# vgpu_fuzz -s %" PRIu64 ": %s\n", opt.seed,
	       bad ? "violations found" : "every check held");
	return bad ? 1 : 0;
}
