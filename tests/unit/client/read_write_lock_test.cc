// keywarden::ReadWriteLock against a real keywarden-server and a stock redis-server: shared
// readers, the exclusive writer, waking waiters, reentrancy, downgrade, the refused upgrade,
// Redisson's key layout, a crashed reader's holds running out, the watchdog, the Lock
// guarantees on both handles, and readers never seeing a half-done write.
#include "keywarden/read_write_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::LostLog;
using testing::wait_exit_code;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string timeout_key(const std::string& name, const std::string& owner, int n) {
  return "{" + name + "}:" + owner + ":rwlock_timeout:" + std::to_string(n);
}

constexpr int kRwWorkerRounds = 20;

// A no-op unless started by a test: with KW_RW_MODE=count it increments a shared counter
// under the write lock and checks it under the read lock; otherwise it takes a read lock (1 s
// watchdog lease), writes its owner to `<name>:owner` and keeps the lock until killed.
TEST(ReadWriteLockWorker, Run) {
  const char* port = std::getenv("KW_RW_PORT");
  if (port == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(port);
  o.lock_watchdog_timeout = 1000ms;
  const std::string lock_name = std::getenv("KW_RW_NAME");
  Client client(o);
  ReadWriteLock rw = client.get_read_write_lock(lock_name);
  const char* mode = std::getenv("KW_RW_MODE");
  if (mode != nullptr && std::string(mode) == "count") {
    // kRwWorkerRounds increments under the write lock, each checked under a read lock.
    Lock write = rw.write_lock();
    Lock read = rw.read_lock();
    for (int i = 0; i < kRwWorkerRounds; ++i) {
      {
        std::lock_guard<Lock> guard(write);
        Reply value = client.command("GET", lock_name + ":counter");
        int64_t n = value.is_null() ? 0 : std::stoll(value.str());
        client.command("SET", lock_name + ":counter", n + 1);
        client.command("SET", lock_name + ":copy", n + 1);
      }
      std::lock_guard<Lock> guard(read);
      if (client.command("GET", lock_name + ":counter").str() !=
          client.command("GET", lock_name + ":copy").str()) {
        std::_Exit(3);  // a reader saw a half-done write
      }
    }
    return;
  }
  Lock read = rw.read_lock();
  read.lock();
  client.command("SET", lock_name + ":owner", rw.owner());
  std::this_thread::sleep_for(30s);  // killed long before, unless the test broke
}

using ReadWriteLockTest = testing::BothServersTest;

TEST_P(ReadWriteLockTest, ManyReadersAtOnce) {
  Client client(options());
  std::vector<ReadWriteLock> parties;
  std::vector<Lock> readers;
  for (int i = 0; i < 3; ++i) {
    parties.push_back(client.get_read_write_lock(name()));
    readers.push_back(parties.back().read_lock());
    ASSERT_TRUE(readers.back().try_lock());
  }
  Client other(options());
  ReadWriteLock writer_party = other.get_read_write_lock(name());
  Lock writer = writer_party.write_lock();
  EXPECT_FALSE(writer.try_lock());
  EXPECT_TRUE(readers[0].is_locked());
  EXPECT_FALSE(writer.is_locked());  // per mode, as Redisson answers
  EXPECT_EQ(client.command("HGET", name(), "mode").str(), "read");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(readers[i].hold_count(), 1);
    EXPECT_EQ(client.command("HGET", name(), parties[i].owner()).str(), "1");
    EXPECT_EQ(client.command("EXISTS", timeout_key(name(), parties[i].owner(), 1)).integer(), 1);
  }
  for (auto& reader : readers) reader.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_TRUE(writer.try_lock());
  writer.unlock();
}

