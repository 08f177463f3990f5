// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of nnq.ko (neuron_trace.h, docs/architecture.md#tracepoints)
 * are defined here, once. This file calls no other file of the driver.
 */
#define CREATE_TRACE_POINTS
#include "neuron_trace.h"
