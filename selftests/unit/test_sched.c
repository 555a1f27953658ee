// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the time-slice scheduling policy (kernel/core/sched_policy.c),
 * built in userspace and driven in virtual time by a small model of the
 * engine: pick, run the slot for its slice or until its work runs out,
 * charge, repeat; stay idle when told to. Every figure asserted with == was
 * worked out by hand from the algorithm in sched_policy.h (the comment at
 * each test gives the schedule); where the algorithm only promises a bound
 * (one slice of credit either way), the test asserts that exact bound and
 * says where it comes from.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"

#include "core/sched_policy.h"

#define US(x)		((u64)(x) * 1000ULL)
#define MS(x)		((u64)(x) * 1000000ULL)
#define SEC(x)		((u64)(x) * 1000000000ULL)
#define FOREVER		U64_MAX
#define NSLOT		GPUVIRT_SP_SLOTS
#define NONE		U64_MAX
#define TRACE_MAX	64

#define BE	GPUVIRT_SCHED_POLICY_BEST_EFFORT
#define ES	GPUVIRT_SCHED_POLICY_EQUAL_SHARE
#define FS	GPUVIRT_SCHED_POLICY_FIXED_SHARE
#define WE	GPUVIRT_SCHED_POLICY_WEIGHTED

/*
 * The engine model. A slot's work is a backlog of ns (FOREVER: always
 * busy), fed by an optional periodic arrival of @burst ns every @period ns.
 * A run lasts the slice or until the backlog is gone, whichever is first;
 * idle lasts what the policy said, cut short by the next arrival or the end
 * of the run. Arrivals during a run are seen when the run ends, as the
 * engine sees a doorbell only between turns.
 */
struct sim {
	struct gpuvirt_sp sp;
	u64 now;
	u64 backlog[NSLOT];
	u64 period[NSLOT];
	u64 burst[NSLOT];
	u64 next[NSLOT];
	u64 run[NSLOT];		/* run time, ns */
	u64 picks[NSLOT];
	u64 idle_busy;		/* engines idle while some slot had work */
	u64 idle_free;		/* engines idle with no work anywhere */
	u64 npicks;
	u64 idle_picks;
	u64 first_idle_ns;	/* pick->ns of the first idle pick */
	/* starvation: waiting while allowed to run (in sp.may_run) */
	u64 since[NSLOT];	/* start of the current wait, or NONE */
	u64 wait_picks[NSLOT];
	u64 max_wait_ns[NSLOT];
	u64 max_wait_picks[NSLOT];
	int trace[TRACE_MAX];	/* the first picks, -1 for idle */
	unsigned int ntrace;
};

static void sim_init(struct sim *s, u32 policy, int nslots, u32 max_inst,
		     int nopen)
{
	int i;

	memset(s, 0, sizeof(*s));
	gpuvirt_sp_init(&s->sp, 0);
	gpuvirt_sp_set_policy(&s->sp, policy, 0);
	for (i = 0; i < nslots; i++) {
		gpuvirt_sp_add(&s->sp, max_inst, 0);
		if (i < nopen)
			gpuvirt_sp_set_open(&s->sp, i, true, 0);
	}
	for (i = 0; i < NSLOT; i++)
		s->since[i] = NONE;
	s->first_idle_ns = NONE;
}

static void sim_work(struct sim *s, int i, u64 ns)
{
	if (s->backlog[i] != FOREVER)
		s->backlog[i] = ns == FOREVER ? FOREVER : s->backlog[i] + ns;
	if (s->backlog[i] && !s->sp.slot[i].runnable)
		gpuvirt_sp_set_runnable(&s->sp, i, true, s->now);
}

static void sim_busy(struct sim *s, int i)
{
	sim_work(s, i, FOREVER);
}

static void sim_stop(struct sim *s, int i)
{
	s->backlog[i] = 0;
	s->period[i] = 0;
	gpuvirt_sp_set_runnable(&s->sp, i, false, s->now);
}

/* @burst ns of work every @period ns, the first at now + @phase. */
static void sim_load(struct sim *s, int i, u64 period, u64 burst, u64 phase)
{
	s->period[i] = period;
	s->burst[i] = burst;
	s->next[i] = s->now + phase;
}

static void sim_arrivals(struct sim *s)
{
	int i;

	for (i = 0; i < NSLOT; i++) {
		while (s->period[i] && s->next[i] <= s->now) {
			sim_work(s, i, s->burst[i]);
			s->next[i] += s->period[i];
		}
	}
}

static u64 sim_next_arrival(const struct sim *s)
{
	u64 t = NONE;
	int i;

	for (i = 0; i < NSLOT; i++)
		if (s->period[i] && s->next[i] < t)
			t = s->next[i];
	return t;
}

static bool sim_any_work(const struct sim *s)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		if (s->sp.slot[i].used && s->backlog[i])
			return true;
	return false;
}

static void sim_track_waits(struct sim *s, int picked)
{
	u32 may = s->sp.may_run;
	int i;

	for (i = 0; i < NSLOT; i++) {
		if (i == picked) {
			if (s->since[i] != NONE &&
			    s->now - s->since[i] > s->max_wait_ns[i])
				s->max_wait_ns[i] = s->now - s->since[i];
			if (s->wait_picks[i] > s->max_wait_picks[i])
				s->max_wait_picks[i] = s->wait_picks[i];
			s->since[i] = NONE;
			s->wait_picks[i] = 0;
		} else if (may & (1U << i)) {
			if (s->since[i] == NONE)
				s->since[i] = s->now;
			s->wait_picks[i]++;
		} else {
			s->since[i] = NONE;
			s->wait_picks[i] = 0;
		}
	}
}

static void sim_run(struct sim *s, u64 until)
{
	struct gpuvirt_sp_pick p;
	u64 r, end, d;
	int i;

	while (s->now < until) {
		sim_arrivals(s);
		gpuvirt_sp_pick(&s->sp, s->now, &p);
		if (s->ntrace < TRACE_MAX)
			s->trace[s->ntrace++] = p.slot;
		s->npicks++;
		sim_track_waits(s, p.slot);
		if (p.slot >= 0) {
			i = p.slot;
			r = p.ns < s->backlog[i] ? p.ns : s->backlog[i];
			s->picks[i]++;
			s->now += r;
			s->run[i] += r;
			if (s->backlog[i] != FOREVER)
				s->backlog[i] -= r;
			gpuvirt_sp_charge(&s->sp, i, r, s->now);
			if (!s->backlog[i])
				gpuvirt_sp_set_runnable(&s->sp, i, false, s->now);
			continue;
		}
		s->idle_picks++;
		if (s->first_idle_ns == NONE)
			s->first_idle_ns = p.ns;
		end = sim_next_arrival(s);
		if (end > until)
			end = until;
		d = p.ns < end - s->now ? p.ns : end - s->now;
		if (sim_any_work(s))
			s->idle_busy += d;
		else
			s->idle_free += d;
		s->now += d;
	}
}

/* Forget the counters, keep the state: measure a window from now on. */
static void sim_window(struct sim *s)
{
	memset(s->run, 0, sizeof(s->run));
	memset(s->picks, 0, sizeof(s->picks));
	s->idle_busy = 0;
	s->idle_free = 0;
	s->npicks = 0;
	s->idle_picks = 0;
	s->ntrace = 0;
	s->first_idle_ns = NONE;
}

static u64 sim_busy_ns(const struct sim *s)
{
	u64 t = 0;
	int i;

	for (i = 0; i < NSLOT; i++)
		t += s->run[i];
	return t;
}

