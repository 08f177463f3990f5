// SPDX-License-Identifier: MIT
//
// The device layer without a device: errors carry errno and what was asked;
// RAII types release what they own. (With the driver, the VM tests cover the
// good paths.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "device_access.hpp"
#include "libneuron/device.hpp"
#include "libneuron/execute.hpp"
#include "libneuron/neuron.h"

using namespace neuron;
using ::testing::HasSubstr;

TEST(Device, OpenMissingNodeNamesIt) {
  auto d = Device::open("/nonexistent/nnq7");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, std::errc::no_such_file_or_directory);
  EXPECT_THAT(d.error().message(), HasSubstr("open /nonexistent/nnq7"));
}

// Issue 41: only a node of the driver opens. /dev/null is a character
// device that does not answer NEURON_IOC_DEVICE_INFO (ENOTTY); a regular
// file is not a character device (ENOTTY, without an ioctl sent to it).
TEST(Device, OpenRefusesAFileThatIsNotANnqNode) {
  for (const bool ro : {false, true}) {
    SCOPED_TRACE(ro ? "read-only" : "read-write");
    auto d = ro ? Device::open_read_only("/dev/null") : Device::open("/dev/null");
    ASSERT_FALSE(d) << "opened /dev/null as a device";
    EXPECT_EQ(d.error().code, std::errc::inappropriate_io_control_operation);
    EXPECT_THAT(d.error().message(),
                HasSubstr(ro ? "open (read-only) /dev/null: not a nnq device node (NEURON_IOC_DEVICE_INFO failed)"
                             : "open /dev/null: not a nnq device node (NEURON_IOC_DEVICE_INFO failed)"));
  }
  char file[] = "/tmp/nnq-regular-XXXXXX";
  const int fd = ::mkstemp(file);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto r = Device::open(file);
  ::unlink(file);
  ASSERT_FALSE(r) << "opened a regular file as a device";
  EXPECT_EQ(r.error().code, std::errc::inappropriate_io_control_operation);
  EXPECT_THAT(r.error().message(), HasSubstr(std::string("open ") + file + ": not a nnq device node (not a character device)"));
  // the C API says the same, and hands out no device
  libneuron_device* dev = nullptr;
  EXPECT_EQ(libneuron_device_open("/dev/null", &dev), -ENOTTY);
  EXPECT_EQ(dev, nullptr);
  EXPECT_THAT(std::string(libneuron_last_error()), HasSubstr("not a nnq device node"));
}

// Issue 41: adopt() never changes the caller's file status flags (they
// belong to the open file, so to every descriptor of it): a blocking file
// is refused, naming the fd and the flag, and stays blocking; a
// non-blocking one is taken as it is.
TEST(Device, EventStreamAdoptLeavesTheFileStatusFlags) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const int keep = ::dup(p[0]);  // the caller's other descriptor of the same open file
  ASSERT_GE(keep, 0);
  auto s = EventStream::adopt(UniqueFd(p[0]), "pipe");
  EXPECT_EQ(::fcntl(keep, F_GETFL) & O_NONBLOCK, 0) << "adopt() made the caller's file non-blocking";
  ASSERT_FALSE(s) << "adopted a blocking file";
  EXPECT_EQ(s.error().code, make_error_code(errc::invalid_argument));
  EXPECT_THAT(s.error().message(), HasSubstr("of pipe as an event stream: the open file is not O_NONBLOCK"));

  ASSERT_EQ(::fcntl(keep, F_SETFL, ::fcntl(keep, F_GETFL) | O_NONBLOCK), 0);
  const int before = ::fcntl(keep, F_GETFL);
  auto ok = EventStream::adopt(UniqueFd(::dup(keep)), "pipe");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(::fcntl(keep, F_GETFL), before);
  std::array<Event, 2> ev{};
  auto n = ok->read(ev);  // nothing written: none, at once
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(*n, 0u);
  ::close(keep);
  ::close(p[1]);
}

