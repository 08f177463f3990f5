// SPDX-License-Identifier: MIT
// A C++20 consumer of an installed libneuron, built only against the
// installed package (find_package(neuron) or pkg-config neuron; the flags
// carry no -std, the build adds C++20 itself).
//   consumer            decode one record and check its text (no device)
//   consumer /dev/nnq0  also: make queue 1 (EXPLICIT records) of core 0,
//                       submit kCount notify instructions to PE, and take
//                       every record with NotificationQueue::wait()
// Exit status 0 if every check passed; "# " lines say what happened.
#include <libneuron/neuron.hpp>

#include <endian.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr unsigned kCount = 8;        // notify instructions
constexpr std::uint16_t kExt = 0x4e00;  // debug_hint_extended of the first; +i after

int drain_device(const char* path) {
  using namespace std::chrono_literals;
  auto dev = neuron::Device::open(path);
  if (!dev) return std::printf("# %s\n", dev.error().message().c_str()), 1;
  neuron::NotificationQueue::Options o;
  o.size = 4096;
  o.threshold = 1;
  o.eventfd = true;
  auto q = neuron::NotificationQueue::create(*dev, 0, 1, o);
  if (!q) return std::printf("# %s\n", q.error().message().c_str()), 1;
  std::vector<neuron_emu_insn> prog(kCount + 1);
  for (unsigned i = 0; i < kCount; ++i) {
    prog[i].opcode = NEURON_OP_NOTIFY;
    prog[i].debug_hint = htole16(3);
    prog[i].operand.arg.debug_hint_extended = htole16(static_cast<std::uint16_t>(kExt + i));
  }
  prog[kCount].opcode = NEURON_OP_HALT;
  if (auto s = dev->submit(0, NEURON_ENGINE_PE, prog, 0); !s)
    return std::printf("# %s\n", s.error().message().c_str()), 1;
  std::vector<neuron::Record> out(64);
  unsigned got = 0, bad = 0;
  while (got < kCount) {
    auto w = q->wait(out, 10s);
    if (!w) return std::printf("# wait: %s\n", w.error().message().c_str()), 1;
    if (w->status == neuron::WaitResult::Status::TimedOut) break;
    for (std::size_t i = 0; i < w->drain.count; ++i, ++got) {
      const auto d = neuron::decode(out[i], q->queue_class());
      const auto* e = std::get_if<neuron::Explicit>(&d);
      const bool ok = e && e->engine == neuron::Engine::PE && e->debug_hint == 3 &&
                      e->debug_hint_extended == kExt + got;
      bad += ok ? 0 : 1;
      std::printf("# record %u: %s%s\n", got, neuron::to_text(d).c_str(), ok ? "" : "  <- unexpected");
    }
  }
  std::printf("# C++ consumer: %u of %u records by NotificationQueue::wait(), %u unexpected\n", got, kCount, bad);
  return got == kCount && bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // SEQUENCER_NONFATAL, metadata_lo 0x0835, header 0x9f, metadata_hi 0x005c1a42
  neuron::Record r;
  r.bytes = {0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::string s = neuron::to_text(neuron::decode(r));
  std::puts(s.c_str());
  if (s.find("DGE OOB on POOL at pc 0x1a4") == std::string::npos) return 1;
  return argc > 1 ? drain_device(argv[1]) : 0;
}