static u64 absdiff(u64 a, u64 b)
{
	return a > b ? a - b : b - a;
}

/* ---------------------------------------------------------------------- */
/* Configuration                                                          */
/* ---------------------------------------------------------------------- */

/* 2 ms up to 8 vGPUs, 1 ms from the 9th; a configured slice overrides. */
TEST(slice_defaults_and_range)
{
	struct gpuvirt_sp sp;
	int i;

	gpuvirt_sp_init(&sp, 0);
	EXPECT_EQ(MS(2), gpuvirt_sp_slice(&sp));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(i, gpuvirt_sp_add(&sp, 8, 0));
	EXPECT_EQ(MS(2), gpuvirt_sp_slice(&sp));
	ASSERT_EQ(8, gpuvirt_sp_add(&sp, 8, 0));
	EXPECT_EQ(MS(1), gpuvirt_sp_slice(&sp));
	gpuvirt_sp_remove(&sp, 3, 0);
	EXPECT_EQ(MS(2), gpuvirt_sp_slice(&sp));
	/* the lowest free slot is reused */
	ASSERT_EQ(3, gpuvirt_sp_add(&sp, 8, 0));
	EXPECT_EQ(MS(1), gpuvirt_sp_slice(&sp));

	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_slice(&sp, US(100) - 1, 0));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_slice(&sp, MS(100) + 1, 0));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_slice(&sp, U64_MAX, 0));
	EXPECT_EQ(0ULL, sp.slice_ns);
	EXPECT_EQ(MS(1), gpuvirt_sp_slice(&sp));
	EXPECT_EQ(0, gpuvirt_sp_set_slice(&sp, US(100), 0));
	EXPECT_EQ(US(100), gpuvirt_sp_slice(&sp));
	EXPECT_EQ(0, gpuvirt_sp_set_slice(&sp, MS(100), 0));
	EXPECT_EQ(MS(100), gpuvirt_sp_slice(&sp));
	EXPECT_EQ(0, gpuvirt_sp_set_slice(&sp, 0, 0));
	EXPECT_EQ(MS(1), gpuvirt_sp_slice(&sp));

	/* 32 slots, then -ENOSPC */
	for (i = 9; i < NSLOT; i++)
		ASSERT_EQ(i, gpuvirt_sp_add(&sp, 8, 0));
	EXPECT_EQ(-ENOSPC, gpuvirt_sp_add(&sp, 8, 0));
}

/* Every out-of-range value is refused with -EINVAL and changes nothing. */
TEST(config_range_errors)
{
	struct gpuvirt_sp sp, before;

	gpuvirt_sp_init(&sp, 0);
	ASSERT_EQ(0, gpuvirt_sp_add(&sp, 4, 0));
	before = sp;

	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_policy(&sp, WE + 1, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_weight(&sp, 0, 0, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_weight(&sp, 0, 10001, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_weight(&sp, 1, 100, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_weight(&sp, -1, 100, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_weight(&sp, NSLOT, 100, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_limits(&sp, 0, 0, 0, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_limits(&sp, 0, 0, 101, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_limits(&sp, 0, 51, 50, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_limits(&sp, 0, 101, 101, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_limits(&sp, 1, 0, 100, 5));
	EXPECT_EQ(-EINVAL, gpuvirt_sp_set_slice(&sp, 1, 5));
	/* refused before anything, even the clock, moved */
	EXPECT_EQ(0, memcmp(&before, &sp, sizeof(sp)));

	EXPECT_EQ(0, gpuvirt_sp_set_weight(&sp, 0, 1, 5));
	EXPECT_EQ(0, gpuvirt_sp_set_weight(&sp, 0, 10000, 5));
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 0, 1, 5));
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 100, 100, 5));
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 30, 30, 5));
	EXPECT_EQ(0, gpuvirt_sp_set_policy(&sp, WE, 5));
	EXPECT_EQ(5ULL, sp.now);
}

/*
 * The minimums of the slots in use may sum to 100 and no more; a refused
 * change leaves the whole state as it was, and a slot's own old minimum does
 * not count against its new one.
 */
TEST(min_sum_over_100_is_enospc)
{
	struct gpuvirt_sp sp, before;

	gpuvirt_sp_init(&sp, 0);
	ASSERT_EQ(0, gpuvirt_sp_add(&sp, 4, 0));
	ASSERT_EQ(1, gpuvirt_sp_add(&sp, 4, 0));
	ASSERT_EQ(2, gpuvirt_sp_add(&sp, 4, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 60, 100, 1));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 1, 40, 50, 2));
	before = sp;
	EXPECT_EQ(-ENOSPC, gpuvirt_sp_set_limits(&sp, 2, 1, 100, 3));
	EXPECT_EQ(-ENOSPC, gpuvirt_sp_set_limits(&sp, 1, 41, 50, 3));
	EXPECT_EQ(-ENOSPC, gpuvirt_sp_set_limits(&sp, 0, 61, 70, 3));
	EXPECT_EQ(0, memcmp(&before, &sp, sizeof(sp)));
	/* lowering one's own minimum, or moving it, is fine */
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 50, 100, 3));
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 2, 10, 10, 3));
	EXPECT_EQ(-ENOSPC, gpuvirt_sp_set_limits(&sp, 2, 11, 20, 3));
	/* a removed slot's minimum is free again */
	gpuvirt_sp_remove(&sp, 1, 4);
	EXPECT_EQ(0, gpuvirt_sp_set_limits(&sp, 2, 50, 50, 4));
	EXPECT_EQ(500000U, gpuvirt_sp_min_ppm(&sp, 2));
	EXPECT_EQ(0U, gpuvirt_sp_min_ppm(&sp, 1));
}

