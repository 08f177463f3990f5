/* SPDX-License-Identifier: MIT */
/*
 * hello.c: run a .nq program through libneuron's C API and print its
 * decoded records, one a line, in drain order.
 *
 *   cc hello.c $(pkg-config --cflags --libs neuron) -o hello
 *   ./hello [DEVICE [PROGRAM]]      (default /dev/nnq0 examples/hello.nq)
 *
 * Exits 0 when the run's status is OK, 1 otherwise (the reason on stderr).
 * Man pages: libneuron_execute(3), libneuron_program(3).
 */
#include <stdio.h>
#include <stdlib.h>

#include <libneuron/neuron.h>

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/nnq0";
	const char *file = argc > 2 ? argv[2] : "examples/hello.nq";
	struct libneuron_exec_options opt = LIBNEURON_SIZED_INIT(struct libneuron_exec_options);
	struct libneuron_exec_summary sum = LIBNEURON_SIZED_INIT(struct libneuron_exec_summary);
	libneuron_device *dev = NULL;
	libneuron_program *prog = NULL;
	libneuron_result *res = NULL;
	int rc = 1;

	if (libneuron_device_open(path, &dev) < 0 || libneuron_program_assemble_file(file, &prog) < 0 ||
	    libneuron_execute(dev, prog, &opt, &res) < 0 || libneuron_result_summary(res, &sum) < 0) {
		fprintf(stderr, "hello: %s\n", libneuron_last_error());
		goto out;
	}
	for (size_t i = 0; i < sum.records; i++) {
		struct libneuron_exec_record rec;
		struct libneuron_decoded d;

		if (libneuron_result_records(res, i, &rec, 1) != 1 || libneuron_result_decode(res, i, &d) < 0) {
			fprintf(stderr, "hello: %s\n", libneuron_last_error());
			goto out;
		}
		printf("core %u queue %u: %s\n", rec.core, rec.queue, d.text);
	}
	printf("status %s, %llu records\n", libneuron_exec_status_name(sum.status), (unsigned long long)sum.records);
	if (sum.status != 0)
		fprintf(stderr, "hello: %s\n", libneuron_result_error(res));
	rc = sum.status == 0 ? 0 : 1;
out:
	libneuron_result_free(res);
	libneuron_program_free(prog);
	libneuron_device_close(dev);
	return rc;
}
