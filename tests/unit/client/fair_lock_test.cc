// keywarden::FairLock against a keywarden-server and a stock redis-server: grants in arrival
// order, Redisson's queue layout with deadlines from the server's clock, a waiter that gives
// up or is killed leaves the queue, a live waiter keeps its place however long the holder
// keeps the lock, force_unlock hands off, and contention loses no updates.
#include "keywarden/fair_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::wait_exit_code;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string queue_key(const std::string& name) { return "redisson_lock_queue:{" + name + "}"; }
std::string timeout_key(const std::string& name) { return "redisson_lock_timeout:{" + name + "}"; }

// Waits (checking every few ms: this is the test, not the lock) until `done` or `limit`.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
  Clock::time_point end = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

int64_t queue_length(Client& client, const std::string& name) {
  return client.command("LLEN", queue_key(name)).integer();
}

constexpr int kWorkerRounds = 15;

// A no-op unless started by a test: KW_FAIR_MODE "wait" joins the queue of KW_FAIR_NAME with a
// queue timeout of KW_FAIR_QUEUE_TIMEOUT ms and waits there until killed; "count" increments
// the counter `<name>:counter` kWorkerRounds times under the lock.
TEST(FairLockWorker, Run) {
  const char* port = std::getenv("KW_FAIR_PORT");
  if (port == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(port);
  Client client(o);
  const std::string lock_name = std::getenv("KW_FAIR_NAME");
  FairLock lock = client.get_fair_lock(lock_name);
  if (std::string(std::getenv("KW_FAIR_MODE")) == "count") {
    for (int i = 0; i < kWorkerRounds; ++i) {
      std::lock_guard<FairLock> guard(lock);
      Reply value = client.command("GET", lock_name + ":counter");
      int64_t n = value.is_null() ? 0 : std::stoll(value.str());
      client.command("SET", lock_name + ":counter", n + 1);
    }
    return;
  }
  lock.set_queue_timeout(Lock::Milliseconds(std::atoi(std::getenv("KW_FAIR_QUEUE_TIMEOUT"))));
  lock.lock();
  std::this_thread::sleep_for(30s);  // killed long before, unless the test broke
}

using FairLockTest = testing::BothServersTest;

// Starts a thread per waiter, one at a time, each after the previous one is queued; each
// records its index when granted, then unlocks.
class Waiters {
 public:
  Waiters(Client& client, std::string name) : client_(client), name_(std::move(name)) {}
  ~Waiters() { join(); }

  // Queues one more waiter (its own handle) and returns once the queue has grown.
  bool add(Lock::Milliseconds queue_timeout = FairLock::kDefaultQueueTimeout,
           Lock::Milliseconds hold = 0ms) {
    int index = static_cast<int>(threads_.size());
    int64_t before = queue_length(client_, name_);
    threads_.emplace_back([this, index, queue_timeout, hold] {
      FairLock lock = client_.get_fair_lock(name_);
      lock.set_queue_timeout(queue_timeout);
      // Bounded, so a failed test ends instead of hanging behind a holder that stays.
      if (!lock.try_lock_for(15s)) return;
      {
        std::lock_guard<std::mutex> guard(mutex_);
        order_.push_back(index);
        granted_.push_back(Clock::now());
      }
      std::this_thread::sleep_for(hold);
      lock.unlock();
    });
    return eventually([&] { return queue_length(client_, name_) == before + 1; });
  }
  void join() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  std::vector<int> order() {
    std::lock_guard<std::mutex> guard(mutex_);
    return order_;
  }
  Clock::time_point granted(size_t i) {
    std::lock_guard<std::mutex> guard(mutex_);
    return granted_.at(i);
  }

 private:
  Client& client_;
  std::string name_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::vector<int> order_;
  std::vector<Clock::time_point> granted_;
};

TEST_P(FairLockTest, RedissonLayoutWithDeadlinesFromTheServerClock) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  FairLock waiter = client.get_fair_lock(name());
  holder.lock();
  holder.lock();
  EXPECT_EQ(holder.hold_count(), 2);
  Reply fields = client.command("HGETALL", name());
  ASSERT_EQ(fields.map_size(), 1u);
  EXPECT_EQ(fields.key(0).str(), holder.owner());
  EXPECT_FALSE(waiter.try_lock_for(100ms));
  // Giving up left nothing behind.
  EXPECT_EQ(queue_length(client, name()), 0);
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), 0);
  // Bounded, and a jthread: a failed assertion below ends the test instead of hanging it.
  std::jthread t([&] { EXPECT_TRUE(waiter.try_lock_for(15s)); });
  ASSERT_TRUE(eventually([&] { return queue_length(client, name()) == 1; }));
  EXPECT_EQ(client.command("LINDEX", queue_key(name()), 0).str(), waiter.owner());
  // The waiter's place is kept until the server's now + the queue timeout (5 s).
  Reply time = client.command("TIME");
  int64_t now =
      std::stoll(time.elements()[0].str()) * 1000 + std::stoll(time.elements()[1].str()) / 1000;
  int64_t kept = std::stoll(client.command("ZSCORE", timeout_key(name()), waiter.owner()).str());
  EXPECT_GT(kept, now);
  EXPECT_LE(kept, now + 5000);
  // It listens on its own channel only.
  const std::string channel = "redisson_lock__channel:{" + name() + "}:" + waiter.owner();
  EXPECT_TRUE(eventually([&] {
    Reply channels = client.command("PUBSUB", "CHANNELS", "redisson_lock__channel:*");
    return channels.size() == 1 && channels.elements()[0].str() == channel;
  }));
  holder.unlock();
  EXPECT_TRUE(holder.is_held());
  holder.unlock();
  t.join();
  EXPECT_TRUE(waiter.is_held());
  EXPECT_EQ(queue_length(client, name()), 0);
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), 0);
  waiter.unlock();
  EXPECT_FALSE(waiter.is_locked());
}

