// SPDX-License-Identifier: MIT
//
// The kubelet's PodResources v1 List through the neuron-pod-resources
// helper, and the mapping of its answer to cores (podresources.hpp).
#include "podresources.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "libneuron/device.hpp"

using neuron::UniqueFd;

extern char** environ;

namespace neuron::cli {
namespace {

std::optional<unsigned> num(std::string_view s) {
  unsigned v = 0;
  auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || e != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

PodLabels pod_labels(const std::vector<ContainerDevices>& list, const std::string& prefix,
                     unsigned (*cores_of)(unsigned, const void*), const void* ctx) {
  PodLabels out;
  for (const auto& c : list) {
    const bool core = c.resource == prefix + "/core";
    const bool device = c.resource == prefix + "/device";
    if (!core && !device) continue;
    for (std::string_view id : c.ids) {
      if (!id.starts_with("nnq")) continue;
      id.remove_prefix(3);
      const auto dash = id.find("-core");
      if (core && dash != std::string_view::npos) {
        auto d = num(id.substr(0, dash));
        auto k = num(id.substr(dash + 5));
        if (d && k) out.emplace(std::pair{*d, *k}, c.ref);
      } else if (device && dash == std::string_view::npos) {
        if (auto d = num(id))
          for (unsigned k = 0, n = cores_of(*d, ctx); k < n; ++k) out.emplace(std::pair{*d, k}, c.ref);
      }
    }
  }
  return out;
}

std::vector<ContainerDevices> parse_helper_output(const std::string& text) {
  std::vector<ContainerDevices> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    std::vector<std::string> f;
    std::size_t a = 0;
    for (;;) {
      const std::size_t t = line.find('\t', a);
      f.emplace_back(line.substr(a, t == std::string_view::npos ? std::string_view::npos : t - a));
      if (t == std::string_view::npos) break;
      a = t + 1;
    }
    if (f.size() != 5) continue;
    out.push_back({{f[0], f[1], f[2]}, f[3], {f[4]}});
  }
  return out;
}

std::optional<std::vector<ContainerDevices>> list_pod_resources(const std::string& helper, const std::string& socket,
                                                                std::string& error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  UniqueFd rd(fds[0]), wr(fds[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), 2);
  std::string arg0 = helper, arg1 = socket;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, helper.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  wr.reset();
  if (rc != 0) {
    error = "run " + helper + ": " + std::strerror(rc);
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(rd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (16u << 20)) break;  // a kubelet answer is far smaller
  }
  rd.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    error = text.empty() ? helper + " failed" : text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    return std::nullopt;
  }
  return parse_helper_output(text);
}

}  // namespace neuron::cli
