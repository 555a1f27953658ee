// SPDX-License-Identifier: GPL-2.0-only
/*
 * vgpu_load: keep one vGPU's engine queue busy with COMPUTE packets, the way
 * a guest with a long GPU job does, and check every result. One process per
 * vGPU; the scheduler tests (gpuvirt_sched), the scheduler benchmark
 * (bench/sched) and the demo run several of them side by side.
 *
 * Usage: vgpu_load UUID|VF [--seconds S] [--compute-us N] [--burst-ms ON:OFF]
 *                  [--depth-us N] [--fence-every N] [--phase-ms N]
 *                  [--report FILE] [--trace FILE] [--ready FILE] [--quiet]
 *                  [--idle]
 *
 *   --seconds S       submit work for S seconds (default 10); 0 means until
 *                     SIGTERM or SIGINT. Either way the queued work is then
 *                     left to drain and checked before the report.
 *   --compute-us N    modelled cost of each COMPUTE packet in us (default
 *                     2000, at most GPUVIRT_VGPU_COMPUTE_MAX_US). Large
 *                     packets keep the client's own CPU cost low.
 *   --burst-ms ON:OFF submit for ON ms, then nothing for OFF ms, and again;
 *                     default: submit all the time
 *   --phase-ms N      in burst mode, start N ms into the first period
 *                     (default: derived from the UUID, so that vGPUs run
 *                     with different phases but the same in every run)
 *   --depth-us N      modelled work kept queued while submitting (default
 *                     30000, at least one packet): the queue never runs dry
 *                     unless the client gets no CPU for depth/share
 *   --fence-every N   a FENCE with IRQ after every N COMPUTE packets
 *                     (default: a quarter of the depth), and one at the end
 *                     of every batch, so the client wakes on progress
 *   --report FILE     also write the result line as "key=value" pairs
 *   --trace FILE      write one line "START END" per interval during which
 *                     the vGPU had work queued, in ns of CLOCK_REALTIME (the
 *                     clock a shell reads without forking: bash's
 *                     $EPOCHREALTIME), from just before the doorbell that
 *                     gave the empty queue work to when the client saw it
 *                     empty again
 *   --ready FILE      create FILE after the first doorbell
 *   --quiet           no result line on stdout
 *   --idle            open the vGPU and set up its ring, but submit nothing:
 *                     a VM that is running with its GPU idle (it counts
 *                     for Equal Share)
 *
 * The ring is 64 KiB at slice offset 0; COMPUTE results go to their own
 * 8-byte slot, seeded with the packet's sequence number, and are checked
 * against the formula of Documentation/vgpu/vgpu-abi.rst once the device
 * reports the packet done (the DONE counter). At the end, DONE must equal
 * the packets submitted, RING_HEAD the tail, and FENCE the last fence.
 *
 * Exit status: 0 when every result was right, 1 on a wrong result, a
 * device error, a lost packet or a drain that never ended, 2 on usage
 * errors or when the vGPU cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/vfio.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/gpuvirt_vgpu.h>

#include "vgpu_client.h"

#define MAP_LEN		(1u << 20)	/* the part of the slice we use */
#define RING_SIZE	0x10000u	/* 64 KiB at slice offset 0 */
#define FENCE_ADDR	0x10000u	/* FENCE write-back */
#define RES_ADDR	0x20000u	/* COMPUTE result slots, 8 bytes each */
#define NSLOT		4096u		/* > packets the ring can hold */
#define NQ		8192u		/* in-flight packets tracked */
#define COMPUTE_DW	5
#define FENCE_DW	4
#define DRAIN_S		60		/* longest wait for the queue to drain */
#define NS		1000000000LL

/* One packet the device has not completed yet, in ring order. */
struct inflight {
	uint32_t seq;		/* COMPUTE: seed and slot; FENCE: its number */
	uint32_t cost_us;	/* COMPUTE only */
	uint32_t end;		/* ring offset just past it */
	bool fence;
};

