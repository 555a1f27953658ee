/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/gpuvirt.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_GPUVIRT_H
#define _UAPI_LINUX_GPUVIRT_H

#define GPUVIRT_FAMILY_NAME	"gpuvirt"
#define GPUVIRT_FAMILY_VERSION	1

/**
 * enum gpuvirt_gpu_mode - How a GPU is shared.
 * @GPUVIRT_GPU_MODE_TIMESLICED: Engines are shared in time between vGPUs.
 * @GPUVIRT_GPU_MODE_MIG: The GPU is cut into hardware GPU instances.
 */
enum gpuvirt_gpu_mode {
	GPUVIRT_GPU_MODE_TIMESLICED,
	GPUVIRT_GPU_MODE_MIG,
};

/**
 * enum gpuvirt_sched_policy - How a GPU's scheduler shares its engines in time
 *   between vGPUs.
 * @GPUVIRT_SCHED_POLICY_BEST_EFFORT: Work-conserving round robin: every vGPU
 *   with work gets a time slice in turn, and an idle vGPU is skipped.
 * @GPUVIRT_SCHED_POLICY_EQUAL_SHARE: Each running vGPU gets at most 1/N of the
 *   engine time, N being the number of running (created and opened) vGPUs.
 *   Time an idle vGPU does not use stays idle.
 * @GPUVIRT_SCHED_POLICY_FIXED_SHARE: Each vGPU gets at most 1/max_instances of
 *   its type, however many others run. Time an idle vGPU does not use stays
 *   idle.
 * @GPUVIRT_SCHED_POLICY_WEIGHTED: Work-conserving; busy vGPUs share engine
 *   time in proportion to their weights.
 */
enum gpuvirt_sched_policy {
	GPUVIRT_SCHED_POLICY_BEST_EFFORT,
	GPUVIRT_SCHED_POLICY_EQUAL_SHARE,
	GPUVIRT_SCHED_POLICY_FIXED_SHARE,
	GPUVIRT_SCHED_POLICY_WEIGHTED,
};

enum {
	GPUVIRT_A_GPU_ID = 1,
	GPUVIRT_A_GPU_NAME,
	GPUVIRT_A_GPU_MODEL,
	GPUVIRT_A_GPU_VRAM_SIZE,
	GPUVIRT_A_GPU_ENGINES,
	GPUVIRT_A_GPU_MODE,
	GPUVIRT_A_GPU_BACKEND,
	GPUVIRT_A_GPU_PAD,

	__GPUVIRT_A_GPU_MAX,
	GPUVIRT_A_GPU_MAX = (__GPUVIRT_A_GPU_MAX - 1)
};

enum {
	GPUVIRT_CMD_GPU_GET = 1,
	GPUVIRT_CMD_GPU_ADD_NTF,
	GPUVIRT_CMD_GPU_DEL_NTF,

	__GPUVIRT_CMD_MAX,
	GPUVIRT_CMD_MAX = (__GPUVIRT_CMD_MAX - 1)
};

#define GPUVIRT_MCGRP_MONITOR	"monitor"

#endif /* _UAPI_LINUX_GPUVIRT_H */
