// The RDB codec: LZF round trips, listpacks built and parsed back, every value type and
// encoding through a whole image and back (with expiry), and refusal of truncated images,
// checksum mismatches, bad lengths and duplicate keys without leaving keys behind; function
// libraries (FUNCTION2 records) in images and AOF-format bases.
#include "persistence/rdb_codec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "common/clock.h"
#include "common/lzf.h"
#include "persistence/aof_rewrite.h"
#include "persistence/function_libraries.h"
#include "persistence/rdb_file.h"
#include "persistence/rdb_format.h"
#include "storage/keyspace.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

TEST(LzfTest, CompressRoundTrip) {
  std::mt19937_64 rng(7);
  const char* words[] = {"lorem ", "ipsum ", "dolor ", "sit ", "amet "};
  for (size_t size : {30, 100, 1000, 10000, 100000}) {
    std::string text;
    while (text.size() < size) text += words[rng() % 5];
    std::string compressed, back;
    ASSERT_TRUE(lzf_compress(text, text.size(), &compressed)) << size;
    EXPECT_LT(compressed.size(), text.size());
    ASSERT_TRUE(lzf_decompress(compressed, text.size(), &back));
    EXPECT_EQ(back, text);
  }
  std::string random_bytes;
  for (int i = 0; i < 1000; ++i) random_bytes.push_back(static_cast<char>(rng()));
  std::string compressed;
  EXPECT_FALSE(lzf_compress(random_bytes, random_bytes.size() - 4, &compressed));
}

TEST(ListpackTest, BuildAndParse) {
  const std::vector<std::string> elements = {"0",
                                             "127",
                                             "128",
                                             "-1",
                                             "-4096",
                                             "4095",
                                             "4096",
                                             "32767",
                                             "-32768",
                                             "8388607",
                                             "-8388608",
                                             "2147483647",
                                             "-2147483648",
                                             "9223372036854775807",
                                             "-9223372036854775808",
                                             "01",
                                             "-0",
                                             "",
                                             "hello",
                                             std::string(63, 'a'),
                                             std::string(64, 'b'),
                                             std::string(4095, 'c'),
                                             std::string(4096, 'd'),
                                             std::string(70000, 'e')};
  ListpackBuilder builder;
  for (const auto& e : elements) builder.append(e);
  const std::string blob = builder.finish();
  std::vector<std::string> back;
  ASSERT_TRUE(rdb_parse_listpack(blob, [&](std::string_view e) { back.emplace_back(e); }));
  EXPECT_EQ(back, elements);
  // Truncations are refused.
  for (size_t cut : {size_t{1}, size_t{7}, blob.size() / 2}) {
    EXPECT_FALSE(rdb_parse_listpack(blob.substr(0, blob.size() - cut), [](std::string_view) {}));
  }
}

