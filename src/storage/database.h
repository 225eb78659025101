// One numbered database (SELECT n): the hash table of entries, the expiry index of its
// volatile keys, and lazy expiry.
//
// Every access path goes through lookup(), which deletes a key whose deadline has passed
// before anyone can see it (lazy expiry), reporting the deletion to the KeyspaceListener so
// that it is propagated as DEL and announced as an `expired` event. Like Redis, a key is
// expired when now > deadline: a key whose deadline is exactly now is still alive.
//
// While expiry is held (CLIENT PAUSE keeps the dataset still, as Redis 7.0 does), lookup()
// hides an expired key without deleting it, and expire() leaves it in place; a write that
// adds the same key (add, move_entry) deletes the hidden one first, as expired. A replica
// holds expiry too; while its primary's commands run, expired keys are even visible
// (set_expired_visible): lookup() returns them as if alive.
//
// Hash fields with deadlines (HEXPIRE…) expire the same way. A hash with volatile fields is in
// a second index (field_expiry_) by its earliest field deadline; lookup() of a hash whose
// earliest field deadline has passed deletes its due fields first (all of them, in O(k log n)),
// and the key with the last one, reporting them to the listener (HDEL to the AOF and replicas,
// `hexpired`); active expiry takes due hashes from the front of that index. While expiry is
// held nothing is deleted: readers above hide the due fields (commands/hash_commands.cc).
// Whoever changes a hash's fields or their deadlines calls refresh_field_expiry() after.
//
// Invariants: every entry is in the table; an entry is in the expiry index exactly when it
// has a deadline, and in the field index exactly when it holds a hash with a volatile field;
// the Database owns its entries and frees them on removal.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "storage/entry.h"
#include "storage/expiry_index.h"
#include "storage/hash_table.h"

namespace keywarden {

class LazyFree;  // storage/lazy_free.h

// Told of deletions that no command asked for, so the layers above can propagate and notify.
class KeyspaceListener {
 public:
  virtual ~KeyspaceListener() = default;
  // Called after the entry left the indexes and before it is freed.
  virtual void key_expired(int db, std::string_view key) = 0;
  // Fields of the hash at `key` deleted because their deadlines passed, in deletion order;
  // `key_deleted` when the last one took the key with it (the entry is already gone then).
  virtual void hash_fields_expired(int db, std::string_view key,
                                   const std::vector<std::string>& fields, bool key_deleted) {
    (void)db, (void)key, (void)fields, (void)key_deleted;
  }
};

struct EntryTraits : DefaultKeyHash {
  static std::string_view key(const Entry* entry) { return entry->key(); }
  // Eight keys a bucket before the table grows: the bucket words and arrays cost about 10 bytes
  // a key instead of 14 at load 1 (bench/memory_expiry_benchmark.py, docs/benchmarks.md), and the
  // hash bits in the table's node words keep lookups from reading more entries than before.
  static constexpr size_t kMaxLoad = 8;
};

using EntryTable = HashTable<Entry, EntryTraits>;

// The eviction bits of an entry (Entry::access_clock), laid out as Redis lays them out so that
// OBJECT IDLETIME and OBJECT FREQ read the same. Under an LRU policy (and under none) they hold
// the Unix time in seconds, modulo 2^24, of the last access. Under an LFU policy the high 16 bits
// hold the Unix time in minutes, modulo 2^16, of the counter's last decay and the low 8 bits a
// logarithmic access counter: new keys start at kLfuInitialCount so that they are not evicted
// before they had a chance to be used, and the counter loses one per `decay_minutes` idle.
namespace access_clock {
inline constexpr uint32_t kLruMax = (1u << 24) - 1;
inline constexpr uint32_t kLfuInitialCount = 5;

uint32_t lru_stamp(int64_t now_ms);
// Milliseconds since `stamp` (seconds resolution); a clock that wrapped counts as one wrap.
int64_t lru_idle_ms(uint32_t stamp, int64_t now_ms);
uint32_t lfu_initial(int64_t now_ms);
// The counter after the decay owed for the minutes elapsed since the stamp.
uint32_t lfu_decayed_count(uint32_t stamp, int64_t now_ms, int64_t decay_minutes);
// The bits after one access: decay, then a probabilistic increment that gets rarer as the
// counter grows (`log_factor` 10 needs about a million accesses to reach 255).
uint32_t lfu_accessed(uint32_t stamp, int64_t now_ms, int64_t log_factor, int64_t decay_minutes,
                      std::mt19937_64& rng);
}  // namespace access_clock

class Database {
 public:
  // `new_entry_access_clock`, when given, is read for the access clock of every added entry
  // (the keyspace keeps it current); without it new entries start at 0. `lazy_free`, when
  // given, takes the values deleted lazily; without it every value is freed in place.
  Database(int index, KeyspaceListener* listener,
           const uint32_t* new_entry_access_clock = nullptr, LazyFree* lazy_free = nullptr);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int index() const { return index_; }
  size_t size() const { return table_.size(); }
  size_t volatile_count() const { return expiry_.size(); }
  // Hashes that have at least one field with a deadline.
  size_t volatile_hash_count() const { return field_expiry_.size(); }

