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
