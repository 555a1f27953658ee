// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core's debugfs view: <debugfs>/gpuvirt/gpus/<name>/ for each
 * registered GPU, holding what the core believes about it. Tests compare it
 * with the netlink answers and with the backend's own debugfs.
 *
 * debugfs failures are never fatal and never reported: debugfs is a
 * debugging aid, and its API is built to be called with error pointers.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "gpuvirt.h"
#include "vgpu.h"

static const char * const gpuvirt_mode_names[] = {
	[GPUVIRT_GPU_MODE_TIMESLICED] = "timesliced",
	[GPUVIRT_GPU_MODE_MIG] = "mig",
};

static int gpuvirt_debugfs_info_show(struct seq_file *m, void *v)
{
	struct gpuvirt_gpu *gpu = m->private;

	/*
	 * The file is removed before the backend may free the GPU, and
	 * debugfs waits for running readers on removal.
	 */
	seq_printf(m, "id: %u\n", gpu->id);
	seq_printf(m, "name: %s\n", gpu->name);
	seq_printf(m, "model: %s\n", gpu->model_name);
	seq_printf(m, "vram_size: %llu\n", gpu->vram_size);
	seq_printf(m, "engines: %u\n", gpu->engines);
	seq_printf(m, "mode: %s\n", gpu->mode < ARRAY_SIZE(gpuvirt_mode_names) ?
		   gpuvirt_mode_names[gpu->mode] : "unknown");
	seq_printf(m, "backend: %s\n", gpu->ops->name);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_debugfs_info);

