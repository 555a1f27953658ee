// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated VRAM. A GPU's framebuffer is only accounted for when created;
 * host pages back it when something first writes or maps it, so a
 * simulated 141 GB GPU fits in a small VM. Backing goes by aligned blocks
 * of GPUVIRT_SIM_BACK_PAGES pages (64 KiB), one zeroed allocation each:
 * a first write to VRAM then costs one page allocation per block instead
 * of one per page, which with the core's BAR2 fault-around makes it as
 * cheap as a first write to anonymous memory (bench/README.md). All GPUs
 * together may back at most host_mem_cap_mb of host memory: a block that
 * does not fit under it, or cannot be allocated in one piece, is backed
 * one page at a time, and past the cap backing a page fails with -ENOSPC
 * and a log line, never an OOM.
 *
 * Unbacked VRAM reads as zero. Zeroing a range clears the backed pages in
 * place, so that mappings of them stay valid and see zeros; discarding a
 * range frees them, which the core only does once nothing maps them.
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/mm.h>

#include "sim.h"

static unsigned int host_mem_cap_mb = 512;
module_param(host_mem_cap_mb, uint, 0644);
MODULE_PARM_DESC(host_mem_cap_mb,
		 "Host memory all simulated VRAM may use together, in MiB (default: 512)");

/* Pages backing simulated VRAM, over all GPUs. */
static atomic_long_t gpuvirt_sim_host_pages = ATOMIC_LONG_INIT(0);

#define GPUVIRT_SIM_BACK_ORDER		4
#define GPUVIRT_SIM_BACK_PAGES		BIT(GPUVIRT_SIM_BACK_ORDER)

static bool gpuvirt_sim_host_charge(unsigned long pages)
{
	unsigned long cap = (unsigned long)READ_ONCE(host_mem_cap_mb) <<
			    (20 - PAGE_SHIFT);

	if (atomic_long_add_return(pages, &gpuvirt_sim_host_pages) <= cap)
		return true;
	atomic_long_sub(pages, &gpuvirt_sim_host_pages);
	return false;
}

static void gpuvirt_sim_host_uncharge(unsigned long pages)
{
	atomic_long_sub(pages, &gpuvirt_sim_host_pages);
}

static struct gpuvirt_sim_dev *gpu_to_sdev(struct gpuvirt_gpu *gpu)
{
	return container_of(gpu, struct gpuvirt_sim_dev, gpu);
}

/*
 * Back the whole aligned block of page @idx with one zeroed allocation,
 * split into pages; pages of the block backed meanwhile keep their page.
 * Returns page @idx with a reference for the caller, or NULL when the
 * block does not fit under the cap, is not whole (the end of VRAM) or
 * cannot be allocated in one piece: the caller then backs @idx alone.
 */
static struct page *gpuvirt_sim_vram_back_block(struct gpuvirt_sim_dev *sdev,
						unsigned long idx)
{
	struct gpuvirt_sim_vram *vram = &sdev->vram;
	unsigned long first = round_down(idx, GPUVIRT_SIM_BACK_PAGES);
	unsigned long i, stored = 0;
	struct page *block, *old, *ret = NULL;

	if ((u64)(first + GPUVIRT_SIM_BACK_PAGES) << PAGE_SHIFT >
	    sdev->gpu.vram_size)
		return NULL;
	if (!gpuvirt_sim_host_charge(GPUVIRT_SIM_BACK_PAGES))
		return NULL;
	block = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NORETRY |
			    __GFP_NOWARN, GPUVIRT_SIM_BACK_ORDER);
	if (!block) {
		gpuvirt_sim_host_uncharge(GPUVIRT_SIM_BACK_PAGES);
		return NULL;
	}
	split_page(block, GPUVIRT_SIM_BACK_ORDER);

	xa_lock(&vram->pages);
	for (i = 0; i < GPUVIRT_SIM_BACK_PAGES; i++) {
		old = __xa_cmpxchg(&vram->pages, first + i, NULL, block + i,
				   GFP_KERNEL);
		if (!old) {
			stored++;
			if (first + i == idx) {
				get_page(block + i);	/* the caller's */
				ret = block + i;
			}
			continue;
		}
		/* backed meanwhile, or the xarray could not grow */
		__free_page(block + i);
		if (first + i == idx && !xa_is_err(old)) {
			get_page(old);
			ret = old;
		}
	}
	vram->backed += stored;
	xa_unlock(&vram->pages);
	gpuvirt_sim_host_uncharge(GPUVIRT_SIM_BACK_PAGES - stored);
	return ret ?: ERR_PTR(-ENOMEM);
}