// Issue 41: two execute() calls on one Device read one event queue (the
// open file's). Each DeviceTarget's events are now a subscription to the
// file: both see an event, and the one whose share another read handed over
// is woken for it. A FIFO stands in for the file (what is written is read
// once, as from the driver's queue; it does not answer
// NEURON_IOC_EVENT_SIZE, so events are the first release's 40 bytes).
TEST(Device, ConcurrentExecuteTargetsEachSeeEveryEventOfTheFile) {
  char dir[] = "/tmp/nnq-fifo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/nnq0";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto d = neuron::test::DeviceAccess::open_any(path);
  ASSERT_TRUE(d) << d.error().message();
  DeviceTarget a(*d), b(*d);
  auto ea = a.open_events(), eb = b.open_events();
  ASSERT_TRUE(ea && eb);
  // timestamp 0x1000, device 0, core 3, edge NOTIFIC (0), cause 1, queues
  // 0x20, lost 4, count 7 (the layout of ReadEventsWidensFirstReleaseRecords)
  const std::array<std::uint32_t, 10> rec{0x1000, 0, 0, 3, 0, 1, 0x20, 4, 7, 0};
  const int w = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(w, 0);
  ASSERT_EQ(::write(w, rec.data(), sizeof rec), static_cast<ssize_t>(sizeof rec));
  std::array<Event, 4> out{};
  auto na = (*ea)->read(out);
  ASSERT_TRUE(na) << na.error().message();
  ASSERT_EQ(*na, 1u);
  EXPECT_EQ(out[0].core, 3u);
  pollfd p{(*eb)->fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 1) << "the second target was not woken for the event the first read";
  out = {};
  auto nb = (*eb)->read(out);
  ASSERT_TRUE(nb) << nb.error().message();
  ASSERT_EQ(*nb, 1u) << "the first target's read took the event from the second";
  EXPECT_EQ(out[0].core, 3u);
  EXPECT_EQ(out[0].lost, 4u);
  // one subscriber gone: the other still gets what comes
  ea->reset();
  ASSERT_EQ(::write(w, rec.data(), sizeof rec), static_cast<ssize_t>(sizeof rec));
  auto nb2 = (*eb)->read(out);
  ASSERT_TRUE(nb2) << nb2.error().message();
  EXPECT_EQ(*nb2, 1u);
  ::close(w);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

TEST(Device, IoctlsOnAFileThatIsNotNeuronFailWithWhatWasAsked) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  auto info = d->info();
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, std::errc::inappropriate_io_control_operation);
  EXPECT_THAT(info.error().message(), HasSubstr("NEURON_IOC_DEVICE_INFO /dev/null"));

  auto init = d->nq_init(1, 3, 4096, NEURON_NQ_F_IGNORE_FULL, 8);
  ASSERT_FALSE(init);
  EXPECT_THAT(init.error().message(), HasSubstr("NEURON_IOC_NQ_INIT core=1 queue=3 size=4096 flags=0x2 threshold=8"));

  const neuron_emu_insn prog[2] = {};
  auto s = d->submit(0, 2, prog);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("NEURON_IOC_SUBMIT core=0 engine=2 (POOL) count=2 flags=0x1"));
  EXPECT_THAT(d->engine_status(0, 4).error().message(), HasSubstr("NEURON_IOC_ENGINE_STATUS core=0 engine=4 (SP)"));
  EXPECT_THAT(d->engine_reset(1, 0).error().message(), HasSubstr("NEURON_IOC_ENGINE_RESET core=1 engine=0 (PE)"));
  EXPECT_THAT(d->nq_destroy(0, 9).error().message(), HasSubstr("NEURON_IOC_NQ_DESTROY core=0 queue=9"));
  EXPECT_THAT(d->nq_info(0, 9).error().message(), HasSubstr("NEURON_IOC_NQ_INFO core=0 queue=9"));

  auto q = NotificationQueue::create(*d, 0, 1);
  ASSERT_FALSE(q);
  EXPECT_THAT(q.error().message(), HasSubstr("NEURON_IOC_NQ_INIT core=0 queue=1 size=4096"));
  NotificationQueue::Options bad;
  bad.size = 1000;
  auto q2 = NotificationQueue::create(*d, 0, 1, bad);
  ASSERT_FALSE(q2);
  EXPECT_EQ(q2.error().code, make_error_code(errc::bad_ring));
}

