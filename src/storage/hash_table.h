// HashTable: the keyspace's main index, a hash table of `Node*` that resizes incrementally.
//
// The table stores `Node*` and never allocates, copies or frees a node: the caller owns the
// nodes, which carry no link of the table's (no chain pointer: a key pays only for its share of
// the bucket array and of the small arrays of crowded buckets). A bucket is one word: empty, a
// node word, or a tagged pointer to a small array of node words when two or more keys share
// the bucket. A node word is the node's address with three bits of its key's hash in the
// address's free low bits (nodes are 16-byte aligned), so a lookup skips seven in eight of the
// other keys of its bucket without reading them. The array's capacity (2 to 12 slots in steps
// of two, then 16: the allocator's own size classes) is held in the tag bits of the word, and
// its node words are packed at the front, zero after the last. Nodes never move between
// buckets except by rehashing, so a bucket is still the unit SCAN and the incremental rehash
// work in.
//
// A table may hold several nodes per bucket before it grows (`Traits::kMaxLoad`, 1 if absent):
// the keyspace's table grows at 8, where a bucket word and the arrays cost it about 10 bytes a
// key instead of 14 at load 1, and thanks to the hash bits in the node words a lookup still
// reads no more nodes than a load-1 table without them does.
// Invariants:
//   - bucket counts are powers of two (a bucket index is `hash & mask`), at least kMinBuckets
//     once the table holds anything;
//   - keys are unique: insert() requires that the key is absent;
//   - a node word's tag bits are node_tag() of its key's hash;
//   - a bucket's array holds at least two nodes (one node is stored in the word itself),
//     packed at the front, and the smallest capacity that holds them is more than half of its
//     own;
//   - while rehashing there are two arrays: every bucket of the old one below
//     `rehash_index_` is empty, its nodes having moved to the new one, and new nodes always go
//     to the new one. Lookups probe both. Each operation moves a bucket or so, and the server
//     cron drives the rest through rehash_for(), so no single call pays for a whole resize;
//   - a node's bucket depends on `Traits::hash`, so the default hash's seed must not change
//     while any table holds nodes.
// Not thread-safe: like everything in the keyspace it belongs to the command thread.

#pragma once

#include "common/prefetch.h"
#include "storage/memory_accounting.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace keywarden {

// ---------------------------------------------------------------------------------------------
// Default hash: SipHash-1-2 under a 128-bit key chosen at random when the process starts.
//
// Keys come from clients, and a hash table degrades to a linear search of one huge bucket if
// someone can choose keys that collide. A fast unkeyed or weakly keyed mix (FNV, Murmur, xxHash,
// wyhash) is open to that: several of them admit seed-independent multicollisions, so a random seed
// does not help. SipHash is a keyed pseudo-random function, so without the key an attacker cannot
// aim at a bucket. The full-strength SipHash-2-4 costs about twice as much on short keys; like
// Redis we take one compression and two finalization rounds, which keeps the diffusion that
// flooding resistance needs at a price close to the fast non-cryptographic hashes for keys of a few
// dozen bytes (the keyspace's typical case). The round counts are template parameters so the
// tests can check the implementation against the published SipHash-2-4 vectors.
// ---------------------------------------------------------------------------------------------

struct HashSeed {
  uint64_t k0 = 0;
  uint64_t k1 = 0;
  friend bool operator==(const HashSeed&, const HashSeed&) = default;
};

namespace hash_detail {

inline uint64_t load_le64(const char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof word);
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  return word;
}

struct SipState {
  uint64_t v0, v1, v2, v3;

  void round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
};

inline HashSeed random_seed() {
  HashSeed seed;
  try {
    std::random_device device;
    seed.k0 = (uint64_t{device()} << 32) ^ device();
    seed.k1 = (uint64_t{device()} << 32) ^ device();
  } catch (...) {
    // No entropy source: the clock and an address are weak but still differ between runs.
    seed.k0 = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    seed.k1 = reinterpret_cast<uintptr_t>(&seed) * 0x9e3779b97f4a7c15ULL;
  }
  return seed;
}

// A function-local static rather than a namespace-scope variable, so that a table used during
// another translation unit's static initialisation still sees the random seed.
inline HashSeed& process_seed() {
  static HashSeed seed = random_seed();
  return seed;
}

}  // namespace hash_detail

template <int kCompressionRounds, int kFinalizationRounds>
uint64_t siphash(std::string_view bytes, HashSeed seed) {
  hash_detail::SipState state{seed.k0 ^ 0x736f6d6570736575ULL, seed.k1 ^ 0x646f72616e646f6dULL,
                              seed.k0 ^ 0x6c7967656e657261ULL, seed.k1 ^ 0x7465646279746573ULL};
  auto absorb = [&state](uint64_t word) {
    state.v3 ^= word;
    for (int i = 0; i < kCompressionRounds; ++i) state.round();
    state.v0 ^= word;
  };
  const char* cursor = bytes.data();
  const size_t whole_words = bytes.size() / 8;
  for (size_t i = 0; i < whole_words; ++i, cursor += 8) absorb(hash_detail::load_le64(cursor));
  // The last word carries the tail bytes little-endian and the length (mod 256) in its top byte.
  uint64_t last = static_cast<uint64_t>(bytes.size()) << 56;
  const size_t tail = bytes.size() % 8;
  for (size_t i = 0; i < tail; ++i) {
    last |= static_cast<uint64_t>(static_cast<unsigned char>(cursor[i])) << (8 * i);
  }
  absorb(last);
  state.v2 ^= 0xff;
  for (int i = 0; i < kFinalizationRounds; ++i) state.round();
  return state.v0 ^ state.v1 ^ state.v2 ^ state.v3;
}

