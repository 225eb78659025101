// RdbWriter, RdbReader and the packed-blob codecs (listpack, ziplist, intset, zipmap).
#include "persistence/rdb_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <set>
#include <tuple>
#include <vector>

#include "common/crc64.h"
#include "common/lzf.h"
#include "common/number.h"
#include "persistence/rdb_format.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

// Redis tries the integer encoding only on strings this short (rdbTryIntegerEncoding).
constexpr size_t kMaxIntegerEncodedString = 11;
// ... and LZF only on strings longer than this.
constexpr size_t kMinCompressedString = 20;
// The node size quicklist nodes are cut at when written (Redis's default fill, 8 KiB).
constexpr size_t kListNodeBytes = 8192;

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t get_le(const unsigned char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

// A score as Redis stores it in a listpack (d2string): integral values as integers.
std::string score_text(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  if (score == 0) return std::signbit(score) ? "-0" : "0";
  constexpr double kExactRange = 4503599627370496.0;  // 2^52
  if (score > -kExactRange && score < kExactRange && score == std::floor(score)) {
    return format_int64(static_cast<int64_t>(score));
  }
  return format_double(score);
}

// A score stored as text in a listpack or ziplist, read as Redis's zzlStrtod reads it: strtod
// of at most the first 127 bytes, up to the first NUL, whatever follows the number ignored
// (so "abc" is 0, as Redis 7.0 loads it even when sanitizing). A NaN is refused: Redis would
// load it and order nothing right afterwards.
bool parse_packed_score(std::string_view text, double* out) {
  char buffer[128];
  const size_t size = std::min(text.size(), sizeof buffer - 1);
  std::memcpy(buffer, text.data(), size);
  buffer[size] = '\0';
  const double value = std::strtod(buffer, nullptr);
  if (std::isnan(value)) return false;
  *out = value;
  return true;
}

}  // namespace

// --- RdbWriter --------------------------------------------------------------------------------

void RdbWriter::length(uint64_t value) {
  if (value < (1u << 6)) {
    byte(static_cast<uint8_t>(value));
  } else if (value < (1u << 14)) {
    buffer_.push_back(static_cast<char>(((value >> 8) & 0x3f) | (rdb::kLen14Bit << 6)));
    byte(static_cast<uint8_t>(value & 0xff));
  } else if (value <= UINT32_MAX) {
    buffer_.push_back(static_cast<char>(rdb::kLen32Bit));
    for (int shift = 24; shift >= 0; shift -= 8)
      buffer_.push_back(static_cast<char>(value >> shift));
    maybe_drain();
  } else {
    buffer_.push_back(static_cast<char>(rdb::kLen64Bit));
    for (int shift = 56; shift >= 0; shift -= 8)
      buffer_.push_back(static_cast<char>(value >> shift));
    maybe_drain();
  }
}

void RdbWriter::integer_string(int64_t value) {
  if (value >= INT8_MIN && value <= INT8_MAX) {
    buffer_.push_back(static_cast<char>((rdb::kLenEncoded << 6) | rdb::kEncInt8));
    put_le(buffer_, static_cast<uint64_t>(value), 1);
  } else if (value >= INT16_MIN && value <= INT16_MAX) {
    buffer_.push_back(static_cast<char>((rdb::kLenEncoded << 6) | rdb::kEncInt16));
    put_le(buffer_, static_cast<uint64_t>(value), 2);
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    buffer_.push_back(static_cast<char>((rdb::kLenEncoded << 6) | rdb::kEncInt32));
    put_le(buffer_, static_cast<uint64_t>(value), 4);
  } else {
    char text[kInt64BufferSize];
    const size_t size = int64_to_chars(value, text);
    length(size);
    buffer_.append(text, size);
  }
  maybe_drain();
}

void RdbWriter::string(std::string_view bytes) {
  int64_t number;
  if (bytes.size() <= kMaxIntegerEncodedString && parse_int64(bytes, &number) &&
      number >= INT32_MIN && number <= INT32_MAX) {
    integer_string(number);
    return;
  }
  if (compression_ && bytes.size() > kMinCompressedString) {
    std::string compressed;
    if (lzf_compress(bytes, bytes.size() - 4, &compressed) && !compressed.empty()) {
      buffer_.push_back(static_cast<char>((rdb::kLenEncoded << 6) | rdb::kEncLzf));
      length(compressed.size());
      length(bytes.size());
      raw(compressed);
      return;
    }
  }
  length(bytes.size());
  raw(bytes);
}

void RdbWriter::binary_double(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_le(buffer_, bits, 8);
  maybe_drain();
}

void RdbWriter::int64_le(int64_t value) {
  put_le(buffer_, static_cast<uint64_t>(value), 8);
  maybe_drain();
}

void RdbWriter::uint32_le(uint32_t value) {
  put_le(buffer_, value, 4);
  maybe_drain();
}

uint8_t RdbWriter::object_type(const Value& value) {
  switch (value.type()) {
    case ValueType::kString:
      return rdb::kTypeString;
    case ValueType::kList:
      return rdb::kTypeListQuicklist2;
    case ValueType::kSet:
      return value.encoding() == Encoding::kIntset ? rdb::kTypeSetIntset : rdb::kTypeSet;
    case ValueType::kZSet:
      return value.as<ZSetValue>().is_listpack() ? rdb::kTypeZSetListpack : rdb::kTypeZSet2;
    case ValueType::kHash: {
      const auto& hash = value.as<HashValue>();
      if (hash.volatile_count() > 0) {
        return hash.is_listpack() ? rdb::kTypeHashListpackEx : rdb::kTypeHashMetadata;
      }
      return hash.is_listpack() ? rdb::kTypeHashListpack : rdb::kTypeHash;
    }
    case ValueType::kStream:
      return rdb::kTypeStreamListpacks2;
  }
  return rdb::kTypeString;
}

void RdbWriter::object(const Value& value) {
  byte(object_type(value));
  object_body(value);
}

namespace {

// A stream ID as Redis keys its radix trees: 128 bits, big endian.
std::string stream_id_bytes(StreamId id) {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>(id.ms >> (56 - 8 * i));
    out[static_cast<size_t>(8 + i)] = static_cast<char>(id.seq >> (56 - 8 * i));
  }
  return out;
}

StreamId stream_id_from_bytes(std::string_view bytes) {
  StreamId id;
  for (int i = 0; i < 8; ++i) {
    id.ms = (id.ms << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
    id.seq = (id.seq << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(8 + i)]);
  }
  return id;
}

}  // namespace

