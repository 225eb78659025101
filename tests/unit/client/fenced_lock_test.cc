// keywarden::FencedLock against a keywarden-server and a stock redis-server: tokens strictly
// increase with each new holder (across handles and clients, and across a lease that ran
// out), a re-entry returns the current token, and the Lock behaviours still hold (exclusion,
// a waiter woken by the release, Redisson's key layout).
#include "keywarden/fenced_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/key_slot.h"
#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kWorkerRounds = 15;

// A no-op unless started by a test: takes the fenced lock KW_FENCED_NAME kWorkerRounds times
// and, under it, appends its token to the list `<name>:tokens`.
TEST(FencedLockWorker, Run) {
  const char* port = std::getenv("KW_FENCED_PORT");
  if (port == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(port);
  Client client(o);
  const std::string lock_name = std::getenv("KW_FENCED_NAME");
  FencedLock lock = client.get_fenced_lock(lock_name);
  for (int i = 0; i < kWorkerRounds; ++i) {
    int64_t token = lock.lock_and_get_token();
    client.command("RPUSH", lock_name + ":tokens", token);
    lock.unlock();
  }
}

using FencedLockTest = testing::BothServersTest;

std::string per_name_counter(const std::string& name) {
  return "redisson_lock_token:{" + name + "}";
}

// docs/locks.md's rule, computed independently of the library: the counter of a name's slot is
// keyed by the first base-36 numeral with that slot.
std::string shared_counter(const std::string& name) {
  int slot = key_slot("{" + name + "}");
  for (uint64_t n = 0;; ++n) {
    std::string numeral;
    for (uint64_t rest = n;; rest /= 36) {
      numeral.insert(numeral.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[rest % 36]);
      if (rest < 36) break;
    }
    if (key_slot(numeral) == slot) return "keywarden:fence:{" + numeral + "}";
  }
}

TEST_P(FencedLockTest, TokensIncreaseAcrossHandlesAndClients) {
  Client first(options());
  Client second(options());
  FencedLock a = first.get_fenced_lock(name());
  FencedLock b = first.get_fenced_lock(name());
  FencedLock c = second.get_fenced_lock(name());
  // Other tests' names may share this name's counter: it need not start at 0.
  int64_t last = a.token();
  EXPECT_GE(last, 0);
  for (int round = 0; round < 3; ++round) {
    for (FencedLock* lock : {&a, &b, &c}) {
      int64_t token = lock->lock_and_get_token();
      EXPECT_GT(token, last);
      EXPECT_EQ(lock->token(), token);
      last = token;
      lock->unlock();
    }
  }
  // The slot's counter is a plain integer without a TTL; no counter is left for the name.
  EXPECT_EQ(first.command("GET", shared_counter(name())).str(), std::to_string(last));
  EXPECT_EQ(first.command("TTL", shared_counter(name())).integer(), -1);
  EXPECT_EQ(first.command("EXISTS", per_name_counter(name())).integer(), 0);
  EXPECT_EQ(first.command("EXISTS", name()).integer(), 0);
}

TEST_P(FencedLockTest, PerNameLayoutIsRedissons) {
  ClientOptions o = options();
  o.fencing_counter_per_name = true;
  Client client(o);
  FencedLock a = client.get_fenced_lock(name());
  FencedLock b = client.get_fenced_lock(name());
  EXPECT_EQ(a.token(), 0);
  int64_t first = a.lock_and_get_token();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(a.lock_and_get_token(), first);  // re-entry
  a.unlock();
  a.unlock();
  EXPECT_EQ(b.lock_and_get_token(), 2);
  EXPECT_EQ(b.token(), 2);
  // Redisson's layout: the hash holds only the owner; the counter is a plain integer beside it.
  Reply fields = client.command("HGETALL", name());
  ASSERT_EQ(fields.map_size(), 1u);
  EXPECT_EQ(fields.key(0).str(), b.owner());
  b.unlock();
  EXPECT_EQ(client.command("GET", per_name_counter(name())).str(), "2");
  EXPECT_EQ(client.command("TTL", per_name_counter(name())).integer(), -1);
  EXPECT_EQ(client.command("EXISTS", shared_counter(name())).integer(), 0);
}

TEST_P(FencedLockTest, SharedLayoutContinuesAboveALeftoverPerNameCounter) {
  Client client(options());
  client.command("SET", per_name_counter(name()), 1000000);
  FencedLock lock = client.get_fenced_lock(name());
  EXPECT_GE(lock.token(), 1000000);
  int64_t token = lock.lock_and_get_token();
  EXPECT_GT(token, 1000000);
  lock.unlock();
  EXPECT_GT(lock.lock_and_get_token(), token);
  lock.unlock();
  EXPECT_EQ(client.command("GET", per_name_counter(name())).str(), "1000000");  // left as it was
}

// Many distinct names leave no key per name: only their slots' counters, and names in one slot
// (here: one hash tag) draw increasing tokens from the same counter.
TEST_P(FencedLockTest, DistinctNamesLeaveOnlySlotCounters) {
  Client client(options());
  constexpr int kNames = 200;
  std::vector<std::string> names;
  std::set<std::string> counters;
  for (int i = 0; i < kNames; ++i) {
    names.push_back(name(std::to_string(i)));
    counters.insert(shared_counter(names.back()));
  }
  for (const std::string& each : names) {
    FencedLock lock = client.get_fenced_lock(each);
    ASSERT_GT(lock.lock_and_get_token(), 0);
    lock.unlock();
  }
  for (const std::string& each : names) {
    EXPECT_EQ(client.command("EXISTS", each, per_name_counter(each)).integer(), 0) << each;
  }
  for (const std::string& counter : counters) {
    EXPECT_EQ(client.command("EXISTS", counter).integer(), 1) << counter;
  }
  int64_t last = 0;
  for (int i = 0; i < 10; ++i) {
    FencedLock lock = client.get_fenced_lock(std::to_string(i) + "{" + name("tag") + "}");
    int64_t token = lock.lock_and_get_token();
    EXPECT_GT(token, last);
    last = token;
    lock.unlock();
  }
}

TEST_P(FencedLockTest, ReentryReturnsTheCurrentToken) {
  Client client(options());
  FencedLock lock = client.get_fenced_lock(name());
  int64_t outer = lock.lock_and_get_token();
  EXPECT_EQ(lock.lock_and_get_token(), outer);
  EXPECT_EQ(lock.try_lock_and_get_token(), std::optional<int64_t>(outer));
  EXPECT_EQ(lock.hold_count(), 3);
  EXPECT_EQ(lock.token(), outer);
  lock.unlock();
  lock.unlock();
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());
  EXPECT_GT(lock.lock_and_get_token(), outer);
  lock.unlock();
}

