/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gpuvirtctl: shared declarations of the objects, the command tables and
 * error reporting.
 */
#ifndef GPUVIRTCTL_H
#define GPUVIRTCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uapi/linux/gpuvirt.h>

#include "args.h"
/*
 * The attribute policies and names of every attribute set and the names of
 * the enums, generated from the netlink spec: gpu_policy, vgpu_attr_names,
 * sched_policy_names...
 */
#include "nl-gen.h"

#define GPUVIRTCTL_VERSION	"0.1"

/* Exit status, documented in gpuvirtctl(8). */
#define EXIT_OK		0
#define EXIT_RUNTIME	1	/* the kernel or the system said no */
#define EXIT_USAGE	2	/* the command line is wrong */

struct nl;

/* Global options and the netlink socket, opened on first use. */
struct ctx {
	bool json;
	bool pretty;
	const char *sysfs_root;	/* --sysfs-root: prefix of /sys and /proc */
	struct nl *nl;
};

/*
 * One command of an object. @args describes its arguments (the table must
 * end with a NULL keyword); @opts_size bytes are zeroed and filled by the
 * parser and handed to @run with the mask of given arguments. @run returns
 * an exit status.
 */
struct cmd {
	const char *name;
	const struct arg_spec *args;
	size_t opts_size;
	int (*run)(struct ctx *ctx, const void *opts, uint64_t given);
};

/*
 * One object: either commands (@cmds, ended by a NULL name; the first one is
 * the default when none is given, as "gpu" alone means "gpu show"), or a
 * single command taking its arguments right after the object word (@bare,
 * as "monitor" does).
 */
struct object {
	const char *name;
	const struct cmd *cmds;
	const struct cmd *bare;
};

extern const struct object gpu_object;
extern const struct object type_object;
extern const struct object vgpu_object;
extern const struct object sched_object;
extern const struct object monitor_object;
extern const struct object stats_object;
extern const struct object pt_object;
extern const struct object mig_object;
/* Not objects: "apply -f FILE" and "assert -f FILE", each a bare command. */
extern const struct object apply_object;
extern const struct object assert_object;

/* Print an object's usage lines, "Usage: gpuvirtctl gpu show [ id ID ]". */
void usage_object(FILE *out, const struct object *obj);

/*
 * Errors: "gpuvirtctl: <what the user asked>: <message>". The context is
 * the object and command being run ("gpu show"), or nothing before that.
 */
void err_set_context(const char *obj, const char *cmd);
void err_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Open the netlink socket and resolve the family, once; returns an exit
 * status, having reported any failure.
 */
int ctx_nl(struct ctx *ctx);
/* ctx_nl(), but -ENOENT and no message when the family is missing. */
int ctx_nl_try(struct ctx *ctx);

struct nlmsghdr;
struct nl_attr_names;

/*
 * Send the request built in ctx->nl->req, a get or a dump, and print the
 * replies as "OBJECT show" does: one text line per object, or in JSON one
 * document with the array @key of the objects, each printed by @print.
 * The document opens with the first object, so that a refused request
 * prints nothing on stdout; an empty dump still prints {"key":[]}. Kernel
 * errors are printed naming attributes with @names. Returns an exit status.
 */
int show_exchange(struct ctx *ctx, const char *key,
		  int (*print)(const struct nlmsghdr *nlh),
		  const struct nl_attr_names *names);

/*
 * show_exchange(), then @more(@arg) to print more objects into the array
 * (the other vGPU stacks' entries) before it closes.
 */
int show_exchange_more(struct ctx *ctx, const char *key,
		       int (*print)(const struct nlmsghdr *nlh),
		       const struct nl_attr_names *names,
		       void (*more)(void *arg), void *arg);

/* A "show" document of the objects @more(@arg) prints, without netlink. */
void show_list(const char *key, void (*more)(void *arg), void *arg);

/* Print @val as its name in @names, or as a number if it has none. */
void pr_enum(const char *key, const char *label, const struct arg_enum *names,
	     uint32_t val);

/*
 * The members of one object of a reply or notification, shared by the
 * objects' "show" and by "monitor". They return 0, or -EINVAL having
 * reported a malformed message.
 */
int gpu_print(const struct nlmsghdr *nlh);

/*
 * The mdev parent in /sys/class/mdev_bus/ of GPU @id (@gi < 0): its
 * device, a PCI address; or of its GI @gi, "<gpu name>-gi<gi>". Returns an
 * exit status.
 */
int gpu_mdev_parent(struct ctx *ctx, uint32_t id, int gi, char *buf,
		    size_t len);
/* 1 if GPU @id is in the sriov vGPU model, 0 if not, -1 reported error. */
int gpu_sriov(struct ctx *ctx, uint32_t id);
/*
 * Set GPU @id's vGPU model (GPUVIRT_VGPU_MODEL_*) over netlink, or its
 * count of VFs through its PF's sriov_numvfs (through 0 when it has
 * others). 0, or nonzero having said why not.
 */
int gpu_model_set(struct ctx *ctx, uint32_t id, uint32_t model);
int gpu_vfs_set(struct ctx *ctx, uint32_t id, uint32_t n);
int vgpu_print(const struct nlmsghdr *nlh);
int sched_print(const struct nlmsghdr *nlh);
int gi_print(const struct nlmsghdr *nlh);

/*
 * Why the mdev core refused to create a vGPU (the negative errno @err of
 * writing its create file), for the errors "vgpu add" and "apply" give.
 */
const char *vgpu_create_hint(int err);
/* Why a VF could not take a type: the errors of sysfs_vf_type(). */
const char *vf_type_hint(int err);

#endif /* GPUVIRTCTL_H */