static int gpuvirt_debugfs_sched_show(struct seq_file *m, void *v)
{
	struct gpuvirt_mdev_parent *mp = m->private;
	struct gpuvirt_sched *s = &mp->sched;
	unsigned int i, n = 0;

	/* removed, with debugfs draining readers, before mp is freed */
	spin_lock(&s->lock);
	for (i = 0; i < GPUVIRT_SP_SLOTS; i++)
		n += s->sp.slot[i].used;
	seq_printf(m, "policy: %s\n", gpuvirt_sched_policy_name(s->sp.policy));
	seq_printf(m, "slice_ns: %llu\n", gpuvirt_sp_slice(&s->sp));
	seq_printf(m, "busy_ns: %llu\n", s->busy_ns);
	seq_printf(m, "idle_ns: %llu\n", s->idle_ns);
	seq_printf(m, "switch_ns: %llu\n", s->switch_ns);
	seq_printf(m, "switches: %llu\n", s->switches);
	seq_printf(m, "inline_turns: %llu\n", s->inline_turns);
	seq_printf(m, "decide_ns: %llu\n", READ_ONCE(s->decide_ns));
	seq_printf(m, "lag_ns: %llu\n", s->lag_ns);
	seq_printf(m, "idle_lag_ns: %llu\n", s->idle_lag_ns);
	seq_printf(m, "caught_up_ns: %llu\n", s->caught_up_ns);
	seq_printf(m, "clock_ns: %llu\n", gpuvirt_sched_clock(s));
	seq_printf(m, "vgpus: %u\n", n);
	spin_unlock(&s->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_debugfs_sched);

static int gpuvirt_debugfs_vgpu_sched_show(struct seq_file *m, void *v)
{
	struct gpuvirt_vgpu *vgpu = m->private;
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	const struct gpuvirt_vgpu_stats *st = &vgpu->stats;
	const struct gpuvirt_sp_slot *slot;
	unsigned int i;

	/* removed, with debugfs draining readers, before the vGPU is freed */
	spin_lock(&s->lock);
	slot = &s->sp.slot[vgpu->slot];
	seq_printf(m, "ctx: %u\n", vgpu->mp->ctx_base + vgpu->slot);
	seq_printf(m, "open: %d\n", slot->open);
	seq_printf(m, "runnable: %d\n", slot->runnable);
	seq_printf(m, "weight: %u\n", slot->weight);
	seq_printf(m, "min_ppm: %u\n", gpuvirt_sp_min_ppm(&s->sp, vgpu->slot));
	seq_printf(m, "max_ppm: %u\n", gpuvirt_sp_max_ppm(&s->sp, vgpu->slot));
	seq_printf(m, "run_ns: %llu\n", st->run_ns);
	seq_printf(m, "charged_ns: %llu\n", st->charged_ns);
	seq_printf(m, "lag_ns: %llu\n", st->lag_ns);
	seq_printf(m, "slices: %llu\n", st->slices);
	seq_printf(m, "preemptions: %llu\n", st->preemptions);
	seq_printf(m, "work_ns: %llu\n", st->work_ns);
	seq_printf(m, "packets: %llu\n", st->packets);
	seq_puts(m, "wait_hist_us:");
	for (i = 0; i < GPUVIRT_WAIT_HIST_BUCKETS - 1; i++)
		seq_printf(m, " %u:%llu", 1U << (2 * i), st->wait_hist[i]);
	seq_printf(m, " inf:%llu\n", st->wait_hist[i]);
	spin_unlock(&s->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_debugfs_vgpu_sched);

/* The vGPU's migration state, counters, and whether its engine is held. */
static int gpuvirt_debugfs_vgpu_migration_show(struct seq_file *m, void *v)
{
	struct gpuvirt_vgpu *vgpu = m->private;
	struct gpuvirt_migration_stats st;
	bool stopped, tracking;

	gpuvirt_migration_get(&vgpu->mig, &st);
	mutex_lock(&vgpu->lock);
	stopped = vgpu->mig_stopped;
	mutex_unlock(&vgpu->lock);
	spin_lock(&vgpu->mig.dirty_lock);
	tracking = vgpu->mig.dirty;
	spin_unlock(&vgpu->mig.dirty_lock);
	seq_printf(m, "state: %s\n", gpuvirt_migration_state_name(st.state));
	seq_printf(m, "engine_stopped: %d\n", stopped);
	seq_printf(m, "tracking: %d\n", tracking);
	seq_printf(m, "saves: %llu\n", st.saves);
	seq_printf(m, "resumes: %llu\n", st.resumes);
	seq_printf(m, "refused: %llu\n", st.refused);
	seq_printf(m, "bytes_saved: %llu\n", st.bytes_saved);
	seq_printf(m, "bytes_resumed: %llu\n", st.bytes_resumed);
	seq_printf(m, "last_stop_copy_ns: %llu\n", st.last_stop_copy_ns);
	seq_printf(m, "dma_log_offered: %d\n", !!vgpu->vdev.log_ops);
	seq_printf(m, "dma_logging: %d\n", st.dma_logging);
	seq_printf(m, "dma_log_starts: %llu\n", st.dma_log_starts);
	seq_printf(m, "dma_log_reports: %llu\n", st.dma_log_reports);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_debugfs_vgpu_migration);

/* The GPU's scheduler and the directory of its vGPUs. */
void gpuvirt_debugfs_mdev_add(struct gpuvirt_mdev_parent *mp)
{
	struct dentry *dir = mp->debugfs;

	mp->debugfs_sched = debugfs_create_file("sched", 0400, dir, mp,
						&gpuvirt_debugfs_sched_fops);
	mp->debugfs_vgpus = debugfs_create_dir("vgpus", dir);
}

/* Before mp is freed; its vGPUs and their directories are gone. */
void gpuvirt_debugfs_mdev_del(struct gpuvirt_mdev_parent *mp)
{
	debugfs_remove(mp->debugfs_sched);
	debugfs_remove(mp->debugfs_vgpus);
	mp->debugfs_sched = NULL;
	mp->debugfs_vgpus = NULL;
}

void gpuvirt_debugfs_vgpu_add(struct gpuvirt_vgpu *vgpu)
{
	vgpu->debugfs = debugfs_create_dir(vgpu->uuid,
					   vgpu->mp->debugfs_vgpus);
	debugfs_create_file("sched", 0400, vgpu->debugfs, vgpu,
			    &gpuvirt_debugfs_vgpu_sched_fops);
	debugfs_create_file("migration", 0400, vgpu->debugfs, vgpu,
			    &gpuvirt_debugfs_vgpu_migration_fops);
}

void gpuvirt_debugfs_vgpu_del(struct gpuvirt_vgpu *vgpu)
{
	debugfs_remove_recursive(vgpu->debugfs);
	vgpu->debugfs = NULL;
}

void gpuvirt_debugfs_gpu_add(struct gpuvirt_gpu *gpu)
{
	gpu->debugfs = debugfs_create_dir(gpu->name,
					  gpuvirt_registry.debugfs_gpus);
	debugfs_create_file("info", 0400, gpu->debugfs, gpu,
			    &gpuvirt_debugfs_info_fops);
}

void gpuvirt_debugfs_gpu_del(struct gpuvirt_gpu *gpu)
{
	debugfs_remove_recursive(gpu->debugfs);
	gpu->debugfs = NULL;
}

int gpuvirt_debugfs_init(void)
{
	gpuvirt_registry.debugfs = debugfs_create_dir("gpuvirt", NULL);
	gpuvirt_registry.debugfs_gpus =
		debugfs_create_dir("gpus", gpuvirt_registry.debugfs);
	return 0;
}

void gpuvirt_debugfs_exit(void)
{
	debugfs_remove_recursive(gpuvirt_registry.debugfs);
	gpuvirt_registry.debugfs = NULL;
	gpuvirt_registry.debugfs_gpus = NULL;
}
