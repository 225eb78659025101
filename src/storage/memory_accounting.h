// Memory accounting through the allocator: what INFO used_memory, MEMORY STATS and maxmemory
// read.
//
// The server is built with jemalloc (KEYWARDEN_ALLOCATOR=jemalloc, the default) or with the
// C library's malloc (KEYWARDEN_ALLOCATOR=libc, and always in the sanitizer build).
//
// used_bytes() is the figure maxmemory compares with, so it must be exact and cheap enough to
// read before every command. With jemalloc it costs a few loads and no bookkeeping of our own:
// jemalloc's allocation fast path already keeps, per thread, the running totals of bytes
// allocated and freed (usable sizes, so a 41-byte request counts as its 48-byte size class);
// "thread.allocatedp"/"thread.deallocatedp" hand out pointers to them. The live figure is
// allocated minus freed, summed over threads: the command thread's own counters are read
// directly, and any other thread that allocates or frees data (lazy free, I/O) holds a
// ThreadMemoryAccount and publishes its balance after each unit of work. jemalloc's global
// "stats.allocated" would be the same figure, but it is only refreshed by an epoch bump that
// merges every arena's statistics (~50 µs here), so it serves INFO, not every command.
//
// With libc there are no such counters: mallinfo2() walks the heap, so used_bytes() returns a
// figure cached by refresh() (called from the cron and by INFO/MEMORY). Under AddressSanitizer
// the sanitizer's own allocator count is read instead, live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden::memory {

// "jemalloc-5.3.0" or "libc": INFO mem_allocator.
std::string_view allocator_name();

// Live bytes held from the allocator by the process's accounted threads (see above). Call it
// on the command thread.
size_t used_bytes();

// Refreshes what is cached: libc's mallinfo2() figure. Cheap to call once per cron tick.
void refresh();

// The allocator's own view, fresh (an epoch bump with jemalloc): bytes handed out, bytes in
// the pages holding them, and bytes of those pages resident. Without jemalloc: glibc's heap
// figures, resident = the process RSS.
struct AllocatorStats {
  size_t allocated = 0;
  size_t active = 0;
  size_t resident = 0;
};
AllocatorStats allocator_stats();

// The process's resident set size (/proc/self/statm).
size_t process_rss();

// Total physical memory of the machine.
size_t total_system_memory();

// The bytes the allocator really hands out for a request of `request` bytes (its size class):
// what MEMORY USAGE counts for an allocation.
size_t allocation_size(size_t request);

// jemalloc's malloc_stats_print() report (MEMORY MALLOC-STATS), or the text Redis answers when
// the allocator has none.
std::string malloc_stats_text();

// jemalloc's mallctl() by name (DEBUG MALLCTL / MALLCTL-STR): 0 or an errno value. Whether it
// exists at all is control_available(): a libc build has no such interface.
bool control_available();
int control(const char* name, void* old_value, size_t* old_size, void* new_value,
            size_t new_size);

// Returns dirty pages of every arena to the system (MEMORY PURGE); libc: malloc_trim(0).
// False when the allocator refused.
bool purge();

// jemalloc's background purging thread (Redis's jemalloc-bg-thread, on by default): without
// it, pages freed by a mass expiry or a FLUSHALL go back to the system only as later
// allocations tick the arena's decay clock, so an idle server keeps them. No-op with libc.
void set_background_purge(bool enabled);

// Big zeroed arrays: the keyspace's own indexes (hash table buckets, the expiry heap). Those of
// kDirectMapBytes or more are mapped straight from the kernel and unmapped when freed, so
// that the old array a resize leaves behind goes back to the system at once instead of
// sitting among the allocator's dirty pages for its decay time (about 8 bytes of RSS per key
// right after a table of a million keys doubled), and so that growing the expiry heap is a
// remap rather than a copy. Smaller arrays come from the allocator. Mapped bytes count in
// used_bytes() like any allocation. Any thread may free a block.
inline constexpr size_t kDirectMapBytes = size_t{1} << 20;
// Zeroed; nullptr when out of memory.
void* allocate_block(size_t bytes);
// Keeps the first min(old_bytes, new_bytes) bytes; bytes beyond old_bytes are unspecified.
// nullptr when out of memory, the old block then left as it was.
void* resize_block(void* block, size_t old_bytes, size_t new_bytes);
// `bytes` is what the block was allocated or last resized with. Null blocks are ignored.
void free_block(void* block, size_t bytes);

// Held for its whole life by a thread other than the command thread that allocates or frees
// data, so that its balance counts in used_bytes(). publish() (after each unit of work) makes
// the balance visible; destruction folds the final balance in for good. At most 30 at once.
class ThreadMemoryAccount {
 public:
  ThreadMemoryAccount();
  ~ThreadMemoryAccount();
  ThreadMemoryAccount(const ThreadMemoryAccount&) = delete;
  ThreadMemoryAccount& operator=(const ThreadMemoryAccount&) = delete;

  void publish();

 private:
  int slot_ = -1;
};

}  // namespace keywarden::memory
