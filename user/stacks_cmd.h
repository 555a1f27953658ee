/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The other vGPU stacks in the "show" commands; see stacks_cmd.c.
 */
#ifndef GPUVIRTCTL_STACKS_CMD_H
#define GPUVIRTCTL_STACKS_CMD_H

#include "args.h"
#include "stacks.h"

struct ctx;

/* The names of "stack STACK", values of enum stk_kind. */
extern const struct arg_enum stk_kind_enums[];

/* Scan below --sysfs-root; returns an exit status, having reported. */
int stk_load(struct ctx *ctx, struct stk_host *h);

/*
 * What a "show" prints of the other stacks: every entry, or those of one
 * kind (@kind >= 0), of one device (and, for a PF, of its VF parents), one
 * type, one vGPU.
 */
struct stk_show {
	struct stk_host *h;
	int kind;
	const struct stk_dev *dev;
	const struct stk_type *type;
	const struct stk_vgpu *vgpu;
};

/* Print the wanted entries, each an object of the "show" array. */
void stk_show_devs(void *arg);
void stk_show_types(void *arg);
void stk_show_vgpus(void *arg);
/* How many entries stk_show_devs(), _types() or _vgpus() would print. */
enum stk_what { STK_DEVS, STK_TYPES, STK_VGPUS };
unsigned int stk_count(const struct stk_show *sh, enum stk_what what);

void stk_print_dev(const struct stk_host *h, const struct stk_dev *d);
void stk_print_type(const struct stk_dev *d, const struct stk_type *t);
void stk_print_vgpu(const struct stk_vgpu *g);

/* "dev NAME": the device, or a report naming it; returns an exit status. */
int stk_dev_arg(struct stk_host *h, const char *name, struct stk_dev **out);

#endif /* GPUVIRTCTL_STACKS_CMD_H */
