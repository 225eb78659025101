// keywarden::MultiLock against a keywarden-server and a stock redis-server: all-or-nothing,
// waiting for a busy member, no deadlock between overlapping MultiLocks taken in opposite
// orders, contention without lost updates, standard lock adaptors and on_lost.
#include "keywarden/multi_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::LostLog;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kMultiWorkerRounds = 20;

// A no-op unless started by a test: takes the MultiLock over KW_ML_NAMES (comma separated, in
// that order) kMultiWorkerRounds times, incrementing KW_ML_COUNTER under it.
TEST(MultiLockWorker, Run) {
  const char* port = std::getenv("KW_ML_PORT");
  if (port == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(port);
  Client client(o);
  std::vector<std::string> names;
  std::string list = std::getenv("KW_ML_NAMES");
  for (size_t start = 0, comma; start <= list.size(); start = comma + 1) {
    comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    names.push_back(list.substr(start, comma - start));
  }
  const std::string counter = std::getenv("KW_ML_COUNTER");
  MultiLock multi = client.get_multi_lock(names);
  for (int i = 0; i < kMultiWorkerRounds; ++i) {
    std::lock_guard<MultiLock> guard(multi);
    Reply value = client.command("GET", counter);
    int64_t n = value.is_null() ? 0 : std::stoll(value.str());
    client.command("SET", counter, n + 1);
  }
}

class MultiLockTest : public testing::BothServersTest {
 protected:
  std::vector<std::string> names(int count) const {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) out.push_back(name("multi") + ":" + std::to_string(i));
    return out;
  }
};

TEST_P(MultiLockTest, OneMemberHeldElsewhereFailsAndLeavesNoneHeld) {
  Client client(options()), other(options());
  auto keys = names(3);
  Lock blocker = other.get_lock(keys[1]);
  ASSERT_TRUE(blocker.try_lock());
  MultiLock multi = client.get_multi_lock(keys);

  EXPECT_FALSE(multi.try_lock());
  EXPECT_FALSE(multi.try_lock_for(150ms));
  EXPECT_FALSE(multi.try_lock(100ms, 5000ms));
  EXPECT_FALSE(multi.valid());
  EXPECT_FALSE(client.get_lock(keys[0]).is_locked());
  EXPECT_FALSE(client.get_lock(keys[2]).is_locked());
  EXPECT_THROW(multi.unlock(), NotOwnerError);
  blocker.unlock();
}

TEST_P(MultiLockTest, WaitsForTheLastMemberThenHoldsAll) {
  Client client(options()), other(options());
  auto keys = names(3);
  Lock blocker = other.get_lock(keys[2]);
  ASSERT_TRUE(blocker.try_lock());
  std::thread releaser([&] {
    std::this_thread::sleep_for(200ms);
    blocker.unlock();
  });
  MultiLock multi = client.get_multi_lock(keys);
  EXPECT_TRUE(multi.try_lock_for(10s));
  releaser.join();
  for (const Lock& member : multi.locks()) EXPECT_TRUE(member.is_held()) << member.name();
  EXPECT_TRUE(multi.valid());
  EXPECT_GT(multi.remaining(), 1s);
  multi.unlock();
  for (const Lock& member : multi.locks()) EXPECT_FALSE(member.is_locked()) << member.name();
}

TEST_P(MultiLockTest, MembersFromTwoClientsAndLeaseLossIsReported) {
  Client first(options()), second(options());
  auto keys = names(2);
  std::vector<Lock> members;
  members.push_back(first.get_lock(keys[0]));
  members.push_back(second.get_lock(keys[1]));
  MultiLock multi(std::move(members));
  LostLog log;
  std::mutex mutex;
  std::vector<std::string> lost;
  multi.on_lost([&, callback = log.callback()](const std::string& which, LockLostReason reason) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      lost.push_back(which);
    }
    callback(reason);
  });
  ASSERT_TRUE(multi.try_lock(1000ms, 300ms));
  EXPECT_TRUE(multi.valid());
  EXPECT_LE(multi.remaining(), 300ms);
  EXPECT_EQ(log.wait(3s), LockLostReason::kDeadlinePassed);
  // Both members' leases end; their losses arrive separately.
  for (int i = 0; i < 300 && log.count() < 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(multi.valid());
  {
    std::lock_guard<std::mutex> guard(mutex);
    ASSERT_EQ(lost.size(), 2u);
    EXPECT_NE(lost[0], lost[1]);
  }
  // The losses were reported; unlock acknowledges them without throwing.
  EXPECT_NO_THROW(multi.unlock());
}

