// StreamValue: entries in nodes keyed by master ID, consumer groups (layout in stream_value.h).
#include "types/stream_value.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/number.h"
#include "types/packed_length.h"

namespace keywarden {

namespace {

constexpr uint8_t kFlagDeleted = 1;
constexpr uint8_t kFlagSameFields = 2;
constexpr size_t kListpackMaxSize = size_t{1} << 30;

// Bytes Redis's listpack spends on an integer element.
size_t listpack_int_size(int64_t v) {
  size_t encoded;
  if (v >= 0 && v <= 127) {
    encoded = 1;
  } else if (v >= -4096 && v <= 4095) {
    encoded = 2;
  } else if (v >= -32768 && v <= 32767) {
    encoded = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    encoded = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    encoded = 5;
  } else {
    encoded = 9;
  }
  return encoded + 1;  // back-length of at most 127
}

// Bytes Redis's listpack spends on a string element (stored as an integer when it is one).
size_t listpack_element_size(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && !s.empty() && parse_int64(s, &v) && format_int64(v) == s) {
    return listpack_int_size(v);
  }
  size_t encoded = s.size() <= 63 ? 1 + s.size() : s.size() <= 4095 ? 2 + s.size() : 5 + s.size();
  size_t back = encoded <= 127        ? 1
                : encoded < 16383     ? 2
                : encoded < 2097151   ? 3
                : encoded < 268435455 ? 4
                                      : 5;
  return encoded + back;
}

void put_bytes(std::string& out, std::string_view s) {
  packed::append_length(out, s.size());
  out.append(s);
}

std::string_view get_bytes(std::string_view in, size_t* offset) {
  const size_t n = packed::read_length(in, offset);
  std::string_view s = in.substr(*offset, n);
  *offset += n;
  return s;
}

}  // namespace

bool StreamId::increment() {
  if (seq == UINT64_MAX) {
    if (ms == UINT64_MAX) {
      ms = seq = 0;
      return false;
    }
    ++ms;
    seq = 0;
    return true;
  }
  ++seq;
  return true;
}

bool StreamId::decrement() {
  if (seq == 0) {
    if (ms == 0) {
      ms = seq = UINT64_MAX;
      return false;
    }
    --ms;
    seq = UINT64_MAX;
    return true;
  }
  --seq;
  return true;
}

std::string StreamId::to_string() const {
  char buf[48];
  size_t n = uint64_to_chars(ms, buf);
  buf[n++] = '-';
  n += uint64_to_chars(seq, buf + n);
  return std::string(buf, n);
}

