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

// Index arrays: zeroed, contents kept across resizes in both directions over the direct-map
// threshold, and mapped bytes counted in used_bytes() while they are held.
TEST(MemoryAccountingTest, BlocksAreZeroedKeepTheirContentsAndCount) {
  constexpr size_t kSmall = 4096;
  constexpr size_t kBig = 4 * kDirectMapBytes;
  auto* small = static_cast<uint64_t*>(allocate_block(kSmall));
  ASSERT_NE(small, nullptr);
  for (size_t i = 0; i < kSmall / 8; ++i) ASSERT_EQ(small[i], 0u) << i;
  for (size_t i = 0; i < kSmall / 8; ++i) small[i] = i + 1;

  refresh();
  const size_t before = used_bytes();
  auto* big = static_cast<uint64_t*>(resize_block(small, kSmall, kBig));  // to a mapping
  ASSERT_NE(big, nullptr);
  for (size_t i = 0; i < kSmall / 8; ++i) ASSERT_EQ(big[i], i + 1) << i;
  big[kBig / 8 - 1] = 7;
  refresh();
  EXPECT_GE(used_bytes(), before + kBig - kSmall);

  auto* bigger = static_cast<uint64_t*>(resize_block(big, kBig, 2 * kBig));  // remapped
  ASSERT_NE(bigger, nullptr);
  EXPECT_EQ(bigger[kSmall / 8 - 1], kSmall / 8);
  EXPECT_EQ(bigger[kBig / 8 - 1], 7u);
  auto* back = static_cast<uint64_t*>(resize_block(bigger, 2 * kBig, kSmall));  // and back
  ASSERT_NE(back, nullptr);
  for (size_t i = 0; i < kSmall / 8; ++i) ASSERT_EQ(back[i], i + 1) << i;
  free_block(back, kSmall);
  refresh();
  EXPECT_LT(used_bytes(), before + kBig / 2);

  auto* fresh = static_cast<uint64_t*>(allocate_block(kBig));
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh[kBig / 8 - 1], 0u);
  free_block(fresh, kBig);
  free_block(nullptr, kBig);
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
