// IoThreads alone: every item of every round is handed to exactly one thread, the caller's
// share included, whatever the count of items against the count of threads, and what the
// workers wrote is visible to the caller once run() returns.
#include "server/io_threads.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace keywarden {
namespace {

TEST(IoThreadsTest, EveryItemRunsExactlyOnceForEveryCount) {
  for (int threads : {1, 2, 3, 4}) {
    IoThreads pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64},
                         size_t{1000}}) {
      std::vector<int> hits(count, 0);
      auto job = [&hits](size_t index) { ++hits[index]; };
      pool.for_each(count, job);
      for (size_t index = 0; index < count; ++index) {
        ASSERT_EQ(hits[index], 1) << "threads " << threads << " count " << count;
      }
    }
  }
}

TEST(IoThreadsTest, ManyRoundsBackToBackSeeEachOthersResults) {
  IoThreads pool(4);
  std::vector<uint64_t> values(50, 0);
  for (int round = 0; round < 2000; ++round) {
    // Each round reads what the previous round (on whichever threads) wrote.
    auto job = [&values, round](size_t index) {
      ASSERT_EQ(values[index], static_cast<uint64_t>(round));
      values[index] = round + 1;
    };
    pool.for_each(values.size(), job);
  }
  for (uint64_t value : values) EXPECT_EQ(value, 2000u);
}

TEST(IoThreadsTest, ItemsAreSpreadOverTheThreads) {
  IoThreads pool(3);
  std::vector<std::thread::id> ran_on(30);
  auto job = [&ran_on](size_t index) { ran_on[index] = std::this_thread::get_id(); };
  pool.for_each(ran_on.size(), job);
  // Item i goes to thread i % 3, the caller being thread 0.
  std::set<std::thread::id> distinct(ran_on.begin(), ran_on.end());
  EXPECT_EQ(distinct.size(), 3u);
  for (size_t index = 0; index < ran_on.size(); ++index) {
    EXPECT_EQ(ran_on[index] == std::this_thread::get_id(), index % 3 == 0);
    EXPECT_EQ(ran_on[index], ran_on[index % 3]);
  }
}

TEST(IoThreadsTest, StopsCleanlyWhetherIdleOrJustUsed) {
  { IoThreads idle(4); }
  {
    IoThreads used(4);
    int sum = 0;
    auto job = [&sum](size_t) { __atomic_add_fetch(&sum, 1, __ATOMIC_RELAXED); };
    used.for_each(8, job);
    EXPECT_EQ(sum, 8);
  }
}

}  // namespace
}  // namespace keywarden
