// SPDX-License-Identifier: GPL-2.0-only
/*
 * The time-slice scheduling policy of one GPU. The model, the credits and
 * the pick are described in sched_policy.h; Documentation/scheduler.rst
 * says the same for admins. Every entry point first brings the credits up
 * to @now at the rates in force until then, and only then changes state,
 * so that a live change takes effect exactly from @now.
 */
#include "pure.h"
#include "sched_policy.h"

#define GPUVIRT_SP_PCT_PPM	(GPUVIRT_SP_PPM / 100)

static bool gpuvirt_sp_valid(const struct gpuvirt_sp *sp, int slot)
{
	return slot >= 0 && slot < GPUVIRT_SP_SLOTS && sp->slot[slot].used;
}

/**
 * gpuvirt_sp_slice() - the slice in force
 * @sp: the policy state
 *
 * Return: the configured slice, or the default for the number of vGPUs.
 */
u64 gpuvirt_sp_slice(const struct gpuvirt_sp *sp)
{
	if (sp->slice_ns)
		return sp->slice_ns;
	if (sp->nr_used <= GPUVIRT_SP_SLICE_SMALL_MAX_VGPUS)
		return GPUVIRT_SP_SLICE_SMALL_NS;
	return GPUVIRT_SP_SLICE_LARGE_NS;
}

/* A rate of 1/@n, rounded up; see "policy rate" in sched_policy.h. */
static u32 gpuvirt_sp_share(u32 n)
{
	u32 ppm;

	if (!n)
		n = 1;
	ppm = (GPUVIRT_SP_PPM + n - 1) / n;
	return ppm < GPUVIRT_SP_RATE_MIN_PPM ? GPUVIRT_SP_RATE_MIN_PPM : ppm;
}

static u32 gpuvirt_sp_cap_rate(const struct gpuvirt_sp *sp,
			       const struct gpuvirt_sp_slot *s)
{
	u32 cap = s->max_pct * GPUVIRT_SP_PCT_PPM;
	u32 min = s->min_pct * GPUVIRT_SP_PCT_PPM;
	u32 share;

	switch (sp->policy) {
	case GPUVIRT_SCHED_POLICY_EQUAL_SHARE:
		share = gpuvirt_sp_share(sp->nr_open);
		break;
	case GPUVIRT_SCHED_POLICY_FIXED_SHARE:
		share = gpuvirt_sp_share(s->max_instances);
		break;
	default:
		share = GPUVIRT_SP_PPM;
		break;
	}
	if (share < cap)
		cap = share;
	return cap < min ? min : cap;
}

/**
 * gpuvirt_sp_max_ppm() - a slot's effective cap
 * @sp: the policy state
 * @slot: the slot
 *
 * Return: the most of the GPU the slot may use under the policy in force,
 * in PPM (GPUVIRT_SP_PPM: no cap), or 0 for a slot not in use.
 */
u32 gpuvirt_sp_max_ppm(const struct gpuvirt_sp *sp, int slot)
{
	if (!gpuvirt_sp_valid(sp, slot))
		return 0;
	return gpuvirt_sp_cap_rate(sp, &sp->slot[slot]);
}

/**
 * gpuvirt_sp_min_ppm() - a slot's guaranteed minimum
 * @sp: the policy state
 * @slot: the slot
 *
 * Return: the share of the GPU the slot gets at least while busy, in PPM,
 * or 0 for a slot not in use.
 */
u32 gpuvirt_sp_min_ppm(const struct gpuvirt_sp *sp, int slot)
{
	if (!gpuvirt_sp_valid(sp, slot))
		return 0;
	return sp->slot[slot].min_pct * GPUVIRT_SP_PCT_PPM;
}

static u32 gpuvirt_sp_weight(const struct gpuvirt_sp *sp,
			     const struct gpuvirt_sp_slot *s)
{
	if (sp->policy == GPUVIRT_SCHED_POLICY_WEIGHTED)
		return s->weight;
	return GPUVIRT_SP_WEIGHT_MAX;
}

/*
 * @c plus @dt ns at @rate, clamped to @top (see GPUVIRT_SP_STEP_MAX_NS).
 * The running slot's credits are not clamped until its run is charged:
 * what it earns while it runs pays for that run, and is not lost.
 */
static s64 gpuvirt_sp_credit_add(s64 c, u64 dt, u32 rate, s64 top,
				 bool running)
{
	s64 inc;

	if (dt > GPUVIRT_SP_STEP_MAX_NS)
		dt = GPUVIRT_SP_STEP_MAX_NS;
	inc = (s64)(dt * rate);
	if (running)
		top = (s64)(GPUVIRT_SP_STEP_MAX_NS * GPUVIRT_SP_PPM);
	return inc >= top - c ? top : c + inc;
}

