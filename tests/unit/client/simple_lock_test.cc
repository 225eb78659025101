// keywarden::SimpleLock against a keywarden-server (DELEX / SET … IFEQ) and a stock
// redis-server 7.0 (the scripts): one holder at a time, only the holder's token releases or
// extends, a holder whose lease ran out cannot delete the next holder's lock, and on
// keywarden the native commands are what runs (the scripts never do).
#include "keywarden/simple_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using namespace std::chrono_literals;

using SimpleLockTest = testing::BothServersTest;

int64_t calls_of(Client& client, const std::string& command) {
  const std::string info = client.command("INFO", "commandstats").str();
  const std::string marker = "cmdstat_" + command + ":calls=";
  const size_t at = info.find(marker);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + marker.size()));
}

TEST_P(SimpleLockTest, OneHolderAndOnlyItsTokenReleases) {
  Client client(options());
  SimpleLock a = client.get_simple_lock(name());
  SimpleLock b = client.get_simple_lock(name());
  EXPECT_NE(a.token(), b.token());
  ASSERT_TRUE(a.try_lock(10s));
  EXPECT_FALSE(b.try_lock(10s));
  EXPECT_TRUE(a.is_held());
  EXPECT_FALSE(b.is_held());
  EXPECT_EQ(client.command("GET", name()).str(), a.token());
  EXPECT_THROW(b.unlock(), NotOwnerError);
  EXPECT_TRUE(a.is_held());
  a.unlock();
  EXPECT_FALSE(a.is_held());
  EXPECT_THROW(a.unlock(), NotOwnerError);
  EXPECT_TRUE(b.try_lock(10s));
  b.unlock();
}

TEST_P(SimpleLockTest, ExtendRenewsOnlyTheHoldersLease) {
  Client client(options());
  SimpleLock a = client.get_simple_lock(name());
  SimpleLock b = client.get_simple_lock(name());
  ASSERT_TRUE(a.try_lock(1s));
  EXPECT_TRUE(a.extend(60s));
  EXPECT_GT(client.command("PTTL", name()).integer(), 50'000);
  EXPECT_FALSE(b.extend(60s));
  EXPECT_EQ(client.command("GET", name()).str(), a.token());
  a.unlock();
  EXPECT_FALSE(a.extend(60s));
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);  // extend never recreates it
}

TEST_P(SimpleLockTest, AnExpiredHolderCannotReleaseTheNextHolder) {
  Client client(options());
  SimpleLock late = client.get_simple_lock(name());
  SimpleLock next = client.get_simple_lock(name());
  ASSERT_TRUE(late.try_lock(50ms));
  ASSERT_TRUE(next.try_lock_for(5s, 10s));  // waits for the 50 ms lease to run out
  EXPECT_THROW(late.unlock(), NotOwnerError);
  EXPECT_FALSE(late.extend(10s));
  EXPECT_TRUE(next.is_held());
  next.unlock();
}

TEST_P(SimpleLockTest, TryLockForGivesUpAfterItsWait) {
  Client client(options());
  SimpleLock holder = client.get_simple_lock(name());
  SimpleLock waiter = client.get_simple_lock(name());
  ASSERT_TRUE(holder.try_lock(30s));
  EXPECT_FALSE(waiter.try_lock_for(100ms, 30s));
  holder.unlock();
}

TEST_P(SimpleLockTest, MutualExclusionUnderContention) {
  Client client(options());
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> acquired{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      SimpleLock lock = client.get_simple_lock(name());
      for (int i = 0; i < 20; ++i) {
        if (!lock.try_lock_for(20s, 10s)) continue;
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        acquired.fetch_add(1);
        inside.fetch_sub(1);
        lock.unlock();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(acquired.load(), 80);
}

TEST_P(SimpleLockTest, UsesTheNativeCommandsWhereTheServerHasThem) {
  Client client(options());
  client.command("CONFIG", "RESETSTAT");
  SimpleLock lock = client.get_simple_lock(name());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(lock.try_lock(10s));
    ASSERT_TRUE(lock.extend(20s));
    lock.unlock();
  }
  const bool keywarden = GetParam() == testing::ServerKind::kKeywarden;
  EXPECT_EQ(calls_of(client, "delex"), keywarden ? 5 : 0);
  EXPECT_EQ(calls_of(client, "evalsha") + calls_of(client, "eval"), keywarden ? 0 : 10);
}

KEYWARDEN_BOTH_SERVERS(SimpleLockTest);

}  // namespace
}  // namespace keywarden
