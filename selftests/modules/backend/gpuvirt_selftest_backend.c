// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test-only backend that breaks the backend contract on purpose: it hands
 * gpuvirt_gpu_register() GPUs that lack one op each, one whose device does
 * not carry the core's sysfs groups, and, as the control, one that lacks
 * nothing. Every broken GPU must be refused with -EINVAL and stay
 * unregistered; the complete one must register (and is unregistered at
 * once). Loading the module succeeds only if all of that held, and each
 * case is logged, so that selftests/vm/backend_contract.sh can check the
 * core's message naming what was missing.
 */
#include <linux/device.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "gpuvirt_backend.h"

#define SELFTEST_NAME	"gpuvirt_selftest_backend"

static struct page *selftest_vram_page(struct gpuvirt_gpu *gpu, u64 offset,
				       bool alloc)
{
	return ERR_PTR(-ENOMEM);
}

static void selftest_vram_range(struct gpuvirt_gpu *gpu, u64 offset, u64 size)
{
}

static u64 selftest_vram_next(struct gpuvirt_gpu *gpu, u64 offset, u64 end)
{
	return end;
}

static int selftest_exec(struct gpuvirt_gpu *gpu,
			 const struct gpuvirt_exec_ctx *ctx,
			 struct gpuvirt_cmd *cmd, u64 budget_ns, u64 *cost_ns)
{
	*cost_ns = 0;
	return -EIO;
}

static void selftest_engine_reset(struct gpuvirt_gpu *gpu, u64 engines)
{
}

static void selftest_reset(struct gpuvirt_gpu *gpu)
{
}

static const struct gpuvirt_backend_ops selftest_full_ops = {
	.name		= SELFTEST_NAME,
	.vram_page	= selftest_vram_page,
	.vram_zero	= selftest_vram_range,
	.vram_discard	= selftest_vram_range,
	.vram_next	= selftest_vram_next,
	.exec		= selftest_exec,
	.engine_reset	= selftest_engine_reset,
	.reset		= selftest_reset,
};

/* Each member of the ops, by name, for the cases that leave one out. */
static const struct {
	const char *name;
	size_t offset;
} selftest_members[] = {
	{ "name", offsetof(struct gpuvirt_backend_ops, name) },
	{ "vram_page", offsetof(struct gpuvirt_backend_ops, vram_page) },
	{ "vram_zero", offsetof(struct gpuvirt_backend_ops, vram_zero) },
	{ "vram_discard", offsetof(struct gpuvirt_backend_ops, vram_discard) },
	{ "vram_next", offsetof(struct gpuvirt_backend_ops, vram_next) },
	{ "exec", offsetof(struct gpuvirt_backend_ops, exec) },
	{ "engine_reset", offsetof(struct gpuvirt_backend_ops, engine_reset) },
	{ "reset", offsetof(struct gpuvirt_backend_ops, reset) },
};

static void selftest_dev_release(struct device *dev)
{
	kfree(dev);
}

static struct bus_type selftest_bus = {
	.name = SELFTEST_NAME,
};

static struct device_driver selftest_driver = {
	.name = SELFTEST_NAME,
	.bus = &selftest_bus,
	.suppress_bind_attrs = true,
};

/* A device on the test bus, bound to its driver, with or without groups. */
static struct device *selftest_dev_new(int n, bool groups)
{
	struct device *dev;
	int err;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	device_initialize(dev);
	dev->bus = &selftest_bus;
	dev->release = selftest_dev_release;
	if (groups)
		dev->groups = gpuvirt_gpu_groups;
	err = dev_set_name(dev, "selftest%d", n);
	if (!err)
		err = device_add(dev);
	if (err) {
		put_device(dev);
		return ERR_PTR(err);
	}
	return dev;
}

/* Register a GPU; 0 when it came out as @want says, else -EIO. */
static int selftest_case(int n, const char *what,
			 const struct gpuvirt_backend_ops *ops, bool groups,
			 int want)
{
	struct gpuvirt_gpu *gpu;
	struct device *dev;
	int err, ret = 0;

	dev = selftest_dev_new(n, groups);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu) {
		ret = -ENOMEM;
		goto out_del_dev;
	}
	gpu->dev = dev;
	gpu->ops = ops;
	gpu->id = 900 + n;
	snprintf(gpu->name, sizeof(gpu->name), "selftest%d", n);
	gpu->model = gpuvirt_model_lookup("a100-40gb");
	strscpy(gpu->model_name, "a100-40gb", sizeof(gpu->model_name));
	gpu->vram_size = 40ULL << 30;
	gpu->engines = 7;

	err = gpuvirt_gpu_register(gpu);
	pr_info(SELFTEST_NAME ": %s: %d\n", what, err);
	if (err != want || gpu->registered != !want) {
		pr_err(SELFTEST_NAME ": %s: expected %d\n", what, want);
		ret = -EIO;
	}
	if (!err)
		gpuvirt_gpu_unregister(gpu);
	kfree(gpu);
out_del_dev:
	device_unregister(dev);
	return ret;
}

static int __init selftest_init(void)
{
	struct gpuvirt_backend_ops ops;
	unsigned int i;
	char what[48];
	int err, ret = 0;

	err = bus_register(&selftest_bus);
	if (err)
		return err;
	err = driver_register(&selftest_driver);
	if (err)
		goto err_bus_unregister;

	for (i = 0; i < ARRAY_SIZE(selftest_members); i++) {
		ops = selftest_full_ops;
		memset((char *)&ops + selftest_members[i].offset, 0,
		       sizeof(void *));
		snprintf(what, sizeof(what), "without %s",
			 selftest_members[i].name);
		ret = selftest_case(i, what, &ops, true, -EINVAL) ?: ret;
	}
	ret = selftest_case(i++, "without gpuvirt_gpu_groups",
			   &selftest_full_ops, false, -EINVAL) ?: ret;
	ret = selftest_case(i, "complete", &selftest_full_ops, true, 0) ?: ret;

	driver_unregister(&selftest_driver);
err_bus_unregister:
	bus_unregister(&selftest_bus);
	return err ?: ret;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpuvirt test-only backend: the backend contract's refusals");
