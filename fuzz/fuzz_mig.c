// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the MIG planner (kernel/core/mig.c), built in
 * userspace with ASan and UBSan (make fuzz).
 *
 * Input: byte 0 picks the GPU (a catalogue model, or a custom VRAM size
 * from bytes 1-2), then a program of 2-byte steps: add a GI (profile,
 * start), remove a GI, or plan towards a wanted partition (7 counts and a
 * busy mask). Checked after every step: the layout stays within both axes
 * with no overlap, every success of gi_add is a legal placement that
 * gi_check accepts, a refusal changes nothing, and a plan applied step by
 * step (destroys, then creates through gi_add) reaches exactly the counts
 * it was asked for and keeps every busy GI where it was.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mig.h"

static const char *const models[] = {
	"a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb",
};

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_mig: %s failed at %s:%d\n", #c, __FILE__, __LINE__); abort(); } } while (0)

static void check_layout(const struct gpuvirt_mig_table *t,
			 const struct gpuvirt_mig_layout *l)
{
	unsigned int i, n = 0, mem = 0, comp = 0, cnt[GPUVIRT_MIG_PROFILES] = { 0 };

	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_profile *p;
		unsigned int m, c;

		if (!l->gi[i].used)
			continue;
		n++;
		CHECK(l->gi[i].profile < t->count);
		p = &t->profile[l->gi[i].profile];
		CHECK(p->starts & (1u << l->gi[i].start));
		CHECK(l->gi[i].start + p->slots <= GPUVIRT_MIG_SLOTS);
		CHECK(l->gi[i].start + p->slices <= GPUVIRT_MIG_SLICES);
		m = ((1u << p->slots) - 1) << l->gi[i].start;
		c = ((1u << p->slices) - 1) << l->gi[i].start;
		CHECK(!(mem & m));
		CHECK(!(comp & c));
		mem |= m;
		comp |= c;
		cnt[l->gi[i].profile]++;
		CHECK(cnt[l->gi[i].profile] <= p->max);
	}
	CHECK(n == l->nr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpuvirt_mig_table t;
	struct gpuvirt_mig_layout l, saved;
	struct gpuvirt_mig_why why;
	size_t i = 1;

	if (size < 3)
		return 0;
	if (data[0] < 4 * 16) {
		if (gpuvirt_mig_table_find(models[data[0] % 4], &t))
			return 0;
	} else {
		u64 vram = ((u64)data[1] << 8 | data[2]) << 24;	/* 16 MiB steps */

		i = 3;
		if (gpuvirt_mig_table_build(NULL, vram, 7 + data[0] % 8, &t))
			return 0;
	}
	CHECK(t.count <= GPUVIRT_MIG_PROFILES);
	gpuvirt_mig_layout_init(&l);

	while (i + 2 <= size) {
		uint8_t op = data[i], arg = data[i + 1];
		unsigned int prof = arg % GPUVIRT_MIG_PROFILES;
		int start = (arg >> 3) % 9 - 1;	/* -1 = any */
		int ret;

		i += 2;
		switch (op % 4) {
		case 0:
		case 1:
			saved = l;
			ret = gpuvirt_mig_gi_check(&t, &l, prof, start, &why);
			CHECK(!memcmp(&saved, &l, sizeof(l)));
			ret = gpuvirt_mig_gi_add(&t, &l, prof, start, &why);
			if (ret < 0)
				CHECK(!memcmp(&saved, &l, sizeof(l)));
			else
				CHECK(ret < GPUVIRT_MIG_GIS_MAX && l.gi[ret].used &&
				      l.nr == saved.nr + 1);
			break;
		case 2:
			saved = l;
			ret = gpuvirt_mig_gi_remove(&l, arg % (GPUVIRT_MIG_GIS_MAX + 1));
			if (ret < 0)
				CHECK(!memcmp(&saved, &l, sizeof(l)));
			break;
		case 3: {
			unsigned int want[GPUVIRT_MIG_PROFILES], got[GPUVIRT_MIG_PROFILES] = { 0 };
			struct gpuvirt_mig_plan plan;
			struct gpuvirt_mig_layout run = l;
			uint8_t busy;
			unsigned int k, g;

			if (i + GPUVIRT_MIG_PROFILES + 1 > size)
				return 0;
			for (k = 0; k < GPUVIRT_MIG_PROFILES; k++)
				want[k] = data[i + k] % 4;
			busy = data[i + GPUVIRT_MIG_PROFILES];
			i += GPUVIRT_MIG_PROFILES + 1;
			for (g = 0; g < GPUVIRT_MIG_GIS_MAX; g++)
				if (!l.gi[g].used)
					busy &= ~(1u << g);
			memset(&plan, 0, sizeof(plan));
			if (gpuvirt_mig_plan(&t, &l, busy, want, &plan, &why))
				break;
			CHECK(plan.nr_destroy <= GPUVIRT_MIG_GIS_MAX);
			CHECK(plan.nr_create <= GPUVIRT_MIG_GIS_MAX);
			for (k = 0; k < plan.nr_destroy; k++) {
				CHECK(!(busy & (1u << plan.destroy[k])));
				CHECK(gpuvirt_mig_gi_remove(&run, plan.destroy[k]) == 0);
			}
			for (k = 0; k < plan.nr_create; k++) {
				ret = gpuvirt_mig_gi_add(&t, &run, plan.create[k].profile,
							 plan.create[k].start, &why);
				CHECK(ret >= 0);
			}
			check_layout(&t, &run);
			for (g = 0; g < GPUVIRT_MIG_GIS_MAX; g++) {
				if (run.gi[g].used)
					got[run.gi[g].profile]++;
				if (busy & (1u << g))
					CHECK(run.gi[g].used && run.gi[g].profile == l.gi[g].profile &&
					      run.gi[g].start == l.gi[g].start);
			}
			for (k = 0; k < t.count; k++)
				CHECK(got[k] == want[k]);
			l = run;
			break;
		}
		}
		check_layout(&t, &l);
	}
	return 0;
}
