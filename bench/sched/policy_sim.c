// SPDX-License-Identifier: GPL-2.0-only
/*
 * policy_sim: the scheduling policy (kernel/core/sched_policy.c) driven in
 * virtual time by a model of the engine, on the host. It measures what the
 * policy itself promises, with no timer slop and no clients in the way, and
 * what one decision costs in host CPU.
 *
 * The engine model is the loop of kernel/core/engine.c: pick; run the slot
 * picked, command by command, each command cut into chunks of at most
 * 100 us, until the slot's slice is used up or its queue is empty, so a
 * turn ends only at a chunk boundary and may overrun its slice by less than
 * a chunk; charge the time it really ran; when the policy says idle, stay
 * idle for that long or until new work arrives. Work arrives as commands of
 * random length (a seeded xorshift, so every run prints the same numbers),
 * and arrivals are seen at chunk boundaries, as the engine sees a doorbell
 * between steps.
 *
 * Output: one line per measure,
 *	row<TAB>measure<TAB>run in<TAB>value<TAB>goal<TAB>met
 * with met "yes" or "no"; rows that only inform (the CPU cost) have goal
 * "info" and met "info". Lines starting "note:" explain. Rows:
 *  - share error with 8 busy vGPUs, for equal-share, best-effort and
 *    weighted with equal weights: eight vGPUs always busy with commands of
 *    20 us to 1 ms for -t seconds (10); share_i = run time of i / elapsed
 *    time; the value is max_i |share_i - 1/8| in percentage points.
 *    Goal: at most 0.5 pp.
 *  - work conservation under best-effort: eight vGPUs, each getting bursts
 *    of 1 to 8 commands of 50 us to 1 ms at random intervals (0 to 50 ms),
 *    about 9.5 % each and 76 % offered in all, so that queues come and go
 *    and the GPU has both busy and idle stretches; the value is engine busy
 *    time / time during which some vGPU had work, in %. Goal: at least 99 %.
 *  - isolation under fixed-share: a victim vGPU (a type of max_instances 8)
 *    always busy with commands of 50 to 500 us, alone and then with 7 noisy
 *    neighbours of the same type always busy with commands of 1 to 10 ms;
 *    the value is the victim's work done with them / alone. Goal: at least
 *    0.99.
 *  - idle time kept idle under equal-share: one busy vGPU of eight open;
 *    its share, which equal-share holds at 1/8. Goal: 12.5 % +- 0.5 pp.
 *  - CPU cost of one pick + charge, 8 and 32 busy vGPUs, weighted:
 *    clock_gettime(CLOCK_MONOTONIC) around -n (2000000) decisions; info.
 *
 * With -g FILE it also draws, as an SVG, each vGPU's share of the engine
 * over time under every policy: a type of max_instances 4, three vGPUs
 * always busy with commands of 20 us to 1 ms, and a noisy neighbour, busy
 * with commands of 1 to 10 ms, that opens its device a quarter of the way
 * through and closes it three quarters of the way through, so that it is
 * there for the middle half of the run. A share is run time / elapsed
 * time over each 100 ms of the 8 s of virtual time. The mean share of
 * each vGPU in each of the three phases goes to "note: timeline" lines.
 *
 * Usage: policy_sim [-t SECONDS] [-n DECISIONS] [-s SEED] [-g SVG_FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/sched_policy.h"

#define NS_PER_US	1000ULL
#define NS_PER_MS	1000000ULL
#define NS_PER_SEC	1000000000ULL
#define CHUNK_NS	(100 * NS_PER_US)
#define QUEUE_MAX	4096
#define NONE		U64_MAX

static u64 rng_state = 88172645463325252ULL;

static u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Uniform in [lo, hi]. */
static u64 rng_range(u64 lo, u64 hi)
{
	return lo + rng() % (hi - lo + 1);
}

/*
 * What a vGPU is given to do. BUSY: its queue never runs dry; each new
 * command is @cmd_min..@cmd_max ns. BURSTY: every @gap_min..@gap_max ns a
 * burst of @burst_min..@burst_max such commands arrives. IDLE: nothing.
 */
enum load_kind { LOAD_IDLE, LOAD_BUSY, LOAD_BURSTY };