inline uint64_t siphash12(std::string_view bytes, HashSeed seed) {
  return siphash<1, 2>(bytes, seed);
}

// The process-wide seed of hash_bytes(). Setting it is for tests (and must happen while no
// table that uses hash_bytes holds nodes).
inline HashSeed hash_seed() { return hash_detail::process_seed(); }
inline void set_hash_seed(HashSeed seed) { hash_detail::process_seed() = seed; }

inline uint64_t hash_bytes(std::string_view bytes) {
  return siphash12(bytes, hash_detail::process_seed());
}

// Traits can inherit this to get the default hash.
struct DefaultKeyHash {
  static uint64_t hash(std::string_view key) { return hash_bytes(key); }
};

// What HashTable needs to know about a node type: its key and the key's hash. Node addresses
// must be multiples of 16, as operator new returns them (the four low bits of a bucket word
// tell a node from an array and carry hash bits). Optionally, Traits may also provide
// `static bool equal(std::string_view, std::string_view)` (say, for case-insensitive keys; its
// hash must then agree with it), byte equality being used otherwise, and
// `static constexpr size_t kMaxLoad`, the nodes per bucket at which the table grows (1 if
// absent).
template <class Traits, class Node>
concept HashTableTraits = requires(Node* node, const Node* const_node, std::string_view key) {
  { Traits::key(const_node) } -> std::convertible_to<std::string_view>;
  { Traits::hash(key) } -> std::convertible_to<uint64_t>;
};

// A random source for random_node() and sample(): any generator of full 64-bit words, such as
// std::mt19937_64, so that tests can inject a seeded one.
template <class Rng>
concept HashTableRandomSource = std::uniform_random_bit_generator<Rng> &&
    std::bool_constant<Rng::min() == 0 && Rng::max() == ~uint64_t{0}>::value;

template <class Node, HashTableTraits<Node> Traits>
class HashTable {
 public:
  static constexpr size_t kMinBuckets = 4;
  // Nodes per bucket at which the table grows (to half of it).
  static constexpr size_t kMaxLoad = [] {
    if constexpr (requires { Traits::kMaxLoad; }) {
      static_assert(Traits::kMaxLoad >= 1);
      return size_t{Traits::kMaxLoad};
    } else {
      return size_t{1};
    }
  }();
  // Shrink once fewer than this percentage of kMaxLoad nodes per bucket remain. Growth
  // happens at kMaxLoad and a shrink lands above half of it, so the gap between the two
  // thresholds keeps a table near a boundary from resizing back and forth.
  static constexpr size_t kShrinkFillPercent = 10;
  // While resizing is disallowed (a fork child shares our pages, and every node moved by a
  // rehash would be a copied page) buckets may grow, but not without bound: past this many
  // times kMaxLoad.
  static constexpr size_t kForcedGrowLoad = 5;
  // A rehash step moves whole buckets; to keep a step's cost bounded in a sparse table it also
  // gives up after visiting this many empty buckets per bucket it was asked to move.
  static constexpr size_t kEmptyVisitsPerBucket = 10;
  // rehash_for() checks the clock once per this many buckets.
  static constexpr size_t kRehashBatchBuckets = 100;

  HashTable() = default;
  // Releases the bucket arrays only: nodes belong to the caller (see clear()).
  ~HashTable() { release_arrays(); }

  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;
  HashTable(HashTable&& other) noexcept { take(other); }
  HashTable& operator=(HashTable&& other) noexcept {
    if (this != &other) {
      release_arrays();
      take(other);
    }
    return *this;
  }

  size_t size() const { return tables_[0].used + tables_[1].used; }
  bool empty() const { return size() == 0; }
  // Buckets of both arrays while rehashing.
  size_t bucket_count() const { return tables_[0].bucket_count() + tables_[1].bucket_count(); }
  // The number of nodes in every bucket of array `which` (0: the main one, 1: the one a rehash
  // moves into; empty when it has none), for DEBUG HTSTATS.
  std::vector<uint32_t> chain_lengths(int which) const {
    const Table& table = tables_[which];
    std::vector<uint32_t> lengths(table.bucket_count(), 0);
    for (size_t i = 0; i < lengths.size(); ++i) {
      lengths[i] = static_cast<uint32_t>(bucket_size(table.slots[i]));
    }
    return lengths;
  }
  // Bytes held by the table: the bucket arrays and the small arrays of crowded buckets, its
  // whole overhead beyond the nodes themselves.
  size_t bucket_memory() const {
    return bucket_count() * sizeof(Word) + tables_[0].array_bytes + tables_[1].array_bytes;
  }
  bool rehashing() const { return rehash_index_ != kNotRehashing; }

  static uint64_t hash_of(std::string_view key) { return Traits::hash(key); }

  Node* find(std::string_view key) { return find(key, hash_of(key)); }
  // `hash` must be hash_of(key); for callers that look up and then insert the same key.
  Node* find(std::string_view key, uint64_t hash) {
    if (empty()) return nullptr;
    rehash_step();
    const Location where = locate_key(key, hash);
    return where ? where.node() : nullptr;
  }

  // The key of `node` must be absent.
  void insert(Node* node) { insert(node, hash_of(Traits::key(node))); }
  void insert(Node* node, uint64_t hash) {
    assert(hash == hash_of(Traits::key(node)));
    assert(!locate_key(Traits::key(node), hash) && "key already present");
    rehash_step();
    grow_if_needed();
    link_node(node, hash);
  }

