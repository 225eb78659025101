// The sorted set's two encodings, the skiplist with spans, and the conversions between them
// (see zset_value.h).
#include "types/zset_value.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>

#include "common/prefetch.h"
#include "types/packed_buffer.h"
#include "types/packed_length.h"

namespace keywarden {
namespace {

// Redis's ZSKIPLIST_MAXLEVEL and ZSKIPLIST_P: enough levels for 2^64 elements at p = 1/4.
constexpr uint32_t kMaxHeight = 32;
constexpr uint32_t kLevelUpThreshold = 0xFFFF / 4;

constexpr size_t kNotFound = static_cast<size_t>(-1);

// A listpack stores an integral score as an integer, so a -0 score comes back as 0 there
// (Redis's double2ll); the skiplist keeps the sign.
double listpack_score(double score) { return score == 0 ? 0.0 : score; }

size_t string_heap_bytes(const std::string& text) {
  return text.capacity() > 15 ? text.capacity() + 1 : 0;
}

// Integral scores of smaller magnitude convert to int64_t and back exactly.
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

bool stored_as_integer(double score) {
  return std::fabs(score) < kExactIntegerLimit &&
         score == static_cast<double>(static_cast<int64_t>(score));
}

// Orders elements by score, then by member bytes.
bool element_less(double a_score, std::string_view a_member, double b_score,
                  std::string_view b_member) {
  return a_score < b_score || (a_score == b_score && a_member < b_member);
}

}  // namespace

int compare_with_bound(std::string_view member, const LexBound& bound) {
  switch (bound.kind) {
    case LexBound::Kind::kMinusInfinity:
      return 1;
    case LexBound::Kind::kPlusInfinity:
      return -1;
    case LexBound::Kind::kMember:
      break;
  }
  const int cmp = member.compare(bound.member);
  return cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
}

bool LexRange::always_empty() const {
  int cmp;
  if (min.kind == max.kind && min.kind != LexBound::Kind::kMember) {
    cmp = 0;
  } else if (min.kind == LexBound::Kind::kMinusInfinity ||
             max.kind == LexBound::Kind::kPlusInfinity) {
    cmp = -1;
  } else if (min.kind == LexBound::Kind::kPlusInfinity ||
             max.kind == LexBound::Kind::kMinusInfinity) {
    cmp = 1;
  } else {
    cmp = min.member.compare(max.member);
  }
  return cmp > 0 || (cmp == 0 && (min.exclusive || max.exclusive));
}

// --- Skiplist nodes ------------------------------------------------------------------------

ZSetValue::SkipNode* ZSetValue::new_node(uint32_t height, double score, const std::string* member,
                                         size_t* bytes) {
  const size_t size = sizeof(SkipNode) + height * sizeof(SkipLevel);
  void* memory = ::operator new(size);
  SkipNode* node = static_cast<SkipNode*>(memory);
  node->score = score;
  node->member = member;
  node->backward = nullptr;
  node->height = height;
  for (uint32_t i = 0; i < height; ++i) node->levels[i] = SkipLevel{nullptr, 0};
  *bytes += size;
  return node;
}

void ZSetValue::free_node(SkipNode* node, size_t* bytes) {
  *bytes -= sizeof(SkipNode) + node->height * sizeof(SkipLevel);
  ::operator delete(node);
}

uint32_t ZSetValue::random_height() {
  // A private xorshift generator: heights need no quality beyond independence, and this keeps
  // skiplists out of the keyspace's seeded generator (whose sequence RANDOMKEY and friends use).
  thread_local uint64_t state = 0x9E3779B97F4A7C15ULL;
  uint32_t height = 1;
  while (height < kMaxHeight) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    if ((state & 0xFFFF) >= kLevelUpThreshold) break;
    ++height;
  }
  return height;
}

ZSetValue::SkipList::SkipList() { header = new_node(kMaxHeight, 0, nullptr, &node_bytes); }

ZSetValue::SkipList::~SkipList() {
  SkipNode* node = header;
  while (node != nullptr) {
    SkipNode* next = node->levels[0].forward;
    free_node(node, &node_bytes);
    node = next;
  }
}