TEST_P(FairLockTest, GrantsInArrivalOrder) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  holder.lock();
  constexpr int kWaiters = 5;
  Waiters waiters(client, name());
  for (int i = 0; i < kWaiters; ++i) ASSERT_TRUE(waiters.add());
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), kWaiters);
  holder.unlock();
  waiters.join();
  EXPECT_EQ(waiters.order(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(queue_length(client, name()), 0);
  EXPECT_FALSE(holder.is_locked());
}

TEST_P(FairLockTest, WaiterThatGivesUpLeavesTheQueueAndDoesNotBlockTheNext) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  holder.lock();
  std::atomic<int> quitter_result{-1};
  std::thread quitter([&] {
    FairLock lock = client.get_fair_lock(name());
    lock.set_queue_timeout(60s);  // a place left behind would block the next for a minute
    quitter_result = lock.try_lock_for(600ms) ? 1 : 0;
  });
  ASSERT_TRUE(eventually([&] { return queue_length(client, name()) == 1; }));
  Waiters waiters(client, name());
  ASSERT_TRUE(waiters.add(60s));
  quitter.join();
  EXPECT_EQ(quitter_result.load(), 0);
  EXPECT_EQ(queue_length(client, name()), 1);
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), 1);
  Clock::time_point released = Clock::now();
  holder.unlock();
  waiters.join();
  ASSERT_EQ(waiters.order(), std::vector<int>{0});
  // Woken by the hand-off message: its heartbeat (20 s) is far away.
  EXPECT_LT(waiters.granted(0) - released, 2s);
}

TEST_P(FairLockTest, WaiterFailingWhileQueuedLeavesTheQueue) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  FairLock waiter = client.get_fair_lock(name());
  testing::LostLog lost;
  holder.on_lost(lost.callback());
  holder.lock();
  std::atomic<int> failed{0};
  std::jthread t([&] {
    try {
      waiter.lock();  // ends either way: its heartbeat (5 s / 3) retries and fails too
    } catch (const ServerError&) {
      failed = 1;
    }
  });
  const std::string channel = "redisson_lock__channel:{" + name() + "}:" + waiter.owner();
  ASSERT_TRUE(eventually(
      [&] { return client.command("PUBSUB", "NUMSUB", channel).elements().at(1).integer() == 1; }));
  // The lock key turns into a string: the waiter's next attempt (woken here) gets WRONGTYPE.
  client.command("SET", name(), "not a hash");
  client.command("PUBLISH", channel, 0);
  t.join();
  EXPECT_EQ(failed.load(), 1);
  EXPECT_EQ(queue_length(client, name()), 0);
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), 0);
  client.command("DEL", name());
  EXPECT_NO_THROW(holder.unlock());  // the loss goes to on_lost
  EXPECT_EQ(lost.count(), 1u);
}

