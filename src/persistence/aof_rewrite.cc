// The keyspace as AOF commands (aof_rewrite.h).
#include "persistence/aof_rewrite.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/number.h"
#include "persistence/function_libraries.h"
#include "persistence/rdb_file.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

// Redis's AOF_REWRITE_ITEMS_PER_CMD: keeps each command's argument count bounded.
constexpr size_t kItemsPerCommand = 64;
constexpr size_t kWriteChunk = 1 << 20;

class CommandWriter {
 public:
  explicit CommandWriter(int fd) : fd_(fd) {}

  void header(size_t count) {
    char text[32];
    int length = std::snprintf(text, sizeof(text), "*%zu\r\n", count);
    out_.append(text, static_cast<size_t>(length));
  }
  void bulk(std::string_view bytes) {
    char text[32];
    int length = std::snprintf(text, sizeof(text), "$%zu\r\n", bytes.size());
    out_.append(text, static_cast<size_t>(length));
    out_.append(bytes);
    out_.append("\r\n", 2);
    if (out_.size() >= kWriteChunk) drain();
  }
  void raw(std::string_view bytes) { out_.append(bytes); }
  bool drain() {
    size_t done = 0;
    while (done < out_.size()) {
      ssize_t count = ::write(fd_, out_.data() + done, out_.size() - done);
      if (count < 0) {
        if (errno == EINTR) continue;
        failed_ = errno;
        break;
      }
      done += static_cast<size_t>(count);
    }
    out_.clear();
    return failed_ == 0;
  }
  int failed() const { return failed_; }

 private:
  int fd_;
  std::string out_;
  int failed_ = 0;
};

// A stream as Redis 7.0's rewriteStreamObject writes it: an XADD per entry (or an XADD that
// trims itself away, to create an empty stream), XSETID with the counters, then per group an
// XGROUP CREATE, and per consumer its pending entries as XCLAIM … FORCE (an XGROUP
// CREATECONSUMER for a consumer with none).
void rewrite_stream(CommandWriter& out, std::string_view key, const StreamValue& stream) {
  if (stream.length() > 0) {
    stream.for_range({0, 0}, StreamId::max(), false, [&](const StreamEntry& entry) {
      out.header(3 + entry.fields.size() * 2);
      out.bulk("XADD");
      out.bulk(key);
      out.bulk(entry.id.to_string());
      for (const auto& [field, data] : entry.fields) {
        out.bulk(field);
        out.bulk(data);
      }
      return true;
    });
  } else {
    out.header(7);
    out.bulk("XADD");
    out.bulk(key);
    out.bulk("MAXLEN");
    out.bulk("0");
    out.bulk("0-1");
    out.bulk("x");
    out.bulk("y");
  }
  out.header(7);
  out.bulk("XSETID");
  out.bulk(key);
  out.bulk(stream.last_id().to_string());
  out.bulk("ENTRIESADDED");
  out.bulk(std::to_string(stream.entries_added()));
  out.bulk("MAXDELETEDID");
  out.bulk(stream.max_deleted_id().to_string());
  for (const auto& [name, group] : stream.groups()) {
    out.header(7);
    out.bulk("XGROUP");
    out.bulk("CREATE");
    out.bulk(key);
    out.bulk(name);
    out.bulk(group.last_id.to_string());
    out.bulk("ENTRIESREAD");
    out.bulk(std::to_string(group.entries_read));
    for (const auto& [consumer_name, consumer] : group.consumers) {
      if (consumer.pending.empty()) {
        out.header(5);
        out.bulk("XGROUP");
        out.bulk("CREATECONSUMER");
        out.bulk(key);
        out.bulk(name);
        out.bulk(consumer_name);
        continue;
      }
      for (StreamId id : consumer.pending) {
        auto pending = group.pending.find(id);
        if (pending == group.pending.end()) continue;
        out.header(12);
        out.bulk("XCLAIM");
        out.bulk(key);
        out.bulk(name);
        out.bulk(consumer_name);
        out.bulk("0");
        out.bulk(id.to_string());
        out.bulk("TIME");
        out.bulk(std::to_string(pending->second.delivery_time_ms));
        out.bulk("RETRYCOUNT");
        out.bulk(std::to_string(pending->second.delivery_count));
        out.bulk("JUSTID");
        out.bulk("FORCE");
      }
    }
  }
}

