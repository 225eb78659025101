// ExpiryIndex: the deadline min-heap behind active expiry, checked against a std::multimap that
// mirrors every operation. The heap is private, so its shape is rebuilt from what the entries
// record (expiry_slot()) and what the model says their deadlines are: that is enough to check the
// slot bookkeeping and the parent/child order without reaching into the class.
#include "storage/expiry_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace keywarden {
namespace {

struct EntryDeleter {
  void operator()(Entry* entry) const { Entry::destroy(entry); }
};
using EntryPtr = std::unique_ptr<Entry, EntryDeleter>;

EntryPtr make_entry(std::string_view key) {
  return EntryPtr(Entry::create(key, Value::make_int(0), /*with_expiry=*/true));
}

std::vector<EntryPtr> make_entries(size_t count) {
  std::vector<EntryPtr> entries;
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) entries.push_back(make_entry("key:" + std::to_string(i)));
  return entries;
}

// The reference: which entries are indexed and with which deadline.
class Model {
 public:
  void set(Entry* entry, int64_t deadline) {
    remove(entry);
    positions_[entry] = by_deadline_.emplace(deadline, entry);
    sum_ += deadline;
  }
  void remove(Entry* entry) {
    auto found = positions_.find(entry);
    if (found == positions_.end()) return;
    sum_ -= found->second->first;
    by_deadline_.erase(found->second);
    positions_.erase(found);
  }
  void clear() {
    by_deadline_.clear();
    positions_.clear();
    sum_ = 0;
  }
  bool contains(const Entry* entry) const {
    return positions_.count(const_cast<Entry*>(entry)) != 0;
  }
  int64_t deadline_of(const Entry* entry) const {
    return positions_.at(const_cast<Entry*>(entry))->first;
  }
  size_t size() const { return by_deadline_.size(); }
  int64_t earliest() const {
    return by_deadline_.empty() ? INT64_MAX : by_deadline_.begin()->first;
  }
  int64_t due_before(int64_t now_ms) const {
    return static_cast<int64_t>(
        std::distance(by_deadline_.begin(), by_deadline_.lower_bound(now_ms)));
  }
  // Kept as operations go (cheap enough to check after each one)...
  __int128 sum() const { return sum_; }
  // ...and recomputed from scratch for the full checks.
  __int128 recomputed_sum() const {
    __int128 total = 0;
    for (const auto& [deadline, entry] : by_deadline_) total += deadline;
    return total;
  }
  const std::multimap<int64_t, Entry*>& by_deadline() const { return by_deadline_; }

 private:
  std::multimap<int64_t, Entry*> by_deadline_;
  std::map<Entry*, std::multimap<int64_t, Entry*>::iterator> positions_;
  __int128 sum_ = 0;
};

// Cheap checks, run after every operation.
void check_summary(const ExpiryIndex& index, const Model& model) {
  ASSERT_EQ(index.size(), model.size());
  ASSERT_EQ(index.empty(), model.size() == 0);
  ASSERT_EQ(index.front_deadline(), model.earliest());
  if (model.size() == 0) {
    ASSERT_EQ(index.front(), nullptr);
  } else {
    ASSERT_NE(index.front(), nullptr);
    // Ties allow any of the earliest entries at the front, but it must be one of them.
    ASSERT_TRUE(model.contains(index.front()));
    ASSERT_EQ(model.deadline_of(index.front()), model.earliest());
    ASSERT_EQ(index.front()->expiry_slot(), 0u);
  }
  ASSERT_TRUE(index.deadline_sum() == model.sum());
}

