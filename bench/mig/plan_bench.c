// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MIG planner's run time: gpuvirt_mig_plan() (kernel/core/mig.c, built
 * here as the unit tests build it) over every wanted multiset of every
 * MIG-capable catalogue model and of one custom GPU, from an empty GPU and
 * from layouts with busy GIs.
 *
 * Wanted multisets: every count per profile up to the profile's max, 7 GIs
 * at most in all, the empty one left out; feasible or not (a refusal is
 * an answer too, and often the slowest one). Busy layouts: each of a few
 * full partitions (below), with every non-empty subset of its GIs busy.
 *
 * Absolute times on a shared machine are noise, so the planner is timed
 * side by side with a reference in the same process, interleaved round by
 * round (the order alternates): the reference is gpuvirt_mig_gi_check()
 * of one 1g GI at the lowest free start on the same current layout, the
 * check the kernel does for one "gi-new". Each round times every call of
 * both; the ratio of their means per round is reported as the median and
 * min..max over the rounds (see bench/README.md, "Rules"):
 *
 *   bench: mig_plan_SCENARIO ratio=R (median of N rounds, min..max) [...]
 *
 * with the absolute figures on "mig:" lines, to read only within one run.
 *
 * Usage: plan_bench [-r ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mig.h"

#define MAX_WANTS	4096
#define MAX_ROUNDS	99
/* Every non-empty subset of each base's GIs: 15 + 127 + 3 + 15 + 7. */
#define MAX_LAYOUTS	256

/* Full partitions to start from, as profile indexes and starts. */
static const struct {
	const char *name;
	unsigned int n;
	u8 profile[GPUVIRT_MIG_GIS_MAX];
	u8 start[GPUVIRT_MIG_GIS_MAX];
} bases[] = {
	{ "balanced 3g+2g+2x1g", 4, { 4, 3, 0, 0 }, { 4, 0, 2, 3 } },
	{ "7x1g", 7, { 0, 0, 0, 0, 0, 0, 0 }, { 0, 1, 2, 3, 4, 5, 6 } },
	{ "2x3g", 2, { 4, 4 }, { 0, 4 } },
	{ "3x2g+1g", 4, { 3, 3, 3, 0 }, { 0, 2, 4, 6 } },
	{ "4g+1g.wide+1g", 3, { 5, 2, 0 }, { 0, 4, 6 } },
};

struct scenario {
	const char *name;
	struct gpuvirt_mig_layout cur[MAX_LAYOUTS];
	u8 busy[MAX_LAYOUTS];
	const char *base[MAX_LAYOUTS];
	unsigned int n_cur;
};

static unsigned int wants[MAX_WANTS][GPUVIRT_MIG_PROFILES];
static unsigned int n_wants;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static void gen_wants(const struct gpuvirt_mig_table *t, unsigned int p,
		      unsigned int *w, unsigned int total)
{
	unsigned int c;

	if (p == t->count) {
		if (total && n_wants < MAX_WANTS)
			memcpy(wants[n_wants++], w, sizeof(wants[0]));
		return;
	}
	for (c = 0; c <= t->profile[p].max && total + c <= GPUVIRT_MIG_GIS_MAX;
	     c++) {
		w[p] = c;
		gen_wants(t, p + 1, w, total + c);
	}
	w[p] = 0;
}

/* "3g.20gb+2x1g.5gb" */
static void want_str(const struct gpuvirt_mig_table *t, const unsigned int *w,
		     char *buf, size_t len)
{
	size_t used = 0;
	unsigned int p;

	buf[0] = '\0';
	for (p = 0; p < t->count && used < len; p++) {
		int n;

		if (!w[p])
			continue;
		n = snprintf(buf + used, len - used, "%s%s%s",
			     used ? "+" : "", w[p] > 1 ? "" : "", t->profile[p].name);
		if (n > 0)
			used += (size_t)n;
		if (w[p] > 1 && used < len) {
			n = snprintf(buf + used, len - used, "x%u", w[p]);
			if (n > 0)
				used += (size_t)n;
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One model: every scenario, @rounds rounds. */
static void run_model(const char *label, const struct gpuvirt_mig_table *t,
		      unsigned int rounds)
{
	static struct scenario sc[2];
	struct gpuvirt_mig_plan plan;
	struct gpuvirt_mig_why why;
	unsigned int tmp[GPUVIRT_MIG_PROFILES] = { 0 };
	unsigned int s, i, b, r, w, c, feasible;
	u64 mask;

	n_wants = 0;
	gen_wants(t, 0, tmp, 0);

	sc[0].name = "empty";
	sc[0].n_cur = 1;
	gpuvirt_mig_layout_init(&sc[0].cur[0]);
	sc[0].busy[0] = 0;
	sc[0].base[0] = "no GIs";
	sc[1].name = "busy";
	sc[1].n_cur = 0;
	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct gpuvirt_mig_layout l;

		gpuvirt_mig_layout_init(&l);
		for (i = 0; i < bases[b].n; i++)
			if (gpuvirt_mig_gi_add(t, &l, bases[b].profile[i],
					       bases[b].start[i], &why) < 0) {
				fprintf(stderr, "base %s: %s\n", bases[b].name,
					why.msg);
				exit(1);
			}
		for (mask = 1; mask < (1U << bases[b].n); mask++) {
			sc[1].cur[sc[1].n_cur] = l;
			sc[1].base[sc[1].n_cur] = bases[b].name;
			sc[1].busy[sc[1].n_cur++] = (u8)mask;
		}
	}

	for (s = 0; s < 2; s++) {
		unsigned int n = sc[s].n_cur * n_wants, k, worst_k = 0, rep;
		/* Passes of 100000 calls at least, long enough to time. */
		unsigned int reps = n < 100000 ? (100000 + n - 1) / n : 1;
		double ratio[MAX_ROUNDS];
		u64 plan_sum = 0, ref_sum = 0, worst = 0, *best;
		char wbuf[96];

		best = malloc(n * sizeof(*best));
		if (!best) {
			perror("plan_bench");
			exit(1);
		}
		for (k = 0; k < n; k++)
			best[k] = UINT64_MAX;
		feasible = 0;
		for (c = 0; c < sc[s].n_cur; c++)
			for (w = 0; w < n_wants; w++)
				feasible += !gpuvirt_mig_plan(t, &sc[s].cur[c],
							      sc[s].busy[c],
							      wants[w], &plan,
							      &why);
		for (r = 0; r < rounds; r++) {
			u64 tp = 0, tr = 0, t0;
			unsigned int half;

			/* The means: whole passes, the order alternating. */
			for (half = 0; half < 2; half++) {
				bool ref = (r + half) & 1;

				t0 = now_ns();
				for (rep = 0; rep < reps; rep++)
				for (c = 0; c < sc[s].n_cur; c++) {
					const struct gpuvirt_mig_layout *l =
						&sc[s].cur[c];

					for (w = 0; w < n_wants; w++) {
						if (ref)
							gpuvirt_mig_gi_check(t, l, 0,
								GPUVIRT_MIG_START_ANY, &why);
						else
							gpuvirt_mig_plan(t, l,
								sc[s].busy[c], wants[w],
								&plan, &why);
					}
				}
				if (ref)
					tr = now_ns() - t0;
				else
					tp = now_ns() - t0;
			}
			ratio[r] = (double)tp / (double)(tr ? tr : 1);
			plan_sum += tp;
			ref_sum += tr;

			/*
			 * The worst case: each input timed alone, its fastest
			 * round kept (what is left is the input's cost, not
			 * the machine's hiccups), the slowest input reported.
			 */
			for (c = 0, k = 0; c < sc[s].n_cur; c++) {
				for (w = 0; w < n_wants; w++, k++) {
					u64 d;

					t0 = now_ns();
					gpuvirt_mig_plan(t, &sc[s].cur[c],
							 sc[s].busy[c], wants[w],
							 &plan, &why);
					d = now_ns() - t0;
					if (d < best[k])
						best[k] = d;
				}
			}
		}
		for (k = 0; k < n; k++) {
			if (best[k] > worst) {
				worst = best[k];
				worst_k = k;
			}
		}
		want_str(t, wants[worst_k % n_wants], wbuf, sizeof(wbuf));
		printf("mig: %s %s: %u wanted multisets x %u layouts, %u plans found; plan mean %.0f ns, worst %llu ns (want %s, on %s, busy 0x%02x); gi_check mean %.0f ns\n",
		       label, sc[s].name, n_wants, sc[s].n_cur, feasible,
		       (double)plan_sum / ((double)n * reps * rounds),
		       (unsigned long long)worst, wbuf,
		       sc[s].base[worst_k / n_wants],
		       sc[s].busy[worst_k / n_wants],
		       (double)ref_sum / ((double)n * reps * rounds));
		qsort(ratio, rounds, sizeof(ratio[0]), cmp_double);
		printf("bench: mig_plan_%s_%s ratio=%.2f (median of %u rounds, %.2f..%.2f) [mean plan time / mean gi_check time]\n",
		       label, sc[s].name, ratio[rounds / 2], rounds, ratio[0],
		       ratio[rounds - 1]);
		printf("bench: mig_plan_%s_%s_worst ratio=%.1f [slowest input's plan time / mean gi_check time]\n",
		       label, sc[s].name,
		       (double)worst / ((double)ref_sum / ((double)n * reps * rounds)));
		free(best);
	}
}

int main(int argc, char **argv)
{
	struct gpuvirt_mig_table t;
	unsigned int rounds = 5, i;

	if (argc == 3 && !strcmp(argv[1], "-r"))
		rounds = (unsigned int)atoi(argv[2]);
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: plan_bench [-r ROUNDS (1-%d)]\n",
			MAX_ROUNDS);
		return 2;
	}
	for (i = 0; i < gpuvirt_catalogue_count(); i++) {
		const struct gpuvirt_model *m = gpuvirt_catalogue_get(i);

		if (gpuvirt_mig_table_build(m, 0, 0, &t))
			continue;
		run_model(m->name, &t, rounds);
	}
	/* A custom GPU derives its names; the shapes are the same. */
	if (!gpuvirt_mig_table_build(NULL, 48ULL << 30, 14, &t))
		run_model("custom-48g", &t, rounds);
	return 0;
}
