// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: vm_flags_set() exists. VMA flags became read-only behind
 * vm_flags_set()/vm_flags_clear() in v6.3 (bc292ab00f6c, "mm: introduce
 * vma->vm_flags wrapper functions"); v6.1 writes vma->vm_flags directly.
 */
#include <linux/mm.h>

static void __maybe_unused probe_vm_flags_set(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