// RDB_TYPE_STREAM_LISTPACKS_2, as Redis 7.0 writes it: each node a listpack keyed by its
// master ID, then the stream's counters, then the groups with their PELs and consumers.
void RdbWriter::stream_body(const StreamValue& stream) {
  length(stream.node_count());
  ListpackBuilder builder;
  char digits[kInt64BufferSize];
  auto number = [&](int64_t v) {
    builder.append(std::string_view(digits, int64_to_chars(v, digits)));
  };
  stream.for_each_node([&](const StreamValue::NodeDump& node) {
    number(node.live);
    number(node.deleted);
    number(static_cast<int64_t>(node.master_fields.size()));
    for (std::string_view field : node.master_fields) builder.append(field);
    number(0);
    for (const auto& [entry, flags] : node.entries) {
      const bool same = (flags & 2) != 0;
      number(flags);
      number(static_cast<int64_t>(entry.id.ms - node.master.ms));
      number(static_cast<int64_t>(entry.id.seq - node.master.seq));
      if (!same) {
        number(static_cast<int64_t>(entry.fields.size()));
        for (const auto& [field, data] : entry.fields) {
          builder.append(field);
          builder.append(data);
        }
      } else {
        for (const auto& [field, data] : entry.fields) builder.append(data);
      }
      const size_t n = entry.fields.size();
      number(static_cast<int64_t>(n + 3 + (same ? 0 : n + 1)));
    }
    string(stream_id_bytes(node.master));
    string(builder.finish());
  });
  length(stream.length());
  length(stream.last_id().ms);
  length(stream.last_id().seq);
  length(stream.first_id().ms);
  length(stream.first_id().seq);
  length(stream.max_deleted_id().ms);
  length(stream.max_deleted_id().seq);
  length(stream.entries_added());
  length(stream.groups().size());
  for (const auto& [name, group] : stream.groups()) {
    string(name);
    length(group.last_id.ms);
    length(group.last_id.seq);
    length(static_cast<uint64_t>(group.entries_read));
    length(group.pending.size());
    for (const auto& [id, pending] : group.pending) {
      raw(stream_id_bytes(id));
      int64_le(pending.delivery_time_ms);
      length(pending.delivery_count);
    }
    length(group.consumers.size());
    for (const auto& [consumer_name, consumer] : group.consumers) {
      string(consumer_name);
      int64_le(consumer.seen_time_ms);
      length(consumer.pending.size());
      for (StreamId id : consumer.pending) raw(stream_id_bytes(id));
    }
  }
}

void RdbWriter::object_body(const Value& value) {
  switch (value.type()) {
    case ValueType::kStream:
      stream_body(value.as<StreamValue>());
      return;
    case ValueType::kString: {
      if (value.is_int()) {
        integer_string(value.int_value());
      } else {
        char scratch[kInt64BufferSize];
        string(value.string_view(scratch));
      }
      return;
    }
    case ValueType::kList: {
      // Nodes are cut as Redis's default fill cuts them (8 KiB), whatever our own layout.
      std::vector<std::string> nodes;
      ListpackBuilder builder;
      value.as<ListValue>().for_each([&](std::string_view element) {
        if (builder.count() > 0 && builder.bytes() + element.size() + 11 > kListNodeBytes) {
          nodes.push_back(builder.finish());
        }
        builder.append(element);
      });
      if (builder.count() > 0) nodes.push_back(builder.finish());
      length(nodes.size());
      for (const std::string& node : nodes) {
        length(rdb::kQuicklistNodePacked);
        string(node);
      }
      return;
    }
    case ValueType::kSet: {
      const auto& set = value.as<SetValue>();
      if (set.encoding() == Encoding::kIntset) {
        std::vector<int64_t> members;
        members.reserve(set.size());
        set.for_each([&](std::string_view member) {
          int64_t number = 0;
          parse_int64(member, &number);
          members.push_back(number);
        });
        uint32_t width = 2;
        for (int64_t m : members) {
          if (m < INT32_MIN || m > INT32_MAX) {
            width = 8;
          } else if ((m < INT16_MIN || m > INT16_MAX) && width < 4) {
            width = 4;
          }
        }
        std::string blob;
        put_le(blob, width, 4);
        put_le(blob, members.size(), 4);
        for (int64_t m : members) put_le(blob, static_cast<uint64_t>(m), static_cast<int>(width));
        string(blob);
        return;
      }
      length(set.size());
      set.for_each([&](std::string_view member) { string(member); });
      return;
    }
    case ValueType::kZSet: {
      const auto& zset = value.as<ZSetValue>();
      if (zset.is_listpack()) {
        ListpackBuilder builder;
        zset.for_each([&](std::string_view member, double score) {
          builder.append(member);
          builder.append(score_text(score));
        });
        string(builder.finish());
        return;
      }
      // Highest score first, as Redis writes it, so that its loader appends at the head.
      length(zset.size());
      for (auto cursor = zset.at_rank(zset.size() - 1); cursor.valid(); cursor.prev()) {
        string(cursor.member());
        binary_double(cursor.score());
      }
      return;
    }
    case ValueType::kHash: {
      const auto& hash = value.as<HashValue>();
      if (hash.volatile_count() > 0) {
        const int64_t earliest = hash.earliest_deadline();
        int64_le(earliest);
        if (hash.is_listpack()) {
          // Volatile fields by deadline, then the plain ones, as Redis keeps a listpackex.
          std::vector<std::tuple<int64_t, std::string_view, std::string_view>> volatile_fields;
          hash.for_each_volatile(
              [&](std::string_view field, std::string_view val, int64_t deadline) {
                volatile_fields.emplace_back(deadline, field, val);
              });
          std::stable_sort(volatile_fields.begin(), volatile_fields.end(),
                           [](const auto& a, const auto& b) {
                             return std::get<0>(a) < std::get<0>(b);
                           });
          ListpackBuilder builder;
          for (const auto& [deadline, field, val] : volatile_fields) {
            builder.append(field);
            builder.append(val);
            builder.append(std::to_string(deadline));
          }
          hash.for_each([&](std::string_view field, std::string_view val) {
            if (hash.field_deadline(field) != kNoFieldDeadline) return;
            builder.append(field);
            builder.append(val);
            builder.append("0");
          });
          string(builder.finish());
          return;
        }
        length(hash.size());
        hash.for_each([&](std::string_view field, std::string_view val) {
          const int64_t deadline = hash.field_deadline(field);
          length(deadline == kNoFieldDeadline ? 0 : static_cast<uint64_t>(deadline - earliest) + 1);
          string(field);
          string(val);
        });
        return;
      }
      if (hash.is_listpack()) {
        ListpackBuilder builder;
        hash.for_each([&](std::string_view field, std::string_view val) {
          builder.append(field);
          builder.append(val);
        });
        string(builder.finish());
        return;
      }
      length(hash.size());
      hash.for_each([&](std::string_view field, std::string_view val) {
        string(field);
        string(val);
      });
      return;
    }
  }
}