ZSetValue::SkipNode* ZSetValue::skip_insert(double score, const std::string* member) {
  SkipList& list = *skiplist_;
  SkipNode* update[kMaxHeight];
  size_t rank[kMaxHeight];
  SkipNode* x = list.header;
  for (int i = static_cast<int>(list.level) - 1; i >= 0; --i) {
    rank[i] = i == static_cast<int>(list.level) - 1 ? 0 : rank[i + 1];
    while (x->levels[i].forward != nullptr && node_before(x->levels[i].forward, score, *member)) {
      rank[i] += x->levels[i].span;
      x = x->levels[i].forward;
    }
    update[i] = x;
  }
  const uint32_t height = random_height();
  if (height > list.level) {
    for (uint32_t i = list.level; i < height; ++i) {
      rank[i] = 0;
      update[i] = list.header;
      update[i]->levels[i].span = list.length;
    }
    list.level = height;
  }
  x = new_node(height, score, member, &list.node_bytes);
  for (uint32_t i = 0; i < height; ++i) {
    x->levels[i].forward = update[i]->levels[i].forward;
    update[i]->levels[i].forward = x;
    x->levels[i].span = update[i]->levels[i].span - (rank[0] - rank[i]);
    update[i]->levels[i].span = rank[0] - rank[i] + 1;
  }
  for (uint32_t i = height; i < list.level; ++i) ++update[i]->levels[i].span;
  x->backward = update[0] == list.header ? nullptr : update[0];
  if (x->levels[0].forward != nullptr) {
    x->levels[0].forward->backward = x;
  } else {
    list.tail = x;
  }
  ++list.length;
  return x;
}

void ZSetValue::skip_find_update(double score, std::string_view member, SkipNode** update) const {
  SkipNode* x = skiplist_->header;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && node_before(x->levels[i].forward, score, member)) {
      x = x->levels[i].forward;
    }
    update[i] = x;
  }
}

void ZSetValue::skip_unlink(SkipNode* node, SkipNode** update) {
  SkipList& list = *skiplist_;
  for (uint32_t i = 0; i < list.level; ++i) {
    if (update[i]->levels[i].forward == node) {
      update[i]->levels[i].span += node->levels[i].span - 1;
      update[i]->levels[i].forward = node->levels[i].forward;
    } else {
      --update[i]->levels[i].span;
    }
  }
  if (node->levels[0].forward != nullptr) {
    node->levels[0].forward->backward = node->backward;
  } else {
    list.tail = node->backward;
  }
  while (list.level > 1 && list.header->levels[list.level - 1].forward == nullptr) --list.level;
  --list.length;
}

void ZSetValue::skip_delete(double score, std::string_view member) {
  SkipNode* update[kMaxHeight];
  skip_find_update(score, member, update);
  SkipNode* node = update[0]->levels[0].forward;
  skip_unlink(node, update);
  free_node(node, &skiplist_->node_bytes);
  // `member` may view the table element itself: erase it last.
  skiplist_->table.erase(member);
}

size_t ZSetValue::skip_rank(double score, std::string_view member) const {
  const SkipNode* x = skiplist_->header;
  size_t rank = 0;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (
        x->levels[i].forward != nullptr &&
        !element_less(score, member, x->levels[i].forward->score, *x->levels[i].forward->member)) {
      rank += x->levels[i].span;
      x = x->levels[i].forward;
    }
    if (x->member != nullptr && *x->member == member) return rank;
  }
  return 0;
}

const ZSetValue::SkipNode* ZSetValue::skip_at_rank(size_t rank) const {
  const SkipNode* x = skiplist_->header;
  size_t traversed = 0;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && traversed + x->levels[i].span <= rank) {
      traversed += x->levels[i].span;
      x = x->levels[i].forward;
    }
    if (traversed == rank) return x;
  }
  return nullptr;
}

void ZSetValue::skip_insert_member(std::string_view member, double score) {
  TableEntry& entry = skiplist_->table.insert_new(TableEntry{std::string(member), nullptr});
  entry.node = skip_insert(score, &entry.key);
}

// --- Construction --------------------------------------------------------------------------

