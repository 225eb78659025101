// keywarden::Semaphore and keywarden::PermitExpirableSemaphore against a real keywarden-server
// and a stock redis-server: permit counting, waiters woken by releases, contention between
// threads and processes that never lets more holders in than there are permits, and permits
// with leases that come back (and wake a waiter) when a holder lets its lease run out or dies.
#include "keywarden/semaphore.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "keywarden/keywarden.h"
#include "lock_test_support.h"

namespace keywarden {
namespace {

using testing::wait_exit_code;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kPermits = 2;
constexpr int kWorkerRounds = 15;

pid_t spawn_worker(const std::string& mode, int port, const std::string& name) {
  return testing::spawn_test_process(
      "SemaphoreWorker.Run",
      {"KW_SEM_WORKER=" + mode, "KW_SEM_PORT=" + std::to_string(port), "KW_SEM_NAME=" + name});
}

// One round of the contention tests: hold permits while counting the holders in the server,
// and count a violation whenever the holders outnumber the permits.
void hold_and_count(Client& client, const std::string& name) {
  int64_t holders = client.command("INCR", name + ":holders").integer();
  if (holders > kPermits) client.command("INCR", name + ":violations");
  std::this_thread::sleep_for(2ms);
  client.command("DECR", name + ":holders");
}

// A no-op unless started by spawn_worker: "count" runs kWorkerRounds contention rounds on the
// Semaphore `name`; "hold" takes a permit of the PermitExpirableSemaphore `name` with a 1 s
// lease, writes its id to `name:held` and sleeps until killed.
TEST(SemaphoreWorker, Run) {
  const char* mode = std::getenv("KW_SEM_WORKER");
  if (mode == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(std::getenv("KW_SEM_PORT"));
  const std::string name = std::getenv("KW_SEM_NAME");
  Client client(o);
  if (std::string(mode) == "count") {
    Semaphore semaphore = client.get_semaphore(name);
    for (int i = 0; i < kWorkerRounds; ++i) {
      semaphore.acquire();
      hold_and_count(client, name);
      semaphore.release();
    }
  } else {
    PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
    std::string id = semaphore.acquire(1000ms);
    client.command("SET", name + ":held", id);
    std::this_thread::sleep_for(30s);  // killed long before, unless the test broke
  }
}

using SemaphoreTest = testing::BothServersTest;

// EVALSHA calls since the last CONFIG RESETSTAT, per the server's INFO commandstats.
int64_t script_calls(Client& client) {
  std::string info = client.command("INFO", "commandstats").str();
  size_t at = info.find("cmdstat_evalsha:calls=");
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + std::string("cmdstat_evalsha:calls=").size()));
}

TEST_P(SemaphoreTest, SetAddDrainAndCount) {
  Client client(options());
  Semaphore semaphore = client.get_semaphore(name("sem"));
  client.command("DEL", semaphore.name());
  EXPECT_EQ(semaphore.channel(), "redisson_sc:{" + semaphore.name() + "}");
  EXPECT_EQ(semaphore.available_permits(), 0);
  EXPECT_EQ(semaphore.drain_permits(), 0);
  EXPECT_TRUE(semaphore.try_set_permits(3));
  EXPECT_FALSE(semaphore.try_set_permits(7));
  EXPECT_EQ(client.command("GET", semaphore.name()).str(), "3");  // Redisson's layout
  semaphore.add_permits(2);
  EXPECT_EQ(semaphore.available_permits(), 5);
  EXPECT_TRUE(semaphore.try_acquire(4));
  EXPECT_FALSE(semaphore.try_acquire(2));
  EXPECT_EQ(semaphore.available_permits(), 1);
  semaphore.release(4);
  EXPECT_EQ(semaphore.drain_permits(), 5);
  EXPECT_EQ(semaphore.available_permits(), 0);
  EXPECT_FALSE(semaphore.try_acquire());
  semaphore.add_permits(-1);
  EXPECT_EQ(semaphore.available_permits(), -1);
  EXPECT_EQ(client.get_semaphore("a{b}c").channel(), "redisson_sc:a{b}c");
}

TEST_P(SemaphoreTest, NegativeCountsThrowAndZeroIsFree) {
  Client client(options());
  Semaphore semaphore = client.get_semaphore(name("sem"));
  client.command("DEL", semaphore.name());
  EXPECT_THROW(semaphore.try_acquire(-1), std::invalid_argument);
  EXPECT_THROW(semaphore.acquire(-1), std::invalid_argument);
  EXPECT_THROW(semaphore.try_acquire(-1, 10ms), std::invalid_argument);
  EXPECT_THROW(semaphore.release(-1), std::invalid_argument);
  EXPECT_THROW(semaphore.try_set_permits(-1), std::invalid_argument);
  EXPECT_TRUE(semaphore.try_acquire(0));
  semaphore.acquire(0);
  semaphore.release(0);
  EXPECT_EQ(client.command("EXISTS", semaphore.name()).integer(), 0);
}

TEST_P(SemaphoreTest, WaiterForSeveralPermitsSleepsUntilEnoughAreReleased) {
  Client client(options());
  Semaphore semaphore = client.get_semaphore(name("sem"));
  client.command("DEL", semaphore.name());
  ASSERT_TRUE(semaphore.try_set_permits(0));
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    Semaphore own = client.get_semaphore(semaphore.name());
    own.acquire(2);
    acquired = true;
  });
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(acquired);
  // Asleep, not polling: no script runs while nothing happens, one try per release message.
  client.command("CONFIG", "RESETSTAT");
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(script_calls(client), 0);
  semaphore.release(1);
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(acquired);              // one permit is not enough: it went back to sleep
  EXPECT_LE(script_calls(client), 2);  // the release and the waiter's one try
  EXPECT_EQ(semaphore.available_permits(), 1);
  Clock::time_point released = Clock::now();
  semaphore.release(1);
  waiter.join();
  EXPECT_TRUE(acquired);
  EXPECT_LT(Clock::now() - released, 2s);
  EXPECT_EQ(semaphore.available_permits(), 0);
}

