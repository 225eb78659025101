// keywarden::RedLock over three servers of one kind (three keywarden-servers, or three
// redis-servers): exclusion between two RedLocks, one server down still acquires, two down
// fail with an error naming both, validity shrinking with time, unlock releasing everywhere,
// and on_lost once fewer than a quorum still hold a watchdog-kept lock.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "keywarden/multi_lock.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::LostLog;
using testing::ServerProcess;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class RedLockTest : public testing::BothServersTest {
 protected:
  void SetUp() override {
    for (auto& node : nodes_) node = std::make_unique<ServerProcess>(GetParam());
  }

  // A fresh set of three Clients, one per node, with short timeouts (the per-node timeout).
  std::vector<std::unique_ptr<Client>> connect(
      std::chrono::milliseconds watchdog = std::chrono::milliseconds(30000)) const {
    std::vector<std::unique_ptr<Client>> out;
    for (const auto& node : nodes_) {
      ClientOptions o;
      o.port = node->port();
      o.pool_size = 2;
      o.connect_timeout = 500ms;
      o.command_timeout = 500ms;
      o.reconnect_backoff_min = 10ms;
      o.reconnect_backoff_max = 50ms;
      o.lock_watchdog_timeout = watchdog;
      out.push_back(std::make_unique<Client>(o));
    }
    return out;
  }
  static std::vector<Client*> pointers(const std::vector<std::unique_ptr<Client>>& clients) {
    std::vector<Client*> out;
    for (const auto& client : clients) out.push_back(client.get());
    return out;
  }
  // How many nodes have the lock's hash.
  int holders(const std::string& key) const {
    int count = 0;
    for (const auto& node : nodes_) {
      ClientOptions o;
      o.port = node->port();
      o.connect_timeout = 500ms;
      o.command_timeout = 500ms;
      try {
        count += static_cast<int>(Client(o).command("EXISTS", key).integer());
      } catch (const Error&) {
        // A stopped node holds nothing anyone can see.
      }
    }
    return count;
  }
  std::string address(int node) const {
    return "127.0.0.1:" + std::to_string(nodes_[node]->port());
  }

  std::array<std::unique_ptr<ServerProcess>, 3> nodes_;
};

TEST_P(RedLockTest, ExcludesAnotherRedLockAndWakesItOnUnlock) {
  auto first_clients = connect(), second_clients = connect();
  RedLock first(pointers(first_clients), name());
  RedLock second(pointers(second_clients), name());
  EXPECT_EQ(first.quorum(), 2u);
  ASSERT_TRUE(first.try_lock());
  EXPECT_TRUE(first.valid());
  EXPECT_EQ(holders(name()), 3);
  EXPECT_FALSE(second.try_lock());
  EXPECT_FALSE(second.try_lock_for(100ms));

  std::thread releaser([&] {
    std::this_thread::sleep_for(150ms);
    first.unlock();
  });
  EXPECT_TRUE(second.try_lock_for(10s));
  releaser.join();
  EXPECT_TRUE(second.valid());
  EXPECT_FALSE(first.valid());
  second.unlock();
  EXPECT_EQ(holders(name()), 0);
}

TEST_P(RedLockTest, OneServerDownStillAcquires) {
  auto clients = connect(), rival_clients = connect();
  nodes_[1]->stop();
  RedLock lock(pointers(clients), name());
  ASSERT_TRUE(lock.try_lock(0ms, 5000ms));
  EXPECT_TRUE(lock.valid());
  EXPECT_EQ(holders(name()), 2);
  RedLock rival(pointers(rival_clients), name());
  EXPECT_FALSE(rival.try_lock());
  lock.unlock();
  EXPECT_EQ(holders(name()), 0);
  EXPECT_TRUE(rival.try_lock());
  rival.unlock();
}

TEST_P(RedLockTest, TwoServersDownFailsNamingBoth) {
  auto clients = connect();
  nodes_[0]->stop();
  nodes_[2]->stop();
  RedLock lock(pointers(clients), name());
  try {
    lock.try_lock_for(1s);
    FAIL() << "acquired with two of three nodes down";
  } catch (const RedLockError& error) {
    std::string text = error.what();
    RecordProperty("what", text);
    EXPECT_NE(text.find(address(0)), std::string::npos) << text;
    EXPECT_NE(text.find(address(2)), std::string::npos) << text;
    EXPECT_EQ(text.find(address(1)), std::string::npos) << text;
    ASSERT_EQ(error.failures().size(), 2u);
    EXPECT_EQ(error.failures()[0].node, address(0));
    EXPECT_FALSE(error.failures()[0].reason.empty());
  }
  // The node that granted was released.
  EXPECT_EQ(holders(name()), 0);
  EXPECT_FALSE(lock.valid());
  EXPECT_THROW(lock.unlock(), NotOwnerError);
}

TEST_P(RedLockTest, ValidityShrinksWithTime) {
  auto clients = connect();
  RedLock lock(pointers(clients), name());
  ASSERT_TRUE(lock.try_lock(0ms, 3000ms));
  auto first = lock.validity();
  // At most lease - drift (3000/100 + 2 ms).
  EXPECT_LE(first, 3000ms - 32ms);
  EXPECT_GT(first, 0ms);
  std::this_thread::sleep_for(100ms);
  auto second = lock.validity();
  EXPECT_LE(second, first - 100ms);
  lock.unlock();
  EXPECT_EQ(lock.validity(), Clock::duration::zero());
}

TEST_P(RedLockTest, UnlockReleasesEverywhereAndLockGuardWorks) {
  auto clients = connect();
  RedLock lock(pointers(clients), name());
  {
    std::lock_guard<RedLock> guard(lock);
    EXPECT_EQ(holders(name()), 3);
    // Reentrant: counted by the handle, one release per acquisition.
    ASSERT_TRUE(lock.try_lock());
    lock.unlock();
    EXPECT_EQ(holders(name()), 3);
  }
  EXPECT_EQ(holders(name()), 0);
  EXPECT_THROW(lock.unlock(), NotOwnerError);
  EXPECT_EQ(lock.nodes().size(), 3u);
  EXPECT_EQ(lock.nodes()[2], address(2));
}

TEST_P(RedLockTest, WatchdogKeptLockReportsLossOfQuorum) {
  auto clients = connect(600ms);
  RedLock lock(pointers(clients), name());
  LostLog log;
  std::mutex mutex;
  std::string which;
  lock.on_lost([&, callback = log.callback()](const std::string& node, LockLostReason reason) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      which = node;
    }
    callback(reason);
  });
  lock.on_error([](const std::exception&) {});
  lock.lock();
  // Kept across several leases by the watchdogs.
  std::this_thread::sleep_for(900ms);
  EXPECT_TRUE(lock.valid());
  EXPECT_EQ(log.count(), 0u);
  nodes_[0]->stop();
  // One node lost: still a quorum, nothing reported.
  std::this_thread::sleep_for(900ms);
  EXPECT_EQ(log.count(), 0u);
  EXPECT_TRUE(lock.valid());
  nodes_[1]->stop();
  EXPECT_EQ(log.wait(3s), LockLostReason::kRenewFailed);
  EXPECT_EQ(log.count(), 1u);
  EXPECT_FALSE(lock.valid());
  {
    std::lock_guard<std::mutex> guard(mutex);
    EXPECT_TRUE(which == address(0) || which == address(1)) << which;
  }
  EXPECT_NO_THROW(lock.unlock());
}

KEYWARDEN_BOTH_SERVERS(RedLockTest);

}  // namespace
}  // namespace keywarden