struct opts {
	const char *uuid;
	unsigned int seconds;
	uint32_t compute_us;
	unsigned int on_ms, off_ms, phase_ms;
	bool phase_set;
	uint64_t depth_us;
	unsigned int fence_every;
	const char *report, *trace, *ready;
	bool quiet, idle;
};

struct load {
	int dev, efd;
	uint8_t *vram;
	uint32_t tail;			/* ring offset of the next packet */
	uint32_t head;			/* ring offset of the oldest in flight */
	struct inflight q[NQ];
	unsigned int qhead, qlen;	/* q[qhead] is the oldest */
	uint32_t done_seen;		/* DONE_LO when we last retired */
	uint64_t queued_us;		/* modelled COMPUTE work in flight */
	uint32_t next_seq;
	uint32_t last_fence;		/* last fence submitted */
	unsigned int since_fence;	/* COMPUTEs since the last fence */
	/* results */
	uint64_t packets, computes, fences, work_us;
	uint64_t wrong, irqs, starved, batches;
	uint32_t error;			/* first device error code seen */
	const char *fail;		/* first failure, for the report */
	/* has-work intervals */
	FILE *trace;
	int64_t busy_since;		/* -1 while the queue is empty */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vgpu_load UUID [--seconds S] [--compute-us N] [--burst-ms ON:OFF]\n"
		"                 [--depth-us N] [--fence-every N] [--phase-ms N]\n"
		"                 [--report FILE] [--trace FILE] [--ready FILE] [--quiet]\n"
		"                 [--idle]\n");
	exit(2);
}

static void fail(struct load *l, const char *why)
{
	if (!l->fail)
		l->fail = why;
}

static int rd(struct load *l, unsigned int reg, uint32_t *v)
{
	if (pread(l->dev, v, 4, VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) != 4)
		return -1;
	return 0;
}

static int wr(struct load *l, unsigned int reg, uint32_t v)
{
	if (pwrite(l->dev, &v, 4, VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) != 4)
		return -1;
	return 0;
}

static uint64_t compute_ref(uint32_t seed, uint32_t rounds)
{
	uint64_t x = seed;

	while (rounds--)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	return x;
}

static uint64_t *slot(struct load *l, uint32_t seq)
{
	return (uint64_t *)(l->vram + RES_ADDR + 8 * (seq % NSLOT));
}

/* Bytes of the ring the device still owns. */
static uint32_t ring_used(struct load *l)
{
	return (l->tail - l->head) & (RING_SIZE - 1);
}

static void put(struct load *l, const uint32_t *dw, unsigned int n)
{
	uint32_t *ring = (uint32_t *)l->vram;
	unsigned int i;

	for (i = 0; i < n; i++) {
		ring[l->tail / 4] = dw[i];
		l->tail = (l->tail + 4) & (RING_SIZE - 1);
	}
}

static void track(struct load *l, uint32_t seq, uint32_t cost, bool fence)
{
	struct inflight *e = &l->q[(l->qhead + l->qlen) % NQ];

	e->seq = seq;
	e->cost_us = cost;
	e->end = l->tail;
	e->fence = fence;
	l->qlen++;
}

/* Room for one more packet of @dw dwords, plus a closing fence. */
static bool room(struct load *l, unsigned int dw)
{
	return l->qlen + 2 < NQ &&
	       ring_used(l) + 4 * (dw + FENCE_DW) < RING_SIZE - 4;
}

static void put_fence(struct load *l)
{
	uint32_t p[FENCE_DW] = {
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, FENCE_DW,
				 GPUVIRT_VGPU_PKT_FLAG_IRQ),
		++l->last_fence, FENCE_ADDR, 0,
	};

	put(l, p, FENCE_DW);
	track(l, l->last_fence, 0, true);
	l->since_fence = 0;
}

