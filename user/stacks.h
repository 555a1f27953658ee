/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The vGPU stacks of a host other than gpuvirt's own, read from sysfs below
 * a root prefix ("" on a live host, a fixture tree in the unit tests):
 *
 *   mdev       any mdev parent in /sys/class/mdev_bus/ that is not one of
 *              our GPUs (those carry a "gpuvirt" attribute group): NVIDIA's
 *              legacy vGPU manager (nvidia-NNN types, on Ampere SR-IOV one
 *              parent per VF), Intel GVT-g (i915-GVTg_V5_N), the kernel's
 *              mdev samples (mtty, mdpy, mbochs), ...
 *   nvidia-vf  an SR-IOV physical function whose VFs carry NVIDIA's
 *              vendor-specific vGPU files virtfnN/nvidia/ (vGPU 17 and
 *              later, Ada/Hopper/Blackwell): a vGPU is a VF with a type
 *              written into current_vgpu_type
 *   sriov      a PF with SR-IOV and none of the above: listed with its VF
 *              count, for "pt" to assign VFs whole
 *
 * A vGPU is in use when a process below /proc holds its VFIO group or
 * cdev open; it is then never removed.
 *
 * What a GPU is does not depend on the room it has left: a PF is nvidia-vf
 * by its VFs' nvidia/ directories, whether or not their
 * creatable_vgpu_types list anything, and a typed VF's type is its
 * current_vgpu_type. NVIDIA names a type only in creatable_vgpu_types,
 * while some VF has room for it, so the names seen there are kept in
 * ROOT/var/lib/gpuvirt/nvidia-vgpu-types (stk_types_save()) and name the
 * types of a full GPU later.
 *
 * gpuvirt's own GPUs are the "gpuvirt" stack, which gpuvirtctl reaches over
 * netlink (gpu.c, type.c, vgpu.c); nothing here talks to the kernel but
 * through sysfs. The functions return 0 or a negative errno and put a
 * message naming the file or the name at fault in @err; they print nothing.
 */
#ifndef GPUVIRTCTL_STACKS_H
#define GPUVIRTCTL_STACKS_H

#include <stdbool.h>
#include <stddef.h>

#include "units.h"

enum stk_kind {
	STK_GPUVIRT,
	STK_MDEV,
	STK_NVVF,
	STK_SRIOV,
};

/* Copy @src into @dst of @len bytes, cut short if need be, always ended. */
void stk_copy(char *dst, size_t len, const char *src);

/* "gpuvirt", "mdev", "nvidia-vf", "sriov" */
const char *stk_kind_name(enum stk_kind kind);
/* The kind named @name; -1 if none. */
int stk_kind_parse(const char *name);

#define STK_NAME_LEN	64
#define STK_BDF_LEN	16
#define STK_TYPE_IDS	64	/* creatable types listed per VF */

/* One type of a device. */
struct stk_type {
	char id[STK_NAME_LEN];	/* mdev: the type directory ("nvidia-558");
				 * nvidia-vf: the number ("558") */
	char name[96];		/* "GRID A100-4C", "NVIDIA H100-4C" */
	char description[256];
	char device_api[32];	/* mdev only: "vfio-pci" */
	int available;		/* mdev: available_instances (-1: unreadable);
				 * nvidia-vf: free VFs that list the type */
	bool listed;		/* nvidia-vf: a VF lists it now */
	bool unnamed;		/* nvidia-vf: a typed VF's number that no VF
				 * lists and the record does not name: its
				 * name is the number */
};

/* One VF of an nvidia-vf PF. */
struct stk_vf {
	char bdf[STK_BDF_LEN];
	unsigned int current;	/* current_vgpu_type; 0: no vGPU */
	int gi;			/* gpu_instance_id; -1: no such file */
	int placement;		/* placement_id; -1: no such file */
	char driver[32];	/* "" when unbound */
	bool in_use;		/* a process holds its VFIO device open */
	unsigned int creatable[STK_TYPE_IDS];
	unsigned int n_creatable;
};