bool RdbWriter::flush() {
  if (failed_) return false;
  if (!drain_ || buffer_.empty()) return true;
  drained_crc_ = crc64(drained_crc_, buffer_);
  if (!drain_(buffer_)) failed_ = true;
  buffer_.clear();
  return !failed_;
}

uint64_t RdbWriter::checksum() const { return crc64(drained_crc_, buffer_); }

// --- ListpackBuilder --------------------------------------------------------------------------

void ListpackBuilder::append(std::string_view element) {
  const size_t start = buffer_.size();
  int64_t number;
  if (element.size() <= kMaxInt64Chars && parse_int64(element, &number)) {
    if (number >= 0 && number <= 127) {
      buffer_.push_back(static_cast<char>(number));
    } else if (number >= -4096 && number <= 4095) {
      const uint64_t bits = static_cast<uint64_t>(number) & 0x1fff;
      buffer_.push_back(static_cast<char>(0xc0 | (bits >> 8)));
      buffer_.push_back(static_cast<char>(bits & 0xff));
    } else if (number >= INT16_MIN && number <= INT16_MAX) {
      buffer_.push_back(static_cast<char>(0xf1));
      put_le(buffer_, static_cast<uint64_t>(number), 2);
    } else if (number >= -(1 << 23) && number < (1 << 23)) {
      buffer_.push_back(static_cast<char>(0xf2));
      put_le(buffer_, static_cast<uint64_t>(number), 3);
    } else if (number >= INT32_MIN && number <= INT32_MAX) {
      buffer_.push_back(static_cast<char>(0xf3));
      put_le(buffer_, static_cast<uint64_t>(number), 4);
    } else {
      buffer_.push_back(static_cast<char>(0xf4));
      put_le(buffer_, static_cast<uint64_t>(number), 8);
    }
  } else if (element.size() < 64) {
    buffer_.push_back(static_cast<char>(0x80 | element.size()));
    buffer_.append(element);
  } else if (element.size() < 4096) {
    buffer_.push_back(static_cast<char>(0xe0 | (element.size() >> 8)));
    buffer_.push_back(static_cast<char>(element.size() & 0xff));
    buffer_.append(element);
  } else {
    buffer_.push_back(static_cast<char>(0xf0));
    put_le(buffer_, element.size(), 4);
    buffer_.append(element);
  }
  // The entry's length again, readable from its end: 7 bits a byte, the lowest bits last,
  // every byte but the first flagged.
  const uint64_t entry = buffer_.size() - start;
  int bytes = entry <= 127        ? 1
              : entry < 16383     ? 2
              : entry < 2097151   ? 3
              : entry < 268435455 ? 4
                                  : 5;
  for (int i = bytes - 1; i >= 0; --i) {
    uint8_t part = static_cast<uint8_t>((entry >> (7 * i)) & 127);
    if (i != bytes - 1) part |= 128;
    buffer_.push_back(static_cast<char>(part));
  }
  ++count_;
}

std::string ListpackBuilder::finish() {
  buffer_.push_back(static_cast<char>(0xff));
  std::string header;
  put_le(header, buffer_.size(), 4);
  put_le(header, count_ < 65535 ? count_ : 65535, 2);
  buffer_.replace(0, 6, header);
  std::string result = std::move(buffer_);
  buffer_.assign(6, '\0');
  count_ = 0;
  return result;
}

// --- Packed blob parsers -----------------------------------------------------------------------

namespace {

// An integer of `width` bytes, little endian, sign-extended.
int64_t signed_le(const unsigned char* p, int width) {
  const uint64_t bits = get_le(p, width);
  if (width == 8) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (8 * width - 1);
  return (bits & sign) ? static_cast<int64_t>(bits) - static_cast<int64_t>(sign << 1)
                       : static_cast<int64_t>(bits);
}

// How many bytes a listpack back-length of `entry` takes (7 bits a byte).
int listpack_backlen_size(uint64_t entry) {
  return entry <= 127 ? 1 : entry < 16383 ? 2 : entry < 2097151 ? 3 : entry < 268435455 ? 4 : 5;
}

// The back-length whose last byte is at `last`, read backwards as a reader walking the
// listpack from its tail would; UINT64_MAX when it runs over five bytes.
uint64_t listpack_backlen(const unsigned char* last, const unsigned char* first_allowed) {
  uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    if (shift > 28 || last < first_allowed) return UINT64_MAX;
    value |= uint64_t{*last & 127u} << shift;
    if ((*last & 128) == 0) return value;
    --last;
  }
}

}  // namespace

bool rdb_parse_listpack(std::string_view blob, const std::function<void(std::string_view)>& visit,
                        bool deep) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  // The header's total must be the blob's size, and the last byte the terminator.
  if (size < 7 || get_le(p, 4) != size || p[size - 1] != 0xff) return false;
  const uint64_t declared = get_le(p + 4, 2);
  const size_t end = size - 1;  // where the terminator is: no entry reaches it
  uint64_t count = 0;
  size_t at = 6;
  char number_text[kInt64BufferSize];
  while (at < end) {
    const unsigned char first = p[at];
    size_t header = 1, payload = 0;
    int64_t number = 0;
    bool is_int = true;
    auto fits = [&](size_t n) { return n <= end - at; };
    if ((first & 0x80) == 0) {
      number = first & 0x7f;
    } else if ((first & 0xc0) == 0x80) {
      is_int = false;
      payload = first & 0x3f;
    } else if ((first & 0xe0) == 0xc0) {
      if (!fits(2)) return false;
      header = 2;
      const uint64_t bits = ((first & 0x1fu) << 8) | p[at + 1];
      number =
          bits >= (1u << 12) ? static_cast<int64_t>(bits) - (1 << 13) : static_cast<int64_t>(bits);
    } else if ((first & 0xf0) == 0xe0) {
      if (!fits(2)) return false;
      header = 2;
      is_int = false;
      payload = ((first & 0x0fu) << 8) | p[at + 1];
    } else if (first == 0xf0) {
      if (!fits(5)) return false;
      header = 5;
      is_int = false;
      payload = get_le(p + at + 1, 4);
    } else if (first >= 0xf1 && first <= 0xf4) {
      const int width = first == 0xf1 ? 2 : first == 0xf2 ? 3 : first == 0xf3 ? 4 : 8;
      if (!fits(1 + static_cast<size_t>(width))) return false;
      header = 1 + static_cast<size_t>(width);
      number = signed_le(p + at + 1, width);
    } else {
      return false;  // 0xf5..0xfe are no encoding; 0xff is the terminator, not an entry
    }
    const uint64_t entry = header + payload;
    const int backlen = listpack_backlen_size(entry);
    if (payload > size || !fits(entry + static_cast<size_t>(backlen))) return false;
    // The back-length must give the entry's length back (Redis's lpValidateNext).
    if (deep && listpack_backlen(p + at + entry + backlen - 1, p + at + entry) != entry) {
      return false;
    }
    if (is_int) {
      visit(std::string_view(number_text, int64_to_chars(number, number_text)));
    } else {
      visit(blob.substr(at + header, payload));
    }
    at += entry + static_cast<size_t>(backlen);
    ++count;
  }
  if (at != end) return false;
  // 65535 means "count them": only a deep check holds the header to its count.
  return !deep || declared == 65535 || declared == count;
}

