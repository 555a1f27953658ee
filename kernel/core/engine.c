// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU command execution and time-slice scheduling.
 *
 * Each GPU has one engine thread, and in MIG mode each GPU instance has
 * its own, for its own engines (gi.c). The scheduling policy (sched_policy.c)
 * decides which vGPU owns the engines and for how long; during that turn
 * the thread decodes the packets of that vGPU's ring, checks every address
 * against its slice, and hands them to the backend as commands, one chunk
 * of at most GPUVIRT_ENGINE_CHUNK_NS of engine time at a time. A turn ends
 * at a chunk boundary when the slice is used up (the command resumes at
 * the vGPU's next turn: nothing is lost or run twice) or when the ring runs
 * dry.
 *
 * Engine time is the backend's model (Documentation/backend.rst, "Capacity
 * model"): the thread sleeps until the wall clock has caught up with the
 * modelled time, so that on a host that keeps up, modelled time and wall
 * time go at the same rate. When the host does not give the thread the CPU
 * to keep up (a turn held the engines longer than the work it ran), the
 * difference is the engine's lag (struct gpuvirt_sched.lag_ns): the
 * engine's modelled clock is the wall clock less its lag, and the policy
 * runs on that clock and charges a vGPU the modelled time of its turn, so
 * that on a slow or loaded host every vGPU of the engine slows down
 * together and the shares hold in modelled time. The same goes for the
 * idle time that a policy leaves (equal-share, fixed-share, caps): a timed
 * idle wait that the host ends late is lag for the time past the end the
 * policy asked for (struct gpuvirt_sched.idle_lag_ns; it stays in the
 * idle time, which is wall time), and the clock does not count it as time
 * in which capped vGPUs earn credit; a wait that work or a change ends is
 * not. Lag after an idle wait is not made up (there is no turn to pace
 * from), so the clock keeps it, as it keeps lag no turn made up.
 *
 * A bad packet stops its vGPU's ring with an error and an error interrupt,
 * and nothing else. A command that makes no progress for
 * GPUVIRT_ENGINE_HANG_NS of engine time has hung the engine: the vGPU gets
 * GPUVIRT_VGPU_ERR_HANG and the backend resets its engines.
 *
 * Locking: a vGPU's lock covers its ring; the GPU's sched lock (a spinlock)
 * covers the policy and the telemetry and nests inside vGPU locks. The
 * engine thread takes them one at a time. The index of vGPUs by UUID has a
 * lock of its own, which nests inside the sched locks.
 */
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/stringhash.h>
#include <uapi/linux/gpuvirt_vgpu.h>

#include "netlink-gen-names.h"
#include "vgpu.h"

/* Longest piece of a command that runs without a preemption point. */
#define GPUVIRT_ENGINE_CHUNK_NS		(100 * NSEC_PER_USEC)
/*
 * The chunk and the pacing window on a GPU instance: it runs one vGPU, so
 * nothing waits for its engines between chunks, and fewer, longer chunks
 * and sleeps spend less host CPU per unit of modelled work, CPU that the
 * other GIs' engine threads share (the simulated engines are all host
 * threads).
 */
#define GPUVIRT_ENGINE_CHUNK_GI_NS	(5 * NSEC_PER_MSEC)
/* The thread sleeps off modelled time once it is this far ahead. */
#define GPUVIRT_ENGINE_PACE_NS		NSEC_PER_MSEC
/* Engine time without progress after which a command has hung. */
#define GPUVIRT_ENGINE_HANG_NS		(20 * NSEC_PER_MSEC)
/*
 * The most engine time, and wall time, a doorbell may run its vGPU's ring
 * for itself when the engines are idle (gpuvirt_sched_inline()); what is
 * left goes to the engine thread.
 */
#define GPUVIRT_ENGINE_INLINE_NS	(20 * NSEC_PER_USEC)
/* Longer than this, an inline turn was held up: time it precisely. */
#define GPUVIRT_ENGINE_INLINE_SANE_NS	(8 * GPUVIRT_ENGINE_INLINE_NS)

/* The spec's names (Documentation/netlink/specs/gpuvirt.yaml), generated */
static const char * const gpuvirt_sched_policy_names[] =
	GPUVIRT_SCHED_POLICY_NAMES;

const char *gpuvirt_sched_policy_name(u32 policy)
{
	return policy < ARRAY_SIZE(gpuvirt_sched_policy_names) ?
	       gpuvirt_sched_policy_names[policy] : "unknown";
}

int gpuvirt_sched_policy_parse(const char *name)
{
	return sysfs_match_string(gpuvirt_sched_policy_names, name);
}

/* One dword of the vGPU's VRAM; the caller checked the offset. */
static int gpuvirt_engine_read32(struct gpuvirt_vgpu *vgpu, u64 off, u32 *val)
{
	struct page *page;
	void *p;

	page = gpuvirt_vgpu_slice_page(vgpu, off, sizeof(*val), false);
	if (IS_ERR(page))
		return PTR_ERR(page);
	if (!page) {
		*val = 0;	/* never written */
		return 0;
	}
	p = kmap_local_page(page);
	*val = *(u32 *)(p + offset_in_page(off));
	kunmap_local(p);
	put_page(page);
	return 0;
}

static bool gpuvirt_engine_in_slice(struct gpuvirt_vgpu *vgpu, u64 off, u64 len)
{
	return gpuvirt_slice_contains(vgpu->vram_size, off, len);
}

static u64 gpuvirt_engine_arg64(const u32 *dw, unsigned int i)
{
	return dw[i] | (u64)dw[i + 1] << 32;
}

static u32 gpuvirt_engine_err(int err)
{
	switch (err) {
	case -ENOSPC:
	case -ENOMEM:
		return GPUVIRT_VGPU_ERR_MEMORY;
	case -EFAULT:
		return GPUVIRT_VGPU_ERR_ADDRESS;
	default:
		return GPUVIRT_VGPU_ERR_ENGINE;
	}
}

/*
 * Turn the packet at the ring's head into a command for the backend.
 * Returns GPUVIRT_VGPU_ERR_NONE or the error that stops the ring.
 */
static u32 gpuvirt_engine_decode(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;
	struct gpuvirt_cmd *cmd = &r->cmd;
	u32 dw[8], op, n;
	unsigned int i;
	u64 a, len;
	int err;

	/* the doorbell checked the ring; never trust that blindly */
	if (r->head >= r->size || r->tail >= r->size ||
	    !gpuvirt_slice_contains(vgpu->vram_size, r->base, r->size))
		return GPUVIRT_VGPU_ERR_RING;

	err = gpuvirt_engine_read32(vgpu, r->base + r->head, &dw[0]);
	if (err)
		return gpuvirt_engine_err(err);
	op = GPUVIRT_VGPU_PKT_OPCODE(dw[0]);
	n = GPUVIRT_VGPU_PKT_DWORDS(dw[0]);
	if (!n || n > ARRAY_SIZE(dw) ||
	    ((r->tail - r->head) & (r->size - 1)) < n * 4)
		return GPUVIRT_VGPU_ERR_LENGTH;
	for (i = 1; i < n; i++) {
		err = gpuvirt_engine_read32(vgpu, r->base +
					    ((r->head + 4 * i) & (r->size - 1)),
					    &dw[i]);
		if (err)
			return gpuvirt_engine_err(err);
	}

	memset(cmd, 0, sizeof(*cmd));
	r->cmd_dwords = n;
	r->cmd_header = dw[0];
	r->cmd_stuck_ns = 0;
	switch (op) {
	case GPUVIRT_VGPU_OP_NOP:
		if (n != 1)
			return GPUVIRT_VGPU_ERR_LENGTH;
		cmd->op = GPUVIRT_CMD_NOP;
		break;
	case GPUVIRT_VGPU_OP_FENCE:
		if (n != 4)
			return GPUVIRT_VGPU_ERR_LENGTH;
		r->cmd_seqno = dw[1];
		a = gpuvirt_engine_arg64(dw, 2);
		if (a == U64_MAX) {
			cmd->op = GPUVIRT_CMD_NOP;
			break;
		}
		if (a & 3)
			return GPUVIRT_VGPU_ERR_ALIGN;
		if (!gpuvirt_engine_in_slice(vgpu, a, 4))
			return GPUVIRT_VGPU_ERR_ADDRESS;
		cmd->op = GPUVIRT_CMD_WRITE;
		cmd->dst = a;
		cmd->len = 4;
		cmd->value = dw[1];
		break;
	case GPUVIRT_VGPU_OP_FILL:
		if (n != 6)
			return GPUVIRT_VGPU_ERR_LENGTH;
		a = gpuvirt_engine_arg64(dw, 1);
		len = gpuvirt_engine_arg64(dw, 3);
		if ((a | len) & 3)
			return GPUVIRT_VGPU_ERR_ALIGN;
		if (!gpuvirt_engine_in_slice(vgpu, a, len))
			return GPUVIRT_VGPU_ERR_ADDRESS;
		cmd->op = GPUVIRT_CMD_FILL;
		cmd->dst = a;
		cmd->len = len;
		cmd->value = dw[5];
		break;
	case GPUVIRT_VGPU_OP_COPY:
		if (n != 7)
			return GPUVIRT_VGPU_ERR_LENGTH;
		cmd->op = GPUVIRT_CMD_COPY;
		cmd->dst = gpuvirt_engine_arg64(dw, 1);
		cmd->src = gpuvirt_engine_arg64(dw, 3);
		cmd->len = gpuvirt_engine_arg64(dw, 5);
		if (!gpuvirt_engine_in_slice(vgpu, cmd->dst, cmd->len) ||
		    !gpuvirt_engine_in_slice(vgpu, cmd->src, cmd->len))
			return GPUVIRT_VGPU_ERR_ADDRESS;
		break;
	case GPUVIRT_VGPU_OP_COMPUTE:
		if (n != 5)
			return GPUVIRT_VGPU_ERR_LENGTH;
		if (dw[1] > GPUVIRT_VGPU_COMPUTE_MAX_US)
			return GPUVIRT_VGPU_ERR_ARG;
		a = gpuvirt_engine_arg64(dw, 2);
		if (a & 7)
			return GPUVIRT_VGPU_ERR_ALIGN;
		if (!gpuvirt_engine_in_slice(vgpu, a, 8))
			return GPUVIRT_VGPU_ERR_ADDRESS;
		cmd->op = GPUVIRT_CMD_COMPUTE;
		cmd->dst = a;
		cmd->len = dw[1];
		cmd->value = dw[4];
		break;
	default:
		return GPUVIRT_VGPU_ERR_OPCODE;
	}
	r->cmd_active = true;
	return GPUVIRT_VGPU_ERR_NONE;
}

static void gpuvirt_engine_fail(struct gpuvirt_vgpu *vgpu, u32 error)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	r->error = error;
	r->error_head = r->head;
	r->cmd_active = false;
	vgpu->irq_status |= GPUVIRT_VGPU_IRQ_ERROR;
	gpuvirt_vgpu_irq_raise(vgpu);
}

