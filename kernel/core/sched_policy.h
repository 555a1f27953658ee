/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The time-slice scheduling policy of one GPU: which vGPU owns the engines
 * next, and for how long. Pure logic: no locks, no clocks, no allocation,
 * no kernel-only calls. The caller (the engine, kernel/core/engine.c) holds
 * its own lock around every call and passes the time in; the userspace unit
 * tests (selftests/unit/test_sched.c) drive the same file in virtual time.
 * The engine passes its modelled clock, which steps back by a turn's lag
 * when the turn is charged: a time before the last call's counts as no
 * time passing.
 *
 * The model. Each vGPU slot has:
 *  - a policy rate: the share the policy gives it while it is busy;
 *  - a cap rate: the most it may use. For the non-work-conserving policies
 *    (equal-share, fixed-share) the policy share is itself a cap, so the
 *    effective cap is min(cap, policy share), raised to the minimum when
 *    the minimum is larger. Policy shares are rounded up to a whole PPM,
 *    so that N busy vGPUs with a share of 1/N each never leave the GPU
 *    idle;
 *  - a minimum rate, which a busy vGPU is guaranteed: it gets the larger of
 *    its minimum and what the policy would give it, and the policy shares
 *    out what the minimums leave among the others.
 * Rates are in parts per million of the GPU's engine time (PPM).
 *
 * Credits. A slot's cap credit grows at its cap rate as time passes and
 * shrinks by the time it runs; a capped slot may run only while its cap
 * credit is not negative, and an uncapped one (cap rate 100 %) is never
 * held back by it. Its minimum credit grows at the minimum rate while it is
 * runnable or running, and shrinks by the time it runs. Credits are kept in
 * ns x PPM, so accounting is exact in integers. Both are clamped to one
 * slice worth of time at the top, so that neither an idle vGPU nor a long
 * wait can bank more than one slice; the running slot's only once its run
 * is charged, so that what it earns while running pays for that run and
 * is not lost to the clamp. At the bottom the minimum credit is clamped to
 * one slice (running above the minimum is no debt), and the cap credit to
 * two: a slot that may run takes a whole slice, going at most one slice
 * negative, and a run that overran its slice (the last chunk ran long) is
 * still paid back in full.
 *
 * The pick. The slots that may run are the runnable ones that their cap
 * credit allows. Among them, a slot owed its minimum (minimum credit above
 * zero) runs first; among several, the earliest deadline first, a slot's
 * deadline being when its minimum credit would reach the top clamp. Such a
 * run does not advance the slot's virtual time: time a minimum gives is
 * not held against the slot in the policy's share. Otherwise the slot with
 * the lowest virtual time runs. Virtual time advances by run time scaled
 * by GPUVIRT_SP_WEIGHT_MAX / weight (weight in force: the slot's weight
 * under the weighted policy, GPUVIRT_SP_WEIGHT_MAX under the others), kept
 * exact with a remainder. A slot that joins the slots that may run (it
 * became runnable, or its cap credit came back to zero) is moved up to the
 * lowest virtual time of those that stayed, or to the floor of the last
 * pick when none stayed, so that sleeping or being capped never buys a
 * burst later. When the weight in force of a slot changes, its lead over
 * that floor is rescaled so that it stands for the same run time. Ties go
 * to the lowest slot after the last one picked, which makes equal weights
 * a round robin.
 *
 * When no slot may run but some are runnable, the engines stay idle until
 * the first of them has its cap credit back to zero (rounded up to a whole
 * ns); that is what makes equal-share and fixed-share, and caps, leave time
 * idle.
 */
#ifndef GPUVIRT_SCHED_POLICY_H
#define GPUVIRT_SCHED_POLICY_H

#include "pure.h"
#include <uapi/linux/gpuvirt.h>

#define GPUVIRT_SP_SLOTS		32	/* = GPUVIRT_PROFILE_INSTANCES_MAX */
#define GPUVIRT_SP_PPM			1000000U
#define GPUVIRT_SP_SLICE_MIN_NS		100000ULL	/* 100 us */
#define GPUVIRT_SP_SLICE_MAX_NS		100000000ULL	/* 100 ms */
/* Defaults as NVIDIA's: 2 ms up to 8 vGPUs, 1 ms above. */
#define GPUVIRT_SP_SLICE_SMALL_NS	2000000ULL
#define GPUVIRT_SP_SLICE_LARGE_NS	1000000ULL
#define GPUVIRT_SP_SLICE_SMALL_MAX_VGPUS 8
#define GPUVIRT_SP_WEIGHT_MIN		1
#define GPUVIRT_SP_WEIGHT_MAX		10000
#define GPUVIRT_SP_WEIGHT_DEFAULT	100
/*
 * A step of time longer than this is not multiplied out (ns x PPM would
 * overflow s64): every credit is full by then, since a rate is never below
 * GPUVIRT_SP_RATE_MIN_PPM and a credit never below two slices of debt.
 */
#define GPUVIRT_SP_STEP_MAX_NS		(8000 * 1000000000ULL)	/* 8000 s */
/* The smallest policy share (fixed-share with a huge max_instances). */
#define GPUVIRT_SP_RATE_MIN_PPM		100
/* Virtual times are all moved down together once the floor passes this. */
#define GPUVIRT_SP_VTIME_RENORM		(U64_MAX / 4)