bool rdb_parse_ziplist(std::string_view blob, const std::function<void(std::string_view)>& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < 11 || get_le(p, 4) != size || p[size - 1] != 0xff) return false;
  const uint64_t tail = get_le(p + 4, 4);
  const size_t end = size - 1;  // the terminator
  if (tail > end) return false;
  const uint64_t declared = get_le(p + 8, 2);
  uint64_t count = 0;
  size_t at = 10;
  size_t previous_size = 0;  // every entry starts with the length of the one before it
  size_t last_entry = 0;
  char number_text[kInt64BufferSize];
  // A 0xff where an entry would start ends the walk; it must be the terminator.
  while (p[at] != 0xff) {
    const size_t start = at;
    auto fits = [&](size_t n) { return n <= end - at; };
    uint64_t previous_length;
    if (p[at] == 0xfe) {
      if (!fits(5)) return false;
      previous_length = get_le(p + at + 1, 4);
      at += 5;
    } else {
      previous_length = p[at];
      at += 1;
    }
    if (previous_length != previous_size) return false;
    // at <= end here, so the encoding byte is readable (the terminator is no encoding).
    const unsigned char enc = p[at];
    size_t header = 1, payload = 0;
    bool is_int = true;
    int64_t number = 0;
    switch (enc >> 6) {
      case 0:
        is_int = false;
        payload = enc & 0x3f;
        break;
      case 1:
        if (!fits(2)) return false;
        is_int = false;
        header = 2;
        payload = ((enc & 0x3fu) << 8) | p[at + 1];
        break;
      case 2:  // the low six bits of the first byte are unused
        if (!fits(5)) return false;
        is_int = false;
        header = 5;
        payload = (uint64_t{p[at + 1]} << 24) | (uint64_t{p[at + 2]} << 16) |
                  (uint64_t{p[at + 3]} << 8) | p[at + 4];
        break;
      default: {
        int width;
        if (enc == 0xc0) {
          width = 2;
        } else if (enc == 0xd0) {
          width = 4;
        } else if (enc == 0xe0) {
          width = 8;
        } else if (enc == 0xf0) {
          width = 3;
        } else if (enc == 0xfe) {
          width = 1;
        } else if (enc >= 0xf1 && enc <= 0xfd) {
          width = 0;
          number = (enc & 0x0f) - 1;
        } else {
          return false;
        }
        header = 1 + static_cast<size_t>(width);
        if (!fits(header)) return false;
        if (width > 0) number = signed_le(p + at + 1, width);
      }
    }
    if (payload > size || !fits(header + payload)) return false;
    if (is_int) {
      visit(std::string_view(number_text, int64_to_chars(number, number_text)));
    } else {
      visit(blob.substr(at + header, payload));
    }
    at += header + payload;
    previous_size = at - start;
    last_entry = start;
    ++count;
  }
  if (at != end) return false;
  // The header's tail offset must point at the last entry (ziplists are walked from there).
  if (count > 0 && last_entry != tail) return false;
  return declared == 65535 || declared == count;
}

bool rdb_parse_intset(std::string_view blob, const std::function<void(std::string_view)>& visit,
                      bool deep) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  if (blob.size() < 8) return false;
  const uint64_t width = get_le(p, 4);
  const uint64_t count = get_le(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  // Both factors are below 2^32: the product cannot overflow.
  if (count == 0 || blob.size() != 8 + count * width) return false;
  char text[kInt64BufferSize];
  int64_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t value = signed_le(p + 8 + i * width, static_cast<int>(width));
    // Sorted and without repeats, or binary searches in it go wrong; a shallow check leaves
    // repeats to the set they are added to, which refuses them.
    if (deep && i > 0 && value <= previous) return false;
    previous = value;
    visit(std::string_view(text, int64_to_chars(value, text)));
  }
  return true;
}

bool rdb_parse_zipmap(std::string_view blob, const std::function<void(std::string_view)>& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < 2 || p[size - 1] != 0xff) return false;
  const size_t end = size - 1;  // the terminator
  size_t at = 1;                // the first byte is the pair count, or 254 "count them"
  uint64_t pairs = 0;
  // A length is one byte below 254, else 254 (or 255) and four bytes little endian.
  auto read_length = [&](uint64_t* length) {
    if (p[at] < 254) {
      *length = p[at];
      at += 1;
      return true;
    }
    if (end - at < 5) return false;
    *length = get_le(p + at + 1, 4);
    at += 5;
    return true;
  };
  while (p[at] != 0xff) {
    uint64_t field_length, value_length;
    if (!read_length(&field_length) || field_length > end - at) return false;
    const size_t field_at = at;
    at += field_length;
    // The value's length, one byte of free space, the value and the free bytes.
    if (at == end || !read_length(&value_length) || at == end) return false;
    const size_t free_bytes = p[at];
    at += 1;
    if (value_length > end - at || free_bytes > end - at - value_length) return false;
    visit(blob.substr(field_at, field_length));
    visit(blob.substr(at, value_length));
    at += value_length + free_bytes;
    ++pairs;
  }
  if (at != end || pairs == 0) return false;
  return p[0] == 254 || p[0] == pairs;
}

// --- RdbReader --------------------------------------------------------------------------------

bool RdbReader::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  return false;
}

bool RdbReader::byte(uint8_t* out) {
  if (remaining() < 1) return fail("unexpected end of data");
  *out = static_cast<uint8_t>(data_[position_++]);
  return true;
}

bool RdbReader::take(size_t count, std::string_view* out) {
  if (remaining() < count) return fail("unexpected end of data");
  *out = data_.substr(position_, count);
  position_ += count;
  return true;
}

