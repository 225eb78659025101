// ForkChild: one child at a time, exit codes and signals reported by poll(), kill_child(), and
// the attached keyspace's tables refusing resizes exactly while a child is alive. poll() is
// called in a loop with a generous deadline rather than after a fixed sleep.
#include "persistence/fork_child.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>

#include "common/clock.h"
#include "storage/keyspace.h"

namespace keywarden {
namespace {

std::optional<ForkChild::Exit> wait_for_exit() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto exit = ForkChild::poll()) return exit;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

TEST(ForkChildTest, RunsBodyAndReportsExitCode) {
  ManualClock clock;
  Keyspace keyspace(2, clock);
  ForkChild::attach(&keyspace);
  auto started = ForkChild::start(ForkChild::Kind::kRdb, [] { return 3; });
  ASSERT_TRUE(started.ok());
  EXPECT_TRUE(ForkChild::active());
  EXPECT_EQ(ForkChild::kind(), ForkChild::Kind::kRdb);
  EXPECT_EQ(ForkChild::pid(), started.pid);
  EXPECT_FALSE(keyspace.db(0).table().resize_allowed());
  EXPECT_FALSE(keyspace.db(1).table().resize_allowed());

  auto exit = wait_for_exit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->kind, ForkChild::Kind::kRdb);
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_EQ(exit->signal, 0);
  EXPECT_FALSE(exit->success());
  EXPECT_FALSE(ForkChild::active());
  EXPECT_EQ(ForkChild::kind(), ForkChild::Kind::kNone);
  EXPECT_TRUE(keyspace.db(0).table().resize_allowed());
  ForkChild::attach(nullptr);
}

TEST(ForkChildTest, OneChildAtATime) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  // The child waits for the pipe to close, so it is surely alive for the second start().
  auto started = ForkChild::start(ForkChild::Kind::kAof, [&] {
    ::close(pipe_fds[1]);
    char byte;
    return ::read(pipe_fds[0], &byte, 1) == 0 ? 0 : 1;
  });
  ASSERT_TRUE(started.ok());
  ::close(pipe_fds[0]);
  auto second = ForkChild::start(ForkChild::Kind::kRdb, [] { return 0; });
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.error, EEXIST);
  EXPECT_FALSE(ForkChild::poll().has_value());
  ::close(pipe_fds[1]);
  auto exit = wait_for_exit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->success());
  EXPECT_EQ(exit->kind, ForkChild::Kind::kAof);
}

TEST(ForkChildTest, KillChildEndsAndReaps) {
  ManualClock clock;
  Keyspace keyspace(1, clock);
  ForkChild::attach(&keyspace);
  auto started = ForkChild::start(ForkChild::Kind::kRdb, [] {
    for (;;) ::pause();
    return 0;
  });
  ASSERT_TRUE(started.ok());
  ForkChild::kill_child();
  EXPECT_FALSE(ForkChild::active());
  EXPECT_TRUE(keyspace.db(0).table().resize_allowed());
  EXPECT_FALSE(ForkChild::poll().has_value());
  // The pid is gone: it was reaped.
  EXPECT_EQ(::kill(started.pid, 0), -1);
  ForkChild::attach(nullptr);
}

TEST(ForkChildTest, SignalReportedByPoll) {
  auto started = ForkChild::start(ForkChild::Kind::kRdb, [] {
    ::raise(SIGKILL);
    return 0;
  });
  ASSERT_TRUE(started.ok());
  auto exit = wait_for_exit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_FALSE(exit->success());
}

}  // namespace
}  // namespace keywarden
