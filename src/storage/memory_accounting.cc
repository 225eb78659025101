// Memory accounting through jemalloc's per-thread counters, or glibc's heap figures.
#include "storage/memory_accounting.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#if defined(KEYWARDEN_JEMALLOC)
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
// libasan's allocator statistics (GCC ships no header for its interface).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
extern "C" size_t __sanitizer_get_heap_size();
#endif

namespace keywarden::memory {
namespace {

constexpr int kSlots = 30;

// Balances published by other threads, and what threads that ended left behind (their
// allocations freed by others, or still live). Signed: a thread that frees what another
// allocated has a negative balance.
std::array<std::atomic<int64_t>, kSlots> published_balances{};
std::array<std::atomic<bool>, kSlots> slot_used{};
std::atomic<int64_t> retired_balance{0};
// One past the highest slot ever taken, so that a server without background threads reads
// no slot at all.
std::atomic<int> slot_limit{0};
thread_local int current_slot = -1;

#if defined(KEYWARDEN_JEMALLOC)
struct ThreadCounters {
  const uint64_t* allocated = nullptr;
  const uint64_t* deallocated = nullptr;
};

// The pointers are per thread and stay valid for the thread's life.
const ThreadCounters& thread_counters() {
  thread_local ThreadCounters counters = [] {
    ThreadCounters found;
    uint64_t* pointer = nullptr;
    size_t size = sizeof(pointer);
    if (mallctl("thread.allocatedp", &pointer, &size, nullptr, 0) == 0) found.allocated = pointer;
    size = sizeof(pointer);
    if (mallctl("thread.deallocatedp", &pointer, &size, nullptr, 0) == 0) {
      found.deallocated = pointer;
    }
    return found;
  }();
  return counters;
}

int64_t thread_balance() {
  const ThreadCounters& counters = thread_counters();
  if (counters.allocated == nullptr || counters.deallocated == nullptr) return 0;
  return static_cast<int64_t>(*counters.allocated - *counters.deallocated);
}

size_t read_size(const char* name) {
  size_t value = 0;
  size_t size = sizeof(value);
  return mallctl(name, &value, &size, nullptr, 0) == 0 ? value : 0;
}
#else
int64_t thread_balance() { return 0; }

std::atomic<size_t> cached_heap_bytes{0};

size_t heap_bytes() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}
#endif

// Bytes of the blocks currently mapped by allocate_block()/resize_block().
std::atomic<size_t> mapped_bytes{0};

// Whole pages, as the kernel maps them.
size_t page_rounded(size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void* map_block(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return nullptr;
  mapped_bytes.fetch_add(page_rounded(bytes), std::memory_order_relaxed);
  return block;
}

void unmap_block(void* block, size_t bytes) {
  munmap(block, bytes);
  mapped_bytes.fetch_sub(page_rounded(bytes), std::memory_order_relaxed);
}

}  // namespace

void* allocate_block(size_t bytes) {
  return bytes >= kDirectMapBytes ? map_block(bytes) : std::calloc(1, bytes);
}

void* resize_block(void* block, size_t old_bytes, size_t new_bytes) {
  if (block == nullptr) return allocate_block(new_bytes);
  const bool was_mapped = old_bytes >= kDirectMapBytes;
  const bool mapped = new_bytes >= kDirectMapBytes;
  if (!was_mapped && !mapped) return std::realloc(block, new_bytes);
  if (was_mapped && mapped) {
    void* moved = mremap(block, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) return nullptr;
    mapped_bytes.fetch_add(page_rounded(new_bytes), std::memory_order_relaxed);
    mapped_bytes.fetch_sub(page_rounded(old_bytes), std::memory_order_relaxed);
    return moved;
  }
  void* fresh = allocate_block(new_bytes);
  if (fresh == nullptr) return nullptr;
  std::memcpy(fresh, block, std::min(old_bytes, new_bytes));
  free_block(block, old_bytes);
  return fresh;
}

void free_block(void* block, size_t bytes) {
  if (block == nullptr) return;
  if (bytes >= kDirectMapBytes) {
    unmap_block(block, bytes);
  } else {
    std::free(block);
  }
}

std::string_view allocator_name() {
#if defined(KEYWARDEN_JEMALLOC)
  static const std::string name = [] {
    const char* version = nullptr;
    size_t size = sizeof(version);
    if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) {
      return std::string("jemalloc");
    }
    // "5.3.0-0-g54eaed1…": Redis shows the release only.
    std::string text(version);
    return "jemalloc-" + text.substr(0, text.find('-'));
  }();
  return name;
#else
  return "libc";
#endif
}

