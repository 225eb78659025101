// Key extraction driven by key specifications (CommandTable::keys, COMMAND GETKEYS and
// GETKEYSANDFLAGS): every kind of begin search and find step, the fallback to a command's key
// finder, variable flags, and the movablekeys flag derived from the specifications. Real
// commands use Redis 7.0's metadata; the odd shapes no keywarden command has yet (a range with a
// limit, a forward keyword search) use hand-made specifications. Expected replies were taken
// from redis-server 7.0.15.
#include "command_harness.h"

namespace keywarden::testing {
namespace {

void no_op(CommandContext&) {}

std::vector<int> positions_of(const std::vector<KeyReference>& keys) {
  std::vector<int> positions;
  for (const KeyReference& key : keys) positions.push_back(key.position);
  return positions;
}

std::vector<std::string_view> split(std::string_view line, std::vector<std::string>& storage) {
  storage.clear();
  size_t start = 0;
  while (start <= line.size()) {
    size_t space = line.find(' ', start);
    if (space == std::string_view::npos) space = line.size();
    storage.emplace_back(line.substr(start, space - start));
    start = space + 1;
  }
  return {storage.begin(), storage.end()};
}

class KeySpecsTest : public ::testing::Test {
 protected:
  std::vector<KeyReference> keys(std::string_view line) {
    std::vector<std::string_view> args = split(line, storage_);
    const Command* command = h.state.commands().find_for_args(args);
    EXPECT_NE(command, nullptr) << line;
    if (command == nullptr) return {};
    return CommandTable::keys(*command, args);
  }
  const Command& command(std::string_view name) { return *h.state.commands().find(name); }

