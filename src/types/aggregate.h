// What every collection payload (hash, list, set, sorted set) offers the Value that owns it.
//
// A Value holds at most one aggregate behind a single pointer, whatever its type, so that a
// string value stays small and each collection type lives in its own file without Value
// knowing its layout. The Value's type says which concrete class the pointer holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace keywarden {

// Every encoding OBJECT ENCODING can report, with Redis's names (see encoding_name()).
enum class Encoding : uint8_t {
  kInt,
  kEmbStr,
  kRaw,
  kListpack,
  kHashTable,
  kQuicklist,
  kIntset,
  kSkiplist,
  kListpackEx,  // Redis 7.4+: a small hash with field deadlines
  kStream,
};

class Aggregate {
 public:
  virtual ~Aggregate() = default;
  // A deep copy (COPY, and Value's copy constructor).
  virtual std::unique_ptr<Aggregate> clone() const = 0;
  virtual Encoding encoding() const = 0;
  // Number of elements (fields, members, list entries).
  virtual size_t size() const = 0;
  // Approximate heap bytes held by the payload, including this object.
  virtual size_t payload_bytes() const = 0;
};

}  // namespace keywarden
