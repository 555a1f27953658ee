// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirt vGPU benchmarks, run inside the test VM by bench/run-guest.sh.
 *
 * Absolute timings on shared machines (and under TCG) are noise, so every
 * benchmark measures the vGPU path and a baseline side by side, interleaved
 * round by round (the order alternates to cancel drift), and reports the
 * median of the per-round ratios and their spread:
 *
 *   bench: NAME ratio=R (median of N rounds, min..max)
 *
 * followed by "raw:" lines with the per-round numbers. Nothing here asserts
 * on time; the exit status only says whether the benchmarks could run.
 *
 *   bar2_*            BAR2 (VRAM slice) mmap bandwidth vs memcpy between two
 *                     anonymous buffers, steady state and first touch
 *   irq_raise_latency IRQ_RAISE on BAR0 (pwrite) to the MSI eventfd firing
 *                     (poll + read), vs one pread of a BAR0 register and vs
 *                     getppid()
 *   doorbell_latency  one FENCE(IRQ) packet written into the command ring,
 *                     the doorbell rung (pwrite RING_TAIL), to the MSI
 *                     eventfd firing (poll + read), vs the same two
 *                     baselines; --label NAME names a run of it with busy
 *                     neighbours (doorbell_latency_NAME)
 *   vgpu_lifecycle    mdev create + VFIO group open + close + remove of a
 *                     vGPU vs the same loop on the kernel's mtty sample
 *   vgpu_lifecycle_sriov  a VF typed (current_vgpu_type), opened by PCI
 *                     address, closed and cleared (0), vs an mdev of the
 *                     same type created, opened, closed and removed, on
 *                     two simulated H200s, one per vGPU model (bench/
 *                     run-guest.sh sets them up; --only sriov)
 *   --cycles DRIVER   no benchmark: ROUNDS x CYCLES lifecycles of gpuvirt
 *                     or mtty alone, for a profiler watching (bench/scale,
 *                     SCALE_PERF=1); prints each round's rate
 *
 * Defaults: 15 rounds, 64 MiB steady state, 16 MiB first-touch windows,
 * IRQ batches of 2000, doorbell batches of 500, 30 lifecycle cycles a round
 * and driver.
 *
 * Usage: vgpu_bench --uuid UUID [-r ROUNDS] [-s MIB] [-t MIB] [-k BATCH]
 *                   [-d BATCH] [-n CYCLES] [--label NAME]
 *                   [--only bar2,irq,doorbell,lifecycle,sriov,flip]
 *        vgpu_bench --cycles gpuvirt|mtty [-r ROUNDS] [-n CYCLES]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/gpuvirt_vgpu.h>

#include "vgpu_client.h"

#define MDEVS		VGPU_MDEVS
#define GV_TYPE		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C"
#define MTTY_TYPE	"/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-2"
#define GV_LC_UUID	"b3e5c0de-0000-4000-8000-0000000000c1"
#define MTTY_LC_UUID	"b3e5c0de-0000-4000-8000-0000000000c2"
#define REGION(i)	VGPU_REGION(i)
#define MIB		(1UL << 20)
#define MAX_ROUNDS	64

static int rounds = 15;
static size_t steady_mib = 64, touch_mib = 16;
static int irq_batch = 2000, db_batch = 500, lc_cycles = 30;
static const char *uuid, *label, *cycles_only;
static int failures;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Print the summary line of n per-round ratios. */
static void report(const char *name, const double *ratio, int n,
		   const char *note)
{
	double s[MAX_ROUNDS], med;
	int i;

	if (n <= 0) {
		printf("bench: %s ratio=n/a (no rounds)%s%s\n", name,
		       note ? " " : "", note ? note : "");
		return;
	}
	for (i = 0; i < n; i++)
		s[i] = ratio[i];
	qsort(s, n, sizeof(s[0]), cmp_double);
	med = n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	printf("bench: %s ratio=%.3f (median of %d rounds, %.3f..%.3f)%s%s\n",
	       name, med, n, s[0], s[n - 1], note ? " " : "", note ? note : "");
	fflush(stdout);
}

static int sysfs_write(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : (n == (ssize_t)strlen(s) ? 0 : -EIO);
	close(fd);
	return n;
}

#define vfio_open(u, id)	vgpu_client_open(u, id)
#define vfio_close(u)		vgpu_client_close(u)

static int reg_rd(int fd, unsigned int reg, uint32_t *v)
{
	return pread(fd, v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) == 4 ?
	       0 : -errno;
}

static int reg_wr(int fd, unsigned int reg, uint32_t v)
{
	return pwrite(fd, &v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) == 4 ?
	       0 : -errno;
}

static int cfg_wr(int fd, unsigned int off, uint32_t v, unsigned int len)
{
	return pwrite(fd, &v, len, REGION(VFIO_PCI_CONFIG_REGION_INDEX) + off) ==
	       (ssize_t)len ? 0 : -errno;
}

static void *bar2_map(int fd, uint64_t off, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    REGION(VFIO_PCI_BAR2_REGION_INDEX) + off);
}

/* Fresh anonymous memory; huge=false asks for 4 KiB pages. */
static void *anon_map(size_t len, bool huge)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

/* Seconds one memcpy(dst, src, len) takes. */
static double time_copy(void *dst, const void *src, size_t len)
{
	double t = now();

	memcpy(dst, src, len);
	__asm__ __volatile__("" : : "r"(dst) : "memory");
	return now() - t;
}

/* Spot-check that dst holds src's bytes: copies must really happen. */
static bool same(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 4093)
		if (a[i] != b[i])
			return false;
	return a[len - 1] == b[len - 1];
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		*(uint64_t *)(p + i) = (i * 0x9e3779b97f4a7c15ULL) ^ seed;
}

/* gpuvirt_sim's host_mem_cap_mb: what all simulated VRAM may back. */
static size_t host_cap_mib(void)
{
	FILE *f = fopen("/sys/module/gpuvirt_sim/parameters/host_mem_cap_mb", "r");
	unsigned long v = 512;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 512;
		fclose(f);
	}
	return v;
}

static double mibps(size_t len, double s)
{
	return len / (double)MIB / s;
}