  // Returns the node holding `key` and false, or calls `make()`, which must return a new node
  // whose key equals `key`, inserts it and returns it and true. Hashes and probes once.
  template <class Make>
  std::pair<Node*, bool> find_or_insert(std::string_view key, Make&& make) {
    const uint64_t hash = hash_of(key);
    rehash_step();
    if (const Location where = locate_key(key, hash)) return {where.node(), false};
    Node* node = std::forward<Make>(make)();
    assert(keys_equal(Traits::key(node), key));
    grow_if_needed();
    link_node(node, hash);
    return {node, true};
  }

  // Unlinks and returns the node holding `key` (nullptr if none); the caller frees it.
  Node* remove(std::string_view key) { return remove(key, hash_of(key)); }
  Node* remove(std::string_view key, uint64_t hash) {
    if (empty()) return nullptr;
    rehash_step();
    const Location where = locate_key(key, hash);
    return where ? unlink(where) : nullptr;
  }
  // Unlinks this very node; false if it is not in the table.
  bool remove(Node* node) {
    if (empty()) return false;
    rehash_step();
    const Location where = locate_node(node);
    if (!where) return false;
    unlink(where);
    return true;
  }

  // Puts `replacement`, whose key must equal the key of `node`, where `node` is (the caller
  // moved the node to a new allocation). No rehash step, no resize: safe during scan(). False
  // if `node` is not in the table.
  bool replace(Node* node, Node* replacement) {
    assert(keys_equal(Traits::key(node), Traits::key(replacement)));
    assert((reinterpret_cast<Word>(replacement) & kTagMask) == 0);
    const Location where = locate_node(node);
    if (!where) return false;
    where.set(replacement);
    return true;
  }

  // Calls `free_node(Node*)` on every node and releases the bucket arrays. The callback must
  // not touch the table.
  template <class FreeNode>
  void clear(FreeNode&& free_node) {
    for (Table& table : tables_) {
      for (size_t i = 0; i < table.bucket_count(); ++i) {
        for_each_in_bucket(table.slots[i], [&](Node* node) { free_node(node); });
      }
    }
    release_arrays();
  }

  // Starts growing to hold `count` nodes at kMaxLoad (say, before loading a snapshot). Ignored
  // while rehashing or while the table is already big enough.
  void reserve(size_t count) {
    if (rehashing() || pause_depth_ > 0 || count <= tables_[0].bucket_count() * kMaxLoad) return;
    start_resize(buckets_for(count));
  }

  // Moves up to `buckets` non-empty buckets (visiting at most kEmptyVisitsPerBucket empty ones
  // per bucket). Returns whether rehashing remains to be done.
  bool rehash_steps(size_t buckets) { return rehash_buckets(buckets); }
  // Rehashes for about `budget` of wall time (the cron's share). Returns whether rehashing
  // remains to be done.
  bool rehash_for(std::chrono::microseconds budget) {
    if (!rehashing() || !rehash_allowed()) return rehashing();
    const auto deadline = std::chrono::steady_clock::now() + budget;
    while (rehash_buckets(kRehashBatchBuckets)) {
      if (std::chrono::steady_clock::now() >= deadline) return true;
    }
    return false;
  }

  // While a fork child shares our pages, every bucket array written and every node moved by a
  // rehash is a page copied. Disallowing resizes therefore stops new ones from starting and puts
  // a rehash under way on hold, with two exceptions that keep buckets small: a table loaded
  // past kForcedGrowLoad still grows, and a held rehash resumes once the new array is itself
  // loaded that far (it has to finish before the table can grow again). Lookups are unaffected.
  // Re-allowing does not resize by itself: the cron calls resize_if_needed().
  void set_resize_allowed(bool allowed) { resize_allowed_ = allowed; }
  bool resize_allowed() const { return resize_allowed_; }
  // Starts a grow or shrink if the load calls for one. Returns whether one started.
  bool resize_if_needed() { return maybe_grow() || maybe_shrink(); }

  // One SCAN step: calls `visit(Node*)` for the nodes of the bucket(s) `cursor` names and
  // returns the next cursor; 0 starts a scan and 0 is returned when it is done. Every node
  // present for the whole scan is visited at least once, whatever resizes happen between calls;
  // some may be visited more than once.
  //
  // The cursor counts with its bits reversed. A table of 2^n buckets sends a key with hash h to
  // bucket h mod 2^n, and doubling the table splits bucket b into b and b + 2^n, which differ
  // only in the new high bit. Counting from the high bit down (reverse-binary order) keeps the
  // set of buckets still to visit closed under resizing: if bucket b of a 2^n table is yet to
  // come, so are both its halves in a 2^(n+1) table, and so is the bucket it folds into in a
  // 2^(n-1) table (which also holds nodes from a visited bucket: those repeat). So a cursor
  // carried across any number of resizes misses nothing. While rehashing, a node is in the
  // smaller array or in one of its bucket's expansions in the bigger one, so a step visits both.
  //
  // Rehashing and resizing are paused during the call, so `visit` may look keys up, insert,
  // replace() the node it was handed, or remove it (active expiry does); it must not remove
  // other nodes. Each bucket's nodes are copied out before the first is visited, since removal
  // and insertion reorder a bucket's array.
  template <class Visit>
  uint64_t scan(uint64_t cursor, Visit&& visit) {
    if (empty()) return 0;
    PauseGuard pause(*this);
    if (!rehashing()) {
      const Table& table = tables_[0];
      visit_bucket(table.slots[cursor & table.mask], visit);
      return next_cursor(cursor, table.mask);
    }
    const Table* small = &tables_[0];
    const Table* big = &tables_[1];
    if (small->mask > big->mask) std::swap(small, big);
    visit_bucket(small->slots[cursor & small->mask], visit);
    // Then every expansion of that bucket in the bigger array: the cursors that agree with it on
    // the small mask's bits, which reverse-binary counting over the big mask visits in a row.
    do {
      visit_bucket(big->slots[cursor & big->mask], visit);
      cursor = next_cursor(cursor, big->mask);
    } while ((cursor & (small->mask ^ big->mask)) != 0);
    return cursor;
  }

