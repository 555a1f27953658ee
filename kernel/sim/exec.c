// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulated GPU's engines: they run the commands the core hands them
 * (struct gpuvirt_cmd) on real memory, and say what each cost in modelled
 * engine time.
 *
 * The cost model (Documentation/backend.rst, "Capacity model"): the whole
 * GPU runs one compute step per microsecond and fills or copies
 * GPUVIRT_SIM_BYTES_PER_US bytes per microsecond; a context that holds
 * ctx->compute of the GPU's GPUVIRT_EXEC_COMPUTE_PARTS parts (a GPU
 * instance's compute slices) does that part of it, so each unit costs
 * GPUVIRT_EXEC_COMPUTE_PARTS / ctx->compute times as long. Every command
 * also costs GPUVIRT_SIM_CMD_NS up front, whatever the context's part (the
 * front end is not sliced). The results are computed for real in VRAM, so
 * tests can check them; the time is the model's, and the core paces the
 * engine by it.
 *
 * Fault knobs in debugfs reach the core's error paths: fail_exec fails the
 * next N commands with -EIO, and hang_engine makes the engine stop making
 * progress until the core resets it.
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <uapi/linux/gpuvirt_vgpu.h>

#include "sim.h"

#define GPUVIRT_SIM_CMD_NS		1000
#define GPUVIRT_SIM_BYTES_PER_US	16384

static struct gpuvirt_sim_dev *gpu_to_sdev(struct gpuvirt_gpu *gpu)
{
	return container_of(gpu, struct gpuvirt_sim_dev, gpu);
}

/*
 * Access [off, off + len) of VRAM: read into or write from @buf, or fill
 * with *@pattern. Unbacked VRAM reads as zero.
 */
static int gpuvirt_sim_vram_rw(struct gpuvirt_gpu *gpu, u64 off, void *buf,
			       u64 len, bool write, const u32 *pattern)
{
	while (len) {
		size_t n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));
		struct page *page;
		u8 *p;

		page = gpuvirt_sim_vram_page(gpu, off, write);
		if (IS_ERR(page))
			return PTR_ERR(page);
		if (!page) {
			memset(buf, 0, n);
		} else {
			p = kmap_local_page(page) + offset_in_page(off);
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
	}
	return 0;
}

static bool gpuvirt_sim_in_ctx(const struct gpuvirt_exec_ctx *ctx, u64 off,
			       u64 len)
{
	return len <= ctx->vram_size && off <= ctx->vram_size - len;
}

/*
 * Units (bytes, compute steps) a budget buys at @per_us units per
 * microsecond of the whole GPU, on @parts of its compute; at least one.
 * The budget is at most a slice (GPUVIRT_SP_SLICE_MAX_NS), so nothing
 * overflows.
 */
static u64 gpuvirt_sim_units(u64 budget_ns, u64 per_us, u32 parts)
{
	u64 n = div_u64(budget_ns * per_us * parts,
			NSEC_PER_USEC * GPUVIRT_EXEC_COMPUTE_PARTS);

	return max_t(u64, n, 1);
}

/* Modelled time of @n units at @per_us units per us of the whole GPU. */
static u64 gpuvirt_sim_units_ns(u64 n, u64 per_us, u32 parts)
{
	return div_u64(n * NSEC_PER_USEC * GPUVIRT_EXEC_COMPUTE_PARTS,
		       per_us * parts);
}

/* Bytes a budget buys, at least one dword. */
static u64 gpuvirt_sim_bytes(u64 budget_ns, u32 parts)
{
	u64 n = gpuvirt_sim_units(budget_ns, GPUVIRT_SIM_BYTES_PER_US, parts);

	return max_t(u64, n & ~3ULL, 4);
}

static int gpuvirt_sim_copy(struct gpuvirt_gpu *gpu,
			    const struct gpuvirt_exec_ctx *ctx,
			    struct gpuvirt_cmd *cmd, u64 n)
{
	u64 base = ctx->vram_offset, dst, src, step;
	bool backwards = cmd->dst > cmd->src && cmd->dst < cmd->src + cmd->len;
	void *bounce;
	int err = 0;

	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (n && !err) {
		step = min_t(u64, n, PAGE_SIZE);
		if (backwards) {
			/* memmove: the tail first when dst overlaps src's end */
			dst = cmd->dst + cmd->len - cmd->done - step;
			src = cmd->src + cmd->len - cmd->done - step;
		} else {
			dst = cmd->dst + cmd->done;
			src = cmd->src + cmd->done;
		}
		err = gpuvirt_sim_vram_rw(gpu, base + src, bounce, step, false,
					  NULL) ?:
		      gpuvirt_sim_vram_rw(gpu, base + dst, bounce, step, true,
					  NULL);
		if (!err) {
			cmd->done += step;
			n -= step;
		}
	}
	kfree(bounce);
	return err;
}