ZSetValue::ZSetValue(bool skiplist) {
  if (skiplist) skiplist_ = std::make_unique<SkipList>();
}

ZSetValue::~ZSetValue() = default;
ZSetValue::ZSetValue(ZSetValue&&) noexcept = default;
ZSetValue& ZSetValue::operator=(ZSetValue&&) noexcept = default;

ZSetValue::ZSetValue(const ZSetValue& other) : listpack_(other.listpack_), count_(other.count_) {
  if (other.skiplist_ == nullptr) return;
  skiplist_ = std::make_unique<SkipList>();
  skiplist_->table.reserve(other.size());
  other.for_each(
      [this](std::string_view member, double score) { skip_insert_member(member, score); });
}

ZSetValue& ZSetValue::operator=(const ZSetValue& other) {
  if (this != &other) *this = ZSetValue(other);
  return *this;
}

std::unique_ptr<ZSetValue> ZSetValue::from_sorted(std::vector<Element> elements,
                                                  const ZSetLimits& limits) {
  bool fits = static_cast<int64_t>(elements.size()) <= limits.max_listpack_entries;
  for (size_t i = 0; fits && i < elements.size(); ++i) {
    fits = static_cast<int64_t>(elements[i].member.size()) <= limits.max_listpack_value;
  }
  auto zset = std::make_unique<ZSetValue>(!fits);
  if (fits) {
    for (const Element& element : elements) {
      listpack_encode(zset->listpack_, element.member, element.score);
    }
    packed::trim(zset->listpack_);
    zset->count_ = static_cast<uint32_t>(elements.size());
    return zset;
  }
  zset->skiplist_->table.reserve(elements.size());
  for (const Element& element : elements) zset->skip_insert_member(element.member, element.score);
  return zset;
}

size_t ZSetValue::size() const { return skiplist_ == nullptr ? count_ : skiplist_->length; }

// --- Listpack helpers ----------------------------------------------------------------------

ZSetValue::PackedEntry ZSetValue::listpack_read(size_t offset) const {
  const std::string_view bytes = listpack_;
  const size_t start = offset;
  const size_t header = packed::read_length(bytes, &offset);
  const size_t length = header >> 1;
  PackedEntry entry{bytes.substr(offset, length), 0, 0};
  offset += length;
  if ((header & 1) != 0) {
    const uint64_t zigzag = packed::read_length(bytes, &offset);
    entry.score =
        static_cast<double>(static_cast<int64_t>(zigzag >> 1) ^ -static_cast<int64_t>(zigzag & 1));
  } else {
    std::memcpy(&entry.score, bytes.data() + offset, sizeof(double));
    offset += sizeof(double);
  }
  // The backward length is read from its end only; its size follows from what it holds.
  entry.next = offset + packed::length_size(offset - start);
  return entry;
}

size_t ZSetValue::listpack_prev(size_t offset) const {
  const size_t body = packed::read_back_length(listpack_, &offset);
  return offset - body;
}

void ZSetValue::listpack_encode(std::string& out, std::string_view member, double score) {
  score = listpack_score(score);
  const size_t start = out.size();
  const bool integer = stored_as_integer(score);
  packed::append_length(out, member.size() * 2 + (integer ? 1 : 0));
  out.append(member);
  if (integer) {
    const auto value = static_cast<int64_t>(score);
    packed::append_length(out,
                          (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
  } else {
    char raw[sizeof(double)];
    std::memcpy(raw, &score, sizeof(double));
    out.append(raw, sizeof(double));
  }
  packed::append_back_length(out, out.size() - start);
}

size_t ZSetValue::listpack_find(std::string_view member, size_t* index) const {
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const PackedEntry entry = listpack_read(offset);
    if (entry.member == member) {
      if (index != nullptr) *index = i;
      return offset;
    }
    offset = entry.next;
  }
  return kNotFound;
}

size_t ZSetValue::listpack_insert_position(double score, std::string_view member) const {
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const PackedEntry entry = listpack_read(offset);
    if (!element_less(entry.score, entry.member, score, member)) break;
    offset = entry.next;
  }
  return offset;
}

