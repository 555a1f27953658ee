/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * "apply" and "assert" on the other vGPU stacks: the "gpus: - device:"
 * entries of the configuration (config.h), planned against what stacks.c
 * reads and run by apply.c with its steps, in the same order and with the
 * same undo on failure.
 */
#ifndef GPUVIRTCTL_APPLY_STACKS_H
#define GPUVIRTCTL_APPLY_STACKS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "stacks.h"

/*
 * One change: a vGPU to create (@del false) or remove; or, with @vfs, the
 * VFs of PF @dev to enable: @vfs into its sriov_numvfs (undone by 0), then,
 * when vGPUs on them follow in the same run (@kind STK_NVVF or STK_MDEV,
 * what the VFs will be), a wait for them to come up (stk_wait_vfs()).
 *
 * A @pending creation is on a VF that the same run enables, which did not
 * exist when it planned: @type_name is the file's, matched against what
 * the VFs list once they are up (stk_nvvf_type_new(),
 * stk_mdev_create_new()), and @type_id is "".
 */
struct stk_action {
	bool del;
	bool pending;
	unsigned int vfs;
	enum stk_kind kind;
	char dev[STK_NAME_LEN];		/* the mdev parent, or the PF */
	char handle[UNITS_UUID_LEN];	/* the UUID, or the VF */
	char type_id[STK_NAME_LEN];	/* "nvidia-558", "1065" */
	char type_name[96];
};

struct stk_plan {
	const struct stk_host *h;	/* what stk_scan() read */
	struct stk_action *acts;	/* removals first, then creations */
	size_t n_acts;
};

/* A conflict of the file at @line, reported through apply.c. */
typedef void (*stk_conflict_fn)(void *arg, unsigned int line,
				const char *msg);

/*
 * Plan the "device" entries of @cfg against @h, which stk_scan() read and
 * which must outlive the plan. With @prune, the vGPUs of a listed device
 * that the file does not list are removed, unless in use. No I/O. Returns
 * 0 or -ENOMEM; every refusal goes to @conflict.
 */
int stk_plan_build(const struct stk_host *h, const struct config *cfg,
		   bool prune, struct stk_plan *sp, stk_conflict_fn conflict,
		   void *arg);
void stk_plan_free(struct stk_plan *sp);

/*
 * Do @a, or with @undo what undoes it; a refusal is put in @err. VFs that
 * do not come up within @wait_ms are disabled again.
 */
int stk_action_run(const char *root, unsigned int wait_ms,
		   const struct stk_action *a, bool undo, char *err,
		   size_t len);

#endif /* GPUVIRTCTL_APPLY_STACKS_H */
