#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hello.py: run a .nq program with the neuron module (python3-neuron) and
print its decoded records, one a line, in drain order.

    python3 examples/hello.py [DEVICE [PROGRAM]]   (default /dev/nnq0 examples/hello.nq)

Exits 0 when the run's status is OK, 1 otherwise.
"""
import sys

import neuron

path = sys.argv[1] if len(sys.argv) > 1 else "/dev/nnq0"
program = sys.argv[2] if len(sys.argv) > 2 else "examples/hello.nq"

try:
    with neuron.Device(path) as dev, neuron.Program.from_file(program) as prog, dev.run(prog) as result:
        for rec, d in zip(result.records, result.decoded()):
            print("core %d queue %d: %s" % (rec["core"], rec["queue"], d["text"]))
        # the records as a NumPy structured array: one column a field
        print("timestamps (ps):", result.records["raw"]["timestamp_ps"].tolist())
        print("status %s, %d records" % (result.status_name, len(result.records)))
        if result.status != 0:
            print("hello.py:", result.error, file=sys.stderr)
        sys.exit(0 if result.status == 0 else 1)
except neuron.NeuronError as e:
    print("hello.py: %s (errno %d)" % (e.strerror, e.errno), file=sys.stderr)
    sys.exit(1)
