// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MIG profiles of a GPU, as the kernel computes them (kernel/core/mig.c
 * and catalogue.c, linked in), and the "PROFILE[xCOUNT]" words of "mig plan"
 * and "mig apply". No I/O: the planner of "apply" (plan.c) and the unit
 * tests use them as mig.c does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "core/catalogue.h"
#include "mig.h"

int mig_table(const char *model, uint64_t vram, uint32_t engines,
	      struct gpuvirt_mig_table *t)
{
	const struct gpuvirt_model *m = gpuvirt_catalogue_find(model);
	int err;

	/* As gi.c: a catalogue model, or NULL for a custom GPU. */
	if (m)
		engines = m->engines;
	err = gpuvirt_mig_table_build(m, vram, engines, t);
	if (!err && engines < GPUVIRT_MIG_SLICES)
		err = -EOPNOTSUPP;
	return err ? -EOPNOTSUPP : 0;
}

const char *mig_table_why(const struct mig_gpu *g)
{
	if (gpuvirt_catalogue_find(g->model))
		return "its model is not MIG capable";
	return "a custom GPU needs at least 8G of VRAM and 7 engines";
}

/* Wanted GIs ------------------------------------------------------------------ */

void mig_profile_list(const struct gpuvirt_mig_table *t, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < t->count && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			     t->profile[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int mig_want_add(const struct gpuvirt_mig_table *t, const char *word,
		 unsigned int *want, char *err, size_t errlen)
{
	char name[GPUVIRT_MIG_NAME_MAX + 8];
	unsigned long count = 1;
	const char *x = strrchr(word, 'x');
	char *end;
	size_t len = strlen(word);
	int p;

	/* "NAMExCOUNT": an x followed by digits only; names have no x. */
	if (x && x[1] && strspn(x + 1, "0123456789") == strlen(x + 1)) {
		len = (size_t)(x - word);
		count = strtoul(x + 1, &end, 10);
		if (count < 1 || count > GPUVIRT_MIG_GIS_MAX || x[1] == '0') {
			snprintf(err, errlen,
				 "\"%s\": the count after \"x\" must be from 1 to %d",
				 word, GPUVIRT_MIG_GIS_MAX);
			return -1;
		}
	} else if (x) {
		snprintf(err, errlen,
			 "\"%s\": expected PROFILE or PROFILExCOUNT, e.g. %sx2",
			 word, t->count ? t->profile[0].name : "1g.10gb");
		return -1;
	}
	if (!len || len >= sizeof(name)) {
		p = -1;
	} else {
		memcpy(name, word, len);
		name[len] = '\0';
		p = gpuvirt_mig_profile_find(t, name);
	}
	if (p < 0) {
		char list[160];

		mig_profile_list(t, list, sizeof(list));
		snprintf(err, errlen, "unknown profile \"%.*s\" (expected one of %s)",
			 (int)len, word, list);
		return -1;
	}
	want[p] += (unsigned int)count;
	return 0;
}