TEST_P(FencedLockTest, NextHolderAfterAnExpiredLeaseGetsALargerToken) {
  Client client(options());
  FencedLock first = client.get_fenced_lock(name());
  FencedLock second = client.get_fenced_lock(name());
  testing::LostLog lost;
  first.on_lost(lost.callback());
  std::optional<int64_t> stale = first.try_lock_and_get_token(0ms, 200ms);
  ASSERT_TRUE(stale.has_value());
  // No release is published: the waiter sleeps until the lease's end.
  std::optional<int64_t> fresh = second.try_lock_and_get_token(3s);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_GT(*fresh, *stale);
  EXPECT_EQ(second.token(), *fresh);
  ASSERT_TRUE(lost.wait(1s).has_value());
  EXPECT_NO_THROW(first.unlock());  // acknowledges the reported loss
  second.unlock();
}

TEST_P(FencedLockTest, HandlesExcludeEachOther) {
  Client client(options());
  FencedLock a = client.get_fenced_lock(name());
  FencedLock b = client.get_fenced_lock(name());
  ASSERT_TRUE(a.try_lock_and_get_token().has_value());
  int64_t counter = a.token();
  EXPECT_FALSE(b.try_lock_and_get_token().has_value());
  EXPECT_FALSE(b.try_lock_and_get_token(50ms).has_value());
  EXPECT_FALSE(b.try_lock());
  // A failed attempt takes no token.
  EXPECT_EQ(a.token(), counter);
  EXPECT_THROW(b.unlock(), NotOwnerError);
  // The lock hash is the reentrant lock's (one field per owner holding the count) plus the
  // hold's token.
  EXPECT_EQ(client.command("HGET", name(), a.owner()).str(), "1");
  EXPECT_EQ(client.command("HGET", name(), "keywarden:fencing-token").str(),
            std::to_string(counter));
  EXPECT_EQ(client.command("HLEN", name()).integer(), 2);
  a.unlock();
  EXPECT_TRUE(b.try_lock_and_get_token(0ms, 5s).has_value());
  b.unlock();
}

TEST_P(FencedLockTest, WaiterIsWokenByUnlockWithTheNextToken) {
  Client client(options());
  FencedLock holder = client.get_fenced_lock(name());
  FencedLock waiter = client.get_fenced_lock(name());
  int64_t held = holder.lock_and_get_token();  // 30 s watchdog lease
  std::atomic<int64_t> got{0};
  Clock::time_point granted;
  std::thread t([&] {
    got = waiter.lock_and_get_token();
    granted = Clock::now();
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(got.load(), 0);
  Clock::time_point released = Clock::now();
  holder.unlock();
  t.join();
  EXPECT_LT(granted - released, 2s);
  EXPECT_EQ(got.load(), held + 1);
  waiter.unlock();
}

TEST_P(FencedLockTest, ForceUnlockAndTokensUnderContention) {
  Client client(options());
  constexpr int kThreads = 3;
  constexpr int kRounds = 10;
  std::mutex mutex;
  std::vector<int64_t> tokens;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      FencedLock lock = client.get_fenced_lock(name());
      for (int i = 0; i < kRounds; ++i) {
        int64_t token = lock.lock_and_get_token();
        {
          std::lock_guard<std::mutex> guard(mutex);
          tokens.push_back(token);
        }
        lock.unlock();
      }
    });
  }
  for (auto& t : threads) t.join();
  // Appended under the lock, so in grant order: each larger than the one before.
  ASSERT_EQ(tokens.size(), size_t{kThreads * kRounds});
  for (size_t i = 1; i < tokens.size(); ++i) EXPECT_GT(tokens[i], tokens[i - 1]);
  FencedLock holder = client.get_fenced_lock(name());
  FencedLock admin = client.get_fenced_lock(name());
  testing::LostLog lost;
  holder.on_lost(lost.callback());
  int64_t token = holder.lock_and_get_token();
  EXPECT_TRUE(admin.force_unlock());
  auto reason = lost.wait(1s);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, LockLostReason::kForceUnlocked);
  EXPECT_GT(admin.lock_and_get_token(), token);
  admin.unlock();
}

