// Lazy free: a background thread that frees large values and whole flushed databases, so that
// UNLINK, FLUSHALL ASYNC and the lazyfree-* deletions never block the command thread on a
// million deallocations.
//
// What may go to the thread is decided as Redis 7.0 decides it: free_effort() estimates how many
// allocations freeing a value takes, from its encoding and counts alone (never by walking it),
// and only a value above kLazyFreeThreshold is worth the hand-off; below it, freeing in place is
// cheaper than queueing. Strings and the single-allocation encodings (listpack, intset) are
// always freed in place.
//
// Ownership: whatever is handed over has already left the keyspace (no entry, index or client
// can reach it) and belongs to the worker from then on; the command thread never touches it
// again. The queue and the two counters are the only state the threads share. The worker starts
// with the first hand-off, so a LazyFree that never gets one costs no thread; its destructor
// (and stop()) frees everything still queued, then joins.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "storage/database.h"
#include "storage/expiry_index.h"
#include "types/value.h"

namespace keywarden {

// Redis's LAZYFREE_THRESHOLD: values whose freeing takes more allocations than this go to the
// thread.
inline constexpr size_t kLazyFreeThreshold = 64;

// Redis's lazyfreeGetFreeEffort: the number of elements of a hash, set or sorted set held in a
// hash table or skiplist (one or more allocations each), the number of quicklist nodes of a
// list, and 1 for everything that is a single allocation (strings, listpacks, intsets).
size_t free_effort(const Value& value);

// Switches read by deletions the storage layer makes on its own (expiry, eviction), plus
// replica-lazy-flush, accepted and kept until replication exists.
struct LazyFreeSettings {
  bool lazy_eviction = false;       // lazyfree-lazy-eviction
  bool lazy_expire = false;         // lazyfree-lazy-expire
  bool replica_lazy_flush = false;  // replica-lazy-flush
};

class LazyFree {
 public:
  LazyFree();
  ~LazyFree();
  LazyFree(const LazyFree&) = delete;
  LazyFree& operator=(const LazyFree&) = delete;

  // Frees `value`: on the thread when `lazy` and its free effort exceeds the threshold, here
  // otherwise. Returns true when it was handed to the thread.
  bool release(Value&& value, bool lazy);
  // Frees a whole database's former contents on the thread (FLUSHDB/FLUSHALL ASYNC): every
  // entry of `table` and the index that pointed at them. Counts one pending object per key, as
  // Redis does. An empty table is freed here.
  void release_entries(EntryTable&& table, ExpiryIndex&& expiry);

  // INFO memory: objects queued and not yet freed; objects the thread has freed (reset by
  // CONFIG RESETSTAT).
  size_t pending_objects() const { return pending_.load(std::memory_order_relaxed); }
  size_t freed_objects() const { return freed_.load(std::memory_order_relaxed); }
  void reset_stats() { freed_.store(0, std::memory_order_relaxed); }

  // Blocks until everything handed over so far has been freed (tests, DEBUG, shutdown).
  void drain();
  // Drains, then ends the thread. Later hand-offs start a new one.
  void stop();

  LazyFreeSettings& settings() { return settings_; }
  const LazyFreeSettings& settings() const { return settings_; }

 private:
  struct Job;
  void enqueue(std::unique_ptr<Job> job);
  void run();

  LazyFreeSettings settings_;
  std::atomic<size_t> pending_{0};
  std::atomic<size_t> freed_{0};

  std::mutex mutex_;
  std::condition_variable work_ready_;  // the worker waits for jobs or stopping_
  std::condition_variable idle_;        // drain() waits for an empty queue and an idle worker
  std::deque<std::unique_ptr<Job>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace keywarden