bool parse_stream_number(std::string_view text, uint64_t* out) {
  int64_t v;
  if (parse_int64(text, &v)) {
    if (v < 0) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  // strtoull's leniency, as Redis's string2ull falls back to it.
  if (text.empty() || text.find('\0') != std::string_view::npos || text.size() > 127) return false;
  char buf[128];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(buf, &end, 10);
  if (errno == EINVAL || errno == ERANGE || *end != '\0') return false;
  *out = value;
  return true;
}

std::unique_ptr<Aggregate> StreamValue::clone() const {
  return std::make_unique<StreamValue>(*this);
}

size_t StreamValue::payload_bytes() const {
  size_t total = sizeof(*this);
  for (const auto& [id, node] : nodes_) {
    total += 64 + sizeof(Node) + node.bytes.capacity() + node.fields.capacity();
  }
  for (const auto& [name, group] : groups_) {
    total += 64 + sizeof(StreamGroup) + name.capacity() + group.pending.size() * 80;
    for (const auto& [cname, consumer] : group.consumers) {
      total += 64 + sizeof(StreamConsumer) + cname.capacity() + consumer.pending.size() * 48;
    }
  }
  return total;
}

void StreamValue::append(StreamId id, std::span<const std::string_view> fields) {
  const size_t numfields = fields.size() / 2;
  size_t element_bytes = 0;
  for (std::string_view f : fields) element_bytes += f.size();

  Node* node = nodes_.empty() ? nullptr : &nodes_.rbegin()->second;
  if (node != nullptr) {
    size_t max_bytes = static_cast<size_t>(node_max_bytes_);
    if (max_bytes == 0 || max_bytes > kListpackMaxSize) max_bytes = kListpackMaxSize;
    const size_t lp_bytes =
        node->listpack_bytes + listpack_int_size(node->live) + listpack_int_size(node->deleted);
    if (lp_bytes + element_bytes >= max_bytes) {
      node = nullptr;
    } else if (node_max_entries_ != 0 &&
               static_cast<int64_t>(node->live + node->deleted) >= node_max_entries_) {
      node = nullptr;
    }
  }
  if (node == nullptr) {
    std::vector<std::string_view> names(numfields);
    for (size_t i = 0; i < numfields; ++i) names[i] = fields[2 * i];
    load_node(id, names);
    node = &nodes_.rbegin()->second;
  }
  append_to_node(*node, id, fields, false);
  ++length_;
  ++entries_added_;
  last_id_ = id;
  if (length_ == 1) first_id_ = id;
}

void StreamValue::load_node(StreamId master, std::span<const std::string_view> names) {
  Node& node = nodes_[master];
  node.master = master;
  node.fields.clear();
  packed::append_length(node.fields, names.size());
  node.listpack_bytes = 7 + listpack_int_size(static_cast<int64_t>(names.size())) + 2;
  for (std::string_view name : names) {
    put_bytes(node.fields, name);
    node.listpack_bytes += listpack_element_size(name);
  }
}

void StreamValue::append_to_node(Node& node, StreamId id, std::span<const std::string_view> fields,
                                 bool deleted) {
  const size_t numfields = fields.size() / 2;
  uint8_t flags = deleted ? kFlagDeleted : 0;
  {
    size_t offset = 0;
    const std::string_view master(node.fields);
    if (packed::read_length(master, &offset) == numfields) {
      size_t i = 0;
      for (; i < numfields; ++i) {
        if (get_bytes(master, &offset) != fields[2 * i]) break;
      }
      if (i == numfields) flags |= kFlagSameFields;
    }
  }
  std::string& out = node.bytes;
  out.push_back(static_cast<char>(flags));
  packed::append_length(out, id.ms - node.master.ms);
  packed::append_length(out, id.seq);
  size_t lp = listpack_int_size(flags) +
              listpack_int_size(static_cast<int64_t>(id.ms - node.master.ms)) +
              listpack_int_size(static_cast<int64_t>(id.seq - node.master.seq));
  if ((flags & kFlagSameFields) == 0) {
    packed::append_length(out, numfields);
    lp += listpack_int_size(static_cast<int64_t>(numfields));
    for (size_t i = 0; i < numfields; ++i) {
      put_bytes(out, fields[2 * i]);
      lp += listpack_element_size(fields[2 * i]);
    }
  }
  for (size_t i = 0; i < numfields; ++i) {
    put_bytes(out, fields[2 * i + 1]);
    lp += listpack_element_size(fields[2 * i + 1]);
  }
  const int64_t lp_count =
      static_cast<int64_t>(numfields + 3 + ((flags & kFlagSameFields) == 0 ? numfields + 1 : 0));
  lp += listpack_int_size(lp_count);
  node.listpack_bytes += lp;
  if (deleted) {
    node.deleted++;
  } else {
    node.live++;
  }
  node.last = id;
}

bool StreamValue::load_entry(StreamId id, std::span<const std::string_view> fields, bool deleted) {
  if (nodes_.empty() || fields.size() % 2 != 0) return false;
  Node& node = nodes_.rbegin()->second;
  if (id < node.master) return false;
  if (node.live + node.deleted > 0 && id <= node.last) return false;
  if (nodes_.size() > 1 && id <= std::prev(nodes_.end(), 2)->second.last) return false;
  append_to_node(node, id, fields, deleted);
  if (!deleted) ++length_;
  return true;
}

bool StreamValue::load_finish(uint64_t length, StreamId last_id, StreamId first_id,
                              StreamId max_deleted, uint64_t entries_added) {
  if (length != length_) return false;
  for (const auto& [master, node] : nodes_) {
    if (node.live + node.deleted == 0) return false;
  }
  if (!nodes_.empty() && nodes_.rbegin()->second.last > last_id) return false;
  last_id_ = last_id;
  first_id_ = first_id;
  max_deleted_id_ = max_deleted;
  entries_added_ = entries_added;
  // Nodes whose entries are all deleted stay (Redis keeps them too) but count nothing.
  return true;
}

void StreamValue::for_each_node(const std::function<void(const NodeDump&)>& visit) const {
  NodeDump dump;
  for (const auto& [master, node] : nodes_) {
    dump.master = master;
    dump.live = node.live;
    dump.deleted = node.deleted;
    dump.master_fields.clear();
    size_t offset = 0;
    const std::string_view fields(node.fields);
    const size_t n = packed::read_length(fields, &offset);
    for (size_t i = 0; i < n; ++i) dump.master_fields.push_back(get_bytes(fields, &offset));
    dump.entries.clear();
    for (size_t at = 0; at < node.bytes.size();) {
      dump.entries.emplace_back();
      at = decode(node, at, &dump.entries.back().first, &dump.entries.back().second);
    }
    visit(dump);
  }
}

size_t StreamValue::decode(const Node& node, size_t offset, StreamEntry* entry, uint8_t* flags) {
  const std::string_view in(node.bytes);
  *flags = static_cast<uint8_t>(in[offset++]);
  entry->id.ms = node.master.ms + packed::read_length(in, &offset);
  entry->id.seq = packed::read_length(in, &offset);
  entry->fields.clear();
  if ((*flags & kFlagSameFields) != 0) {
    const std::string_view master(node.fields);
    size_t moffset = 0;
    const size_t n = packed::read_length(master, &moffset);
    for (size_t i = 0; i < n; ++i) entry->fields.emplace_back(get_bytes(master, &moffset), "");
  } else {
    const size_t n = packed::read_length(in, &offset);
    for (size_t i = 0; i < n; ++i) entry->fields.emplace_back(get_bytes(in, &offset), "");
  }
  for (auto& field : entry->fields) field.second = get_bytes(in, &offset);
  return offset;
}

bool StreamValue::contains(StreamId id) const {
  bool found = false;
  for_range(id, id, false, [&](const StreamEntry&) {
    found = true;
    return false;
  });
  return found;
}

void StreamValue::for_range(StreamId start, StreamId end, bool reverse,
                            const std::function<bool(const StreamEntry&)>& visit) const {
  if (start > end || nodes_.empty()) return;
  StreamEntry entry;
  uint8_t flags;
  if (!reverse) {
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end() && it->first <= end; ++it) {
      const Node& node = it->second;
      if (node.last < start) continue;
      size_t offset = 0;
      while (offset < node.bytes.size()) {
        offset = decode(node, offset, &entry, &flags);
        if (entry.id > end) return;
        if ((flags & kFlagDeleted) != 0 || entry.id < start) continue;
        if (!visit(entry)) return;
      }
    }
    return;
  }
  auto it = nodes_.upper_bound(end);
  std::vector<size_t> offsets;
  while (it != nodes_.begin()) {
    --it;
    const Node& node = it->second;
    if (node.last < start) return;
    offsets.clear();
    for (size_t offset = 0; offset < node.bytes.size();) {
      offsets.push_back(offset);
      offset = decode(node, offset, &entry, &flags);
    }
    for (size_t i = offsets.size(); i-- > 0;) {
      decode(node, offsets[i], &entry, &flags);
      if (entry.id < start) return;
      if ((flags & kFlagDeleted) != 0 || entry.id > end) continue;
      if (!visit(entry)) return;
    }
  }
}

