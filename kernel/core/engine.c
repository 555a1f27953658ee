// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU command execution: the ring a guest fills, the packets in it, and
 * the per-GPU engine thread that runs them, turn by turn, through the
 * scheduler interface (a plain round robin for now).
 *
 * Each packet costs modelled engine time (GPUVIRT_ENGINE_*): the engine
 * sleeps off that time, so execution is paced by the model and not by how
 * fast the host CPU happens to be, while every result is still computed for
 * real in the vGPU's VRAM. Addresses are checked against the vGPU's slice
 * before anything is touched; a bad packet stops that vGPU's ring with an
 * error and an error interrupt, and nothing else.
 */
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <uapi/linux/gpuvirt_vgpu.h>

#include "vgpu.h"

/* The cost model: fixed cost per packet, and copy/fill throughput. */
#define GPUVIRT_ENGINE_PKT_NS		1000
#define GPUVIRT_ENGINE_BYTES_PER_US	16384
/* A turn on the engine: NVIDIA's default time slice. */
#define GPUVIRT_ENGINE_SLICE_NS		(2 * NSEC_PER_MSEC)
/* Sleep off modelled time in pieces of at least this much. */
#define GPUVIRT_ENGINE_PACE_NS		(100 * NSEC_PER_USEC)

/* VRAM access within a vGPU's slice; the caller checked the range. */
static int gpuvirt_engine_vram(struct gpuvirt_vgpu *vgpu, u64 off, void *buf,
			       u64 len, bool write, const u32 *pattern)
{
	const struct gpuvirt_backend_ops *ops = vgpu->mp->gpu->ops;

	while (len) {
		u64 o = vgpu->vram_offset + off;
		size_t n = min_t(u64, len, PAGE_SIZE - offset_in_page(o));
		struct page *page;
		u8 *p;

		page = ops->vram_page(vgpu->mp->gpu, o, write);
		if (IS_ERR(page))
			return PTR_ERR(page);
		if (!page) {
			memset(buf, 0, n);	/* never written: zero */
		} else {
			p = kmap_local_page(page) + offset_in_page(o);
			if (pattern)
				memset32((u32 *)p, *pattern, n / 4);
			else if (write)
				memcpy(p, buf, n);
			else
				memcpy(buf, p, n);
			kunmap_local(p);
			put_page(page);
		}
		off += n;
		len -= n;
		if (!pattern)
			buf += n;
		cond_resched();
	}
	return 0;
}

static bool gpuvirt_engine_in_slice(struct gpuvirt_vgpu *vgpu, u64 off, u64 len)
{
	return len <= vgpu->vram_size && off <= vgpu->vram_size - len;
}

static u64 gpuvirt_engine_arg64(const u32 *dw, unsigned int i)
{
	return dw[i] | (u64)dw[i + 1] << 32;
}

static int gpuvirt_engine_copy(struct gpuvirt_vgpu *vgpu, u64 dst, u64 src,
			       u64 len)
{
	void *bounce;
	int err = 0;

	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	/* memmove semantics: copy backwards when dst overlaps src's tail */
	if (dst > src && dst < src + len) {
		while (len && !err) {
			u64 n = min_t(u64, len, PAGE_SIZE);

			len -= n;
			err = gpuvirt_engine_vram(vgpu, src + len, bounce, n,
						  false, NULL) ?:
			      gpuvirt_engine_vram(vgpu, dst + len, bounce, n,
						  true, NULL);
		}
	} else {
		while (len && !err) {
			u64 n = min_t(u64, len, PAGE_SIZE);

			err = gpuvirt_engine_vram(vgpu, src, bounce, n, false,
						  NULL) ?:
			      gpuvirt_engine_vram(vgpu, dst, bounce, n, true,
						  NULL);
			src += n;
			dst += n;
			len -= n;
		}
	}
	kfree(bounce);
	return err;
}

static u32 gpuvirt_engine_err(int err)
{
	return err == -ENOSPC || err == -ENOMEM ? GPUVIRT_VGPU_ERR_MEMORY :
						  GPUVIRT_VGPU_ERR_ADDRESS;
}

/*
 * Run the packet at the ring's head. Returns its modelled cost in ns, or 0
 * when there was nothing to run or the packet failed (vgpu->error says
 * which).
 */