/* The packet at the head is done: publish it and move on. */
static void gpuvirt_engine_retire(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	if (GPUVIRT_VGPU_PKT_OPCODE(r->cmd_header) == GPUVIRT_VGPU_OP_FENCE) {
		r->fence = r->cmd_seqno;
		if (GPUVIRT_VGPU_PKT_FLAGS(r->cmd_header) &
		    GPUVIRT_VGPU_PKT_FLAG_IRQ) {
			vgpu->irq_status |= GPUVIRT_VGPU_IRQ_FENCE;
			gpuvirt_vgpu_irq_raise(vgpu);
		}
	}
	r->cmd_active = false;
	r->head = (r->head + 4 * r->cmd_dwords) & (r->size - 1);
	r->done++;
}

/*
 * The part of the GPU's compute the parent's vGPUs hold while they run:
 * all of it on a time-sliced GPU, the GI's compute slices in MIG mode. The
 * GPU's mig table does not change while a GI exists.
 */
static u32 gpuvirt_engine_compute(const struct gpuvirt_mdev_parent *mp)
{
	const struct gpuvirt_gi *gi = mp->gi;

	BUILD_BUG_ON(GPUVIRT_EXEC_COMPUTE_PARTS != GPUVIRT_MIG_SLICES);
	if (!gi)
		return GPUVIRT_EXEC_COMPUTE_PARTS;
	return gi->gpu->mig->table.profile[gi->profile].slices;
}

