// SPDX-License-Identifier: GPL-2.0
/*
 * The steps of the shutdown lane's kexec walk (selftests/vm/kexec-guest.sh,
 * docs/robustness.md#shutdown-and-hibernation). kexec replaces the kernel
 * without resetting the machine: the device keeps what it holds, so only
 * the driver's .shutdown stands between a running engine and memory the
 * next kernel reuses.
 *
 *   kexec_walk dirty           uid 1000 takes core 0: semaphore 7 = 0x5eed,
 *                              event 9 set, feature flags 0x2, queue 1 with
 *                              a program of 600 NOTIFYs that fills its 256
 *                              entries and waits for room; a child keeps
 *                              the file open through the kexec
 *   kexec_walk load KERNEL INITRD
 *                              kexec_file_load() with this boot's command
 *                              line plus "neuron_kexec_stage=2"
 *   kexec_walk exec            reboot(LINUX_REBOOT_CMD_KEXEC): the driver's
 *                              .shutdown runs with the file still open
 *   kexec_walk quiet           in the new kernel, before nnq.ko loads: the
 *                              device as .shutdown left it, read through
 *                              sysfs resource0: core 0's PE idle and no
 *                              queue of core 0 enabled
 *   kexec_walk clean           after nnq.ko loads: uid 1001 reads core 0
 *                              free (semaphore 7 and event 9: 0), owns it
 *                              (flags: 0), and the device runs a program
 *
 * Each step exits 0 or a code naming what failed (the enums below). The
 * expected values are the reset values of docs/hardware.md, as literals.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdbool.h>
#include <linux/reboot.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"
#include "robust_lib.h"
#include "neuron/regs.h"

#define KW_FIRST_UID	1000
#define KW_NEXT_UID	1001
#define KW_PROG_LEN	600	/* more NOTIFYs than the 256-entry ring holds */
#define KW_STAGE2	" neuron_kexec_stage=2"

/* exit codes, beside robust_lib.h's CLEAN_CORE_* of the owners' steps */
enum { KW_OK, KW_USAGE = 2, KW_QUEUE = 40, KW_SUBMIT, KW_FULL, KW_FORK, KW_NODE,
       KW_CMDLINE = 50, KW_KERNEL, KW_INITRD, KW_LOAD, KW_REBOOT,
       KW_PCI = 60, KW_CONFIG, KW_MAP, KW_ENGINE_BUSY, KW_QUEUES_ON, KW_WORKS };

/* uid 1000's file: core 0 dirtied, an engine waiting for room in queue 1 */
static int kw_owner(int ready)
{
	static struct neuron_emu_insn prog[KW_PROG_LEN];
	struct neuron_nq_info info = { .core = 0, .queue = 1 };
	struct neuron_nq_init init;
	uint64_t deadline;
	char c = 0;
	int fd, ret;

	if (clean_core_setuid(KW_FIRST_UID))
		return CLEAN_CORE_SETUID;
	fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return CLEAN_CORE_OPEN;
	ret = first_owner_dirties(fd);
	if (ret)
		return ret;
	if (neuron_nq_create(fd, 0, 1, 4096, 0, &init))
		return KW_QUEUE;
	notify_prog(prog, KW_PROG_LEN, 1);
	if (neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, KW_PROG_LEN, 0))
		return KW_SUBMIT;
	deadline = neuron_now_ms() + 60000;
	do {
		if (neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info))
			return KW_QUEUE;
		if (info.tail - info.head == 256)
			break;
		usleep(1000);
	} while (neuron_now_ms() < deadline);
	if (info.tail - info.head != 256)
		return KW_FULL;
	if (write(ready, &c, 1) != 1)
		return KW_FORK;
	for (;;)
		pause();	/* the file stays open until the kexec */
}

static int kw_dirty(void)
{
	int ready[2], st;
	char c;
	pid_t pid;

	if (chown(NEURON_DEV, 0, CLEAN_CORE_GID) || chmod(NEURON_DEV, 0660))
		return KW_NODE;
	if (pipe(ready))
		return KW_FORK;
	pid = fork();
	if (pid < 0)
		return KW_FORK;
	if (pid == 0) {
		close(ready[0]);
		_exit(kw_owner(ready[1]));
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) == 1)
		return KW_OK;	/* the child holds the file from here on */
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return KW_FORK;
	return WEXITSTATUS(st) ? WEXITSTATUS(st) : KW_FORK;
}

