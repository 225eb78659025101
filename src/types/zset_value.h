// A sorted set value: unique byte-string members, each with a double score (never NaN), ordered
// by score and then by member bytes (memcmp order, a shorter prefix first), in one of the two
// encodings Redis 7.0 reports through OBJECT ENCODING.
//
// "listpack": one flat buffer (a std::string) of entries kept in (score, member) order, each
//   header   LEB128 of member length * 2 + 1 when the score is stored as an integer
//   member   the bytes
//   score    an integral score of magnitude below 2^53 as a zigzag LEB128 integer (exact both
//            ways; -0 is stored as 0, as Redis's listpack does), any other as the 8-byte double
//   back     the byte size of the three fields above, LEB128 with its bytes reversed, so a
//            walk can step back to the previous entry (types/packed_length.h)
// Lookups by member, score or rank walk the buffer (as Redis's zzl* functions do); cheap and
// compact for the small sets that dominate real keyspaces (leaderboards of a few entries,
// delay queues, rate-limit windows): one allocation for the whole set.
//
// "skiplist": Pugh's skiplist, with Redis's additions: equal scores allowed (ties ordered by
// member), a backward pointer on the bottom level for reverse walks, and a span on every
// forward link (how many bottom-level steps it jumps) so that rank queries and rank ranges
// are O(log n). Beside it a StringTable maps member → skiplist node for O(1) ZSCORE/ZREM and
// carries SCAN's reverse-binary cursor guarantee. The member bytes live once, in the table
// element; the skiplist node points at them (table elements never move until erased).
//
// Conversions follow Redis 7.0: a listpack becomes a skiplist before an insertion that would
// make it hold more than max_listpack_entries members or a member longer than
// max_listpack_value bytes, and never converts back on its own; only a result built whole
// (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE: from_sorted()) picks the listpack when
// it fits.
//
// Lex ranges assume, as Redis does, that the members in range share one score; with mixed
// scores the listpack walks linearly and the skiplist descends its levels exactly as Redis's
// zzl*/zsl* functions do, so each encoding answers what Redis's same encoding answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/aggregate.h"
#include "types/string_table.h"

namespace keywarden {

// Redis 7.0's defaults for zset-max-listpack-entries and zset-max-listpack-value.
inline constexpr int64_t kDefaultZSetMaxListpackEntries = 128;
inline constexpr int64_t kDefaultZSetMaxListpackValue = 64;

struct ZSetLimits {
  int64_t max_listpack_entries = kDefaultZSetMaxListpackEntries;
  int64_t max_listpack_value = kDefaultZSetMaxListpackValue;
};

// A score interval; either end may be exclusive, either may be infinite.
struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;

  bool above_min(double score) const { return min_exclusive ? score > min : score >= min; }
  bool below_max(double score) const { return max_exclusive ? score < max : score <= max; }
  bool contains(double score) const { return above_min(score) && below_max(score); }
  // True when no score can be in range (min above max, or a point with an open end).
  bool always_empty() const {
    return min > max || (min == max && (min_exclusive || max_exclusive));
  }
};

// One end of a lex range: a member ("[a" inclusive, "(a" exclusive) or an infinity ("-", "+").
struct LexBound {
  enum class Kind : uint8_t { kMinusInfinity, kMember, kPlusInfinity };
  Kind kind = Kind::kMember;
  bool exclusive = false;
  std::string member;
};

// Compares a member with a bound (Redis's sdscmplex): <0, 0 or >0.
int compare_with_bound(std::string_view member, const LexBound& bound);

struct LexRange {
  LexBound min;
  LexBound max;

  bool above_min(std::string_view member) const {
    const int cmp = compare_with_bound(member, min);
    return min.exclusive ? cmp > 0 : cmp >= 0;
  }
  bool below_max(std::string_view member) const {
    const int cmp = compare_with_bound(member, max);
    return max.exclusive ? cmp < 0 : cmp <= 0;
  }
  bool contains(std::string_view member) const { return above_min(member) && below_max(member); }
  // True when min lies above max, or they meet with an open end (also "- -" and "+ +").
  bool always_empty() const;
};

class ZSetValue final : public Aggregate {
  struct SkipNode;
  struct SkipList;

 public:
  // One member and its score (what from_sorted() takes and pop() returns).
  struct Element {
    std::string member;
    double score = 0;
  };

