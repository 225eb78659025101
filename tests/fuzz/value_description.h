// Shared by the RDB/RESTORE fuzz targets: a canonical text of a value (type, encoding aside,
// and its elements: in order for lists and sorted sets, sorted for sets and hashes, whose
// iteration order depends on table history), so that a value can be compared with itself after
// a DUMP and a reload. Any decoded value must survive that round trip unchanged: a decoder
// that accepts bytes must build something internally consistent.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/number.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/value.h"
#include "types/zset_value.h"

namespace keywarden::fuzz {

inline std::string describe(const Value& value) {
  std::vector<std::string> parts;
  switch (value.type()) {
    case ValueType::kString: {
      char scratch[kInt64BufferSize];
      return "string:" + std::string(value.string_view(scratch));
    }
    case ValueType::kList:
      value.as<ListValue>().for_each([&](std::string_view e) { parts.emplace_back(e); });
      break;
    case ValueType::kSet:
      value.as<SetValue>().for_each([&](std::string_view e) { parts.emplace_back(e); });
      std::sort(parts.begin(), parts.end());
      break;
    case ValueType::kHash:
      value.as<HashValue>().for_each([&](std::string_view f, std::string_view v) {
        parts.push_back(std::string(f) + '\0' + std::string(v));
      });
      std::sort(parts.begin(), parts.end());
      break;
    case ValueType::kZSet:
      value.as<ZSetValue>().for_each([&](std::string_view m, double score) {
        parts.push_back(std::string(m) + '\0' + format_double(score));
      });
      break;
    case ValueType::kStream: {
      const auto& stream = value.as<StreamValue>();
      stream.for_range({0, 0}, StreamId::max(), false, [&](const StreamEntry& e) {
        std::string part = e.id.to_string();
        for (const auto& [f, v] : e.fields) part += '\0' + std::string(f) + '\0' + std::string(v);
        parts.push_back(std::move(part));
        return true;
      });
      parts.push_back("last " + stream.last_id().to_string() + " added " +
                      std::to_string(stream.entries_added()));
      for (const auto& [name, group] : stream.groups()) {
        std::string part = "group " + name + " " + group.last_id.to_string() + " " +
                           std::to_string(group.entries_read);
        for (const auto& [id, pending] : group.pending) {
          part += " " + id.to_string() + "@" + pending.consumer + "#" +
                  std::to_string(pending.delivery_count);
        }
        parts.push_back(std::move(part));
      }
      break;
    }
  }
  std::string out =
      std::to_string(static_cast<int>(value.type())) + ":" + std::to_string(parts.size());
  for (const std::string& part : parts) out += "|" + part;
  return out;
}

// Stops the fuzzer with a message: libFuzzer saves the input as a crash.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

}  // namespace keywarden::fuzz