struct load {
	enum load_kind kind;
	u64 cmd_min, cmd_max;
	u64 gap_min, gap_max;
	unsigned int burst_min, burst_max;
};

struct vgpu {
	struct load load;
	u64 queue[QUEUE_MAX];	/* remaining ns of each queued command */
	unsigned int head, count;
	u64 next_arrival;
	u64 done_ns;		/* command time executed */
	u64 run_ns;		/* engine time charged */
};

struct engine {
	struct gpuvirt_sp sp;
	struct vgpu v[GPUVIRT_SP_SLOTS];
	int n;
	u64 now;
	u64 busy_ns;
	u64 idle_with_work_ns;
	u64 idle_no_work_ns;
	u64 overrun_ns;		/* sum over turns of what ran past the slice */
	u64 turns;
};

static void vgpu_push(struct vgpu *v, u64 ns)
{
	if (v->count == QUEUE_MAX)
		return;		/* the ring is full: the guest waits */
	v->queue[(v->head + v->count) % QUEUE_MAX] = ns;
	v->count++;
}

static bool vgpu_has_work(const struct vgpu *v)
{
	return v->load.kind == LOAD_BUSY || v->count;
}

static void engine_init(struct engine *e, u32 policy, int n, u32 max_inst)
{
	int i;

	memset(e, 0, sizeof(*e));
	gpuvirt_sp_init(&e->sp, 0);
	gpuvirt_sp_set_policy(&e->sp, policy, 0);
	e->n = n;
	for (i = 0; i < n; i++) {
		gpuvirt_sp_add(&e->sp, max_inst, 0);
		gpuvirt_sp_set_open(&e->sp, i, true, 0);
		e->v[i].next_arrival = NONE;
	}
}

static void engine_load(struct engine *e, int i, const struct load *l)
{
	struct vgpu *v = &e->v[i];

	v->load = *l;
	if (l->kind == LOAD_BURSTY)
		v->next_arrival = e->now + rng_range(0, l->gap_max);
	if (l->kind == LOAD_BUSY)
		gpuvirt_sp_set_runnable(&e->sp, i, true, e->now);
}

/* New commands due by now; tell the policy about queues that filled. */
static void engine_arrivals(struct engine *e)
{
	unsigned int k, burst;
	struct vgpu *v;
	int i;

	for (i = 0; i < e->n; i++) {
		v = &e->v[i];
		while (v->load.kind == LOAD_BURSTY && v->next_arrival <= e->now) {
			burst = rng_range(v->load.burst_min, v->load.burst_max);
			for (k = 0; k < burst; k++)
				vgpu_push(v, rng_range(v->load.cmd_min,
						       v->load.cmd_max));
			v->next_arrival += rng_range(v->load.gap_min,
						     v->load.gap_max);
		}
		if (vgpu_has_work(v) && !e->sp.slot[i].runnable)
			gpuvirt_sp_set_runnable(&e->sp, i, true, e->now);
	}
}

static u64 engine_next_arrival(const struct engine *e)
{
	u64 t = NONE;
	int i;

	for (i = 0; i < e->n; i++)
		if (e->v[i].next_arrival < t)
			t = e->v[i].next_arrival;
	return t;
}

static bool engine_any_work(const struct engine *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (vgpu_has_work(&e->v[i]))
			return true;
	return false;
}

/* One chunk of the vGPU's current command; returns its length. */
static u64 engine_chunk(struct vgpu *v)
{
	u64 *cmd, c;

	if (v->load.kind == LOAD_BUSY && !v->count)
		vgpu_push(v, rng_range(v->load.cmd_min, v->load.cmd_max));
	cmd = &v->queue[v->head];
	c = *cmd < CHUNK_NS ? *cmd : CHUNK_NS;
	*cmd -= c;
	if (!*cmd) {
		v->head = (v->head + 1) % QUEUE_MAX;
		v->count--;
	}
	v->done_ns += c;
	return c;
}

