// The AOF manifest's text format against Redis 7.0's: parsing, errors, formatting and the
// naming of new base and incremental files.
#include "persistence/aof_manifest.h"

#include <gtest/gtest.h>

namespace keywarden {
namespace {

TEST(AofManifest, ParsesRedisManifest) {
  AofManifest manifest;
  std::string bad;
  ASSERT_EQ(AofManifest::parse("file appendonly.aof.2.base.rdb seq 2 type b\n"
                               "file appendonly.aof.1.incr.aof seq 1 type h\n"
                               "# a comment\n"
                               "file appendonly.aof.3.incr.aof seq 3 type i\n"
                               "file appendonly.aof.4.incr.aof seq 4 type i\n",
                               &manifest, &bad),
            "");
  ASSERT_TRUE(manifest.has_base);
  EXPECT_EQ(manifest.base.name, "appendonly.aof.2.base.rdb");
  EXPECT_EQ(manifest.base_seq, 2);
  ASSERT_EQ(manifest.history.size(), 1u);
  ASSERT_EQ(manifest.incremental.size(), 2u);
  EXPECT_EQ(manifest.incremental_seq, 4);
  EXPECT_EQ(manifest.to_text(),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n"
            "file appendonly.aof.4.incr.aof seq 4 type i\n");
}

TEST(AofManifest, RefusesWhatRedisRefuses) {
  AofManifest manifest;
  std::string bad;
  EXPECT_EQ(AofManifest::parse("", &manifest, &bad), "Found an empty AOF manifest");
  EXPECT_EQ(AofManifest::parse("file a seq 1\n", &manifest, &bad),
            "Invalid AOF manifest file format");
  EXPECT_EQ(bad, "file a seq 1");
  EXPECT_EQ(AofManifest::parse("file a seq 2 type i\nfile b seq 1 type i\n", &manifest, &bad),
            "Found a non-monotonic sequence number");
  EXPECT_EQ(AofManifest::parse("file a seq 1 type b\nfile b seq 2 type b\n", &manifest, &bad),
            "Found duplicate base file information");
  EXPECT_EQ(AofManifest::parse("file a seq 1 type x\n", &manifest, &bad), "Unknown AOF file type");
  EXPECT_EQ(AofManifest::parse("file dir/a seq 1 type i\n", &manifest, &bad),
            "File can't be a path, just a filename");
  EXPECT_EQ(AofManifest::parse("file a seq 1 type i", &manifest, &bad),
            "The AOF manifest file contains too long line");
}

TEST(AofManifest, NewFilesFollowRedisNaming) {
  AofManifest manifest;
  EXPECT_EQ(manifest.add_incremental("appendonly.aof"), "appendonly.aof.1.incr.aof");
  EXPECT_EQ(manifest.start_new_base("appendonly.aof", false), "appendonly.aof.1.base.aof");
  EXPECT_EQ(manifest.add_incremental("appendonly.aof"), "appendonly.aof.2.incr.aof");
  manifest.retire_incremental(1);
  EXPECT_EQ(manifest.start_new_base("appendonly.aof", true), "appendonly.aof.2.base.rdb");
  EXPECT_EQ(manifest.to_text(),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.base.aof seq 1 type h\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n");
}

TEST(AofManifest, QuotesNamesWithSpaces) {
  AofManifest manifest;
  manifest.add_incremental("my file");
  EXPECT_EQ(manifest.to_text(), "file \"my file.1.incr.aof\" seq 1 type i\n");
  AofManifest parsed;
  std::string bad;
  ASSERT_EQ(AofManifest::parse(manifest.to_text(), &parsed, &bad), "");
  EXPECT_EQ(parsed.incremental[0].name, "my file.1.incr.aof");
}

}  // namespace
}  // namespace keywarden
