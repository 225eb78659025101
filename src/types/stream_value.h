// A stream (XADD, XRANGE, consumer groups…), laid out as Redis 7.0 lays it out.
//
// Entries live in nodes keyed by the ID of their first entry (the "master ID"), as Redis keeps
// listpacks in a radix tree: each node holds up to stream-node-max-entries entries (live or
// deleted) and about stream-node-max-bytes of packed bytes. Node boundaries matter to what
// clients see: approximate trimming (MAXLEN ~, MINID ~) only drops whole nodes, and XINFO
// reports the node count, so a node is closed under Redis's own rule (its entries, deleted
// ones included, reach the limit, or its listpack size plus the new entry's field bytes reach
// the byte limit; the listpack size is computed as Redis would encode it).
//
// A node's bytes are its entries back to back: a flags byte (deleted, same-fields-as-master),
// the ms difference from the master ID and the sequence (LEB128), then, unless the entry has
// the master's field names, the field count and the names; then the values, each as LEB128
// length and bytes. The master field names are the node's first entry's. Deleting an entry
// only sets its flag (as Redis does); a node whose live entries are all gone is dropped.
//
// Consumer groups keep their pending entries (PEL) by ID, each naming its consumer; each
// consumer keeps the IDs it owns. Groups and consumers are ordered by name, as Redis's rax.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/aggregate.h"

namespace keywarden {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  friend auto operator<=>(const StreamId&, const StreamId&) = default;
  bool is_zero() const { return ms == 0 && seq == 0; }
  static constexpr StreamId max() { return {UINT64_MAX, UINT64_MAX}; }
  // The next / previous ID; false at the end of the ID space.
  bool increment();
  bool decrement();
  std::string to_string() const;
};

// Redis's SCG_INVALID_ENTRIES_READ: a group's read counter that cannot be known.
inline constexpr int64_t kInvalidEntriesRead = -1;

struct StreamPending {
  std::string consumer;  // the owner's name
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 1;
};

struct StreamConsumer {
  int64_t seen_time_ms = 0;
  std::set<StreamId> pending;
};

struct StreamGroup {
  StreamId last_id;
  int64_t entries_read = kInvalidEntriesRead;
  std::map<StreamId, StreamPending> pending;
  std::map<std::string, StreamConsumer, std::less<>> consumers;
};

// One entry as a visitor sees it: valid until the stream changes.
struct StreamEntry {
  StreamId id;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
};

struct StreamTrim {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  bool approx = false;
  int64_t max_length = 0;
  StreamId min_id;
  int64_t limit = 0;  // 0: none
};

class StreamValue final : public Aggregate {
 public:
  StreamValue(int64_t node_max_bytes, int64_t node_max_entries)
      : node_max_bytes_(node_max_bytes), node_max_entries_(node_max_entries) {}

  std::unique_ptr<Aggregate> clone() const override;
  Encoding encoding() const override { return Encoding::kStream; }
  size_t size() const override { return length_; }
  size_t payload_bytes() const override;

  uint64_t length() const { return length_; }
  StreamId last_id() const { return last_id_; }
  StreamId first_id() const { return first_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  size_t node_count() const { return nodes_.size(); }
  void set_last_id(StreamId id) { last_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_max_deleted_id(StreamId id) { max_deleted_id_ = id; }
  void set_node_limits(int64_t max_bytes, int64_t max_entries) {
    node_max_bytes_ = max_bytes;
    node_max_entries_ = max_entries;
  }

  // Appends an entry with `id` (greater than last_id()): `fields` alternates names and values.
  void append(StreamId id, std::span<const std::string_view> fields);
  // Marks the entry `id` deleted; false when there is none.
  bool remove(StreamId id);
  // Trims as XADD/XTRIM do; returns the number of entries removed.
  int64_t trim(const StreamTrim& trim);
  // Whether an entry `id` exists (live).
  bool contains(StreamId id) const;

  // Visits live entries with start <= id <= end, ascending (or descending when `reverse`),
  // until `visit` returns false.
  void for_range(StreamId start, StreamId end, bool reverse,
                 const std::function<bool(const StreamEntry&)>& visit) const;
  // The first or last live entry's ID; false when empty.
  bool edge_id(bool first, StreamId* out) const;

  // Redis 7.0's logical read counter of `id` (streamEstimateDistanceFromFirstEverEntry).
  int64_t estimate_distance(StreamId id) const;
  // Whether a deleted entry lies in [start, end] (streamRangeHasTombstones).
  bool range_has_tombstones(StreamId start, StreamId end = StreamId::max()) const;
  // The lag XINFO reports for `group`; false when it cannot be known (nil).
  bool group_lag(const StreamGroup& group, int64_t* lag) const;

  // --- Persistence (RDB, DUMP) ---------------------------------------------------------
  // A node as Redis's listpack holds it: master ID and fields, live and deleted counts, and
  // every entry with its flags (1: deleted, 2: same fields as the master).
  struct NodeDump {
    StreamId master;
    uint32_t live = 0;
    uint32_t deleted = 0;
    std::vector<std::string_view> master_fields;
    std::vector<std::pair<StreamEntry, uint8_t>> entries;
  };
  void for_each_node(const std::function<void(const NodeDump&)>& visit) const;
  // Loading: starts a node keyed `master` with the master `fields`, then appends entries to
  // it in order (deleted ones flagged); false when an ID is not above the previous one.
  void load_node(StreamId master, std::span<const std::string_view> fields);
  bool load_entry(StreamId id, std::span<const std::string_view> fields, bool deleted);
  // After the nodes: the stream's counters as saved. The length must be what was loaded.
  bool load_finish(uint64_t length, StreamId last_id, StreamId first_id, StreamId max_deleted,
                   uint64_t entries_added);
  // The ID after which loading may append (the last loaded entry, deleted or not).
  StreamId loaded_top() const { return nodes_.empty() ? StreamId{} : nodes_.rbegin()->second.last; }

  // Groups by name (created on demand).
  std::map<std::string, StreamGroup, std::less<>>& groups() { return groups_; }
  const std::map<std::string, StreamGroup, std::less<>>& groups() const { return groups_; }
  StreamGroup* find_group(std::string_view name) {
    auto it = groups_.find(name);
    return it == groups_.end() ? nullptr : &it->second;
  }

 private:
  struct Node {
    StreamId master;
    StreamId last;       // the last entry's ID, deleted or not
    std::string fields;  // master field names: count, then (length, bytes) each
    std::string bytes;   // the entries
    uint32_t live = 0;
    uint32_t deleted = 0;
    size_t listpack_bytes = 0;  // what Redis's listpack for this node would take
  };

  void update_first_id();
  // Appends one entry to `node` (flags computed against its master fields).
  void append_to_node(Node& node, StreamId id, std::span<const std::string_view> fields,
                      bool deleted);
  // Decodes the entry at `offset` of `node`; returns the offset after it.
  static size_t decode(const Node& node, size_t offset, StreamEntry* entry, uint8_t* flags);

  std::map<StreamId, Node> nodes_;
  uint64_t length_ = 0;
  StreamId last_id_;
  StreamId first_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::map<std::string, StreamGroup, std::less<>> groups_;
  int64_t node_max_bytes_;
  int64_t node_max_entries_;
};

// Parses "<ms>-<seq>" as Redis's string2ull does each part.
bool parse_stream_number(std::string_view text, uint64_t* out);

}  // namespace keywarden