TEST(Device, ListFindsNumberedNodesInOrder) {
  const auto dir = std::filesystem::temp_directory_path() / ("neuron-list-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // neuron0 and neuron1 are AWS's driver's nodes on the same host: not ours
  for (const char* n : {"nnq10", "nnq2", "nnq0", "nnqx", "nnq", "neuron0", "neuron1", "other1"})
    std::ofstream(dir / n) << "";
  const auto found = Device::list(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (dir / "nnq0").string());
  EXPECT_EQ(found[1], (dir / "nnq2").string());
  EXPECT_EQ(found[2], (dir / "nnq10").string());
}

TEST(Raii, UniqueFdClosesAndDups) {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    auto d = fd.dup();
    ASSERT_TRUE(d);
    EXPECT_NE(d->get(), raw);
    EXPECT_GE(::fcntl(d->get(), F_GETFD), 0);
    UniqueFd moved(std::move(fd));
    EXPECT_EQ(moved.get(), raw);
    EXPECT_EQ(fd.get(), -1);  // NOLINT: moved-from is empty
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed
  EXPECT_EQ(errno, EBADF);
}

TEST(Raii, MappingUnmaps) {
  void* addr = nullptr;
  {
    auto m = Mapping::map(-1, 4096, PROT_READ, 0, "anon");  // fd -1 without MAP_ANONYMOUS fails
    ASSERT_FALSE(m);
    EXPECT_THAT(m.error().message(), HasSubstr("mmap anon len=4096 offset=0x0"));
    void* p = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    Mapping owned(p, 4096);
    addr = owned.data();
    Mapping other = std::move(owned);
    EXPECT_EQ(other.data(), addr);
    EXPECT_FALSE(owned);  // NOLINT
    unsigned char v = 0;
    EXPECT_EQ(::mincore(addr, 4096, &v), 0);  // still mapped
  }
  unsigned char v = 0;
  EXPECT_EQ(::mincore(addr, 4096, &v), -1);  // unmapped
  EXPECT_EQ(errno, ENOMEM);
}

TEST(Device, EngineStateNames) {
  EXPECT_EQ(engine_state_name(NEURON_ENGINE_IDLE), "IDLE");
  EXPECT_EQ(engine_state_name(NEURON_ENGINE_HALTED), "HALTED");
  EXPECT_EQ(engine_state_name(9), "STATE_9");
}

TEST(Device, NewIoctlsFailWithWhatWasAsked) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d);
  auto f = d->feature_flags(1);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, std::errc::inappropriate_io_control_operation);
  EXPECT_THAT(f.error().message(), HasSubstr("NEURON_IOC_FEATURE_FLAGS GET core=1"));
  EXPECT_THAT(d->set_feature_flags(0, 0x2).error().message(), HasSubstr("NEURON_IOC_FEATURE_FLAGS SET core=0 flags=0x2"));
  EXPECT_THAT(d->nq_eventfd(1, 4, 7).error().message(), HasSubstr("NEURON_IOC_NQ_EVENTFD core=1 queue=4 fd=7"));
  EXPECT_THAT(d->evt_sem(0, 12, NEURON_SEM_INC, 3).error().message(),
              HasSubstr("NEURON_IOC_EVT_SEM core=0 index=12 op=SEM_INC value=3"));
  EXPECT_THAT(d->throttle(true).error().message(), HasSubstr("NEURON_IOC_THROTTLE enable=1"));
  EXPECT_THAT(d->notify_trigger(1, NEURON_TRIGGER_DMA_QUEUE, 15, true).error().message(),
              HasSubstr("NEURON_IOC_NOTIFY_TRIGGER core=1 source=DMA_QUEUE index=15 enable=1"));
  EXPECT_THAT(d->notify_trigger(0, NEURON_TRIGGER_AXI_EVT_SEM, 0, false).error().message(),
              HasSubstr("NEURON_IOC_NOTIFY_TRIGGER core=0 source=AXI_EVT_SEM index=0 enable=0"));
}