void ZSetValue::listpack_insert(std::string_view member, double score) {
  std::string encoded;
  listpack_encode(encoded, member, score);
  packed::reserve_more(listpack_, encoded.size());
  listpack_.insert(listpack_insert_position(score, member), encoded);
  ++count_;
}

void ZSetValue::listpack_erase(size_t offset, size_t end, size_t entries) {
  listpack_.erase(offset, end - offset);
  count_ -= static_cast<uint32_t>(entries);
}

// --- Lookups and single-member changes -----------------------------------------------------

bool ZSetValue::score_of(std::string_view member, double* score) const {
  if (skiplist_ == nullptr) {
    const size_t offset = listpack_find(member);
    if (offset == kNotFound) return false;
    if (score != nullptr) *score = listpack_read(offset).score;
    return true;
  }
  const TableEntry* entry = skiplist_->table.find(member);
  if (entry == nullptr) return false;
  if (score != nullptr) *score = entry->node->score;
  return true;
}

ZSetValue::AddResult ZSetValue::add(std::string_view member, double score, uint8_t flags,
                                    const ZSetLimits& limits, double* new_score) {
  const bool incr = (flags & kAddIncr) != 0;
  const bool nx = (flags & kAddNx) != 0;
  const bool xx = (flags & kAddXx) != 0;
  const bool gt = (flags & kAddGt) != 0;
  const bool lt = (flags & kAddLt) != 0;
  if (std::isnan(score)) return AddResult::kNaN;

  if (skiplist_ == nullptr) {
    const size_t offset = listpack_find(member);
    if (offset != kNotFound) {
      if (nx) return AddResult::kSkipped;
      const PackedEntry entry = listpack_read(offset);
      const double current = entry.score;
      if (incr) {
        score += current;
        if (std::isnan(score)) return AddResult::kNaN;
      }
      if ((lt && score >= current) || (gt && score <= current)) return AddResult::kSkipped;
      if (new_score != nullptr) *new_score = score;
      if (score == current) return AddResult::kUnchanged;
      // Take the member out of the buffer before the entry goes.
      const std::string moved(entry.member);
      listpack_erase(offset, entry.next, 1);
      listpack_insert(moved, score);
      return AddResult::kUpdated;
    }
    if (xx) return AddResult::kSkipped;
    // Checked before inserting, as Redis does: the listpack never holds more than the limit.
    if (static_cast<int64_t>(count_) + 1 <= limits.max_listpack_entries &&
        static_cast<int64_t>(member.size()) <= limits.max_listpack_value) {
      listpack_insert(member, score);
      if (new_score != nullptr) *new_score = score;
      return AddResult::kAdded;
    }
    convert_to_skiplist();
  }

  TableEntry* entry = skiplist_->table.find(member);
  if (entry != nullptr) {
    if (nx) return AddResult::kSkipped;
    SkipNode* node = entry->node;
    const double current = node->score;
    if (incr) {
      score += current;
      if (std::isnan(score)) return AddResult::kNaN;
    }
    if ((lt && score >= current) || (gt && score <= current)) return AddResult::kSkipped;
    if (new_score != nullptr) *new_score = score;
    if (score == current) return AddResult::kUnchanged;
    // The node may keep its place when its neighbours still bracket the new score.
    const SkipNode* before = node->backward;
    const SkipNode* after = node->levels[0].forward;
    if ((before == nullptr || node_before(before, score, entry->key)) &&
        (after == nullptr || element_less(score, entry->key, after->score, *after->member))) {
      node->score = score;
      return AddResult::kUpdated;
    }
    SkipNode* update[kMaxHeight];
    skip_find_update(current, entry->key, update);
    skip_unlink(node, update);
    free_node(node, &skiplist_->node_bytes);
    entry->node = skip_insert(score, &entry->key);
    return AddResult::kUpdated;
  }
  if (xx) return AddResult::kSkipped;
  skip_insert_member(member, score);
  if (new_score != nullptr) *new_score = score;
  return AddResult::kAdded;
}