// Full checks: every entry's slot, the heap order, and count_due at assorted cut-offs.
void check_full(const ExpiryIndex& index, const Model& model,
                const std::vector<EntryPtr>& entries) {
  check_summary(index, model);
  ASSERT_TRUE(model.sum() == model.recomputed_sum());
  std::vector<const Entry*> heap(index.size(), nullptr);
  for (const auto& entry : entries) {
    if (!model.contains(entry.get())) {
      ASSERT_EQ(entry->expiry_slot(), kNotInExpiryIndex) << entry->key();
      ASSERT_EQ(index.deadline_of(entry.get()), kNoExpiry) << entry->key();
      continue;
    }
    // The deadline lives in the entry's prefix: what the index answers is what was last set.
    ASSERT_EQ(index.deadline_of(entry.get()), model.deadline_of(entry.get())) << entry->key();
    ASSERT_LT(entry->expiry_slot(), heap.size()) << entry->key();
    ASSERT_EQ(heap[entry->expiry_slot()], nullptr)
        << "two entries claim slot " << entry->expiry_slot();
    heap[entry->expiry_slot()] = entry.get();
  }
  for (size_t i = 1; i < heap.size(); ++i) {
    // The key index is a 4-ary heap.
    ASSERT_LE(model.deadline_of(heap[(i - 1) / 4]), model.deadline_of(heap[i]))
        << "slot " << i << " is earlier than its parent";
  }

  std::vector<int64_t> cut_offs = {INT64_MIN, 0, model.earliest(), INT64_MAX};
  for (const auto& [deadline, entry] : model.by_deadline()) {
    if (cut_offs.size() > 12) break;
    cut_offs.push_back(deadline);
    cut_offs.push_back(deadline + 1);
  }
  if (model.size() > 0) {
    auto middle = model.by_deadline().begin();
    std::advance(middle, model.size() / 2);
    cut_offs.push_back(middle->first);
    cut_offs.push_back(middle->first + 1);
    cut_offs.push_back(model.by_deadline().rbegin()->first);
    cut_offs.push_back(model.by_deadline().rbegin()->first + 1);
  }
  for (int64_t now : cut_offs) {
    const int64_t due = model.due_before(now);
    ASSERT_EQ(index.count_due(now, INT64_MAX), due) << "now " << now;
    ASSERT_EQ(index.count_due(now, due + 1), due) << "now " << now;
    ASSERT_EQ(index.count_due(now, due), due) << "now " << now;
    if (due > 0) {
      ASSERT_EQ(index.count_due(now, due - 1), due - 1) << "now " << now;
    }
    ASSERT_EQ(index.count_due(now, 1), std::min<int64_t>(due, 1)) << "now " << now;
    ASSERT_EQ(index.count_due(now, 0), 0) << "now " << now;
  }
}

struct RandomRun {
  uint64_t seed;
  int64_t deadline_range;  // small ranges make many ties
  size_t entry_count;
};

class ExpiryIndexRandomTest : public ::testing::TestWithParam<RandomRun> {};