static u64 gpuvirt_engine_step(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;
	u32 dw[8], op, n, error = 0;
	u64 cost = GPUVIRT_ENGINE_PKT_NS, a, b, len, x;
	unsigned int i;
	int err;

	lockdep_assert_held(&vgpu->lock);
	if (!r->size || r->error || r->head == r->tail)
		return 0;
	/* the doorbell checked the ring; never trust that blindly */
	if (r->head >= r->size || r->tail >= r->size || r->size > vgpu->vram_size ||
	    r->base > vgpu->vram_size - r->size) {
		error = GPUVIRT_VGPU_ERR_RING;
		goto fail;
	}

	err = gpuvirt_engine_vram(vgpu, r->base + r->head, dw, 4, false, NULL);
	if (err) {
		error = gpuvirt_engine_err(err);
		goto fail;
	}
	op = GPUVIRT_VGPU_PKT_OPCODE(dw[0]);
	n = GPUVIRT_VGPU_PKT_DWORDS(dw[0]);
	if (!n || n > ARRAY_SIZE(dw) ||
	    ((r->tail - r->head) & (r->size - 1)) < n * 4) {
		error = GPUVIRT_VGPU_ERR_LENGTH;
		goto fail;
	}
	for (i = 1; i < n; i++) {
		err = gpuvirt_engine_vram(vgpu, r->base +
					  ((r->head + 4 * i) & (r->size - 1)),
					  &dw[i], 4, false, NULL);
		if (err) {
			error = gpuvirt_engine_err(err);
			goto fail;
		}
	}

	switch (op) {
	case GPUVIRT_VGPU_OP_NOP:
		if (n != 1)
			error = GPUVIRT_VGPU_ERR_LENGTH;
		break;
	case GPUVIRT_VGPU_OP_FENCE:
		if (n != 4) {
			error = GPUVIRT_VGPU_ERR_LENGTH;
			break;
		}
		a = gpuvirt_engine_arg64(dw, 2);
		if (a != U64_MAX) {
			if (a & 3) {
				error = GPUVIRT_VGPU_ERR_ALIGN;
				break;
			}
			if (!gpuvirt_engine_in_slice(vgpu, a, 4)) {
				error = GPUVIRT_VGPU_ERR_ADDRESS;
				break;
			}
			err = gpuvirt_engine_vram(vgpu, a, &dw[1], 4, true, NULL);
			if (err) {
				error = gpuvirt_engine_err(err);
				break;
			}
		}
		r->fence = dw[1];
		if (GPUVIRT_VGPU_PKT_FLAGS(dw[0]) & GPUVIRT_VGPU_PKT_FLAG_IRQ) {
			vgpu->irq_status |= GPUVIRT_VGPU_IRQ_FENCE;
			gpuvirt_vgpu_irq_raise(vgpu);
		}
		break;
	case GPUVIRT_VGPU_OP_FILL:
		if (n != 6) {
			error = GPUVIRT_VGPU_ERR_LENGTH;
			break;
		}
		a = gpuvirt_engine_arg64(dw, 1);
		len = gpuvirt_engine_arg64(dw, 3);
		if ((a | len) & 3) {
			error = GPUVIRT_VGPU_ERR_ALIGN;
			break;
		}
		if (!gpuvirt_engine_in_slice(vgpu, a, len)) {
			error = GPUVIRT_VGPU_ERR_ADDRESS;
			break;
		}
		err = gpuvirt_engine_vram(vgpu, a, NULL, len, true, &dw[5]);
		if (err)
			error = gpuvirt_engine_err(err);
		cost += div_u64(len * NSEC_PER_USEC, GPUVIRT_ENGINE_BYTES_PER_US);
		break;
	case GPUVIRT_VGPU_OP_COPY:
		if (n != 7) {
			error = GPUVIRT_VGPU_ERR_LENGTH;
			break;
		}
		a = gpuvirt_engine_arg64(dw, 1);
		b = gpuvirt_engine_arg64(dw, 3);
		len = gpuvirt_engine_arg64(dw, 5);
		if (!gpuvirt_engine_in_slice(vgpu, a, len) ||
		    !gpuvirt_engine_in_slice(vgpu, b, len)) {
			error = GPUVIRT_VGPU_ERR_ADDRESS;
			break;
		}
		err = gpuvirt_engine_copy(vgpu, a, b, len);
		if (err)
			error = gpuvirt_engine_err(err);
		cost += div_u64(len * NSEC_PER_USEC, GPUVIRT_ENGINE_BYTES_PER_US);
		break;
	case GPUVIRT_VGPU_OP_COMPUTE:
		if (n != 5) {
			error = GPUVIRT_VGPU_ERR_LENGTH;
			break;
		}
		if (dw[1] > GPUVIRT_VGPU_COMPUTE_MAX_US) {
			error = GPUVIRT_VGPU_ERR_ARG;
			break;
		}
		a = gpuvirt_engine_arg64(dw, 2);
		if (a & 7) {
			error = GPUVIRT_VGPU_ERR_ALIGN;
			break;
		}
		if (!gpuvirt_engine_in_slice(vgpu, a, 8)) {
			error = GPUVIRT_VGPU_ERR_ADDRESS;
			break;
		}
		x = dw[4];
		for (i = 0; i < dw[1]; i++)
			x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
		err = gpuvirt_engine_vram(vgpu, a, &x, 8, true, NULL);
		if (err)
			error = gpuvirt_engine_err(err);
		cost += (u64)dw[1] * NSEC_PER_USEC;
		break;
	default:
		error = GPUVIRT_VGPU_ERR_OPCODE;
	}
	if (error)
		goto fail;

	r->head = (r->head + 4 * n) & (r->size - 1);
	r->done++;
	return cost;

fail:
	r->error = error;
	r->error_head = r->head;
	vgpu->irq_status |= GPUVIRT_VGPU_IRQ_ERROR;
	gpuvirt_vgpu_irq_raise(vgpu);
	return 0;
}