/*
 * a. BAR2 mmap bandwidth. Steady state: memcpy anon -> BAR2 (write) and
 * BAR2 -> anon (read) of steady_mib, against memcpy anon -> anon of the same
 * size; all buffers are touched before. First touch: every round maps a
 * fresh, never-backed touch_mib window of the slice and writes it (page
 * fault + backing allocation per 4 KiB page), against writing a fresh
 * anonymous mapping with 4 KiB pages (anonymous page faults). Each window is
 * then unmapped and mapped again and written once more: "remap", the fault
 * cost alone, the backing already there.
 */
/*
 * Touch @need_mib MiB of the guest's free memory, twice what the
 * first-touch rounds will back, and free it again. Under QEMU a guest page
 * that was never used is not backed on the host either, and its first use
 * takes a host page fault in QEMU: the anonymous baseline, mapped and
 * unmapped round after round, recycles the same warm pages, while VRAM
 * backing keeps growing into never-used ones. Warming the free memory
 * first gives both sides the same kind of page.
 */
static void prewarm_guest_ram(size_t need_mib)
{
	size_t len = 2 * need_mib * MIB;
	double t0 = now();
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		printf("note: bar2_first_touch: could not warm %zu MiB of guest RAM\n",
		       len / MIB);
		return;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	munmap(p, len);
	printf("raw: bar2_first_touch warmed %zu MiB of guest RAM in %.2f s\n",
	       len / MIB, now() - t0);
}

static void bench_bar2(int fd)
{
	size_t len = steady_mib * MIB, tlen = touch_mib * MIB;
	double rw[MAX_ROUNDS], rr[MAX_ROUNDS], rb[MAX_ROUNDS], rt[MAX_ROUNDS];
	double rt_thp[MAX_ROUNDS], rremap[MAX_ROUNDS];
	uint8_t *bar, *src, *dst, *win, *anon;
	size_t cap, tr_max;
	int r, nt = 0;
	double t;

	cap = host_cap_mib();
	if (steady_mib + 32 > cap) {
		printf("bench: bar2_mmap_steady ratio=n/a (-s %zu MiB does not fit host_mem_cap_mb=%zu)\n",
		       steady_mib, cap);
		failures++;
		return;
	}
	bar = bar2_map(fd, 0, len);
	src = anon_map(len, true);
	dst = anon_map(len, true);
	if (bar == MAP_FAILED || src == MAP_FAILED || dst == MAP_FAILED) {
		printf("bench: bar2_mmap_steady ratio=n/a (mmap failed: %s)\n",
		       strerror(errno));
		failures++;
		return;
	}
	fill(src, len, 1);
	memset(dst, 0, len);

	/* first touch of the steady-state window, reported on its own */
	t = time_copy(bar, src, len);
	printf("raw: bar2_first_touch_steady_window %zu MiB in %.4f s = %.1f MiB/s (fault + backing, once)\n",
	       steady_mib, t, mibps(len, t));

	for (r = 0; r < rounds; r++) {
		double tb1, tb2, tw, tr;

		fill(src, len, r + 2);
		if (r & 1) {
			tw = time_copy(bar, src, len);
			tb1 = time_copy(dst, src, len);
			tr = time_copy(dst, bar, len);
			tb2 = time_copy(dst, src, len);
		} else {
			tb1 = time_copy(dst, src, len);
			tw = time_copy(bar, src, len);
			tb2 = time_copy(dst, src, len);
			tr = time_copy(dst, bar, len);
		}
		if (!same(bar, src, len) || !same(dst, src, len)) {
			printf("bench: bar2_mmap_steady ratio=n/a (data mismatch in round %d)\n", r);
			failures++;
			goto out;
		}
		/* bandwidth ratio = baseline time / measured time */
		rw[r] = (tb1 + tb2) / 2 / tw;
		rr[r] = (tb1 + tb2) / 2 / tr;
		rb[r] = (tb1 + tb2) / (tw + tr);
		printf("raw: bar2_steady round=%d memcpy=%.1f,%.1f bar2_write=%.1f bar2_read=%.1f MiB/s\n",
		       r, mibps(len, tb1), mibps(len, tb2), mibps(len, tw),
		       mibps(len, tr));
	}
	report("bar2_mmap_steady", rb, rounds,
	       "[BAR2 write+read bandwidth / anon memcpy; goal >= 0.95]");
	report("bar2_mmap_write", rw, rounds, "[memcpy anon->BAR2 / anon->anon]");
	report("bar2_mmap_read", rr, rounds, "[memcpy BAR2->anon / anon->anon]");

	/*
	 * First touch, fresh windows after the steady one. All simulated VRAM
	 * together may back only host_mem_cap_mb; past it a fault is SIGBUS,
	 * so stay below it (with a margin for anything else backed).
	 */
	tr_max = cap > steady_mib + 32 ? (cap - steady_mib - 32) / touch_mib : 0;
	prewarm_guest_ram((tr_max < (size_t)rounds ? tr_max : (size_t)rounds) *
			  touch_mib + 64);
	if ((size_t)rounds > tr_max)
		printf("note: bar2_first_touch: %zu rounds only: host_mem_cap_mb=%zu\n",
		       tr_max, cap);
	for (r = 0; r < rounds && (size_t)r < tr_max; r++) {
		uint64_t off = len + (uint64_t)r * tlen;
		double tg, ta, tthp, tremap;

		win = bar2_map(fd, off, tlen);
		anon = anon_map(tlen, false);
		if (win == MAP_FAILED || anon == MAP_FAILED) {
			printf("raw: bar2_first_touch round=%d mmap failed: %s\n",
			       r, strerror(errno));
			failures++;
			break;
		}
		if (r & 1) {
			ta = time_copy(anon, src, tlen);
			tg = time_copy(win, src, tlen);
		} else {
			tg = time_copy(win, src, tlen);
			ta = time_copy(anon, src, tlen);
		}
		munmap(anon, tlen);
		anon = anon_map(tlen, true);
		tthp = anon == MAP_FAILED ? 0 : time_copy(anon, src, tlen);
		if (anon != MAP_FAILED)
			munmap(anon, tlen);
		munmap(win, tlen);
		win = bar2_map(fd, off, tlen);
		tremap = win == MAP_FAILED ? 0 : time_copy(win, src, tlen);
		if (win != MAP_FAILED)
			munmap(win, tlen);

		rt[nt] = ta / tg;
		rt_thp[nt] = tthp / tg;
		rremap[nt] = tremap ? ta / tremap : 0;
		nt++;
		printf("raw: bar2_first_touch round=%d bar2_fresh=%.1f bar2_remap=%.1f anon_4k=%.1f anon_thp=%.1f MiB/s\n",
		       r, mibps(tlen, tg), tremap ? mibps(tlen, tremap) : 0,
		       mibps(tlen, ta), tthp ? mibps(tlen, tthp) : 0);
	}
	report("bar2_first_touch", rt, nt,
	       "[fresh BAR2 window (fault+backing) / fresh anon 4K pages]");
	report("bar2_first_touch_vs_thp", rt_thp, nt,
	       "[fresh BAR2 window / fresh anon THP, the VMM default]");
	report("bar2_remap_touch", rremap, nt,
	       "[re-mapped backed BAR2 window (fault only) / fresh anon 4K pages]");
out:
	munmap(bar, len);
	munmap(src, len);
	munmap(dst, len);
}