void fill(Keyspace& keyspace, const CommandSettings& settings) {
  Database& db0 = keyspace.db(0);
  db0.add("int", Value::make_string("12345"));
  db0.add("bigint", Value::make_string("-9223372036854775808"));
  db0.add("str", Value::make_string("hello world"));
  db0.add("long", Value::make_string(std::string(1000, 'x')));
  db0.add("empty", Value::make_string(""));
  Entry* ttl = db0.add("ttl", Value::make_string("v"));
  ttl = db0.set_expiry(ttl, kNow + 100'000);

  auto list = std::make_unique<ListValue>();
  for (int i = 0; i < 3000; ++i)
    list->push_back(i % 3 ? std::to_string(i) : "item" + std::to_string(i));
  db0.add("list", Value::make_aggregate(ValueType::kList, std::move(list)));

  auto intset = std::make_unique<SetValue>();
  for (int64_t v : {-5LL, 3LL, 100000LL, 9000000000LL})
    intset->add(std::to_string(v), settings.set_limits);
  db0.add("intset", Value::make_aggregate(ValueType::kSet, std::move(intset)));
  auto smallset = std::make_unique<SetValue>();
  for (const char* m : {"a", "b", "1"}) smallset->add(m, settings.set_limits);
  db0.add("smallset", Value::make_aggregate(ValueType::kSet, std::move(smallset)));
  auto bigset = std::make_unique<SetValue>();
  for (int i = 0; i < 1000; ++i) bigset->add("m" + std::to_string(i), settings.set_limits);
  keyspace.db(3).add("bigset", Value::make_aggregate(ValueType::kSet, std::move(bigset)));

  auto zset = std::make_unique<ZSetValue>();
  zset->set("a", 1.5, settings.zset_limits);
  zset->set("b", -3, settings.zset_limits);
  zset->set("c", INFINITY, settings.zset_limits);
  db0.add("zset", Value::make_aggregate(ValueType::kZSet, std::move(zset)));
  auto bigzset = std::make_unique<ZSetValue>();
  for (int i = 0; i < 500; ++i)
    bigzset->set("m" + std::to_string(i), i * 0.1, settings.zset_limits);
  db0.add("bigzset", Value::make_aggregate(ValueType::kZSet, std::move(bigzset)));

  auto hash = std::make_unique<HashValue>();
  hash->set("f1", "v1", settings.hash_limits);
  hash->set("n", "42", settings.hash_limits);
  db0.add("hash", Value::make_aggregate(ValueType::kHash, std::move(hash)));
  auto bighash = std::make_unique<HashValue>();
  for (int i = 0; i < 600; ++i)
    bighash->set("f" + std::to_string(i), std::string(i % 100, 'v'), settings.hash_limits);
  keyspace.db(15).add("bighash", Value::make_aggregate(ValueType::kHash, std::move(bighash)));
}

std::string describe(const Value& value) {
  char scratch[kInt64BufferSize];
  std::string out = std::string(value_type_name(value.type())) + ":" +
                    std::string(encoding_name(value.encoding())) + ":";
  switch (value.type()) {
    case ValueType::kString:
      return out + std::string(value.string_view(scratch));
    case ValueType::kList:
      value.as<ListValue>().for_each([&](std::string_view e) { out += std::string(e) + ","; });
      return out;
    case ValueType::kSet: {
      std::vector<std::string> members;
      value.as<SetValue>().for_each([&](std::string_view m) { members.emplace_back(m); });
      std::sort(members.begin(), members.end());
      for (auto& m : members) out += m + ",";
      return out;
    }
    case ValueType::kZSet:
      value.as<ZSetValue>().for_each([&](std::string_view m, double s) {
        out += std::string(m) + "=" + std::to_string(s) + ",";
      });
      return out;
    case ValueType::kHash: {
      std::vector<std::string> pairs;
      value.as<HashValue>().for_each([&](std::string_view f, std::string_view v) {
        pairs.push_back(std::string(f) + "=" + std::string(v));
      });
      std::sort(pairs.begin(), pairs.end());
      for (auto& p : pairs) out += p + ",";
      return out;
    }
  }
  return out;
}

std::map<std::string, std::string> snapshot(const Keyspace& keyspace) {
  std::map<std::string, std::string> all;
  for (int i = 0; i < keyspace.database_count(); ++i) {
    keyspace.db(i).for_each([&](const Entry* e) {
      all[std::to_string(i) + "/" + std::string(e->key())] =
          describe(e->value) + "@" + std::to_string(keyspace.db(i).deadline_of(e));
      return true;
    });
  }
  return all;
}

TEST(RdbFileTest, RoundTripEveryType) {
  for (bool compression : {true, false}) {
    ManualClock clock(kNow);
    Keyspace source(16, clock);
    CommandSettings settings;
    fill(source, settings);
    RdbSaveOptions options;
    options.compression = compression;
    options.now_ms = kNow;
    const std::string image = rdb_save_to_string(source, options);
    ASSERT_EQ(image.substr(0, 9), "REDIS0010");

    Keyspace target(16, clock);
    RdbLoadStats stats;
    ASSERT_EQ(rdb_load(image, target, settings, kNow, &stats), "");
    EXPECT_EQ(stats.keys_loaded, source.total_keys());
    EXPECT_EQ(stats.bytes_consumed, image.size());
    EXPECT_EQ(snapshot(target), snapshot(source));
  }
}

TEST(RdbFileTest, ExpiredKeysSkipped) {
  ManualClock clock(kNow);
  Keyspace source(16, clock);
  Entry* e = source.db(0).add("old", Value::make_string("v"));
  e = source.db(0).set_expiry(e, kNow - 1);
  source.db(0).add("keep", Value::make_string("v"));
  RdbSaveOptions options;
  options.now_ms = kNow;
  const std::string image = rdb_save_to_string(source, options);
  Keyspace target(16, clock);
  RdbLoadStats stats;
  ASSERT_EQ(rdb_load(image, target, CommandSettings{}, kNow, &stats), "");
  EXPECT_EQ(stats.keys_loaded, 1u);
  EXPECT_EQ(stats.keys_expired, 1u);
}

TEST(RdbFileTest, CorruptImagesRefusedWholly) {
  ManualClock clock(kNow);
  Keyspace source(16, clock);
  CommandSettings settings;
  fill(source, settings);
  RdbSaveOptions options;
  options.now_ms = kNow;
  const std::string image = rdb_save_to_string(source, options);

  // Every truncation point, sampled.
  for (size_t cut = 0; cut < image.size(); cut += 97) {
    Keyspace target(16, clock);
    EXPECT_NE(rdb_load(image.substr(0, cut), target, settings, kNow, nullptr), "") << cut;
    EXPECT_EQ(target.total_keys(), 0u) << cut;
  }
  // A flipped byte in the body: the checksum (or the parser) catches it.
  for (size_t at = 20; at < image.size() - 9; at += 211) {
    std::string bad = image;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    Keyspace target(16, clock);
    const std::string error = rdb_load(bad, target, settings, kNow, nullptr);
    EXPECT_NE(error, "") << at;
    EXPECT_EQ(target.total_keys(), 0u) << at;
  }
  std::string wrong_crc = image;
  wrong_crc[wrong_crc.size() - 1] ^= 1;
  Keyspace target(16, clock);
  EXPECT_NE(rdb_load(wrong_crc, target, settings, kNow, nullptr).find("Wrong RDB checksum"),
            std::string::npos);
  EXPECT_NE(rdb_load("REDIS0099", target, settings, kNow, nullptr), "");
  EXPECT_NE(rdb_load("NOTREDIS0", target, settings, kNow, nullptr), "");
}

TEST(RdbFileTest, NoChecksumWritesZeroAndLoads) {
  ManualClock clock(kNow);
  Keyspace source(16, clock);
  source.db(0).add("k", Value::make_string("v"));
  RdbSaveOptions options;
  options.checksum = false;
  const std::string image = rdb_save_to_string(source, options);
  EXPECT_EQ(image.substr(image.size() - 8), std::string(8, '\0'));
  Keyspace target(16, clock);
  EXPECT_EQ(rdb_load(image, target, CommandSettings{}, kNow, nullptr), "");
  EXPECT_EQ(target.total_keys(), 1u);
}

TEST(RdbCodecTest, ModulesRefusedAndBrokenStreamsRejected) {
  CommandSettings settings;
  Value value;
  std::string body = "\x05hello";
  RdbReader stream(body);
  EXPECT_EQ(stream.object(rdb::kTypeStreamListpacks2, settings, &value), RdbReader::Status::kError);
  RdbReader module(body);
  EXPECT_EQ(module.object(rdb::kTypeModule2, settings, &value), RdbReader::Status::kError);
  EXPECT_NE(module.error().find("module"), std::string::npos);
}

// FUNCTION2 records as FUNCTION DUMP produces them (uncompressed), plus one LZF-compressed as
// a compressing Redis may write it.
std::string function_records(const std::vector<std::string>& codes, bool compress_last) {
  RdbWriter out(/*compression=*/false);
  for (size_t i = 0; i < codes.size(); ++i) {
    out.byte(rdb::kOpFunction2);
    if (compress_last && i + 1 == codes.size()) {
      RdbWriter compressed(/*compression=*/true);
      compressed.string(codes[i]);
      out.raw(compressed.buffer());
    } else {
      out.length(codes[i].size());
      out.raw(codes[i]);
    }
  }
  return std::move(out.buffer());
}

const std::vector<std::string> kLibraries = {
    "#!lua name=one\nredis.register_function('f1', function() return 1 end)\n",
    "#!lua name=two\n-- " + std::string(200, 'x') +
        "\nredis.register_function('f2', "
        "function() return 2 end)\n"};

TEST(RdbFileTest, FunctionLibrariesBeforeTheKeysAndBack) {
  ManualClock clock(kNow);
  Keyspace source(16, clock);
  CommandSettings settings;
  source.db(0).add("k", Value::make_string("v"));
  RdbSaveOptions options;
  options.now_ms = kNow;
  options.functions = function_records(kLibraries, /*compress_last=*/true);
  const std::string image = rdb_save_to_string(source, options);
  const size_t functions_at = image.find(options.functions);
  ASSERT_NE(functions_at, std::string::npos);
  // After the AUX fields, before the first SELECTDB.
  EXPECT_GT(functions_at, image.find("aof-base"));
  EXPECT_EQ(static_cast<uint8_t>(image[functions_at + options.functions.size()]), rdb::kOpSelectDb);

  std::vector<std::string> split;
  ASSERT_TRUE(split_function_records(options.functions, &split));
  EXPECT_EQ(split, kLibraries);
  EXPECT_FALSE(split_function_records("\x05hello", &split));

  Keyspace target(16, clock);
  RdbLoadStats stats;
  ASSERT_EQ(rdb_load(image, target, settings, kNow, &stats), "");
  EXPECT_EQ(stats.keys_loaded, 1u);
  EXPECT_EQ(stats.function_libraries, kLibraries);

  // The pre-release FUNCTION opcode of the 7.0 release candidates stays refused.
  RdbSaveOptions old_format;
  old_format.checksum = false;
  old_format.functions = std::string(1, static_cast<char>(rdb::kOpFunction)) + "\x01x";
  Keyspace refused(16, clock);
  const std::string why =
      rdb_load(rdb_save_to_string(source, old_format), refused, settings, kNow, &stats);
  EXPECT_NE(why.find("246"), std::string::npos) << why;
  EXPECT_EQ(refused.total_keys(), 0u);
}

TEST(AofRewriteTest, FunctionLoadCommandsBeforeTheKeys) {
  ManualClock clock(kNow);
  Keyspace source(16, clock);
  source.db(3).add("k", Value::make_string("v"));
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const int fd = fileno(file);
  ASSERT_EQ(
      write_keyspace_as_commands(source, fd, kNow, false, 0, function_records(kLibraries, false)),
      "");
  std::string text(4096, '\0');
  const ssize_t got = ::pread(fd, text.data(), text.size(), 0);
  EXPECT_EQ(write_keyspace_as_commands(source, fd, kNow, false, 0, "\x07"),
            "Malformed function libraries for the AOF rewrite");
  std::fclose(file);
  ASSERT_GT(got, 0);
  text.resize(static_cast<size_t>(got));
  const std::string first = "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n$" +
                            std::to_string(kLibraries[0].size()) + "\r\n" + kLibraries[0];
  EXPECT_EQ(text.find(first), 0u);
  EXPECT_NE(text.find(kLibraries[1]), std::string::npos);
  EXPECT_LT(text.find(kLibraries[1]), text.find("SELECT"));
}

TEST(RdbCodecTest, StreamRoundTripKeepsEntriesGroupsAndCounters) {
  CommandSettings settings;
  settings.stream_node_max_entries = 3;
  auto stream = std::make_unique<StreamValue>(4096, 3);
  const std::vector<std::string_view> same = {"a", "1"};
  const std::vector<std::string_view> other = {"x", "-7", "y", "hello"};
  for (uint64_t i = 1; i <= 10; ++i) stream->append({i, i % 3}, i % 4 == 0 ? other : same);
  stream->remove({2, 2});
  StreamGroup& group = stream->groups()["g"];
  group.last_id = {5, 2};
  group.entries_read = 5;
  group.pending[{3, 0}] = StreamPending{"alice", 1234, 2};
  group.consumers["alice"].pending.insert({3, 0});
  group.consumers["alice"].seen_time_ms = 99;
  group.consumers["bob"].seen_time_ms = 7;
  const Value original = Value::make_aggregate(ValueType::kStream, std::move(stream));

  RdbWriter out(/*compression=*/false);
  out.object_body(original);
  RdbReader in(out.buffer());
  Value loaded;
  ASSERT_EQ(in.object(rdb::kTypeStreamListpacks2, settings, &loaded), RdbReader::Status::kOk)
      << in.error();
  const auto& a = original.as<StreamValue>();
  const auto& b = loaded.as<StreamValue>();
  EXPECT_EQ(b.length(), a.length());
  EXPECT_EQ(b.node_count(), a.node_count());
  EXPECT_EQ(b.last_id(), a.last_id());
  EXPECT_EQ(b.first_id(), a.first_id());
  EXPECT_EQ(b.max_deleted_id(), a.max_deleted_id());
  EXPECT_EQ(b.entries_added(), a.entries_added());
  ASSERT_EQ(b.groups().size(), 1u);
  const StreamGroup& g = b.groups().at("g");
  EXPECT_EQ(g.last_id, (StreamId{5, 2}));
  EXPECT_EQ(g.entries_read, 5);
  ASSERT_EQ(g.pending.size(), 1u);
  EXPECT_EQ(g.pending.at({3, 0}).consumer, "alice");
  EXPECT_EQ(g.pending.at({3, 0}).delivery_time_ms, 1234);
  EXPECT_EQ(g.pending.at({3, 0}).delivery_count, 2u);
  EXPECT_EQ(g.consumers.at("bob").seen_time_ms, 7);
  EXPECT_EQ(encode_dump_payload(loaded), encode_dump_payload(original));

  // Every truncation is refused, none crashes.
  const std::string& bytes = out.buffer();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    RdbReader partial(std::string_view(bytes).substr(0, cut));
    Value v;
    EXPECT_NE(partial.object(rdb::kTypeStreamListpacks2, settings, &v), RdbReader::Status::kOk);
  }
}

}  // namespace
}  // namespace keywarden
