// keywarden::Reply: one server reply, RESP2 or RESP3, as a self-contained value the caller
// owns. Accessors check the type and throw ProtocolError on a mismatch, so a reply of an
// unexpected shape never reads as a default value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class Reply {
 public:
  enum class Type {
    kNull,
    kSimpleString,
    kError,
    kInteger,
    kBulk,
    kArray,
    kMap,
    kSet,
    kPush,
    kDouble,
    kBoolean,
    kBigNumber,
    kVerbatim,
  };

  Reply() = default;  // null

  static Reply null() { return Reply(); }
  static Reply simple_string(std::string text);
  static Reply error(std::string text);
  static Reply integer(int64_t value);
  static Reply bulk(std::string text);
  static Reply array(std::vector<Reply> elements);
  // Keys and values alternate: k1, v1, k2, v2...
  static Reply map(std::vector<Reply> keys_and_values);
  static Reply set(std::vector<Reply> elements);
  static Reply push(std::vector<Reply> elements);
  static Reply double_value(double value);
  static Reply boolean(bool value);
  static Reply big_number(std::string digits);
  static Reply verbatim(std::string format, std::string text);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_error() const { return type_ == Type::kError; }
  bool is_integer() const { return type_ == Type::kInteger; }
  // Simple string, bulk or verbatim: the types that carry text as data.
  bool is_string() const {
    return type_ == Type::kSimpleString || type_ == Type::kBulk || type_ == Type::kVerbatim;
  }
  // Array, set or push (a map counts too: its elements() alternate keys and values).
  bool is_aggregate() const {
    return type_ == Type::kArray || type_ == Type::kSet || type_ == Type::kPush ||
           type_ == Type::kMap;
  }

  // The text of a simple string, error, bulk, verbatim or big number.
  const std::string& str() const;
  // An integer reply.
  int64_t integer() const;
  // A double reply (RESP3 ','); an integer reply converts too.
  double as_double() const;
  // A boolean reply (RESP3 '#'); an integer 0/1 reply converts too (RESP2 servers).
  bool boolean() const;
  // A verbatim string's format, e.g. "txt".
  const std::string& verbatim_format() const;
  // An error's first word, e.g. "WRONGTYPE".
  std::string error_code() const;

  // Elements of an array, set, push or map (a map's keys and values alternate).
  const std::vector<Reply>& elements() const;
  size_t size() const { return elements().size(); }
  const Reply& operator[](size_t i) const;
  // A map's entry count, its i-th key and value, and the value under a string key (nullptr if
  // absent). A RESP2 flat array of pairs (what HGETALL returns there) reads as a map too.
  size_t map_size() const;
  const Reply& key(size_t i) const;
  const Reply& value(size_t i) const;
  const Reply* find(std::string_view key) const;

  // One-line rendering for logs and test failures: +OK, -ERR x, :5, "bulk", (nil), [a, b],
  // {k: v}, ~{a}, >[a], ,1.5, #t, (123, =txt:"x".
  std::string to_string() const;

  bool operator==(const Reply&) const = default;

 private:
  explicit Reply(Type type) : type_(type) {}
  void expect_aggregate() const;

  Type type_ = Type::kNull;
  std::string str_;
  std::string format_;
  int64_t integer_ = 0;
  double double_ = 0;
  std::vector<Reply> elements_;
};

const char* to_string(Reply::Type type);

}  // namespace keywarden
