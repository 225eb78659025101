// COMMAND and its subcommands through the dispatcher. Besides the real families, each test
// registers a few rows of its own (shaped like Redis's GET, MSET, a container and a command
// without mandatory keys) so that expectations do not depend on other families' tables.
// Expected bytes were taken from redis-server 7.0.15 for the commands these rows imitate.
#include "command_harness.h"

namespace keywarden::testing {
namespace {

void no_op(CommandContext&) {}

constexpr CommandSpec kProbeSubcommands[] = {
    {"alpha", -3, kAdmin | kNoScript | kLoading | kStale, 0, 0, 0, 0, no_op, "server", "2.0.0",
     "First probe subcommand", "O(1)"},
    {"beta", 3, kWrite, 2, 2, 1, kAclKeyspace, no_op, "server", "2.0.0",
     "Second probe subcommand", ""},
};

constexpr CommandSpec kProbeCommands[] = {
    {"tget", 2, kReadonly | kFast, 1, 1, 1, kAclString, no_op, "string", "1.0.0",
     "Get the value of a key", "O(1)"},
    {"tmset", -3, kWrite | kDenyOom, 1, -1, 2, kAclString, no_op, "string", "1.0.1",
     "Set multiple keys to multiple values", "O(N) where N is the number of keys to set"},
    {"tcontainer", -2, 0, 0, 0, 0, 0, nullptr, "server", "2.0.0", "A probe container",
     "Depends on subcommand.", kProbeSubcommands},
    // Keys from the second argument on, which may be absent.
    {"toptional", -2, kReadonly | kNoMandatoryKeys, 2, -1, 1, 0, no_op, "generic", "7.0.0",
     "Keys are optional", "O(1)"},
    {"tstrict", -2, kReadonly, 2, -1, 1, 0, no_op, "generic", "7.0.0", "Keys are required",
     "O(1)"},
};
constexpr size_t kProbeCount = std::size(kProbeCommands);

class IntrospectionTest : public ::testing::Test {
 protected:
  IntrospectionTest() {
    base_count_ = h.state.commands().size();
    h.state.commands().add(kProbeCommands);
  }
  CommandHarness h;
  size_t base_count_ = 0;
};

TEST_F(IntrospectionTest, CountIsTopLevelCommandsOnly) {
  EXPECT_EQ(h.call("COMMAND COUNT"), ":" + std::to_string(base_count_ + kProbeCount));
  EXPECT_EQ(h.call("command count extra"),
            "-ERR wrong number of arguments for 'command|count' command");
}

TEST_F(IntrospectionTest, InfoOfASimpleCommandMatchesRedisBytes) {
  EXPECT_EQ(h.call("COMMAND INFO tget"),
            "[[\"tget\", :2, [+readonly, +fast], :1, :1, :1, [+@read, +@string, +@fast], [], "
            "[[\"flags\", [+RO, +access], \"begin_search\", [\"type\", \"index\", \"spec\", "
            "[\"index\", :1]], \"find_keys\", [\"type\", \"range\", \"spec\", [\"lastkey\", :0, "
            "\"keystep\", :1, \"limit\", :0]]]], []]]");
  // Redis 7.0.15's bytes for COMMAND INFO GET, with the name changed.
  EXPECT_EQ(h.last_raw,
            "*1\r\n*10\r\n$4\r\ntget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n"
            "+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n"
            "+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n"
            "*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\n"
            "spec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n");
}

TEST_F(IntrospectionTest, InfoInResp3UsesSetsAndMaps) {
  h.session.resp = 3;
  h.call("COMMAND INFO tget");
  EXPECT_EQ(h.last_raw,
            "*1\r\n*10\r\n$4\r\ntget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n"
            "+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n"
            "+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n"
            "%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\n"
            "spec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n");
  EXPECT_EQ(h.call("COMMAND INFO nosuch"), "[(nil)]");
  EXPECT_EQ(h.last_raw, "*1\r\n_\r\n");
}

TEST_F(IntrospectionTest, InfoOfAMultiKeyWriteCommand) {
  // Like MSET: a negative last key stays relative to the end in the key spec.
  EXPECT_EQ(h.call("COMMAND INFO TMSET"),
            "[[\"tmset\", :-3, [+write, +denyoom], :1, :-1, :2, [+@write, +@string, +@slow], [], "
            "[[\"flags\", [+RW, +update], \"begin_search\", [\"type\", \"index\", \"spec\", "
            "[\"index\", :1]], \"find_keys\", [\"type\", \"range\", \"spec\", [\"lastkey\", :-1, "
            "\"keystep\", :2, \"limit\", :0]]]], []]]");
}

TEST_F(IntrospectionTest, InfoOfAContainerListsItsSubcommands) {
  EXPECT_EQ(h.call("COMMAND INFO tcontainer"),
            "[[\"tcontainer\", :-2, [], :0, :0, :0, [+@slow], [], [], ["
            "[\"tcontainer|alpha\", :-3, [+admin, +noscript, +loading, +stale], :0, :0, :0, "
            "[+@admin, +@slow, +@dangerous], [], [], []], "
            "[\"tcontainer|beta\", :3, [+write], :2, :2, :1, [+@keyspace, +@write, +@slow], [], "
            "[[\"flags\", [+RW, +update], \"begin_search\", [\"type\", \"index\", \"spec\", "
            "[\"index\", :2]], \"find_keys\", [\"type\", \"range\", \"spec\", [\"lastkey\", :0, "
            "\"keystep\", :1, \"limit\", :0]]]], []]]]]");
  // A container's subcommands are an array even in RESP3; a leaf's empty list is a set.
  h.session.resp = 3;
  RespValue info = h.reply("COMMAND INFO tcontainer");
  ASSERT_EQ(info.elements.size(), 1u);
  EXPECT_EQ(info.elements[0].elements[9].type, RespType::kArray);
  EXPECT_EQ(info.elements[0].elements[9].elements[0].elements[9].type, RespType::kSet);
}

TEST_F(IntrospectionTest, InfoResolvesFullNamesAndReturnsNilForUnknown) {
  EXPECT_EQ(h.call("COMMAND INFO TContainer|ALPHA nosuch tget|x tcontainer|nosuch a|b|c "
                   "tcontainer| |alpha"),
            "[[\"tcontainer|alpha\", :-3, [+admin, +noscript, +loading, +stale], :0, :0, :0, "
            "[+@admin, +@slow, +@dangerous], [], [], []], (nil), (nil), (nil), (nil), (nil), "
            "(nil)]");
}

TEST_F(IntrospectionTest, InfoWithoutNamesAndBareCommandListEverything) {
  RespValue all = h.reply("COMMAND INFO");
  ASSERT_EQ(all.type, RespType::kArray);
  EXPECT_EQ(all.elements.size(), base_count_ + kProbeCount);
  RespValue bare = h.reply("COMMAND");
  EXPECT_EQ(to_debug_string(bare), to_debug_string(all));
  // COMMAND describes itself as Redis does.
  EXPECT_EQ(h.call("COMMAND INFO command|getkeys command|count"),
            "[[\"command|getkeys\", :-4, [+loading, +stale], :0, :0, :0, "
            "[+@slow, +@connection], [], [], []], "
            "[\"command|count\", :2, [+loading, +stale], :0, :0, :0, "
            "[+@slow, +@connection], [], [], []]]");
  RespValue command = h.reply("COMMAND INFO command");
  EXPECT_EQ(command.elements[0].elements[1].integer, -1);
  EXPECT_EQ(command.elements[0].elements[9].elements.size(), 7u);
}

TEST_F(IntrospectionTest, DocsShape) {
  EXPECT_EQ(h.call("COMMAND DOCS tget"),
            "[\"tget\", [\"summary\", \"Get the value of a key\", \"since\", \"1.0.0\", "
            "\"group\", \"string\", \"complexity\", \"O(1)\"]]");
  h.session.resp = 3;
  EXPECT_EQ(h.call("COMMAND DOCS tget nosuch tcontainer"),
            "{\"tget\": {\"summary\": \"Get the value of a key\", \"since\": \"1.0.0\", "
            "\"group\": \"string\", \"complexity\": \"O(1)\"}, "
            "\"tcontainer\": {\"summary\": \"A probe container\", \"since\": \"2.0.0\", "
            "\"group\": \"server\", \"complexity\": \"Depends on subcommand.\", "
            "\"subcommands\": {\"tcontainer|alpha\": {\"summary\": \"First probe subcommand\", "
            "\"since\": \"2.0.0\", \"group\": \"server\", \"complexity\": \"O(1)\"}, "
            "\"tcontainer|beta\": {\"summary\": \"Second probe subcommand\", \"since\": \"2.0.0\", "
            "\"group\": \"server\"}}}}");
  EXPECT_EQ(h.call("COMMAND DOCS nosuch"), "{}");
  EXPECT_EQ(h.last_raw, "%0\r\n");
  EXPECT_EQ(h.call("COMMAND DOCS tcontainer|beta"),
            "{\"tcontainer|beta\": {\"summary\": \"Second probe subcommand\", \"since\": "
            "\"2.0.0\", \"group\": \"server\"}}");
  RespValue all = h.reply("COMMAND DOCS");
  ASSERT_EQ(all.type, RespType::kMap);
  EXPECT_EQ(all.elements.size(), 2 * (base_count_ + kProbeCount));
}

TEST_F(IntrospectionTest, ListIncludesSubcommands) {
  RespValue all = h.reply("COMMAND LIST");
  ASSERT_EQ(all.type, RespType::kArray);
  size_t expected = 0;
  for (const auto& [name, command] : h.state.commands().commands()) {
    expected += 1 + command->subcommands.size();
  }
  EXPECT_EQ(all.elements.size(), expected);
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY PATTERN TCONT*"),
            "[\"tcontainer\", \"tcontainer|alpha\", \"tcontainer|beta\"]");
  EXPECT_EQ(h.call("command list filterby pattern *|b?ta"), "[\"tcontainer|beta\"]");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY PATTERN nothing-matches"), "[]");
}

TEST_F(IntrospectionTest, ListFilterByAclCategoryAndModule) {
  // A container carries only @slow; its subcommands carry their own categories.
  RespValue admin = h.reply("COMMAND LIST FILTERBY ACLCAT Dangerous");
  bool has_alpha = false, has_container = false;
  for (const RespValue& name : admin.elements) {
    has_alpha |= name.str == "tcontainer|alpha";
    has_container |= name.str == "tcontainer";
  }
  EXPECT_TRUE(has_alpha);
  EXPECT_FALSE(has_container);
  RespValue strings = h.reply("COMMAND LIST FILTERBY ACLCAT string");
  bool has_tget = false;
  for (const RespValue& name : strings.elements) has_tget |= name.str == "tget";
  EXPECT_TRUE(has_tget);
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY ACLCAT nosuch"), "[]");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY MODULE anything"), "[]");
}

