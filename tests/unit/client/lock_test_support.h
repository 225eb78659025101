// Shared by the lock-family tests: a fixture running each test against a keywarden-server and
// a stock redis-server (started once per suite), worker processes (this test binary again,
// running one named test, told what to do through its environment), and LostLog, which
// records what on_lost reported.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "keywarden/keywarden.h"
#include "test_servers.h"

extern char** environ;

namespace keywarden::testing {

// Starts this test binary running only `gtest_filter`, with `env` (NAME=value) added to the
// environment and its stdout discarded; -1 when it cannot start. gtest's sharding variables
// (ctest runs client_tests as shards) are not passed on: the one test a worker runs may belong
// to another shard.
inline pid_t spawn_test_process(const std::string& gtest_filter,
                                const std::vector<std::string>& env) {
  std::vector<std::string> all(env);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string variable = *e;
    if (variable.starts_with("GTEST_TOTAL_SHARDS=") ||
        variable.starts_with("GTEST_SHARD_INDEX=") ||
        variable.starts_with("GTEST_SHARD_STATUS_FILE=")) {
      continue;
    }
    all.push_back(variable);
  }
  std::vector<char*> envp;
  for (auto& e : all) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=" + gtest_filter;
  char* argv[] = {exe.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Waits for `pid`: its exit code, or 128 + the signal that killed it.
inline int wait_exit_code(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The reasons on_lost reported, for the test thread to wait on.
class LostLog {
 public:
  using Clock = std::chrono::steady_clock;

  std::function<void(LockLostReason)> callback() {
    return [this](LockLostReason reason) {
      std::lock_guard<std::mutex> guard(mutex_);
      reasons_.push_back(reason);
      when_ = Clock::now();
      cv_.notify_all();
    };
  }
  std::optional<LockLostReason> wait(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, limit, [&] { return !reasons_.empty(); })) return std::nullopt;
    return reasons_.front();
  }
  size_t count() {
    std::lock_guard<std::mutex> guard(mutex_);
    return reasons_.size();
  }
  Clock::time_point when() {
    std::lock_guard<std::mutex> guard(mutex_);
    return when_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<LockLostReason> reasons_;
  Clock::time_point when_{};
};

// Parameterised over the two servers; instantiate with KEYWARDEN_BOTH_SERVERS(Suite).
class BothServersTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  static void SetUpTestSuite() {
    servers_[0] = std::make_unique<ServerProcess>(ServerKind::kKeywarden);
    servers_[1] = std::make_unique<ServerProcess>(ServerKind::kRedis);
  }
  static void TearDownTestSuite() {
    servers_[0].reset();
    servers_[1].reset();
  }
  ServerProcess& server() const {
    return *servers_[GetParam() == ServerKind::kKeywarden ? 0 : 1];
  }
  ClientOptions options() const {
    ClientOptions o;
    o.port = server().port();
    o.pool_size = 4;
    return o;
  }
  // A key name no other test uses: `prefix:<test name>`.
  std::string name(const std::string& prefix = "lock") const {
    return prefix + ":" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  static inline std::unique_ptr<ServerProcess> servers_[2];
};

}  // namespace keywarden::testing

#define KEYWARDEN_BOTH_SERVERS(Suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(                                                             \
      Servers, Suite,                                                                   \
      ::testing::Values(::keywarden::testing::ServerKind::kKeywarden,                   \
                        ::keywarden::testing::ServerKind::kRedis),                      \
      [](const auto& info) { return ::keywarden::testing::server_name(info.param); })
