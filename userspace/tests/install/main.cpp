// SPDX-License-Identifier: MIT
#include <libneuron/neuron.hpp>

#include <cstdio>
#include <cstring>

int main() {
  // SEQUENCER_NONFATAL, metadata_lo 0x0835, header 0x9f, metadata_hi 0x005c1a42
  neuron::Record r;
  r.bytes = {0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::string s = neuron::to_text(neuron::decode(r));
  std::puts(s.c_str());
  return s.find("DGE OOB on POOL at pc 0x1a4") == std::string::npos;
}
