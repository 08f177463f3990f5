// SPDX-License-Identifier: MIT
//
// Which symbols libneuron.so exports (userspace/README.md#api-contract).
//
// The library is compiled with -fvisibility=hidden and
// -fvisibility-inlines-hidden, and linked with a version script
// (userspace/cmake/libneuron.map) that keeps only `neuron::`, their
// vtables/typeinfo and the C API's `libneuron_*`. Every public header wraps
// its declarations in NEURON_API_BEGIN / NEURON_API_END, which give them
// default visibility; anything declared only in src/ stays hidden, and
// template instances of other libraries (nlohmann::json, fmt, std::) are
// not exported. userspace/tests/check-symbols.sh compares the .so's dynamic
// symbols with the allow-list userspace/tests/data/symbols.txt.
#pragma once

#if defined(__GNUC__)
#define NEURON_API_BEGIN _Pragma("GCC visibility push(default)")
#define NEURON_API_END _Pragma("GCC visibility pop")
#define NEURON_API __attribute__((visibility("default")))
#else
#define NEURON_API_BEGIN
#define NEURON_API_END
#define NEURON_API
#endif