/* @c less @ran ns, clamped to [@bottom, @top]. */
static s64 gpuvirt_sp_credit_sub(s64 c, u64 ran, s64 bottom, s64 top)
{
	if (ran > GPUVIRT_SP_STEP_MAX_NS)
		ran = GPUVIRT_SP_STEP_MAX_NS;
	c -= (s64)(ran * GPUVIRT_SP_PPM);
	if (c > top)
		return top;
	return c < bottom ? bottom : c;
}

/* Bring every credit up to @now at the rates in force since sp->now. */
static void gpuvirt_sp_accrue(struct gpuvirt_sp *sp, u64 now)
{
	s64 top = (s64)(gpuvirt_sp_slice(sp) * GPUVIRT_SP_PPM);
	u64 dt = now > sp->now ? now - sp->now : 0;
	unsigned long used = sp->used_mask;
	struct gpuvirt_sp_slot *s;
	bool running;
	u32 rate;
	int i;

	if (!dt)
		return;
	for_each_set_bit(i, &used, GPUVIRT_SP_SLOTS) {
		s = &sp->slot[i];
		running = i == sp->running;
		rate = gpuvirt_sp_cap_rate(sp, s);
		s->cap_credit = gpuvirt_sp_credit_add(s->cap_credit, dt, rate,
						      top, running);
		if (!s->runnable && !running)
			continue;
		rate = s->min_pct * GPUVIRT_SP_PCT_PPM;
		s->min_credit = gpuvirt_sp_credit_add(s->min_credit, dt, rate,
						      top, running);
	}
	sp->now = now;
}

/* Add @ran ns of run time to a slot's virtual time, at its weight. */
static void gpuvirt_sp_vtime_add(struct gpuvirt_sp *sp,
				 struct gpuvirt_sp_slot *s, u64 ran)
{
	u32 rem;

	if (ran > GPUVIRT_SP_STEP_MAX_NS)
		ran = GPUVIRT_SP_STEP_MAX_NS;
	s->vtime += div_u64_rem(ran * GPUVIRT_SP_WEIGHT_MAX + s->vtime_rem,
				gpuvirt_sp_weight(sp, s), &rem);
	s->vtime_rem = rem;
}

/*
 * The weight in force of @s goes from @old to @new: rescale its lead over
 * the floor so that it stands for the same run time as before.
 */
static void gpuvirt_sp_reweigh(struct gpuvirt_sp *sp,
			       struct gpuvirt_sp_slot *s, u32 old, u32 new)
{
	/* A lead is at most one slice (plus an overrun) at the old weight. */
	const u64 lead_max = 2 * GPUVIRT_SP_SLICE_MAX_NS * GPUVIRT_SP_WEIGHT_MAX;
	u64 lead;

	if (old == new)
		return;
	lead = s->vtime > sp->vfloor ? s->vtime - sp->vfloor : 0;
	if (lead > lead_max)
		lead = lead_max;
	s->vtime = sp->vfloor + div_u64(lead * old, new);
	s->vtime_rem = 0;
}

static bool gpuvirt_sp_may_run(const struct gpuvirt_sp *sp,
			       const struct gpuvirt_sp_slot *s)
{
	if (!s->used || !s->runnable)
		return false;
	return s->cap_credit >= 0 ||
	       gpuvirt_sp_cap_rate(sp, s) >= GPUVIRT_SP_PPM;
}

/* Tie-break rank: 0 for the slot after the last picked, and so on. */
static unsigned int gpuvirt_sp_rank(const struct gpuvirt_sp *sp, int i)
{
	return (unsigned int)(i - sp->last - 1 + 2 * GPUVIRT_SP_SLOTS) %
	       GPUVIRT_SP_SLOTS;
}

/*
 * Find the slots that may run, move those that join up to the floor, and
 * move the floor up. Return the mask of the slots that may run.
 */