/*
 * One chunk of @cmd; the cost goes to *@cost, the compute steps run to
 * *@units.
 */
static int gpuvirt_sim_run(struct gpuvirt_gpu *gpu,
			   const struct gpuvirt_exec_ctx *ctx,
			   struct gpuvirt_cmd *cmd, u64 budget_ns, u64 *cost,
			   u64 *units)
{
	u64 base = ctx->vram_offset, n, x, i;
	u32 pattern;
	int err;

	if (!cmd->done)
		*cost += GPUVIRT_SIM_CMD_NS;
	switch (cmd->op) {
	case GPUVIRT_CMD_NOP:
		return 1;
	case GPUVIRT_CMD_WRITE:
		if ((cmd->len != 4 && cmd->len != 8) ||
		    !gpuvirt_sim_in_ctx(ctx, cmd->dst, cmd->len))
			return -EFAULT;
		x = cmd->value;
		err = gpuvirt_sim_vram_rw(gpu, base + cmd->dst, &x, cmd->len,
					  true, NULL);
		return err ?: 1;
	case GPUVIRT_CMD_FILL:
		if (((cmd->dst | cmd->len) & 3) ||
		    !gpuvirt_sim_in_ctx(ctx, cmd->dst, cmd->len))
			return -EFAULT;
		n = min(cmd->len - cmd->done,
			gpuvirt_sim_bytes(budget_ns, ctx->compute));
		pattern = cmd->value;
		err = gpuvirt_sim_vram_rw(gpu, base + cmd->dst + cmd->done,
					  NULL, n, true, &pattern);
		if (err)
			return err;
		cmd->done += n;
		*cost += gpuvirt_sim_units_ns(n, GPUVIRT_SIM_BYTES_PER_US,
					      ctx->compute);
		return cmd->done == cmd->len;
	case GPUVIRT_CMD_COPY:
		if (!gpuvirt_sim_in_ctx(ctx, cmd->dst, cmd->len) ||
		    !gpuvirt_sim_in_ctx(ctx, cmd->src, cmd->len))
			return -EFAULT;
		n = min(cmd->len - cmd->done,
			gpuvirt_sim_bytes(budget_ns, ctx->compute));
		err = gpuvirt_sim_copy(gpu, ctx, cmd, n);
		if (err)
			return err;
		*cost += gpuvirt_sim_units_ns(n, GPUVIRT_SIM_BYTES_PER_US,
					      ctx->compute);
		return cmd->done == cmd->len;
	case GPUVIRT_CMD_COMPUTE:
		if (!gpuvirt_sim_in_ctx(ctx, cmd->dst, 8))
			return -EFAULT;
		if (!cmd->done)
			cmd->state = cmd->value;
		n = min(cmd->len - cmd->done,
			gpuvirt_sim_units(budget_ns, 1, ctx->compute));
		x = cmd->state;
		for (i = 0; i < n; i++)
			x = x * GPUVIRT_VGPU_COMPUTE_MUL +
			    GPUVIRT_VGPU_COMPUTE_ADD;
		cmd->state = x;
		cmd->done += n;
		*units += n;
		*cost += gpuvirt_sim_units_ns(n, 1, ctx->compute);
		if (cmd->done < cmd->len)
			return 0;
		err = gpuvirt_sim_vram_rw(gpu, base + cmd->dst, &x, 8, true,
					  NULL);
		return err ?: 1;
	}
	return -EINVAL;
}

/**
 * gpuvirt_sim_exec() - the backend's exec op
 * @gpu: the GPU
 * @ctx: the vGPU the command runs for
 * @cmd: the command, with its progress
 * @budget_ns: engine time this chunk may take
 * @cost_ns: engine time it took, in the model
 *
 * Return: 1 when @cmd completed, 0 when more is left, or a negative errno.
 */
int gpuvirt_sim_exec(struct gpuvirt_gpu *gpu, const struct gpuvirt_exec_ctx *ctx,
		     struct gpuvirt_cmd *cmd, u64 budget_ns, u64 *cost_ns)
{
	struct gpuvirt_sim_engine *eng = &gpu_to_sdev(gpu)->engine;
	struct gpuvirt_sim_ctx_stats *st;
	unsigned int e;
	u64 cost = 0, units = 0;
	int ret;