  // The entry for `key` if it exists and has not expired at `now_ms`; an expired entry is
  // deleted on the way (lazy expiry).
  Entry* lookup(std::string_view key, int64_t now_ms);
  // Bytes `entry` costs this database (MEMORY USAGE): its allocation as the allocator rounds
  // it, the value's payload, and its share of the hash table and the expiry index.
  size_t memory_usage(const Entry* entry) const;
  // The entry regardless of its deadline (for the expiry machinery and DEBUG).
  Entry* find_raw(std::string_view key);

  // Cache hints for a batch of lookups; see HashTable::prefetch_bucket(). Call
  // prefetch_bucket() for every key of the batch, then prefetch_entry() for every key, then
  // prefetch_crowded_entry() for every key, then look them up.
  static uint64_t hash_key(std::string_view key) { return EntryTable::hash_of(key); }
  void prefetch_bucket(uint64_t hash) const { table_.prefetch_bucket(hash); }
  void prefetch_entry(uint64_t hash) const { table_.prefetch_node(hash); }
  void prefetch_crowded_entry(uint64_t hash) const { table_.prefetch_array_nodes(hash); }

  // Adds a key that must not exist, with a deadline or none (kNoExpiry); its access clock is
  // the current new-entry stamp.
  Entry* add(std::string_view key, Value value, int64_t deadline_ms = kNoExpiry);
  // Replaces the value of an existing entry, keeping or dropping its deadline. `lazy`: the old
  // value may be freed off the command thread (lazyfree-lazy-server-del). Returns the entry,
  // which has moved when a deadline was dropped (see set_expiry).
  [[nodiscard]] Entry* overwrite(Entry* entry, Value value, bool keep_ttl, bool lazy = false);
  // Sets the deadline (kNoExpiry removes it) and returns the entry. A key that gains its first
  // deadline or loses it moves to a new allocation (the volatile prefix, entry.h): `entry` is
  // then freed, and only the returned pointer may be used.
  [[nodiscard]] Entry* set_expiry(Entry* entry, int64_t deadline_ms);
  // Re-reads the earliest field deadline of the hash `entry` holds and files it in the field
  // index (or takes it out when no field has one). Call after changing a hash's fields.
  void refresh_field_expiry(Entry* entry);
  // Takes the hash `entry` holds out of the field index, before its value is replaced in place.
  void forget_field_expiry(Entry* entry) { field_expiry_.remove(entry); }
  // Deletes up to `limit` fields of the hash `entry` holds whose deadline is before `now_ms`,
  // and the key with the last one, telling the listener. Returns how many fields went and
  // sets *key_deleted (the entry is freed then). Does nothing while expiry is held.
  size_t expire_fields(Entry* entry, int64_t now_ms, size_t limit, bool* key_deleted);
  // True when the hash `entry` holds has a field whose deadline is before `now_ms`.
  bool has_due_fields(const Entry* entry, int64_t now_ms) const {
    return field_expiry_.contains(entry) && field_expiry_.deadline_of(entry) < now_ms;
  }