// Emits `items` (each `width` arguments wide) as commands `name key item…` in batches.
template <typename Visit>
void write_batched(CommandWriter& out, std::string_view name, std::string_view key, size_t total,
                   size_t width, Visit&& for_each_item) {
  size_t remaining = total;
  size_t in_batch = 0;
  for_each_item([&](std::initializer_list<std::string_view> item) {
    if (in_batch == 0) {
      size_t count = std::min(remaining, kItemsPerCommand);
      out.header(2 + count * width);
      out.bulk(name);
      out.bulk(key);
      in_batch = count;
      remaining -= count;
    }
    for (std::string_view part : item) out.bulk(part);
    --in_batch;
  });
}

}  // namespace

std::string write_keyspace_as_commands(const Keyspace& keyspace, int fd, int64_t now_ms,
                                       bool timestamp, int64_t key_delay_us,
                                       std::string_view function_records) {
  CommandWriter out(fd);
  if (timestamp) out.raw("#TS:" + std::to_string(now_ms / 1000) + "\r\n");
  std::vector<std::string> libraries;
  if (!split_function_records(function_records, &libraries)) {
    return "Malformed function libraries for the AOF rewrite";
  }
  // Libraries come before the keys, as Redis 7.0 writes them.
  for (const std::string& code : libraries) {
    out.header(3);
    out.bulk("FUNCTION");
    out.bulk("LOAD");
    out.bulk(code);
  }
  for (int index = 0; index < keyspace.database_count(); ++index) {
    const Database& db = keyspace.db(index);
    if (db.size() == 0) continue;
    const std::string db_text = std::to_string(index);
    out.header(2);
    out.bulk("SELECT");
    out.bulk(db_text);
    db.for_each([&](const Entry* entry) {
      const int64_t deadline_ms = db.deadline_of(entry);
      if (entry->has_expiry() && deadline_ms < now_ms) return true;
      const std::string_view key = entry->key();
      const Value& value = entry->value;
      switch (value.type()) {
        case ValueType::kString: {
          char scratch[kInt64BufferSize];
          out.header(3);
          out.bulk("SET");
          out.bulk(key);
          out.bulk(value.string_view(scratch));
          break;
        }
        case ValueType::kList: {
          const auto& list = value.as<ListValue>();
          write_batched(out, "RPUSH", key, list.size(), 1, [&](auto&& emit) {
            list.for_each([&](std::string_view element) { emit({element}); });
          });
          break;
        }
        case ValueType::kSet: {
          const auto& set = value.as<SetValue>();
          write_batched(out, "SADD", key, set.size(), 1, [&](auto&& emit) {
            set.for_each([&](std::string_view member) { emit({member}); });
          });
          break;
        }
        case ValueType::kZSet: {
          const auto& zset = value.as<ZSetValue>();
          write_batched(out, "ZADD", key, zset.size(), 2, [&](auto&& emit) {
            zset.for_each([&](std::string_view member, double score) {
              const std::string text = format_double(score);
              emit({text, member});
            });
          });
          break;
        }
        case ValueType::kStream:
          rewrite_stream(out, key, value.as<StreamValue>());
          break;
        case ValueType::kHash: {
          const auto& hash = value.as<HashValue>();
          write_batched(out, "HMSET", key, hash.size(), 2, [&](auto&& emit) {
            hash.for_each([&](std::string_view field, std::string_view data) {
              emit({field, data});
            });
          });
          // Then each field deadline, as Redis 8's rewrite does: one HPEXPIREAT per field. One
          // already passed still goes out: loading deletes the field, as it would have been.
          hash.for_each_volatile(
              [&](std::string_view field, std::string_view, int64_t field_deadline_ms) {
                out.header(6);
                out.bulk("HPEXPIREAT");
                out.bulk(key);
                out.bulk(std::to_string(field_deadline_ms));
                out.bulk("FIELDS");
                out.bulk("1");
                out.bulk(field);
              });
          break;
        }
      }
      if (entry->has_expiry()) {
        out.header(3);
        out.bulk("PEXPIREAT");
        out.bulk(key);
        out.bulk(std::to_string(deadline_ms));
      }
      if (key_delay_us != 0) debug_key_delay(key_delay_us);
      return out.failed() == 0;
    });
    if (out.failed() != 0) break;
  }
  if (!out.drain())
    return std::string("Write error writing the AOF rewrite: ") + std::strerror(out.failed());
  return "";
}

}  // namespace keywarden