/**
 * gpuvirt_sim_vram_page() - the host page behind a VRAM offset
 * @gpu: the GPU
 * @offset: byte offset in VRAM; the page holding it is returned
 * @alloc: back the page if it is not yet
 *
 * Return: the page with a reference the caller must put; NULL if @alloc is
 * false and the page is not backed (it reads as zero); ERR_PTR(-ENOSPC) at
 * the host memory cap, ERR_PTR(-ENOMEM) when allocation fails or is made to
 * fail through debugfs, ERR_PTR(-ERANGE) past the end of VRAM.
 */
struct page *gpuvirt_sim_vram_page(struct gpuvirt_gpu *gpu, u64 offset,
				   bool alloc)
{
	struct gpuvirt_sim_dev *sdev = gpu_to_sdev(gpu);
	struct gpuvirt_sim_vram *vram = &sdev->vram;
	unsigned long idx = offset >> PAGE_SHIFT;
	struct page *page, *old;

	if (offset >= gpu->vram_size)
		return ERR_PTR(-ERANGE);

	rcu_read_lock();
	page = xa_load(&vram->pages, idx);
	if (page && !get_page_unless_zero(page))
		page = NULL;
	rcu_read_unlock();
	if (page || !alloc)
		return page;

	if (atomic_add_unless(&vram->fail_alloc, -1, 0))
		return ERR_PTR(-ENOMEM);
	page = gpuvirt_sim_vram_back_block(sdev, idx);
	if (page)
		return page;

	/* one page: near the cap, or no free block */
	if (!gpuvirt_sim_host_charge(1)) {
		dev_warn_ratelimited(&sdev->dev,
				     "VRAM backing refused: host_mem_cap_mb=%u reached\n",
				     READ_ONCE(host_mem_cap_mb));
		return ERR_PTR(-ENOSPC);
	}
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page) {
		gpuvirt_sim_host_uncharge(1);
		return ERR_PTR(-ENOMEM);
	}

	xa_lock(&vram->pages);
	old = __xa_cmpxchg(&vram->pages, idx, NULL, page, GFP_KERNEL);
	if (!old) {
		vram->backed++;
		get_page(page);		/* one for the xarray, one for the caller */
	}
	xa_unlock(&vram->pages);

	if (old) {
		/* lost a race, or the xarray could not grow */
		__free_page(page);
		gpuvirt_sim_host_uncharge(1);
		if (xa_is_err(old))
			return ERR_PTR(xa_err(old));
		get_page(old);
		return old;
	}
	return page;
}

/* Zero the backed pages of [offset, offset + size) in place. */
void gpuvirt_sim_vram_zero(struct gpuvirt_gpu *gpu, u64 offset, u64 size)
{
	struct gpuvirt_sim_vram *vram = &gpu_to_sdev(gpu)->vram;
	unsigned long first = offset >> PAGE_SHIFT;
	unsigned long last = (offset + size - 1) >> PAGE_SHIFT;
	struct page *page;
	unsigned long idx;

	if (!size)
		return;
	xa_for_each_range(&vram->pages, idx, page, first, last) {
		clear_highpage(page);
		cond_resched();
	}
}