TEST_P(ReadWriteLockTest, WriterExcludesReadersAndWriters) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock writer = party.write_lock();
  ASSERT_TRUE(writer.try_lock());
  EXPECT_EQ(client.command("HGET", name(), "mode").str(), "write");
  EXPECT_EQ(client.command("HGET", name(), party.owner() + ":write").str(), "1");
  EXPECT_TRUE(writer.is_locked());
  EXPECT_TRUE(writer.is_held());

  ReadWriteLock other = client.get_read_write_lock(name());
  Lock other_reader = other.read_lock();
  Lock other_writer = other.write_lock();
  EXPECT_FALSE(other_reader.try_lock());
  EXPECT_FALSE(other_writer.try_lock());
  EXPECT_FALSE(other_reader.try_lock_for(100ms));
  EXPECT_FALSE(other_reader.is_locked());  // write mode, no read holds
  EXPECT_EQ(other_writer.hold_count(), 0);
  writer.unlock();
  EXPECT_TRUE(other_writer.try_lock());
  other_writer.unlock();
}

TEST_P(ReadWriteLockTest, ReadersExcludeAWriterUntilTheLastLeavesWhichWakesIt) {
  Client client(options());
  ReadWriteLock first = client.get_read_write_lock(name());
  ReadWriteLock second = client.get_read_write_lock(name());
  Lock reader1 = first.read_lock();
  Lock reader2 = second.read_lock();
  reader1.lock();
  reader2.lock();

  ReadWriteLock writer_party = client.get_read_write_lock(name());
  Lock writer = writer_party.write_lock();
  std::atomic<bool> acquired{false};
  Clock::time_point got{};
  std::thread waiter([&] {
    // 30 s watchdog leases: only the release message can wake it within the bound below.
    if (writer.try_lock_for(10s)) {
      got = Clock::now();
      acquired = true;
    }
  });
  std::this_thread::sleep_for(200ms);
  reader1.unlock();
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(acquired.load());  // reader2 still holds
  EXPECT_EQ(client.command("HGET", name(), "mode").str(), "read");
  Clock::time_point released = Clock::now();
  reader2.unlock();
  waiter.join();
  ASSERT_TRUE(acquired.load());
  EXPECT_LT(got - released, 3s);
  writer.unlock();
}

TEST_P(ReadWriteLockTest, WriterReleaseWakesEveryWaitingReader) {
  Client client(options());
  ReadWriteLock writer_party = client.get_read_write_lock(name());
  Lock writer = writer_party.write_lock();
  writer.lock();
  std::atomic<int> readers_in{0};
  std::vector<std::thread> waiters;
  std::mutex release_mutex;
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([&] {
      ReadWriteLock party = client.get_read_write_lock(name());
      Lock reader = party.read_lock();
      if (reader.try_lock_for(10s)) {
        ++readers_in;
        // Both inside together: wait until the other reader is in too.
        Clock::time_point give_up = Clock::now() + 5s;
        while (readers_in.load() < 2 && Clock::now() < give_up) std::this_thread::sleep_for(5ms);
        reader.unlock();
      }
    });
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(readers_in.load(), 0);
  Clock::time_point released = Clock::now();
  writer.unlock();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(readers_in.load(), 2);
  EXPECT_LT(Clock::now() - released, 4s);
}

TEST_P(ReadWriteLockTest, BothSidesAreReentrant) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  reader.lock();
  reader.lock();
  EXPECT_EQ(reader.hold_count(), 2);
  EXPECT_EQ(client
                .command("EXISTS", timeout_key(name(), party.owner(), 1),
                         timeout_key(name(), party.owner(), 2))
                .integer(),
            2);
  EXPECT_GT(reader.remaining_lease(), 25s);
  reader.unlock();
  EXPECT_EQ(reader.hold_count(), 1);
  EXPECT_EQ(client.command("EXISTS", timeout_key(name(), party.owner(), 2)).integer(), 0);
  EXPECT_TRUE(reader.valid());
  reader.unlock();
  EXPECT_FALSE(reader.is_locked());
  EXPECT_EQ(client.command("EXISTS", timeout_key(name(), party.owner(), 1)).integer(), 0);
  EXPECT_THROW(reader.unlock(), NotOwnerError);

  Lock writer = party.write_lock();
  writer.lock();
  ASSERT_TRUE(writer.try_lock());
  EXPECT_EQ(writer.hold_count(), 2);
  writer.unlock();
  EXPECT_TRUE(writer.is_held());
  writer.unlock();
  EXPECT_FALSE(writer.is_locked());
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_THROW(writer.unlock(), NotOwnerError);
}