bool RdbReader::length(uint64_t* out, bool* encoded) {
  uint8_t first = 0;
  if (!byte(&first)) return false;
  if (encoded != nullptr) *encoded = false;
  const int kind = first >> 6;
  if (kind == rdb::kLen6Bit) {
    *out = first & 0x3f;
  } else if (kind == rdb::kLen14Bit) {
    uint8_t second = 0;
    if (!byte(&second)) return false;
    *out = (uint64_t{first & 0x3fu} << 8) | second;
  } else if (first == rdb::kLen32Bit || first == rdb::kLen64Bit) {
    std::string_view bytes;
    if (!take(first == rdb::kLen32Bit ? 4 : 8, &bytes)) return false;
    uint64_t value = 0;
    for (char c : bytes) value = (value << 8) | static_cast<unsigned char>(c);
    *out = value;
  } else if (kind == rdb::kLenEncoded && encoded != nullptr) {
    *encoded = true;
    *out = first & 0x3f;
  } else {
    return fail("invalid length encoding");
  }
  return true;
}

bool RdbReader::string(std::string* out) {
  uint64_t length_or_encoding;
  bool encoded;
  if (!length(&length_or_encoding, &encoded)) return false;
  if (!encoded) {
    std::string_view bytes;
    if (!take(length_or_encoding, &bytes)) return false;
    out->assign(bytes);
    return true;
  }
  switch (length_or_encoding) {
    case rdb::kEncInt8:
    case rdb::kEncInt16:
    case rdb::kEncInt32: {
      const int width = length_or_encoding == rdb::kEncInt8    ? 1
                        : length_or_encoding == rdb::kEncInt16 ? 2
                                                               : 4;
      std::string_view bytes;
      if (!take(width, &bytes)) return false;
      const uint64_t bits = get_le(reinterpret_cast<const unsigned char*>(bytes.data()), width);
      int64_t value = width == 1   ? static_cast<int8_t>(bits)
                      : width == 2 ? static_cast<int16_t>(bits)
                                   : static_cast<int32_t>(bits);
      *out = format_int64(value);
      return true;
    }
    case rdb::kEncLzf: {
      uint64_t compressed, original;
      if (!length(&compressed) || !length(&original)) return false;
      std::string_view bytes;
      if (!take(compressed, &bytes)) return false;
      // Redis 7.0 takes a declared length of 0 as an empty string whatever the compressed bytes
      // hold (its decompressor's "nothing written" is that length).
      if (original == 0) {
        out->clear();
        return true;
      }
      if (!lzf_decompress(bytes, original, out) || out->size() != original) {
        return fail("invalid LZF compressed string");
      }
      return true;
    }
    default:
      return fail("unknown string encoding");
  }
}

bool RdbReader::text_double(double* out) {
  uint8_t size = 0;
  if (!byte(&size)) return false;
  if (size == 253) {
    *out = std::nan("");
    return true;
  }
  if (size == 254 || size == 255) {
    *out = size == 254 ? INFINITY : -INFINITY;
    return true;
  }
  std::string_view text;
  if (!take(size, &text)) return false;
  // Redis reads it with sscanf("%lg"): a number at the start is enough, nothing at all is not.
  std::string copy(text);
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) return fail("invalid double");
  return true;
}

bool RdbReader::binary_double(double* out) {
  std::string_view bytes;
  if (!take(8, &bytes)) return false;
  const uint64_t bits = get_le(reinterpret_cast<const unsigned char*>(bytes.data()), 8);
  std::memcpy(out, &bits, sizeof *out);
  return true;
}

bool RdbReader::int64_le(int64_t* out) {
  std::string_view bytes;
  if (!take(8, &bytes)) return false;
  *out = static_cast<int64_t>(get_le(reinterpret_cast<const unsigned char*>(bytes.data()), 8));
  return true;
}

bool RdbReader::int32_le(int32_t* out) {
  std::string_view bytes;
  if (!take(4, &bytes)) return false;
  *out = static_cast<int32_t>(get_le(reinterpret_cast<const unsigned char*>(bytes.data()), 4));
  return true;
}

bool RdbReader::is_object_type(uint8_t type) {
  return (type <= rdb::kTypeStreamListpacks3 && type != 8) || type == rdb::kTypeHashMetadata ||
         type == rdb::kTypeHashListpackEx;
}

RdbReader::Status RdbReader::object(uint8_t type, const CommandSettings& settings, Value* out) {
  switch (type) {
    case rdb::kTypeString: {
      std::string bytes;
      if (!string(&bytes)) return Status::kError;
      *out = Value::make_string(bytes);
      return Status::kOk;
    }
    case rdb::kTypeList:
    case rdb::kTypeListZiplist:
    case rdb::kTypeListQuicklist:
    case rdb::kTypeListQuicklist2:
      return read_list(type, settings, out);
    case rdb::kTypeSet:
    case rdb::kTypeSetIntset:
    case rdb::kTypeSetListpack:
      return read_set(type, settings, out);
    case rdb::kTypeZSet:
    case rdb::kTypeZSet2:
    case rdb::kTypeZSetZiplist:
    case rdb::kTypeZSetListpack:
      return read_zset(type, settings, out);
    case rdb::kTypeHash:
    case rdb::kTypeHashZipmap:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
    case rdb::kTypeHashMetadata:
    case rdb::kTypeHashListpackEx:
      return read_hash(type, settings, out);
    case rdb::kTypeModule:
    case rdb::kTypeModule2:
      fail("module values are not supported (keywarden loads no modules)");
      return Status::kError;
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
    case rdb::kTypeStreamListpacks3:
      return read_stream(type, settings, out);
    default:
      fail("unknown object type " + std::to_string(type));
      return Status::kError;
  }
}