static bool gpuvirt_engine_has_work(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	return !vgpu->detached && !vgpu->mig_stopped && r->size && !r->error &&
	       r->head != r->tail;
}

/*
 * Tell migration which VRAM the command may have written so far: all of
 * its destination for FILL and COPY, which write as they go; WRITE and
 * COMPUTE write once, when they complete (@ret 1).
 */
static void gpuvirt_engine_dirty(struct gpuvirt_vgpu *vgpu, int ret)
{
	const struct gpuvirt_cmd *cmd = &vgpu->ring.cmd;

	switch (cmd->op) {
	case GPUVIRT_CMD_WRITE:
		if (ret == 1)
			gpuvirt_migration_dirty(&vgpu->mig, cmd->dst, cmd->len);
		break;
	case GPUVIRT_CMD_FILL:
	case GPUVIRT_CMD_COPY:
		gpuvirt_migration_dirty(&vgpu->mig, cmd->dst, cmd->len);
		break;
	case GPUVIRT_CMD_COMPUTE:
		if (ret == 1)
			gpuvirt_migration_dirty(&vgpu->mig, cmd->dst, 8);
		break;
	default:
		break;
	}
}

/*
 * Run one chunk of the packet at the ring's head, for at most @budget_ns.
 * Adds the engine time used to *@cost and completed packets to *@packets.
 * Returns whether the vGPU has work left.
 */
static bool gpuvirt_engine_step(struct gpuvirt_vgpu *vgpu, u64 budget_ns,
				u64 *cost, u64 *packets)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;
	struct gpuvirt_gpu *gpu = vgpu->mp->gpu;
	struct gpuvirt_exec_ctx ctx = {
		.id = vgpu->mp->ctx_base + vgpu->slot,
		.vram_offset = vgpu->vram_offset,
		.vram_size = vgpu->vram_size,
		.engines = vgpu->mp->engines,
		.compute = gpuvirt_engine_compute(vgpu->mp),
	};
	u64 done = r->cmd.done, used = 0;
	u32 error;
	int ret;

	lockdep_assert_held(&vgpu->lock);
	if (!gpuvirt_engine_has_work(vgpu))
		return false;
	if (!r->cmd_active) {
		error = gpuvirt_engine_decode(vgpu);
		if (error) {
			gpuvirt_engine_fail(vgpu, error);
			return false;
		}
		done = 0;
	}

	ret = gpu->ops->exec(gpu, &ctx, &r->cmd, budget_ns, &used);
	gpuvirt_engine_dirty(vgpu, ret);
	*cost += used;
	r->busy_ns += used;
	if (ret < 0) {
		gpuvirt_engine_fail(vgpu, gpuvirt_engine_err(ret));
		return false;
	}
	if (ret == 1) {
		gpuvirt_engine_retire(vgpu);
		(*packets)++;
		return gpuvirt_engine_has_work(vgpu);
	}
	if (r->cmd.done == done) {
		r->cmd_stuck_ns += used ?: 1;
		if (r->cmd_stuck_ns >= GPUVIRT_ENGINE_HANG_NS) {
			dev_warn_ratelimited(gpu->dev,
					     "vGPU %s hung the engines; resetting them\n",
					     vgpu->uuid);
			gpu->ops->engine_reset(gpu, vgpu->mp->engines);
			gpuvirt_engine_fail(vgpu, GPUVIRT_VGPU_ERR_HANG);
			return false;
		}
	} else {
		r->cmd_stuck_ns = 0;
	}
	return true;
}

/* Sleep until engine clock @t_ns, if it is ahead of us by @ahead_ns. */
static void gpuvirt_engine_pace(u64 t_ns, u64 ahead_ns)
{
	ktime_t until = ns_to_ktime(t_ns);

	if (ktime_get_ns() + ahead_ns > t_ns)
		return;
	set_current_state(TASK_IDLE);
	schedule_hrtimeout_range(&until, 10 * NSEC_PER_USEC, HRTIMER_MODE_ABS);
}

/**
 * struct gpuvirt_turn - what a turn did
 * @work_ns: modelled engine time of the work run
 * @packets: packets completed
 * @end_ns: the wall clock when the turn ended
 * @preempted: the slice ran out with work left
 */
struct gpuvirt_turn {
	u64 work_ns;
	u64 packets;
	u64 end_ns;
	bool preempted;
};

/*
 * One turn: run the vGPU's packets for up to @slice_ns of engine time, and
 * of wall time too. When the host is slower than the model (the thread
 * lost its CPU, or the emulation is slow), a turn bounded by modelled work
 * alone would last several slices, and hold off the other vGPUs for that
 * long.
 *
 * *@lag_ns is how far the engine clock was behind the wall clock when the
 * previous turn ended, if the engines went straight from it to this one
 * (0 after an idle period): this turn paces from that point, so the time
 * the host took from the engine is made up, up to a slice, and the engine
 * keeps its modelled rate over many turns on a host that stalls it now
 * and then. Whichever vGPU makes it up is charged the work it ran
 * (gpuvirt_sched_lag()), so this moves no share. On return *@lag_ns holds
 * this turn's lag, or 0 when the vGPU ran out of work.
 */