  CommandHarness h;
  std::vector<std::string> storage_;
};

TEST_F(KeySpecsTest, IndexAndRangeSpecs) {
  EXPECT_EQ(positions_of(keys("get k")), (std::vector<int>{1}));
  // MSET: every other argument from the first to the last.
  EXPECT_EQ(positions_of(keys("mset a 1 b 2 c 3")), (std::vector<int>{1, 3, 5}));
  // RENAME: two specs, one key each, with their own flags.
  std::vector<KeyReference> rename = keys("rename a b");
  ASSERT_EQ(rename.size(), 2u);
  EXPECT_EQ(rename[0].flags, kKeyRW | kKeyAccess | kKeyDelete);
  EXPECT_EQ(rename[1].flags, kKeyOW | kKeyUpdate);
  // BLPOP: keys up to the one before the timeout.
  EXPECT_EQ(positions_of(keys("blpop a b c 0")), (std::vector<int>{1, 2, 3}));
}

TEST_F(KeySpecsTest, KeynumSpecs) {
  std::vector<KeyReference> zunionstore = keys("zunionstore d 2 a b WEIGHTS 1 2");
  EXPECT_EQ(positions_of(zunionstore), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(zunionstore[0].flags, kKeyOW | kKeyUpdate);
  EXPECT_EQ(zunionstore[1].flags, kKeyRO | kKeyAccess);
  EXPECT_EQ(positions_of(keys("blmpop 0 2 a b LEFT")), (std::vector<int>{3, 4}));
  // A count past the arguments, or none at all, names no keys (and the finder agrees).
  EXPECT_TRUE(keys("zunion 3 a b").empty());
  EXPECT_TRUE(keys("zunion 0 a").empty());
  EXPECT_TRUE(keys("zunion x a").empty());
}

TEST_F(KeySpecsTest, FinderFallbackWhenASpecCannotTell) {
  // Not a strict integer: the specification fails, and Redis's numkeys finder reads it as atoi
  // does, listing the destination last and giving no flags.
  std::vector<KeyReference> loose = keys("zunionstore d 2abc a b");
  EXPECT_EQ(positions_of(loose), (std::vector<int>{3, 4, 1}));
  for (const KeyReference& key : loose) EXPECT_EQ(key.flags, 0u);
  // SORT's second specification is unknown: its finder finds the last STORE.
  std::vector<KeyReference> sort = keys("sort k STORE d GET x STORE e");
  EXPECT_EQ(positions_of(sort), (std::vector<int>{1, 7}));
  EXPECT_EQ(sort[0].flags, kKeyRO | kKeyAccess);
  EXPECT_EQ(sort[1].flags, kKeyOW | kKeyUpdate);
}

TEST_F(KeySpecsTest, VariableFlagsFollowTheArguments) {
  ASSERT_EQ(keys("set k v").size(), 1u);
  EXPECT_EQ(keys("set k v")[0].flags, kKeyOW | kKeyUpdate);
  EXPECT_EQ(keys("set k v EX 10 get")[0].flags, kKeyRW | kKeyAccess | kKeyUpdate);
  EXPECT_EQ(keys("set k v GETX")[0].flags, kKeyOW | kKeyUpdate);
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS set k v GET"), "[[\"k\", [+RW, +access, +update]]]");
}

TEST_F(KeySpecsTest, NotKeySpecsAreNoKeys) {
  EXPECT_FALSE(CommandTable::has_keys(command("spublish")));
  EXPECT_EQ(h.call("COMMAND GETKEYS spublish c m"), "-ERR The command has no key arguments");
  EXPECT_TRUE(CommandTable::has_keys(command("get")));
  EXPECT_FALSE(CommandTable::has_keys(command("ping")));
}

TEST_F(KeySpecsTest, MovableKeysComesFromTheSpecs) {
  EXPECT_TRUE(command("zunionstore").movable_keys);
  EXPECT_TRUE(command("sort").movable_keys);
  EXPECT_TRUE(command("sort_ro").movable_keys);
  EXPECT_TRUE(command("lmpop").movable_keys);
  // SET has a finder of its own in Redis (for its flags) but plain specs: not movable.
  EXPECT_FALSE(command("set").movable_keys);
  EXPECT_FALSE(command("get").movable_keys);
  EXPECT_FALSE(command("mset").movable_keys);
}

// Shapes no keywarden command has yet, on a hand-made command.
constexpr CommandSpec kProbeRow{"probe", -2, kReadonly, 0, 0, 0, 0, no_op, "generic",
                                "7.0.0", "probe", "O(1)"};

std::vector<int> probe_positions(std::span<const KeySpec> specs, std::string_view line) {
  Command command;
  command.spec = &kProbeRow;
  command.full_name = "probe";
  command.key_specs = specs;
  std::vector<std::string> storage;
  std::vector<std::string_view> args = split(line, storage);
  return positions_of(CommandTable::keys(command, args));
}

TEST(KeySpecShapes, RangeWithLimitTakesAFractionOfTheRest) {
  // XREAD's STREAMS: the keys are the first half of what follows the keyword.
  constexpr KeySpec kSpecs[] = {{{}, kKeyRO | kKeyAccess, KeySpec::Begin::kKeyword, 0, "STREAMS",
                                 1, KeySpec::Find::kRange, -1, 1, 2, 0, 0}};
  EXPECT_EQ(probe_positions(kSpecs, "probe COUNT 2 STREAMS a b c 0 0 0"),
            (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(probe_positions(kSpecs, "probe streams a 0"), (std::vector<int>{2}));
  // No keyword: no keys, and no error either.
  EXPECT_TRUE(probe_positions(kSpecs, "probe a b").empty());
}

TEST(KeySpecShapes, KeywordSearchedBackwardsAndIncompleteSpecs) {
  // MIGRATE's shape: a key at 3, and keys after a KEYS keyword searched from the end.
  constexpr KeySpec kSpecs[] = {
      {{}, kKeyRW | kKeyAccess | kKeyDelete, KeySpec::Begin::kIndex, 3, {}, 0,
       KeySpec::Find::kRange, 0, 1, 0, 0, 0},
      {{}, kKeyRW | kKeyAccess | kKeyDelete, KeySpec::Begin::kKeyword, 0, "KEYS", -2,
       KeySpec::Find::kRange, -1, 1, 0, 0, 0}};
  EXPECT_EQ(probe_positions(kSpecs, "probe h 1 k 0 5000"), (std::vector<int>{3}));
  EXPECT_EQ(probe_positions(kSpecs, "probe h 1 x 0 5000 keys a b"), (std::vector<int>{3, 7, 8}));
  // The search starts at the one before last: a final KEYS names nothing.
  EXPECT_EQ(probe_positions(kSpecs, "probe h 1 x 0 5000 KEYS"), (std::vector<int>{3}));
  // Marked incomplete, the keyword spec gives up, and without a finder there are no keys.
  KeySpec incomplete[] = {kSpecs[0], kSpecs[1]};
  incomplete[1].flags |= kKeyIncomplete;
  EXPECT_TRUE(probe_positions(incomplete, "probe h 1 x 0 5000 KEYS a b").empty());
  EXPECT_EQ(probe_positions(incomplete, "probe h 1 x 0 5000"), (std::vector<int>{3}));
}

TEST(KeySpecShapes, UnknownSpecWithoutFinderNamesNoKeys) {
  constexpr KeySpec kSpecs[] = {
      {{}, kKeyRO | kKeyAccess, KeySpec::Begin::kIndex, 1, {}, 0, KeySpec::Find::kRange, 0, 1,
       0, 0, 0},
      {{}, kKeyRO, KeySpec::Begin::kUnknown, 0, {}, 0, KeySpec::Find::kUnknown, 0, 0, 0, 0, 0}};
  EXPECT_TRUE(probe_positions(kSpecs, "probe a b").empty());
  // The first spec alone does name its key.
  EXPECT_EQ(probe_positions(std::span(kSpecs, 1), "probe a b"), (std::vector<int>{1}));
}

TEST(KeySpecShapes, RowWithoutMetadataGetsARangeFromFirstLastStep) {
  CommandTable table;
  constexpr CommandSpec kRows[] = {{"newcmd", -3, kWrite, 1, -2, 1, 0, no_op, "generic",
                                    "9.0.0", "A command newer than the reference", "O(1)"}};
  table.add(kRows);
  const Command& command = *table.find("newcmd");
  EXPECT_EQ(command.metadata, nullptr);
  ASSERT_EQ(command.key_specs.size(), 1u);
  EXPECT_EQ(command.key_specs[0].flags, kKeyRW | kKeyUpdate);
  EXPECT_EQ(command.key_specs[0].lastkey, -2);
  EXPECT_FALSE(command.movable_keys);
  std::vector<std::string> storage;
  std::vector<std::string_view> args = split("newcmd a b c", storage);
  EXPECT_EQ(positions_of(CommandTable::keys(command, args)), (std::vector<int>{1, 2}));
}

TEST(CommandMetadata, TablesAreSortedAndFindByFullName) {
  std::span<const CommandMetadata> all = all_command_metadata();
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].full_name, all[i].full_name);
  const CommandMetadata* get = find_command_metadata("config|get");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->group, "server");
  EXPECT_EQ(find_command_metadata("nosuch"), nullptr);
  EXPECT_EQ(command_metadata_version().substr(0, 4), "7.0.");
}

}  // namespace
}  // namespace keywarden::testing