/*
 * b. IRQ_RAISE -> MSI eventfd: the interrupt path alone, signalled
 * synchronously inside the pwrite (c. adds the engine). One op = pwrite IRQ_RAISE + poll + read of the eventfd;
 * IRQ_STATUS is acked (RW1C) once per batch, outside the timed region: the
 * device signals on every raise, pending or not. Baselines: one pread of a
 * BAR0 register (the same device file, one syscall) and getppid().
 */
static int irq_once(int fd, int efd)
{
	struct pollfd p = { efd, POLLIN, 0 };
	uint64_t cnt;

	if (reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_RAISE, GPUVIRT_VGPU_IRQ_SW))
		return -1;
	if (poll(&p, 1, 2000) != 1)
		return -1;
	return read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt == 1 ? 0 : -1;
}

static void bench_irq(int fd)
{
	double ratio[MAX_ROUNDS], ratio_ppid[MAX_ROUNDS];
	int efd, r, i, k = irq_batch;
	uint32_t v;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0 || vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, efd) ||
	    cfg_wr(fd, 0x40 + 2, 1, 2)) {		/* MSI enable */
		printf("bench: irq_raise_latency ratio=n/a (MSI setup failed: %s)\n",
		       strerror(errno));
		failures++;
		return;
	}
	/* warm up, and check the path works at all */
	for (i = 0; i < 100; i++)
		if (irq_once(fd, efd)) {
			printf("bench: irq_raise_latency ratio=n/a (no MSI after IRQ_RAISE)\n");
			failures++;
			goto out;
		}
	reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, GPUVIRT_VGPU_IRQ_SW);

	for (r = 0; r < rounds; r++) {
		double t0, ti = 0, tp = 0, tg = 0;
		int pass;

		/* ABBA-style: the order of the three loops alternates */
		for (pass = 0; pass < 3; pass++) {
			int which = r & 1 ? 2 - pass : pass;

			t0 = now();
			switch (which) {
			case 0:
				for (i = 0; i < k; i++)
					if (irq_once(fd, efd))
						goto lost;
				ti = now() - t0;
				reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS,
				       GPUVIRT_VGPU_IRQ_SW);
				break;
			case 1:
				for (i = 0; i < k; i++)
					if (reg_rd(fd, GPUVIRT_VGPU_REG_STATUS, &v))
						goto lost;
				tp = now() - t0;
				break;
			case 2:
				for (i = 0; i < k; i++)
					syscall(SYS_getppid);
				tg = now() - t0;
				break;
			}
		}
		ratio[r] = ti / tp;
		ratio_ppid[r] = ti / tg;
		printf("raw: irq round=%d ops=%d raise_to_irq=%.2f us pread_bar0=%.2f us getppid=%.2f us\n",
		       r, k, ti / k * 1e6, tp / k * 1e6, tg / k * 1e6);
	}
	report("irq_raise_latency", ratio, rounds,
	       "[(IRQ_RAISE pwrite + poll + read) / one BAR0 pread; lower is better]");
	report("irq_raise_latency_vs_getppid", ratio_ppid, rounds,
	       "[(IRQ_RAISE pwrite + poll + read) / getppid()]");
	goto out;
lost:
	printf("bench: irq_raise_latency ratio=n/a (interrupt lost in round %d)\n", r);
	failures++;
out:
	cfg_wr(fd, 0x40 + 2, 0, 2);
	vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, -1);
	close(efd);
}

/*
 * c. Doorbell to completion over the command ring. A 4 KiB ring sits in
 * the last page of the slice, written through a BAR2 mapping. One op
 * writes one FENCE(IRQ) packet (fence value not written back) at the
 * tail, rings the doorbell (pwrite RING_TAIL) and waits for the MSI (poll
 * + read of the eventfd). On idle engines the doorbell runs the packet
 * itself before the pwrite returns (an inline turn, Documentation/
 * scheduler.rst); otherwise the engine thread wakes and the policy picks
 * the vGPU. The packet runs under the cost model (1 us) and the engine
 * raises the interrupt. IRQ_STATUS is acked once per batch, outside the timed
 * region; the device signals every fence whether or not the cause is
 * pending. Baselines as in b. With --label the run is named
 * doorbell_latency_LABEL: run-guest.sh runs it again with busy neighbours
 * under each policy.
 *
 * The core's histogram of the vGPU's waits, from becoming runnable (the
 * doorbell) to the engine picking it (debugfs vgpus/UUID/sched,
 * wait_hist_us), is read before and after the timed rounds: it splits the
 * op into the engine's wake-up and decision, and the rest.
 */
#define DB_RING		4096u
#define DB_HIST		16

/*
 * The vGPU's wait histogram, "wait_hist_us: 1:N 4:N ... inf:N", into
 * cnt[] (bounds in bound[]); returns the number of buckets, 0 if the
 * debugfs file is not there.
 */
static int db_hist(unsigned long long *cnt, char bound[][8])
{
	char path[256], line[512], *p, *tok;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/kernel/debug/gpuvirt/gpus/sim0/vgpus/%s/sched", uuid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "wait_hist_us:", 13))
			break;
	fclose(f);
	if (strncmp(line, "wait_hist_us:", 13))
		return 0;
	for (tok = strtok(line + 13, " \n"); tok && n < DB_HIST;
	     tok = strtok(NULL, " \n")) {
		p = strchr(tok, ':');
		if (!p)
			break;
		snprintf(bound[n], 8, "%.*s", (int)(p - tok), tok);
		cnt[n++] = strtoull(p + 1, NULL, 10);
	}
	return n;
}