static void gpuvirt_engine_turn(struct gpuvirt_vgpu *vgpu, u64 start,
				u64 slice_ns, u64 *lag_ns,
				struct gpuvirt_turn *t)
{
	u64 chunk_ns = vgpu->mp->gi ? GPUVIRT_ENGINE_CHUNK_GI_NS :
				      GPUVIRT_ENGINE_CHUNK_NS;
	u64 pace_ns = vgpu->mp->gi ? GPUVIRT_ENGINE_CHUNK_GI_NS :
				     GPUVIRT_ENGINE_PACE_NS;
	u64 base = start - min(*lag_ns, start), now;
	bool more = true;

	while (t->work_ns < slice_ns && ktime_get_ns() - start < slice_ns &&
	       !kthread_should_stop()) {
		mutex_lock(&vgpu->lock);
		more = gpuvirt_engine_step(vgpu,
					   min(slice_ns - t->work_ns, chunk_ns),
					   &t->work_ns, &t->packets);
		mutex_unlock(&vgpu->lock);
		if (!more)
			break;
		gpuvirt_engine_pace(base + t->work_ns, pace_ns);
		cond_resched();
	}
	gpuvirt_engine_pace(base + t->work_ns, 0);
	t->preempted = more;
	now = ktime_get_ns();
	t->end_ns = now;
	*lag_ns = more && now > base + t->work_ns ?
		  min(now - base - t->work_ns, slice_ns) : 0;
}

/*
 * The engine's modelled clock: the wall clock less the time the host took
 * from the engine and it has not made up. Called with the sched lock held;
 * it only goes forward while the lag stands still, which it does but at
 * the end of a turn or of an idle wait that overran; it may step back
 * then, and the policy ignores a step back (sched_policy.h).
 */
u64 gpuvirt_sched_clock(const struct gpuvirt_sched *s)
{
	return ktime_get_ns() - s->behind_ns;
}

static unsigned int gpuvirt_wait_bucket(u64 wait_ns)
{
	u64 us = div_u64(wait_ns, NSEC_PER_USEC), bound = 1;
	unsigned int b;

	for (b = 0; b < GPUVIRT_WAIT_HIST_BUCKETS - 1; b++, bound *= 4)
		if (us <= bound)
			return b;
	return b;
}

/*
 * Something the engine thread decides on changed (a vGPU opened, closed
 * or removed, a setting): have it decide again. Not when it is parked:
 * no vGPU is runnable, so no decision can come out differently until one
 * is, and that kicks it then. A vGPU's open, close and remove so wake an
 * idle GPU's engine thread not at all, where each used to (a cross-CPU
 * wake-up for nothing). Returns whether to wake it.
 */
static bool gpuvirt_sched_poke_locked(struct gpuvirt_sched *s)
{
	lockdep_assert_held(&s->lock);
	if (s->parked)
		return false;
	s->kicked = true;
	return true;
}

/*
 * The vGPU's runnable state may have changed (doorbell, error, reset,
 * open, close): tell the policy, and wake the engine if it has new work.
 */
static void gpuvirt_sched_update(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	bool runnable = gpuvirt_engine_has_work(vgpu);
	struct gpuvirt_sp_slot *slot;
	bool wake = false;
	u64 now;

	lockdep_assert_held(&vgpu->lock);
	spin_lock(&s->lock);
	slot = &s->sp.slot[vgpu->slot];
	if (slot->runnable != runnable) {
		now = ktime_get_ns();
		gpuvirt_sp_set_runnable(&s->sp, vgpu->slot, runnable,
					gpuvirt_sched_clock(s));
		if (runnable) {
			vgpu->stats.wait_since_ns = now;
			s->kicked = true;
			wake = true;
		}
	}
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
}

/*
 * The vGPU's work or state changed other than by its doorbell (reset,
 * migration); called with vgpu->lock held.
 */
void gpuvirt_sched_kick(struct gpuvirt_vgpu *vgpu)
{
	gpuvirt_sched_update(vgpu);
}

/* Forget the packet in progress, as reset and CLEAR_ERROR do. */
void gpuvirt_ring_clear(struct gpuvirt_vgpu_ring *r)
{
	r->cmd_active = false;
	r->cmd_stuck_ns = 0;
}

/*
 * Take a vGPU off the engines for good (its device is closing): not
 * runnable, not open, and wait until the engine is not running it.
 */
void gpuvirt_sched_detach(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	bool wake;

	mutex_lock(&vgpu->lock);
	vgpu->detached = true;
	gpuvirt_sched_update(vgpu);
	mutex_unlock(&vgpu->lock);

	spin_lock(&s->lock);
	gpuvirt_sp_set_open(&s->sp, vgpu->slot, false, gpuvirt_sched_clock(s));
	wake = gpuvirt_sched_poke_locked(s);
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
	wait_event(s->idle_wq, READ_ONCE(s->current_vgpu) != vgpu);
}

/* The device was opened: it counts as running from now on. */
void gpuvirt_sched_attach(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;

	bool wake;

	mutex_lock(&vgpu->lock);
	vgpu->detached = false;
	spin_lock(&s->lock);
	gpuvirt_sp_set_open(&s->sp, vgpu->slot, true, gpuvirt_sched_clock(s));
	wake = gpuvirt_sched_poke_locked(s);
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
	gpuvirt_sched_update(vgpu);
	mutex_unlock(&vgpu->lock);
}

/*
 * Every vGPU of every GPU by UUID, so that a request naming a vGPU finds its
 * GPU at once instead of looking through every GPU's slots: a vGPU is in it
 * while it holds a policy slot. gpuvirt_vgpu_index_lock covers the table
 * and the vGPUs' uuid_node; it nests inside the GPUs' sched locks, and the
 * vGPUs it finds stay alive while it is held.
 */
