// keywarden::Lock against a real keywarden-server and a stock redis-server: reentrancy,
// exclusion between handles, waking waiters, lease expiry and on_lost, the watchdog, standard
// lock adaptors and contention without lost updates.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::ServerKind;
using testing::LostLog;
using testing::ServerProcess;
using testing::wait_exit_code;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Other processes for the cross-process tests: LockWorker.Run in a new process.
pid_t spawn_worker(const std::string& mode, int port, const std::string& lock_name) {
  return testing::spawn_test_process(
      "LockWorker.Run", {"KW_LOCK_WORKER=" + mode, "KW_LOCK_PORT=" + std::to_string(port),
                         "KW_LOCK_NAME=" + lock_name});
}

constexpr int kWorkerRounds = 20;

// A no-op unless started by spawn_worker: "count" increments the shared counter
// kWorkerRounds times under the lock; "hold" takes the lock (1 s watchdog lease) and keeps it
// until killed.
TEST(LockWorker, Run) {
  const char* mode = std::getenv("KW_LOCK_WORKER");
  if (mode == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(std::getenv("KW_LOCK_PORT"));
  o.lock_watchdog_timeout = 1000ms;
  const std::string lock_name = std::getenv("KW_LOCK_NAME");
  Client client(o);
  Lock lock = client.get_lock(lock_name);
  if (std::string(mode) == "count") {
    for (int i = 0; i < kWorkerRounds; ++i) {
      std::lock_guard<Lock> guard(lock);
      Reply value = client.command("GET", lock_name + ":counter");
      int64_t n = value.is_null() ? 0 : std::stoll(value.str());
      client.command("SET", lock_name + ":counter", n + 1);
    }
  } else {
    lock.lock();
    std::this_thread::sleep_for(30s);  // killed long before, unless the test broke
  }
}

using LockTest = testing::BothServersTest;

TEST_P(LockTest, ReentrantWithHoldCount) {
  Client client(options());
  Lock lock = client.get_lock(name());
  EXPECT_FALSE(lock.is_locked());
  lock.lock();
  lock.lock();
  EXPECT_TRUE(lock.is_locked());
  EXPECT_TRUE(lock.is_held());
  EXPECT_EQ(lock.hold_count(), 2);
  EXPECT_TRUE(lock.valid());
  EXPECT_GT(lock.remaining(), 25s);
  // Redisson's layout: one field "<client id>:<owner id>" holding the count, a 30 s lease.
  Reply fields = client.command("HGETALL", name());
  ASSERT_EQ(fields.map_size(), 1u);
  EXPECT_EQ(fields.key(0).str(), lock.owner());
  EXPECT_EQ(fields.value(0).str(), "2");
  EXPECT_GT(lock.remaining_lease(), 25s);
  lock.unlock();
  EXPECT_EQ(lock.hold_count(), 1);
  EXPECT_TRUE(lock.is_locked());
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());
  EXPECT_FALSE(lock.valid());
  EXPECT_EQ(lock.remaining_lease(), -2ms);
  EXPECT_THROW(lock.unlock(), NotOwnerError);
}

TEST_P(LockTest, HandlesExcludeEachOtherEvenInOneThread) {
  Client client(options());
  Lock a = client.get_lock(name());
  Lock b = client.get_lock(name());
  EXPECT_NE(a.owner(), b.owner());
  ASSERT_TRUE(a.try_lock());
  EXPECT_FALSE(b.try_lock());
  EXPECT_FALSE(b.try_lock_for(50ms));
  EXPECT_FALSE(b.is_held());
  EXPECT_THROW(b.unlock(), NotOwnerError);
  EXPECT_TRUE(a.is_held());
  // Ownership is the handle's: another thread may unlock it.
  std::thread([&] { a.unlock(); }).join();
  EXPECT_TRUE(b.try_lock_until(Clock::now() + 1s));
  b.unlock();
}