/* The GPU's count of turns doorbells ran on idle engines; -1 if unknown. */
static long long db_inline_turns(void)
{
	unsigned long long v;
	char line[128];
	long long n = -1;
	FILE *f;

	f = fopen("/sys/kernel/debug/gpuvirt/gpus/sim0/sched", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "inline_turns: %llu", &v) == 1)
			n = (long long)v;
	fclose(f);
	return n;
}

/* Name of a doorbell result: doorbell_latency[_LABEL][SUFFIX] */
static const char *db_name(const char *suffix)
{
	static char name[128];

	snprintf(name, sizeof(name), "doorbell_latency%s%s%s",
		 label ? "_" : "", label ? label : "", suffix);
	return name;
}

struct db_ring {
	int fd, efd;
	uint32_t *ring;
	uint32_t tail, seq;
};

static int doorbell_once(struct db_ring *d)
{
	const uint32_t pkt[] = {
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, GPUVIRT_VGPU_PKT_FLAG_IRQ),
		++d->seq, 0xffffffff, 0xffffffff,	/* no write-back */
	};
	struct pollfd p = { d->efd, POLLIN, 0 };
	uint64_t cnt;
	unsigned int i;

	for (i = 0; i < sizeof(pkt) / sizeof(pkt[0]); i++) {
		d->ring[d->tail / 4] = pkt[i];
		d->tail = (d->tail + 4) & (DB_RING - 1);
	}
	if (reg_wr(d->fd, GPUVIRT_VGPU_REG_RING_TAIL, d->tail))
		return -1;
	if (poll(&p, 1, 2000) != 1)
		return -1;
	return read(d->efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt == 1 ? 0 : -1;
}

static void bench_doorbell(int fd)
{
	double ratio[MAX_ROUNDS], ratio_ppid[MAX_ROUNDS];
	struct db_ring d = { .fd = fd, .efd = -1 };
	unsigned long long h0[DB_HIST] = { 0 }, h1[DB_HIST] = { 0 }, waits = 0;
	char bound[DB_HIST][8];
	uint32_t lo = 0, hi = 0, v, fence = 0;
	int r, i, k = db_batch, nh;
	long long in0, in1;
	uint64_t base;

	if (reg_rd(fd, GPUVIRT_VGPU_REG_VRAM_SIZE_LO, &lo) ||
	    reg_rd(fd, GPUVIRT_VGPU_REG_VRAM_SIZE_HI, &hi)) {
		printf("bench: %s ratio=n/a (cannot read VRAM_SIZE)\n", db_name(""));
		failures++;
		return;
	}
	base = ((uint64_t)hi << 32 | lo) - DB_RING;
	d.ring = bar2_map(fd, base, DB_RING);
	d.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d.ring == MAP_FAILED || d.efd < 0 ||
	    vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, d.efd) ||
	    cfg_wr(fd, 0x40 + 2, 1, 2) ||			/* MSI enable */
	    reg_wr(fd, GPUVIRT_VGPU_REG_RING_BASE_LO, (uint32_t)base) ||
	    reg_wr(fd, GPUVIRT_VGPU_REG_RING_BASE_HI, base >> 32) ||
	    reg_wr(fd, GPUVIRT_VGPU_REG_RING_SIZE, DB_RING)) {
		printf("bench: %s ratio=n/a (ring or MSI setup failed: %s)\n", db_name(""),
		       strerror(errno));
		failures++;
		goto out;
	}
	/* warm up, and check the path works at all */
	for (i = 0; i < 50; i++)
		if (doorbell_once(&d)) {
			printf("bench: %s ratio=n/a (no MSI after the doorbell)\n", db_name(""));
			failures++;
			goto out;
		}
	if (reg_rd(fd, GPUVIRT_VGPU_REG_FENCE, &fence) || fence != d.seq) {
		printf("bench: %s ratio=n/a (FENCE reads %u, expected %u)\n", db_name(""),
		       fence, d.seq);
		failures++;
		goto out;
	}
	reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u);
	nh = db_hist(h0, bound);
	in0 = db_inline_turns();

	for (r = 0; r < rounds; r++) {
		double t0, td = 0, tp = 0, tg = 0;
		int pass;

		/* ABBA-style: the order of the three loops alternates */
		for (pass = 0; pass < 3; pass++) {
			int which = r & 1 ? 2 - pass : pass;

			t0 = now();
			switch (which) {
			case 0:
				for (i = 0; i < k; i++)
					if (doorbell_once(&d))
						goto lost;
				td = now() - t0;
				reg_wr(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u);
				break;
			case 1:
				for (i = 0; i < k; i++)
					if (reg_rd(fd, GPUVIRT_VGPU_REG_STATUS, &v))
						goto lost;
				tp = now() - t0;
				break;
			case 2:
				for (i = 0; i < k; i++)
					syscall(SYS_getppid);
				tg = now() - t0;
				break;
			}
		}
		ratio[r] = td / tp;
		ratio_ppid[r] = td / tg;
		printf("raw: %s round=%d ops=%d doorbell_to_irq=%.2f us pread_bar0=%.2f us getppid=%.2f us\n",
		       db_name(""), r, k, td / k * 1e6, tp / k * 1e6,
		       tg / k * 1e6);
	}
	if (reg_rd(fd, GPUVIRT_VGPU_REG_FENCE, &fence) || fence != d.seq) {
		printf("bench: %s ratio=n/a (FENCE reads %u, expected %u)\n", db_name(""),
		       fence, d.seq);
		failures++;
		goto out;
	}
	if (nh && db_hist(h1, bound) == nh) {
		printf("raw: %s wait_hist_us (doorbell to the engine picking the vGPU, timed rounds):",
		       db_name(""));
		for (i = 0; i < nh; i++) {
			printf(" <=%s:%llu", bound[i], h1[i] - h0[i]);
			waits += h1[i] - h0[i];
		}
		printf(" (%llu waits, %d ops)\n", waits, rounds * k);
	}
	in1 = db_inline_turns();
	if (in0 >= 0 && in1 >= 0)
		printf("raw: %s inline_turns %lld of %d ops (doorbells that ran their packet on idle engines, timed rounds)\n",
		       db_name(""), in1 - in0, rounds * k);
	report(db_name(""), ratio, rounds,
	       "[(FENCE(IRQ) into the ring + RING_TAIL pwrite + poll + read) / one BAR0 pread; lower is better]");
	report(db_name("_vs_getppid"), ratio_ppid, rounds,
	       "[(FENCE(IRQ) into the ring + RING_TAIL pwrite + poll + read) / getppid()]");
	goto out;