  // A random node, every node equally likely, or nullptr if empty. Draws a (bucket, position)
  // pair uniformly among the live buckets and the positions [0, cap), cap being at least the
  // largest bucket's size, and starts over when the bucket holds no node at that position.
  // Each node is one such pair, so each has the same chance; picking a random bucket and then a
  // random node of it instead favours nodes in small buckets (a node alone in its bucket would
  // come up twice as often as one of a pair). The cost is the expected number of draws,
  // buckets * cap / nodes: with SipHash the largest bucket at load 0.5-1 holds a handful of
  // nodes, so a draw probes some 5-20 buckets (at load 4-8, some 2-5).
  template <HashTableRandomSource Rng>
  Node* random_node(Rng& rng) {
    if (empty()) return nullptr;
    rehash_step();
    const Table& first = tables_[0];
    const Table& second = tables_[1];
    const size_t start = rehashing() ? rehash_index_ : 0;
    const size_t live_buckets = first.bucket_count() - start + second.bucket_count();
    const size_t cap = std::max<size_t>(1, std::max(first.max_chain, second.max_chain));
    for (;;) {
      const size_t pick = start + bounded(rng(), live_buckets);
      const Word word = pick < first.bucket_count() ? first.slots[pick]
                                                    : second.slots[pick - first.bucket_count()];
      const size_t position = bounded(rng(), cap);
      if (position < bucket_size(word)) return bucket_node(word, position);
    }
  }

  // Fills `out` with up to out.size() nodes from consecutive buckets starting at a random one,
  // for eviction's sampling: cheap (a few cache lines) rather than uniform. Returns how many it
  // stored: fewer than asked when the table holds fewer, or after out.size() * 10 bucket visits,
  // but at least one if the table is not empty (a sparse array, such as the old one during a
  // shrink, can otherwise use up the visits on empty buckets). A long run of empty buckets makes
  // it jump to another random point; the nodes can then repeat, rarely.
  template <HashTableRandomSource Rng>
  size_t sample(std::span<Node*> out, Rng& rng) {
    const size_t wanted = std::min(out.size(), size());
    if (wanted == 0) return 0;
    // Pay a rehash step per node wanted, as if they had been looked up one by one.
    for (size_t i = 0; i < wanted && rehashing(); ++i) rehash_step();
    const int table_count = rehashing() ? 2 : 1;
    const uint64_t max_mask =
        rehashing() ? std::max(tables_[0].mask, tables_[1].mask) : tables_[0].mask;
    size_t visits_left = wanted * 10;
    size_t empty_run = 0;
    size_t stored = 0;
    uint64_t index = rng() & max_mask;
    while (stored < wanted) {
      if (visits_left > 0) {
        --visits_left;
      } else if (stored > 0) {
        break;
      }
      for (int t = 0; t < table_count && stored < wanted; ++t) {
        const Table& table = tables_[t];
        if (t == 0 && table_count == 2 && index < rehash_index_) {
          // Already moved. If the index is also past the end of the new array, nothing lies
          // between here and rehash_index_ in either array: jump ahead.
          if (index >= tables_[1].bucket_count()) {
            index = rehash_index_;
          } else {
            continue;
          }
        }
        if (index > table.mask) continue;
        const Word word = table.slots[index];
        if (word == 0) {
          ++empty_run;
          if (empty_run >= 5 && empty_run > wanted) {
            index = rng() & max_mask;
            empty_run = 0;
          }
          continue;
        }
        empty_run = 0;
        const size_t count = bucket_size(word);
        for (size_t i = 0; i < count && stored < wanted; ++i) out[stored++] = bucket_node(word, i);
      }
      index = (index + 1) & max_mask;
    }
    return stored;
  }

  // Cache hints for a batch of lookups (a pipelined batch of commands): prefetch_bucket()
  // brings the bucket word of `hash` towards the cache, prefetch_node() what that word points
  // at (the node, or the bucket's array) once the word is there, and prefetch_array_nodes()
  // the nodes of that array whose hash bits match once the array is there. Issuing each stage
  // over a whole batch before the next, and the last before the lookups, overlaps their memory
  // latencies instead of paying them one after another. Hints only: they never change the
  // table and are harmless when stale.
  void prefetch_bucket(uint64_t hash) const {
    prefetch_slot(tables_[0], hash);
    if (rehashing()) prefetch_slot(tables_[1], hash);
  }
  void prefetch_node(uint64_t hash) const {
    prefetch_head(tables_[0], hash);
    if (rehashing()) prefetch_head(tables_[1], hash);
  }
  void prefetch_array_nodes(uint64_t hash) const {
    prefetch_tagged(tables_[0], hash);
    if (rehashing()) prefetch_tagged(tables_[1], hash);
  }