bool ZSetValue::remove(std::string_view member) {
  if (skiplist_ == nullptr) {
    const size_t offset = listpack_find(member);
    if (offset == kNotFound) return false;
    listpack_erase(offset, listpack_read(offset).next, 1);
    return true;
  }
  const TableEntry* entry = skiplist_->table.find(member);
  if (entry == nullptr) return false;
  skip_delete(entry->node->score, entry->key);
  return true;
}

int64_t ZSetValue::rank(std::string_view member, bool reverse, double* score) const {
  const size_t length = size();
  size_t rank0;
  if (skiplist_ == nullptr) {
    const size_t offset = listpack_find(member, &rank0);
    if (offset == kNotFound) return -1;
    if (score != nullptr) *score = listpack_read(offset).score;
  } else {
    const TableEntry* entry = skiplist_->table.find(member);
    if (entry == nullptr) return -1;
    if (score != nullptr) *score = entry->node->score;
    rank0 = skip_rank(entry->node->score, entry->key) - 1;
  }
  return static_cast<int64_t>(reverse ? length - 1 - rank0 : rank0);
}

// --- Cursors and ranges --------------------------------------------------------------------

bool ZSetValue::Cursor::valid() const {
  return zset_->skiplist_ == nullptr ? index_ < zset_->count_ : node_ != nullptr;
}

std::string_view ZSetValue::Cursor::member() const {
  return zset_->skiplist_ == nullptr ? zset_->listpack_read(offset_).member
                                     : std::string_view(*node_->member);
}

double ZSetValue::Cursor::score() const {
  return zset_->skiplist_ == nullptr ? zset_->listpack_read(offset_).score : node_->score;
}

void ZSetValue::Cursor::prefetch_next() const {
  if (zset_->skiplist_ == nullptr || node_ == nullptr) return;
  const SkipNode* next = node_->levels[0].forward;
  if (next != nullptr) prefetch_read(next);
}

void ZSetValue::Cursor::next() {
  if (zset_->skiplist_ == nullptr) {
    offset_ = zset_->listpack_read(offset_).next;
    ++index_;
  } else {
    node_ = node_->levels[0].forward;
  }
}

void ZSetValue::Cursor::prev() {
  if (zset_->skiplist_ == nullptr) {
    if (index_ == 0 || index_ > zset_->count_) {
      index_ = kNotFound;
    } else {
      offset_ = zset_->listpack_prev(offset_);
      --index_;
    }
  } else {
    node_ = node_->backward;
  }
}

ZSetValue::Cursor ZSetValue::cursor_at_index(size_t index) const {
  Cursor cursor;
  cursor.zset_ = this;
  if (index >= count_) {
    cursor.index_ = kNotFound;
    return cursor;
  }
  cursor.index_ = index;
  // Walk from the nearer end.
  if (index <= count_ / 2) {
    for (size_t i = 0; i < index; ++i) cursor.offset_ = listpack_read(cursor.offset_).next;
  } else {
    cursor.offset_ = listpack_.size();
    for (size_t i = count_; i > index; --i) cursor.offset_ = listpack_prev(cursor.offset_);
  }
  return cursor;
}

ZSetValue::Cursor ZSetValue::cursor_at_node(const SkipNode* node) const {
  Cursor cursor;
  cursor.zset_ = this;
  cursor.node_ = node;
  return cursor;
}

ZSetValue::Cursor ZSetValue::at_rank(size_t rank) const {
  if (skiplist_ == nullptr) return cursor_at_index(rank);
  return cursor_at_node(rank < skiplist_->length ? skip_at_rank(rank + 1) : nullptr);
}

size_t ZSetValue::rank_of(const Cursor& cursor) const {
  if (skiplist_ == nullptr) return cursor.index_;
  return skip_rank(cursor.node_->score, *cursor.node_->member) - 1;
}

ZSetValue::Cursor ZSetValue::first_in(const ScoreRange& range) const {
  if (range.always_empty() || empty()) return at_rank(kNotFound);
  if (skiplist_ == nullptr) {
    // Scores ascend: the first entry above min, if it is below max.
    Cursor cursor = at_rank(0);
    while (cursor.valid() && !range.above_min(cursor.score())) cursor.next();
    if (!cursor.valid() || !range.below_max(cursor.score())) return at_rank(kNotFound);
    return cursor;
  }
  const SkipNode* x = skiplist_->header;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && !range.above_min(x->levels[i].forward->score)) {
      x = x->levels[i].forward;
    }
  }
  x = x->levels[0].forward;
  if (x == nullptr || !range.below_max(x->score)) return cursor_at_node(nullptr);
  return cursor_at_node(x);
}