lost:
	printf("bench: %s ratio=n/a (interrupt lost in round %d)\n", db_name(""), r);
	failures++;
out:
	/* the ring off (it is idle now), MSI off */
	reg_wr(fd, GPUVIRT_VGPU_REG_RING_SIZE, 0);
	cfg_wr(fd, 0x40 + 2, 0, 2);
	vgpu_client_set_irq(fd, VFIO_PCI_MSI_IRQ_INDEX, -1);
	if (d.efd >= 0)
		close(d.efd);
	if (d.ring != MAP_FAILED)
		munmap(d.ring, DB_RING);
}

/*
 * d. One lifecycle: write the UUID to the type's create, open the mdev
 * through the VFIO group API (container, group, SET_IOMMU, device fd),
 * close everything, write 1 to remove. Returns seconds for n cycles, or a
 * negative errno.
 */
/*
 * Seconds for @n cycles of: write @make_val to @make, open device @dev
 * with @open and close it, write @undo_val to @undo; or -1 and *@err.
 */
static double cycles(const char *make, const char *make_val, const char *undo,
		     const char *undo_val, const char *dev,
		     int (*open)(struct vfio_user *, const char *), int n,
		     int *err)
{
	struct vfio_user u;
	double t0;
	int i;

	t0 = now();
	for (i = 0; i < n; i++) {
		*err = sysfs_write(make, make_val);
		if (*err)
			return -1;
		*err = open(&u, dev);
		vfio_close(&u);
		if (*err) {
			sysfs_write(undo, undo_val);
			return -1;
		}
		*err = sysfs_write(undo, undo_val);
		if (*err)
			return -1;
	}
	return now() - t0;
}

static double lifecycle(const char *type, const char *id, int n, int *err)
{
	char create[256], remove[256];

	snprintf(create, sizeof(create), "%s/create", type);
	snprintf(remove, sizeof(remove), MDEVS "/%s/remove", id);
	return cycles(create, id, remove, "1", id, vgpu_client_open, n, err);
}

/* --cycles: one driver's lifecycles alone, for a profile of its path */
static int lifecycle_cycles_only(const char *driver)
{
	bool gv = !strcmp(driver, "gpuvirt");
	const char *type = gv ? GV_TYPE : MTTY_TYPE;
	const char *id = gv ? GV_LC_UUID : MTTY_LC_UUID;
	int r, err = 0;
	double t;

	if (!gv && strcmp(driver, "mtty")) {
		fprintf(stderr, "vgpu_bench: --cycles wants gpuvirt or mtty, not '%s'\n",
			driver);
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		t = lifecycle(type, id, lc_cycles, &err);
		if (t < 0) {
			printf("cycles: %s: round %d failed: %s\n", driver, r,
			       strerror(-err));
			return 1;
		}
		printf("raw: cycles driver=%s round=%d cycles=%d %.2f ms each\n",
		       driver, r, lc_cycles, t / lc_cycles * 1e3);
	}
	return 0;
}

static void bench_lifecycle(void)
{
	double ratio[MAX_ROUNDS], tg, tm = 0;
	const char *why = getenv("BENCH_MTTY_WHY");
	bool mtty = access(MTTY_TYPE "/create", W_OK) == 0;
	int r, err = 0, n = lc_cycles;

	if (!mtty)
		printf("note: vgpu_lifecycle: no mtty baseline: %s\n",
		       why && *why ? why : "no mdev type " MTTY_TYPE);
	/* warm-up cycle of each, untimed */
	if (lifecycle(GV_TYPE, GV_LC_UUID, 1, &err) < 0) {
		printf("bench: vgpu_lifecycle ratio=n/a (gpuvirt cycle failed: %s)\n",
		       strerror(-err));
		failures++;
		return;
	}
	if (mtty && lifecycle(MTTY_TYPE, MTTY_LC_UUID, 1, &err) < 0) {
		printf("note: vgpu_lifecycle: mtty cycle failed (%s): no baseline\n",
		       strerror(-err));
		mtty = false;
	}

	for (r = 0; r < rounds; r++) {
		if (mtty && (r & 1))
			tm = lifecycle(MTTY_TYPE, MTTY_LC_UUID, n, &err);
		tg = lifecycle(GV_TYPE, GV_LC_UUID, n, &err);
		if (tg < 0) {
			printf("bench: vgpu_lifecycle ratio=n/a (gpuvirt cycle failed: %s)\n",
			       strerror(-err));
			failures++;
			return;
		}
		if (mtty && !(r & 1))
			tm = lifecycle(MTTY_TYPE, MTTY_LC_UUID, n, &err);
		if (mtty && tm < 0) {
			printf("note: vgpu_lifecycle: mtty cycle failed (%s) in round %d: no baseline\n",
			       strerror(-err), r);
			mtty = false;
		}
		if (mtty) {
			ratio[r] = tm / tg;	/* rate ratio = time ratio inverted */
			printf("raw: lifecycle round=%d cycles=%d gpuvirt=%.1f/s (%.2f ms) mtty=%.1f/s (%.2f ms)\n",
			       r, n, n / tg, tg / n * 1e3, n / tm, tm / n * 1e3);
		} else {
			ratio[r] = n / tg;
			printf("raw: lifecycle round=%d cycles=%d gpuvirt=%.1f/s (%.2f ms)\n",
			       r, n, n / tg, tg / n * 1e3);
		}
	}
	if (mtty) {
		report("vgpu_lifecycle", ratio, rounds,
		       "[gpuvirt H200-35C create+open+close+remove rate / mtty-2 rate]");
	} else {
		/* no baseline: the raw rate, labelled as such */
		double s[MAX_ROUNDS];

		memcpy(s, ratio, sizeof(double) * rounds);
		qsort(s, rounds, sizeof(s[0]), cmp_double);
		printf("bench: vgpu_lifecycle ratio=n/a (no mtty baseline) gpuvirt_rate=%.1f/s (median of %d rounds, %.1f..%.1f)\n",
		       s[rounds / 2], rounds, s[0], s[rounds - 1]);
	}
}