/* The first backed page at or after @offset and below @end, or @end. */
u64 gpuvirt_sim_vram_next(struct gpuvirt_gpu *gpu, u64 offset, u64 end)
{
	struct gpuvirt_sim_vram *vram = &gpu_to_sdev(gpu)->vram;
	unsigned long idx = offset >> PAGE_SHIFT;

	if (offset >= end)
		return end;
	/* xa_find() takes the RCU read lock itself */
	if (!xa_find(&vram->pages, &idx, (end - 1) >> PAGE_SHIFT, XA_PRESENT))
		return end;
	return (u64)idx << PAGE_SHIFT;
}

/* Free the backed pages of [offset, offset + size); nothing may map them. */
void gpuvirt_sim_vram_discard(struct gpuvirt_gpu *gpu, u64 offset, u64 size)
{
	struct gpuvirt_sim_vram *vram = &gpu_to_sdev(gpu)->vram;
	unsigned long first = offset >> PAGE_SHIFT;
	unsigned long last = (offset + size - 1) >> PAGE_SHIFT;
	unsigned long idx, freed = 0;
	struct page *page;

	if (!size)
		return;
	xa_lock(&vram->pages);
	xa_for_each_range(&vram->pages, idx, page, first, last) {
		__xa_erase(&vram->pages, idx);
		put_page(page);
		freed++;
	}
	vram->backed -= freed;
	xa_unlock(&vram->pages);
	gpuvirt_sim_host_uncharge(freed);
}

static int gpuvirt_sim_vram_show(struct seq_file *m, void *v)
{
	struct gpuvirt_sim_dev *sdev = m->private;
	struct gpuvirt_sim_vram *vram = &sdev->vram;
	unsigned long idx, first = ULONG_MAX, last = 0;
	struct page *page;

	xa_lock(&vram->pages);
	seq_printf(m, "size: %llu\n", sdev->gpu.vram_size);
	seq_printf(m, "backed_pages: %lu\n", vram->backed);
	xa_for_each(&vram->pages, idx, page) {
		first = min(first, idx);
		last = max(last, idx);
	}
	xa_unlock(&vram->pages);
	/* where the backed pages lie: what tests check isolation with */
	if (first != ULONG_MAX)
		seq_printf(m, "backed_range: %#llx-%#llx\n",
			   (u64)first << PAGE_SHIFT,
			   ((u64)last << PAGE_SHIFT) + PAGE_SIZE - 1);
	else
		seq_puts(m, "backed_range: none\n");
	seq_printf(m, "host_pages_all_gpus: %ld\n",
		   atomic_long_read(&gpuvirt_sim_host_pages));
	seq_printf(m, "host_mem_cap_mb: %u\n", READ_ONCE(host_mem_cap_mb));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_vram);

/* A fault knob: an atomic_t count of failures to inject, 0..INT_MAX. */
static int gpuvirt_sim_knob_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int gpuvirt_sim_knob_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(gpuvirt_sim_knob_fops, gpuvirt_sim_knob_get,
			 gpuvirt_sim_knob_set, "%llu\n");

void gpuvirt_sim_debugfs_knob(const char *name, struct dentry *dir,
			      atomic_t *knob)
{
	debugfs_create_file_unsafe(name, 0600, dir, knob,
				   &gpuvirt_sim_knob_fops);
}

void gpuvirt_sim_vram_init(struct gpuvirt_sim_dev *sdev)
{
	xa_init(&sdev->vram.pages);
	atomic_set(&sdev->vram.fail_alloc, 0);
	debugfs_create_file("vram", 0400, sdev->debugfs, sdev,
			    &gpuvirt_sim_vram_fops);
	gpuvirt_sim_debugfs_knob("fail_vram_alloc", sdev->debugfs,
				 &sdev->vram.fail_alloc);
}

void gpuvirt_sim_vram_fini(struct gpuvirt_sim_dev *sdev)
{
	gpuvirt_sim_vram_discard(&sdev->gpu, 0, sdev->gpu.vram_size);
	xa_destroy(&sdev->vram.pages);
}