/* A turn: chunks until the slice is used or the queue is empty. */
static void engine_turn(struct engine *e, int i, u64 slice)
{
	struct vgpu *v = &e->v[i];
	u64 used = 0, c;

	while (used < slice && vgpu_has_work(v)) {
		c = engine_chunk(v);
		used += c;
		e->now += c;
		engine_arrivals(e);
	}
	if (used > slice)
		e->overrun_ns += used - slice;
	e->turns++;
	e->busy_ns += used;
	v->run_ns += used;
	gpuvirt_sp_charge(&e->sp, i, used, e->now);
	if (!vgpu_has_work(v))
		gpuvirt_sp_set_runnable(&e->sp, i, false, e->now);
}

static void engine_run(struct engine *e, u64 until)
{
	struct gpuvirt_sp_pick p;
	u64 end, d;

	while (e->now < until) {
		engine_arrivals(e);
		gpuvirt_sp_pick(&e->sp, e->now, &p);
		if (p.slot >= 0) {
			engine_turn(e, p.slot, p.ns);
			continue;
		}
		end = engine_next_arrival(e);
		if (end > until)
			end = until;
		d = p.ns < end - e->now ? p.ns : end - e->now;
		if (engine_any_work(e))
			e->idle_with_work_ns += d;
		else
			e->idle_no_work_ns += d;
		e->now += d;
	}
}

static void print_row(const char *measure, const char *where,
		      const char *value, const char *goal, const char *met)
{
	printf("row\t%s\t%s\t%s\t%s\t%s\n", measure, where, value, goal, met);
}

static const char *yes(bool met)
{
	return met ? "yes" : "no";
}

static char run_in[128];

static void measure_share_error(u32 policy, const char *name, u64 T)
{
	static const struct load busy = {
		.kind = LOAD_BUSY,
		.cmd_min = 20 * NS_PER_US,
		.cmd_max = NS_PER_MS,
	};
	static struct engine e;
	char measure[128], value[64];
	double err = 0, share;
	int i;

	engine_init(&e, policy, 8, 8);
	for (i = 0; i < 8; i++)
		engine_load(&e, i, &busy);
	engine_run(&e, T);
	for (i = 0; i < 8; i++) {
		share = (double)e.v[i].run_ns / (double)e.now;
		if (share - 0.125 > err)
			err = share - 0.125;
		if (0.125 - share > err)
			err = 0.125 - share;
	}
	err *= 100;
	snprintf(measure, sizeof(measure),
		 "share error with 8 busy vGPUs, %s (max |share - 1/8|)",
		 name);
	snprintf(value, sizeof(value), "%.4f pp", err);
	print_row(measure, run_in, value, "<= 0.5 pp", yes(err <= 0.5));
	printf("note: %s: %llu turns, mean overrun %.1f us, idle with work %.3f ms\n",
	       name, (unsigned long long)e.turns,
	       e.turns ? (double)e.overrun_ns / e.turns / 1000 : 0.0,
	       (double)e.idle_with_work_ns / NS_PER_MS);
}

static void measure_work_conservation(u64 T)
{
	static const struct load bursty = {
		.kind = LOAD_BURSTY,
		.cmd_min = 50 * NS_PER_US,
		.cmd_max = NS_PER_MS,
		.gap_min = 0,
		.gap_max = 50 * NS_PER_MS,
		.burst_min = 1,
		.burst_max = 8,
	};
	static struct engine e;
	char value[64];
	double pct;
	int i;

	engine_init(&e, GPUVIRT_SCHED_POLICY_BEST_EFFORT, 8, 8);
	for (i = 0; i < 8; i++)
		engine_load(&e, i, &bursty);
	engine_run(&e, T);
	pct = 100.0 * (double)e.busy_ns /
	      (double)(e.busy_ns + e.idle_with_work_ns);
	snprintf(value, sizeof(value), "%.3f %%", pct);
	print_row("work conservation under best-effort, 8 bursty vGPUs (busy / some vGPU has work)",
		  run_in, value, ">= 99 %", yes(pct >= 99));
	printf("note: work conservation: engine busy %.1f %%, idle with no work %.1f %%\n",
	       100.0 * (double)e.busy_ns / (double)e.now,
	       100.0 * (double)e.idle_no_work_ns / (double)e.now);
}

