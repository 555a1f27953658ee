/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The declarative configuration of "gpuvirtctl apply" and "assert": one
 * YAML (or JSON) document, parsed with libyaml into the model below.
 *
 *	simulated-gpus:
 *	  - id: 0
 *	    model: h200-141gb		# or: model: custom, vram: 24G, engines: 4
 *	gpus:
 *	  - id: 0
 *	    vgpu-mode: homogeneous	# or mixed
 *	    sched:
 *	      policy: equal-share
 *	      timeslice-us: 2000
 *	    vgpus:
 *	      - uuid: 5a3c0001-0000-4000-8000-000000000001
 *	        type: H200-35C
 *	        weight: 100
 *	        min-pct: 0
 *	        max-pct: 100
 *	  - id: 2
 *	    vgpu-model: sriov		# or mdev: a vGPU is a VF given a type
 *	    vfs: 4			# the VFs the GPU should have
 *	    vgpus:
 *	      - vf: 8002:00:00.1	# the VF that is the vGPU, by its address
 *	        type: H200-35C
 *	        weight: 200
 *	  - id: 1
 *	    mig:
 *	      mode: on			# off: no GIs, time-sliced mode
 *	      instances: [3g.71gb, 2g.35gb, 1g.18gbx2]
 *	    vgpus:
 *	      - uuid: 5a3c0001-0000-4000-8000-000000000011
 *	        type: H200-3-71C	# a MIG-backed type: on a GI
 *	        gi: 0			# optional: the GI, by id
 *	  - device: 0000:41:00.0	# another stack's device: a PCI address or
 *	    vfs: 4			# an mdev parent's name ("mtty"); a PF's VFs
 *	    vgpus:
 *	      - vf: 0000:41:00.4	# nvidia-vf: the VF that is the vGPU
 *	        type: H100-4C
 *	      - uuid: 5a3c0001-0000-4000-8000-0000000000a1
 *	        type: A100-4C		# mdev: a vGPU by its UUID
 *	passthrough:
 *	  - device: 0000:01:00.0	# a PCI address; its IOMMU group moves
 *	    driver: gpuvirt_vfio_pci	# or vfio-pci
 *	    force: false		# accept the reasons marked force
 *	    persistent: false		# a udev rule claims it at boot
 *
 * Everything but the ids, models, UUIDs (or VFs), types and devices is optional, and
 * what is left out is left as it is. Values are checked against the ranges the
 * command line and the kernel use. Unknown keys are errors, so that a file
 * written for a later version fails loudly instead of half-applying.
 *
 * This file does no I/O besides the parser: config_parse() takes the text
 * and reports errors as "NAME:LINE:COLUMN: message" in a buffer.
 */
#ifndef GPUVIRTCTL_CONFIG_H
#define GPUVIRTCTL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "units.h"

#define CONFIG_NAME_MAX		23	/* vGPU type and GPU model names */
#define CONFIG_MAX_SIMS		256	/* entries of "simulated-gpus" */
#define CONFIG_MAX_GPUS		256	/* entries of "gpus" */
#define CONFIG_MAX_VGPUS	256	/* entries of one "vgpus" */
#define CONFIG_MAX_GIS		7	/* GIs of one GPU in MIG mode */
#define CONFIG_GI_NAME_MAX	15	/* GI profile names, "1g.18gb+me" */
#define CONFIG_MAX_PTS		64	/* entries of "passthrough" */
#define CONFIG_BDF_LEN		13	/* "dddd:bb:dd.f" and the NUL */

enum config_vgpu_mode {
	CONFIG_VGPU_MODE_UNSET,
	CONFIG_VGPU_MODE_HOMOGENEOUS,
	CONFIG_VGPU_MODE_MIXED,
};

/* "homogeneous" and "mixed", for parsing and printing. */
extern const struct arg_enum config_vgpu_modes[];

/* How a GPU's vGPUs are made: mdev devices, or typed SR-IOV VFs. */
enum config_vgpu_model {
	CONFIG_VGPU_MODEL_UNSET,
	CONFIG_VGPU_MODEL_MDEV,
	CONFIG_VGPU_MODEL_SRIOV,
};

/* "mdev" and "sriov", for parsing and printing. */
extern const struct arg_enum config_vgpu_models[];
/* The scheduling policies by name are sched_policy_names of nl-gen.h. */

enum config_pt_driver {
	CONFIG_PT_GPUVIRT,	/* gpuvirt_vfio_pci, the default */
	CONFIG_PT_VFIO_PCI,	/* plain vfio-pci */
};

/* "gpuvirt_vfio_pci" and "vfio-pci", the drivers of "passthrough". */
extern const struct arg_enum config_pt_drivers[];

/*
 * A device handed to VFIO with its whole IOMMU group, as "gpuvirtctl pt
 * assign" does. Which devices share the group is for apply.c to find out.
 */
struct config_pt {
	char device[CONFIG_BDF_LEN];	/* canonical: 0000:01:00.0 */
	uint32_t driver;		/* enum config_pt_driver */
	bool force;
	bool persistent;
	unsigned int line, column;
};