TEST_F(IntrospectionTest, ListSyntaxErrors) {
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY"), "-ERR syntax error");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY PATTERN"), "-ERR syntax error");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY x y"), "-ERR syntax error");
  EXPECT_EQ(h.call("COMMAND LIST x"), "-ERR syntax error");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY PATTERN a extra"), "-ERR syntax error");
  EXPECT_EQ(h.call("COMMAND LIST FILTERBY PATTERN a FILTERBY PATTERN b"), "-ERR syntax error");
}

TEST_F(IntrospectionTest, GetKeys) {
  EXPECT_EQ(h.call("COMMAND GETKEYS tget a"), "[\"a\"]");
  EXPECT_EQ(h.call("COMMAND GETKEYS TMSET a 1 b 2"), "[\"a\", \"b\"]");
  // The range is followed as declared, like Redis: an odd trailing argument counts as a key.
  EXPECT_EQ(h.call("COMMAND GETKEYS tmset a 1 b"), "[\"a\", \"b\"]");
  EXPECT_EQ(h.call("COMMAND GETKEYS tcontainer beta k"), "[\"k\"]");
  EXPECT_EQ(h.call("COMMAND GETKEYS toptional a"), "[]");
  EXPECT_EQ(h.call("COMMAND GETKEYS toptional a b c"), "[\"b\", \"c\"]");
  EXPECT_EQ(h.call("COMMAND GETKEYS tstrict a"), "-ERR Invalid arguments specified for command");
  EXPECT_EQ(h.call("COMMAND GETKEYS tstrict a b"), "[\"b\"]");
}