#define GPUVIRT_VGPU_INDEX_BITS	10
static DEFINE_HASHTABLE(gpuvirt_vgpu_index, GPUVIRT_VGPU_INDEX_BITS);
static DEFINE_SPINLOCK(gpuvirt_vgpu_index_lock);

static u32 gpuvirt_vgpu_index_key(const char *uuid)
{
	return full_name_hash(NULL, uuid, strlen(uuid));
}

/**
 * gpuvirt_sched_find_gpu_id() - the GPU a vGPU is on, by the vGPU's UUID
 * @uuid: the vGPU's UUID, as its device is named
 * @gpu_id: receives the id of the vGPU's GPU
 *
 * The answer is a hint: the vGPU may go away, or its GPU be unregistered,
 * as soon as this returns. Callers look the vGPU up again in that GPU's
 * slots under the locks that keep it (gpuvirt_sched_find_locked()).
 *
 * Return: 0, or -ENOENT when no vGPU has this UUID.
 */
int gpuvirt_sched_find_gpu_id(const char *uuid, u32 *gpu_id)
{
	struct gpuvirt_vgpu *vgpu;
	int err = -ENOENT;

	spin_lock(&gpuvirt_vgpu_index_lock);
	hash_for_each_possible(gpuvirt_vgpu_index, vgpu, uuid_node,
			       gpuvirt_vgpu_index_key(uuid)) {
		if (!strcmp(vgpu->uuid, uuid)) {
			*gpu_id = vgpu->mp->gpu->id;
			err = 0;
			break;
		}
	}
	spin_unlock(&gpuvirt_vgpu_index_lock);
	return err;
}

/**
 * gpuvirt_sched_add() - give a new vGPU a policy slot
 * @vgpu: the vGPU, being initialised
 *
 * Return: 0 or -ENOSPC.
 */
int gpuvirt_sched_add(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	int slot;

	spin_lock(&s->lock);
	slot = gpuvirt_sp_add(&s->sp, vgpu->type->profile->max_instances,
			      gpuvirt_sched_clock(s));
	if (slot >= 0) {
		s->vgpus[slot] = vgpu;
		vgpu->slot = slot;
		memset(&vgpu->stats, 0, sizeof(vgpu->stats));
		spin_lock(&gpuvirt_vgpu_index_lock);
		hash_add(gpuvirt_vgpu_index, &vgpu->uuid_node,
			 gpuvirt_vgpu_index_key(vgpu->uuid));
		spin_unlock(&gpuvirt_vgpu_index_lock);
	}
	spin_unlock(&s->lock);
	gpuvirt_registry_changed();
	return slot < 0 ? slot : 0;
}

/* The vGPU is going away; it is detached, so the engine is not using it. */
void gpuvirt_sched_remove(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	bool wake;

	spin_lock(&s->lock);
	gpuvirt_sp_remove(&s->sp, vgpu->slot, gpuvirt_sched_clock(s));
	s->vgpus[vgpu->slot] = NULL;
	spin_lock(&gpuvirt_vgpu_index_lock);
	hash_del(&vgpu->uuid_node);
	spin_unlock(&gpuvirt_vgpu_index_lock);
	if (s->last_vgpu == vgpu)
		s->last_vgpu = NULL;
	wake = gpuvirt_sched_poke_locked(s);
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
	gpuvirt_registry_changed();
}

/**
 * gpuvirt_sched_find_locked() - find a vGPU of a GPU by UUID
 * @s: the GPU's scheduler, its lock held; the vGPU stays in its slot (and
 *	so alive) while the lock is
 * @uuid: the vGPU's UUID, as its device is named
 *
 * Return: the vGPU or NULL.
 */
struct gpuvirt_vgpu *gpuvirt_sched_find_locked(struct gpuvirt_sched *s,
					       const char *uuid)
{
	unsigned int i;

	lockdep_assert_held(&s->lock);
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		if (s->vgpus[i] && !strcmp(s->vgpus[i]->uuid, uuid))
			return s->vgpus[i];
	return NULL;
}

/**
 * gpuvirt_sched_vgpu_set_locked() - change a vGPU's scheduling parameters
 * @vgpu: the vGPU, its GPU's sched lock held
 * @weight: new weight, or U32_MAX to keep it
 * @min_pct: new minimum, or U32_MAX to keep it
 * @max_pct: new maximum (cap), or U32_MAX to keep it
 *
 * All or nothing: a refused change changes nothing.
 *
 * Return: 0, -EINVAL or -ENOSPC.
 */
static int gpuvirt_sched_vgpu_set_locked(struct gpuvirt_vgpu *vgpu, u32 weight,
					 u32 min_pct, u32 max_pct)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct gpuvirt_sp_slot *slot = &s->sp.slot[vgpu->slot];
	u64 now;
	int err;

	lockdep_assert_held(&s->lock);
	now = gpuvirt_sched_clock(s);
	if (weight != U32_MAX &&
	    (weight < GPUVIRT_SP_WEIGHT_MIN || weight > GPUVIRT_SP_WEIGHT_MAX))
		return -EINVAL;
	if (min_pct == U32_MAX)
		min_pct = slot->min_pct;
	if (max_pct == U32_MAX)
		max_pct = slot->max_pct;
	err = gpuvirt_sp_set_limits(&s->sp, vgpu->slot, min_pct, max_pct, now);
	if (err)
		return err;
	if (weight != U32_MAX)
		gpuvirt_sp_set_weight(&s->sp, vgpu->slot, weight, now);
	if (gpuvirt_sched_poke_locked(s))
		wake_up(&s->wq);
	return 0;
}