/* One vGPU-capable device. */
struct stk_dev {
	enum stk_kind kind;
	char name[STK_NAME_LEN];	/* the mdev parent's name or the PF's BDF */
	char pf[STK_BDF_LEN];		/* mdev: the PF of a VF parent, else "" */
	char driver[32];
	int numvfs, totalvfs;		/* -1: no SR-IOV */
	int pf_numvfs, pf_totalvfs;	/* an mdev parent that is a VF: its
					 * PF's; else -1 */
	int vf_offset, vf_stride;	/* where the VFs are: the PF's
					 * sriov_offset, sriov_stride; -1 */
	char pciid[16];			/* the PF's "vendor:device", 10de:2330 */
	char version[32];		/* its driver's version, or "-" */
	struct stk_type *types;
	unsigned int n_types;
	struct stk_vf *vfs;		/* nvidia-vf only */
	unsigned int n_vfs;
};

/* One vGPU of another stack. */
struct stk_vgpu {
	enum stk_kind kind;
	char handle[UNITS_UUID_LEN];	/* mdev: the UUID; nvidia-vf: the VF */
	char dev[STK_NAME_LEN];		/* the mdev parent or the PF */
	char type_id[STK_NAME_LEN];
	char type_name[96];
	int gi, placement;		/* nvidia-vf, -1 if none */
	bool in_use;
};

/* One type name on record: a type number of a GPU model and driver. */
struct stk_known {
	char key[64];		/* "10de:2330 550.54.10" */
	unsigned int id;
	char name[96];
};

/* Where the NVIDIA type names seen are kept, below the root. */
#define STK_KNOWN_FILE	"/var/lib/gpuvirt/nvidia-vgpu-types"

struct stk_host {
	char root[256];
	/* the VFIO files processes hold open, read once (stacks.c) */
	char **vfio_open;
	unsigned int n_vfio_open;
	bool vfio_scanned;
	bool vfio_partial;	/* out of memory reading them: all in use */
	/* the mdev parents that are gpuvirt's own GPUs, by name */
	char (*ours)[STK_NAME_LEN];
	unsigned int n_ours;
	struct stk_dev *devs;
	unsigned int n_devs;
	struct stk_vgpu *vgpus;
	unsigned int n_vgpus;
	/* the NVIDIA type names on record (stk_types_save()) */
	struct stk_known *known;
	unsigned int n_known;
};

/*
 * Read every device and vGPU of the non-gpuvirt stacks below @root (an
 * empty string for the live host). A device that cannot be read whole is
 * still listed with what could be read; only running out of memory fails.
 */
int stk_scan(const char *root, struct stk_host *h, char *err, size_t len);
void stk_free(struct stk_host *h);

/*
 * Keep the NVIDIA type names that @h's VFs list now in the record, for the
 * day the GPU is full and none does; best effort, silently: a host where
 * the record cannot be written names such types by number only.
 */
void stk_types_save(const struct stk_host *h);

/*
 * Wait, up to @wait_ms, for the first @n VFs of PF @pf (below @root) to
 * exist and, by @kind, to carry the files a vGPU is made through:
 * nvidia/current_vgpu_type and creatable_vgpu_types (STK_NVVF),
 * gpuvirt/current_vgpu_type (STK_GPUVIRT), an mdev parent's
 * mdev_supported_types (STK_MDEV); any other @kind waits for the VFs
 * alone. -ETIMEDOUT names the PF and the first VF missing in @err.
 */
int stk_wait_vfs(const char *root, const char *pf, unsigned int n,
		 enum stk_kind kind, unsigned int wait_ms, char *err,
		 size_t len);

/* The address of VF @index of PF @d, from its offset and stride; -1. */
int stk_vf_bdf(const struct stk_dev *d, unsigned int index,
	       char bdf[STK_BDF_LEN]);

