#include "allocation_counter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {

bool g_counting = false;
keywarden::testing::AllocationStats g_stats;

void* counted_allocate(size_t size) {
  if (g_counting) {
    ++g_stats.count;
    if (size > g_stats.largest) g_stats.largest = size;
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t size) { return counted_allocate(size); }
void* operator new[](size_t size) { return counted_allocate(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace keywarden::testing {

AllocationScope::AllocationScope() {
  g_stats = {};
  g_counting = true;
}

AllocationScope::~AllocationScope() { stop(); }

AllocationStats AllocationScope::stop() {
  if (active_) {
    g_counting = false;
    active_ = false;
  }
  return g_stats;
}

namespace {

TEST(AllocationCounterTest, SeesAllocationsAndTheirSize) {
  AllocationScope scope;
  auto* vector = new std::vector<char>(1000);
  const AllocationStats stats = scope.stop();
  delete vector;
  EXPECT_EQ(stats.count, 2u);  // the vector object and its storage
  EXPECT_EQ(stats.largest, 1000u);
}

TEST(AllocationCounterTest, CountsNothingOutsideAScope) {
  { AllocationScope scope; }
  std::string long_text(500, 'x');
  AllocationScope scope;
  EXPECT_EQ(scope.stop().count, 0u);
}

}  // namespace
}  // namespace keywarden::testing