  // Calls `visit(Node*)` on every node once, in bucket order. If `visit` returns bool, false
  // stops the walk, and for_each returns whether it went through. `visit` must not modify the
  // table (debug builds check): there is no protection against a node moving or being freed
  // under the walk, and none is needed for the read-only uses (snapshots, DEBUG, tests).
  template <class Visit>
  bool for_each(Visit&& visit) const {
    [[maybe_unused]] const uint64_t before = fingerprint();
    for (const Table& table : tables_) {
      for (size_t i = 0; i < table.bucket_count(); ++i) {
        const Word word = table.slots[i];
        const size_t count = bucket_size(word);
        for (size_t position = 0; position < count; ++position) {
          Node* node = bucket_node(word, position);
          if constexpr (std::is_convertible_v<std::invoke_result_t<Visit&, Node*>, bool>) {
            if (!visit(node)) return false;
          } else {
            visit(node);
          }
        }
      }
    }
    assert(fingerprint() == before && "for_each callback modified the table");
    return true;
  }

 private:
  static constexpr size_t kNotRehashing = std::numeric_limits<size_t>::max();

  // --- Buckets ---------------------------------------------------------------------------------
  // A bucket word is 0 (empty), a node word (bit 0 clear), or an array pointer ORed with a
  // tag: bit 0 set, bits 1-3 the capacity's code. A node word is the node's address with
  // node_tag() of its key's hash in bits 1-3; an array's slots hold node words too, so a node
  // word moves between a bucket word and an array slot as it is. Codes 0-6 mean
  // kCapacities[code] slots (16 to 128 bytes, each a size class of the allocator, so nothing is
  // lost to rounding); code 7 means a bigger array, whose first word holds its capacity, 2^n - 1
  // so that the array is a power of two bytes (only a table that cannot resize, or a flooded
  // bucket, gets there). Nodes and arrays are 16-byte aligned, which leaves the four low bits
  // free.
  using Word = uintptr_t;
  static constexpr Word kArrayBit = 1;
  static constexpr Word kNodeTagMask = 14;
  static constexpr Word kTagMask = 15;
  static constexpr unsigned kBigCode = 7;
  static constexpr size_t kCapacities[kBigCode] = {2, 4, 6, 8, 10, 12, 16};
  static constexpr size_t kMaxTaggedCapacity = kCapacities[kBigCode - 1];
  static constexpr std::align_val_t kArrayAlignment{16};

  // The hash's top three bits, in bits 1-3 (the bucket index uses its low bits).
  static Word node_tag(uint64_t hash) { return static_cast<Word>(hash >> 60) & kNodeTagMask; }
  static Word node_word(Node* node, uint64_t hash) {
    return reinterpret_cast<Word>(node) | node_tag(hash);
  }
  static Node* node_of(Word word) { return reinterpret_cast<Node*>(word & ~kTagMask); }

  // The smallest array capacity that holds `count` (at least 2) nodes.
  static size_t capacity_for(size_t count) {
    for (size_t capacity : kCapacities) {
      if (capacity >= count) return capacity;
    }
    size_t capacity = 2 * kMaxTaggedCapacity - 1;
    while (capacity < count) capacity = 2 * capacity + 1;
    return capacity;
  }

  struct Table {
    Word* slots = nullptr;
    uint64_t mask = 0;  // bucket_count() - 1, when slots is not null
    size_t used = 0;
    // No bucket of this array holds more nodes (an upper bound: removals do not lower it, the
    // next resize does), for random_node().
    size_t max_chain = 0;
    size_t array_bytes = 0;  // held by the small arrays of this array's crowded buckets
    size_t bucket_count() const { return slots == nullptr ? 0 : mask + 1; }
  };

  struct Array {
    Word* nodes;  // node words
    size_t capacity;
  };

  static bool is_array(Word word) { return (word & kArrayBit) != 0; }
  static Array array_of(Word word) {
    Word* base = reinterpret_cast<Word*>(word & ~kTagMask);
    const unsigned code = static_cast<unsigned>(word >> 1) & 7;
    if (code != kBigCode) return {base, kCapacities[code]};
    return {base + 1, static_cast<size_t>(base[0])};
  }
  static size_t array_bytes(size_t capacity) {
    return (capacity <= kMaxTaggedCapacity ? capacity : capacity + 1) * sizeof(Word);
  }
  // The nodes of an array are packed at the front: its size is the index of the first null.
  static size_t array_size(Array array) {
    size_t count = 0;
    while (count < array.capacity && array.nodes[count] != 0) ++count;
    return count;
  }
  static size_t bucket_size(Word word) {
    if (word == 0) return 0;
    return is_array(word) ? array_size(array_of(word)) : 1;
  }
  // The node word at `position` (< bucket_size(word)), and its node.
  static Word bucket_word(Word word, size_t position) {
    return is_array(word) ? array_of(word).nodes[position] : word;
  }
  static Node* bucket_node(Word word, size_t position) {
    return node_of(bucket_word(word, position));
  }
  // Calls `fn(Word)` on each node word of the bucket.
  template <class Fn>
  static void for_each_word_in_bucket(Word word, Fn&& fn) {
    if (word == 0) return;
    if (!is_array(word)) {
      fn(word);
      return;
    }
    const Array array = array_of(word);
    for (size_t i = 0; i < array.capacity && array.nodes[i] != 0; ++i) fn(array.nodes[i]);
  }
  template <class Fn>
  static void for_each_in_bucket(Word word, Fn&& fn) {
    for_each_word_in_bucket(word, [&fn](Word node) { fn(node_of(node)); });
  }