RdbReader::Status RdbReader::read_list(uint8_t type, const CommandSettings& settings, Value* out) {
  auto list = std::make_unique<ListValue>(settings.list_max_listpack_size);
  auto push = [&](std::string_view element) { list->push_back(element); };
  if (type == rdb::kTypeList) {
    uint64_t count;
    if (!length(&count)) return Status::kError;
    std::string element;
    for (uint64_t i = 0; i < count; ++i) {
      if (!string(&element)) return Status::kError;
      push(element);
    }
  } else if (type == rdb::kTypeListZiplist) {
    std::string blob;
    if (!string(&blob)) return Status::kError;
    if (!rdb_parse_ziplist(blob, push)) return fail("corrupt ziplist"), Status::kError;
  } else {
    // Every node takes at least two bytes of input, so a lying node count ends at the input's
    // end, not in a long loop.
    uint64_t nodes;
    if (!length(&nodes)) return Status::kError;
    std::string blob;
    for (uint64_t i = 0; i < nodes; ++i) {
      uint64_t container = rdb::kQuicklistNodePacked;
      if (type == rdb::kTypeListQuicklist2 && !length(&container)) return Status::kError;
      if (container != rdb::kQuicklistNodePlain && container != rdb::kQuicklistNodePacked) {
        return fail("unknown quicklist node container"), Status::kError;
      }
      if (!string(&blob)) return Status::kError;
      // A node is never empty, not even a plain one (an empty listpack is 7 bytes).
      if (blob.empty()) return fail("empty quicklist node"), Status::kError;
      if (container == rdb::kQuicklistNodePlain) {
        push(blob);
        continue;
      }
      if (type == rdb::kTypeListQuicklist2) {
        if (deep_) ++deep_validations_;
        if (!rdb_parse_listpack(blob, push, deep_)) {
          return fail("corrupt listpack in quicklist"), Status::kError;
        }
      } else if (!rdb_parse_ziplist(blob, push)) {
        return fail("corrupt ziplist in quicklist"), Status::kError;
      }
    }
  }
  if (list->empty()) return Status::kEmpty;
  *out = Value::make_aggregate(ValueType::kList, std::move(list));
  return Status::kOk;
}

RdbReader::Status RdbReader::read_set(uint8_t type, const CommandSettings& settings, Value* out) {
  auto set = std::make_unique<SetValue>();
  bool duplicate = false;
  auto add = [&](std::string_view member) {
    if (!set->add(member, settings.set_limits)) duplicate = true;
  };
  if (type == rdb::kTypeSet) {
    uint64_t count;
    if (!length(&count)) return Status::kError;
    std::string member;
    for (uint64_t i = 0; i < count && !duplicate; ++i) {
      if (!string(&member)) return Status::kError;
      add(member);
    }
  } else {
    std::string blob;
    if (!string(&blob)) return Status::kError;
    if (deep_) ++deep_validations_;
    const bool ok = type == rdb::kTypeSetIntset ? rdb_parse_intset(blob, add, deep_)
                                                : rdb_parse_listpack(blob, add, deep_);
    if (!ok)
      return fail(type == rdb::kTypeSetIntset ? "corrupt intset" : "corrupt listpack"),
             Status::kError;
  }
  if (duplicate) return fail("duplicate set members"), Status::kError;
  if (set->empty()) return Status::kEmpty;
  *out = Value::make_aggregate(ValueType::kSet, std::move(set));
  return Status::kOk;
}

RdbReader::Status RdbReader::read_zset(uint8_t type, const CommandSettings& settings, Value* out) {
  // Loose members are stored in no useful order, so as Redis 7.0 they go into a skiplist and
  // the set converts once loaded if it fits a listpack. Building the listpack as they come
  // would make a score's sign depend on the order: a listpack turns -0 into 0, a skiplist
  // keeps it.
  const bool loose = type == rdb::kTypeZSet || type == rdb::kTypeZSet2;
  auto zset = std::make_unique<ZSetValue>(/*skiplist=*/loose);
  bool bad = false;
  // A listpack (or ziplist) blob stays a listpack unless it has too many entries: Redis 7.0
  // checks only the count on load, not the length of the members.
  ZSetLimits limits = settings.zset_limits;
  if (type == rdb::kTypeZSetZiplist || type == rdb::kTypeZSetListpack) {
    limits.max_listpack_value = INT64_MAX;
  }
  auto add = [&](std::string_view member, double score) {
    if (std::isnan(score)) {
      bad = true;
      return;
    }
    if (zset->add(member, score, ZSetValue::kAddNone, limits) !=
        ZSetValue::AddResult::kAdded) {
      bad = true;
    }
  };
  if (loose) {
    uint64_t count;
    if (!length(&count)) return Status::kError;
    std::string member;
    for (uint64_t i = 0; i < count && !bad; ++i) {
      double score;
      if (!string(&member)) return Status::kError;
      if (!(type == rdb::kTypeZSet ? text_double(&score) : binary_double(&score))) {
        return Status::kError;
      }
      add(member, score);
    }
    if (!bad && zset->fits_listpack(settings.zset_limits)) zset->convert_to_listpack();
  } else {
    std::string blob;
    if (!string(&blob)) return Status::kError;
    std::string member;
    bool have_member = false;
    auto visit = [&](std::string_view element) {
      if (!have_member) {
        member.assign(element);
        have_member = true;
        return;
      }
      have_member = false;
      double score;
      if (!parse_packed_score(element, &score)) {
        bad = true;
        return;
      }
      add(member, score);
    };
    if (type == rdb::kTypeZSetListpack && deep_) ++deep_validations_;
    const bool ok = type == rdb::kTypeZSetZiplist ? rdb_parse_ziplist(blob, visit)
                                                  : rdb_parse_listpack(blob, visit, deep_);
    if (!ok || have_member) return fail("corrupt sorted set blob"), Status::kError;
  }
  if (bad) return fail("invalid or duplicate sorted set members"), Status::kError;
  if (zset->empty()) return Status::kEmpty;
  *out = Value::make_aggregate(ValueType::kZSet, std::move(zset));
  return Status::kOk;
}