/* Top the queue up to the depth; returns the packets added. */
static unsigned int fill(struct load *l, const struct opts *o)
{
	unsigned int added = 0;

	while (l->queued_us < o->depth_us && room(l, COMPUTE_DW)) {
		uint32_t seq = l->next_seq++;
		uint32_t p[COMPUTE_DW] = {
			GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, COMPUTE_DW, 0),
			o->compute_us, RES_ADDR + 8 * (seq % NSLOT), 0, seq,
		};

		/* a value the right answer cannot be, in practice */
		*slot(l, seq) = ~compute_ref(seq, o->compute_us);
		put(l, p, COMPUTE_DW);
		track(l, seq, o->compute_us, false);
		l->queued_us += o->compute_us;
		added++;
		if (++l->since_fence >= o->fence_every) {
			put_fence(l);
			added++;
		}
	}
	/* every batch ends with a fence, so that its end wakes us up */
	if (added && l->since_fence) {
		put_fence(l);
		added++;
	}
	return added;
}

static void trace_busy(struct load *l, bool busy)
{
	struct timespec ts;
	int64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (int64_t)ts.tv_sec * NS + ts.tv_nsec;

	if (busy && l->busy_since < 0) {
		l->busy_since = t;
	} else if (!busy && l->busy_since >= 0) {
		if (l->trace)
			fprintf(l->trace, "%lld %lld\n", (long long)l->busy_since,
				(long long)t);
		l->busy_since = -1;
	}
}

static int doorbell(struct load *l)
{
	__sync_synchronize();	/* ring stores before the doorbell */
	return wr(l, GPUVIRT_VGPU_REG_RING_TAIL, l->tail);
}

/* Retire what the device has completed and check it; 0 or -1 on a failure. */
static int retire(struct load *l)
{
	uint32_t done, n, st, err;

	if (rd(l, GPUVIRT_VGPU_REG_IRQ_STATUS, &st) ||
	    (st && wr(l, GPUVIRT_VGPU_REG_IRQ_STATUS, st)) ||
	    rd(l, GPUVIRT_VGPU_REG_ERROR, &err) ||
	    rd(l, GPUVIRT_VGPU_REG_DONE_LO, &done)) {
		fail(l, "BAR0 access failed");
		return -1;
	}
	if (err) {
		l->error = err;
		fail(l, "the device stopped the ring with an error");
		return -1;
	}
	n = done - l->done_seen;
	if (n > l->qlen) {
		fail(l, "DONE counts more packets than were submitted");
		return -1;
	}
	l->done_seen = done;
	while (n--) {
		struct inflight *e = &l->q[l->qhead];

		if (e->fence) {
			l->fences++;
		} else {
			if (*slot(l, e->seq) != compute_ref(e->seq, e->cost_us)) {
				l->wrong++;
				fail(l, "wrong COMPUTE result");
			}
			l->computes++;
			l->work_us += e->cost_us;
			l->queued_us -= e->cost_us;
		}
		l->packets++;
		l->head = e->end;
		l->qhead = (l->qhead + 1) % NQ;
		l->qlen--;
	}
	if (!l->qlen)
		trace_busy(l, false);
	return l->wrong ? -1 : 0;
}

/* Whether burst mode is in its ON part at time @t, and when that changes. */
static bool burst_on(const struct opts *o, int64_t t0, int64_t t, int64_t *edge)
{
	int64_t period = (int64_t)(o->on_ms + o->off_ms) * 1000000;
	int64_t on = (int64_t)o->on_ms * 1000000;
	int64_t pos = (t - t0 + (int64_t)o->phase_ms * 1000000) % period;

	if (!o->off_ms) {
		*edge = INT64_MAX;
		return true;
	}
	*edge = t + (pos < on ? on - pos : period - pos);
	return pos < on;
}