  // Removes and frees. Returns false when the key was absent (no expiry check: callers look
  // the key up first).
  bool remove(std::string_view key);
  // `lazy`: the caller allows freeing the value off the command thread (UNLINK, lazyfree-*).
  void remove(Entry* entry, bool lazy = false);
  // Deletes an entry because its deadline passed, telling the listener. The value is freed
  // lazily under lazyfree-lazy-expire. Does nothing while expiry is held.
  void expire(Entry* entry);
  // Holds (true) or allows again deletions by expiry (see the header comment).
  void set_expiry_held(bool held) { expiry_held_ = held; }
  bool expiry_held() const { return expiry_held_; }
  // Lookups return expired entries as alive (the primary's commands on a replica).
  void set_expired_visible(bool visible) { expired_visible_ = visible; }
  bool expired_visible() const { return expired_visible_; }

  // The one way a value that has left the keyspace is freed: on the lazy-free thread when
  // `lazy` and the value is big enough to be worth it (see free_effort()), in place otherwise.
  // Deletions of every kind (DEL/UNLINK, overwrites, expiry, eviction) end here.
  void release_value(Value&& value, bool lazy);

  // Moves an entry into another database under a new key (RENAME, MOVE), keeping its deadline
  // and access clock. `entry` is gone afterwards; the returned entry replaces it.
  Entry* move_entry(Entry* entry, Database& target, std::string_view new_key);

  // Removes every key; returns how many there were. `lazy`: the database is empty at once and
  // its former entries are freed on the lazy-free thread (FLUSHDB/FLUSHALL ASYNC).
  size_t clear(bool lazy = false);
  // Exchanges contents with another database (SWAPDB); indexes stay with their numbers.
  void swap_contents(Database& other);

  // SCAN step over the table; see HashTable::scan for the guarantee.
  uint64_t scan(uint64_t cursor, const std::function<void(Entry*)>& visit);
  // A random entry, or nullptr when empty. May return an expired one; callers check.
  Entry* random_entry(std::mt19937_64& rng);
  // Visits every entry; `visit` returns false to stop and must not modify the database.
  template <class Fn>
  bool for_each(Fn&& visit) const {
    return table_.for_each(visit);
  }

  ExpiryIndex& expiry_index() { return expiry_; }
  const ExpiryIndex& expiry_index() const { return expiry_; }
  ExpiryIndex& field_expiry_index() { return field_expiry_; }
  const ExpiryIndex& field_expiry_index() const { return field_expiry_; }
  EntryTable& table() { return table_; }

  // The entry's absolute deadline in Unix milliseconds, kNoExpiry when it has none.
  static int64_t deadline_of(const Entry* entry) {
    return entry->has_expiry() ? entry->deadline() : kNoExpiry;
  }
  static bool is_expired(const Entry* entry, int64_t now_ms) {
    return entry->has_expiry() && now_ms > entry->deadline();
  }

 private:
  int index_;
  KeyspaceListener* listener_;
  const uint32_t* new_entry_access_clock_;
  LazyFree* lazy_free_;
  // The deletion expire() does when expiry is not held.
  void expire_now(Entry* entry);
  // Before `key` is added while expiry is held: deletes a hidden expired entry of that name.
  void drop_hidden_expired(std::string_view key);
  // Moves `entry` to a new allocation with or without the volatile prefix, relinking the table
  // and the field index (not the key expiry index); returns the new entry.
  Entry* reshape(Entry* entry, bool with_expiry);

  EntryTable table_;
  ExpiryIndex expiry_;
  ExpiryIndex field_expiry_{ExpiryIndex::Kind::kHashFields};
  bool expiry_held_ = false;
  bool expired_visible_ = false;
};

}  // namespace keywarden