/* After a configuration call, with the lock dropped: apply it now. */
static int gpuvirt_sched_changed(struct gpuvirt_sched *s, int err)
{
	bool wake;

	if (err)
		return err;
	spin_lock(&s->lock);
	wake = gpuvirt_sched_poke_locked(s);
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
	return 0;
}

/*
 * The initial policy and slice of a scheduler that is not announced yet (a
 * GI being created): no event. Every later change goes through
 * gpuvirt_sched_set().
 */
int gpuvirt_sched_set_policy(struct gpuvirt_mdev_parent *mp, u32 policy)
{
	struct gpuvirt_sched *s = &mp->sched;
	int err;

	spin_lock(&s->lock);
	err = gpuvirt_sp_set_policy(&s->sp, policy, gpuvirt_sched_clock(s));
	spin_unlock(&s->lock);
	return gpuvirt_sched_changed(s, err);
}

int gpuvirt_sched_set_slice(struct gpuvirt_mdev_parent *mp, u64 slice_ns)
{
	struct gpuvirt_sched *s = &mp->sched;
	int err;

	spin_lock(&s->lock);
	err = gpuvirt_sp_set_slice(&s->sp, slice_ns, gpuvirt_sched_clock(s));
	spin_unlock(&s->lock);
	return gpuvirt_sched_changed(s, err);
}

/**
 * gpuvirt_sched_set() - change a scheduler's policy, time slice, or both
 * @mp: the parent whose scheduler it is
 * @policy: GPUVIRT_SCHED_POLICY_*, or U32_MAX to keep it
 * @slice_ns: 0 for the default, or GPUVIRT_SP_SLICE_MIN_NS to
 *	GPUVIRT_SP_SLICE_MAX_NS; U64_MAX to keep it
 *
 * All or nothing. A change that succeeds applies at the scheduler's next
 * decision and is announced on the monitor group, once, whoever asked
 * (netlink or sysfs).
 *
 * Context: may sleep.
 * Return: 0, or -EINVAL for an unknown policy or a slice out of range.
 */
int gpuvirt_sched_set(struct gpuvirt_mdev_parent *mp, u32 policy,
		      u64 slice_ns)
{
	struct gpuvirt_sched *s = &mp->sched;
	u64 old_slice, now;
	int err = 0;

	spin_lock(&s->lock);
	/*
	 * The policy's clock, as for every other call into it: the wall clock
	 * is ahead of it by the lag not made up, and credits would not accrue
	 * again until the modelled clock had caught up with it.
	 */
	now = gpuvirt_sched_clock(s);
	old_slice = s->sp.slice_ns;
	if (slice_ns != U64_MAX)
		err = gpuvirt_sp_set_slice(&s->sp, slice_ns, now);
	if (!err && policy != U32_MAX) {
		err = gpuvirt_sp_set_policy(&s->sp, policy, now);
		if (err && slice_ns != U64_MAX)
			gpuvirt_sp_set_slice(&s->sp, old_slice, now);
	}
	spin_unlock(&s->lock);
	err = gpuvirt_sched_changed(s, err);
	if (!err)
		gpuvirt_sched_notify(mp);
	return err;
}

/**
 * gpuvirt_sched_vgpu_set() - change a vGPU's scheduling parameters
 * @vgpu: the vGPU, kept alive by the caller
 * @weight: new weight, or U32_MAX to keep it
 * @min_pct: new minimum, or U32_MAX to keep it
 * @max_pct: new maximum (cap), or U32_MAX to keep it
 *
 * All or nothing: a refused change changes nothing. A change that succeeds
 * is announced on the monitor group, whoever asked (netlink or sysfs).
 *
 * Context: may sleep.
 * Return: 0, -EINVAL (a weight out of range, or a minimum above the
 * maximum) or -ENOSPC (the minimums would pass 100 %).
 */
int gpuvirt_sched_vgpu_set(struct gpuvirt_vgpu *vgpu, u32 weight, u32 min_pct,
			   u32 max_pct)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	int err;

	spin_lock(&s->lock);
	err = gpuvirt_sched_vgpu_set_locked(vgpu, weight, min_pct, max_pct);
	spin_unlock(&s->lock);
	if (!err)
		gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_CHANGE_NTF);
	return err;
}

/*
 * Count the engines idle from s->mark_ns to @now, which becomes the mark.
 * An inline turn ends at a mark its start plus the cheap clock's count of
 * its length (gpuvirt_sched_inline()), which may be a little ahead of
 * @now: the mark then steps back, and no time is counted twice.
 */
static void gpuvirt_sched_mark_idle(struct gpuvirt_sched *s, u64 now)
{
	lockdep_assert_held(&s->lock);
	if (now > s->mark_ns) {
		s->idle_ns += now - s->mark_ns;
		if (s->last_vgpu)
			s->switch_ns += now - s->mark_ns;
	}
	s->mark_ns = now;
}

/* Pick who runs next; NULL to stay idle for *@idle_ns. */
static struct gpuvirt_vgpu *gpuvirt_sched_pick(struct gpuvirt_sched *s,
					       u64 *slice_ns, u64 *idle_ns)
{
	struct gpuvirt_sp_pick pick;
	struct gpuvirt_vgpu *vgpu = NULL;
	u64 now;

	spin_lock(&s->lock);
	s->kicked = false;
	if (s->inline_vgpu) {
		/* a doorbell's turn holds the engines; it kicks at its end */
		s->inline_deferred = true;
		*idle_ns = U64_MAX;
		spin_unlock(&s->lock);
		return NULL;
	}
	now = ktime_get_ns();
	gpuvirt_sched_mark_idle(s, now);

	gpuvirt_sp_pick(&s->sp, now - s->behind_ns, &pick);
	if (pick.slot >= 0)
		vgpu = s->vgpus[pick.slot];
	if (vgpu) {
		if (vgpu != s->last_vgpu)
			s->switches++;
		if (vgpu->stats.wait_since_ns) {
			vgpu->stats.wait_hist[gpuvirt_wait_bucket(now -
					min(now, vgpu->stats.wait_since_ns))]++;
			vgpu->stats.wait_since_ns = 0;
		}
		*slice_ns = pick.ns;
	} else {
		*idle_ns = pick.ns;
	}
	s->parked = !vgpu && pick.ns >= KTIME_MAX;
	WRITE_ONCE(s->current_vgpu, vgpu);
	spin_unlock(&s->lock);
	return vgpu;
}