TEST(Device, TenancyIoctlsFailWithWhatWasAsked) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d);
  auto a = d->acquire_cores(0xb);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, std::errc::inappropriate_io_control_operation);
  EXPECT_THAT(a.error().message(), HasSubstr("NEURON_IOC_CORE_ACQUIRE cores=0xb (0-1,3)"));
  EXPECT_THAT(d->acquire_cores(0).error().message(), HasSubstr("NEURON_IOC_CORE_ACQUIRE cores=0x0 (none: query)"));
  EXPECT_THAT(d->release_cores(0x4).error().message(), HasSubstr("NEURON_IOC_CORE_RELEASE cores=0x4 (2)"));
  EXPECT_THAT(d->grant_cores(0x3, 1001).error().message(),
              HasSubstr("NEURON_IOC_CORE_GRANT GRANT cores=0x3 (0-1) uid=1001"));
  EXPECT_THAT(d->revoke_grants(0x2).error().message(), HasSubstr("NEURON_IOC_CORE_GRANT REVOKE cores=0x2 (1)"));
  EXPECT_THAT(d->submit(1, NEURON_ENGINE_ACT, {}, NEURON_SUBMIT_F_DETACH).error().message(),
              HasSubstr("NEURON_IOC_SUBMIT core=1 engine=1 (ACT) count=0 flags=0x2"));
  EXPECT_THAT(d->mem_alloc(0x1800).error().message(), HasSubstr("NEURON_IOC_MEM_ALLOC size=0x1800:"));
  EXPECT_THAT(d->mem_alloc(0x1000, 0x8000).error().message(),
              HasSubstr("NEURON_IOC_MEM_ALLOC size=0x1000 offset=0x8000 flags=FIXED"));
  EXPECT_THAT(d->mem_free(0x8000).error().message(), HasSubstr("NEURON_IOC_MEM_FREE offset=0x8000"));
  auto m = DeviceMemory::allocate(*d, 100, 0x2000);
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message(), HasSubstr("NEURON_IOC_MEM_ALLOC size=0x64 offset=0x2000 flags=FIXED"));
  DeviceMemory none;
  EXPECT_FALSE(none);
  none.reset();  // nothing to free
  auto o = d->core_owners();
  ASSERT_FALSE(o);  // /dev/null has no device number
  EXPECT_THAT(o.error().message(), HasSubstr("core owners of /dev/null"));
}

TEST(Device, CoreOwnersComeFromSysfs) {
  const auto dir = std::filesystem::temp_directory_path() / ("neuron-sysfs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "nnq3");
  std::ofstream(dir / "nnq3" / "core_owners") << "0 - -\n1 99 job\n";
  const auto node = dir / "nnq3-node";
  std::filesystem::create_directories(node);
  std::ofstream(node / "nnq3") << "";
  auto d = neuron::test::DeviceAccess::open_any((node / "nnq3").string());
  ASSERT_TRUE(d) << d.error().message();
  auto o = d->core_owners(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(o) << o.error().message();
  ASSERT_EQ(o->size(), 2u);
  EXPECT_TRUE((*o)[0].is_free());
  EXPECT_EQ((*o)[1].pid, 99);
  EXPECT_EQ((*o)[1].comm, "job");
}

TEST(Device, ReadEventsAndEventStream) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d);
  std::array<Event, 4> ev{};
  auto n = d->read_events(ev, std::chrono::milliseconds(0));  // /dev/null: readable, 0 bytes
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(*n, 0u);
  auto s = EventStream::open("/nonexistent/nnq3");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("open /nonexistent/nnq3 (event stream)"));
  // a read that is not whole events is reported, not truncated silently
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "abc", 3), 3);
  auto bad = read_events(p[0], ev, std::chrono::milliseconds(100), "read events pipe");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("3 bytes is not whole events of 64 bytes"));
  ::close(p[0]);
  ::close(p[1]);
}