  // ZADD's options, as Redis's ZADD_IN_* flags.
  enum AddFlags : uint8_t {
    kAddNone = 0,
    kAddNx = 1 << 0,    // only add new members
    kAddXx = 1 << 1,    // only update existing members
    kAddGt = 1 << 2,    // update only when the new score is greater
    kAddLt = 1 << 3,    // update only when the new score is less
    kAddIncr = 1 << 4,  // add the score to the current one (ZINCRBY)
  };
  enum class AddResult : uint8_t {
    kAdded,      // a new member
    kUpdated,    // an existing member got another score
    kUnchanged,  // an existing member, the same score: processed, nothing changed
    kSkipped,    // NX/XX/GT/LT said no: not processed
    kNaN,        // the increment would make the score NaN: nothing changed
  };

  // An empty set, in the listpack encoding unless `skiplist`.
  explicit ZSetValue(bool skiplist = false);
  ~ZSetValue() override;
  ZSetValue(const ZSetValue& other);
  ZSetValue& operator=(const ZSetValue& other);
  ZSetValue(ZSetValue&&) noexcept;
  ZSetValue& operator=(ZSetValue&&) noexcept;

  // A set holding `elements`, which must be sorted by (score, member) without duplicate
  // members: a listpack when it fits the limits, else a skiplist (what Redis's store commands
  // end with).
  static std::unique_ptr<ZSetValue> from_sorted(std::vector<Element> elements,
                                                const ZSetLimits& limits);

  bool is_listpack() const { return skiplist_ == nullptr; }
  Encoding encoding() const override {
    return is_listpack() ? Encoding::kListpack : Encoding::kSkiplist;
  }
  size_t size() const override;
  bool empty() const { return size() == 0; }
  std::unique_ptr<Aggregate> clone() const override { return std::make_unique<ZSetValue>(*this); }
  size_t payload_bytes() const override;
  // DEBUG HTSTATS-KEY: the chain length of every bucket of the skiplist encoding's member
  // table (empty for a listpack).
  std::vector<uint32_t> chain_lengths() const;

  // The score of `member` into *score; false when absent.
  bool score_of(std::string_view member, double* score) const;
  bool contains(std::string_view member) const { return score_of(member, nullptr); }

  // ZADD/ZINCRBY on one member (Redis's zsetAdd). *new_score gets the member's score after
  // the call when the result is kAdded, kUpdated or kUnchanged. Converts a listpack that would
  // outgrow the limits first. `score` must not be NaN.
  AddResult add(std::string_view member, double score, uint8_t flags, const ZSetLimits& limits,
                double* new_score = nullptr);
  // Adds `member` (absent) or changes its score, ignoring options.
  void set(std::string_view member, double score, const ZSetLimits& limits) {
    add(member, score, kAddNone, limits);
  }
  // True when the member was there.
  bool remove(std::string_view member);

  // 0-based rank of `member` counted from the lowest score (from the highest when `reverse`),
  // its score into *score when given; -1 when absent.
  int64_t rank(std::string_view member, bool reverse, double* score = nullptr) const;

  // A position in rank order, or past either end (valid() false). Valid until the next change.
  class Cursor {
   public:
    bool valid() const;
    std::string_view member() const;
    double score() const;
    // Towards higher ranks (higher scores).
    void next();
    // Towards lower ranks.
    void prev();
    // Asks the cache for the next element (skiplist nodes are scattered in memory), so that a
    // walk doing real work per element (GEOSEARCH's distance tests) overlaps the load with it.
    void prefetch_next() const;

   private:
    friend class ZSetValue;
    const ZSetValue* zset_ = nullptr;
    size_t index_ = 0;                // listpack: rank, or kNotFound past either end
    size_t offset_ = 0;               // listpack: where the entry starts in the buffer
    const SkipNode* node_ = nullptr;  // skiplist
  };

  // The element at `rank` (0-based, from the lowest); invalid when rank >= size().
  Cursor at_rank(size_t rank) const;
  // The lowest / highest element in range, or an invalid cursor when the range holds none.
  Cursor first_in(const ScoreRange& range) const;
  Cursor last_in(const ScoreRange& range) const;
  Cursor first_in(const LexRange& range) const;
  Cursor last_in(const LexRange& range) const;
  // Number of elements in range (ZCOUNT, ZLEXCOUNT), computed as Redis computes it.
  size_t count_in(const ScoreRange& range) const;
  size_t count_in(const LexRange& range) const;

  // Removes the elements of ranks start..end (0-based, inclusive, end < size()); returns how
  // many went.
  size_t remove_rank_range(size_t start, size_t end);
  // Removes the elements in range; returns how many went.
  size_t remove_range(const ScoreRange& range);
  size_t remove_range(const LexRange& range);
  // Removes and returns the lowest (or highest) element. The set must not be empty.
  Element pop(bool highest);