/*
 * The turn held the engines @ran ns of wall time and ran @work ns of
 * modelled work: account the difference as lag, or as lag made up (the
 * turn paced from the previous turn's lag, gpuvirt_engine_turn()).
 * Returns the modelled time of the turn, what the vGPU is charged: its
 * work, unless it made up more than the engine was behind.
 */
static u64 gpuvirt_sched_lag(struct gpuvirt_sched *s, struct gpuvirt_vgpu *vgpu,
			     u64 ran, u64 work)
{
	u64 back;

	lockdep_assert_held(&s->lock);
	if (ran >= work) {
		s->lag_ns += ran - work;
		s->behind_ns += ran - work;
		vgpu->stats.lag_ns += ran - work;
		return work;
	}
	back = min(work - ran, s->behind_ns);
	s->caught_up_ns += back;
	s->behind_ns -= back;
	return ran + back;
}

/*
 * Charge a turn that ended at t->end_ns, the clock its last pacing read:
 * no second read here (with the HPET as the clocksource every read is an
 * emulated device access).
 */
static void gpuvirt_sched_charge(struct gpuvirt_sched *s,
				 struct gpuvirt_vgpu *vgpu,
				 const struct gpuvirt_turn *t)
{
	u64 now = t->end_ns, ran, charge;

	lockdep_assert_held(&s->lock);
	ran = now - s->mark_ns;
	charge = gpuvirt_sched_lag(s, vgpu, ran, t->work_ns);
	gpuvirt_sp_charge(&s->sp, vgpu->slot, charge, now - s->behind_ns);
	s->busy_ns += ran;
	s->mark_ns = now;
	s->last_vgpu = vgpu;
	vgpu->stats.run_ns += ran;
	vgpu->stats.charged_ns += charge;
	vgpu->stats.slices++;
	vgpu->stats.preemptions += t->preempted;
	vgpu->stats.work_ns += t->work_ns;
	vgpu->stats.packets += t->packets;
}

/* The engine thread's turn is over: charge it, and let a closing vGPU go. */
static void gpuvirt_sched_put(struct gpuvirt_sched *s,
			      struct gpuvirt_vgpu *vgpu,
			      const struct gpuvirt_turn *t)
{
	spin_lock(&s->lock);
	gpuvirt_sched_charge(s, vgpu, t);
	WRITE_ONCE(s->current_vgpu, NULL);
	spin_unlock(&s->lock);
	/* pairs with the barrier in wait_event()'s prepare_to_wait_event() */
	if (wq_has_sleeper(&s->idle_wq))
		wake_up_all(&s->idle_wq);

	/*
	 * Ran dry, hit an error or was detached meanwhile: tell the policy.
	 * A turn its slice cut short left the vGPU with work, runnable as the
	 * policy has it: whoever takes the work away meanwhile (detach, reset,
	 * a migration stop) tells the policy itself, and a vGPU whose next
	 * turn finds nothing to run is put right at the end of that turn.
	 */
	if (t->preempted)
		return;
	mutex_lock(&vgpu->lock);
	gpuvirt_sched_update(vgpu);
	mutex_unlock(&vgpu->lock);
}

/*
 * Run a vGPU's new work in the task that rang its doorbell, when the
 * engines are idle. The common latency-bound client rings a short command
 * and waits for its fence; waking the engine thread for it (a cross-CPU
 * wake-up, usually) costs more than running it. Only when the engine
 * thread is idle with nothing to run and no timed wait (s->parked),
 * nothing has kicked it since, and the policy then picks this vGPU,
 * exactly as the engine thread would on waking: the turn is the policy's
 * like any other, and charged the same way, so no share moves. It runs up
 * to GPUVIRT_ENGINE_INLINE_NS of engine time and of wall time (at least
 * one step), and it is not ahead of the model at its end (the engine
 * thread sleeps that off; a turn this short spins); the engine thread
 * takes over whatever work is left. While it runs, s->inline_vgpu keeps
 * the engine thread from starting a turn of its own: a pick that finds it
 * set waits (s->inline_deferred) for the kick at the inline turn's end.
 *
 * Return: whether the vGPU's runnable state was dealt with; false leaves
 * it to gpuvirt_sched_update().
 */