static void measure_isolation(u64 T)
{
	static const struct load victim = {
		.kind = LOAD_BUSY,
		.cmd_min = 50 * NS_PER_US,
		.cmd_max = 500 * NS_PER_US,
	};
	static const struct load noisy = {
		.kind = LOAD_BUSY,
		.cmd_min = NS_PER_MS,
		.cmd_max = 10 * NS_PER_MS,
	};
	static struct engine e;
	u64 alone, crowded;
	char value[64];
	double ratio;
	int i;

	engine_init(&e, GPUVIRT_SCHED_POLICY_FIXED_SHARE, 8, 8);
	engine_load(&e, 0, &victim);
	engine_run(&e, T);
	alone = e.v[0].done_ns;

	engine_init(&e, GPUVIRT_SCHED_POLICY_FIXED_SHARE, 8, 8);
	engine_load(&e, 0, &victim);
	for (i = 1; i < 8; i++)
		engine_load(&e, i, &noisy);
	engine_run(&e, T);
	crowded = e.v[0].done_ns;

	ratio = alone ? (double)crowded / (double)alone : 0;
	snprintf(value, sizeof(value), "%.4f", ratio);
	print_row("isolation, fixed-share: victim throughput with 7 noisy neighbours / alone",
		  run_in, value, ">= 0.99", yes(ratio >= 0.99));
	printf("note: isolation: victim work %.1f ms alone, %.1f ms with neighbours, of %.1f ms\n",
	       (double)alone / NS_PER_MS, (double)crowded / NS_PER_MS,
	       (double)T / NS_PER_MS);
}