  // Calls visit(member, score) for every element from the lowest.
  template <typename Fn>
  void for_each(Fn&& visit) const {
    for (Cursor cursor = at_rank(0); cursor.valid(); cursor.next()) {
      visit(cursor.member(), cursor.score());
    }
  }

  // A uniformly chosen element (the set must not be empty).
  std::pair<std::string_view, double> random_element(std::mt19937_64& rng) const;
  // min(count, size()) distinct elements chosen at random, in no particular order.
  std::vector<std::pair<std::string_view, double>> random_distinct(size_t count,
                                                                   std::mt19937_64& rng) const;

  // One SCAN step calling visit(member, score). A listpack returns everything and cursor 0;
  // a skiplist walks its table's bucket `cursor` and returns the next cursor (0 at the end).
  template <typename Fn>
  uint64_t scan(uint64_t cursor, Fn&& visit) const;

  // Converts to the skiplist (no-op when already there) / to the listpack (no-op when there).
  void convert_to_skiplist();
  void convert_to_listpack();
  // Whether the elements would fit a listpack under `limits`.
  bool fits_listpack(const ZSetLimits& limits) const;

  // Checks the skiplist's links, spans, order and table (tests).
  bool check_invariants() const;

 private:
  struct SkipLevel {
    SkipNode* forward;
    size_t span;  // bottom-level steps this link jumps
  };
  struct SkipNode {
    double score;
    const std::string* member;  // the table element's key (null for the header)
    SkipNode* backward;
    uint32_t height;
    SkipLevel levels[];  // `height` of them
  };
  struct TableEntry {
    std::string key;
    SkipNode* node;
  };
  using Table = StringTable<TableEntry>;
  struct SkipList {
    SkipNode* header = nullptr;
    SkipNode* tail = nullptr;
    size_t length = 0;
    uint32_t level = 1;
    size_t node_bytes = 0;  // heap bytes of all nodes, the header included
    Table table;
    SkipList();
    ~SkipList();
  };

  static SkipNode* new_node(uint32_t height, double score, const std::string* member,
                            size_t* bytes);
  static void free_node(SkipNode* node, size_t* bytes);
  static uint32_t random_height();
  static bool node_before(const SkipNode* node, double score, std::string_view member) {
    // The member lives in the table, a pointer away: read it only when the scores tie, or
    // every step of a search pays a cache miss for it.
    if (node->score != score) return node->score < score;
    return std::string_view(*node->member) < member;
  }

  // Skiplist primitives (Redis's zsl*).
  SkipNode* skip_insert(double score, const std::string* member);
  // Fills update[] with, at each level, the last node before (score, member).
  void skip_find_update(double score, std::string_view member, SkipNode** update) const;
  void skip_unlink(SkipNode* node, SkipNode** update);
  // Unlinks and frees the node of (score, member) and erases the member from the table.
  void skip_delete(double score, std::string_view member);
  size_t skip_rank(double score, std::string_view member) const;  // 1-based, 0 when absent
  const SkipNode* skip_at_rank(size_t rank) const;                // 1-based
  void skip_insert_member(std::string_view member, double score);

  // Listpack helpers (the layout is in the header comment).
  struct PackedEntry {
    std::string_view member;
    double score;
    size_t next;  // offset of the following entry
  };
  PackedEntry listpack_read(size_t offset) const;
  // Offset of the entry before the one at `offset` (which must not be the first).
  size_t listpack_prev(size_t offset) const;
  static void listpack_encode(std::string& out, std::string_view member, double score);
  // Offset of `member`'s entry, its rank into *index; npos when absent.
  size_t listpack_find(std::string_view member, size_t* index = nullptr) const;
  size_t listpack_insert_position(double score, std::string_view member) const;
  void listpack_insert(std::string_view member, double score);
  void listpack_erase(size_t offset, size_t end, size_t entries);

  Cursor cursor_at_index(size_t index) const;
  Cursor cursor_at_node(const SkipNode* node) const;
  size_t rank_of(const Cursor& cursor) const;  // 0-based
  // Removes `count` elements from `first` on, walking upwards.
  size_t remove_from(Cursor first, size_t count);

  std::string listpack_;  // count_ entries
  uint32_t count_ = 0;
  std::unique_ptr<SkipList> skiplist_;
};

template <typename Fn>
uint64_t ZSetValue::scan(uint64_t cursor, Fn&& visit) const {
  if (skiplist_ == nullptr) {
    for_each(visit);
    return 0;
  }
  return skiplist_->table.scan(cursor, [&](const TableEntry& entry) {
    visit(std::string_view(entry.key), entry.node->score);
  });
}

}  // namespace keywarden