TEST_P(ReadWriteLockTest, DowngradeKeepsTheReadLock) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock writer = party.write_lock();
  Lock reader = party.read_lock();
  writer.lock();
  ASSERT_TRUE(reader.try_lock());
  EXPECT_TRUE(reader.is_locked());  // write mode with read holds
  EXPECT_EQ(reader.hold_count(), 1);

  ReadWriteLock other = client.get_read_write_lock(name());
  Lock other_reader = other.read_lock();
  Lock other_writer = other.write_lock();
  EXPECT_FALSE(other_reader.try_lock());  // the writer still holds

  writer.unlock();
  EXPECT_EQ(client.command("HGET", name(), "mode").str(), "read");
  EXPECT_TRUE(reader.is_held());
  EXPECT_GT(reader.remaining_lease(), 0ms);
  EXPECT_TRUE(other_reader.try_lock());  // now a read lock: shared
  other_reader.unlock();
  EXPECT_FALSE(other_writer.try_lock());  // this owner's read hold remains
  reader.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_TRUE(other_writer.try_lock());
  other_writer.unlock();
}

TEST_P(ReadWriteLockTest, UpgradeFailsFast) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  Lock writer = party.write_lock();
  reader.lock();
  Clock::time_point start = Clock::now();
  EXPECT_THROW(writer.lock(), LockUpgradeError);
  EXPECT_THROW(writer.try_lock_for(10s), LockUpgradeError);
  EXPECT_THROW(writer.try_lock(), LockUpgradeError);
  EXPECT_LT(Clock::now() - start, 3s);  // no waiting: 10 s were allowed
  EXPECT_FALSE(writer.is_held());
  // Another party's write attempt just waits, as for any reader.
  ReadWriteLock other = client.get_read_write_lock(name());
  Lock other_writer = other.write_lock();
  EXPECT_FALSE(other_writer.try_lock());
  reader.unlock();
  writer.lock();  // with the read holds gone, the same owner may write
  EXPECT_EQ(writer.hold_count(), 1);
  writer.unlock();
}