// What the allocator itself has handed out, by the means the build has (see the header).
static size_t allocator_bytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
#if defined(KEYWARDEN_JEMALLOC)
  int64_t total = thread_balance() + retired_balance.load(std::memory_order_relaxed);
  const int limit = slot_limit.load(std::memory_order_acquire);
  for (int i = 0; i < limit; ++i) {
    if (i != current_slot) total += published_balances[i].load(std::memory_order_relaxed);
  }
  return total > 0 ? static_cast<size_t>(total) : 0;
#else
  size_t cached = cached_heap_bytes.load(std::memory_order_relaxed);
  if (cached == 0) {
    cached = heap_bytes();
    cached_heap_bytes.store(cached, std::memory_order_relaxed);
  }
  return cached;
#endif
#endif
}

size_t used_bytes() {
  return allocator_bytes() + mapped_bytes.load(std::memory_order_relaxed);
}

void refresh() {
#if !defined(KEYWARDEN_JEMALLOC)
  cached_heap_bytes.store(heap_bytes(), std::memory_order_relaxed);
#endif
}

AllocatorStats allocator_stats() {
  AllocatorStats stats;
#if defined(KEYWARDEN_JEMALLOC)
  uint64_t epoch = 1;
  size_t size = sizeof(epoch);
  mallctl("epoch", &epoch, &size, &epoch, size);
  stats.allocated = read_size("stats.allocated");
  stats.active = read_size("stats.active");
  stats.resident = read_size("stats.resident");
#elif defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer replaces malloc: glibc's figures would be zero.
  stats.allocated = __sanitizer_get_current_allocated_bytes();
  stats.active = __sanitizer_get_heap_size();
  stats.resident = process_rss();
#else
  const struct mallinfo2 info = mallinfo2();
  stats.allocated = info.uordblks + info.hblkhd;
  stats.active = info.arena + info.hblkhd;
  stats.resident = process_rss();
  cached_heap_bytes.store(stats.allocated, std::memory_order_relaxed);
#endif
  return stats;
}

size_t process_rss() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t total_system_memory() {
  return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t allocation_size(size_t request) {
#if defined(KEYWARDEN_JEMALLOC)
  return request == 0 ? 0 : nallocx(request, 0);
#else
  // glibc: an 8-byte header, 16-byte steps, 32 bytes at the least.
  return std::max<size_t>(32, (request + 8 + 15) & ~size_t{15});
#endif
}

std::string malloc_stats_text() {
#if defined(KEYWARDEN_JEMALLOC)
  std::string text;
  malloc_stats_print(
      [](void* out, const char* chunk) { static_cast<std::string*>(out)->append(chunk); }, &text,
      nullptr);
  return text;
#else
  return "Stats not supported for the current allocator";
#endif
}

bool control_available() {
#if defined(KEYWARDEN_JEMALLOC)
  return true;
#else
  return false;
#endif
}

int control(const char* name, void* old_value, size_t* old_size, void* new_value,
            size_t new_size) {
#if defined(KEYWARDEN_JEMALLOC)
  return mallctl(name, old_value, old_size, new_value, new_size);
#else
  (void)name, (void)old_value, (void)old_size, (void)new_value, (void)new_size;
  return ENOENT;
#endif
}

bool purge() {
#if defined(KEYWARDEN_JEMALLOC)
  // Cached objects first, so that their pages can go too; then every arena's dirty pages.
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  char name[48];
  snprintf(name, sizeof(name), "arena.%u.purge", static_cast<unsigned>(MALLCTL_ARENAS_ALL));
  return mallctl(name, nullptr, nullptr, nullptr, 0) == 0;
#else
  malloc_trim(0);
  return true;
#endif
}

void set_background_purge(bool enabled) {
#if defined(KEYWARDEN_JEMALLOC)
  mallctl("background_thread", nullptr, nullptr, &enabled, sizeof(enabled));
#else
  (void)enabled;
#endif
}

ThreadMemoryAccount::ThreadMemoryAccount() {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (slot_used[i].compare_exchange_strong(expected, true)) {
      slot_ = i;
      current_slot = i;
      publish();
      int limit = slot_limit.load(std::memory_order_relaxed);
      while (limit < i + 1 &&
             !slot_limit.compare_exchange_weak(limit, i + 1, std::memory_order_release)) {
      }
      return;
    }
  }
}

ThreadMemoryAccount::~ThreadMemoryAccount() {
  if (slot_ < 0) return;
  // Moves the final balance from the slot to the retired total in one step per atomic; a
  // reader between the two sees the balance twice or not at all for an instant, harmless.
  const int64_t balance = thread_balance();
  retired_balance.fetch_add(balance, std::memory_order_relaxed);
  published_balances[slot_].store(0, std::memory_order_relaxed);
  current_slot = -1;
  slot_used[slot_].store(false, std::memory_order_release);
}

void ThreadMemoryAccount::publish() {
  if (slot_ >= 0) published_balances[slot_].store(thread_balance(), std::memory_order_relaxed);
}

}  // namespace keywarden::memory