/* A simulated GPU: "ID MODEL" or "ID custom VRAM ENGINES" for new_device. */
struct config_sim {
	uint32_t id;
	char model[CONFIG_NAME_MAX + 1];
	uint64_t vram;		/* custom only: bytes */
	uint32_t engines;	/* custom only */
	unsigned int line;
};

/*
 * A vGPU of one of our GPUs: an mdev device by @uuid, or in the sriov
 * model a VF by its address @vf (its UUID is the kernel's choice).
 */
struct config_vgpu {
	char uuid[UNITS_UUID_LEN];	/* "" for a VF vGPU */
	char vf[CONFIG_BDF_LEN];	/* "" for an mdev vGPU */
	char type[CONFIG_NAME_MAX + 1];
	bool has_weight, has_min, has_max, has_gi;
	uint32_t gi;		/* 0..6: the GI of a MIG-backed vGPU */
	uint32_t weight;	/* 1..10000 */
	uint32_t min_pct;	/* 0..100 */
	uint32_t max_pct;	/* 1..100 */
	unsigned int line, column;
};

/* One entry of "instances": a GI profile, "xCOUNT" folded into @count. */
struct config_gi {
	char profile[CONFIG_GI_NAME_MAX + 1];
	uint32_t count;		/* 1..7 */
	unsigned int line, column;
};

/*
 * The "mig" section of a GPU. The profile names are checked for their
 * form only here: which exist depends on the GPU's model, which apply.c
 * knows. The instances are the GPU's whole partition; "apply" destroys
 * the GIs it does not list only with --prune, and never a GI with a vGPU.
 */
struct config_mig {
	bool set;		/* the GPU has a "mig" section */
	bool on;		/* "mode", on unless given as off */
	struct config_gi gis[CONFIG_MAX_GIS];
	size_t n_gis;
	unsigned int line;
};

struct config_gpu {
	uint32_t id;
	enum config_vgpu_mode vgpu_mode;
	enum config_vgpu_model vgpu_model;
	bool has_vfs;
	uint32_t vfs;		/* the VFs to enable, sriov model only */
	bool has_policy, has_timeslice;
	uint32_t policy;	/* enum gpuvirt_sched_policy */
	uint32_t timeslice_us;	/* 0 or 100..100000 */
	struct config_vgpu *vgpus;
	size_t n_vgpus;
	struct config_mig mig;
	unsigned int line;
};

/*
 * A vGPU of another stack (stacks.h): an mdev device by @uuid, or an
 * nvidia-vf VF by @vf. The keys only gpuvirt offers are kept by name, for
 * apply to refuse with the stack it finds.
 */
#define CONFIG_DEV_LEN		64
#define CONFIG_DTYPE_LEN	96
struct config_dvgpu {
	char uuid[UNITS_UUID_LEN];
	char vf[CONFIG_BDF_LEN];
	char type[CONFIG_DTYPE_LEN];
	bool has_uuid, has_vf;
	const char *ours_only;	/* "weight", "min-pct", ...; NULL if none */
	uint32_t weight, min_pct, max_pct, gi;
	unsigned int line, column;
};

/* A device of another stack, "gpus: - device: NAME". */
struct config_dev {
	char device[CONFIG_DEV_LEN];	/* a canonical PCI address, or a name */
	const char *ours_only;		/* "vgpu-mode", "sched", "mig" */
	bool has_vfs;
	uint32_t vfs;			/* SR-IOV VFs the PF should have */
	struct config_dvgpu *vgpus;
	size_t n_vgpus;
	unsigned int line;
};

struct config {
	struct config_sim *sims;
	size_t n_sims;
	struct config_gpu *gpus;
	size_t n_gpus;
	struct config_pt *pts;
	size_t n_pts;
	struct config_dev *devs;
	size_t n_devs;
};

/*
 * Parse the @len bytes of @text, named @name in messages, into @cfg. Returns
 * 0, or -1 with "NAME:LINE:COLUMN: message" in @err (and @cfg empty). Free
 * the model with config_free() either way.
 */
int config_parse(const char *name, const char *text, size_t len,
		 struct config *cfg, char *err, size_t errlen);

void config_free(struct config *cfg);

/* Look-ups in a parsed model; NULL when it has no such entry. */
const struct config_sim *config_find_sim(const struct config *cfg,
					 uint32_t id);
const struct config_gpu *config_find_gpu(const struct config *cfg,
					 uint32_t id);
const struct config_vgpu *config_find_vgpu(const struct config_gpu *gpu,
					   const char *uuid);
/* The vGPU of @gpu that is the VF @vf (a canonical PCI address). */
const struct config_vgpu *config_find_vf(const struct config_gpu *gpu,
					 const char *vf);
/* How messages name @v: its UUID, or its VF's address. */
const char *config_vgpu_name(const struct config_vgpu *v);
const struct config_pt *config_find_pt(const struct config *cfg,
				       const char *device);

/* The name of @val in @names, or NULL. */
const char *config_enum_name(const struct arg_enum *names, uint32_t val);

#endif /* GPUVIRTCTL_CONFIG_H */