  // A new array of `capacity` (a capacity_for() value) zero slots holding `count` node words
  // from `nodes`; its tagged word. Throws std::bad_alloc like the node allocations around it.
  static Word make_array(size_t capacity, const Word* nodes, size_t count, Table& table) {
    assert(capacity == capacity_for(capacity) && count <= capacity);
    const size_t bytes = array_bytes(capacity);
    auto* base = static_cast<Word*>(::operator new(bytes, kArrayAlignment));
    std::memset(base, 0, bytes);
    Word word = reinterpret_cast<Word>(base);
    Word* slots = base;
    if (capacity <= kMaxTaggedCapacity) {
      const auto code = static_cast<Word>(
          std::find(std::begin(kCapacities), std::end(kCapacities), capacity) -
          std::begin(kCapacities));
      word |= (code << 1) | kArrayBit;
    } else {
      base[0] = capacity;
      slots += 1;
      word |= (Word{kBigCode} << 1) | kArrayBit;
    }
    std::copy(nodes, nodes + count, slots);
    table.array_bytes += bytes;
    return word;
  }
  static void free_array(Word word, Table& table) {
    const Array array = array_of(word);
    const size_t bytes = array_bytes(array.capacity);
    table.array_bytes -= bytes;
    ::operator delete(reinterpret_cast<void*>(word & ~kTagMask), bytes, kArrayAlignment);
  }

  // Adds the node word `node` to the bucket `word` of `table`; returns the bucket's new size.
  static size_t bucket_push(Word& word, Word node, Table& table) {
    assert(node != 0 && (node & kArrayBit) == 0);
    if (word == 0) {
      word = node;
      return 1;
    }
    if (!is_array(word)) {
      const Word pair[2] = {word, node};
      word = make_array(2, pair, 2, table);
      return 2;
    }
    const Array array = array_of(word);
    const size_t count = array_size(array);
    if (count < array.capacity) {
      array.nodes[count] = node;
      return count + 1;
    }
    const Word grown = make_array(capacity_for(count + 1), array.nodes, count, table);
    array_of(grown).nodes[count] = node;
    free_array(word, table);
    word = grown;
    return count + 1;
  }

  // Takes the node at `position` out of the bucket `word`: the last node fills the hole, an
  // array left with one node becomes that node, and one whose nodes would fit in half of it
  // moves to the smallest array that holds them.
  static void bucket_erase(Word& word, size_t position, Table& table) {
    if (!is_array(word)) {
      assert(position == 0);
      word = 0;
      return;
    }
    const Array array = array_of(word);
    const size_t last = array_size(array) - 1;
    array.nodes[position] = array.nodes[last];
    array.nodes[last] = 0;
    if (last == 1) {
      const Word alone = array.nodes[0];
      free_array(word, table);
      word = alone;
    } else if (capacity_for(last) <= array.capacity / 2) {
      // The array is freed only after the new one is made: without memory, it simply stays.
      Word smaller;
      try {
        smaller = make_array(capacity_for(last), array.nodes, last, table);
      } catch (const std::bad_alloc&) {
        return;
      }
      free_array(word, table);
      word = smaller;
    }
  }

  static void prefetch_slot(const Table& table, uint64_t hash) {
    if (table.slots != nullptr) prefetch_read(&table.slots[hash & table.mask]);
  }
  static void prefetch_head(const Table& table, uint64_t hash) {
    if (table.slots == nullptr) return;
    const Word word = table.slots[hash & table.mask];
    if (word == 0) return;
    if (is_array(word)) {
      // The capacity from the tag alone: a big array's capacity word is not in the cache yet.
      const auto* array = reinterpret_cast<const char*>(word & ~kTagMask);
      const unsigned code = static_cast<unsigned>(word >> 1) & 7;
      prefetch_read(array);
      if (code == kBigCode || kCapacities[code] * sizeof(Word) > 64) prefetch_read(array + 64);
      return;
    }
    prefetch_read(node_of(word));
    prefetch_read(reinterpret_cast<const char*>(node_of(word)) + 64);
  }
  static void prefetch_tagged(const Table& table, uint64_t hash) {
    if (table.slots == nullptr) return;
    const Word word = table.slots[hash & table.mask];
    if (!is_array(word)) return;
    const Word tag = node_tag(hash);
    for_each_word_in_bucket(word, [tag](Word node) {
      if ((node & kNodeTagMask) == tag) prefetch_read(node_of(node));
    });
  }

  class PauseGuard {
   public:
    explicit PauseGuard(HashTable& table) : table_(table) { ++table_.pause_depth_; }
    ~PauseGuard() { --table_.pause_depth_; }
    PauseGuard(const PauseGuard&) = delete;
    PauseGuard& operator=(const PauseGuard&) = delete;

   private:
    HashTable& table_;
  };

  static bool keys_equal(std::string_view a, std::string_view b) {
    if constexpr (requires { Traits::equal(a, b); }) {
      return Traits::equal(a, b);
    } else {
      return a == b;
    }
  }

  // A uniform-enough value in [0, bound) from 64 random bits (multiply-shift: the bias is at
  // most bound / 2^64).
  static size_t bounded(uint64_t random, size_t bound) {
    return static_cast<size_t>((static_cast<unsigned __int128>(random) * bound) >> 64);
  }

  static uint64_t reverse_bits(uint64_t v) {
    v = __builtin_bswap64(v);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    return v;
  }

  // Increments the cursor's bits that `mask` covers, most significant first. Setting the bits
  // above the mask first makes the carry run off the top once the mask's bits wrap, so a full
  // cycle ends at 0.
  static uint64_t next_cursor(uint64_t cursor, uint64_t mask) {
    cursor |= ~mask;
    return reverse_bits(reverse_bits(cursor) + 1);
  }

