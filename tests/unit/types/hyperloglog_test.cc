// HyperLogLog in Redis's representation: the hash, register packing, the sparse opcodes and
// their editing (splits, merges, promotion), the estimator against known Redis counts, the
// cache, and every decoder's answer on corrupt sparse bytes (an error, never a read outside
// the value: run under the sanitizer build).
#include "types/hyperloglog.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace keywarden::hll {
namespace {

std::string header(uint8_t encoding, bool valid_cache = true) {
  std::string h("HYLL", 4);
  h.push_back(static_cast<char>(encoding));
  h.append(11, '\0');
  if (!valid_cache) h[15] = static_cast<char>(0x80);
  return h;
}

std::string xzero(int n) {
  return {static_cast<char>(0x40 | ((n - 1) >> 8)), static_cast<char>((n - 1) & 0xff)};
}
std::string zero(int n) { return {static_cast<char>(n - 1)}; }
std::string val(int value, int length) {
  return {static_cast<char>(0x80 | ((value - 1) << 2) | (length - 1))};
}

uint64_t count_of(const std::string& value) {
  uint64_t n = 0;
  EXPECT_TRUE(estimate(value, &n));
  return n;
}

EditBuffer filled(int elements, int64_t sparse_max = kDefaultSparseMaxBytes) {
  EditBuffer buffer{make_empty()};
  for (int i = 0; i < elements; ++i) add(buffer, "element:" + std::to_string(i), sparse_max);
  return buffer;
}

TEST(HyperLogLogTest, BytesAndCountsMatchRedis) {
  // What redis-server 7.0.15 leaves after PFADD h1 a b c, and its PFDEBUG DECODE of others.
  EditBuffer h{make_empty()};
  for (const char* element : {"a", "b", "c"}) add(h, element, kDefaultSparseMaxBytes);
  invalidate_cache(h.bytes.data());
  EXPECT_EQ(h.bytes, header(kEncodingSparse, false) +
                         std::string("`\xf3\x80P\xb1\x84K\xfb\x80" "BZ", 11));
  EXPECT_EQ(decode_sparse(h.bytes), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  EditBuffer hello{make_empty()};
  add(hello, "hello", kDefaultSparseMaxBytes);
  EXPECT_EQ(decode_sparse(hello.bytes), "Z:9216 v:1,1 Z:7167");
  // PFADD of "1".."N" and PFCOUNT on redis-server.
  auto numbers = [](int n) {
    EditBuffer b{make_empty()};
    for (int i = 1; i <= n; ++i) add(b, std::to_string(i), kDefaultSparseMaxBytes);
    return b;
  };
  EXPECT_EQ(count_of(numbers(1000).bytes), 1001u);
  EXPECT_EQ(count_of(numbers(20000).bytes), 19891u);
}

TEST(HyperLogLogTest, EmptyValueIsOneXZero) {
  const std::string empty = make_empty();
  EXPECT_EQ(empty, header(kEncodingSparse) + xzero(16384));
  EXPECT_TRUE(is_hll(empty));
  EXPECT_EQ(count_of(empty), 0u);
  EXPECT_EQ(decode_sparse(empty), "Z:16384");
}

TEST(HyperLogLogTest, HeaderChecks) {
  EXPECT_FALSE(is_hll("HYLL"));
  EXPECT_FALSE(is_hll(std::string(16, '\0')));
  EXPECT_FALSE(is_hll(header(2) + xzero(16384)));
  EXPECT_FALSE(is_hll(header(kEncodingDense) + std::string(100, '\0')));
  EXPECT_TRUE(is_hll(header(kEncodingDense) + std::string(kDenseRegisterBytes, '\0')));
  // Sparse bodies are checked only when used.
  EXPECT_TRUE(is_hll(header(kEncodingSparse)));
}

TEST(HyperLogLogTest, DenseRegistersKeepTheirNeighbours) {
  std::vector<uint8_t> registers(kDenseRegisterBytes, 0);
  std::mt19937 random(7);
  std::vector<uint8_t> expected(kRegisters);
  for (uint32_t i = 0; i < kRegisters; ++i) {
    expected[i] = static_cast<uint8_t>(random() & 63);
    dense_set(registers.data(), i, expected[i]);
  }
  for (uint32_t i = 0; i < kRegisters; ++i) ASSERT_EQ(dense_get(registers.data(), i), expected[i]);
  EXPECT_FALSE(dense_raise(registers.data(), 5, expected[5]));
}

TEST(HyperLogLogTest, SparseSplitsAndMerges) {
  EditBuffer h{make_empty()};
  EXPECT_EQ(raise_register(h, 1000, 2, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(decode_sparse(h.bytes), "Z:1000 v:2,1 Z:15383");
  EXPECT_EQ(raise_register(h, 1001, 2, kDefaultSparseMaxBytes), Update::kChanged);
  // The new VAL joins its equal neighbour.
  EXPECT_EQ(decode_sparse(h.bytes), "Z:1000 v:2,2 Z:15382");
  EXPECT_EQ(raise_register(h, 1001, 1, kDefaultSparseMaxBytes), Update::kUnchanged);
  EXPECT_EQ(raise_register(h, 1001, 3, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(decode_sparse(h.bytes), "Z:1000 v:2,1 v:3,1 Z:15382");
  EXPECT_EQ(raise_register(h, 1010, 1, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(decode_sparse(h.bytes), "Z:1000 v:2,1 v:3,1 z:8 v:1,1 Z:15373");
  EXPECT_EQ(raise_register(h, 0, 4, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(raise_register(h, 16383, 4, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(decode_sparse(h.bytes), "v:4,1 Z:999 v:2,1 v:3,1 z:8 v:1,1 Z:15372 v:4,1");
  // An edit invalidates the cache.
  uint64_t cached;
  EXPECT_FALSE(cached_cardinality(h.bytes, &cached));
}

TEST(HyperLogLogTest, PromotionByValueAndBySize) {
  EditBuffer h{make_empty()};
  EXPECT_EQ(raise_register(h, 7, 33, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(encoding(h.bytes), kEncodingDense);
  EXPECT_EQ(h.bytes.size(), kDenseSize);
  EXPECT_EQ(dense_get(reinterpret_cast<const uint8_t*>(h.bytes.data()) + kHeaderSize, 7), 33);

  EditBuffer small = filled(100, 40);
  EXPECT_EQ(encoding(small.bytes), kEncodingDense);
  EditBuffer large = filled(100, 3000);
  EXPECT_EQ(encoding(large.bytes), kEncodingSparse);
  // Sparse and dense count the same registers the same.
  std::string dense = large.bytes;
  ASSERT_TRUE(sparse_to_dense(dense));
  EXPECT_EQ(count_of(dense), count_of(large.bytes));
  EXPECT_EQ(count_of(small.bytes), count_of(large.bytes));
}

TEST(HyperLogLogTest, EstimatesStayClose) {
  for (int n : {1, 10, 100, 1000, 10000, 100000}) {
    EditBuffer h = filled(n);
    const double estimate_value = static_cast<double>(count_of(h.bytes));
    EXPECT_NEAR(estimate_value, n, std::max(2.0, n * 0.03)) << n;
  }
}

TEST(HyperLogLogTest, MergeTakesTheMaximum) {
  EditBuffer a = filled(50);
  EditBuffer b = filled(5000);
  uint8_t max[kRegisters] = {};
  ASSERT_TRUE(merge_into(a.bytes, max));
  ASSERT_TRUE(merge_into(b.bytes, max));
  // b holds a's elements: the union counts as b.
  EXPECT_EQ(estimate_registers(max), count_of(b.bytes));
}

TEST(HyperLogLogTest, CacheRoundTrip) {
  std::string h = make_empty();
  store_cardinality(h.data(), 0x0102030405060708ULL);
  uint64_t cached = 0;
  ASSERT_TRUE(cached_cardinality(h, &cached));
  EXPECT_EQ(cached, 0x0102030405060708ULL);
  invalidate_cache(h.data());
  EXPECT_FALSE(cached_cardinality(h, &cached));
}

TEST(HyperLogLogTest, CorruptSparseBodiesAreDetected) {
  const std::vector<std::string> corrupt = {
      header(1),
      header(1) + xzero(16000),
      header(1) + xzero(16384) + zero(1),
      header(1) + xzero(16383) + val(5, 4),
      header(1) + xzero(16384).substr(0, 1),
      header(1) + std::string(40, '\xff'),
      header(1) + xzero(16384) + xzero(16384),
  };
  for (const std::string& value : corrupt) {
    uint64_t n;
    EXPECT_FALSE(estimate(value, &n));
    uint8_t max[kRegisters] = {};
    EXPECT_FALSE(merge_into(value, max));
    std::string copy = value;
    EXPECT_FALSE(sparse_to_dense(copy));
    EXPECT_EQ(copy, value);
    EditBuffer buffer{value};
    // Either an error or an edit, never a read or write outside the value.
    raise_register(buffer, 16383, 3, kDefaultSparseMaxBytes);
    raise_register(buffer, 0, 40, kDefaultSparseMaxBytes);
  }
}

TEST(HyperLogLogTest, TruncatedXZeroKeepsTheOverflowByte) {
  // A lone XZERO byte reads its second byte from past the end; an edit there leaves the
  // replacement's last byte past the new end, where the next edit of the command reads it.
  EditBuffer h{header(1) + std::string(1, '\x7f')};
  EXPECT_EQ(raise_register(h, 100, 2, kDefaultSparseMaxBytes), Update::kChanged);
  EXPECT_EQ(h.bytes.size(), kHeaderSize + 4);
  EXPECT_NE(h.past_end, 0);
}

TEST(HyperLogLogTest, SelfTestPasses) {
  EXPECT_EQ(self_test(kDefaultSparseMaxBytes), "");
}

}  // namespace
}  // namespace keywarden::hll