TEST_F(IntrospectionTest, GetKeysErrors) {
  EXPECT_EQ(h.call("COMMAND GETKEYS nosuch a"), "-ERR Invalid command specified");
  EXPECT_EQ(h.call("COMMAND GETKEYS tcontainer nosuch"), "-ERR Invalid command specified");
  EXPECT_EQ(h.call("COMMAND GETKEYS tcontainer alpha x"), "-ERR The command has no key arguments");
  EXPECT_EQ(h.call("COMMAND GETKEYS ping x"), "-ERR The command has no key arguments");
  EXPECT_EQ(h.call("COMMAND GETKEYS tget a b"),
            "-ERR Invalid number of arguments specified for command");
  EXPECT_EQ(h.call("COMMAND GETKEYS tmset a"),
            "-ERR Invalid number of arguments specified for command");
  EXPECT_EQ(h.call("COMMAND GETKEYS tget"),
            "-ERR wrong number of arguments for 'command|getkeys' command");
  EXPECT_EQ(h.call("COMMAND GETKEYS"),
            "-ERR wrong number of arguments for 'command|getkeys' command");
  // Keys in order of checks: an unknown command wins over a wrong count.
  EXPECT_EQ(h.call("COMMAND GETKEYS nosuch"),
            "-ERR wrong number of arguments for 'command|getkeys' command");
}