/* The effective cap and minimum reported for telemetry, per policy. */
TEST(effective_cap_and_min)
{
	struct gpuvirt_sp sp;
	int i;

	gpuvirt_sp_init(&sp, 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(i, gpuvirt_sp_add(&sp, 10, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 1, 0, 20, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 2, 40, 60, 0));

	/* work-conserving policies: only the cap */
	EXPECT_EQ(1000000U, gpuvirt_sp_max_ppm(&sp, 0));
	EXPECT_EQ(200000U, gpuvirt_sp_max_ppm(&sp, 1));
	EXPECT_EQ(600000U, gpuvirt_sp_max_ppm(&sp, 2));
	EXPECT_EQ(400000U, gpuvirt_sp_min_ppm(&sp, 2));
	ASSERT_EQ(0, gpuvirt_sp_set_policy(&sp, WE, 0));
	EXPECT_EQ(1000000U, gpuvirt_sp_max_ppm(&sp, 0));

	/* equal-share: 1/N of the open slots, rounded up, N >= 1 */
	ASSERT_EQ(0, gpuvirt_sp_set_policy(&sp, ES, 0));
	EXPECT_EQ(1000000U, gpuvirt_sp_max_ppm(&sp, 0));
	for (i = 0; i < 3; i++)
		gpuvirt_sp_set_open(&sp, i, true, 0);
	EXPECT_EQ(333334U, gpuvirt_sp_max_ppm(&sp, 0));
	EXPECT_EQ(200000U, gpuvirt_sp_max_ppm(&sp, 1));
	/* the minimum raises the cap above the share */
	EXPECT_EQ(400000U, gpuvirt_sp_max_ppm(&sp, 2));
	gpuvirt_sp_set_open(&sp, 2, false, 0);
	EXPECT_EQ(500000U, gpuvirt_sp_max_ppm(&sp, 0));
	EXPECT_EQ(500000U, gpuvirt_sp_max_ppm(&sp, 2));

	/* fixed-share: 1/max_instances */
	ASSERT_EQ(0, gpuvirt_sp_set_policy(&sp, FS, 0));
	EXPECT_EQ(100000U, gpuvirt_sp_max_ppm(&sp, 0));
	EXPECT_EQ(100000U, gpuvirt_sp_max_ppm(&sp, 1));
	EXPECT_EQ(400000U, gpuvirt_sp_max_ppm(&sp, 2));
	EXPECT_EQ(0U, gpuvirt_sp_max_ppm(&sp, 3));
	EXPECT_EQ(0U, gpuvirt_sp_max_ppm(&sp, -1));
}

/* ---------------------------------------------------------------------- */
/* Every policy                                                           */
/* ---------------------------------------------------------------------- */

FIXTURE(pol) {
	struct sim s;
};

FIXTURE_VARIANT(pol) {
	u32 policy;
	bool conserving;
};

FIXTURE_VARIANT_ADD(pol, best_effort) {
	.policy = BE,
	.conserving = true,
};

FIXTURE_VARIANT_ADD(pol, equal_share) {
	.policy = ES,
	.conserving = false,
};

FIXTURE_VARIANT_ADD(pol, fixed_share) {
	.policy = FS,
	.conserving = false,
};

FIXTURE_VARIANT_ADD(pol, weighted) {
	.policy = WE,
	.conserving = true,
};

FIXTURE_SETUP(pol)
{
}

FIXTURE_TEARDOWN(pol)
{
}

/*
 * Eight busy vGPUs (fixed-share: max_instances 8) share exactly 1/8 each:
 * a round robin of 2 ms slices, 0..7, with no idle time. For equal-share
 * and fixed-share the caps (125000 PPM) never bite: slot k is picked at
 * 2k ms with 0.25k ms of credit and leaves it 0.25k - 1.75 ms, which is
 * back to exactly 0 at 16 ms, when its turn comes again.
 */
TEST_F(pol, eight_busy_share_exactly_one_eighth)
{
	struct sim *s = &self->s;
	int i;

	sim_init(s, variant->policy, 8, 8, 8);
	for (i = 0; i < 8; i++)
		sim_busy(s, i);
	sim_run(s, SEC(10));
	EXPECT_EQ(SEC(10), s->now);
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(MS(1250), s->run[i]) TH_LOG("slot %d", i);
		EXPECT_EQ(625ULL, s->picks[i]) TH_LOG("slot %d", i);
	}
	EXPECT_EQ(0ULL, s->idle_busy);
	EXPECT_EQ(0ULL, s->idle_free);
	for (i = 0; i < 2 * 8; i++)
		EXPECT_EQ(i % 8, s->trace[i]);
	/*
	 * Waits while allowed to run: work-conserving, each waits exactly
	 * the 7 others, 14 ms. Capped, only slot k's first wait, k turns,
	 * counts: from then on its credit is below 0 until the very pick
	 * that takes it.
	 */
	for (i = 0; i < 8; i++) {
		u64 turns = variant->conserving ? 7 : i;

		EXPECT_EQ(turns, s->max_wait_picks[i]) TH_LOG("slot %d", i);
		EXPECT_EQ(turns * MS(2), s->max_wait_ns[i]) TH_LOG("slot %d", i);
	}
}

/*
 * One busy vGPU of eight open. Work-conserving: it runs all the time.
 * Equal-share (1/8 of 8 open) and fixed-share (1/8 of its type): 2 ms run
 * leaves -1.75 ms of credit, repaid at 1/8 in exactly 14 ms of idle; so a
 * 16 ms period, 625 of them in 10 s, and the idle time is all waste.
 */
TEST_F(pol, one_busy_of_eight)
{
	struct sim *s = &self->s;

	sim_init(s, variant->policy, 8, 8, 8);
	sim_busy(s, 3);
	sim_run(s, SEC(10));
	EXPECT_EQ(SEC(10), s->now);
	EXPECT_EQ(0ULL, s->idle_free);
	if (variant->conserving) {
		EXPECT_EQ(SEC(10), s->run[3]);
		EXPECT_EQ(0ULL, s->idle_busy);
		EXPECT_EQ(0ULL, s->idle_picks);
	} else {
		EXPECT_EQ(MS(1250), s->run[3]);
		EXPECT_EQ(MS(8750), s->idle_busy);
		EXPECT_EQ(625ULL, s->idle_picks);
		EXPECT_EQ(MS(14), s->first_idle_ns);
		EXPECT_EQ(3, s->trace[0]);
		EXPECT_EQ(-1, s->trace[1]);
		EXPECT_EQ(3, s->trace[2]);
	}
}

/*
 * A cap of 10 % on a vGPU alone, under every policy (equal-share with one
 * open slot, and fixed-share with max_instances 1, give a share of 100 %,
 * so the cap is what binds): 2 ms run leaves -1.8 ms of credit, 18 ms of
 * idle repays it; 500 periods of 20 ms in 10 s.
 */
TEST_F(pol, cap_ten_percent_alone)
{
	struct sim *s = &self->s;

	sim_init(s, variant->policy, 1, 1, 1);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s->sp, 0, 0, 10, 0));
	EXPECT_EQ(100000U, gpuvirt_sp_max_ppm(&s->sp, 0));
	sim_busy(s, 0);
	sim_run(s, SEC(10));
	EXPECT_EQ(SEC(1), s->run[0]);
	EXPECT_EQ(500ULL, s->picks[0]);
	EXPECT_EQ(SEC(9), s->idle_busy);
	EXPECT_EQ(MS(18), s->first_idle_ns);
	/* the cap lifted: the slot runs at once and all the time */
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s->sp, 0, 0, 100, s->now));
	sim_window(s);
	sim_run(s, SEC(11));
	EXPECT_EQ(SEC(1), s->run[0]);
	EXPECT_EQ(0ULL, s->idle_busy);
}

/*
 * Four busy vGPUs, one (A, slot 0) with a minimum of 50 %. Its policy
 * share is 25 % (equal-share: 1/4 open; fixed-share: max_instances 4;
 * round robin otherwise), so the minimum binds: it gets 50 % and the three
 * others share the rest, 1/6 each, and nothing is idle (the effective caps,
 * 50 % and 25 % x 3, are never reached).
 *
 * With c A's minimum credit in ms and v the virtual times in ms: at 0, A
 * wins the 4-way tie (c -1); 1 (c 0) and 2 (c +1) follow; then A is owed
 * at every other pick (A(min), c back to 0, no vtime), between turns of 3,
 * 1, 2, 3 picked by vtime and round robin. At 24 ms A's vtime (2) is the
 * lowest: a 12 ms cycle starts, A(vtime) 1 2 A(min) 3 A(min), every vtime
 * 2 ms up. [0, 24) gives A 12 ms and the others 4 ms each; 12 s is that
 * plus exactly 998 cycles: 6 s and 2 s, 2 s, 2 s.
 */