static u32 gpuvirt_sp_join(struct gpuvirt_sp *sp)
{
	unsigned long used = sp->used_mask, may;
	u64 floor = sp->vfloor, low = U64_MAX;
	struct gpuvirt_sp_slot *s;
	u32 mask = 0;
	int i;

	for_each_set_bit(i, &used, GPUVIRT_SP_SLOTS) {
		s = &sp->slot[i];
		if (!gpuvirt_sp_may_run(sp, s))
			continue;
		mask |= 1U << i;
		if ((sp->may_run & (1U << i)) && s->vtime < low)
			low = s->vtime;
	}
	if (low != U64_MAX && low > floor)
		floor = low;
	low = U64_MAX;
	may = mask;
	for_each_set_bit(i, &may, GPUVIRT_SP_SLOTS) {
		s = &sp->slot[i];
		if (!(sp->may_run & (1U << i)) && s->vtime < floor) {
			s->vtime = floor;
			s->vtime_rem = 0;
		}
		if (s->vtime < low)
			low = s->vtime;
	}
	sp->may_run = mask;
	if (mask && low > sp->vfloor)
		sp->vfloor = low;

	if (sp->vfloor >= GPUVIRT_SP_VTIME_RENORM) {
		floor = sp->vfloor;
		for (i = 0; i < GPUVIRT_SP_SLOTS; i++) {
			s = &sp->slot[i];
			s->vtime = s->vtime > floor ? s->vtime - floor : 0;
		}
		sp->vfloor = 0;
	}
	return mask;
}

/* The slot owed its minimum with the earliest deadline, or -1. */
static int gpuvirt_sp_pick_owed(const struct gpuvirt_sp *sp, u32 mask)
{
	s64 top = (s64)(gpuvirt_sp_slice(sp) * GPUVIRT_SP_PPM);
	u64 deadline, best_deadline = U64_MAX;
	const struct gpuvirt_sp_slot *s;
	unsigned int rank, best_rank = 0;
	unsigned long may = mask;
	int i, best = -1;

	for_each_set_bit(i, &may, GPUVIRT_SP_SLOTS) {
		s = &sp->slot[i];
		if (!s->min_pct || s->min_credit <= 0)
			continue;
		/* above the top when the slice just shrank: due now */
		deadline = 0;
		if (s->min_credit < top)
			deadline = div_u64((u64)(top - s->min_credit),
					   s->min_pct * GPUVIRT_SP_PCT_PPM);
		rank = gpuvirt_sp_rank(sp, i);
		if (best < 0 || deadline < best_deadline ||
		    (deadline == best_deadline && rank < best_rank)) {
			best = i;
			best_deadline = deadline;
			best_rank = rank;
		}
	}
	return best;
}

/* The slot with the lowest virtual time, or -1. */
static int gpuvirt_sp_pick_vtime(const struct gpuvirt_sp *sp, u32 mask)
{
	unsigned int rank, best_rank = 0;
	unsigned long may = mask;
	u64 best_vtime = U64_MAX;
	int i, best = -1;

	for_each_set_bit(i, &may, GPUVIRT_SP_SLOTS) {
		rank = gpuvirt_sp_rank(sp, i);
		if (best < 0 || sp->slot[i].vtime < best_vtime ||
		    (sp->slot[i].vtime == best_vtime && rank < best_rank)) {
			best = i;
			best_vtime = sp->slot[i].vtime;
			best_rank = rank;
		}
	}
	return best;
}

/* Nothing may run: how long until a runnable slot's cap credit is back. */
static u64 gpuvirt_sp_idle_ns(const struct gpuvirt_sp *sp)
{
	unsigned long used = sp->used_mask;
	const struct gpuvirt_sp_slot *s;
	u64 ns = U64_MAX, wait;
	u32 rate;
	int i;

	for_each_set_bit(i, &used, GPUVIRT_SP_SLOTS) {
		s = &sp->slot[i];
		if (!s->runnable || s->cap_credit >= 0)
			continue;
		rate = gpuvirt_sp_cap_rate(sp, s);
		wait = div_u64((u64)-s->cap_credit + rate - 1, rate);
		if (wait < ns)
			ns = wait;
	}
	return ns;
}

/**
 * gpuvirt_sp_pick() - decide who runs next
 * @sp: the policy state
 * @now: the time, in ns of the caller's clock
 * @pick: the decision
 *
 * The slot picked, if any, is running until gpuvirt_sp_charge().
 */
void gpuvirt_sp_pick(struct gpuvirt_sp *sp, u64 now,
		     struct gpuvirt_sp_pick *pick)
{
	u32 mask;
	int best;

	gpuvirt_sp_accrue(sp, now);
	mask = gpuvirt_sp_join(sp);
	sp->running = -1;
	sp->running_min = false;