TEST_P(ReadWriteLockTest, KilledReaderHoldRunsOutWhileAnotherReaderKeepsItsHold) {
  Client client(options());
  client.command("DEL", name() + ":owner");
  pid_t worker = testing::spawn_test_process(
      "ReadWriteLockWorker.Run",
      {"KW_RW_PORT=" + std::to_string(options().port), "KW_RW_NAME=" + name()});
  ASSERT_GT(worker, 0);
  Clock::time_point give_up = Clock::now() + 5s;
  Reply owner;
  while ((owner = client.command("GET", name() + ":owner")).is_null() && Clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(owner.is_null());
  const std::string dead_key = timeout_key(name(), owner.str(), 1);
  EXPECT_EQ(client.command("EXISTS", dead_key).integer(), 1);

  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  LostLog lost;
  reader.on_lost(lost.callback());
  reader.lock();
  ::kill(worker, SIGKILL);
  EXPECT_EQ(wait_exit_code(worker), 128 + SIGKILL);

  // The worker's 1 s lease runs out on its own; this reader keeps its hold meanwhile.
  give_up = Clock::now() + 5s;
  while (client.command("EXISTS", dead_key).integer() == 1 && Clock::now() < give_up)
    std::this_thread::sleep_for(50ms);
  EXPECT_EQ(client.command("EXISTS", dead_key).integer(), 0);
  EXPECT_EQ(reader.hold_count(), 1);
  EXPECT_TRUE(reader.valid());
  EXPECT_EQ(lost.count(), 0u);
  ReadWriteLock writer_party = client.get_read_write_lock(name());
  Lock writer = writer_party.write_lock();
  EXPECT_FALSE(writer.try_lock());

  // The last live reader's release removes the dead one too: the writer gets in at once.
  reader.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_TRUE(writer.try_lock());
  writer.unlock();
}

TEST_P(ReadWriteLockTest, WatchdogKeepsAReadLockAcrossLeases) {
  ClientOptions o = options();
  // Renewed every 300 ms: a renewal may run up to ~0.5 s late (a loaded machine, a sanitizer
  // build) before the lease is lost.
  o.lock_watchdog_timeout = 900ms;
  Client client(o);
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  LostLog lost;
  reader.on_lost(lost.callback());
  reader.lock();
  reader.lock();
  std::this_thread::sleep_for(3s);  // more than three leases
  EXPECT_EQ(lost.count(), 0u);
  EXPECT_TRUE(reader.valid());
  EXPECT_GT(client.command("PTTL", timeout_key(name(), party.owner(), 1)).integer(), 0);
  EXPECT_GT(client.command("PTTL", timeout_key(name(), party.owner(), 2)).integer(), 0);
  EXPECT_GT(reader.remaining_lease(), 0ms);
  ReadWriteLock other = client.get_read_write_lock(name());
  Lock writer = other.write_lock();
  EXPECT_FALSE(writer.try_lock());
  reader.unlock();
  reader.unlock();
  EXPECT_TRUE(writer.try_lock());
  writer.unlock();
}

TEST_P(ReadWriteLockTest, RenewalFindingTheReadHoldsGoneFiresNotOwner) {
  ClientOptions o = options();
  o.lock_watchdog_timeout = 300ms;
  Client client(o);
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  LostLog lost;
  reader.on_lost(lost.callback());
  reader.lock();
  // The hold's timeout key goes (as if its lease had run out) while the hash stays.
  client.command("DEL", timeout_key(name(), party.owner(), 1));
  EXPECT_EQ(lost.wait(3s), LockLostReason::kNotOwner);
  EXPECT_FALSE(reader.valid());
  EXPECT_NO_THROW(reader.unlock());
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);  // the stale reader was removed
}

TEST_P(ReadWriteLockTest, HandlesOfOneOwnerAddUpTheirHolds) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock first = party.read_lock();
  first.lock(60s);
  {
    Lock second = party.read_lock();
    second.lock();
    second.lock();
    EXPECT_EQ(first.hold_count(), 3);  // the owner's count on the server
    second.unlock();
    EXPECT_EQ(first.hold_count(), 2);
  }  // the destructor drops only the holds of `second`
  EXPECT_EQ(first.hold_count(), 1);
  // Their 30 s leases never shortened the longer lease of `first`.
  EXPECT_GT(client.command("PTTL", timeout_key(name(), party.owner(), 1)).integer(), 45000);
  EXPECT_GT(first.remaining_lease(), 45s);
  EXPECT_TRUE(first.valid());
  first.unlock();
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  EXPECT_THROW(first.unlock(), NotOwnerError);
}

TEST_P(ReadWriteLockTest, LeaseExpiryOfAReadHoldFiresOnLostAndUnlockDoesNotThrow) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  LostLog lost;
  reader.on_lost(lost.callback());
  reader.lock(300ms);
  ASSERT_EQ(lost.wait(3s), LockLostReason::kDeadlinePassed);
  EXPECT_FALSE(reader.valid());
  EXPECT_NO_THROW(reader.unlock());
  // Gone on the server too, so a writer gets in.
  ReadWriteLock other = client.get_read_write_lock(name());
  Lock writer = other.write_lock();
  EXPECT_TRUE(writer.try_lock_for(3s));
  writer.unlock();
}