TEST_F(pol, min_half_of_four)
{
	static const int order[] = { 0, 1, 2, 0, 3, 0, 1, 0, 2, 0, 3, 0,
				     0, 1, 2, 0, 3, 0, 0, 1, 2, 0, 3, 0 };
	struct sim *s = &self->s;
	int i;

	sim_init(s, variant->policy, 4, 4, 4);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s->sp, 0, 50, 100, 0));
	EXPECT_EQ(variant->conserving ? 1000000U : 500000U,
		  gpuvirt_sp_max_ppm(&s->sp, 0));
	for (i = 0; i < 4; i++)
		sim_busy(s, i);
	sim_run(s, SEC(12));
	EXPECT_EQ(SEC(12), s->now);
	EXPECT_EQ(0ULL, s->idle_busy);
	EXPECT_EQ(SEC(6), s->run[0]);
	for (i = 1; i < 4; i++)
		EXPECT_EQ(SEC(2), s->run[i]) TH_LOG("slot %d", i);
	for (i = 0; i < (int)ARRAY_SIZE(order); i++)
		EXPECT_EQ(order[i], s->trace[i]) TH_LOG("pick %d", i);
}

/*
 * Weights count under the weighted policy only: 1:2:3 among three busy
 * slots (three open; fixed-share: max_instances 3) is 1 s, 2 s, 3 s in 6 s
 * there (see weighted_one_two_three) and a round robin, 2 s each, under
 * the others. Equal-share and fixed-share cap each at 333334 PPM: slot k
 * is picked with 0.666668 k ms of credit and leaves it at 0.666668 (k + 1)
 * - 2 ms, which is back to 0.000004 ms when its turn comes again 4 ms
 * later, so the caps never hold anyone back.
 */
TEST_F(pol, weights_count_only_when_weighted)
{
	struct sim *s = &self->s;
	int i;

	sim_init(s, variant->policy, 3, 3, 3);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, gpuvirt_sp_set_weight(&s->sp, i, i + 1, 0));
		sim_busy(s, i);
	}
	sim_run(s, SEC(6));
	EXPECT_EQ(0ULL, s->idle_busy);
	for (i = 0; i < 3; i++) {
		u64 want = variant->policy == WE ? SEC(i + 1) : SEC(2);

		EXPECT_EQ(want, s->run[i]) TH_LOG("slot %d", i);
	}
}

/*
 * vGPUs arriving and leaving. Four open slots (fixed-share: max_instances
 * 4, so 25 % each like equal-share's 1/4).
 *  [0, 1 s): slots 0 and 1 busy. Round robin: 0.5 s each. Capped at 25 %:
 *    0 runs [0, 2), 1 runs [2, 4) and both are 0.5 s short of credit, idle
 *    until 8 ms: 125 periods of 8 ms, 0.25 s each, 0.5 s idle.
 *  [1 s, 4 s): slot 2, open and idle since 0, gets work. It may not claim
 *    what it did not use: work-conserving, it is moved up to the others'
 *    virtual time and the round robin is 2, 0, 1, ...: 1 s each. Capped,
 *    it brings at most the one slice of cap credit an idle slot can hold,
 *    so its 25 % of 3 s is exceeded by at most that.
 *  [4 s, 6 s): slot 0 goes away. Round robin of 2 and 1: 1 s each.
 *    Equal-share: 3 open, 1/3 each (333334 PPM); fixed-share stays 25 %.
 * For a capped slot, run = rate x T + credit at the start - credit at the
 * end - what the top clamp took while it waited with a full credit. The
 * credits at the ends of a window are within one slice of 0, so run is at
 * most rate x T + 2 slices, exactly. The clamp takes nothing but from the
 * arriving slot, which starts full and waits at most the two others' turns
 * (4 ms, 1 ms of credit at 25 %): everyone else leaves a turn at most
 * 0.5 ms above 0 and waits at most 4 ms more. So two slices is the bound
 * either way.
 */
TEST_F(pol, arrive_and_leave)
{
	struct sim *s = &self->s;
	const u64 S = MS(2);
	u64 share, start;

	sim_init(s, variant->policy, 4, 4, 4);
	sim_busy(s, 0);
	sim_busy(s, 1);
	sim_run(s, SEC(1));
	if (variant->conserving) {
		EXPECT_EQ(MS(500), s->run[0]);
		EXPECT_EQ(MS(500), s->run[1]);
		EXPECT_EQ(0ULL, s->idle_busy);
	} else {
		EXPECT_EQ(MS(250), s->run[0]);
		EXPECT_EQ(MS(250), s->run[1]);
		EXPECT_EQ(MS(500), s->idle_busy);
	}
	EXPECT_EQ(0ULL, s->run[2]);

	sim_window(s);
	sim_busy(s, 2);
	sim_run(s, SEC(4));
	EXPECT_EQ(SEC(4), s->now);
	if (variant->conserving) {
		EXPECT_EQ(2, s->trace[0]);
		EXPECT_EQ(0, s->trace[1]);
		EXPECT_EQ(1, s->trace[2]);
		EXPECT_EQ(SEC(1), s->run[0]);
		EXPECT_EQ(SEC(1), s->run[1]);
		EXPECT_EQ(SEC(1), s->run[2]);
		EXPECT_EQ(0ULL, s->idle_busy);
	} else {
		EXPECT_LE(s->run[2], MS(750) + S);
		EXPECT_LE(absdiff(s->run[2], MS(750)), 2 * S);
		EXPECT_LE(absdiff(s->run[0], MS(750)), 2 * S);
		EXPECT_LE(absdiff(s->run[1], MS(750)), 2 * S);
		EXPECT_EQ(s->now - SEC(1), sim_busy_ns(s) + s->idle_busy);
	}

	sim_window(s);
	start = s->now;
	sim_stop(s, 0);
	gpuvirt_sp_set_open(&s->sp, 0, false, s->now);
	gpuvirt_sp_remove(&s->sp, 0, s->now);
	sim_run(s, SEC(6));
	EXPECT_EQ(0ULL, s->run[0]);
	if (variant->conserving) {
		EXPECT_EQ(SEC(1), s->run[1]);
		EXPECT_EQ(SEC(1), s->run[2]);
		EXPECT_EQ(0ULL, s->idle_busy);
	} else {
		share = variant->policy == ES ? SEC(2) / 3 : SEC(2) / 4;
		EXPECT_LE(absdiff(s->run[1], share), 2 * S);
		EXPECT_LE(absdiff(s->run[2], share), 2 * S);
		EXPECT_EQ(s->now - start, sim_busy_ns(s) + s->idle_busy);
	}
}

/*
 * Starvation-freedom under a random load: 8 open slots with bursts of
 * random size at random periods, 20 s, once with about 1.7 times the work
 * the GPU can do and once with 0.43 times. While a slot is allowed to run
 * (runnable, and its cap credit allows it) no other slot can get ahead of
 * it by more than 2 slices of run time: a slot j runs before i only while
 * j's virtual time is not above i's; i's is at most one slice above the
 * floor and j's at least the floor (a slot joining is moved up to it), and
 * j's last run may add one slice. With equal weights that is 2 S per other
 * slot, 2 S x 7 = 28 ms in all.
 */
TEST_F(pol, starvation_free_random_load)
{
	struct sim *s = &self->s;
	const u64 S = MS(2);
	int i, heavy;

	srandom(42);
	for (heavy = 1; heavy >= 0; heavy--) {
		sim_init(s, variant->policy, 8, 8, 8);
		for (i = 0; i < 8; i++) {
			u64 period = US(100) * (10 + random() % 200);
			u64 burst = period / 32 + US(random() % 500);

			sim_load(s, i, period, heavy ? 4 * burst : burst,
				 US(random() % 5000));
		}
		sim_run(s, SEC(20));
		for (i = 0; i < 8; i++) {
			EXPECT_LE(s->max_wait_ns[i], 2 * S * 7)
				TH_LOG("slot %d, heavy %d", i, heavy);
			EXPECT_GT(s->run[i], 0ULL);
		}
		if (variant->conserving)
			EXPECT_EQ(0ULL, s->idle_busy);
		/* the light load leaves the GPU idle at times */
		if (!heavy)
			EXPECT_GT(s->idle_free + s->idle_busy, SEC(2));
	}
}