/* this boot's command line with the stage mark before the "--" of init's arguments */
static int kw_cmdline(char *out, size_t len)
{
	char buf[2048], *args;

	if (read_str("/proc/cmdline", buf, sizeof(buf)) < 0)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	args = strstr(buf, " -- ");
	if (!args)
		return snprintf(out, len, "%s%s", buf, KW_STAGE2) >= (int)len ? -1 : 0;
	*args = 0;
	return snprintf(out, len, "%s%s -- %s", buf, KW_STAGE2, args + 4) >= (int)len ? -1 : 0;
}

static int kw_load(const char *kernel, const char *initrd)
{
	char cmd[2304];
	int kfd, ifd;

	if (kw_cmdline(cmd, sizeof(cmd)))
		return KW_CMDLINE;
	kfd = open(kernel, O_RDONLY | O_CLOEXEC);
	if (kfd < 0)
		return KW_KERNEL;
	ifd = open(initrd, O_RDONLY | O_CLOEXEC);
	if (ifd < 0)
		return KW_INITRD;
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(cmd) + 1, cmd, 0UL)) {
		fprintf(stderr, "kexec_walk: kexec_file_load: %s\n", strerror(errno));
		return KW_LOAD;
	}
	printf("# kexec_walk: loaded %s with \"%s\"\n", kernel, cmd);
	return KW_OK;
}

static int kw_exec(void)
{
	sync();
	reboot(LINUX_REBOOT_CMD_KEXEC);
	fprintf(stderr, "kexec_walk: reboot(KEXEC): %s\n", strerror(errno));
	return KW_REBOOT;
}

/* BAR0 of the unbound function, as the last kernel's .shutdown left it */
static int kw_quiet(void)
{
	const off_t core0 = NEURON_CORE_BASE(0);
	char bdf[32], path[128];
	volatile uint32_t *bar;
	uint32_t engine, queues;
	uint16_t cmd;
	int fd;

	if (find_pci(bdf, sizeof(bdf)))
		return KW_PCI;
	/* decoding of memory may be off in a kernel that never enabled the function */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || pread(fd, &cmd, 2, 4) != 2)
		return KW_CONFIG;
	printf("# kexec_walk: %s command register %#06x after the kexec\n", bdf, cmd);
	if (!(cmd & 0x2)) {
		cmd |= 0x2;	/* memory space only: bus mastering stays off */
		if (pwrite(fd, &cmd, 2, 4) != 2)
			return KW_CONFIG;
	}
	close(fd);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return KW_MAP;
	bar = mmap(NULL, NEURON_CORE_BASE(1), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED)
		return KW_MAP;
	engine = bar[(core0 + NEURON_ENGINE_BASE(NEURON_ENGINE_PE) + NEURON_ENG_STATUS) / 4];
	queues = bar[(core0 + NEURON_NOTIFIC_BASE + NEURON_NOTIFIC_QUEUE_ENABLE) / 4];
	printf("# kexec_walk: core 0 PE state %u, queue enable %#x\n", engine, queues);
	munmap((void *)bar, NEURON_CORE_BASE(1));
	if (engine != 0)	/* NEURON_ENGINE_IDLE */
		return KW_ENGINE_BUSY;
	return queues ? KW_QUEUES_ON : KW_OK;
}

static int kw_clean(void)
{
	int st;
	pid_t pid;

	if (chown(NEURON_DEV, 0, CLEAN_CORE_GID) || chmod(NEURON_DEV, 0660))
		return KW_NODE;
	pid = fork();
	if (pid < 0)
		return KW_FORK;
	if (pid == 0)
		_exit(next_owner_clean(KW_NEXT_UID));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return KW_FORK;
	if (WEXITSTATUS(st))
		return WEXITSTATUS(st);
	return device_works(0, 0) || device_works(1, NEURON_NQ_F_DEVICE_MEM) ? KW_WORKS : KW_OK;
}

int main(int argc, char **argv)
{
	(void)test_harness_run;	/* robust_lib.h needs the harness; no TEST() here */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "dirty"))
		return kw_dirty();
	if (argc == 4 && !strcmp(argv[1], "load"))
		return kw_load(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "exec"))
		return kw_exec();
	if (argc == 2 && !strcmp(argv[1], "quiet"))
		return kw_quiet();
	if (argc == 2 && !strcmp(argv[1], "clean"))
		return kw_clean();
	fprintf(stderr, "usage: kexec_walk dirty | load KERNEL INITRD | exec | quiet | clean\n");
	return KW_USAGE;
}