bool StreamValue::edge_id(bool first, StreamId* out) const {
  bool found = false;
  for_range({0, 0}, StreamId::max(), !first, [&](const StreamEntry& e) {
    *out = e.id;
    found = true;
    return false;
  });
  return found;
}

void StreamValue::update_first_id() {
  if (length_ == 0 || !edge_id(true, &first_id_)) first_id_ = {0, 0};
}

bool StreamValue::remove(StreamId id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Node& node = it->second;
  StreamEntry entry;
  uint8_t flags;
  for (size_t offset = 0; offset < node.bytes.size();) {
    const size_t at = offset;
    offset = decode(node, offset, &entry, &flags);
    if (entry.id > id) return false;
    if (entry.id != id) continue;
    if ((flags & kFlagDeleted) != 0) return false;
    node.bytes[at] = static_cast<char>(flags | kFlagDeleted);
    node.live--;
    node.deleted++;
    --length_;
    if (node.live == 0) nodes_.erase(it);
    if (id > max_deleted_id_) max_deleted_id_ = id;
    if (id == first_id_) update_first_id();
    if (length_ == 0) first_id_ = {0, 0};
    return true;
  }
  return false;
}

int64_t StreamValue::trim(const StreamTrim& trim) {
  using Strategy = StreamTrim::Strategy;
  if (trim.strategy == Strategy::kNone) return 0;
  const uint64_t max_length = static_cast<uint64_t>(trim.max_length);
  int64_t deleted = 0;
  auto it = nodes_.begin();
  while (it != nodes_.end()) {
    if (trim.strategy == Strategy::kMaxLen && length_ <= max_length) break;
    Node& node = it->second;
    const int64_t entries = node.live;
    if (trim.limit != 0 && deleted + entries > trim.limit) break;
    const bool remove_node = trim.strategy == Strategy::kMaxLen
                                 ? length_ - static_cast<uint64_t>(entries) >= max_length
                                 : node.last < trim.min_id;
    if (remove_node) {
      length_ -= static_cast<uint64_t>(entries);
      deleted += entries;
      it = nodes_.erase(it);
      continue;
    }
    if (trim.approx) break;
    StreamEntry entry;
    uint8_t flags;
    int64_t deleted_here = 0;
    for (size_t offset = 0; offset < node.bytes.size();) {
      const size_t at = offset;
      offset = decode(node, offset, &entry, &flags);
      const bool stop =
          trim.strategy == Strategy::kMaxLen ? length_ <= max_length : entry.id >= trim.min_id;
      if (stop) break;
      if ((flags & kFlagDeleted) == 0) {
        node.bytes[at] = static_cast<char>(flags | kFlagDeleted);
        ++deleted_here;
        --length_;
      }
    }
    node.live -= static_cast<uint32_t>(deleted_here);
    node.deleted += static_cast<uint32_t>(deleted_here);
    deleted += deleted_here;
    break;
  }
  update_first_id();
  return deleted;
}