TEST_P(MultiLockTest, OppositeOrdersFromTwoThreadsBothFinish) {
  auto keys = names(3);
  std::vector<std::string> reversed(keys.rbegin(), keys.rend());
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::atomic<int> done{0};
  auto run = [&](std::vector<std::string> order) {
    Client client(options());
    MultiLock multi = client.get_multi_lock(order);
    for (int i = 0; i < 15; ++i) {
      ASSERT_TRUE(multi.try_lock_for(20s));
      if (inside.fetch_add(1) != 0) overlap = true;
      std::this_thread::sleep_for(1ms);
      inside.fetch_sub(1);
      multi.unlock();
      ++done;
    }
  };
  std::thread a(run, keys), b(run, reversed);
  a.join();
  b.join();
  EXPECT_EQ(done.load(), 30);
  EXPECT_FALSE(overlap.load());
}

TEST_P(MultiLockTest, ContentionWithoutLostUpdates) {
  auto keys = names(2);
  const std::string counter = name("counter");
  {
    Client setup(options());
    setup.command("SET", counter, "0");
  }
  constexpr int kThreads = 3, kRounds = 15;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // Each thread names the members in its own order.
    std::vector<std::string> order = keys;
    if (t % 2 == 1) std::swap(order[0], order[1]);
    threads.emplace_back([&, order] {
      Client client(options());
      MultiLock multi = client.get_multi_lock(order);
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<MultiLock> guard(multi);
        int64_t value = std::stoll(client.command("GET", counter).str());
        client.command("SET", counter, std::to_string(value + 1));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  Client check(options());
  EXPECT_EQ(check.command("GET", counter).str(), std::to_string(kThreads * kRounds));
}

TEST_P(MultiLockTest, StandardAdaptorsAndReentrancy) {
  Client client(options());
  auto keys = names(2);
  MultiLock multi = client.get_multi_lock(keys);
  {
    std::lock_guard<MultiLock> guard(multi);
    for (const Lock& member : multi.locks()) EXPECT_EQ(member.hold_count(), 1);
    {
      std::unique_lock<MultiLock> again(multi, 1s);
      ASSERT_TRUE(again.owns_lock());
      for (const Lock& member : multi.locks()) EXPECT_EQ(member.hold_count(), 2);
    }
    for (const Lock& member : multi.locks()) EXPECT_EQ(member.hold_count(), 1);
    MultiLock rival = client.get_multi_lock({keys[1]});
    EXPECT_FALSE(rival.try_lock_until(Clock::now() + 50ms));
  }
  for (const Lock& member : multi.locks()) EXPECT_FALSE(member.is_locked());
  EXPECT_THROW(client.get_multi_lock({keys[0], keys[0]}), std::invalid_argument);
  EXPECT_THROW(MultiLock(std::vector<Lock>{}), std::invalid_argument);
}

TEST_P(MultiLockTest, ProcessesInDifferentOrdersLoseNoUpdates) {
  Client client(options());
  auto keys = names(3);
  const std::string counter = name("counter");
  client.command("DEL", counter);
  const std::vector<std::string> orders = {keys[0] + "," + keys[1] + "," + keys[2],
                                           keys[2] + "," + keys[1] + "," + keys[0],
                                           keys[1] + "," + keys[2] + "," + keys[0]};
  std::vector<pid_t> workers;
  for (const std::string& order : orders) {
    workers.push_back(testing::spawn_test_process(
        "MultiLockWorker.Run", {"KW_ML_PORT=" + std::to_string(options().port),
                                "KW_ML_NAMES=" + order, "KW_ML_COUNTER=" + counter}));
    ASSERT_GT(workers.back(), 0);
  }
  for (pid_t pid : workers) EXPECT_EQ(testing::wait_exit_code(pid), 0);
  EXPECT_EQ(client.command("GET", counter).str(),
            std::to_string(orders.size() * kMultiWorkerRounds));
  for (const std::string& key : keys) EXPECT_FALSE(client.get_lock(key).is_locked());
}

KEYWARDEN_BOTH_SERVERS(MultiLockTest);

}  // namespace
}  // namespace keywarden