	best = gpuvirt_sp_pick_owed(sp, mask);
	if (best >= 0)
		sp->running_min = true;
	else
		best = gpuvirt_sp_pick_vtime(sp, mask);
	if (best < 0) {
		pick->slot = -1;
		pick->ns = gpuvirt_sp_idle_ns(sp);
		return;
	}
	sp->running = best;
	sp->last = best;
	sp->slot[best].slices++;
	pick->slot = best;
	pick->ns = gpuvirt_sp_slice(sp);
}

/**
 * gpuvirt_sp_charge() - account the run of a slot
 * @sp: the policy state
 * @slot: the slot that ran, normally the one picked last
 * @ran_ns: how long it ran
 * @now: the time, in ns of the caller's clock
 */
void gpuvirt_sp_charge(struct gpuvirt_sp *sp, int slot, u64 ran_ns, u64 now)
{
	s64 slice = (s64)(gpuvirt_sp_slice(sp) * GPUVIRT_SP_PPM);
	struct gpuvirt_sp_slot *s;
	bool by_min = slot == sp->running && sp->running_min;

	gpuvirt_sp_accrue(sp, now);
	sp->running = -1;
	sp->running_min = false;
	if (!gpuvirt_sp_valid(sp, slot))
		return;
	s = &sp->slot[slot];
	s->cap_credit = gpuvirt_sp_credit_sub(s->cap_credit, ran_ns, -2 * slice,
					      slice);
	s->min_credit = gpuvirt_sp_credit_sub(s->min_credit, ran_ns, -slice,
					      slice);
	if (!by_min)
		gpuvirt_sp_vtime_add(sp, s, ran_ns);
	s->run_ns += ran_ns;
}

/**
 * gpuvirt_sp_init() - start a policy state with no slots
 * @sp: the policy state
 * @now: the time, in ns of the caller's clock
 *
 * The policy is best-effort and the slice the default.
 */
void gpuvirt_sp_init(struct gpuvirt_sp *sp, u64 now)
{
	memset(sp, 0, sizeof(*sp));
	sp->policy = GPUVIRT_SCHED_POLICY_BEST_EFFORT;
	sp->now = now;
	sp->last = -1;
	sp->running = -1;
}

/**
 * gpuvirt_sp_add() - take a slot for a new vGPU
 * @sp: the policy state
 * @max_instances: of the vGPU's type, for fixed-share; 0 counts as 1
 * @now: the time, in ns of the caller's clock
 *
 * The slot is neither open nor runnable, with the default weight, no
 * minimum, no cap, and no credit.
 *
 * Return: the slot, or -ENOSPC.
 */
int gpuvirt_sp_add(struct gpuvirt_sp *sp, u32 max_instances, u64 now)
{
	struct gpuvirt_sp_slot *s;
	int i;

	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		if (!sp->slot[i].used)
			break;
	if (i == GPUVIRT_SP_SLOTS)
		return -ENOSPC;
	gpuvirt_sp_accrue(sp, now);
	s = &sp->slot[i];
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->max_instances = max_instances ? max_instances : 1;
	s->weight = GPUVIRT_SP_WEIGHT_DEFAULT;
	s->max_pct = 100;
	sp->nr_used++;
	sp->used_mask |= 1U << i;
	return i;
}

/**
 * gpuvirt_sp_remove() - free a slot
 * @sp: the policy state
 * @slot: the slot
 * @now: the time, in ns of the caller's clock
 */
void gpuvirt_sp_remove(struct gpuvirt_sp *sp, int slot, u64 now)
{
	if (!gpuvirt_sp_valid(sp, slot))
		return;
	gpuvirt_sp_accrue(sp, now);
	if (sp->slot[slot].open)
		sp->nr_open--;
	sp->nr_used--;
	sp->used_mask &= ~(1U << slot);
	memset(&sp->slot[slot], 0, sizeof(sp->slot[slot]));
	sp->may_run &= ~(1U << slot);
	if (sp->running == slot)
		sp->running = -1;
}

/**
 * gpuvirt_sp_set_open() - a slot's VFIO device was opened or closed
 * @sp: the policy state
 * @slot: the slot
 * @open: whether it is open now
 * @now: the time, in ns of the caller's clock
 */
void gpuvirt_sp_set_open(struct gpuvirt_sp *sp, int slot, bool open, u64 now)
{
	struct gpuvirt_sp_slot *s;

	if (!gpuvirt_sp_valid(sp, slot) || sp->slot[slot].open == open)
		return;
	gpuvirt_sp_accrue(sp, now);
	s = &sp->slot[slot];
	s->open = open;
	if (open)
		sp->nr_open++;
	else
		sp->nr_open--;
}