TEST_P(ReadWriteLockTest, ForceUnlockTellsTheHoldersOfThatMode) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  Lock reader = party.read_lock();
  LostLog lost;
  reader.on_lost(lost.callback());
  reader.lock();
  ReadWriteLock other = client.get_read_write_lock(name());
  Lock other_writer = other.write_lock();
  EXPECT_FALSE(other_writer.force_unlock());  // not in write mode: nothing deleted
  EXPECT_EQ(lost.count(), 0u);
  EXPECT_TRUE(reader.is_held());
  Lock other_reader = other.read_lock();
  EXPECT_TRUE(other_reader.force_unlock());
  EXPECT_EQ(lost.wait(1s), LockLostReason::kForceUnlocked);
  EXPECT_EQ(client.command("EXISTS", name(), timeout_key(name(), party.owner(), 1)).integer(), 0);
  EXPECT_NO_THROW(reader.unlock());
}

TEST_P(ReadWriteLockTest, StandardAdaptorsAndDestructorRelease) {
  Client client(options());
  ReadWriteLock party = client.get_read_write_lock(name());
  {
    Lock writer = party.write_lock();
    std::lock_guard<Lock> guard(writer);
    EXPECT_EQ(writer.hold_count(), 1);
  }
  {
    Lock reader = party.read_lock();
    std::unique_lock<Lock> guard(reader, 1s);
    EXPECT_TRUE(guard.owns_lock());
  }
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
  {
    // Destroyed while holding (twice, and a downgraded write): every hold goes.
    Lock writer = party.write_lock();
    Lock reader = party.read_lock();
    writer.lock();
    reader.lock();
    reader.lock();
  }
  EXPECT_EQ(client
                .command("EXISTS", name(), timeout_key(name(), party.owner(), 1),
                         timeout_key(name(), party.owner(), 2))
                .integer(),
            0);
  ReadWriteLock other = client.get_read_write_lock(name());
  Lock other_writer = other.write_lock();
  EXPECT_TRUE(other_writer.try_lock());
  other_writer.unlock();
}

TEST_P(ReadWriteLockTest, ReadersNeverSeeAHalfDoneWrite) {
  Client client(options());
  const std::string a = name() + ":a", b = name() + ":b";
  client.command("MSET", a, "0", b, "0");
  constexpr int kWriters = 2, kReaders = 2, kRounds = 15;
  std::atomic<int> torn{0}, reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&] {
      ReadWriteLock party = client.get_read_write_lock(name());
      Lock writer = party.write_lock();
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<Lock> guard(writer);
        int64_t n = std::stoll(client.command("GET", a).str());
        client.command("SET", a, n + 1);
        std::this_thread::sleep_for(1ms);  // a window for a reader to look in
        client.command("SET", b, n + 1);
      }
    });
  }
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {
      ReadWriteLock party = client.get_read_write_lock(name());
      Lock reader = party.read_lock();
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<Lock> guard(reader);
        Reply values = client.command("MGET", a, b);
        if (values.elements()[0].str() != values.elements()[1].str()) ++torn;
        ++reads;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(reads.load(), kReaders * kRounds);
  EXPECT_EQ(client.command("GET", a).str(), std::to_string(kWriters * kRounds));
  EXPECT_EQ(client.command("EXISTS", name()).integer(), 0);
}

TEST_P(ReadWriteLockTest, ProcessesIncrementACounterWithoutLostUpdates) {
  Client client(options());
  client.command("DEL", name() + ":counter", name() + ":copy");
  constexpr int kProcesses = 3;
  std::vector<pid_t> workers;
  for (int i = 0; i < kProcesses; ++i) {
    workers.push_back(testing::spawn_test_process(
        "ReadWriteLockWorker.Run", {"KW_RW_PORT=" + std::to_string(options().port),
                                    "KW_RW_NAME=" + name(), "KW_RW_MODE=count"}));
    ASSERT_GT(workers.back(), 0);
  }
  for (pid_t pid : workers) EXPECT_EQ(testing::wait_exit_code(pid), 0);
  EXPECT_EQ(client.command("GET", name() + ":counter").str(),
            std::to_string(kProcesses * kRwWorkerRounds));
}

KEYWARDEN_BOTH_SERVERS(ReadWriteLockTest);

}  // namespace
}  // namespace keywarden
