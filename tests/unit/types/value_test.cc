// Value: the 16-byte layout with each payload kind (int, inline string, heap string, aggregate),
// the encodings OBJECT ENCODING reports whatever the storage, copies / moves / assignments
// across kinds, the inline-heap boundary, in-place edits (APPEND, SETRANGE) and MEMORY USAGE.
#include "types/value.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "types/hash_value.h"

namespace keywarden {
namespace {

std::string text_of(const Value& value) {
  char scratch[kInt64BufferSize];
  return std::string(value.string_view(scratch));
}

// One value of each payload kind, with what it reads back as.
struct Sample {
  std::string name;
  Value value;
};

Value hash_with(std::string_view field, std::string_view content) {
  Value value = Value::make_hash();
  value.as<HashValue>().set(field, content, HashLimits{});
  return value;
}

std::vector<Sample> samples() {
  std::vector<Sample> out;
  out.push_back({"int", Value::make_string("12345")});
  out.push_back({"inline", Value::make_string("short")});
  out.push_back({"heap", Value::make_string(std::string(30, 'h'))});
  out.push_back({"raw-heap", Value::make_string(std::string(100, 'r'))});
  out.push_back({"hash", hash_with("f", "v")});
  return out;
}

// Whether `value` reads back as a fresh copy of sample `index`.
void expect_same(const Value& value, const Value& reference) {
  EXPECT_EQ(value.type(), reference.type());
  EXPECT_EQ(value.encoding(), reference.encoding());
  EXPECT_EQ(value.payload_bytes(), reference.payload_bytes());
  if (reference.type() == ValueType::kString) {
    EXPECT_EQ(text_of(value), text_of(reference));
    EXPECT_EQ(value.string_length(), reference.string_length());
  } else {
    ASSERT_EQ(value.aggregate_size(), reference.aggregate_size());
    EXPECT_EQ(*value.as<HashValue>().find("f"), *reference.as<HashValue>().find("f"));
  }
}

TEST(ValueTest, IsSixteenBytes) { EXPECT_EQ(sizeof(Value), 16u); }

TEST(ValueTest, DefaultIsAnEmptyRawString) {
  Value value;
  EXPECT_EQ(value.type(), ValueType::kString);
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(text_of(value), "");
  EXPECT_EQ(value.string_length(), 0u);
  EXPECT_EQ(value.payload_bytes(), 0u);
  EXPECT_FALSE(value.is_int());
  EXPECT_EQ(value.int_value(), 0);
}

TEST(ValueTest, IntBoundaries) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (int64_t number : {min, min + 1, int64_t{-1}, int64_t{0}, int64_t{1}, max - 1, max}) {
    Value value = Value::make_string(std::to_string(number));
    EXPECT_TRUE(value.is_int()) << number;
    EXPECT_EQ(value.int_value(), number);
    EXPECT_EQ(value.encoding(), Encoding::kInt);
    EXPECT_EQ(text_of(value), std::to_string(number));
    EXPECT_EQ(value.string_length(), std::to_string(number).size());
    EXPECT_EQ(value.payload_bytes(), 0u);
    EXPECT_EQ(text_of(Value::make_int(number)), std::to_string(number));
  }
  // One past the range, a leading zero, a plus sign or spaces stay strings.
  for (const char* text : {"9223372036854775808", "-9223372036854775809", "007", "+1", " 1",
                           "1 ", "-0", ""}) {
    Value value = Value::make_string(text);
    EXPECT_FALSE(value.is_int()) << text;
    EXPECT_EQ(value.encoding(), Encoding::kEmbStr) << text;
    EXPECT_EQ(text_of(value), text);
  }
  EXPECT_FALSE(Value::make_plain_string("42").is_int());
  EXPECT_EQ(Value::make_plain_string("42").encoding(), Encoding::kEmbStr);
}

TEST(ValueTest, InlineHeapBoundaryAtTheExactLength) {
  const std::string at_limit(kInlineStringCapacity, 'a');
  const std::string past_limit(kInlineStringCapacity + 1, 'b');
  Value inline_value = Value::make_string(at_limit);
  EXPECT_EQ(text_of(inline_value), at_limit);
  EXPECT_EQ(inline_value.encoding(), Encoding::kEmbStr);
  EXPECT_EQ(inline_value.payload_bytes(), 0u);  // no allocation
  Value heap_value = Value::make_string(past_limit);
  EXPECT_EQ(text_of(heap_value), past_limit);
  EXPECT_EQ(heap_value.encoding(), Encoding::kEmbStr);
  // A 16-byte header (size, capacity), then exactly the bytes.
  EXPECT_EQ(heap_value.payload_bytes(), 16 + past_limit.size());
}

TEST(ValueTest, EmbstrRawBoundaryIndependentOfStorage) {
  EXPECT_EQ(Value::make_string(std::string(kEmbStrMaxLength, 'x')).encoding(),
            Encoding::kEmbStr);
  EXPECT_EQ(Value::make_string(std::string(kEmbStrMaxLength + 1, 'x')).encoding(),
            Encoding::kRaw);
  // make_raw reports raw however short: the bytes sit inline all the same.
  Value raw = Value::make_raw("ab");
  EXPECT_EQ(raw.encoding(), Encoding::kRaw);
  EXPECT_EQ(raw.payload_bytes(), 0u);
  EXPECT_EQ(text_of(raw), "ab");
  Value long_raw = Value::make_raw(std::string(20, 'z'));
  EXPECT_EQ(long_raw.encoding(), Encoding::kRaw);
  EXPECT_EQ(text_of(long_raw), std::string(20, 'z'));
  // Bytes with zeros and high bits are kept as they are, inline and on the heap.
  const std::string binary("\0\xff\x01z\0", 5);
  EXPECT_EQ(text_of(Value::make_string(binary)), binary);
  EXPECT_EQ(text_of(Value::make_string(binary + binary + binary + binary)),
            binary + binary + binary + binary);
}

TEST(ValueTest, CopyEveryKind) {
  for (const Sample& sample : samples()) {
    SCOPED_TRACE(sample.name);
    Value copy(sample.value);
    expect_same(copy, sample.value);
  }
  // A deep copy: changing the copy leaves the original alone.
  Value heap = Value::make_string(std::string(30, 'h'));
  Value heap_copy(heap);
  heap_copy.append("!");
  EXPECT_EQ(text_of(heap), std::string(30, 'h'));
  Value hash = hash_with("f", "v");
  Value hash_copy(hash);
  hash_copy.as<HashValue>().set("g", "w", HashLimits{});
  EXPECT_EQ(hash.aggregate_size(), 1u);
  EXPECT_EQ(hash_copy.aggregate_size(), 2u);
}

TEST(ValueTest, MoveEveryKindLeavesAnEmptyString) {
  for (Sample& sample : samples()) {
    SCOPED_TRACE(sample.name);
    const Value reference(sample.value);
    Value moved(std::move(sample.value));
    expect_same(moved, reference);
    EXPECT_EQ(sample.value.type(), ValueType::kString);
    EXPECT_EQ(text_of(sample.value), "");
    EXPECT_EQ(sample.value.payload_bytes(), 0u);
  }
}

TEST(ValueTest, CopyAndMoveAssignAcrossEveryPairOfKinds) {
  const std::vector<Sample> references = samples();
  for (size_t from = 0; from < references.size(); ++from) {
    for (size_t to = 0; to < references.size(); ++to) {
      SCOPED_TRACE(references[from].name + " -> " + references[to].name);
      std::vector<Sample> targets = samples();
      targets[to].value = references[from].value;
      expect_same(targets[to].value, references[from].value);
      std::vector<Sample> sources = samples();
      std::vector<Sample> move_targets = samples();
      move_targets[to].value = std::move(sources[from].value);
      expect_same(move_targets[to].value, references[from].value);
      EXPECT_EQ(text_of(sources[from].value), "");
    }
  }
}

TEST(ValueTest, SelfAssignmentKeepsTheValue) {
  for (Sample& sample : samples()) {
    SCOPED_TRACE(sample.name);
    const Value reference(sample.value);
    Value& alias = sample.value;
    sample.value = alias;
    expect_same(sample.value, reference);
    sample.value = std::move(alias);
    expect_same(sample.value, reference);
  }
}

TEST(ValueTest, AssignStringAcrossKinds) {
  for (Sample& sample : samples()) {
    SCOPED_TRACE(sample.name);
    sample.value.assign_string("77");
    EXPECT_TRUE(sample.value.is_int());
    EXPECT_EQ(sample.value.int_value(), 77);
    sample.value.assign_string("tiny");
    EXPECT_EQ(sample.value.encoding(), Encoding::kEmbStr);
    EXPECT_EQ(text_of(sample.value), "tiny");
    EXPECT_EQ(sample.value.payload_bytes(), 0u);
    sample.value.assign_string(std::string(50, 'q'));
    EXPECT_EQ(sample.value.encoding(), Encoding::kRaw);
    EXPECT_EQ(text_of(sample.value), std::string(50, 'q'));
    EXPECT_EQ(sample.value.type(), ValueType::kString);
  }
}

TEST(ValueTest, AssignStringReusesAHeapBufferOfSimilarSize) {
  Value value = Value::make_string(std::string(40, 'a'));
  const size_t bytes = value.payload_bytes();
  value.assign_string(std::string(30, 'b'));  // fits, not more than twice the need: reused
  EXPECT_EQ(value.payload_bytes(), bytes);
  EXPECT_EQ(text_of(value), std::string(30, 'b'));
  EXPECT_EQ(value.encoding(), Encoding::kEmbStr);
  value.assign_string(std::string(15, 'c'));  // 40 <= 2 * 15 + 16: still reused
  EXPECT_EQ(value.payload_bytes(), bytes);
  EXPECT_EQ(text_of(value), std::string(15, 'c'));
  Value big = Value::make_string(std::string(100, 'a'));
  big.assign_string(std::string(30, 'c'));  // 100 > 2 * 30 + 16: a new, exact block
  EXPECT_EQ(big.payload_bytes(), 16u + 30u);
  EXPECT_EQ(text_of(big), std::string(30, 'c'));
  value.assign_string(std::string(60, 'd'));  // too big for the block
  EXPECT_EQ(value.payload_bytes(), 16u + 60u);
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  value.assign_string(std::string(45, 'e'));  // reused, raw by length
  EXPECT_EQ(value.payload_bytes(), 16u + 60u);
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  value.assign_string(std::string(44, 'f'));  // reused, embstr by length
  EXPECT_EQ(value.encoding(), Encoding::kEmbStr);
  EXPECT_EQ(text_of(value), std::string(44, 'f'));
  // Short strings go back inline and free the block.
  value.assign_string("s");
  EXPECT_EQ(value.payload_bytes(), 0u);
  EXPECT_EQ(text_of(value), "s");
}

TEST(ValueTest, AssignStringFromItsOwnBytes) {
  Value value = Value::make_string(std::string(20, 'a') + std::string(20, 'b'));
  char scratch[kInt64BufferSize];
  value.assign_string(value.string_view(scratch).substr(20));  // reused block, overlapping
  EXPECT_EQ(text_of(value), std::string(20, 'b'));
  Value other = Value::make_string(std::string(100, 'x') + "yy");
  other.assign_string(other.string_view(scratch).substr(80));  // a new block
  EXPECT_EQ(text_of(other), std::string(20, 'x') + "yy");
}

TEST(ValueTest, AppendTurnsInlineIntoRawAndGrowsOntoTheHeap) {
  Value value = Value::make_string("abc");
  EXPECT_EQ(value.append(""), 3u);  // even nothing makes it raw, as Redis
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(value.payload_bytes(), 0u);
  EXPECT_EQ(value.append(std::string(kInlineStringCapacity - 3, 'd')), kInlineStringCapacity);
  EXPECT_EQ(value.payload_bytes(), 0u);  // still inline at the exact capacity
  EXPECT_EQ(value.append("e"), kInlineStringCapacity + 1);
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(text_of(value), "abc" + std::string(kInlineStringCapacity - 3, 'd') + "e");
  // The block doubles the need, so the next appends do not reallocate.
  EXPECT_EQ(value.payload_bytes(), 16u + 2 * (kInlineStringCapacity + 1));
  const size_t bytes = value.payload_bytes();
  value.append("fgh");
  EXPECT_EQ(value.payload_bytes(), bytes);
  EXPECT_EQ(value.string_length(), kInlineStringCapacity + 4);
}

TEST(ValueTest, AppendToAnIntFormatsItFirst) {
  Value value = Value::make_string("-12");
  EXPECT_EQ(value.append("34"), 5u);
  EXPECT_FALSE(value.is_int());
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(text_of(value), "-1234");
  Value big = Value::make_int(std::numeric_limits<int64_t>::min());
  big.append("x");  // 20 digits and sign: straight onto the heap
  EXPECT_EQ(text_of(big), "-9223372036854775808x");
}

TEST(ValueTest, ZeroExtendGrowsInPlaceTurnsRawAndNeverShrinks) {
  Value number = Value::make_string("123");
  char* bytes = number.zero_extend(2);  // shorter than the value: kept whole, but raw
  EXPECT_FALSE(number.is_int());
  EXPECT_EQ(number.encoding(), Encoding::kRaw);
  EXPECT_EQ(std::string(bytes, 3), "123");
  bytes = number.zero_extend(40);  // onto the heap, zero padded
  bytes[39] = 'x';
  EXPECT_EQ(text_of(number), "123" + std::string(36, '\0') + "x");
  Value fresh = Value::make_raw({});
  std::memset(fresh.extend_for_overwrite(20), 'y', 20);
  EXPECT_EQ(text_of(fresh), std::string(20, 'y'));
  EXPECT_EQ(fresh.encoding(), Encoding::kRaw);
}

TEST(ValueTest, WriteAtPadsWithZerosAndTurnsRaw) {
  Value value = Value::make_string("hello");
  EXPECT_EQ(value.write_at(1, "EL"), 5u);
  EXPECT_EQ(text_of(value), "hELlo");
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(value.write_at(8, "!"), 9u);
  EXPECT_EQ(text_of(value), std::string("hELlo\0\0\0!", 9));
  EXPECT_EQ(value.write_at(30, "end"), 33u);  // onto the heap
  EXPECT_EQ(value.string_length(), 33u);
  EXPECT_EQ(text_of(value).substr(0, 9), std::string("hELlo\0\0\0!", 9));
  EXPECT_EQ(text_of(value).substr(9, 21), std::string(21, '\0'));
  EXPECT_EQ(text_of(value).substr(30), "end");
  Value number = Value::make_string("1000");
  number.write_at(0, "9");
  EXPECT_FALSE(number.is_int());
  EXPECT_EQ(text_of(number), "9000");
  Value heap = Value::make_string(std::string(50, 'a'));
  heap.write_at(0, "b");  // fits: same block
  EXPECT_EQ(heap.payload_bytes(), 16u + 50u);
  EXPECT_EQ(text_of(heap), "b" + std::string(49, 'a'));
}

// A heap string grows by reallocating its block (in place when the allocator can): the bytes
// survive every growth, small ones double the room and big ones (1 MiB and more) add 1 MiB.
TEST(ValueTest, GrowingAHeapStringKeepsItsBytes) {
  std::string expected;
  for (int i = 0; i < 3000; ++i) expected += static_cast<char>('a' + i % 26);
  Value value = Value::make_plain_string(expected);
  EXPECT_EQ(value.payload_bytes(), 16u + 3000u);  // exact size, as created
  expected += "tail";
  EXPECT_EQ(value.write_at(3000, "tail"), 3004u);
  EXPECT_EQ(value.payload_bytes(), 16u + 2 * 3004u);
  EXPECT_EQ(text_of(value), expected);
  const size_t big = size_t{2} << 20;
  expected.resize(big, '\0');
  expected += "end";
  EXPECT_EQ(value.write_at(big, "end"), big + 3);
  EXPECT_EQ(value.payload_bytes(), 16u + big + 3 + (size_t{1} << 20));
  EXPECT_EQ(text_of(value), expected);
  EXPECT_EQ(value.append("!"), big + 4);  // into the room left: no growth
  EXPECT_EQ(value.payload_bytes(), 16u + big + 3 + (size_t{1} << 20));
  EXPECT_EQ(text_of(value), expected + "!");
}

TEST(ValueTest, MemoryUsageFigures) {
  EXPECT_EQ(Value::make_int(1).payload_bytes(), 0u);
  EXPECT_EQ(Value::make_string("ten bytes!").payload_bytes(), 0u);
  EXPECT_EQ(Value::make_string(std::string(44, 'x')).payload_bytes(), 16u + 44u);
  EXPECT_EQ(Value::make_string(std::string(1000, 'x')).payload_bytes(), 16u + 1000u);
  Value hash = hash_with("f", "v");
  EXPECT_EQ(hash.payload_bytes(), hash.as<HashValue>().payload_bytes());
  EXPECT_EQ(hash.type(), ValueType::kHash);
  EXPECT_EQ(hash.encoding(), Encoding::kListpack);
  EXPECT_EQ(Value::make_hash().aggregate_size(), 0u);
  EXPECT_EQ(Value::make_string("abc").aggregate_size(), 0u);
}


TEST(ValueTest, AdoptsABlockWithoutCopyingIt) {
  const std::string bytes(100000, 'q');
  StringBlock block = StringBlock::allocate(bytes.size() + 2);
  std::memcpy(block.data(), bytes.data(), bytes.size());
  block.set_size(bytes.size());
  const char* where = block.data();
  Value value = Value::adopt_string(std::move(block));
  EXPECT_FALSE(block);
  char scratch[kInt64BufferSize];
  EXPECT_EQ(value.string_view(scratch).data(), where);
  EXPECT_EQ(value.string_view(scratch), bytes);
  EXPECT_EQ(value.encoding(), Encoding::kRaw);
  EXPECT_EQ(value.payload_bytes(), sizeof(StringBlockHeader) + bytes.size() + 2);
  // It is an ordinary heap string from then on: it grows, copies and frees as one.
  value.append("tail");
  EXPECT_EQ(value.string_length(), bytes.size() + 4);
  Value copy = value;
  EXPECT_EQ(copy.string_view(scratch), bytes + "tail");
}

TEST(ValueTest, AdoptingAShortBlockStoresItAsSetWould) {
  StringBlock number = StringBlock::allocate(8);
  std::memcpy(number.data(), "12345", 5);
  number.set_size(5);
  EXPECT_TRUE(Value::adopt_string(std::move(number)).is_int());
  StringBlock text = StringBlock::allocate(30);
  std::memcpy(text.data(), "some short text", 15);
  text.set_size(15);
  EXPECT_EQ(Value::adopt_string(std::move(text)).encoding(), Encoding::kEmbStr);
}

}  // namespace
}  // namespace keywarden