static void measure_idle_kept_idle(u64 T)
{
	static const struct load busy = {
		.kind = LOAD_BUSY,
		.cmd_min = 20 * NS_PER_US,
		.cmd_max = NS_PER_MS,
	};
	static struct engine e;
	char value[64];
	double pct;
	bool met;

	engine_init(&e, GPUVIRT_SCHED_POLICY_EQUAL_SHARE, 8, 8);
	engine_load(&e, 3, &busy);
	engine_run(&e, T);
	pct = 100.0 * (double)e.v[3].run_ns / (double)e.now;
	met = pct >= 12.0 && pct <= 13.0;
	snprintf(value, sizeof(value), "%.4f %%", pct);
	print_row("idle time kept idle, equal-share, 1 busy of 8 open (its share)",
		  run_in, value, "12.5 % +- 0.5 pp", yes(met));
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void measure_cpu_cost(int n, u64 decisions)
{
	static struct engine e;
	struct gpuvirt_sp_pick p;
	char measure[128], value[64];
	double t0, t1;
	u64 k, now = 0;
	int i;

	engine_init(&e, GPUVIRT_SCHED_POLICY_WEIGHTED, n, n);
	for (i = 0; i < n; i++) {
		gpuvirt_sp_set_weight(&e.sp, i, 100 + 37 * i, 0);
		gpuvirt_sp_set_runnable(&e.sp, i, true, 0);
	}
	t0 = now_ns();
	for (k = 0; k < decisions; k++) {
		gpuvirt_sp_pick(&e.sp, now, &p);
		now += p.ns;
		gpuvirt_sp_charge(&e.sp, p.slot, p.ns, now);
	}
	t1 = now_ns();
	snprintf(measure, sizeof(measure),
		 "policy CPU cost per pick + charge, %d busy vGPUs, weighted", n);
	snprintf(value, sizeof(value), "%.1f ns", (t1 - t0) / (double)decisions);
	print_row(measure, "host CPU, userspace -O2 build of the policy",
		  value, "info", "info");
}

/* ---- the share timeline (-g) ---- */

#define TL_VGPUS	4
#define TL_NOISY	3		/* the neighbour's slot */
#define TL_T		(8 * NS_PER_SEC)
#define TL_BIN		(100 * NS_PER_MS)
#define TL_BINS		(TL_T / TL_BIN)
#define TL_POLICIES	4

static const struct {
	u32 policy;
	const char *name;
} tl_policies[TL_POLICIES] = {
	{ GPUVIRT_SCHED_POLICY_BEST_EFFORT, "best-effort" },
	{ GPUVIRT_SCHED_POLICY_EQUAL_SHARE, "equal-share" },
	{ GPUVIRT_SCHED_POLICY_FIXED_SHARE, "fixed-share" },
	{ GPUVIRT_SCHED_POLICY_WEIGHTED, "weighted, equal weights" },
};

static const char *const tl_colour[TL_VGPUS] = {
	"#1f77b4", "#2ca02c", "#9467bd", "#d62728",
};
/* equal shares draw on top of each other: dashes tell them apart */
static const char *const tl_dash[TL_VGPUS] = { "none", "8,4", "2,4", "none" };

/* Shares in %, by policy, vGPU and 100 ms bin. */
static double tl_share[TL_POLICIES][TL_VGPUS][TL_BINS];

static void timeline_run(int k)
{
	static const struct load busy = {
		.kind = LOAD_BUSY,
		.cmd_min = 20 * NS_PER_US,
		.cmd_max = NS_PER_MS,
	};
	static const struct load noisy = {
		.kind = LOAD_BUSY,
		.cmd_min = NS_PER_MS,
		.cmd_max = 10 * NS_PER_MS,
	};
	static struct engine e;
	u64 before[TL_VGPUS], t0;
	unsigned int b;
	int i;

	engine_init(&e, tl_policies[k].policy, TL_VGPUS, TL_VGPUS);
	gpuvirt_sp_set_open(&e.sp, TL_NOISY, false, 0);
	for (i = 0; i < TL_NOISY; i++)
		engine_load(&e, i, &busy);
	for (b = 0; b < TL_BINS; b++) {
		if (b == TL_BINS / 4) {		/* the neighbour arrives */
			gpuvirt_sp_set_open(&e.sp, TL_NOISY, true, e.now);
			engine_load(&e, TL_NOISY, &noisy);
		}
		if (b == 3 * TL_BINS / 4) {	/* and leaves */
			e.v[TL_NOISY].load.kind = LOAD_IDLE;
			e.v[TL_NOISY].count = 0;
			gpuvirt_sp_set_runnable(&e.sp, TL_NOISY, false, e.now);
			gpuvirt_sp_set_open(&e.sp, TL_NOISY, false, e.now);
		}
		for (i = 0; i < TL_VGPUS; i++)
			before[i] = e.v[i].run_ns;
		t0 = e.now;
		engine_run(&e, (b + 1) * TL_BIN);
		for (i = 0; i < TL_VGPUS; i++)
			tl_share[k][i][b] = 100.0 * (double)(e.v[i].run_ns - before[i]) /
					    (double)(e.now - t0);
	}
}

/* Mean share of vGPU i in bins [b0, b1). */
static double tl_mean(int k, int i, unsigned int b0, unsigned int b1)
{
	double sum = 0;
	unsigned int b;

	for (b = b0; b < b1; b++)
		sum += tl_share[k][i][b];
	return sum / (b1 - b0);
}

#define SVG_W		760
#define SVG_PANEL	150
#define SVG_LEFT	60
#define SVG_PLOT_W	660
#define SVG_PLOT_H	110
#define SVG_TOP		50
#define SVG_YMAX	50.0	/* % at the top of a panel */

static void timeline_svg(FILE *f)
{
	const int h = SVG_TOP + TL_POLICIES * SVG_PANEL + 40;
	const double bx = (double)SVG_PLOT_W / TL_BINS;
	unsigned int b;
	int k, i, y0, g;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<!-- generated by bench/sched/policy_sim -g: the policy of kernel/core/sched_policy.c in virtual time -->\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Share of the engine per vGPU (%% of each 100 ms), 3 busy vGPUs; a noisy neighbour from 2 s to 6 s</text>\n",
		SVG_W, h, SVG_W, h, SVG_LEFT - 50);
	/* legend */
	for (i = 0; i < TL_VGPUS; i++)
		fprintf(f, "<rect x=\"%d\" y=\"30\" width=\"14\" height=\"4\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"36\">%s</text>\n",
			SVG_LEFT + 170 * i, tl_colour[i], SVG_LEFT + 170 * i + 18,
			i == TL_NOISY ? "noisy neighbour (vGPU 3)" :
			i == 0 ? "vGPU 0 (busy)" : i == 1 ? "vGPU 1 (busy)" :
			"vGPU 2 (busy)");
	for (k = 0; k < TL_POLICIES; k++) {
		y0 = SVG_TOP + k * SVG_PANEL + 20;
		fprintf(f, "<g>\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
			SVG_LEFT, y0 - 6, tl_policies[k].name);
		/* the neighbour's stay */
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#d62728\" fill-opacity=\"0.08\"/>\n",
			SVG_LEFT + bx * (TL_BINS / 4), y0,
			bx * (TL_BINS / 2), SVG_PLOT_H);
		for (g = 0; g <= 4; g++) {
			double y = y0 + SVG_PLOT_H - SVG_PLOT_H * g / 4.0;

			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>"
				"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f%%</text>\n",
				SVG_LEFT, y, SVG_LEFT + SVG_PLOT_W, y,
				SVG_LEFT - 4, y + 4, SVG_YMAX * g / 4);
		}
		for (i = 0; i < TL_VGPUS; i++) {
			fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\" points=\"",
				tl_colour[i], tl_dash[i]);
			for (b = 0; b < TL_BINS; b++) {
				double v = tl_share[k][i][b];

				if (v > SVG_YMAX)
					v = SVG_YMAX;
				fprintf(f, "%.1f,%.1f ", SVG_LEFT + bx * (b + 0.5),
					y0 + SVG_PLOT_H - SVG_PLOT_H * v / SVG_YMAX);
			}
			fprintf(f, "\"/>\n");
		}
		fprintf(f, "</g>\n");
	}
	/* time axis, under the last panel */
	y0 = SVG_TOP + TL_POLICIES * SVG_PANEL + 10;
	for (g = 0; g <= 8; g++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d s</text>\n",
			SVG_LEFT + (double)SVG_PLOT_W * g / 8, y0, g);
	fprintf(f, "</svg>\n");
}

