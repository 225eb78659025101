// keywarden::CountDownLatch against a real keywarden-server and a stock redis-server: setting
// the count only on an absent latch, Redisson's layout, await() returning when threads or
// another process count down to zero, await(timeout) giving up, and delete_latch().
#include "keywarden/count_down_latch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
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

// A no-op unless started by the cross-process test: counts the latch KW_LATCH_NAME down
// KW_LATCH_STEPS times, a little apart.
TEST(LatchWorker, Run) {
  const char* latch_name = std::getenv("KW_LATCH_NAME");
  if (latch_name == nullptr) GTEST_SKIP() << "runs only as a worker process";
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test that started it
  ClientOptions o;
  o.port = std::atoi(std::getenv("KW_LATCH_PORT"));
  Client client(o);
  CountDownLatch latch = client.get_count_down_latch(latch_name);
  for (int i = 0, steps = std::atoi(std::getenv("KW_LATCH_STEPS")); i < steps; ++i) {
    std::this_thread::sleep_for(50ms);
    latch.count_down();
  }
}

using CountDownLatchTest = testing::BothServersTest;

TEST_P(CountDownLatchTest, TrySetCountOnlyWhenAbsentAndCountDownDeletesAtZero) {
  Client client(options());
  CountDownLatch latch = client.get_count_down_latch(name("latch"));
  client.command("DEL", latch.name());
  EXPECT_EQ(latch.channel(), "redisson_countdownlatch__channel__{" + latch.name() + "}");
  EXPECT_EQ(client.get_count_down_latch("a{b}").channel(),
            "redisson_countdownlatch__channel__{a{b}}");
  EXPECT_EQ(latch.get_count(), 0);
  EXPECT_TRUE(latch.await(0ms));  // a latch never set is open
  EXPECT_THROW(latch.try_set_count(-1), std::invalid_argument);
  EXPECT_TRUE(latch.try_set_count(2));
  EXPECT_FALSE(latch.try_set_count(5));
  EXPECT_EQ(client.command("GET", latch.name()).str(), "2");  // Redisson's layout
  latch.count_down();
  EXPECT_EQ(latch.get_count(), 1);
  EXPECT_FALSE(latch.try_set_count(5));
  latch.count_down();
  EXPECT_EQ(latch.get_count(), 0);
  EXPECT_EQ(client.command("EXISTS", latch.name()).integer(), 0);
  latch.count_down();  // below zero leaves nothing behind
  EXPECT_EQ(client.command("EXISTS", latch.name()).integer(), 0);
  EXPECT_TRUE(latch.try_set_count(1));
  EXPECT_TRUE(latch.delete_latch());
  EXPECT_FALSE(latch.delete_latch());
  EXPECT_EQ(latch.get_count(), 0);
}

TEST_P(CountDownLatchTest, AwaitTimesOutWhileTheCountIsAboveZero) {
  Client client(options());
  CountDownLatch latch = client.get_count_down_latch(name("latch"));
  client.command("DEL", latch.name());
  ASSERT_TRUE(latch.try_set_count(1));
  Clock::time_point start = Clock::now();
  EXPECT_FALSE(latch.await(200ms));
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(latch.get_count(), 1);
  latch.delete_latch();
}

TEST_P(CountDownLatchTest, AwaitReturnsWhenThreadsCountDownToZero) {
  Client client(options());
  CountDownLatch latch = client.get_count_down_latch(name("latch"));
  client.command("DEL", latch.name());
  constexpr int kThreads = 3;
  ASSERT_TRUE(latch.try_set_count(kThreads));
  std::atomic<int> opened{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([&] {
      client.get_count_down_latch(latch.name()).await();
      ++opened;
    });
  }
  std::vector<std::thread> counters;
  for (int i = 0; i < kThreads; ++i) {
    counters.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * (i + 1)));
      client.get_count_down_latch(latch.name()).count_down();
    });
  }
  latch.await();
  EXPECT_EQ(latch.get_count(), 0);
  for (auto& t : counters) t.join();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(opened, 2);
}

TEST_P(CountDownLatchTest, AwaitReturnsWhenAnotherProcessCountsDownToZero) {
  Client client(options());
  CountDownLatch latch = client.get_count_down_latch(name("latch"));
  client.command("DEL", latch.name());
  ASSERT_TRUE(latch.try_set_count(3));
  pid_t worker = testing::spawn_test_process("LatchWorker.Run",
                                             {"KW_LATCH_NAME=" + latch.name(), "KW_LATCH_STEPS=3",
                                              "KW_LATCH_PORT=" + std::to_string(options().port)});
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(latch.await(10s));
  EXPECT_EQ(latch.get_count(), 0);
  EXPECT_EQ(wait_exit_code(worker), 0);
}

TEST_P(CountDownLatchTest, DeletingTheLatchOpensWaiters) {
  Client client(options());
  CountDownLatch latch = client.get_count_down_latch(name("latch"));
  client.command("DEL", latch.name());
  ASSERT_TRUE(latch.try_set_count(5));
  std::atomic<bool> opened{false};
  std::thread waiter([&] { opened = client.get_count_down_latch(latch.name()).await(5s); });
  std::this_thread::sleep_for(100ms);
  Clock::time_point deleted = Clock::now();
  EXPECT_TRUE(latch.delete_latch());
  waiter.join();
  EXPECT_TRUE(opened);
  EXPECT_LT(Clock::now() - deleted, 2s);
}

KEYWARDEN_BOTH_SERVERS(CountDownLatchTest);

}  // namespace
}  // namespace keywarden
