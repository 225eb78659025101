// memory::used_bytes() follows allocations and frees, on the command thread and on threads
// holding a ThreadMemoryAccount; the allocator's reports answer.
#include "storage/memory_accounting.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace keywarden::memory {
namespace {

// Many small blocks, as keys are: 100k × 40 bytes = 4 MB at least.
std::vector<std::unique_ptr<char[]>> allocate_blocks() {
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(100'000);
  for (int i = 0; i < 100'000; ++i) {
    blocks.emplace_back(new char[40]);
    blocks.back()[0] = static_cast<char>(i);
  }
  return blocks;
}

TEST(MemoryAccountingTest, UsedBytesGrowsWithAllocationsAndFallsAfterFrees) {
  refresh();
  const size_t before = used_bytes();
  auto blocks = allocate_blocks();
  refresh();
  const size_t loaded = used_bytes();
  EXPECT_GE(loaded, before + 4'000'000);
  EXPECT_LE(loaded, before + 12'000'000);
  blocks.clear();
  blocks.shrink_to_fit();
  refresh();
  EXPECT_LE(used_bytes(), before + 1'000'000);
}

TEST(MemoryAccountingTest, OtherThreadsCountThroughTheirAccounts) {
  auto blocks = allocate_blocks();
  refresh();
  const size_t loaded = used_bytes();
  // A background thread frees what the command thread allocated (as lazy free does).
  std::thread worker([&] {
    ThreadMemoryAccount account;
    blocks.clear();
    blocks.shrink_to_fit();
    account.publish();
  });
  worker.join();
  refresh();
  EXPECT_LE(used_bytes() + 4'000'000, loaded);
}

TEST(MemoryAccountingTest, AllocatorReportsAnswer) {
  EXPECT_FALSE(allocator_name().empty());
  const AllocatorStats stats = allocator_stats();
  EXPECT_GT(stats.allocated, 0u);
  EXPECT_GE(stats.active, stats.allocated / 2);
  EXPECT_GT(process_rss(), 0u);
  EXPECT_GT(total_system_memory(), process_rss());
  EXPECT_FALSE(malloc_stats_text().empty());
  EXPECT_TRUE(purge());
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(allocator_name(), "libc");
#endif
}

}  // namespace
}  // namespace keywarden::memory