TEST_P(LockTest, WaiterIsWokenByUnlock) {
  Client client(options());
  Lock holder = client.get_lock(name());
  Lock waiter = client.get_lock(name());
  holder.lock();  // a 30 s lease: only the release message can wake the waiter soon
  std::atomic<bool> acquired{false};
  Clock::time_point got;
  std::thread t([&] {
    waiter.lock();
    got = Clock::now();
    acquired = true;
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(acquired.load());
  Clock::time_point released = Clock::now();
  holder.unlock();
  t.join();
  auto handoff = got - released;
  EXPECT_LT(handoff, 2s);
  std::printf("[ hand-off ] %lld us\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::microseconds>(handoff).count()));
  EXPECT_TRUE(waiter.is_held());
  waiter.unlock();
}

TEST_P(LockTest, LeaseExpiryLetsTheNextInAndFiresOnLostFirst) {
  Client client(options());
  Lock first = client.get_lock(name());
  Lock second = client.get_lock(name());
  LostLog lost;
  first.on_lost(lost.callback());
  ASSERT_TRUE(first.try_lock(0ms, 300ms));
  EXPECT_TRUE(first.valid());
  // No release is ever published: the waiter sleeps until the PTTL it was told.
  ASSERT_TRUE(second.try_lock_for(3s));
  Clock::time_point second_got = Clock::now();
  auto reason = lost.wait(1s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kDeadlinePassed);
  // on_lost is due a twentieth of the lease before the local deadline, itself counted from
  // when the acquire was sent, so before the server can let the next holder in; its thread
  // may still be scheduled late on a loaded machine (it was, once, by 0.1 ms in CI), hence
  // the allowance.
  EXPECT_LE(lost.when(), second_got + 250ms);
  EXPECT_FALSE(first.valid());
  // The loss was reported through on_lost, so the matching unlock() does not throw (a
  // std::lock_guard around it must not terminate the program); a further one does.
  EXPECT_NO_THROW(first.unlock());
  EXPECT_THROW(first.unlock(), NotOwnerError);
  EXPECT_TRUE(second.is_held());
  second.unlock();
}

TEST_P(LockTest, LossFoundByUnlockIsReportedNotThrown) {
  Client client(options());
  Lock lock = client.get_lock(name());
  LostLog lost;
  lock.on_lost(lost.callback());
  {
    std::lock_guard<Lock> guard(lock);
    client.command("DEL", name());  // the watchdog (30 s) has not noticed yet; unlock does
  }
  auto reason = lost.wait(2s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kNotOwner);
  EXPECT_THROW(lock.unlock(), NotOwnerError);
}

TEST_P(LockTest, ServerStoppedUnderLockGuardDoesNotTerminate) {
  ServerProcess server(GetParam());
  ClientOptions o;
  o.port = server.port();
  o.connect_timeout = 500ms;
  o.command_timeout = 500ms;
  Client client(o);
  std::vector<std::string> errors;
  {
    Lock lock = client.get_lock(name());
    lock.on_error([&](const std::exception& e) { errors.push_back(e.what()); });
    {
      std::lock_guard<Lock> guard(lock);
      server.stop();
    }
    EXPECT_FALSE(lock.valid());
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THROW(lock.unlock(), NotOwnerError);
    // Acquiring tells the caller at once: the server is gone.
    EXPECT_THROW(lock.lock(5s), Error);
  }
}

TEST_P(LockTest, WatchdogKeepsTheLockAcrossLeases) {
  ClientOptions o = options();
  // Renewed every 300 ms: a renewal may run up to ~0.5 s late (a loaded machine, a sanitizer
  // build) before the lease is lost.
  o.lock_watchdog_timeout = 900ms;
  Client client(o);
  Lock lock = client.get_lock(name());
  Lock other = client.get_lock(name());
  LostLog lost;
  lock.on_lost(lost.callback());
  lock.lock();
  std::this_thread::sleep_for(3s);  // more than three leases
  EXPECT_TRUE(lock.is_held());
  EXPECT_TRUE(lock.valid());
  EXPECT_GT(lock.remaining_lease(), 0ms);
  EXPECT_FALSE(other.try_lock());
  EXPECT_EQ(lost.count(), 0u);
  lock.unlock();
  EXPECT_TRUE(other.try_lock());
  other.unlock();
  EXPECT_EQ(lost.count(), 0u);
}

TEST_P(LockTest, RenewFindingTheLockGoneFiresNotOwner) {
  ClientOptions o = options();
  o.lock_watchdog_timeout = 600ms;
  Client client(o);
  Lock lock = client.get_lock(name());
  LostLog lost;
  lock.on_lost(lost.callback());
  lock.lock();
  client.command("DEL", name());
  auto reason = lost.wait(1500ms);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kNotOwner);
  EXPECT_FALSE(lock.valid());
}

TEST_P(LockTest, RenewalFailingUntilTheDeadlineFiresRenewFailed) {
  ServerProcess server(GetParam());
  ClientOptions o;
  o.port = server.port();
  o.connect_timeout = 200ms;
  o.command_timeout = 200ms;
  o.lock_watchdog_timeout = 600ms;
  Client client(o);
  Lock lock = client.get_lock(name());
  LostLog lost;
  lock.on_lost(lost.callback());
  lock.lock();
  Clock::time_point stopped = Clock::now();
  server.stop();
  auto reason = lost.wait(2s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kRenewFailed);
  // No later than the lease counted from the last renewal sent before the stop, give or take
  // the scheduling of the watchdog's thread on a loaded machine.
  EXPECT_LE(lost.when(), stopped + 600ms + 250ms);
  EXPECT_FALSE(lock.valid());
  EXPECT_NO_THROW(lock.unlock());  // acknowledges the reported loss
}

TEST_P(LockTest, ForceUnlockTellsTheHolder) {
  Client client(options());
  Lock holder = client.get_lock(name());
  Lock admin = client.get_lock(name());
  LostLog lost;
  holder.on_lost(lost.callback());
  holder.lock();
  EXPECT_TRUE(admin.force_unlock());
  EXPECT_FALSE(admin.force_unlock());
  auto reason = lost.wait(1s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kForceUnlocked);
  EXPECT_FALSE(holder.is_locked());
}

TEST_P(LockTest, StandardAdaptorsAndDestructorRelease) {
  Client client(options());
  Lock lock = client.get_lock(name());
  {
    std::lock_guard<Lock> guard(lock);
    EXPECT_TRUE(lock.is_held());
  }
  EXPECT_FALSE(lock.is_locked());
  {
    std::unique_lock<Lock> guard(lock, 100ms);
    EXPECT_TRUE(guard.owns_lock());
  }
  EXPECT_FALSE(lock.is_locked());
  {
    Lock scoped = client.get_lock(name());
    scoped.lock();
    scoped.lock();
    std::string error;
    scoped.on_error([&](const std::exception& e) { error = e.what(); });
  }
  EXPECT_FALSE(lock.is_locked());
  // A moved handle keeps its ownership.
  Lock moved = client.get_lock(name());
  moved.lock();
  Lock target = std::move(moved);
  EXPECT_TRUE(target.is_held());
  target.unlock();
}

TEST_P(LockTest, ContentionLosesNoUpdates) {
  Client client(options());
  const std::string counter = name() + ":counter";
  client.command("DEL", counter);
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Lock lock = client.get_lock(name());
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<Lock> guard(lock);
        Reply value = client.command("GET", counter);
        int64_t n = value.is_null() ? 0 : std::stoll(value.str());
        client.command("SET", counter, n + 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(client.command("GET", counter).str(), std::to_string(kThreads * kRounds));
  EXPECT_FALSE(client.get_lock(name()).is_locked());
}

TEST_P(LockTest, ProcessesIncrementACounterWithoutLostUpdates) {
  Client client(options());
  client.command("DEL", name() + ":counter");
  constexpr int kProcesses = 3;
  std::vector<pid_t> workers;
  for (int i = 0; i < kProcesses; ++i) {
    workers.push_back(spawn_worker("count", options().port, name()));
    ASSERT_GT(workers.back(), 0);
  }
  for (pid_t pid : workers) EXPECT_EQ(wait_exit_code(pid), 0);
  EXPECT_EQ(client.command("GET", name() + ":counter").str(),
            std::to_string(kProcesses * kWorkerRounds));
}

TEST_P(LockTest, KilledHolderProcessLetsAWaiterInWithinLeasePlusOneSecond) {
  Client client(options());
  Lock lock = client.get_lock(name());
  pid_t holder = spawn_worker("hold", options().port, name());
  ASSERT_GT(holder, 0);
  auto give_up = Clock::now() + 5s;
  while (!lock.is_locked() && Clock::now() < give_up) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(lock.is_locked());
  std::this_thread::sleep_for(300ms);  // let its watchdog renew at least once
  ::kill(holder, SIGKILL);
  Clock::time_point killed = Clock::now();
  EXPECT_EQ(wait_exit_code(holder), 128 + SIGKILL);
  ASSERT_TRUE(lock.try_lock_for(3s));
  EXPECT_LT(Clock::now() - killed, 2s);  // the worker's lease (1 s) + 1 s
  lock.unlock();
}

KEYWARDEN_BOTH_SERVERS(LockTest);

}  // namespace
}  // namespace keywarden
