// SPDX-License-Identifier: MIT
// What the C API does across fork() (docs/decisions/0041-fork-in-libneuron.md):
// a counter of forks the process is a child of, and the child's copies of
// the device descriptors cut from the device.
#pragma once

namespace neuron::capi {

/// Forks this process is a child of, counted from the first device the C
/// API opened; a handle made at another value than the current one is
/// inherited. One relaxed load.
unsigned fork_generation() noexcept;

/// Remember the device node behind `fd` (an open /dev/nnqN): in a forked
/// child every descriptor of that node is replaced by one of /dev/null, so
/// the child holds none of the parent's cores, memory or queues. Installs
/// the pthread_atfork() handler on first use.
void note_device(int fd) noexcept;

}  // namespace neuron::capi