/* ---------------------------------------------------------------------- */
/* Best-effort                                                            */
/* ---------------------------------------------------------------------- */

/*
 * A slot that runs dry early is charged only what it used, and the next
 * slot starts at once: slot 0 has 0.5 ms of work, slot 1 is busy and runs
 * five 2 ms turns from 0.5 ms, the last ending at 10.5 ms.
 */
TEST(best_effort_dry_slot_charged_what_it_used)
{
	struct sim s;

	sim_init(&s, BE, 2, 1, 2);
	sim_work(&s, 0, US(500));
	sim_busy(&s, 1);
	sim_run(&s, MS(10));
	EXPECT_EQ(US(500), s.run[0]);
	EXPECT_EQ(US(500), s.sp.slot[0].run_ns);
	EXPECT_EQ(MS(10), s.run[1]);
	EXPECT_EQ(MS(10) + US(500), s.now);
	EXPECT_EQ(0ULL, s.idle_busy);
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(1, s.trace[1]);
	EXPECT_EQ(1, s.trace[2]);
	/* the vtime charged is what it ran */
	EXPECT_EQ(US(500), s.sp.slot[0].vtime);
}

/*
 * Work conservation: bursty load on 6 slots for 10 s. The engines are
 * never idle while any slot has work (idle_busy is exactly 0), so the busy
 * time is all the work that arrived, less the backlog left at the end.
 */
TEST(best_effort_bursty_load_never_idles_with_work)
{
	u64 arrived = 0, left = 0;
	struct sim s;
	int i;

	srandom(7);
	sim_init(&s, BE, 6, 1, 6);
	for (i = 0; i < 6; i++)
		sim_load(&s, i, MS(5 + i * 3), US(700 + random() % 3000),
			 US(random() % 3000));
	sim_run(&s, SEC(10));
	EXPECT_EQ(0ULL, s.idle_busy);
	/*
	 * Every arrival seen, counted back from next[] (the first came at
	 * the phase, which is below the period).
	 */
	for (i = 0; i < 6; i++) {
		u64 first = s.next[i] % s.period[i];

		arrived += (s.next[i] - first) / s.period[i] * s.burst[i];
		left += s.backlog[i];
	}
	EXPECT_EQ(arrived, sim_busy_ns(&s) + left);
	EXPECT_EQ(s.now, sim_busy_ns(&s) + s.idle_free);
	EXPECT_GT(s.idle_free, 0ULL);
}

/* ---------------------------------------------------------------------- */
/* Equal-share and fixed-share                                            */
/* ---------------------------------------------------------------------- */

/*
 * Equal-share, two busy of four open: a share of 25 % each and the rest
 * idle, never given away. 0 runs [0, 2) and ends 1.5 ms short, 1 runs
 * [2, 4) and ends 1 ms short; both are back to 0 at 8 ms: idle [4, 8).
 * 1250 periods in 10 s: 2.5 s each, 5 s idle.
 */
TEST(equal_share_idle_time_stays_idle)
{
	struct sim s;

	sim_init(&s, ES, 4, 1, 4);
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(10));
	EXPECT_EQ(SEC(10), s.now);
	EXPECT_EQ(MS(2500), s.run[0]);
	EXPECT_EQ(MS(2500), s.run[1]);
	EXPECT_EQ(SEC(5), s.idle_busy);
	EXPECT_EQ(MS(4), s.first_idle_ns);
	EXPECT_EQ(1250ULL, s.idle_picks);

	/*
	 * Two close their device: N = 2, 50 % each, 10 s busy in the
	 * next 10 s: each is picked with 0 credit at 4k ms and ends a run
	 * 1 ms short, repaid while the other runs.
	 */
	gpuvirt_sp_set_open(&s.sp, 2, false, s.now);
	gpuvirt_sp_set_open(&s.sp, 3, false, s.now);
	sim_window(&s);
	sim_run(&s, SEC(20));
	EXPECT_EQ(SEC(5), s.run[0]);
	EXPECT_EQ(SEC(5), s.run[1]);
	EXPECT_EQ(0ULL, s.idle_busy);
}

/*
 * Fixed-share: a vGPU of a type with max_instances 4 (25 %) and one of a
 * type with 2 (50 %), both busy. 0 runs [0, 2) (-1.5 ms), 1 runs [2, 4)
 * and [4, 6) (+1 then 0, then -1 ms), both are back to 0 at 8 ms: idle
 * [6, 8). 1250 periods of 8 ms in 10 s: 2.5 s, 5 s and 2.5 s idle. Others
 * coming and going do not change it.
 */
TEST(fixed_share_per_type)
{
	struct sim s;

	sim_init(&s, FS, 2, 4, 2);
	gpuvirt_sp_remove(&s.sp, 1, 0);
	ASSERT_EQ(1, gpuvirt_sp_add(&s.sp, 2, 0));
	gpuvirt_sp_set_open(&s.sp, 1, true, 0);
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(10));
	EXPECT_EQ(MS(2500), s.run[0]);
	EXPECT_EQ(MS(5000), s.run[1]);
	EXPECT_EQ(MS(2500), s.idle_busy);
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(1, s.trace[1]);
	EXPECT_EQ(1, s.trace[2]);
	EXPECT_EQ(-1, s.trace[3]);

	/* a third vGPU, open and idle, changes nothing */
	ASSERT_EQ(2, gpuvirt_sp_add(&s.sp, 4, s.now));
	gpuvirt_sp_set_open(&s.sp, 2, true, s.now);
	sim_window(&s);
	sim_run(&s, SEC(20));
	EXPECT_EQ(MS(2500), s.run[0]);
	EXPECT_EQ(MS(5000), s.run[1]);
	EXPECT_EQ(MS(2500), s.idle_busy);
}

/* ---------------------------------------------------------------------- */
/* Weighted                                                               */
/* ---------------------------------------------------------------------- */

/*
 * Weights 1:2:3, all busy, 6 s. A 2 ms run adds 6u, 3u and 2u of virtual
 * time (u = 2 ms x 10000 / 6). From 0, 0, 0: A (tie, lowest), B (tie after
 * A), C (tie after B), C (2u < 3u), B (3u < 4u), C (4u < 6u); all at 6u,
 * last C, so A again: the period is A B C C B C, 12 ms, 500 periods in 6 s:
 * 1 s, 2 s and 3 s exactly. Under best-effort the weights do not count.
 */
TEST(weighted_one_two_three)
{
	static const int order[] = { 0, 1, 2, 2, 1, 2 };
	struct sim s;
	int i;

	sim_init(&s, WE, 3, 1, 3);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 2, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 2, 3, 0));
	for (i = 0; i < 3; i++)
		sim_busy(&s, i);
	sim_run(&s, SEC(6));
	EXPECT_EQ(SEC(1), s.run[0]);
	EXPECT_EQ(SEC(2), s.run[1]);
	EXPECT_EQ(SEC(3), s.run[2]);
	EXPECT_EQ(0ULL, s.idle_busy);
	for (i = 0; i < 24; i++)
		EXPECT_EQ(order[i % 6], s.trace[i]) TH_LOG("pick %d", i);

	sim_init(&s, BE, 3, 1, 3);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 2, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 2, 3, 0));
	for (i = 0; i < 3; i++)
		sim_busy(&s, i);
	sim_run(&s, SEC(6));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(SEC(2), s.run[i]);
}