	if (!ctx->engines ||
	    (gpu->engines < 64 && ctx->engines >> gpu->engines) ||
	    !ctx->compute || ctx->compute > GPUVIRT_EXEC_COMPUTE_PARTS) {
		/* the core asked for engines this GPU does not have */
		ret = -EINVAL;
	} else if (atomic_add_unless(&eng->fail_exec, -1, 0)) {
		ret = -EIO;
	} else if (READ_ONCE(eng->hang)) {
		/* a hung engine burns its time and gets nowhere */
		WRITE_ONCE(eng->hung, true);
		cost = budget_ns;
		ret = 0;
	} else {
		ret = gpuvirt_sim_run(gpu, ctx, cmd, budget_ns, &cost, &units);
	}
	*cost_ns = cost;

	spin_lock(&eng->lock);
	eng->owner_ctx = ctx->id;
	eng->busy_ns += cost;
	for (e = 0; e < gpu->engines && e < GPUVIRT_ENGINES_MAX; e++)
		if (ctx->engines & BIT_ULL(e))
			eng->engine_ns[e] += cost;
	if (ret == 1)
		eng->cmds++;
	if (ret < 0)
		eng->faults++;
	if (ctx->id < ARRAY_SIZE(eng->ctx)) {
		st = &eng->ctx[ctx->id];
		st->ns += cost;
		st->units += units;
		if (ret == 1)
			st->cmds++;
	}
	spin_unlock(&eng->lock);
	return ret;
}

/**
 * gpuvirt_sim_engine_reset() - the backend's engine_reset op
 * @gpu: the GPU
 * @engines: the engines to reset
 *
 * Clears a hang, including the hang_engine knob that caused it. The
 * simulated engines share one hang knob, so any reset clears it.
 */
void gpuvirt_sim_engine_reset(struct gpuvirt_gpu *gpu, u64 engines)
{
	struct gpuvirt_sim_engine *eng = &gpu_to_sdev(gpu)->engine;

	WRITE_ONCE(eng->hang, false);
	WRITE_ONCE(eng->hung, false);
	spin_lock(&eng->lock);
	eng->resets++;
	spin_unlock(&eng->lock);
}

/**
 * gpuvirt_sim_reset() - the backend's reset op
 * @gpu: the GPU
 *
 * Resets the engines and drops every page of VRAM, so that all of it
 * reads as zero: what a MIG mode change does to a GPU.
 */
void gpuvirt_sim_reset(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_sim_engine *eng = &gpu_to_sdev(gpu)->engine;

	gpuvirt_sim_vram_discard(gpu, 0, gpu->vram_size);
	WRITE_ONCE(eng->hang, false);
	WRITE_ONCE(eng->hung, false);
	spin_lock(&eng->lock);
	eng->owner_ctx = -1;
	eng->gpu_resets++;
	spin_unlock(&eng->lock);
}

static int gpuvirt_sim_engine_show(struct seq_file *m, void *v)
{
	struct gpuvirt_sim_dev *sdev = m->private;
	struct gpuvirt_sim_engine *eng = &sdev->engine;
	unsigned int i;

	spin_lock(&eng->lock);
	seq_printf(m, "owner_ctx: %d\n", eng->owner_ctx);
	seq_printf(m, "hung: %d\n", READ_ONCE(eng->hung));
	seq_printf(m, "cmds: %llu\n", eng->cmds);
	seq_printf(m, "busy_ns: %llu\n", eng->busy_ns);
	seq_printf(m, "faults: %llu\n", eng->faults);
	seq_printf(m, "resets: %llu\n", eng->resets);
	seq_printf(m, "gpu_resets: %llu\n", eng->gpu_resets);
	for (i = 0; i < sdev->gpu.engines && i < GPUVIRT_ENGINES_MAX; i++)
		seq_printf(m, "engine %u: ns %llu\n", i, eng->engine_ns[i]);
	for (i = 0; i < ARRAY_SIZE(eng->ctx); i++)
		if (eng->ctx[i].ns || eng->ctx[i].cmds)
			seq_printf(m, "ctx %u: cmds %llu ns %llu units %llu\n",
				   i, eng->ctx[i].cmds, eng->ctx[i].ns,
				   eng->ctx[i].units);
	spin_unlock(&eng->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_engine);

void gpuvirt_sim_engine_init(struct gpuvirt_sim_dev *sdev)
{
	struct gpuvirt_sim_engine *eng = &sdev->engine;

	spin_lock_init(&eng->lock);
	eng->owner_ctx = -1;
	atomic_set(&eng->fail_exec, 0);
	debugfs_create_file("engine", 0400, sdev->debugfs, sdev,
			    &gpuvirt_sim_engine_fops);
	gpuvirt_sim_debugfs_knob("fail_exec", sdev->debugfs, &eng->fail_exec);
	debugfs_create_bool("hang_engine", 0600, sdev->debugfs, &eng->hang);
}