TEST_P(FencedLockTest, TokensIncreaseAcrossProcesses) {
  Client client(options());
  client.command("DEL", name() + ":tokens");
  constexpr int kProcesses = 3;
  std::vector<pid_t> workers;
  for (int i = 0; i < kProcesses; ++i) {
    workers.push_back(testing::spawn_test_process(
        "FencedLockWorker.Run",
        {"KW_FENCED_PORT=" + std::to_string(options().port), "KW_FENCED_NAME=" + name()}));
    ASSERT_GT(workers.back(), 0);
  }
  for (pid_t pid : workers) EXPECT_EQ(testing::wait_exit_code(pid), 0);
  // Appended under the lock, so in grant order: each larger than the one before.
  Reply tokens = client.command("LRANGE", name() + ":tokens", 0, -1);
  ASSERT_EQ(tokens.size(), size_t{kProcesses * kWorkerRounds});
  for (size_t i = 1; i < tokens.size(); ++i) {
    EXPECT_GT(std::stoll(tokens.elements()[i].str()), std::stoll(tokens.elements()[i - 1].str()));
  }
}

TEST_P(FencedLockTest, WaiterWokenByForceUnlockKeepsItsNewHold) {
  Client client(options());
  FencedLock holder = client.get_fenced_lock(name());
  FencedLock admin = client.get_fenced_lock(name());
  FencedLock waiter = client.get_fenced_lock(name());
  testing::LostLog holder_lost, waiter_lost;
  holder.on_lost(holder_lost.callback());
  waiter.on_lost(waiter_lost.callback());
  int64_t first = holder.lock_and_get_token();
  std::atomic<int64_t> got{0};
  std::jthread t([&] { got = waiter.lock_and_get_token(); });
  std::this_thread::sleep_for(100ms);  // the waiter is subscribed by now
  EXPECT_TRUE(admin.force_unlock());
  t.join();
  EXPECT_GT(got.load(), first);
  ASSERT_TRUE(holder_lost.wait(1s).has_value());
  // Only the hold that existed before the delete is lost; the one it let in stays.
  EXPECT_EQ(waiter_lost.count(), 0u);
  EXPECT_TRUE(waiter.valid());
  EXPECT_TRUE(waiter.is_held());
  EXPECT_NO_THROW(waiter.unlock());
  EXPECT_FALSE(waiter.is_locked());
}

// The resource-side check docs/locks.md shows: a write carrying a smaller token than the
// largest seen is refused, so a holder that lost its lease cannot overwrite its successor.
TEST_P(FencedLockTest, ResourceCheckRefusesTheStaleHoldersWrite) {
  const Script fenced_write(R"(
local seen = tonumber(redis.call('get', KEYS[2]) or '0')
if tonumber(ARGV[1]) < seen then
  return redis.error_reply('STALE fencing token ' .. ARGV[1] .. ' < ' .. seen)
end
redis.call('set', KEYS[2], ARGV[1])
redis.call('set', KEYS[1], ARGV[2])
return 'OK'
)");
  Client client(options());
  const std::string data = name("data"), fence = name("fence");
  client.command("DEL", data, fence);
  FencedLock first = client.get_fenced_lock(name());
  FencedLock second = client.get_fenced_lock(name());
  first.on_lost([](LockLostReason) {});
  std::optional<int64_t> stale = first.try_lock_and_get_token(0ms, 200ms);
  ASSERT_TRUE(stale.has_value());
  std::optional<int64_t> fresh = second.try_lock_and_get_token(3s);  // after the lease ran out
  ASSERT_TRUE(fresh.has_value());
  client.eval_sha(fenced_write, {data, fence}, {std::to_string(*fresh), "from second"});
  EXPECT_THROW(client.eval_sha(fenced_write, {data, fence}, {std::to_string(*stale), "stale"}),
               ServerError);
  EXPECT_EQ(client.command("GET", data).str(), "from second");
  first.unlock();  // acknowledges the loss
  second.unlock();
}

KEYWARDEN_BOTH_SERVERS(FencedLockTest);

}  // namespace
}  // namespace keywarden