/**
 * struct gpuvirt_sp_slot - one vGPU as the policy sees it
 * @used: the slot holds a vGPU (created)
 * @open: its VFIO device is open: it counts as running for equal-share
 * @runnable: it has work queued
 * @max_instances: of its type, for fixed-share (>= 1)
 * @weight: GPUVIRT_SP_WEIGHT_MIN..GPUVIRT_SP_WEIGHT_MAX
 * @min_pct: guaranteed minimum, 0..100, in percent of the GPU
 * @max_pct: most it may use, 1..100, in percent of the GPU; 100 is no cap
 * @vtime: virtual time, run ns scaled by GPUVIRT_SP_WEIGHT_MAX / @weight
 * @vtime_rem: remainder of that division, so that @vtime stays exact
 * @cap_credit: in ns x PPM; see the file comment
 * @min_credit: in ns x PPM; see the file comment
 * @run_ns: total run time charged
 * @slices: times picked
 */
struct gpuvirt_sp_slot {
	bool used;
	bool open;
	bool runnable;
	u32 max_instances;
	u32 weight;
	u32 min_pct;
	u32 max_pct;
	u64 vtime;
	u32 vtime_rem;
	s64 cap_credit;
	s64 min_credit;
	u64 run_ns;
	u64 slices;
};

/**
 * struct gpuvirt_sp - the policy state of one GPU (or GPU instance)
 * @policy: enum gpuvirt_sched_policy
 * @slice_ns: configured slice; 0 means the default for the vGPU count
 * @now: the time of the last call, in ns of the caller's clock
 * @last: slot picked last, for round-robin tie breaks; -1 at first
 * @running: slot picked and not charged yet, or -1
 * @running_min: @running was picked because it was owed its minimum
 * @nr_used: slots in use
 * @used_mask: bit mask of the slots in use: the loops of a decision visit
 *	only these
 * @nr_open: slots open
 * @may_run: bit mask of the slots that could run at the last pick
 * @vfloor: the lowest virtual time among them, never decreasing (but for
 *	a renormalisation, which moves every virtual time down together)
 * @slot: the slots
 */
struct gpuvirt_sp {
	u32 policy;
	u64 slice_ns;
	u64 now;
	int last;
	int running;
	bool running_min;
	unsigned int nr_used;
	u32 used_mask;
	unsigned int nr_open;
	u32 may_run;
	u64 vfloor;
	struct gpuvirt_sp_slot slot[GPUVIRT_SP_SLOTS];
};

/**
 * struct gpuvirt_sp_pick - what gpuvirt_sp_pick() decided
 * @slot: the slot to run, or -1 to leave the engines idle
 * @ns: with a slot, the longest it may run before the next pick (its
 *	slice); with -1, how long to stay idle before picking again, U64_MAX
 *	meaning until some slot becomes runnable
 */
struct gpuvirt_sp_pick {
	int slot;
	u64 ns;
};

void gpuvirt_sp_init(struct gpuvirt_sp *sp, u64 now);

/*
 * Slots. gpuvirt_sp_add() returns the new slot, not open and not runnable,
 * with default weight, no minimum and no cap, or -ENOSPC.
 */
int gpuvirt_sp_add(struct gpuvirt_sp *sp, u32 max_instances, u64 now);
void gpuvirt_sp_remove(struct gpuvirt_sp *sp, int slot, u64 now);
void gpuvirt_sp_set_open(struct gpuvirt_sp *sp, int slot, bool open, u64 now);
void gpuvirt_sp_set_runnable(struct gpuvirt_sp *sp, int slot, bool runnable,
			     u64 now);

/*
 * Configuration, all of it valid at any time (live). Each returns 0, or
 * -EINVAL for a value out of range (policy unknown, slice outside
 * [GPUVIRT_SP_SLICE_MIN_NS, GPUVIRT_SP_SLICE_MAX_NS] and not 0, weight out
 * of range, min_pct > max_pct, max_pct 0 or above 100), or -ENOSPC when the
 * minimums of all slots would sum past 100 %. A refused change changes
 * nothing.
 */
int gpuvirt_sp_set_policy(struct gpuvirt_sp *sp, u32 policy, u64 now);
int gpuvirt_sp_set_slice(struct gpuvirt_sp *sp, u64 slice_ns, u64 now);
int gpuvirt_sp_set_weight(struct gpuvirt_sp *sp, int slot, u32 weight,
			  u64 now);
int gpuvirt_sp_set_limits(struct gpuvirt_sp *sp, int slot, u32 min_pct,
			  u32 max_pct, u64 now);

/* The slice in force: the configured one, or the default for the count. */
u64 gpuvirt_sp_slice(const struct gpuvirt_sp *sp);
/* A slot's effective share limit and guarantee, in PPM, for telemetry. */
u32 gpuvirt_sp_max_ppm(const struct gpuvirt_sp *sp, int slot);
u32 gpuvirt_sp_min_ppm(const struct gpuvirt_sp *sp, int slot);

/*
 * Decide who runs at @now. The caller then runs the slot for at most
 * pick->ns and reports the time it really used with gpuvirt_sp_charge()
 * (it may be shorter: the vGPU ran dry or was preempted at a chunk
 * boundary; or a little longer: the last chunk overran).
 */
void gpuvirt_sp_pick(struct gpuvirt_sp *sp, u64 now,
		     struct gpuvirt_sp_pick *pick);
void gpuvirt_sp_charge(struct gpuvirt_sp *sp, int slot, u64 ran_ns, u64 now);

#endif /* GPUVIRT_SCHED_POLICY_H */