static bool gpuvirt_sched_inline(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct gpuvirt_turn t = {};
	struct gpuvirt_sp_pick pick;
	u64 start, t0, ran;
	bool more, wake;

	lockdep_assert_held(&vgpu->lock);
	if (!gpuvirt_engine_has_work(vgpu))
		return false;
	spin_lock(&s->lock);
	if (!s->parked || s->kicked || s->inline_vgpu ||
	    s->sp.slot[vgpu->slot].runnable) {
		spin_unlock(&s->lock);
		return false;
	}
	start = ktime_get_ns();
	s->last_vgpu = NULL;	/* the engines were idle: no switch cost */
	gpuvirt_sched_mark_idle(s, start);
	gpuvirt_sp_set_runnable(&s->sp, vgpu->slot, true,
				start - s->behind_ns);
	gpuvirt_sp_pick(&s->sp, start - s->behind_ns, &pick);
	if (pick.slot != vgpu->slot) {
		/* the policy holds it back: the engine thread times that */
		vgpu->stats.wait_since_ns = start;
		s->kicked = true;
		spin_unlock(&s->lock);
		wake_up(&s->wq);
		return true;
	}
	s->inline_vgpu = vgpu;
	s->switches++;
	vgpu->stats.wait_hist[0]++;
	spin_unlock(&s->lock);

	/*
	 * The turn's length by the cheap clock: with the HPET as the
	 * clocksource every read of the precise one is an emulated device
	 * access, a good part of a short doorbell's cost. The cheap clocks
	 * of two CPUs may disagree: a length that makes no sense (the task
	 * moved, or was held up long) is read off the precise clock instead.
	 */
	t0 = local_clock();
	do {
		more = gpuvirt_engine_step(vgpu,
					   GPUVIRT_ENGINE_INLINE_NS - t.work_ns,
					   &t.work_ns, &t.packets);
		ran = local_clock() - t0;
	} while (more && t.work_ns < GPUVIRT_ENGINE_INLINE_NS &&
		 ran < GPUVIRT_ENGINE_INLINE_NS);
	while (ran < t.work_ns) {
		cpu_relax();
		ran = local_clock() - t0;
	}
	if (ran <= GPUVIRT_ENGINE_INLINE_SANE_NS)
		t.end_ns = start + ran;
	else
		t.end_ns = max(ktime_get_ns(), start);
	t.preempted = more;

	spin_lock(&s->lock);
	gpuvirt_sched_charge(s, vgpu, &t);
	s->inline_vgpu = NULL;
	s->inline_turns++;
	if (more)
		vgpu->stats.wait_since_ns = t.end_ns;
	else
		gpuvirt_sp_set_runnable(&s->sp, vgpu->slot, false,
					t.end_ns - s->behind_ns);
	wake = more || s->inline_deferred;
	s->inline_deferred = false;
	if (wake)
		s->kicked = true;
	spin_unlock(&s->lock);
	if (wake)
		wake_up(&s->wq);
	return true;
}

/* The doorbell rang in new work; called with vgpu->lock held. */
void gpuvirt_sched_ring(struct gpuvirt_vgpu *vgpu)
{
	if (!gpuvirt_sched_inline(vgpu))
		gpuvirt_sched_update(vgpu);
}

/*
 * Leave the engines idle for @idle_ns from the pick that asked for it
 * (s->mark_ns), or until something changes (s->kicked). A timed idle that
 * the host ends late (the thread did not get the CPU when its timer
 * fired) is held up the same way as a turn the host slows down: the time
 * past the end asked for is lag (the file comment), so that the policy's
 * clock does not count it as idle time in which capped vGPUs earn credit.
 * An idle that something ended (a kick: a doorbell, a configuration
 * change) has none: whatever kicked the engine told the policy the time
 * then, and the policy has counted the time up to it. Neither has an
 * endless idle (U64_MAX: until some vGPU has work). The engine sleeps at
 * once: a client that rings again soon after its work ran out finds the
 * engines idle and runs its work itself (gpuvirt_sched_ring()), without
 * waking the thread.
 */
static void gpuvirt_sched_idle(struct gpuvirt_sched *s, u64 idle_ns)
{
	bool timed = idle_ns < KTIME_MAX;
	u64 until = READ_ONCE(s->mark_ns) + (timed ? idle_ns : 0), now;
	ktime_t timeout = KTIME_MAX;
	long ret;

	if (timed) {
		now = ktime_get_ns();
		timeout = ns_to_ktime(until > now ? until - now : 0);
	}
	/* woken or timed out: pick again either way */
	ret = wait_event_interruptible_hrtimeout(s->wq, kthread_should_stop() ||
						 READ_ONCE(s->kicked), timeout);
	spin_lock(&s->lock);
	now = ktime_get_ns();
	if (timed && ret == -ETIME && !s->kicked && now > until) {
		s->lag_ns += now - until;
		s->idle_lag_ns += now - until;
		s->behind_ns += now - until;
	}
	s->last_vgpu = NULL;	/* the engines went idle: no switch cost */
	spin_unlock(&s->lock);
}

static int gpuvirt_engine_thread(void *data)
{
	struct gpuvirt_sched *s = data;
	struct gpuvirt_vgpu *vgpu;
	u64 slice_ns, idle_ns, lag_ns = 0;

	while (!kthread_should_stop()) {
		struct gpuvirt_turn t = {};
		/* the cheap clock: the measurement must not cost much itself */
		u64 t0 = local_clock();

		vgpu = gpuvirt_sched_pick(s, &slice_ns, &idle_ns);
		WRITE_ONCE(s->decide_ns, s->decide_ns + local_clock() - t0);
		if (!vgpu) {
			/* nothing to make up after an idle period */
			lag_ns = 0;
			gpuvirt_sched_idle(s, idle_ns);
			continue;
		}
		gpuvirt_engine_turn(vgpu, READ_ONCE(s->mark_ns), slice_ns,
				    &lag_ns, &t);
		t0 = local_clock();
		gpuvirt_sched_put(s, vgpu, &t);
		WRITE_ONCE(s->decide_ns, s->decide_ns + local_clock() - t0);
	}
	spin_lock(&s->lock);
	s->parked = false;	/* no thread to hand work to: nothing inline */
	spin_unlock(&s->lock);
	return 0;
}

int gpuvirt_sched_start(struct gpuvirt_mdev_parent *mp)
{
	struct gpuvirt_sched *s = &mp->sched;

	spin_lock_init(&s->lock);
	init_waitqueue_head(&s->wq);
	init_waitqueue_head(&s->idle_wq);
	s->mark_ns = ktime_get_ns();
	s->behind_ns = 0;
	gpuvirt_sp_init(&s->sp, s->mark_ns);
	s->thread = kthread_run(gpuvirt_engine_thread, s, "gpuvirt/%s",
				dev_name(mp->dev));
	return PTR_ERR_OR_ZERO(s->thread);
}

void gpuvirt_sched_stop(struct gpuvirt_mdev_parent *mp)
{
	kthread_stop(mp->sched.thread);
}