/*
 * Shares follow the weights of the busy slots only: weights 1:2:3 with
 * the weight-3 slot idle is 1:2, and it is work-conserving: A runs once
 * (2 ms x 10000 / 1 of vtime), B twice to catch up, so 1/3 and 2/3.
 */
TEST(weighted_idle_slot_gives_way)
{
	struct sim s;

	sim_init(&s, WE, 3, 1, 3);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 2, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 2, 3, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(6));
	EXPECT_EQ(SEC(2), s.run[0]);
	EXPECT_EQ(SEC(4), s.run[1]);
	EXPECT_EQ(0ULL, s.idle_busy);
}

/*
 * Extreme weights, 1 and 10000: still no starvation. A 2 ms run of the
 * weight-1 slot adds 2e10 of virtual time, one of the weight-10000 slot
 * 2e6, so after A's turn B runs until it has caught up: 10000 turns, 20 s;
 * then the tie goes to A (lowest after B). A gets exactly 1/10001 and
 * waits exactly 10000 picks, 20 s, each time: the bound of the policy,
 * (10000 / 1 + 1) slices, holds.
 */
TEST(weighted_extreme_weights_bounded_wait)
{
	struct sim s;

	sim_init(&s, WE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 10000, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, MS(2) * 10001 * 3);
	EXPECT_EQ(3ULL, s.picks[0]);
	EXPECT_EQ(30000ULL, s.picks[1]);
	EXPECT_EQ(10000ULL, s.max_wait_picks[0]);
	EXPECT_EQ(MS(2) * 10000, s.max_wait_ns[0]);
	EXPECT_LE(s.max_wait_ns[0], MS(2) * (10000 / 1 + 1));
	EXPECT_EQ(1ULL, s.max_wait_picks[1]);
}

/* ---------------------------------------------------------------------- */
/* Minimum and cap                                                        */
/* ---------------------------------------------------------------------- */

/*
 * A cap of 10 % next to a busy uncapped slot (best-effort): A runs [0, 2)
 * and is 1.8 ms short, B runs 9 turns; at 20 ms A is back to 0 and joins
 * at B's virtual time, the tie goes to A (after B): period 20 ms, 1 s and
 * 9 s in 10 s, nothing idle.
 */
TEST(cap_ten_percent_next_to_busy)
{
	struct sim s;

	sim_init(&s, BE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 0, 0, 10, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(10));
	EXPECT_EQ(SEC(1), s.run[0]);
	EXPECT_EQ(SEC(9), s.run[1]);
	EXPECT_EQ(0ULL, s.idle_busy);
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(1, s.trace[9]);
	EXPECT_EQ(0, s.trace[10]);
}

/*
 * A minimum of 50 % for a weight-1 slot A next to a weight-9 slot B
 * (weighted). Without the minimum A gets 1/10: it runs, B runs 9 turns to
 * catch up, the tie goes to A: 20 ms periods, 0.6 s and 5.4 s in 6 s.
 *
 * With it: A's minimum credit c goes -1, 0, +1 ms around its turns, and A
 * runs whenever c > 0: A(vtime), B, B, then A(min), B alternating, a
 * minimum turn not advancing A's vtime. B catches up with A's vtime after
 * 9 turns: A(min) at 34 ms, B wins the tie at 36, A(min) at 38 and A(vtime)
 * at 40, which starts a 36 ms cycle of 9 turns each (A at 40, 46, 50, ...
 * 74; B at 42, 44, 48, ... 72). So each has half of [0, 40) and of every
 * cycle; 6 s ends 20 ms into cycle 165, 5 turns each: 3 s and 3 s exactly.
 */
TEST(min_half_weight_one_vs_nine)
{
	struct sim s;

	sim_init(&s, WE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 9, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(6));
	EXPECT_EQ(MS(600), s.run[0]);
	EXPECT_EQ(MS(5400), s.run[1]);

	sim_init(&s, WE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 9, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 0, 50, 100, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(6));
	EXPECT_EQ(SEC(3), s.run[0]);
	EXPECT_EQ(SEC(3), s.run[1]);
	EXPECT_EQ(0ULL, s.idle_busy);
	/* the first 22 turns, as worked out above */
	{
		static const int order[] = {
			0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1,
			0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1,
		};
		int i;

		for (i = 0; i < (int)ARRAY_SIZE(order); i++)
			EXPECT_EQ(order[i], s.trace[i]) TH_LOG("pick %d", i);
	}
}

/*
 * A minimum is a floor, not a bonus: a weight-9 slot with a minimum of
 * 50 % next to a weight-1 slot keeps its 90 %.
 */
TEST(min_below_share_changes_nothing)
{
	struct sim s;

	sim_init(&s, WE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 9, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 1, 50, 100, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(6));
	EXPECT_EQ(MS(600), s.run[0]);
	EXPECT_EQ(MS(5400), s.run[1]);
}

/*
 * Minimums adding up to 100 %: 90 % for slot 0 and 1 % for each of slots
 * 1..10, all busy under best-effort. The owed slot with the earliest
 * deadline runs first, so the big minimum is not held up by ten small ones
 * (a round robin among owed slots would give slot 0 one turn in eleven).
 * Every slot gets its minimum over 10 s less at most 2 slices: one slice
 * of credit held at the end, and one lost to the top clamp while it waits
 * behind a slice already started.
 */
TEST(min_many_guaranteed)
{
	const u64 T = SEC(10), S = MS(1);
	struct sim s;
	int i;

	sim_init(&s, BE, 11, 1, 11);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 0, 90, 100, 0));
	for (i = 1; i < 11; i++)
		ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, i, 1, 100, 0));
	for (i = 0; i < 11; i++)
		sim_busy(&s, i);
	EXPECT_EQ(MS(1), gpuvirt_sp_slice(&s.sp));
	sim_run(&s, T);
	EXPECT_GE(s.run[0] + 2 * S, T / 100 * 90);
	for (i = 1; i < 11; i++)
		EXPECT_GE(s.run[i] + 2 * S, T / 100) TH_LOG("slot %d", i);
	EXPECT_EQ(0ULL, s.idle_busy);
}

/*
 * A minimum is earned only while there is work: a slot with a minimum of
 * 50 % that was idle for a second is owed nothing; 1 ms after getting work
 * (while another slot's turn goes on) it is owed 0.5 ms, and it runs next.
 */
TEST(min_earned_only_with_work)
{
	struct gpuvirt_sp_pick p;
	struct sim s;

	sim_init(&s, BE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 1, 50, 100, 0));
	sim_busy(&s, 0);
	sim_run(&s, SEC(1));
	gpuvirt_sp_pick(&s.sp, s.now, &p);
	ASSERT_EQ(0, p.slot);
	EXPECT_EQ(0LL, s.sp.slot[1].min_credit);
	gpuvirt_sp_set_runnable(&s.sp, 1, true, s.now + MS(1));
	EXPECT_EQ(0LL, s.sp.slot[1].min_credit);
	gpuvirt_sp_charge(&s.sp, 0, MS(2), s.now + MS(2));
	EXPECT_EQ((s64)US(500) * GPUVIRT_SP_PPM, s.sp.slot[1].min_credit);
	gpuvirt_sp_pick(&s.sp, s.now + MS(2), &p);
	EXPECT_EQ(1, p.slot);
	EXPECT_TRUE(s.sp.running_min);
}

