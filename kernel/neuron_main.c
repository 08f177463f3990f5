// SPDX-License-Identifier: GPL-2.0
/*
 * nnq.ko module entry: registers, in order, the character device region
 * and the "nnq" class (neuron_cdev.c), the generic netlink family
 * (neuron_genl.c) and the PCI driver (neuron_pci.c), and undoes them in
 * reverse. docs/architecture.md lists what each file owns.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "neuron.h"

static int __init neuron_init(void)
{
	int ret;

	ret = neuron_cdev_init();
	if (ret)
		return ret;

	/* before any device can raise an event */
	ret = neuron_genl_register();
	if (ret)
		goto err_cdev;

	ret = pci_register_driver(&neuron_pci_driver);
	if (ret)
		goto err_genl;
	return 0;

err_genl:
	neuron_genl_unregister();
err_cdev:
	neuron_cdev_exit();
	return ret;
}

static void __exit neuron_exit_module(void)
{
	/* every device is removed, its interrupt threads freed, first */
	pci_unregister_driver(&neuron_pci_driver);
	neuron_genl_unregister();
	neuron_cdev_exit();
	WARN_ON(!neuron_device_table_empty());
}

module_init(neuron_init);
module_exit(neuron_exit_module);

MODULE_DESCRIPTION("Driver for the emulated Neuron notification-queue accelerator");
MODULE_LICENSE("GPL");