RdbReader::Status RdbReader::read_hash(uint8_t type, const CommandSettings& settings, Value* out) {
  auto hash = std::make_unique<HashValue>();
  bool duplicate = false;
  // As for sorted sets, a listpack or ziplist blob converts on load for its count alone.
  HashLimits limits = settings.hash_limits;
  if (type == rdb::kTypeHashZiplist || type == rdb::kTypeHashListpack) {
    limits.max_listpack_value = INT64_MAX;
  }
  auto set = [&](std::string_view field, std::string_view value) {
    if (!hash->set(field, value, limits)) duplicate = true;
  };
  // Field deadlines: kept as read, even when already passed (expiry deletes those, and
  // propagates it, as soon as the keyspace holds them); out of range is corruption.
  bool bad_deadline = false;
  auto set_deadline = [&](std::string_view field, int64_t deadline) {
    // Redis's loader refuses deadlines past 2^48 - 1 too; a hash cannot store them.
    if (deadline < 0 || deadline > kMaxStoredFieldDeadlineMs) {
      bad_deadline = true;
      return;
    }
    if (deadline != kNoFieldDeadline) hash->set_field_deadline(field, deadline);
  };
  if (type == rdb::kTypeHashMetadata || type == rdb::kTypeHashListpackEx) {
    int64_t earliest;
    if (!int64_le(&earliest)) return Status::kError;
    if (earliest < 0) return fail("corrupt hash field deadline"), Status::kError;
    if (type == rdb::kTypeHashMetadata) {
      uint64_t count;
      if (!length(&count)) return Status::kError;
      std::string field, value;
      for (uint64_t i = 0; i < count && !duplicate && !bad_deadline; ++i) {
        uint64_t relative;
        if (!length(&relative) || !string(&field) || !string(&value)) return Status::kError;
        set(field, value);
        if (relative == 0) continue;
        if (relative - 1 > static_cast<uint64_t>(INT64_MAX - earliest)) {
          bad_deadline = true;
          break;
        }
        set_deadline(field, earliest + static_cast<int64_t>(relative - 1));
      }
    } else {
      std::string blob;
      if (!string(&blob)) return Status::kError;
      if (deep_) ++deep_validations_;
      std::string field, value;
      int position = 0;
      auto visit = [&](std::string_view element) {
        if (position == 0) {
          field.assign(element);
        } else if (position == 1) {
          value.assign(element);
        } else {
          int64_t deadline;
          if (!parse_int64(element, &deadline) || deadline < 0) {
            bad_deadline = true;
          } else {
            set(field, value);
            if (deadline != 0) set_deadline(field, deadline);
          }
        }
        position = (position + 1) % 3;
      };
      if (!rdb_parse_listpack(blob, visit, deep_) || position != 0) {
        return fail("corrupt hash blob"), Status::kError;
      }
    }
    if (bad_deadline) return fail("corrupt hash field deadline"), Status::kError;
  } else if (type == rdb::kTypeHash) {
    uint64_t count;
    if (!length(&count)) return Status::kError;
    std::string field, value;
    for (uint64_t i = 0; i < count && !duplicate; ++i) {
      if (!string(&field) || !string(&value)) return Status::kError;
      set(field, value);
    }
  } else {
    std::string blob;
    if (!string(&blob)) return Status::kError;
    std::string field;
    bool have_field = false;
    auto visit = [&](std::string_view element) {
      if (!have_field) {
        field.assign(element);
        have_field = true;
        return;
      }
      have_field = false;
      set(field, element);
    };
    bool ok;
    if (type == rdb::kTypeHashZipmap) {
      ok = rdb_parse_zipmap(blob, visit);
    } else if (type == rdb::kTypeHashZiplist) {
      ok = rdb_parse_ziplist(blob, visit);
    } else {
      if (deep_) ++deep_validations_;
      ok = rdb_parse_listpack(blob, visit, deep_);
    }
    if (!ok || have_field) return fail("corrupt hash blob"), Status::kError;
  }
  if (duplicate) return fail("duplicate hash fields"), Status::kError;
  if (hash->empty()) return Status::kEmpty;
  *out = Value::make_aggregate(ValueType::kHash, std::move(hash));
  return Status::kOk;
}

RdbReader::Status RdbReader::read_stream(uint8_t type, const CommandSettings& settings,
                                         Value* out) {
  auto stream = std::make_unique<StreamValue>(settings.stream_node_max_bytes,
                                              settings.stream_node_max_entries);
  uint64_t node_count;
  if (!length(&node_count)) return Status::kError;
  std::string key;
  std::string blob;
  std::vector<std::string> elements;
  std::vector<std::string_view> fields;
  for (uint64_t n = 0; n < node_count; ++n) {
    if (!string(&key) || !string(&blob)) return Status::kError;
    if (key.size() != 16) {
      fail("stream node key is not 128 bits");
      return Status::kError;
    }
    elements.clear();
    if (!rdb_parse_listpack(blob, [&](std::string_view e) { elements.emplace_back(e); }, true)) {
      fail("bad stream listpack");
      return Status::kError;
    }
    if (elements.empty()) {
      fail("Empty listpack inside stream");
      return Status::kError;
    }
    const StreamId master = stream_id_from_bytes(key);
    if (n > 0 && master <= stream->loaded_top()) {
      fail("stream nodes out of order");
      return Status::kError;
    }
    // Integers of the listpack, read in order.
    size_t at = 0;
    bool ok = true;
    auto integer = [&]() -> int64_t {
      int64_t v = 0;
      if (at >= elements.size() || !parse_int64(elements[at], &v)) ok = false;
      ++at;
      return v;
    };
    const int64_t live = integer();
    const int64_t deleted = integer();
    const int64_t master_fields = integer();
    if (!ok || live < 0 || deleted < 0 || master_fields < 0 ||
        static_cast<uint64_t>(master_fields) > elements.size()) {
      fail("bad stream master entry");
      return Status::kError;
    }
    std::vector<std::string_view> names;
    for (int64_t i = 0; i < master_fields && at < elements.size(); ++i) names.push_back(elements[at++]);
    if (integer() != 0 || !ok || names.size() != static_cast<size_t>(master_fields)) {
      fail("bad stream master entry");
      return Status::kError;
    }
    stream->load_node(master, names);
    int64_t seen_live = 0;
    int64_t seen_deleted = 0;
    while (ok && at < elements.size()) {
      const size_t entry_start = at;
      const int64_t flags = integer();
      const int64_t ms_delta = integer();
      const int64_t seq_delta = integer();
      if (!ok || flags < 0 || flags > 3) {
        ok = false;
        break;
      }
      const StreamId id{master.ms + static_cast<uint64_t>(ms_delta),
                        master.seq + static_cast<uint64_t>(seq_delta)};
      fields.clear();
      if ((flags & 2) != 0) {
        if (elements.size() - at < names.size()) {
          ok = false;
          break;
        }
        for (std::string_view name : names) {
          fields.push_back(name);
          fields.push_back(elements[at++]);
        }
      } else {
        const int64_t count = integer();
        if (!ok || count < 0 || static_cast<uint64_t>(count) > (elements.size() - at) / 2) {
          ok = false;
          break;
        }
        for (int64_t i = 0; i < count; ++i) {
          fields.push_back(elements[at++]);
          fields.push_back(elements[at++]);
        }
      }
      const int64_t lp_count = integer();
      if (!ok || lp_count != static_cast<int64_t>(at - entry_start - 1)) {
        ok = false;
        break;
      }
      if (!stream->load_entry(id, fields, (flags & 1) != 0)) {
        ok = false;
        break;
      }
      ((flags & 1) != 0 ? seen_deleted : seen_live)++;
    }
    if (!ok || seen_live != live || seen_deleted != deleted || seen_live + seen_deleted == 0) {
      fail("bad stream entries");
      return Status::kError;
    }
  }
  uint64_t total;
  StreamId last;
  StreamId first;
  StreamId max_deleted;
  uint64_t entries_added;
  if (!length(&total) || !length(&last.ms) || !length(&last.seq)) return Status::kError;
  const bool v2 = type != rdb::kTypeStreamListpacks;
  if (v2) {
    if (!length(&first.ms) || !length(&first.seq) || !length(&max_deleted.ms) ||
        !length(&max_deleted.seq) || !length(&entries_added)) {
      return Status::kError;
    }
  } else {
    entries_added = total;
  }
  if (!stream->load_finish(total, last, first, max_deleted, entries_added)) {
    fail("stream length or last ID inconsistent");
    return Status::kError;
  }
  if (!v2) {
    StreamId edge;
    stream->load_finish(total, last, stream->edge_id(true, &edge) ? edge : StreamId{},
                        max_deleted, entries_added);
  }
  uint64_t group_count;
  if (!length(&group_count)) return Status::kError;
  std::string name;
  for (uint64_t g = 0; g < group_count; ++g) {
    StreamId group_last;
    if (!string(&name) || !length(&group_last.ms) || !length(&group_last.seq)) {
      return Status::kError;
    }
    int64_t entries_read;
    if (v2) {
      uint64_t read;
      if (!length(&read)) return Status::kError;
      entries_read = static_cast<int64_t>(read);
    } else {
      entries_read = stream->estimate_distance(group_last);
    }
    auto [it, inserted] = stream->groups().try_emplace(name);
    if (!inserted) {
      fail("Duplicated consumer group name");
      return Status::kError;
    }
    StreamGroup& group = it->second;
    group.last_id = group_last;
    group.entries_read = entries_read;
    uint64_t pel_size;
    if (!length(&pel_size)) return Status::kError;
    std::string_view raw_id;
    for (uint64_t i = 0; i < pel_size; ++i) {
      int64_t delivery_time;
      uint64_t delivery_count;
      if (!take(16, &raw_id) || !int64_le(&delivery_time) || !length(&delivery_count)) {
        return Status::kError;
      }
      auto [pending, fresh] = group.pending.try_emplace(stream_id_from_bytes(raw_id));
      if (!fresh) {
        fail("Duplicated global PEL entry loading stream consumer group");
        return Status::kError;
      }
      pending->second.delivery_time_ms = delivery_time;
      pending->second.delivery_count = delivery_count;
    }
    std::set<StreamId> owned;
    uint64_t consumer_count;
    if (!length(&consumer_count)) return Status::kError;
    size_t claimed = 0;
    for (uint64_t c = 0; c < consumer_count; ++c) {
      std::string consumer_name;
      int64_t seen_time;
      if (!string(&consumer_name) || !int64_le(&seen_time)) return Status::kError;
      if (type == rdb::kTypeStreamListpacks3) {
        int64_t active_time;
        if (!int64_le(&active_time)) return Status::kError;
      }
      auto [consumer_it, new_consumer] = group.consumers.try_emplace(consumer_name);
      if (!new_consumer) {
        fail("Duplicate stream consumer detected");
        return Status::kError;
      }
      StreamConsumer& consumer = consumer_it->second;
      consumer.seen_time_ms = seen_time;
      uint64_t owned_count;
      if (!length(&owned_count)) return Status::kError;
      for (uint64_t i = 0; i < owned_count; ++i) {
        if (!take(16, &raw_id)) return Status::kError;
        const StreamId id = stream_id_from_bytes(raw_id);
        auto pending = group.pending.find(id);
        if (pending == group.pending.end() || !owned.insert(id).second) {
          fail("Consumer PEL NACK not found in group PEL");
          return Status::kError;
        }
        consumer.pending.insert(id);
        pending->second.consumer = consumer_name;
        ++claimed;
      }
    }
    if (claimed != group.pending.size()) {
      fail("Stream CG PEL entry without consumer");
      return Status::kError;
    }
  }
  *out = Value::make_aggregate(ValueType::kStream, std::move(stream));
  return Status::kOk;
}