  // Visits a copy of the bucket's nodes: `visit` may remove the node it is given or insert
  // others, which reorders or reallocates the bucket's array.
  template <class Visit>
  static void visit_bucket(Word word, Visit& visit) {
    if (word == 0) return;
    if (!is_array(word)) {
      visit(node_of(word));
      return;
    }
    const Array array = array_of(word);
    const size_t count = array_size(array);
    Word local[16];
    std::vector<Word> spill;
    Word* copy = local;
    if (count > std::size(local)) {
      spill.assign(array.nodes, array.nodes + count);
      copy = spill.data();
    } else {
      std::copy(array.nodes, array.nodes + count, local);
    }
    for (size_t i = 0; i < count; ++i) visit(node_of(copy[i]));
  }

  // Large arrays are mapped straight from the kernel as untouched zero pages (a growing table
  // does not stall to clear megabytes it fills gradually anyway) and unmapped when the resize
  // that replaced them ends; see memory::allocate_block().
  static Word* allocate_slots(size_t buckets) {
    return static_cast<Word*>(memory::allocate_block(buckets * sizeof(Word)));
  }
  // Frees the bucket array only (its buckets must hold no arrays any more).
  static void free_slots(const Table& table) {
    memory::free_block(table.slots, table.bucket_count() * sizeof(Word));
  }

  // The bucket `hash` falls into in array `t`, or nullptr if that array is absent or the
  // bucket has already been rehashed away.
  Word* bucket_of(int t, uint64_t hash) {
    Table& table = tables_[t];
    if (table.slots == nullptr) return nullptr;
    const uint64_t index = hash & table.mask;
    if (t == 0 && rehashing() && index < rehash_index_) return nullptr;
    return &table.slots[index];
  }

  // Where a node sits: its bucket, its position in the bucket, and which array holds it, so
  // that removal can keep that array's count.
  struct Location {
    Word* bucket = nullptr;
    size_t position = 0;
    int table = 0;
    explicit operator bool() const { return bucket != nullptr; }
    Node* node() const { return bucket_node(*bucket, position); }
    // Puts `node` in this place; its key must hash like the one there (the tag stays).
    void set(Node* node) const {
      Word& slot = is_array(*bucket) ? array_of(*bucket).nodes[position] : *bucket;
      slot = reinterpret_cast<Word>(node) | (slot & kNodeTagMask);
    }
  };

  // The first node word of `hash`'s buckets that `matches(Word)`.
  template <class Matches>
  Location locate(uint64_t hash, Matches&& matches) {
    for (int t = 0; t < 2; ++t) {
      Word* bucket = bucket_of(t, hash);
      if (bucket == nullptr || *bucket == 0) continue;
      const Word word = *bucket;
      if (!is_array(word)) {
        if (matches(word)) return {bucket, 0, t};
        continue;
      }
      const Array array = array_of(word);
      for (size_t i = 0; i < array.capacity && array.nodes[i] != 0; ++i) {
        if (matches(array.nodes[i])) return {bucket, i, t};
      }
    }
    return {};
  }

  // Reads a node only when its tag matches the hash's.
  Location locate_key(std::string_view key, uint64_t hash) {
    return locate(hash, [key, tag = node_tag(hash)](Word node) {
      return (node & kNodeTagMask) == tag && keys_equal(Traits::key(node_of(node)), key);
    });
  }
  Location locate_node(const Node* node) {
    return locate(hash_of(Traits::key(node)),
                  [node](Word other) { return node_of(other) == node; });
  }

  void link_node(Node* node, uint64_t hash) {
    assert((reinterpret_cast<Word>(node) & kTagMask) == 0 && "nodes must be 16-byte aligned");
    Table& table = tables_[rehashing() ? 1 : 0];
    const size_t count = bucket_push(table.slots[hash & table.mask], node_word(node, hash), table);
    ++table.used;
    table.max_chain = std::max(table.max_chain, count);
  }

  Node* unlink(Location where) {
    Node* node = where.node();
    Table& table = tables_[where.table];
    bucket_erase(*where.bucket, where.position, table);
    --table.used;
    maybe_shrink();
    return node;
  }

  bool rehash_allowed() const {
    if (pause_depth_ > 0) return false;
    if (resize_allowed_) return true;
    // A forced grow (at least kForcedGrowLoad times bigger: a normal one doubles), or a new
    // array loaded so much that the table could not grow otherwise.
    const Table& from = tables_[0];
    const Table& to = tables_[1];
    return to.bucket_count() >= kForcedGrowLoad * from.bucket_count() ||
           to.used >= kForcedGrowLoad * kMaxLoad * to.bucket_count();
  }

  void rehash_step() {
    if (rehashing()) rehash_buckets(1);
  }

  bool rehash_buckets(size_t buckets) {
    if (!rehashing()) return false;
    if (!rehash_allowed()) return true;
    Table& from = tables_[0];
    Table& to = tables_[1];
    // Shrinking folds bucket i onto i & to.mask, so nodes move without being rehashed; growing
    // splits each bucket in two by the hash's next bit, which has to be recomputed.
    const bool shrinking = to.mask < from.mask;
    size_t empty_visits_left = buckets > kNotRehashing / kEmptyVisitsPerBucket
                                   ? kNotRehashing
                                   : buckets * kEmptyVisitsPerBucket;
    while (buckets > 0 && from.used > 0) {
      // Cannot run off the end: from.used > 0 means a non-empty bucket at or past the index.
      while (from.slots[rehash_index_] == 0) {
        ++rehash_index_;
        if (--empty_visits_left == 0) return true;
      }
      const Word word = from.slots[rehash_index_];
      move_bucket(word, shrinking ? (rehash_index_ & to.mask) : kNotRehashing);
      const size_t moved = bucket_size(word);
      if (is_array(word)) free_array(word, from);
      from.slots[rehash_index_] = 0;
      from.used -= moved;
      to.used += moved;
      ++rehash_index_;
      --buckets;
    }
    if (from.used > 0) return true;
    free_slots(from);
    from = to;
    to = Table{};
    rehash_index_ = kNotRehashing;
    return false;
  }