/* The device named @name (a PCI address in any form, or an mdev parent). */
struct stk_dev *stk_find_dev(const struct stk_host *h, const char *name);
struct stk_vgpu *stk_find_vgpu(const struct stk_host *h, const char *handle);
/* Is @name (any PCI address form, or a name) one of gpuvirt's GPUs? */
bool stk_is_ours(const struct stk_host *h, const char *name);

/*
 * Match a type name as admins write it ("A100-4C", "GRID A100-4C",
 * "nvidia-558", "558", "i915-GVTg_V5_4", "V5_4") against the types of @d:
 * the exact id or name first, then a name whose last word is @want, then
 * an id ending in "-@want" or "_@want". Returns the index, or -ENOENT
 * (unknown) / -EEXIST (ambiguous) with the names that exist in @err.
 */
int stk_match_type(const struct stk_dev *d, const char *want, char *err,
		   size_t len);

/*
 * The devices "dev NAME" stands for when creating: @name itself if it has
 * types, else, for a PF whose VFs are mdev parents (NVIDIA on Ampere with
 * SR-IOV), those parents. Fills @out with up to @max pointers.
 */
unsigned int stk_targets(const struct stk_host *h, const char *name,
			 struct stk_dev **out, unsigned int max);

/* Writes (stack_mdev.c, stack_nvvf.c) ---------------------------------------- */

/* Write @val to the sysfs file @path; a refusal names the file and errno. */
int stk_write(const char *path, const char *val, char *err, size_t len);

/* The writes by name below @root: create, remove, current_vgpu_type. */
int stk_mdev_write_create(const char *root, const char *parent,
			  const char *type_id, const char *uuid, char *err,
			  size_t len);
int stk_mdev_write_remove(const char *root, const char *uuid, char *err,
			  size_t len);
int stk_nvvf_write_type(const char *root, const char *vf, const char *id,
			char *err, size_t len);

/*
 * Create a vGPU of type @t on mdev parent @d: write @uuid into the type's
 * "create". A refusal names the file and the errno.
 */
int stk_mdev_create(const struct stk_host *h, const struct stk_dev *d,
		    const struct stk_type *t, const char *uuid, char *err,
		    size_t len);
/* Remove the mdev vGPU @v: write 1 into its "remove"; refused if in use. */
int stk_mdev_remove(const struct stk_host *h, const struct stk_vgpu *v,
		    char *err, size_t len);

/*
 * nvidia-vf: pick the first free VF of PF @d (current_vgpu_type 0, not in
 * use) whose creatable_vgpu_types lists @t, and write the type's number
 * into its current_vgpu_type. @vf: one VF asked for by address, or NULL.
 * The VF's address, the vGPU's handle, goes into @bdf.
 */
int stk_nvvf_create(const struct stk_host *h, struct stk_dev *d,
		    const struct stk_type *t, const char *vf,
		    char bdf[STK_BDF_LEN], char *err, size_t len);
/* Write 0 into the VF's current_vgpu_type; refused if in use. */
int stk_nvvf_remove(const struct stk_host *h, const struct stk_vgpu *v,
		    char *err, size_t len);

/*
 * The vGPUs of VFs that the same "apply" run enabled, which did not exist
 * when it planned: read the stacks below @root again and make the vGPU as
 * the file says, matching @want against the type names the VFs give now.
 * nvidia-vf: give the VF @vf of PF @pf the type @want; mdev (VFs that are
 * mdev parents): create @uuid of type @want on the first VF parent of @pf
 * with room.
 */
int stk_nvvf_type_new(const char *root, const char *pf, const char *vf,
		      const char *want, char *err, size_t len);
int stk_mdev_create_new(const char *root, const char *pf, const char *uuid,
			const char *want, char *err, size_t len);

#endif /* GPUVIRTCTL_STACKS_H */