/* Queue a vGPU that has work; called with vgpu->lock held. */
void gpuvirt_sched_kick(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct gpuvirt_vgpu_ring *r = &vgpu->ring;

	lockdep_assert_held(&vgpu->lock);
	if (!r->size || r->error || r->head == r->tail || vgpu->detached)
		return;
	spin_lock(&s->lock);
	if (list_empty(&vgpu->run_node))
		list_add_tail(&vgpu->run_node, &s->runq);
	spin_unlock(&s->lock);
	wake_up(&s->wq);
}

/*
 * Take a vGPU off the engine for good (its device is closing): out of the
 * run queue, and wait until the engine is not running it.
 */
void gpuvirt_sched_detach(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;

	mutex_lock(&vgpu->lock);
	vgpu->detached = true;
	mutex_unlock(&vgpu->lock);

	spin_lock(&s->lock);
	list_del_init(&vgpu->run_node);
	spin_unlock(&s->lock);
	wait_event(s->idle_wq, READ_ONCE(s->current_vgpu) != vgpu);
}

void gpuvirt_sched_attach(struct gpuvirt_vgpu *vgpu)
{
	mutex_lock(&vgpu->lock);
	vgpu->detached = false;
	mutex_unlock(&vgpu->lock);
}

/* Round robin: the vGPU at the head of the queue runs next. */
static struct gpuvirt_vgpu *gpuvirt_sched_pick(struct gpuvirt_sched *s)
{
	struct gpuvirt_vgpu *vgpu;

	spin_lock(&s->lock);
	vgpu = list_first_entry_or_null(&s->runq, struct gpuvirt_vgpu,
					run_node);
	if (vgpu)
		list_del_init(&vgpu->run_node);
	WRITE_ONCE(s->current_vgpu, vgpu);
	spin_unlock(&s->lock);
	return vgpu;
}

static void gpuvirt_sched_put_back(struct gpuvirt_sched *s)
{
	spin_lock(&s->lock);
	WRITE_ONCE(s->current_vgpu, NULL);
	spin_unlock(&s->lock);
	wake_up_all(&s->idle_wq);
}

/* One turn: run the vGPU's packets for up to a time slice of model time. */
static void gpuvirt_engine_turn(struct gpuvirt_sched *s,
				struct gpuvirt_vgpu *vgpu)
{
	u64 used = 0, debt = 0, cost;

	while (used < GPUVIRT_ENGINE_SLICE_NS && !kthread_should_stop()) {
		mutex_lock(&vgpu->lock);
		cost = vgpu->detached ? 0 : gpuvirt_engine_step(vgpu);
		if (cost)
			vgpu->ring.busy_ns += cost;
		mutex_unlock(&vgpu->lock);
		if (!cost)
			break;
		used += cost;
		debt += cost;
		if (debt >= GPUVIRT_ENGINE_PACE_NS) {
			fsleep(div_u64(debt, NSEC_PER_USEC));
			debt = 0;
		}
	}
	if (debt)
		fsleep(div_u64(debt, NSEC_PER_USEC) ?: 1);
	s->turns++;

	/* still work to do: to the back of the queue */
	mutex_lock(&vgpu->lock);
	gpuvirt_sched_kick(vgpu);
	mutex_unlock(&vgpu->lock);
}

static int gpuvirt_engine_thread(void *data)
{
	struct gpuvirt_sched *s = data;
	struct gpuvirt_vgpu *vgpu;

	while (!kthread_should_stop()) {
		wait_event_interruptible(s->wq, kthread_should_stop() ||
					 !list_empty_careful(&s->runq));
		vgpu = gpuvirt_sched_pick(s);
		if (vgpu)
			gpuvirt_engine_turn(s, vgpu);
		gpuvirt_sched_put_back(s);
	}
	return 0;
}

int gpuvirt_sched_start(struct gpuvirt_mdev_parent *mp)
{
	struct gpuvirt_sched *s = &mp->sched;

	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->runq);
	init_waitqueue_head(&s->wq);
	init_waitqueue_head(&s->idle_wq);
	s->thread = kthread_run(gpuvirt_engine_thread, s, "gpuvirt/%s",
				mp->gpu->name);
	return PTR_ERR_OR_ZERO(s->thread);
}

void gpuvirt_sched_stop(struct gpuvirt_mdev_parent *mp)
{
	kthread_stop(mp->sched.thread);
}