static void wait_irq(struct load *l, int ms)
{
	struct pollfd p = { .fd = l->efd, .events = POLLIN };
	uint64_t cnt;

	if (ms < 0)
		ms = 0;
	if (poll(&p, 1, ms) == 1 && read(l->efd, &cnt, sizeof(cnt)) == sizeof(cnt))
		l->irqs += cnt;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "compute-us", required_argument, NULL, 'c' },
		{ "burst-ms", required_argument, NULL, 'b' },
		{ "phase-ms", required_argument, NULL, 'p' },
		{ "depth-us", required_argument, NULL, 'd' },
		{ "fence-every", required_argument, NULL, 'f' },
		{ "report", required_argument, NULL, 'r' },
		{ "trace", required_argument, NULL, 't' },
		{ "ready", required_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "idle", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned long long v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->seconds = 10;
	o->compute_us = 2000;
	o->on_ms = 1;
	o->depth_us = 30000;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'h' || c == '?')
			usage();
		if (c == 'r' || c == 't' || c == 'R' || c == 'q' || c == 'i') {
			if (c == 'i')
				o->idle = true;
			else if (c == 'r')
				o->report = optarg;
			else if (c == 't')
				o->trace = optarg;
			else if (c == 'R')
				o->ready = optarg;
			else
				o->quiet = true;
			continue;
		}
		errno = 0;
		v = strtoull(optarg, &end, 10);
		if (errno || end == optarg || (*end && !(c == 'b' && *end == ':')) ||
		    v > 100000000)
			usage();
		switch (c) {
		case 's':
			o->seconds = v;
			break;
		case 'c':
			if (!v || v > GPUVIRT_VGPU_COMPUTE_MAX_US)
				usage();
			o->compute_us = v;
			break;
		case 'b':
			o->on_ms = v;
			if (*end != ':')
				usage();
			o->off_ms = strtoul(end + 1, &end, 10);
			if (*end || !o->on_ms)
				usage();
			break;
		case 'p':
			o->phase_ms = v;
			o->phase_set = true;
			break;
		case 'd':
			o->depth_us = v;
			break;
		case 'f':
			if (!v)
				usage();
			o->fence_every = v;
			break;
		}
	}
	if (optind != argc - 1)
		usage();
	o->uuid = argv[optind];
	if (o->depth_us < o->compute_us)
		o->depth_us = o->compute_us;
	if (!o->fence_every) {
		o->fence_every = o->depth_us / 4 / o->compute_us;
		if (!o->fence_every)
			o->fence_every = 1;
	}
	if (o->off_ms && !o->phase_set) {
		uint32_t h = 2166136261u;	/* FNV-1a of the UUID */
		const char *s;

		for (s = o->uuid; *s; s++)
			h = (h ^ (uint8_t)*s) * 16777619u;
		o->phase_ms = h % (o->on_ms + o->off_ms);
	}
}

static int open_vgpu(struct load *l, const struct opts *o, struct vfio_user *u)
{
	uint32_t magic = 0, caps = 0;
	uint16_t msi_on = 1;
	int err;

	err = vgpu_client_open_name(u, o->uuid);
	if (err) {
		fprintf(stderr, "vgpu_load: open %s: %s\n", o->uuid, strerror(-err));
		return -1;
	}
	l->dev = u->device;
	if (rd(l, GPUVIRT_VGPU_REG_MAGIC, &magic) || magic != GPUVIRT_VGPU_MAGIC ||
	    rd(l, GPUVIRT_VGPU_REG_CAPS, &caps) || !(caps & GPUVIRT_VGPU_CAP_RING)) {
		fprintf(stderr, "vgpu_load: %s is not a gpuvirt vGPU with a ring\n",
			o->uuid);
		return -1;
	}
	l->vram = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, l->dev,
		       VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (l->vram == MAP_FAILED) {
		perror("vgpu_load: map BAR2");
		return -1;
	}
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0 ||
	    vgpu_client_set_irq(l->dev, VFIO_PCI_MSI_IRQ_INDEX, l->efd) ||
	    pwrite(l->dev, &msi_on, 2, VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX) +
		   0x42) != 2) {
		perror("vgpu_load: set up MSI");
		return -1;
	}
	/* the open reset the device: the ring is off and idle */
	if (wr(l, GPUVIRT_VGPU_REG_RING_BASE_LO, 0) ||
	    wr(l, GPUVIRT_VGPU_REG_RING_BASE_HI, 0) ||
	    wr(l, GPUVIRT_VGPU_REG_RING_SIZE, RING_SIZE)) {
		perror("vgpu_load: set up the ring");
		return -1;
	}
	return 0;
}