/*
 * d2. The SR-IOV vGPU model's lifecycle against the mdev model's. One
 * SR-IOV cycle: write the type id to the VF's gpuvirt/current_vgpu_type
 * (makes the vGPU), open the VF through the VFIO group API by its PCI
 * address, as a VMM does, close it, write 0 (removes the vGPU). One mdev
 * cycle: lifecycle() above, of the same type. A GPU is in one model at a
 * time, so the two sides run on two simulated H200s that bench/run-guest.sh
 * creates for this alone: BENCH_SRIOV_MDEV_GPU (mdev model, no vGPUs) and
 * the GPU of BENCH_SRIOV_VF (sriov model, one VF enabled). Ratio = SR-IOV
 * cycle time / mdev cycle time (lower: SR-IOV is cheaper).
 */
#define SRIOV_TYPE	"H200-35C"
#define SRIOV_LC_UUID	"b3e5c0de-0000-4000-8000-0000000000c3"
#define PCI_DEVS	"/sys/bus/pci/devices"

/* The first line of a sysfs file, without its newline; 0 or -errno. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	if (ferror(f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* Seconds for n SR-IOV cycles of VF @vf with type id @id, or -1 and *err. */
static double sriov_cycles(const char *vf, const char *id, int n, int *err)
{
	char cur[256];

	snprintf(cur, sizeof(cur), PCI_DEVS "/%s/gpuvirt/current_vgpu_type", vf);
	return cycles(cur, id, cur, "0", vf, vgpu_client_open_name, n, err);
}

/* The id VF @vf lists for type @name in creatable_vgpu_types, or 0. */
static unsigned int sriov_type_id(const char *vf, const char *name)
{
	char path[256], line[256], t[128];
	unsigned int id, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), PCI_DEVS "/%s/gpuvirt/creatable_vgpu_types", vf);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u : %127s", &id, t) == 2 && !strcmp(t, name))
			found = id;
	fclose(f);
	return found;
}

/* Open the vGPU @name (UUID or PCI address): does it answer as ours? */
static const char *open_is_vgpu(const char *name)
{
	struct vfio_user u;
	uint32_t magic = 0;

	if (vgpu_client_open_name(&u, name))
		return "cannot open it through VFIO";
	if (reg_rd(u.device, GPUVIRT_VGPU_REG_MAGIC, &magic) ||
	    magic != GPUVIRT_VGPU_MAGIC) {
		vfio_close(&u);
		return "its BAR0 has no gpuvirt magic";
	}
	vfio_close(&u);
	return NULL;
}

/*
 * One SR-IOV cycle, untimed, checking each step: no vGPU before, a UUID
 * and the type after typing, a vGPU answering on the VF's VFIO device,
 * no UUID and type 0 after clearing. NULL, or what was wrong.
 */
static const char *sriov_check(const char *vf, const char *id)
{
	char cur[256], uu[256], buf[64];
	const char *why;

	snprintf(cur, sizeof(cur), PCI_DEVS "/%s/gpuvirt/current_vgpu_type", vf);
	snprintf(uu, sizeof(uu), PCI_DEVS "/%s/gpuvirt/vgpu_uuid", vf);
	if (sysfs_read(uu, buf, sizeof(buf)) || buf[0])
		return "the VF has a vGPU before the cycle";
	if (sysfs_write(cur, id))
		return "typing the VF failed";
	if (sysfs_read(uu, buf, sizeof(buf)) || strlen(buf) != 36) {
		sysfs_write(cur, "0");
		return "no vgpu_uuid after typing";
	}
	if (sysfs_read(cur, buf, sizeof(buf)) || strcmp(buf, id)) {
		sysfs_write(cur, "0");
		return "current_vgpu_type is not the id written";
	}
	why = open_is_vgpu(vf);
	if (why) {
		sysfs_write(cur, "0");
		return why;
	}
	if (sysfs_write(cur, "0"))
		return "clearing the VF failed";
	if (sysfs_read(uu, buf, sizeof(buf)) || buf[0])
		return "vgpu_uuid not empty after clearing";
	if (sysfs_read(cur, buf, sizeof(buf)) || strcmp(buf, "0"))
		return "current_vgpu_type not 0 after clearing";
	return NULL;
}

/* The same for an mdev cycle: absent, created, answering, removed. */
static const char *mdev_check(const char *type, const char *id)
{
	char create[256], dir[256], remove[256];
	const char *why;

	snprintf(create, sizeof(create), "%s/create", type);
	snprintf(dir, sizeof(dir), MDEVS "/%s", id);
	snprintf(remove, sizeof(remove), MDEVS "/%s/remove", id);
	if (access(dir, F_OK) == 0)
		return "the mdev exists before the cycle";
	if (sysfs_write(create, id))
		return "creating the mdev failed";
	if (access(dir, F_OK))
		return "no mdev after create";
	why = open_is_vgpu(id);
	if (why) {
		sysfs_write(remove, "1");
		return why;
	}
	if (sysfs_write(remove, "1"))
		return "removing the mdev failed";
	if (access(dir, F_OK) == 0)
		return "the mdev is still there after remove";
	return NULL;
}

/*
 * n cycles of one side again, each step timed on its own (make: write
 * @mk_val to @mk_path; open and close vGPU @name; drop: write @rm_val to
 * @rm_path), summed into t[0..3]. Not part of the ratio: the clock reads
 * between the steps would add the same cost to both sides. 0 or -errno.
 */
static int cycle_steps(const char *mk_path, const char *mk_val,
		       const char *name, const char *rm_path,
		       const char *rm_val, int n, double t[4])
{
	struct vfio_user u;
	double a, b, c, d, e;
	int i, err;

	t[0] = t[1] = t[2] = t[3] = 0;
	for (i = 0; i < n; i++) {
		a = now();
		err = sysfs_write(mk_path, mk_val);
		if (err)
			return err;
		b = now();
		err = vgpu_client_open_name(&u, name);
		c = now();
		vfio_close(&u);
		d = now();
		if (!err)
			err = sysfs_write(rm_path, rm_val);
		else
			sysfs_write(rm_path, rm_val);
		if (err)
			return err;
		e = now();
		t[0] += b - a;
		t[1] += c - b;
		t[2] += d - c;
		t[3] += e - d;
	}
	return 0;
}

