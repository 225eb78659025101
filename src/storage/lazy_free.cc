#include "storage/lazy_free.h"

#include <utility>

#include "storage/memory_accounting.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/zset_value.h"

namespace keywarden {

size_t free_effort(const Value& value) {
  switch (value.type()) {
    case ValueType::kList:
      // Every list is a quicklist (as in 7.0); a node is one allocation whatever it holds.
      return value.as<ListValue>().node_count();
    case ValueType::kSet:
    case ValueType::kHash:
      return value.encoding() == Encoding::kHashTable ? value.aggregate_size() : 1;
    case ValueType::kZSet:
      return value.encoding() == Encoding::kSkiplist ? value.aggregate_size() : 1;
    case ValueType::kStream:
      return value.aggregate_size() / 100 + 1;
    case ValueType::kString:
      break;
  }
  return 1;
}

// One unit of work: a value, or a flushed database's entries and expiry index.
struct LazyFree::Job {
  Value value;
  std::unique_ptr<EntryTable> entries;
  std::unique_ptr<ExpiryIndex> expiry;
  size_t objects = 1;

  void free_contents() {
    // The index only points at entries; drop it first so nothing refers to freed memory.
    expiry.reset();
    if (entries) entries->clear([](Entry* entry) { Entry::destroy(entry); });
    entries.reset();
    value = Value();
  }
};

LazyFree::LazyFree() = default;
LazyFree::~LazyFree() { stop(); }

bool LazyFree::release(Value&& value, bool lazy) {
  if (!lazy || free_effort(value) <= kLazyFreeThreshold) {
    Value doomed = std::move(value);
    return false;
  }
  auto job = std::make_unique<Job>();
  job->value = std::move(value);
  enqueue(std::move(job));
  return true;
}

void LazyFree::release_entries(EntryTable&& table, ExpiryIndex&& expiry) {
  if (table.size() == 0) {
    table.clear([](Entry* entry) { Entry::destroy(entry); });
    expiry.clear();
    return;
  }
  auto job = std::make_unique<Job>();
  job->objects = table.size();
  job->expiry = std::make_unique<ExpiryIndex>(std::move(expiry));
  job->entries = std::make_unique<EntryTable>(std::move(table));
  enqueue(std::move(job));
}

void LazyFree::enqueue(std::unique_ptr<Job> job) {
  // Counted before the hand-off, so INFO never shows an object freed but not yet pending.
  pending_.fetch_add(job->objects, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  if (!worker_.joinable()) {
    stopping_ = false;
    worker_ = std::thread([this] { run(); });
  }
  queue_.push_back(std::move(job));
  work_ready_.notify_one();
}

void LazyFree::run() {
  // What this thread frees counts in used_memory only through its own account.
  memory::ThreadMemoryAccount account;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and nothing left to free
    std::unique_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    job->free_contents();
    const size_t objects = job->objects;
    job.reset();
    account.publish();
    pending_.fetch_sub(objects, std::memory_order_relaxed);
    freed_.fetch_add(objects, std::memory_order_relaxed);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

void LazyFree::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void LazyFree::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) return;
    stopping_ = true;  // the worker empties the queue before it honours this
    work_ready_.notify_one();
  }
  worker_.join();
  std::lock_guard lock(mutex_);
  stopping_ = false;
  worker_ = std::thread();
}

}  // namespace keywarden