TEST_P(ExpiryIndexRandomTest, MirrorsMultimapThroughRandomSetMoveRemove) {
  const RandomRun run = GetParam();
  constexpr int kOperations = 100'000;
  std::mt19937_64 rng(run.seed);
  auto entries = make_entries(run.entry_count);
  ExpiryIndex index;
  Model model;
  // Large deadlines so that the sum outgrows 64 bits.
  const int64_t base = INT64_MAX - run.deadline_range - 1;
  std::uniform_int_distribution<size_t> pick(0, entries.size() - 1);
  std::uniform_int_distribution<int64_t> deadline(0, run.deadline_range);
  std::uniform_int_distribution<int> action(0, 99);

  int inserts = 0, moves_earlier = 0, moves_later = 0, removes = 0, clears = 0;
  for (int op = 0; op < kOperations; ++op) {
    Entry* entry = entries[pick(rng)].get();
    const int what = action(rng);
    if (op % 25'000 == 12'345) {
      ++clears;
      index.clear();
      model.clear();
    } else if (what < 55) {
      int64_t when = base + deadline(rng);
      if (model.contains(entry)) {
        int64_t old = model.deadline_of(entry);
        if (when < old) ++moves_earlier;
        if (when > old) ++moves_later;
      } else {
        ++inserts;
      }
      index.set(entry, when);
      model.set(entry, when);
    } else if (what < 99) {
      if (model.contains(entry)) ++removes;
      index.remove(entry);  // also exercises removing an entry that is not indexed
      model.remove(entry);
    } else {
      // Pop the front, as the active cycle does.
      if (Entry* front = index.front()) {
        index.remove(front);
        model.remove(front);
      }
    }
    ASSERT_NO_FATAL_FAILURE(check_summary(index, model)) << "op " << op;
    if (op % 1021 == 0) {
      ASSERT_NO_FATAL_FAILURE(check_full(index, model, entries)) << "op " << op;
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_full(index, model, entries));
  // The run exercised every path (the mix is fixed by the seed, so these are stable).
  EXPECT_GT(inserts, 1000);
  EXPECT_GT(moves_earlier, 1000);
  EXPECT_GT(moves_later, 1000);
  EXPECT_GT(removes, 1000);
  EXPECT_EQ(clears, 4);

  // Draining from the front yields deadlines in order.
  int64_t previous = INT64_MIN;
  while (Entry* front = index.front()) {
    int64_t when = index.front_deadline();
    ASSERT_GE(when, previous);
    ASSERT_EQ(when, model.deadline_of(front));
    previous = when;
    index.remove(front);
    model.remove(front);
    ASSERT_EQ(front->expiry_slot(), kNotInExpiryIndex);
  }
  ASSERT_NO_FATAL_FAILURE(check_full(index, model, entries));
  EXPECT_TRUE(index.deadline_sum() == 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExpiryIndexRandomTest,
                         ::testing::Values(RandomRun{1, 50, 300}, RandomRun{2, 1'000'000, 2000},
                                           RandomRun{3, 5, 64}, RandomRun{4, 10'000, 1000},
                                           RandomRun{0xfeedface, 200, 5000}),
                         [](const ::testing::TestParamInfo<RandomRun>& info) {
                           return "seed" + std::to_string(info.index);
                         });

TEST(ExpiryIndexTest, EmptyIndex) {
  ExpiryIndex index;
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.front(), nullptr);
  EXPECT_EQ(index.front_deadline(), INT64_MAX);
  EXPECT_EQ(index.count_due(INT64_MAX, 100), 0);
  EXPECT_TRUE(index.deadline_sum() == 0);
  EntryPtr stray = make_entry("stray");
  index.remove(stray.get());  // not indexed: nothing happens
  EXPECT_EQ(stray->expiry_slot(), kNotInExpiryIndex);
  EXPECT_TRUE(index.empty());
}

TEST(ExpiryIndexTest, FrontIsAlwaysTheEarliest) {
  auto entries = make_entries(5);
  ExpiryIndex index;
  index.set(entries[0].get(), 500);
  EXPECT_EQ(index.front(), entries[0].get());
  index.set(entries[1].get(), 300);
  EXPECT_EQ(index.front(), entries[1].get());
  index.set(entries[2].get(), 400);
  EXPECT_EQ(index.front(), entries[1].get());
  EXPECT_EQ(index.front_deadline(), 300);
  // Moving the front later hands the front to the next earliest.
  index.set(entries[1].get(), 900);
  EXPECT_EQ(index.front(), entries[2].get());
  // Moving a deep entry earlier brings it to the front.
  index.set(entries[0].get(), 100);
  EXPECT_EQ(index.front(), entries[0].get());
  EXPECT_EQ(index.front_deadline(), 100);
  index.remove(entries[0].get());
  EXPECT_EQ(index.front(), entries[2].get());
  EXPECT_EQ(index.size(), 2u);
  // Setting the same deadline again changes nothing.
  index.set(entries[2].get(), 400);
  EXPECT_EQ(index.front(), entries[2].get());
  EXPECT_EQ(index.size(), 2u);
  EXPECT_TRUE(index.deadline_sum() == 1300);
}

TEST(ExpiryIndexTest, CountDueIsStrictlyBeforeNowAndCapped) {
  auto entries = make_entries(100);
  ExpiryIndex index;
  for (int i = 0; i < 100; ++i) index.set(entries[i].get(), 1000 + (i % 10));  // ten per ms
  EXPECT_EQ(index.count_due(1000, 1000), 0);  // a deadline equal to now is not due
  EXPECT_EQ(index.count_due(1001, 1000), 10);
  EXPECT_EQ(index.count_due(1005, 1000), 50);
  EXPECT_EQ(index.count_due(1010, 1000), 100);
  EXPECT_EQ(index.count_due(1010, 100), 100);
  EXPECT_EQ(index.count_due(1010, 99), 99);
  EXPECT_EQ(index.count_due(1010, 7), 7);
  EXPECT_EQ(index.count_due(1005, 49), 49);
  EXPECT_EQ(index.count_due(1005, 51), 50);
  EXPECT_EQ(index.count_due(1005, 0), 0);
  EXPECT_EQ(index.count_due(1005, -3), 0);
  EXPECT_EQ(index.count_due(INT64_MIN, INT64_MAX), 0);
}

TEST(ExpiryIndexTest, DeadlineSumIsExactBeyondSixtyFourBits) {
  auto entries = make_entries(4);
  ExpiryIndex index;
  for (auto& entry : entries) index.set(entry.get(), INT64_MAX - 1);
  __int128 expected = static_cast<__int128>(INT64_MAX - 1) * 4;
  EXPECT_TRUE(index.deadline_sum() == expected);
  index.set(entries[0].get(), 5);
  expected += 5 - static_cast<__int128>(INT64_MAX - 1);
  EXPECT_TRUE(index.deadline_sum() == expected);
  index.remove(entries[1].get());
  expected -= INT64_MAX - 1;
  EXPECT_TRUE(index.deadline_sum() == expected);
  // Average, as INFO computes it, with no overflow on the way.
  EXPECT_EQ(static_cast<int64_t>(index.deadline_sum() / static_cast<__int128>(index.size())),
            static_cast<int64_t>(expected / 3));
}

TEST(ExpiryIndexTest, ClearResetsEverySlotAndTheIndexIsReusable) {
  auto entries = make_entries(1000);
  ExpiryIndex index;
  for (size_t i = 0; i < entries.size(); ++i) index.set(entries[i].get(), 5000 - i);
  EXPECT_GT(index.memory_bytes(), 0u);
  index.clear();
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.front(), nullptr);
  EXPECT_EQ(index.front_deadline(), INT64_MAX);
  EXPECT_TRUE(index.deadline_sum() == 0);
  EXPECT_EQ(index.memory_bytes(), 0u);
  for (const auto& entry : entries) {
    EXPECT_EQ(entry->expiry_slot(), kNotInExpiryIndex) << entry->key();
  }
  // Stale slots would corrupt the next use: an entry must be addable again as new.
  for (size_t i = 0; i < entries.size(); i += 2) index.set(entries[i].get(), 10 + i);
  EXPECT_EQ(index.size(), 500u);
  EXPECT_EQ(index.front(), entries[0].get());
  EXPECT_EQ(index.count_due(INT64_MAX, INT64_MAX), 500);
  index.remove(entries[1].get());  // never re-added: must be a no-op
  EXPECT_EQ(index.size(), 500u);
}

// The active cycle pops due keys while commands change TTLs of keys that are due too.
// The array shrinks as the index empties (a mass expiry gives its memory back) and the heap
// stays correct through the shrinks.
TEST(ExpiryIndexTest, ArrayShrinksAsEntriesLeave) {
  auto entries = make_entries(100'000);
  ExpiryIndex index;
  Model model;
  for (size_t i = 0; i < entries.size(); ++i) {
    const int64_t deadline = static_cast<int64_t>((i * 7919) % entries.size());
    index.set(entries[i].get(), deadline);
    model.set(entries[i].get(), deadline);
  }
  const size_t full = index.memory_bytes();
  EXPECT_GE(full, entries.size() * sizeof(Entry*));  // the key index holds entry pointers only
  // Take the earliest 99% from the front, as active expiry does.
  while (index.size() > 1'000) {
    ASSERT_EQ(index.front_deadline(), model.earliest());
    Entry* front = index.front();
    index.remove(front);
    model.remove(front);
  }
  EXPECT_LE(index.memory_bytes(), full / 16);
  check_full(index, model, entries);
}

TEST(ExpiryIndexTest, TtlChangesAndRemovalsWhileKeysAreDue) {
  auto entries = make_entries(200);
  ExpiryIndex index;
  Model model;
  for (int i = 0; i < 200; ++i) {
    index.set(entries[i].get(), 100 + i);
    model.set(entries[i].get(), 100 + i);
  }
  const int64_t now = 200;  // entries 0..99 are due
  ASSERT_EQ(index.count_due(now, INT64_MAX), 100);

  // A due key gets a new TTL in the future (EXPIRE on a key the cycle has not reached yet).
  index.set(entries[50].get(), 10'000);
  model.set(entries[50].get(), 10'000);
  EXPECT_EQ(index.count_due(now, INT64_MAX), 99);
  // A due key is deleted by a command (DEL).
  index.remove(entries[0].get());
  model.remove(entries[0].get());
  EXPECT_EQ(index.front(), entries[1].get());
  EXPECT_EQ(index.count_due(now, INT64_MAX), 98);
  // A due key is persisted, another moved earlier, a future one made due.
  index.remove(entries[10].get());
  model.remove(entries[10].get());
  index.set(entries[99].get(), 1);
  model.set(entries[99].get(), 1);
  index.set(entries[150].get(), 150);
  model.set(entries[150].get(), 150);
  EXPECT_EQ(index.front(), entries[99].get());
  EXPECT_EQ(index.count_due(now, INT64_MAX), 98);
  ASSERT_NO_FATAL_FAILURE(check_full(index, model, entries));

  // Pop due keys from the front, changing others between pops.
  std::mt19937_64 rng(7);
  int popped = 0;
  while (index.front_deadline() < now) {
    Entry* front = index.front();
    ASSERT_LT(model.deadline_of(front), now);
    index.remove(front);
    model.remove(front);
    ++popped;
    Entry* other = entries[rng() % entries.size()].get();
    if (rng() % 2) {
      int64_t when = static_cast<int64_t>(rng() % 400);
      index.set(other, when);
      model.set(other, when);
    } else {
      index.remove(other);
      model.remove(other);
    }
    ASSERT_NO_FATAL_FAILURE(check_summary(index, model));
  }
  EXPECT_GT(popped, 0);
  EXPECT_EQ(index.count_due(now, INT64_MAX), 0);
  EXPECT_EQ(model.due_before(now), 0);
  ASSERT_NO_FATAL_FAILURE(check_full(index, model, entries));
}

}  // namespace
}  // namespace keywarden