/* raw: where each side's cycle time goes, one pass of n after the rounds */
static void sriov_steps(const char *vf, const char *id, const char *type, int n)
{
	char cur[256], create[300], remove[256];
	double st[4], mt[4];
	int err;

	snprintf(cur, sizeof(cur), PCI_DEVS "/%s/gpuvirt/current_vgpu_type", vf);
	snprintf(create, sizeof(create), "%s/create", type);
	snprintf(remove, sizeof(remove), MDEVS "/" SRIOV_LC_UUID "/remove");
	err = cycle_steps(cur, id, vf, cur, "0", n, st);
	if (!err)
		err = cycle_steps(create, SRIOV_LC_UUID, SRIOV_LC_UUID, remove,
				  "1", n, mt);
	if (err) {
		printf("note: vgpu_lifecycle_sriov: step timing failed: %s\n",
		       strerror(-err));
		return;
	}
	printf("raw: lifecycle_sriov steps cycles=%d ms each:"
	       " sriov type=%.3f open=%.3f close=%.3f clear=%.3f;"
	       " mdev create=%.3f open=%.3f close=%.3f remove=%.3f\n",
	       n, st[0] / n * 1e3, st[1] / n * 1e3, st[2] / n * 1e3,
	       st[3] / n * 1e3, mt[0] / n * 1e3, mt[1] / n * 1e3,
	       mt[2] / n * 1e3, mt[3] / n * 1e3);
}

static void bench_lifecycle_sriov(void)
{
	const char *name = "vgpu_lifecycle_sriov";
	const char *vf = getenv("BENCH_SRIOV_VF");
	const char *mg = getenv("BENCH_SRIOV_MDEV_GPU");
	const char *why = getenv("BENCH_SRIOV_WHY");
	double ratio[MAX_ROUNDS], ts = 0, tm = 0;
	char type[256], id[16];
	int r, err = 0, n = lc_cycles;
	unsigned int tid;

	if (why && *why) {
		printf("bench: %s ratio=n/a (%s)\n", name, why);
		failures++;
		return;
	}
	if (!vf || !*vf || !mg || !*mg) {
		printf("bench: %s ratio=n/a (no GPUs set up: BENCH_SRIOV_VF and BENCH_SRIOV_MDEV_GPU come from bench/run-guest.sh)\n",
		       name);
		failures++;
		return;
	}
	snprintf(type, sizeof(type), PCI_DEVS "/%s/mdev_supported_types/gpuvirt_sim-" SRIOV_TYPE,
		 mg);
	tid = sriov_type_id(vf, SRIOV_TYPE);
	if (!tid) {
		printf("bench: %s ratio=n/a (VF %s lists no type " SRIOV_TYPE " in creatable_vgpu_types)\n",
		       name, vf);
		failures++;
		return;
	}
	snprintf(id, sizeof(id), "%u", tid);
	printf("info: %s: VF %s type id %s (" SRIOV_TYPE "), against mdev %s\n",
	       name, vf, id, type);

	/* a checked cycle of each, untimed: each side does what it says */
	why = sriov_check(vf, id);
	if (why) {
		printf("bench: %s ratio=n/a (SR-IOV cycle on %s: %s)\n", name, vf, why);
		failures++;
		return;
	}
	why = mdev_check(type, SRIOV_LC_UUID);
	if (why) {
		printf("bench: %s ratio=n/a (mdev cycle on %s: %s)\n", name, mg, why);
		failures++;
		return;
	}

	for (r = 0; r < rounds; r++) {
		bool mdev_first = r & 1;

		tm = ts = 0;
		if (mdev_first)
			tm = lifecycle(type, SRIOV_LC_UUID, n, &err);
		if (tm >= 0)
			ts = sriov_cycles(vf, id, n, &err);
		if (tm >= 0 && ts >= 0 && !mdev_first)
			tm = lifecycle(type, SRIOV_LC_UUID, n, &err);
		if (tm < 0 || ts < 0) {
			printf("bench: %s ratio=n/a (%s cycle failed in round %d: %s)\n",
			       name, tm < 0 ? "mdev" : "SR-IOV", r, strerror(-err));
			failures++;
			return;
		}
		ratio[r] = ts / tm;
		printf("raw: lifecycle_sriov round=%d cycles=%d sriov=%.2f ms mdev=%.2f ms\n",
		       r, n, ts / n * 1e3, tm / n * 1e3);
	}

	/* and the same checks after the timed rounds */
	why = sriov_check(vf, id);
	if (!why)
		why = mdev_check(type, SRIOV_LC_UUID);
	if (why) {
		printf("bench: %s ratio=n/a (after the rounds: %s)\n", name, why);
		failures++;
		return;
	}
	report(name, ratio, rounds,
	       "[SR-IOV cycle time / mdev cycle time: " SRIOV_TYPE
	       " VF type+open+close+clear / mdev create+open+close+remove]");
	sriov_steps(vf, id, type, n);
}

/*
 * f. Display flips with and without the frame rate limiter. A "guest"
 * flips head 0 between two bases and waits for each flip to take effect
 * (HEAD_FLIPS), as a compositor waits for its page flip; with the limiter
 * on a flip waits for the next vblank, off it shows at once. Both runs of
 * a round are timed back to back, in alternating order. Ratio = flips per
 * second off / on; the vblank rate, which the limiter does not change, is
 * reported alongside as a control (vblanks per second off / on, ~1).
 */
static int flip_n = 30;