  // Adds the nodes of bucket `word` of tables_[0] to tables_[1], into bucket `fold` when
  // shrinking, by their hashes when growing (`fold` is kNotRehashing then). Leaves the source
  // bucket as it is. If memory runs out midway (a destination array cannot grow) the nodes
  // already added are taken out again before the exception goes on, so the table is unchanged.
  void move_bucket(Word word, uint64_t fold) {
    Table& to = tables_[1];
    uint64_t small_buffer[16];
    std::vector<uint64_t> spill;
    size_t added = 0;
    try {
      for_each_word_in_bucket(word, [&](Word node) {
        const uint64_t index =
            fold != kNotRehashing ? fold : (hash_of(Traits::key(node_of(node))) & to.mask);
        if (added < std::size(small_buffer)) {
          small_buffer[added] = index;
        } else {
          if (spill.empty()) spill.assign(small_buffer, small_buffer + added);
          spill.push_back(index);
        }
        const size_t count = bucket_push(to.slots[index], node, to);
        to.max_chain = std::max(to.max_chain, count);
        ++added;
      });
    } catch (const std::bad_alloc&) {
      // Each node added is the last of its bucket once the ones added after it are gone.
      while (added > 0) {
        --added;
        const uint64_t index = spill.empty() ? small_buffer[added] : spill[added];
        bucket_erase(to.slots[index], bucket_size(to.slots[index]) - 1, to);
      }
      throw;
    }
  }

  // Starts moving to an array of `buckets` (a power of two). If there is nothing to move the new
  // array simply replaces the old one. On allocation failure the table stays as it is, with
  // fuller buckets or a larger array than ideal, and tries again on a later operation.
  bool start_resize(size_t buckets) {
    assert(!rehashing() && std::has_single_bit(buckets));
    Word* slots = allocate_slots(buckets);
    if (slots == nullptr) return false;
    Table fresh{slots, buckets - 1, 0};
    if (tables_[0].used == 0) {
      release_table(tables_[0]);
      tables_[0] = fresh;
      return true;
    }
    tables_[1] = fresh;
    rehash_index_ = 0;
    return true;
  }

  void grow_if_needed() {
    if (tables_[0].slots == nullptr) {
      // The first insert needs an array whatever the state of the flags, and there is no
      // smaller table to fall back on.
      if (!start_resize(kMinBuckets)) throw std::bad_alloc();
      return;
    }
    maybe_grow();
  }

  bool maybe_grow() {
    if (rehashing() || pause_depth_ > 0 || tables_[0].slots == nullptr) return false;
    const Table& table = tables_[0];
    const size_t buckets = table.bucket_count();
    if (table.used < buckets * kMaxLoad) return false;
    if (!resize_allowed_ && table.used / buckets < kForcedGrowLoad * kMaxLoad) return false;
    return start_resize(buckets_for(table.used + 1));
  }

  bool maybe_shrink() {
    if (rehashing() || pause_depth_ > 0 || !resize_allowed_) return false;
    const Table& table = tables_[0];
    const size_t buckets = table.bucket_count();
    if (buckets <= kMinBuckets || table.used * 100 >= buckets * kMaxLoad * kShrinkFillPercent) {
      return false;
    }
    // Room for one more node below the load that grows, so the next insert does not grow
    // right back.
    return start_resize(buckets_for(table.used + 1));
  }

  // The fewest buckets (a power of two, at least kMinBuckets) that hold `count` nodes at
  // kMaxLoad.
  static size_t buckets_for(size_t count) {
    return std::max(kMinBuckets, std::bit_ceil((count + kMaxLoad - 1) / kMaxLoad));
  }

  // Frees the small arrays of `table`'s buckets (not their nodes) and the bucket array.
  static void release_table(Table& table) {
    if (table.array_bytes > 0) {
      for (size_t i = 0; i < table.bucket_count(); ++i) {
        if (is_array(table.slots[i])) free_array(table.slots[i], table);
      }
    }
    free_slots(table);
    table = Table{};
  }

  void release_arrays() {
    release_table(tables_[0]);
    release_table(tables_[1]);
    rehash_index_ = kNotRehashing;
  }

  void take(HashTable& other) {
    tables_[0] = std::exchange(other.tables_[0], Table{});
    tables_[1] = std::exchange(other.tables_[1], Table{});
    rehash_index_ = std::exchange(other.rehash_index_, kNotRehashing);
    resize_allowed_ = other.resize_allowed_;
    pause_depth_ = 0;
  }

  uint64_t fingerprint() const {
    uint64_t mix = 0;
    for (const Table& table : tables_) {
      for (uint64_t part : {reinterpret_cast<uint64_t>(table.slots), table.mask,
                            static_cast<uint64_t>(table.used)}) {
        mix = (mix ^ part) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
      }
    }
    return mix ^ rehash_index_;
  }

  Table tables_[2];
  size_t rehash_index_ = kNotRehashing;  // next bucket of tables_[0] to move, while rehashing
  uint32_t pause_depth_ = 0;             // scans in progress (scan callbacks may nest scans)
  bool resize_allowed_ = true;
};

}  // namespace keywarden