/*
 * Minimums hold in any mix: 200 random mixes (seeded) of 2 to 16 busy
 * slots under a random policy, random weights and types, minimums drawn
 * until they sum to at most 100 (often exactly), and turns that overrun
 * their slice by up to 99 us at random. Over 2 s each slot gets its minimum
 * less at most 2 slices (the bound of min_many_guaranteed).
 */
TEST(min_guaranteed_random_mixes)
{
	int trial, i, n, left;
	u32 mins[NSLOT];

	srandom(1);
	for (trial = 0; trial < 200; trial++) {
		u64 run[NSLOT] = { 0 }, now = 0, S, r;
		struct gpuvirt_sp_pick p;
		struct gpuvirt_sp sp;

		n = 2 + random() % 15;
		left = 100;
		gpuvirt_sp_init(&sp, 0);
		ASSERT_EQ(0, gpuvirt_sp_set_policy(&sp, random() % 4, 0));
		for (i = 0; i < n; i++) {
			ASSERT_EQ(i, gpuvirt_sp_add(&sp, 1 + random() % 16, 0));
			gpuvirt_sp_set_open(&sp, i, true, 0);
			ASSERT_EQ(0, gpuvirt_sp_set_weight(&sp, i,
							   1 + random() % 10000,
							   0));
			mins[i] = random() % 3 ? random() % (left + 1) : 0;
			if (i == n - 1 && random() % 2)
				mins[i] = left;
			left -= mins[i];
			ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, i, mins[i], 100,
							   0));
			gpuvirt_sp_set_runnable(&sp, i, true, 0);
		}
		S = gpuvirt_sp_slice(&sp);
		while (now < SEC(2)) {
			gpuvirt_sp_pick(&sp, now, &p);
			if (p.slot < 0) {
				now += p.ns;
				continue;
			}
			r = p.ns + (random() % 2 ? random() % US(100) : 0);
			now += r;
			run[p.slot] += r;
			gpuvirt_sp_charge(&sp, p.slot, r, now);
		}
		for (i = 0; i < n; i++)
			ASSERT_GE(run[i] + 2 * S, now / 100 * mins[i])
				TH_LOG("trial %d slot %d of %d, policy %u, min %u",
				       trial, i, n, sp.policy, mins[i]);
	}
}

/*
 * A minimum of 99 % leaves a slot without one at least 1 %, and a bounded
 * wait: each minimum turn takes 0.01 slice off the credit of the owed slot,
 * which is at most one slice, so after at most 100 of them it is not owed
 * and the other slot, lowest in virtual time, runs.
 */
TEST(min_99_bounded_wait)
{
	struct sim s;

	sim_init(&s, BE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&s.sp, 0, 99, 100, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(10));
	EXPECT_LE(s.max_wait_picks[1], 100ULL);
	EXPECT_GE(s.run[1], MS(100) - MS(4));
	EXPECT_GE(s.run[0] + MS(4), MS(9900));
}

/*
 * A run that overran its slice is paid back in full: a slot capped at 10 %
 * runs 2.5 ms of a 2 ms slice (the last chunk ran long), earning 0.25 ms
 * meanwhile, and must wait 2.25 / 0.1 = 22.5 ms, not the 20 ms a clamp at
 * one slice of debt would leave.
 */
TEST(overrun_paid_back)
{
	struct gpuvirt_sp_pick p;
	struct gpuvirt_sp sp;

	gpuvirt_sp_init(&sp, 0);
	ASSERT_EQ(0, gpuvirt_sp_add(&sp, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 0, 10, 0));
	gpuvirt_sp_set_runnable(&sp, 0, true, 0);
	gpuvirt_sp_pick(&sp, 0, &p);
	ASSERT_EQ(0, p.slot);
	ASSERT_EQ(MS(2), p.ns);
	gpuvirt_sp_charge(&sp, 0, US(2500), US(2500));
	EXPECT_EQ(-(s64)US(2250) * GPUVIRT_SP_PPM, sp.slot[0].cap_credit);
	gpuvirt_sp_pick(&sp, US(2500), &p);
	EXPECT_EQ(-1, p.slot);
	EXPECT_EQ(US(22500), p.ns);
	/* one ns early is still too early, on time is on time */
	gpuvirt_sp_pick(&sp, MS(25) - 1, &p);
	EXPECT_EQ(-1, p.slot);
	EXPECT_EQ(1ULL, p.ns);
	gpuvirt_sp_pick(&sp, MS(25), &p);
	EXPECT_EQ(0, p.slot);
}

/*
 * Time steps far beyond anything real neither overflow nor bank: a run
 * charged as 10^15 ns leaves the debt at its floor, two slices, which a
 * 10 % cap repays in 40 ms; 10^18 ns of idle fills the credit to one slice
 * and no more. A clock that goes back changes nothing.
 */