ZSetValue::Cursor ZSetValue::last_in(const ScoreRange& range) const {
  if (range.always_empty() || empty()) return at_rank(kNotFound);
  if (skiplist_ == nullptr) {
    Cursor cursor = at_rank(count_ - 1);
    while (cursor.valid() && !range.below_max(cursor.score())) cursor.prev();
    if (!cursor.valid() || !range.above_min(cursor.score())) return at_rank(kNotFound);
    return cursor;
  }
  const SkipNode* x = skiplist_->header;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && range.below_max(x->levels[i].forward->score)) {
      x = x->levels[i].forward;
    }
  }
  if (x == skiplist_->header || !range.above_min(x->score)) return cursor_at_node(nullptr);
  return cursor_at_node(x);
}

// Lex ranges: Redis first checks that the range is not empty by construction, that the last
// element is not below min and the first not above max; then the listpack scans linearly and
// the skiplist descends its levels. Both agree whenever the members in play share a score.
ZSetValue::Cursor ZSetValue::first_in(const LexRange& range) const {
  const size_t length = size();
  if (range.always_empty() || length == 0) return at_rank(kNotFound);
  if (!range.above_min(at_rank(length - 1).member()) || !range.below_max(at_rank(0).member())) {
    return at_rank(kNotFound);
  }
  if (skiplist_ == nullptr) {
    for (Cursor cursor = at_rank(0); cursor.valid(); cursor.next()) {
      const std::string_view member = cursor.member();
      if (range.above_min(member)) return range.below_max(member) ? cursor : at_rank(kNotFound);
    }
    return at_rank(kNotFound);
  }
  const SkipNode* x = skiplist_->header;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && !range.above_min(*x->levels[i].forward->member)) {
      x = x->levels[i].forward;
    }
  }
  x = x->levels[0].forward;
  if (x == nullptr || !range.below_max(*x->member)) return cursor_at_node(nullptr);
  return cursor_at_node(x);
}

ZSetValue::Cursor ZSetValue::last_in(const LexRange& range) const {
  const size_t length = size();
  if (range.always_empty() || length == 0) return at_rank(kNotFound);
  if (!range.above_min(at_rank(length - 1).member()) || !range.below_max(at_rank(0).member())) {
    return at_rank(kNotFound);
  }
  if (skiplist_ == nullptr) {
    for (Cursor cursor = at_rank(count_ - 1); cursor.valid(); cursor.prev()) {
      const std::string_view member = cursor.member();
      if (range.below_max(member)) return range.above_min(member) ? cursor : at_rank(kNotFound);
    }
    return at_rank(kNotFound);
  }
  const SkipNode* x = skiplist_->header;
  for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
    while (x->levels[i].forward != nullptr && range.below_max(*x->levels[i].forward->member)) {
      x = x->levels[i].forward;
    }
  }
  if (x == skiplist_->header || !range.above_min(*x->member)) return cursor_at_node(nullptr);
  return cursor_at_node(x);
}

size_t ZSetValue::count_in(const ScoreRange& range) const {
  const Cursor first = first_in(range);
  if (!first.valid()) return 0;
  const Cursor last = last_in(range);
  return rank_of(last) - rank_of(first) + 1;
}

size_t ZSetValue::count_in(const LexRange& range) const {
  Cursor cursor = first_in(range);
  if (!cursor.valid()) return 0;
  if (skiplist_ == nullptr) {
    size_t count = 0;
    for (; cursor.valid() && range.below_max(cursor.member()); cursor.next()) ++count;
    return count;
  }
  const size_t length = size();
  size_t count = length - rank_of(cursor);
  const Cursor last = last_in(range);
  if (last.valid()) count -= length - 1 - rank_of(last);
  return count;
}