TEST_F(IntrospectionTest, GetKeysAndFlags) {
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS tget a"), "[[\"a\", [+RO, +access]]]");
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS tmset a 1 b 2"),
            "[[\"a\", [+RW, +update]], [\"b\", [+RW, +update]]]");
  h.session.resp = 3;
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS tget a"), "[[\"a\", ~{+RO, +access}]]");
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS ping x"), "-ERR The command has no key arguments");
  EXPECT_EQ(h.call("COMMAND GETKEYSANDFLAGS tget"),
            "-ERR wrong number of arguments for 'command|getkeysandflags' command");
}

TEST_F(IntrospectionTest, HelpAndUnknownSubcommand) {
  RespValue help = h.reply("COMMAND HELP");
  ASSERT_EQ(help.elements.size(), 21u);
  EXPECT_EQ(help.elements[0].str,
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_EQ(help.elements[0].type, RespType::kSimpleString);
  EXPECT_EQ(help.elements[20].str, "    Prints this help.");
  EXPECT_EQ(h.call("COMMAND HELP x"), "-ERR wrong number of arguments for 'command|help' command");
  EXPECT_EQ(h.call("COMMAND NOSUCH"), "-ERR unknown subcommand 'NOSUCH'. Try COMMAND HELP.");
}

TEST(IntrospectionCommands, DocsOfTheRealCommandCommand) {
  CommandHarness h;
  EXPECT_EQ(h.call("COMMAND DOCS command|getkeysandflags"),
            "[\"command|getkeysandflags\", [\"summary\", \"Extract keys and access flags given a "
            "full Redis command\", \"since\", \"7.0.0\", \"group\", \"server\", \"complexity\", "
            "\"O(N) where N is the number of arguments to the command\"]]");
}

}  // namespace
}  // namespace keywarden::testing