TEST(huge_time_steps_saturate)
{
	const u64 big = 1000000000000000ULL;
	struct gpuvirt_sp_pick p;
	struct gpuvirt_sp sp;

	gpuvirt_sp_init(&sp, 0);
	ASSERT_EQ(0, gpuvirt_sp_add(&sp, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_limits(&sp, 0, 10, 10, 0));
	gpuvirt_sp_set_runnable(&sp, 0, true, 0);
	gpuvirt_sp_pick(&sp, 0, &p);
	ASSERT_EQ(0, p.slot);
	gpuvirt_sp_charge(&sp, 0, big, big);
	EXPECT_EQ(-2 * (s64)MS(2) * GPUVIRT_SP_PPM, sp.slot[0].cap_credit);
	EXPECT_EQ(-(s64)MS(2) * GPUVIRT_SP_PPM, sp.slot[0].min_credit);
	EXPECT_EQ(big, sp.slot[0].run_ns);
	gpuvirt_sp_pick(&sp, big, &p);
	EXPECT_EQ(-1, p.slot);
	EXPECT_EQ(MS(40), p.ns);
	gpuvirt_sp_pick(&sp, 1000 * big, &p);
	EXPECT_EQ(0, p.slot);
	EXPECT_EQ((s64)MS(2) * GPUVIRT_SP_PPM, sp.slot[0].cap_credit);
	EXPECT_EQ((s64)MS(2) * GPUVIRT_SP_PPM, sp.slot[0].min_credit);
	/*
	 * A 2 ms turn from a full credit leaves the 0.2 ms earned during
	 * the turn: the top clamp waits until the run is charged.
	 */
	gpuvirt_sp_charge(&sp, 0, MS(2), 1000 * big + MS(2));
	EXPECT_EQ(1000 * big + MS(2), sp.now);
	EXPECT_EQ((s64)MS(2) * 100000, sp.slot[0].cap_credit);
	/* back in time: no accrual, the clock stays */
	gpuvirt_sp_pick(&sp, 5, &p);
	EXPECT_EQ(0, p.slot);
	EXPECT_EQ(1000 * big + MS(2), sp.now);
	EXPECT_EQ((s64)MS(2) * 100000, sp.slot[0].cap_credit);
}

/* ---------------------------------------------------------------------- */
/* Live changes                                                           */
/* ---------------------------------------------------------------------- */

/*
 * Equal-share with one busy slot of eight: 2 ms every 16 ms. At 1 s it is
 * 8 ms into its 63rd period, 126 ms run and 874 ms idle, with -1 ms of
 * credit. Switched to best-effort there, it runs from that very pick on:
 * not one ns idle in the next second. Switched back, idle time returns:
 * the debt left by the run that ends at 2 s is repaid at 1/8 again.
 */
TEST(switch_equal_share_to_best_effort)
{
	struct sim s;

	sim_init(&s, ES, 8, 8, 8);
	sim_busy(&s, 0);
	sim_run(&s, SEC(1));
	EXPECT_EQ(MS(126), s.run[0]);
	EXPECT_EQ(MS(874), s.idle_busy);

	ASSERT_EQ(0, gpuvirt_sp_set_policy(&s.sp, BE, s.now));
	EXPECT_EQ(-(s64)MS(1) * GPUVIRT_SP_PPM, s.sp.slot[0].cap_credit);
	sim_window(&s);
	sim_run(&s, SEC(2));
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(SEC(1), s.run[0]);
	EXPECT_EQ(0ULL, s.idle_busy);

	/*
	 * Uncapped, its credit gained what it spent and stayed at -1 ms.
	 * Back to equal-share, that debt is still owed: 8 ms idle at 1/8,
	 * one turn, 14 ms idle.
	 */
	EXPECT_EQ(-(s64)MS(1) * GPUVIRT_SP_PPM, s.sp.slot[0].cap_credit);
	ASSERT_EQ(0, gpuvirt_sp_set_policy(&s.sp, ES, s.now));
	sim_window(&s);
	sim_run(&s, SEC(2) + MS(8) + MS(2) + MS(14));
	EXPECT_EQ(-1, s.trace[0]);
	EXPECT_EQ(0, s.trace[1]);
	EXPECT_EQ(MS(2), s.run[0]);
	EXPECT_EQ(MS(22), s.idle_busy);
	EXPECT_EQ(MS(8), s.first_idle_ns);
}

/*
 * Weighted to best-effort with weights 1 and 10000: the weight-1 slot A
 * ran once (vtime 2e10) and B ten times (2e7), the floor is B's vtime at
 * the last pick, 1.8e7. A's lead over it, 19982e6, is rescaled to the run
 * time it stands for, 1998200 ns: A is now 1800 ns behind B and runs first,
 * then the two alternate; it does not wait 9990 more turns of B.
 */
TEST(switch_weighted_to_best_effort_rescales_lead)
{
	struct sim s;

	sim_init(&s, WE, 2, 1, 2);
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 0, 1, 0));
	ASSERT_EQ(0, gpuvirt_sp_set_weight(&s.sp, 1, 10000, 0));
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, MS(2) * 11);
	EXPECT_EQ(MS(2), s.run[0]);
	EXPECT_EQ(MS(20), s.run[1]);
	ASSERT_EQ(0, gpuvirt_sp_set_policy(&s.sp, BE, s.now));
	sim_window(&s);
	sim_run(&s, s.now + MS(2) * 6);
	EXPECT_EQ(19998200ULL, s.sp.slot[0].vtime - MS(6));
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(1, s.trace[1]);
	EXPECT_EQ(0, s.trace[2]);
	EXPECT_EQ(MS(6), s.run[0]);
	EXPECT_EQ(MS(6), s.run[1]);
}

/* A new slice is the one handed out from the next pick on. */
TEST(slice_change_is_live)
{
	struct gpuvirt_sp_pick p;
	struct sim s;

	sim_init(&s, BE, 2, 1, 2);
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	gpuvirt_sp_pick(&s.sp, 0, &p);
	EXPECT_EQ(MS(2), p.ns);
	gpuvirt_sp_charge(&s.sp, p.slot, MS(2), MS(2));
	ASSERT_EQ(0, gpuvirt_sp_set_slice(&s.sp, US(500), MS(2)));
	gpuvirt_sp_pick(&s.sp, MS(2), &p);
	EXPECT_EQ(1, p.slot);
	EXPECT_EQ(US(500), p.ns);
	gpuvirt_sp_charge(&s.sp, p.slot, US(500), MS(2) + US(500));
	/* the 9th vGPU halves the default slice */
	ASSERT_EQ(0, gpuvirt_sp_set_slice(&s.sp, 0, MS(3)));
	gpuvirt_sp_pick(&s.sp, MS(3), &p);
	EXPECT_EQ(MS(2), p.ns);
	gpuvirt_sp_charge(&s.sp, p.slot, MS(2), MS(5));
	while (gpuvirt_sp_add(&s.sp, 1, MS(5)) < 8)
		;
	gpuvirt_sp_pick(&s.sp, MS(5), &p);
	EXPECT_EQ(MS(1), p.ns);
}

/*
 * An arriving slot cannot claim banked time. Best-effort, two busy slots
 * for 5 s; a third, idle all that time (its virtual time is 0, theirs
 * 2.5 s), gets work: it is moved up to theirs and gets 1/3 from then on,
 * not 2.5 s in one go. Equal-share: it banked one slice of cap credit,
 * no more, and from then on run <= rate x T + credit before - credit after
 * (equal but for what the top clamp takes while it waits with its credit
 * full), so it gets 1/3 (of 3 open) plus at most that one slice.
 */
TEST(arriving_slot_cannot_claim_banked_time)
{
	struct sim s;
	s64 credit;
	int i;

	sim_init(&s, BE, 3, 1, 3);
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(5));
	EXPECT_EQ(0ULL, s.sp.slot[2].vtime);
	sim_window(&s);
	sim_busy(&s, 2);
	sim_run(&s, SEC(8));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(SEC(1), s.run[i]) TH_LOG("slot %d", i);
	EXPECT_LE(s.max_wait_picks[0], 2ULL);
	EXPECT_LE(s.max_wait_picks[1], 2ULL);

	sim_init(&s, ES, 3, 1, 3);
	sim_busy(&s, 0);
	sim_busy(&s, 1);
	sim_run(&s, SEC(5));
	credit = s.sp.slot[2].cap_credit;
	EXPECT_EQ((s64)MS(2) * GPUVIRT_SP_PPM, credit);
	sim_window(&s);
	sim_busy(&s, 2);
	sim_run(&s, SEC(8));
	ASSERT_EQ(s.now, s.sp.now);
	EXPECT_GE((s64)(s.now - SEC(5)) * 333334 + credit,
		  (s64)s.run[2] * GPUVIRT_SP_PPM + s.sp.slot[2].cap_credit);
	EXPECT_LE(absdiff(s.run[2], SEC(1)), MS(4));
}

/*
 * Virtual times near the top of their range are moved down together: the
 * round robin goes on, in the same order.
 */
TEST(vtime_renormalised)
{
	struct sim s;
	int i;

	sim_init(&s, BE, 3, 1, 3);
	for (i = 0; i < 3; i++) {
		s.sp.slot[i].vtime = GPUVIRT_SP_VTIME_RENORM + 5;
		sim_busy(&s, i);
	}
	s.sp.slot[1].vtime += 1;
	s.sp.vfloor = GPUVIRT_SP_VTIME_RENORM - 1;
	sim_run(&s, MS(2) * 6);
	EXPECT_EQ(0, s.trace[0]);
	EXPECT_EQ(2, s.trace[1]);
	EXPECT_EQ(1, s.trace[2]);
	EXPECT_LT(s.sp.vfloor, MS(100));
	EXPECT_LT(s.sp.slot[0].vtime, MS(100));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(MS(4), s.run[i]);
}

TEST_HARNESS_MAIN