TEST_P(FairLockTest, KilledWaiterIsSkippedAfterItsQueueTimeout) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  holder.lock();
  pid_t worker = testing::spawn_test_process(
      "FairLockWorker.Run",
      {"KW_FAIR_PORT=" + std::to_string(options().port), "KW_FAIR_NAME=" + name(),
       "KW_FAIR_MODE=wait", "KW_FAIR_QUEUE_TIMEOUT=600"});
  ASSERT_GT(worker, 0);
  ASSERT_TRUE(eventually([&] { return queue_length(client, name()) == 1; }));
  Waiters waiters(client, name());
  ASSERT_TRUE(waiters.add());
  ::kill(worker, SIGKILL);
  EXPECT_EQ(wait_exit_code(worker), 128 + SIGKILL);
  // The release wakes the dead head (nobody hears it); the next waiter's heartbeat (at most
  // 5 s / 3) finds the head's place running out and takes the lock when it has.
  Clock::time_point released = Clock::now();
  holder.unlock();
  waiters.join();
  ASSERT_EQ(waiters.order(), std::vector<int>{0});
  EXPECT_LT(waiters.granted(0) - released, 5s);
  EXPECT_EQ(queue_length(client, name()), 0);
  EXPECT_EQ(client.command("ZCARD", timeout_key(name())).integer(), 0);
}

TEST_P(FairLockTest, LiveWaitersOutlastTheirQueueTimeoutWhileTheHolderKeepsTheLock) {
  ClientOptions o = options();
  // Renewed every 300 ms, so a renewal may run ~0.5 s late on a loaded machine.
  o.lock_watchdog_timeout = 900ms;
  Client client(o);
  FairLock holder = client.get_fair_lock(name());
  testing::LostLog lost;
  holder.on_lost(lost.callback());
  holder.lock();
  Waiters waiters(client, name());
  ASSERT_TRUE(waiters.add(300ms));
  ASSERT_TRUE(waiters.add(300ms));
  ASSERT_TRUE(waiters.add(300ms));
  std::this_thread::sleep_for(1500ms);  // five queue timeouts, more than one and a half leases
  EXPECT_EQ(queue_length(client, name()), 3);
  EXPECT_TRUE(holder.is_held());
  holder.unlock();
  waiters.join();
  EXPECT_EQ(waiters.order(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(lost.count(), 0u);
}

TEST_P(FairLockTest, ForceUnlockHandsOffToTheNextWaiter) {
  Client client(options());
  FairLock holder = client.get_fair_lock(name());
  FairLock admin = client.get_fair_lock(name());
  testing::LostLog lost;
  holder.on_lost(lost.callback());
  holder.lock();
  Waiters waiters(client, name());
  ASSERT_TRUE(waiters.add(60s, 100ms));
  Clock::time_point forced = Clock::now();
  EXPECT_TRUE(admin.force_unlock());
  auto reason = lost.wait(1s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kForceUnlocked);
  waiters.join();
  ASSERT_EQ(waiters.order(), std::vector<int>{0});
  EXPECT_LT(waiters.granted(0) - forced, 2s);  // its heartbeat is 20 s away
  // The new holder's hold was not written off as force-unlocked: its unlock released it.
  EXPECT_FALSE(admin.force_unlock());
}

TEST_P(FairLockTest, ContentionLosesNoUpdates) {
  Client client(options());
  const std::string counter = name() + ":counter";
  client.command("DEL", counter);
  constexpr int kThreads = 4;
  constexpr int kRounds = 15;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      FairLock lock = client.get_fair_lock(name());
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<FairLock> guard(lock);
        Reply value = client.command("GET", counter);
        int64_t n = value.is_null() ? 0 : std::stoll(value.str());
        client.command("SET", counter, n + 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(client.command("GET", counter).str(), std::to_string(kThreads * kRounds));
  EXPECT_FALSE(client.get_fair_lock(name()).is_locked());
  EXPECT_EQ(queue_length(client, name()), 0);
}

TEST_P(FairLockTest, ProcessesIncrementACounterWithoutLostUpdates) {
  Client client(options());
  client.command("DEL", name() + ":counter");
  constexpr int kProcesses = 3;
  std::vector<pid_t> workers;
  for (int i = 0; i < kProcesses; ++i) {
    workers.push_back(testing::spawn_test_process(
        "FairLockWorker.Run", {"KW_FAIR_PORT=" + std::to_string(options().port),
                               "KW_FAIR_NAME=" + name(), "KW_FAIR_MODE=count"}));
    ASSERT_GT(workers.back(), 0);
  }
  for (pid_t pid : workers) EXPECT_EQ(wait_exit_code(pid), 0);
  EXPECT_EQ(client.command("GET", name() + ":counter").str(),
            std::to_string(kProcesses * kWorkerRounds));
  EXPECT_EQ(queue_length(client, name()), 0);
}

KEYWARDEN_BOTH_SERVERS(FairLockTest);

}  // namespace
}  // namespace keywarden