/**
 * gpuvirt_sp_set_runnable() - a slot got work or ran out of it
 * @sp: the policy state
 * @slot: the slot
 * @runnable: whether it has work queued now
 * @now: the time, in ns of the caller's clock
 */
void gpuvirt_sp_set_runnable(struct gpuvirt_sp *sp, int slot, bool runnable,
			     u64 now)
{
	if (!gpuvirt_sp_valid(sp, slot))
		return;
	gpuvirt_sp_accrue(sp, now);
	sp->slot[slot].runnable = runnable;
}

/**
 * gpuvirt_sp_set_policy() - change the policy, live
 * @sp: the policy state
 * @policy: enum gpuvirt_sched_policy
 * @now: the time, in ns of the caller's clock
 *
 * Return: 0, or -EINVAL for an unknown policy.
 */
int gpuvirt_sp_set_policy(struct gpuvirt_sp *sp, u32 policy, u64 now)
{
	struct gpuvirt_sp_slot *s;
	u32 old;
	int i;

	if (policy > GPUVIRT_SCHED_POLICY_WEIGHTED)
		return -EINVAL;
	gpuvirt_sp_accrue(sp, now);
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++) {
		s = &sp->slot[i];
		if (!s->used)
			continue;
		old = gpuvirt_sp_weight(sp, s);
		gpuvirt_sp_reweigh(sp, s, old,
				   policy == GPUVIRT_SCHED_POLICY_WEIGHTED ?
				   s->weight : GPUVIRT_SP_WEIGHT_MAX);
	}
	sp->policy = policy;
	return 0;
}

/**
 * gpuvirt_sp_set_slice() - change the slice, live
 * @sp: the policy state
 * @slice_ns: the slice, or 0 for the default for the number of vGPUs
 * @now: the time, in ns of the caller's clock
 *
 * Return: 0, or -EINVAL for a slice out of range.
 */
int gpuvirt_sp_set_slice(struct gpuvirt_sp *sp, u64 slice_ns, u64 now)
{
	if (slice_ns && (slice_ns < GPUVIRT_SP_SLICE_MIN_NS ||
			 slice_ns > GPUVIRT_SP_SLICE_MAX_NS))
		return -EINVAL;
	gpuvirt_sp_accrue(sp, now);
	sp->slice_ns = slice_ns;
	return 0;
}

/**
 * gpuvirt_sp_set_weight() - change a slot's weight, live
 * @sp: the policy state
 * @slot: the slot
 * @weight: GPUVIRT_SP_WEIGHT_MIN..GPUVIRT_SP_WEIGHT_MAX
 * @now: the time, in ns of the caller's clock
 *
 * Return: 0, or -EINVAL for a bad slot or weight.
 */
int gpuvirt_sp_set_weight(struct gpuvirt_sp *sp, int slot, u32 weight,
			  u64 now)
{
	struct gpuvirt_sp_slot *s;

	if (!gpuvirt_sp_valid(sp, slot) || weight < GPUVIRT_SP_WEIGHT_MIN ||
	    weight > GPUVIRT_SP_WEIGHT_MAX)
		return -EINVAL;
	gpuvirt_sp_accrue(sp, now);
	s = &sp->slot[slot];
	if (sp->policy == GPUVIRT_SCHED_POLICY_WEIGHTED)
		gpuvirt_sp_reweigh(sp, s, s->weight, weight);
	s->weight = weight;
	return 0;
}

/**
 * gpuvirt_sp_set_limits() - change a slot's minimum and cap, live
 * @sp: the policy state
 * @slot: the slot
 * @min_pct: guaranteed minimum, 0..@max_pct
 * @max_pct: most it may use, 1..100
 * @now: the time, in ns of the caller's clock
 *
 * Return: 0, -EINVAL for a bad slot or values, or -ENOSPC when the
 * minimums of the slots in use would sum past 100.
 */
int gpuvirt_sp_set_limits(struct gpuvirt_sp *sp, int slot, u32 min_pct,
			  u32 max_pct, u64 now)
{
	u32 sum = min_pct;
	int i;

	if (!gpuvirt_sp_valid(sp, slot) || !max_pct || max_pct > 100 ||
	    min_pct > max_pct)
		return -EINVAL;
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		if (i != slot && sp->slot[i].used)
			sum += sp->slot[i].min_pct;
	if (sum > 100)
		return -ENOSPC;
	gpuvirt_sp_accrue(sp, now);
	sp->slot[slot].min_pct = min_pct;
	sp->slot[slot].max_pct = max_pct;
	return 0;
}