static int flip_run(int fd, const char *frl_path, bool limiter, double *flips_s,
		    double *vblanks_s)
{
	unsigned int h = GPUVIRT_VGPU_REG_HEAD(0);
	uint32_t f0, f, v0, v1;
	double t0, t;
	int i, spin;

	if (sysfs_write(frl_path, limiter ? "1" : "0"))
		return -1;
	if (reg_rd(fd, h + GPUVIRT_VGPU_HEAD_FLIPS, &f0) ||
	    reg_rd(fd, h + GPUVIRT_VGPU_HEAD_VBLANK, &v0))
		return -1;
	t0 = now();
	for (i = 0; i < flip_n; i++) {
		if (reg_wr(fd, h + GPUVIRT_VGPU_HEAD_BASE_LO, (i & 1) << 22) ||
		    reg_wr(fd, h + GPUVIRT_VGPU_HEAD_CONTROL, 1))
			return -1;
		for (spin = 0;; spin++) {
			if (reg_rd(fd, h + GPUVIRT_VGPU_HEAD_FLIPS, &f))
				return -1;
			if (f == f0 + i + 1)
				break;
			if (spin > 1000000)
				return -1;	/* the flip never showed */
			usleep(200);
		}
	}
	t = now() - t0;
	*flips_s = flip_n / t;
	/* vblanks over at least half a second, so that a fast run counts some */
	while (now() - t0 < 0.5)
		usleep(10000);
	t = now() - t0;
	if (reg_rd(fd, h + GPUVIRT_VGPU_HEAD_VBLANK, &v1))
		return -1;
	*vblanks_s = (v1 - v0) / t;
	return 0;
}

static void bench_flip(int fd)
{
	double ratio[MAX_ROUNDS], vratio[MAX_ROUNDS], on_f, on_v, off_f, off_v;
	unsigned int h = GPUVIRT_VGPU_REG_HEAD(0);
	char path[256];
	int r, n = 0;

	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/gpuvirt/frame_rate_limiter",
		 uuid);
	if (reg_wr(fd, h + GPUVIRT_VGPU_HEAD_WIDTH, 1024) ||
	    reg_wr(fd, h + GPUVIRT_VGPU_HEAD_HEIGHT, 768) ||
	    reg_wr(fd, h + GPUVIRT_VGPU_HEAD_STRIDE, 4096) ||
	    reg_wr(fd, h + GPUVIRT_VGPU_HEAD_FORMAT, GPUVIRT_VGPU_FMT_XRGB8888) ||
	    reg_wr(fd, h + GPUVIRT_VGPU_HEAD_CONTROL, 1)) {
		printf("bench: flip ratio=n/a (cannot set a mode)\n");
		failures++;
		return;
	}
	for (r = 0; r < rounds; r++) {
		bool on_first = !(r & 1);
		int err;

		err = flip_run(fd, path, on_first, on_first ? &on_f : &off_f,
			       on_first ? &on_v : &off_v) ?:
		      flip_run(fd, path, !on_first, on_first ? &off_f : &on_f,
			       on_first ? &off_v : &on_v);
		if (err) {
			printf("bench: flip ratio=n/a (round %d failed)\n", r);
			failures++;
			break;
		}
		printf("raw: flip round=%d on=%.1f flips/s off=%.1f flips/s vblank on=%.1f/s off=%.1f/s\n",
		       r, on_f, off_f, on_v, off_v);
		ratio[n] = off_f / on_f;
		vratio[n] = on_v > 0 ? off_v / on_v : 0;
		n++;
	}
	sysfs_write(path, "1");
	reg_wr(fd, h + GPUVIRT_VGPU_HEAD_CONTROL, 0);
	report("flip_limiter_off_vs_on", ratio, n,
	       "[flips/s with the frame rate limiter off / on; on is capped at frl_config]");
	report("vblank_limiter_off_vs_on", vratio, n,
	       "[vblanks/s off / on: the limiter does not change the refresh, ~1]");
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --uuid UUID [-r ROUNDS] [-s STEADY_MIB] [-t TOUCH_MIB]\n"
		"          [-k IRQ_BATCH] [-d DOORBELL_BATCH] [-n LIFECYCLE_CYCLES]\n"
		"          [--label NAME]\n"
		"          [--only bar2,irq,doorbell,lifecycle,sriov,flip]\n"
		"       %s --cycles gpuvirt|mtty [-r ROUNDS] [-n CYCLES]\n",
		argv0, argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uuid", required_argument, NULL, 'u' },
		{ "only", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, 'l' },
		{ "cycles", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = "bar2,irq,doorbell,lifecycle,sriov,flip";
	struct vfio_user u;
	uint32_t magic = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "u:r:s:t:k:d:n:o:l:", opts, NULL)) != -1) {
		switch (c) {
		case 'u': uuid = optarg; break;
		case 'r': rounds = atoi(optarg); break;
		case 's': steady_mib = strtoul(optarg, NULL, 0); break;
		case 't': touch_mib = strtoul(optarg, NULL, 0); break;
		case 'k': irq_batch = atoi(optarg); break;
		case 'd': db_batch = atoi(optarg); break;
		case 'n': lc_cycles = atoi(optarg); break;
		case 'o': only = optarg; break;
		case 'l': label = optarg; break;
		case 'c': cycles_only = optarg; break;
		default: usage(argv[0]);
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || !steady_mib || !touch_mib ||
	    irq_batch < 1 || db_batch < 1 || lc_cycles < 1)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cycles_only)
		return lifecycle_cycles_only(cycles_only);

	if (strstr(only, "bar2") || strstr(only, "irq") ||
	    strstr(only, "doorbell") || strstr(only, "flip")) {
		if (!uuid)
			usage(argv[0]);
		err = vfio_open(&u, uuid);
		if (err || reg_rd(u.device, GPUVIRT_VGPU_REG_MAGIC, &magic) ||
		    magic != GPUVIRT_VGPU_MAGIC) {
			printf("bench: vgpu ratio=n/a (cannot open vGPU %s: %s, magic %#x)\n",
			       uuid, strerror(-err), magic);
			return 1;
		}
		printf("info: rounds=%d steady=%zu MiB touch=%zu MiB irq_batch=%d doorbell_batch=%d lifecycle_cycles=%d\n",
		       rounds, steady_mib, touch_mib, irq_batch, db_batch,
		       lc_cycles);
		if (strstr(only, "bar2"))
			bench_bar2(u.device);
		if (strstr(only, "irq"))
			bench_irq(u.device);
		if (strstr(only, "doorbell"))
			bench_doorbell(u.device);
		if (strstr(only, "flip"))
			bench_flip(u.device);
		vfio_close(&u);
	}
	if (strstr(only, "lifecycle"))
		bench_lifecycle();
	if (strstr(only, "sriov"))
		bench_lifecycle_sriov();
	return failures ? 1 : 0;
}