int64_t StreamValue::estimate_distance(StreamId id) const {
  if (entries_added_ == 0) return 0;
  if (length_ == 0 && id <= last_id_) return static_cast<int64_t>(entries_added_);
  if (id == last_id_) return static_cast<int64_t>(entries_added_);
  if (id > last_id_) return kInvalidEntriesRead;
  if (max_deleted_id_.is_zero() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return static_cast<int64_t>(entries_added_ - length_);
    if (id == first_id_) return static_cast<int64_t>(entries_added_ - length_ + 1);
  }
  return kInvalidEntriesRead;
}

bool StreamValue::range_has_tombstones(StreamId start, StreamId end) const {
  if (length_ == 0 || max_deleted_id_.is_zero()) return false;
  if (first_id_ > max_deleted_id_) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

bool StreamValue::group_lag(const StreamGroup& group, int64_t* lag) const {
  if (entries_added_ == 0) {
    *lag = 0;
    return true;
  }
  if (group.entries_read != kInvalidEntriesRead && !range_has_tombstones(group.last_id)) {
    *lag = static_cast<int64_t>(entries_added_) - group.entries_read;
    return true;
  }
  const int64_t read = estimate_distance(group.last_id);
  if (read == kInvalidEntriesRead) return false;
  *lag = static_cast<int64_t>(entries_added_) - read;
  return true;
}

}  // namespace keywarden