// --- DUMP payloads -----------------------------------------------------------------------------

std::string encode_dump_payload(const Value& value) {
  RdbWriter out(/*compression=*/true);
  out.object(value);
  std::string& payload = out.buffer();
  // A hash with field deadlines needs RDB 12 to be read back; anything else stays at 10, which
  // Redis 7.0 restores.
  const bool field_ttls =
      value.type() == ValueType::kHash && value.as<HashValue>().volatile_count() > 0;
  const int version = field_ttls ? rdb::kVersionWithFieldTtl : rdb::kVersion;
  payload.push_back(static_cast<char>(version & 0xff));
  payload.push_back(static_cast<char>((version >> 8) & 0xff));
  put_le(payload, crc64(0, payload), 8);
  return std::move(payload);
}

DumpPayloadStatus decode_dump_payload(std::string_view payload, const CommandSettings& settings,
                                      bool deep, Value* out, uint64_t* deep_validations) {
  // Redis's verifyDumpPayload: a footer of a version we can read and a matching CRC64.
  if (payload.size() < 10) return DumpPayloadStatus::kBadFooter;
  const auto* footer = reinterpret_cast<const unsigned char*>(payload.data() + payload.size() - 10);
  // Up to 10 as Redis 7.0, and 12 (Redis 7.4+, which hashes with field deadlines need; a
  // Redis 8 DUMP of anything else carries it too). 11 stays refused as 7.0 refuses it: the
  // 7.2 types it brings are not loaded here.
  const uint64_t version = get_le(footer, 2);
  if (version > static_cast<uint64_t>(rdb::kVersion) &&
      version != static_cast<uint64_t>(rdb::kVersionWithFieldTtl)) {
    return DumpPayloadStatus::kBadFooter;
  }
  if (crc64(0, payload.substr(0, payload.size() - 8)) != get_le(footer + 2, 8)) {
    return DumpPayloadStatus::kBadFooter;
  }
  // Redis reads the object from the whole payload, footer included: an object cut short
  // takes its last bytes from the footer, and whatever follows a complete one is not looked at.
  RdbReader in(payload, deep);
  uint8_t type = 0;
  Value value;
  // Types added after RDB 10 (7.2's listpack sets, streams 3) are as unknown here as they are
  // to Redis 7.0, except the hashes with field deadlines, in a payload that says RDB 12.
  const bool known = in.byte(&type) && RdbReader::is_object_type(type) &&
                     (type <= rdb::kTypeStreamListpacks2 ||
                      ((type == rdb::kTypeHashMetadata || type == rdb::kTypeHashListpackEx) &&
                       version >= static_cast<uint64_t>(rdb::kVersionWithFieldTtl)));
  const auto status = known ? in.object(type, settings, &value) : RdbReader::Status::kError;
  if (deep_validations != nullptr) *deep_validations += in.deep_validations();
  if (status != RdbReader::Status::kOk) return DumpPayloadStatus::kBadData;
  *out = std::move(value);
  return DumpPayloadStatus::kOk;
}

}  // namespace keywarden
