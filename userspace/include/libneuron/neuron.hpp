// SPDX-License-Identifier: MIT
// libneuron: everything.
#pragma once

#include "libneuron/assembler.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/device.hpp"
#include "libneuron/execute.hpp"
#include "libneuron/format.hpp"
#include "libneuron/netlink.hpp"
#include "libneuron/perfetto.hpp"
#include "libneuron/reaper.hpp"
#include "libneuron/record.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"
#include "libneuron/tenancy.hpp"
