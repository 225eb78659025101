// libkeywarden's Lock and FencedLock on keywarden-server's native lock commands: detected once
// and used (LOCK.ACQUIRE waiting in the server, LOCK.RELEASE), off when asked, Redis falling
// back to the scripts; a waiting thread holds no pooled connection; script and native clients
// on one name never both hold it; fenced tokens shared between both paths; watchdog renewal;
// a bound grant freed by kill -9 of its process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ServerKind;
using testing::ServerProcess;

// Calls of `command` so far (INFO commandstats), 0 when never called.
int64_t calls(Client& client, const std::string& command) {
  const std::string info = client.command("INFO", "commandstats").str();
  const std::string prefix = "cmdstat_" + command + ":calls=";
  const size_t at = info.find(prefix);
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + prefix.size()));
}

class NativeLockTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<ServerProcess>(ServerKind::kKeywarden);
  }
  static void TearDownTestSuite() { server_.reset(); }

  ClientOptions options() const {
    ClientOptions o;
    o.port = server_->port();
    return o;
  }
  std::string name() const {
    return std::string("native:") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static inline std::unique_ptr<ServerProcess> server_;
};

TEST_F(NativeLockTest, LockUsesTheNativeCommandsWhenTheServerHasThem) {
  Client client(options());
  Lock lock = client.get_lock(name());
  const int64_t acquires = calls(client, "lock.acquire");
  const int64_t releases = calls(client, "lock.release");
  lock.lock();
  lock.lock();
  EXPECT_EQ(client.command("HGET", name(), lock.owner()).str(), "2");
  const Reply info = client.command("LOCK.INFO", name());
  EXPECT_EQ(info.elements().at(1).str(), lock.owner());
  EXPECT_EQ(lock.hold_count(), 2);
  lock.unlock();
  lock.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_EQ(calls(client, "lock.acquire"), acquires + 2);
  EXPECT_EQ(calls(client, "lock.release"), releases + 2);
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST_F(NativeLockTest, OffKeepsTheScripts) {
  ClientOptions o = options();
  o.lock_native_commands = LockNativeCommands::kOff;
  Client client(o);
  Lock lock = client.get_lock(name());
  const int64_t acquires = calls(client, "lock.acquire");
  lock.lock();
  lock.unlock();
  EXPECT_EQ(calls(client, "lock.acquire"), acquires);
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
}

TEST_F(NativeLockTest, RedisFallsBackToTheScripts) {
  ServerProcess redis(ServerKind::kRedis);
  ClientOptions o;
  o.port = redis.port();
  Client client(o);
  Lock lock = client.get_lock(name());
  lock.lock();
  EXPECT_EQ(client.command("HGET", name(), lock.owner()).str(), "1");
  Client other(o);
  Lock contender = other.get_lock(name());
  EXPECT_FALSE(contender.try_lock_for(50ms));
  lock.unlock();
  EXPECT_TRUE(contender.try_lock_for(2s));
  contender.unlock();
}

TEST_F(NativeLockTest, AWaiterHoldsNoPooledConnection) {
  ClientOptions o = options();
  o.pool_size = 1;
  Client client(o);
  Lock holder = client.get_lock(name());
  Lock waiter = client.get_lock(name());
  holder.lock();
  std::atomic<bool> granted{false};
  std::thread thread([&] {
    waiter.lock();  // waits in the server's queue
    granted = true;
    waiter.unlock();
  });
  // Queued in the server...
  const Clock::time_point until = Clock::now() + 10s;
  while (client.command("LOCK.INFO", name()).elements().at(7).size() == 0 &&
         Clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(client.command("LOCK.INFO", name()).elements().at(7).size(), 1u);
  // ... while the single pooled connection still serves everyone else.
  EXPECT_EQ(client.command("PING").str(), "PONG");
  EXPECT_FALSE(granted);
  holder.unlock();
  thread.join();
  EXPECT_TRUE(granted);
}

TEST_F(NativeLockTest, TryLockWithAWaitGivesUpInTime) {
  Client client(options());
  Lock holder = client.get_lock(name());
  Lock waiter = client.get_lock(name());
  holder.lock();
  const Clock::time_point start = Clock::now();
  EXPECT_FALSE(waiter.try_lock_for(200ms));
  EXPECT_GE(Clock::now() - start, 150ms);
  EXPECT_EQ(client.command("LOCK.INFO", name()).elements().at(7).size(), 0u);
  holder.unlock();
}

TEST_F(NativeLockTest, ScriptAndNativeClientsNeverBothHoldTheLock) {
  constexpr int kRounds = 40;
  ClientOptions scripted = options();
  scripted.lock_native_commands = LockNativeCommands::kOff;
  Client native_client(options());
  Client script_client(scripted);
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  std::atomic<int> done{0};
  auto run = [&](Client& client) {
    Lock lock = client.get_lock(name());
    for (int i = 0; i < kRounds; ++i) {
      lock.lock();
      if (inside.fetch_add(1) != 0) ++violations;
      std::this_thread::sleep_for(100us);
      inside.fetch_sub(1);
      lock.unlock();
      ++done;
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back(run, std::ref(native_client));
  for (int i = 0; i < 3; ++i) threads.emplace_back(run, std::ref(script_client));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(done.load(), 6 * kRounds);
  EXPECT_EQ(native_client.command("EXISTS", name()).integer(), 0);
}

TEST_F(NativeLockTest, FencedTokensGrowAcrossNativeAndScriptClients) {
  ClientOptions scripted = options();
  scripted.lock_native_commands = LockNativeCommands::kOff;
  Client native_client(options());
  Client script_client(scripted);
  FencedLock native_lock = native_client.get_fenced_lock(name());
  FencedLock script_lock = script_client.get_fenced_lock(name());
  int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t a = native_lock.lock_and_get_token();
    EXPECT_GT(a, last);
    // The server knows the hold's token; a re-entry returns the same.
    EXPECT_EQ(native_client.command("LOCK.INFO", name()).elements().at(9).integer(), a);
    EXPECT_EQ(native_lock.lock_and_get_token(), a);
    native_lock.unlock();
    native_lock.unlock();
    const int64_t b = script_lock.lock_and_get_token();
    EXPECT_GT(b, a);
    script_lock.unlock();
    last = b;
  }
  EXPECT_GE(native_lock.token(), last);
  // The token is enforced by LOCK.FENCED.
  const int64_t token = native_lock.lock_and_get_token();
  EXPECT_EQ(native_client.command("LOCK.FENCED", name(), token, "SET", name() + ":data", "v").str(),
            "OK");
  native_lock.unlock();
  EXPECT_THROW(native_client.command("LOCK.FENCED", name(), token - 1, "SET", name() + ":data",
                                     "late"),
               ServerError);
}

TEST_F(NativeLockTest, TheWatchdogRenewsANativeGrant) {
  ClientOptions o = options();
  // Renewed every 300 ms, so a renewal may run ~0.5 s late on a loaded machine.
  o.lock_watchdog_timeout = 900ms;
  Client client(o);
  Lock lock = client.get_lock(name());
  lock.lock();
  std::this_thread::sleep_for(3s);  // more than three leases
  EXPECT_EQ(client.command("HGET", name(), lock.owner()).str(), "1");
  EXPECT_GT(client.command("PTTL", name()).integer(), 0);
  EXPECT_TRUE(lock.valid());
  lock.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
}

// A no-op unless started by a test: holds KW_NATIVE_NAME with a bound one-minute lease, says so
// in KW_NATIVE_NAME:held, and waits to be killed.
TEST(NativeLockWorker, HoldBound) {
  const char* port = std::getenv("KW_NATIVE_PORT");
  if (port == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ClientOptions o;
  o.port = std::atoi(port);
  o.lock_bind_to_connection = true;
  Client client(o);
  const std::string lock_name = std::getenv("KW_NATIVE_NAME");
  Lock lock = client.get_lock(lock_name);
  lock.lock(60s);
  client.command("SET", lock_name + ":held", "1");
  for (;;) std::this_thread::sleep_for(1s);
}

TEST_F(NativeLockTest, ABoundGrantIsFreedWhenItsProcessIsKilled) {
  Client client(options());
  const pid_t worker = testing::spawn_test_process(
      "NativeLockWorker.HoldBound",
      {"KW_NATIVE_PORT=" + std::to_string(server_->port()), "KW_NATIVE_NAME=" + name()});
  ASSERT_GT(worker, 0);
  const Clock::time_point until = Clock::now() + 20s;
  while (client.command("EXISTS", name() + ":held").integer() == 0 && Clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(client.command("EXISTS", name() + ":held").integer(), 1);
  EXPECT_GT(client.command("PTTL", name()).integer(), 30000);
  ::kill(worker, SIGKILL);
  testing::wait_exit_code(worker);
  // Not after the minute's lease: as soon as the server sees the connection close.
  Lock lock = client.get_lock(name());
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(lock.try_lock_for(10s));
  EXPECT_LT(Clock::now() - start, 10s);
  lock.unlock();
}

}  // namespace
}  // namespace keywarden