size_t ZSetValue::remove_from(Cursor first, size_t count) {
  if (count == 0) return 0;
  if (skiplist_ == nullptr) {
    size_t end = first.offset_;
    for (size_t i = 0; i < count; ++i) end = listpack_read(end).next;
    listpack_erase(first.offset_, end, count);
    return count;
  }
  const SkipNode* node = first.node_;
  for (size_t i = 0; i < count; ++i) {
    const SkipNode* next = node->levels[0].forward;
    skip_delete(node->score, *node->member);
    node = next;
  }
  return count;
}

size_t ZSetValue::remove_rank_range(size_t start, size_t end) {
  return remove_from(at_rank(start), end - start + 1);
}

size_t ZSetValue::remove_range(const ScoreRange& range) {
  const Cursor first = first_in(range);
  size_t count = 0;
  for (Cursor cursor = first; cursor.valid() && range.below_max(cursor.score()); cursor.next()) {
    ++count;
  }
  return remove_from(first, count);
}

size_t ZSetValue::remove_range(const LexRange& range) {
  Cursor first;
  if (skiplist_ == nullptr) {
    first = first_in(range);
  } else {
    // Redis's zslDeleteRangeByLex descends to the first member not below min without the
    // emptiness checks of first_in().
    const SkipNode* x = skiplist_->header;
    for (int i = static_cast<int>(skiplist_->level) - 1; i >= 0; --i) {
      while (x->levels[i].forward != nullptr && !range.above_min(*x->levels[i].forward->member)) {
        x = x->levels[i].forward;
      }
    }
    first = cursor_at_node(x->levels[0].forward);
  }
  size_t count = 0;
  for (Cursor cursor = first; cursor.valid() && range.below_max(cursor.member()); cursor.next()) {
    ++count;
  }
  return remove_from(first, count);
}

ZSetValue::Element ZSetValue::pop(bool highest) {
  if (skiplist_ == nullptr) {
    const size_t offset = highest ? listpack_prev(listpack_.size()) : 0;
    const PackedEntry entry = listpack_read(offset);
    Element element{std::string(entry.member), entry.score};
    listpack_erase(offset, entry.next, 1);
    return element;
  }
  const SkipNode* node = highest ? skiplist_->tail : skiplist_->header->levels[0].forward;
  Element element{*node->member, node->score};
  skip_delete(node->score, *node->member);
  return element;
}

// --- Random choice -------------------------------------------------------------------------

std::pair<std::string_view, double> ZSetValue::random_element(std::mt19937_64& rng) const {
  if (skiplist_ == nullptr) {
    const Cursor cursor =
        cursor_at_index(std::uniform_int_distribution<size_t>(0, count_ - 1)(rng));
    return {cursor.member(), cursor.score()};
  }
  const TableEntry& entry = skiplist_->table.random(rng);
  return {entry.key, entry.node->score};
}

std::vector<std::pair<std::string_view, double>> ZSetValue::random_distinct(
    size_t count, std::mt19937_64& rng) const {
  std::vector<std::pair<std::string_view, double>> chosen;
  if (skiplist_ != nullptr) {
    for (const TableEntry* entry : skiplist_->table.random_distinct(count, rng)) {
      chosen.emplace_back(entry->key, entry->node->score);
    }
    return chosen;
  }
  const size_t total = count_;
  count = std::min(count, total);
  // A partial shuffle of the (small) listpack.
  chosen.reserve(total);
  for_each([&](std::string_view member, double score) { chosen.emplace_back(member, score); });
  for (size_t i = 0; i < count; ++i) {
    std::swap(chosen[i], chosen[std::uniform_int_distribution<size_t>(i, total - 1)(rng)]);
  }
  chosen.resize(count);
  return chosen;
}

// --- Conversions and accounting ------------------------------------------------------------

void ZSetValue::convert_to_skiplist() {
  if (skiplist_ != nullptr) return;
  skiplist_ = std::make_unique<SkipList>();
  skiplist_->table.reserve(count_);
  size_t offset = 0;
  for (size_t i = 0; i < count_; ++i) {
    const PackedEntry packed_entry = listpack_read(offset);
    offset = packed_entry.next;
    TableEntry& entry =
        skiplist_->table.insert_new(TableEntry{std::string(packed_entry.member), nullptr});
    entry.node = skip_insert(packed_entry.score, &entry.key);
  }
  std::string().swap(listpack_);
  count_ = 0;
}

