// SPDX-License-Identifier: MIT
//
// libneuron's umbrella header: devices, queues, the drain, decoding and
// text, the Reaper, execute(), netlink events, tenancy helpers. It pulls in
// neither JSON nor the assembler nor the Perfetto writer; include those
// explicitly: libneuron/json.hpp (to_json, needs nlohmann-json3-dev),
// libneuron/assembler.hpp (assemble, disassemble), libneuron/perfetto.hpp
// (chrome_trace). Contracts (errors, thread safety, lifetimes):
// userspace/README.md#api-contract. The C API is libneuron/neuron.h.
#pragma once

#include "libneuron/clock.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/device.hpp"
#include "libneuron/execute.hpp"
#include "libneuron/format.hpp"
#include "libneuron/moderation.hpp"
#include "libneuron/netlink.hpp"
#include "libneuron/program.hpp"
#include "libneuron/reaper.hpp"
#include "libneuron/record.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"
#include "libneuron/tenancy.hpp"
#include "libneuron/version.hpp"