TEST_P(SemaphoreTest, AddPermitsWakesAWaiterAndTryAcquireTimesOut) {
  Client client(options());
  Semaphore semaphore = client.get_semaphore(name("sem"));
  client.command("DEL", semaphore.name());
  Clock::time_point start = Clock::now();
  EXPECT_FALSE(semaphore.try_acquire(1, 200ms));
  EXPECT_GE(Clock::now() - start, 200ms);
  std::thread adder([&] {
    std::this_thread::sleep_for(100ms);
    client.get_semaphore(semaphore.name()).add_permits(1);
  });
  EXPECT_TRUE(semaphore.try_acquire(5s));
  adder.join();
  EXPECT_EQ(semaphore.available_permits(), 0);
}

TEST_P(SemaphoreTest, ThreadsAndProcessesNeverOutnumberThePermits) {
  Client client(options());
  const std::string sem = name("sem");
  client.command("DEL", sem, sem + ":holders", sem + ":violations");
  ASSERT_TRUE(client.get_semaphore(sem).try_set_permits(kPermits));
  std::vector<pid_t> workers;
  for (int i = 0; i < 2; ++i) {
    workers.push_back(spawn_worker("count", options().port, sem));
    ASSERT_GT(workers.back(), 0);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      Semaphore semaphore = client.get_semaphore(sem);
      for (int i = 0; i < kWorkerRounds; ++i) {
        semaphore.acquire();
        hold_and_count(client, sem);
        semaphore.release();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (pid_t pid : workers) EXPECT_EQ(wait_exit_code(pid), 0);
  EXPECT_TRUE(client.command("GET", sem + ":violations").is_null());
  EXPECT_EQ(client.command("GET", sem + ":holders").str(), "0");
  EXPECT_EQ(client.get_semaphore(sem).available_permits(), kPermits);
}

KEYWARDEN_BOTH_SERVERS(SemaphoreTest);

using PermitExpirableSemaphoreTest = testing::BothServersTest;

// The sorted-set member of a permit id: its bytes.
std::string id_bytes(const std::string& id) {
  std::string out;
  for (size_t i = 0; i + 1 < id.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(id.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST_P(PermitExpirableSemaphoreTest, IdsAreUniqueAndReleasedOnce) {
  Client client(options());
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name("pes"));
  client.command("DEL", semaphore.name(), semaphore.timeout_key());
  EXPECT_EQ(semaphore.timeout_key(), "{" + semaphore.name() + "}:timeout");
  EXPECT_EQ(semaphore.channel(), "redisson_sc:{" + semaphore.name() + "}");
  EXPECT_FALSE(semaphore.try_acquire());
  EXPECT_TRUE(semaphore.try_set_permits(3));
  EXPECT_FALSE(semaphore.try_set_permits(5));
  std::string leased = semaphore.acquire(60s);
  std::set<std::string> ids{semaphore.acquire(), leased, semaphore.try_acquire().value()};
  EXPECT_EQ(ids.size(), 3u);
  for (const auto& id : ids) EXPECT_EQ(id.size(), 32u) << id;
  EXPECT_FALSE(semaphore.try_acquire());
  EXPECT_FALSE(semaphore.try_acquire(50ms));
  EXPECT_EQ(semaphore.available_permits(), 0);
  // Redisson's layout: the id's bytes scored by the lease's end in Unix ms (server time).
  EXPECT_EQ(client.command("ZCARD", semaphore.timeout_key()).integer(), 3);
  Reply time = client.command("TIME");
  int64_t now_ms = std::stoll(time.elements()[0].str()) * 1000;
  int64_t ends =
      std::stoll(client.command("ZSCORE", semaphore.timeout_key(), id_bytes(leased)).str());
  EXPECT_GT(ends, now_ms + 55000);
  EXPECT_LE(ends, now_ms + 61000);
  for (const auto& id : ids) semaphore.release(id);
  EXPECT_EQ(semaphore.available_permits(), 3);
  EXPECT_THROW(semaphore.release(*ids.begin()), UnknownPermitError);
  EXPECT_FALSE(semaphore.try_release(*ids.begin()));
  EXPECT_FALSE(semaphore.try_release("not an id"));
  EXPECT_THROW(semaphore.release("0123456789abcdef0123456789abcdef"), UnknownPermitError);
  EXPECT_THROW(semaphore.acquire(0ms), std::invalid_argument);
  EXPECT_THROW(semaphore.try_set_permits(-1), std::invalid_argument);
  EXPECT_EQ(semaphore.available_permits(), 3);
}

TEST_P(PermitExpirableSemaphoreTest, LeaselessPermitIsScoredNeverAndWaiterIsWokenByRelease) {
  Client client(options());
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name("pes"));
  client.command("DEL", semaphore.name(), semaphore.timeout_key());
  ASSERT_TRUE(semaphore.try_set_permits(1));
  std::string held = semaphore.acquire();
  EXPECT_EQ(client.command("ZSCORE", semaphore.timeout_key(), id_bytes(held)).str(),
            "922337203685477");
  std::optional<std::string> got;
  std::thread waiter(
      [&] { got = client.get_permit_expirable_semaphore(semaphore.name()).try_acquire(5s); });
  std::this_thread::sleep_for(100ms);
  Clock::time_point released = Clock::now();
  semaphore.release(held);
  waiter.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_NE(*got, held);
  EXPECT_LT(Clock::now() - released, 2s);
  semaphore.release(*got);
}

TEST_P(PermitExpirableSemaphoreTest, LeaseEndReturnsThePermitAndWakesAWaiter) {
  Client client(options());
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name("pes"));
  client.command("DEL", semaphore.name(), semaphore.timeout_key());
  ASSERT_TRUE(semaphore.try_set_permits(1));
  Clock::time_point start = Clock::now();
  std::string expiring = semaphore.acquire(300ms);
  // Nobody releases: the waiter sleeps until the lease end the server reported.
  std::optional<std::string> got = semaphore.try_acquire(5s, 10s);
  ASSERT_TRUE(got.has_value());
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_THROW(semaphore.release(expiring), UnknownPermitError);
  EXPECT_FALSE(semaphore.update_lease_time(expiring, 10s));
  EXPECT_EQ(semaphore.available_permits(), 0);
  semaphore.release(*got);
  EXPECT_EQ(semaphore.available_permits(), 1);
}

TEST_P(PermitExpirableSemaphoreTest, UpdateLeaseTimeExtendsAndShortens) {
  Client client(options());
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name("pes"));
  client.command("DEL", semaphore.name(), semaphore.timeout_key());
  ASSERT_TRUE(semaphore.try_set_permits(1));
  std::string id = semaphore.acquire(200ms);
  EXPECT_TRUE(semaphore.update_lease_time(id, 10s));
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(semaphore.available_permits(), 0);  // the old lease would have ended
  EXPECT_FALSE(semaphore.try_acquire());
  EXPECT_TRUE(semaphore.update_lease_time(id, 100ms));
  EXPECT_TRUE(semaphore.try_acquire(5s).has_value());
  EXPECT_FALSE(semaphore.update_lease_time("0123456789abcdef0123456789abcdef", 1s));
  EXPECT_THROW(semaphore.update_lease_time(id, 0ms), std::invalid_argument);
}

TEST_P(PermitExpirableSemaphoreTest, KilledHolderProcessPermitComesBackWithinLeasePlusOneSecond) {
  Client client(options());
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name("pes"));
  client.command("DEL", semaphore.name(), semaphore.timeout_key(), semaphore.name() + ":held");
  ASSERT_TRUE(semaphore.try_set_permits(1));
  pid_t holder = spawn_worker("hold", options().port, semaphore.name());
  ASSERT_GT(holder, 0);
  auto give_up = Clock::now() + 5s;
  while (client.command("EXISTS", semaphore.name() + ":held").integer() == 0 &&
         Clock::now() < give_up) {
    std::this_thread::sleep_for(10ms);
  }
  Clock::time_point held = Clock::now();
  ASSERT_EQ(semaphore.available_permits(), 0);
  ::kill(holder, SIGKILL);
  EXPECT_EQ(wait_exit_code(holder), 128 + SIGKILL);
  std::optional<std::string> got = semaphore.try_acquire(3s);
  ASSERT_TRUE(got.has_value());
  EXPECT_LT(Clock::now() - held, 2s);  // the worker's lease (1 s) + 1 s
  std::string dead = client.command("GET", semaphore.name() + ":held").str();
  EXPECT_FALSE(semaphore.try_release(dead));
  semaphore.release(*got);
}

KEYWARDEN_BOTH_SERVERS(PermitExpirableSemaphoreTest);

}  // namespace
}  // namespace keywarden