void ZSetValue::convert_to_listpack() {
  if (skiplist_ == nullptr) return;
  std::string entries;
  for (const SkipNode* node = skiplist_->header->levels[0].forward; node != nullptr;
       node = node->levels[0].forward) {
    listpack_encode(entries, *node->member, node->score);
  }
  packed::trim(entries);
  count_ = static_cast<uint32_t>(skiplist_->length);
  skiplist_.reset();
  listpack_ = std::move(entries);
}

bool ZSetValue::fits_listpack(const ZSetLimits& limits) const {
  if (static_cast<int64_t>(size()) > limits.max_listpack_entries) return false;
  bool fits = true;
  for_each([&](std::string_view member, double) {
    if (static_cast<int64_t>(member.size()) > limits.max_listpack_value) fits = false;
  });
  return fits;
}

std::vector<uint32_t> ZSetValue::chain_lengths() const {
  return skiplist_ == nullptr ? std::vector<uint32_t>{} : skiplist_->table.chain_lengths();
}

size_t ZSetValue::payload_bytes() const {
  size_t bytes = sizeof(ZSetValue);
  if (skiplist_ == nullptr) {
    return bytes + string_heap_bytes(listpack_);
  }
  bytes += sizeof(SkipList) + skiplist_->node_bytes + skiplist_->table.structure_bytes();
  skiplist_->table.for_each(
      [&](const TableEntry& entry) { bytes += string_heap_bytes(entry.key); });
  return bytes;
}

bool ZSetValue::check_invariants() const {
  if (skiplist_ == nullptr) {
    // Order forwards, and the backward lengths lead back over the same entries.
    std::vector<size_t> offsets;
    size_t offset = 0;
    for (size_t i = 0; i < count_; ++i) {
      if (offset >= listpack_.size()) return false;
      const PackedEntry entry = listpack_read(offset);
      if (!offsets.empty()) {
        const PackedEntry previous = listpack_read(offsets.back());
        if (!element_less(previous.score, previous.member, entry.score, entry.member)) {
          return false;
        }
      }
      offsets.push_back(offset);
      offset = entry.next;
    }
    if (offset != listpack_.size()) return false;
    for (size_t i = count_; i-- > 0;) {
      offset = listpack_prev(offset);
      if (offset != offsets[i]) return false;
    }
    return true;
  }
  const SkipList& list = *skiplist_;
  // Ranks along the bottom level, with order, backward links and table agreement.
  std::unordered_map<const SkipNode*, size_t> ranks{{list.header, 0}};
  const SkipNode* previous = nullptr;
  for (const SkipNode* node = list.header->levels[0].forward; node != nullptr;
       node = node->levels[0].forward) {
    if (node->backward != previous) return false;
    if (previous != nullptr &&
        !element_less(previous->score, *previous->member, node->score, *node->member)) {
      return false;
    }
    const TableEntry* entry = list.table.find(*node->member);
    if (entry == nullptr || entry->node != node || &entry->key != node->member) return false;
    const size_t rank = ranks.size();
    ranks.emplace(node, rank);
    previous = node;
  }
  if (ranks.size() != list.length + 1 || list.table.size() != list.length) return false;
  if (list.tail != previous) return false;
  auto rank_of_node = [&](const SkipNode* node) { return ranks.at(node); };
  for (uint32_t i = 0; i < list.level; ++i) {
    const SkipNode* x = list.header;
    while (x != nullptr) {
      if (x->height <= i) return false;
      const SkipNode* forward = x->levels[i].forward;
      const size_t expected = forward == nullptr ? list.length - rank_of_node(x)
                                                 : rank_of_node(forward) - rank_of_node(x);
      if (x->levels[i].span != expected) return false;
      x = forward;
    }
  }
  if (list.level > 1 && list.header->levels[list.level - 1].forward == nullptr) return false;
  return true;
}

}  // namespace keywarden