// A driver without NEURON_IOC_EVENT_SIZE returns the first release's 40-byte
// events: they are widened into Events whose size field is 0.
TEST(Device, ReadEventsWidensFirstReleaseRecords) {
  // two records laid out by hand: timestamp, device, core, edge, cause,
  // queues, lost (u32 each after the u64), count
  std::array<std::uint32_t, 20> words{};
  const std::array<std::uint32_t, 10> first{0x1000, 0, 2, 3, 0, 1, 0x20, 4, 7, 0};
  std::copy(first.begin(), first.end(), words.begin());
  std::copy(first.begin(), first.end(), words.begin() + 10);
  words[10 + 3] = 4;  // the second record's core
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], words.data(), 80), 80);
  std::array<Event, 4> ev{};
  Event poison{};  // every field set below, so a short read shows
  poison.timestamp_ns = 99;
  poison.size = 99;
  ev.fill(poison);
  auto n = read_events(p[0], ev, std::chrono::milliseconds(100), "read events pipe", 40);
  ASSERT_TRUE(n) << n.error().message();
  ASSERT_EQ(*n, 2u);
  EXPECT_EQ(ev[0].timestamp_ns, 0x1000u);
  EXPECT_EQ(ev[0].device, 2u);
  EXPECT_EQ(ev[0].core, 3u);
  EXPECT_EQ(ev[0].cause, 1u);
  EXPECT_EQ(ev[0].queues, 0x20u);
  EXPECT_EQ(ev[0].lost, 4u);
  EXPECT_EQ(ev[0].count, 7u);
  EXPECT_EQ(ev[0].size, 0u);
  EXPECT_EQ(ev[1].core, 4u);
  EXPECT_EQ(ev[1].size, 0u);
  // 40-byte records: 60 bytes is not whole events
  ASSERT_EQ(::write(p[1], words.data(), 60), 60);
  auto bad = read_events(p[0], ev, std::chrono::milliseconds(100), "read events pipe", 40);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("60 bytes is not whole events of 40 bytes"));
  ::close(p[0]);
  ::close(p[1]);
}

TEST(Device, IndexFromThePath) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->index());
  // a core node's device number is the one before "-coreC"
  // (docs/decisions/0017-core-nodes.md); /dev/null stands in for the nodes
  char dir[] = "/tmp/nnq-index-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string base(dir);
  for (const char* n : {"nnq3", "nnq3-core1", "nnq12-core14", "nnq-core1", "x-core"})
    ASSERT_EQ(::symlink("/dev/null", (base + "/" + n).c_str()), 0) << n;
  auto whole = neuron::test::DeviceAccess::open_any(base + "/nnq3");
  auto core = neuron::test::DeviceAccess::open_any(base + "/nnq3-core1");
  auto wide = neuron::test::DeviceAccess::open_any(base + "/nnq12-core14");
  auto none = neuron::test::DeviceAccess::open_any(base + "/nnq-core1");
  auto bare = neuron::test::DeviceAccess::open_any(base + "/x-core");
  ASSERT_TRUE(whole && core && wide && none && bare);
  EXPECT_EQ(whole->index(), 3u);
  EXPECT_EQ(core->index(), 3u);
  EXPECT_EQ(wide->index(), 12u);
  EXPECT_FALSE(none->index());
  EXPECT_FALSE(bare->index());
  for (const char* n : {"nnq3", "nnq3-core1", "nnq12-core14", "nnq-core1", "x-core"})
    ::unlink((base + "/" + n).c_str());
  ::rmdir(dir);
  EXPECT_EQ(edge_name(NEURON_EDGE_THROTTLE), "THROTTLE");
  EXPECT_EQ(edge_name(3), "RESET");
  EXPECT_EQ(edge_name(4), "PCI_ERROR");
  EXPECT_EQ(edge_name(5), "ENGINE_STOPPED");
  EXPECT_EQ(edge_name(9), "EDGE_9");
  EXPECT_EQ(stop_cause_name(1), "ENGINE_RESET");
  EXPECT_EQ(stop_cause_name(2), "CORE_RELEASE");
  EXPECT_EQ(stop_cause_name(3), "RELEASE");
  EXPECT_EQ(stop_cause_name(0), "STOP_0");
  EXPECT_EQ(evt_sem_op_name(NEURON_EVENT_CLEAR), "EVENT_CLEAR");
}

TEST(Device, EventfdQueueNeedsAThreshold) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d);
  NotificationQueue::Options o;
  o.eventfd = true;
  auto q = NotificationQueue::create(*d, 0, 1, o);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, make_error_code(errc::invalid_argument));
  EXPECT_THAT(q.error().message(), HasSubstr("needs a threshold"));
}