/* @seed: the run's seed, so that the picture does not depend on -t */
static int measure_timeline(const char *path, u64 seed)
{
	FILE *f;
	int k;

	for (k = 0; k < TL_POLICIES; k++) {
		rng_state = seed;
		timeline_run(k);
		printf("note: timeline %s: mean shares before / with / after the neighbour:",
		       tl_policies[k].name);
		printf(" busy vGPUs %.1f / %.1f / %.1f %%, neighbour %.1f %%\n",
		       tl_mean(k, 0, 0, TL_BINS / 4),
		       tl_mean(k, 0, TL_BINS / 4, 3 * TL_BINS / 4),
		       tl_mean(k, 0, 3 * TL_BINS / 4, TL_BINS),
		       tl_mean(k, TL_NOISY, TL_BINS / 4, 3 * TL_BINS / 4));
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	timeline_svg(f);
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	printf("note: timeline: wrote %s\n", path);
	return 0;
}

static void print_usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-t SECONDS] [-n DECISIONS] [-s SEED] [-g SVG_FILE]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	u64 T = 10 * NS_PER_SEC, decisions = 2000000;
	const char *svg = NULL;
	u64 seed;
	int opt;

	while ((opt = getopt(argc, argv, "t:n:s:g:h")) != -1) {
		switch (opt) {
		case 't':
			T = strtoull(optarg, NULL, 10) * NS_PER_SEC;
			break;
		case 'n':
			decisions = strtoull(optarg, NULL, 10);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) ?: 1;
			break;
		case 'g':
			svg = optarg;
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (!T || !decisions)
		print_usage(argv[0]);
	seed = rng_state;
	snprintf(run_in, sizeof(run_in),
		 "host, policy in a modelled engine, %llu s virtual time",
		 (unsigned long long)(T / NS_PER_SEC));

	measure_share_error(GPUVIRT_SCHED_POLICY_EQUAL_SHARE, "equal-share", T);
	measure_share_error(GPUVIRT_SCHED_POLICY_BEST_EFFORT, "best-effort", T);
	measure_share_error(GPUVIRT_SCHED_POLICY_WEIGHTED, "weighted, equal weights", T);
	measure_work_conservation(T);
	measure_isolation(T);
	measure_idle_kept_idle(T);
	measure_cpu_cost(8, decisions);
	measure_cpu_cost(32, decisions);
	if (svg && measure_timeline(svg, seed))
		return 1;
	return 0;
}