/* The checks at the end: nothing lost, nothing left. */
static void final_checks(struct load *l)
{
	uint32_t done, head, fence;

	if (l->qlen) {
		fail(l, "the queue did not drain");
		return;
	}
	if (rd(l, GPUVIRT_VGPU_REG_DONE_LO, &done) ||
	    rd(l, GPUVIRT_VGPU_REG_RING_HEAD, &head) ||
	    rd(l, GPUVIRT_VGPU_REG_FENCE, &fence)) {
		fail(l, "BAR0 access failed");
		return;
	}
	if (done != (uint32_t)l->packets)
		fail(l, "DONE differs from the packets submitted");
	if (head != l->tail)
		fail(l, "RING_HEAD differs from the tail");
	if (fence != l->last_fence ||
	    (l->last_fence && *(uint32_t *)(l->vram + FENCE_ADDR) != l->last_fence))
		fail(l, "the last FENCE was not written");
}

static void report(struct load *l, const struct opts *o)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "uuid=%s packets=%llu computes=%llu fences=%llu work_us=%llu "
		 "wrong=%llu error=%u starved=%llu irqs=%llu batches=%llu result=%s",
		 o->uuid, (unsigned long long)l->packets,
		 (unsigned long long)l->computes, (unsigned long long)l->fences,
		 (unsigned long long)l->work_us, (unsigned long long)l->wrong,
		 l->error, (unsigned long long)l->starved,
		 (unsigned long long)l->irqs, (unsigned long long)l->batches,
		 l->fail ? "FAIL" : "ok");
	if (!o->quiet)
		printf("vgpu_load: %s\n", line);
	if (l->fail)
		fprintf(stderr, "vgpu_load: %s: %s\n", o->uuid, l->fail);
	if (o->report) {
		FILE *f = fopen(o->report, "w");

		if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f)) {
			perror("vgpu_load: write the report");
			fail(l, "could not write the report");
		}
	}
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static struct load l = { .dev = -1, .efd = -1, .busy_since = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct vfio_user u;
	struct opts o;
	int64_t t0, t, end, edge, drain_end;
	bool was_on = true;

	parse(argc, argv, &o);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (o.trace) {
		l.trace = fopen(o.trace, "w");
		if (!l.trace) {
			perror("vgpu_load: open the trace file");
			return 2;
		}
	}
	if (open_vgpu(&l, &o, &u))
		return 2;

	t0 = now_ns();
	end = o.seconds ? t0 + (int64_t)o.seconds * NS : INT64_MAX;
	if (o.idle && o.ready)
		touch(o.ready);
	while (o.idle && !stop && (t = now_ns()) < end) {
		t = (end - t) / 1000000 + 1;
		wait_irq(&l, t < 100 ? (int)t : 100);
	}
	while (!o.idle && !stop && (t = now_ns()) < end) {
		if (retire(&l))
			break;
		bool on = burst_on(&o, t0, t, &edge);

		if (on) {
			bool was_empty = !l.qlen;

			/* an empty queue in the middle of an ON part: we were late */
			if (was_empty && was_on && l.batches)
				l.starved++;
			if (fill(&l, &o)) {
				if (was_empty)
					trace_busy(&l, true);
				if (doorbell(&l)) {
					fail(&l, "doorbell failed");
					break;
				}
				if (!l.batches++ && o.ready)
					touch(o.ready);
			}
		}
		was_on = on;
		if (edge > end)
			edge = end;
		/* sleep until progress, the next burst edge, or 100 ms */
		t = (edge - now_ns()) / 1000000 + 1;
		wait_irq(&l, t < 100 ? (int)t : 100);
	}

	/* Drain: everything submitted must complete, and right. */
	drain_end = now_ns() + (int64_t)DRAIN_S * NS;
	while (!l.fail && l.qlen && now_ns() < drain_end) {
		if (retire(&l))
			break;
		if (l.qlen)
			wait_irq(&l, 100);
	}
	if (!l.fail)
		final_checks(&l);
	trace_busy(&l, false);
	if (l.trace && fclose(l.trace))
		fail(&l, "could not write the trace");
	report(&l, &o);
	munmap(l.vram, MAP_LEN);
	close(l.efd);
	vgpu_client_close(&u);
	return l.fail ? 1 : 0;
}
