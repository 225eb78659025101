// ConfigRegistry: loading a file and `--name value` arguments, the fatal report redis-server
// prints for a bad line (same text, with keywarden in the header), memory units, CONFIG SET
// (all or nothing, error texts), CONFIG GET (globs, aliases, spelling) and CONFIG REWRITE.
// Expected error texts were taken from redis-server 7.0.15 given the same mistakes. Tests that
// need the real directives use a Server, which never listens here.
#include "commands/config_registry.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/version.h"
#include "server/server.h"

namespace keywarden {
namespace {

// The report main() prints (then a newline), as redis-server words it.
std::string fatal(int line, std::string_view text, std::string_view reason) {
  return "\n*** FATAL CONFIG FILE ERROR (keywarden " + std::string(kKeywardenVersion) +
         ") ***\nReading the configuration file, at line " + std::to_string(line) + "\n>>> '" +
         std::string(text) + "'\n" + std::string(reason);
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kw-config-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::trunc) << text;
    return file;
  }
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

 private:
  std::string path_;
};

std::map<std::string, std::string> as_map(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  return {pairs.begin(), pairs.end()};
}

std::vector<std::string> names(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::string> out;
  for (const auto& [name, value] : pairs) out.push_back(name);
  return out;
}

// ----------------------------------------------------------------------------------------------
// A registry of test directives
// ----------------------------------------------------------------------------------------------

class RegistryTest : public ::testing::Test {
 protected:
  RegistryTest() {
    registry.add_bool("flag", &flag);
    registry.add_integer("number", &number, -5, 1000);
    registry.add_int("small", &small, 1, 10, 0, [this] { ++small_changes; });
    registry.add_memory("memory", &memory, 0, INT64_MAX);
    registry.add_enum("choice", &choice, {{"alpha", 1}, {"beta", 2}, {"gamma", 3}});
    registry.add_string("name", &name);
    registry.add_string("save", &save, kConfigMultiArg);
    registry.add_string("bind", &bind, kConfigMultiArg);
    registry.add_integer("port", &port, 0, 65535, kConfigImmutable);
    registry.add_integer("listpack-entries", &entries, 0, INT64_MAX);
    registry.add_alias("listpack-entries", "ziplist-entries");
    registry.seal();
  }

  std::string load(std::string_view text, std::vector<std::string> arguments = {}) {
    return registry.load(text, arguments);
  }
  std::string set(std::vector<std::string_view> pairs) { return registry.set(pairs); }
  std::vector<std::pair<std::string, std::string>> get(std::vector<std::string_view> patterns) {
    return registry.get(patterns);
  }

  ConfigRegistry registry;
  bool flag = false;
  int64_t number = 0;
  int small = 5;
  int small_changes = 0;
  int64_t memory = 0;
  int choice = 1;
  std::string name = "default";
  std::string save = "3600 1";
  std::string bind = "127.0.0.1";
  int64_t port = 6379;
  int64_t entries = 512;
};

TEST_F(RegistryTest, LoadReadsCommentsBlankLinesAndQuoting) {
  const std::string text =
      "# a comment\n"
      "   # an indented comment\n"
      "\n"
      "   \t\n"
      "flag yes\n"
      "NUMBER 42\n"
      "  small 7  \n"
      "name \"hello world\"\n"
      "memory 1kb\n"
      "choice BETA\n"
      "ziplist-entries 128\n";
  ASSERT_EQ(load(text), "");
  EXPECT_TRUE(flag);
  EXPECT_EQ(number, 42);
  EXPECT_EQ(small, 7);
  EXPECT_EQ(small_changes, 1);
  EXPECT_EQ(name, "hello world");
  EXPECT_EQ(memory, 1024);
  EXPECT_EQ(choice, 2);
  EXPECT_EQ(entries, 128);

  ASSERT_EQ(load("name 'it\\'s'\n"), "");
  EXPECT_EQ(name, "it's");
  ASSERT_EQ(load("name \"tab\\there \\x41\\\\ \\\"q\\\"\"\n"), "");
  EXPECT_EQ(name, "tab\there A\\ \"q\"");
  ASSERT_EQ(load("name \"\"\n"), "");
  EXPECT_EQ(name, "");
  // A line without a final newline, and a later line overriding an earlier one.
  ASSERT_EQ(load("number 1\nnumber 2"), "");
  EXPECT_EQ(number, 2);
  // CRLF line ends.
  ASSERT_EQ(load("number 3\r\nflag no\r\n"), "");
  EXPECT_EQ(number, 3);
  EXPECT_FALSE(flag);
}

TEST_F(RegistryTest, ArgumentsComeAfterTheFile) {
  ASSERT_EQ(load("number 1\nname file\n", {"--number", "2", "--name", "with space", "--flag",
                                            "yes"}),
            "");
  EXPECT_EQ(number, 2);
  EXPECT_EQ(name, "with space");
  EXPECT_TRUE(flag);
  // Values are quoted as redis-server quotes them, so any bytes survive the round trip.
  ASSERT_EQ(load("", {"--name", "a\"b\\c\n'd"}), "");
  EXPECT_EQ(name, "a\"b\\c\n'd");
  EXPECT_EQ(ConfigRegistry::arguments_to_text(std::vector<std::string>{"--port", "7001", "--save",
                                                                      ""}),
            "port \"7001\"\nsave \"\"\n");
}

TEST_F(RegistryTest, MultiArgumentDirectives) {
  ASSERT_EQ(load("save 900 1 300 10\nbind 10.0.0.1 -::1\n"), "");
  EXPECT_EQ(save, "900 1 300 10");
  EXPECT_EQ(bind, "10.0.0.1 -::1");
  ASSERT_EQ(load("bind \"127.0.0.1 ::1\"\n"), "");
  EXPECT_EQ(bind, "127.0.0.1 ::1");
  // `save ""`, `--save ''`, and `save` alone all mean no snapshots.
  ASSERT_EQ(load("save \"\"\n"), "");
  EXPECT_EQ(save, "");
  save = "x";
  ASSERT_EQ(load("", {"--save", ""}), "");
  EXPECT_EQ(save, "");
  save = "x";
  ASSERT_EQ(load("save\n"), "");
  EXPECT_EQ(save, "");
  save = "x";
  ASSERT_EQ(load("", {"--save", "--flag", "yes"}), "");
  EXPECT_EQ(save, "");
  EXPECT_TRUE(flag);
  ASSERT_EQ(load("", {"--save", "60", "1000", "--bind", "1.2.3.4", "::1"}), "");
  EXPECT_EQ(save, "60 1000");
  EXPECT_EQ(bind, "1.2.3.4 ::1");
  // A single-argument directive takes exactly one.
  EXPECT_EQ(load("number 1 2\n"), fatal(1, "number 1 2", "wrong number of arguments"));
  EXPECT_EQ(load("number\n"), fatal(1, "number", "wrong number of arguments"));
}

TEST_F(RegistryTest, FatalReportNamesTheLine) {
  EXPECT_EQ(load("# comment\nflag yes\nfoo bar\nnumber 1\n"),
            fatal(3, "foo bar", "Bad directive or wrong number of arguments"));
  EXPECT_EQ(load("number 1\n   flag maybe   \n"),
            fatal(2, "flag maybe", "argument must be 'yes' or 'no'"));
  EXPECT_EQ(load("number 1001\n"),
            fatal(1, "number 1001", "argument must be between -5 and 1000 inclusive"));
  EXPECT_EQ(load("number abc\n"),
            fatal(1, "number abc", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(load("memory 10xb\n"), fatal(1, "memory 10xb", "argument must be a memory value"));
  EXPECT_EQ(load("choice delta\n"),
            fatal(1, "choice delta",
                  "argument(s) must be one of the following: alpha, beta, gamma"));
  EXPECT_EQ(load("name \"open\n"),
            fatal(1, "name \"open", "Unbalanced quotes in configuration line"));
  EXPECT_EQ(load("number 7 # trailing comment\n"),
            fatal(1, "number 7 # trailing comment", "wrong number of arguments"));
  // Errors in arguments count lines after the file and one separating newline; the values
  // show quoted, as redis-server shows them.
  EXPECT_EQ(load("", {"--number", "1", "--foo", "bar"}),
            fatal(3, "foo \"bar\"", "Bad directive or wrong number of arguments"));
  EXPECT_EQ(load("number 1\nflag no\n", {"--number", "abc"}),
            fatal(4, "number \"abc\"", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(load("number 1\nflag no", {"--name", "x", "--number", "1", "2"}),
            fatal(4, "number \"1\" \"2\"", "wrong number of arguments"));
  EXPECT_EQ(load("", {"--memory", "-5"}),
            fatal(2, "memory \"-5\"", "argument must be a memory value"));
  // Loading stops at the first error: later lines are not applied.
  number = 0;
  EXPECT_NE(load("nosuch 1\nnumber 9\n"), "");
  EXPECT_EQ(number, 0);
}

TEST(ParseMemoryTest, Units) {
  struct Case {
    const char* text;
    int64_t value;
  };
  const Case cases[] = {
      {"0", 0},
      {"100", 100},
      {"5b", 5},
      {"5B", 5},
      {"1k", 1000},
      {"1kb", 1024},
      {"3Kb", 3072},
      {"1K", 1000},
      {"1m", 1000 * 1000},
      {"1mb", 1024 * 1024},
      {"2MB", 2 * 1024 * 1024},
      {"1g", 1000LL * 1000 * 1000},
      {"1gb", 1024LL * 1024 * 1024},
      {"20GB", 20LL * 1024 * 1024 * 1024},
      {"9223372036854775807", INT64_MAX},
      {"9223372036854775807b", INT64_MAX},
      {"9223372036854775k", 9223372036854775000},
      {"8589934591gb", 8589934591LL * 1024 * 1024 * 1024},
      {"", 0},  // as Redis's parser: CONFIG SET maxmemory '' turns the limit off
  };
  for (const Case& c : cases) {
    int64_t value = -1;
    EXPECT_TRUE(parse_memory(c.text, &value)) << c.text;
    EXPECT_EQ(value, c.value) << c.text;
  }
}

TEST(ParseMemoryTest, RejectsMalformedNegativeAndOverflow) {
  for (const char* text :
       {"k", "kb", "gb", "1x", "10xb", "1kbb", "1 k", " 1", "1 ", "1.5k", "+5", "0x10",
        "1e3", "-1", "-1k", "-0", "-9223372036854775808", "9223372036854775808",
        "9223372036854776k", "8589934592gb", "99999999999999999999", "1kk"}) {
    int64_t value = 42;
    EXPECT_FALSE(parse_memory(text, &value)) << "'" << text << "'";
    EXPECT_EQ(value, 42) << "'" << text << "'";
  }
}

TEST_F(RegistryTest, SetIsAllOrNothing) {
  EXPECT_EQ(set({"number", "10", "flag", "yes"}), "");
  EXPECT_EQ(number, 10);
  EXPECT_TRUE(flag);
  // The second of two pairs is invalid: the first is restored.
  EXPECT_EQ(set({"number", "20", "flag", "maybe"}),
            "ERR CONFIG SET failed (possibly related to argument 'flag') - argument must be "
            "'yes' or 'no'");
  EXPECT_EQ(number, 10);
  EXPECT_TRUE(flag);
  // Three pairs, the last invalid: both earlier ones restored, their hooks run again.
  small_changes = 0;
  EXPECT_EQ(set({"small", "2", "memory", "1mb", "choice", "delta"}),
            "ERR CONFIG SET failed (possibly related to argument 'choice') - argument(s) must be "
            "one of the following: alpha, beta, gamma");
  EXPECT_EQ(small, 5);
  EXPECT_EQ(memory, 0);
  EXPECT_EQ(choice, 1);
  EXPECT_EQ(small_changes, 2);  // set to 2, then back to 5
}

// Apply functions (the tls-* reload): run once per group after every value is set; a failure
// restores every value, applies again and names the group's first directive.
TEST(ConfigApplyTest, GroupsRunOnceAfterAllValuesAndRollBack) {
  ConfigRegistry registry;
  std::string cert = "a.crt", key = "a.key";
  int64_t other = 0;
  registry.add_string("cert", &cert);
  registry.add_string("key", &key);
  registry.add_integer("other", &other, 0, 100);
  std::vector<std::string> seen;  // the pair each apply saw
  bool refuse = false;
  for (const char* name : {"cert", "key"}) {
    registry.find(name)->apply_group = "files";
    registry.find(name)->apply = [&]() -> std::string {
      seen.push_back(cert + "+" + key);
      return refuse ? "Unable to update" : "";
    };
  }
  registry.seal();
  std::vector<std::string_view> both = {"cert", "b.crt", "other", "5", "key", "b.key"};
  EXPECT_EQ(registry.set(both), "");
  EXPECT_EQ(seen, std::vector<std::string>{"b.crt+b.key"});  // once, with both new values
  seen.clear();
  refuse = true;
  std::vector<std::string_view> again = {"other", "7", "key", "c.key", "cert", "c.crt"};
  EXPECT_EQ(registry.set(again),
            "ERR CONFIG SET failed (possibly related to argument 'key') - Unable to update");
  EXPECT_EQ(cert, "b.crt");
  EXPECT_EQ(key, "b.key");
  EXPECT_EQ(other, 5);
  EXPECT_EQ(seen, (std::vector<std::string>{"c.crt+c.key", "b.crt+b.key"}));
}

TEST_F(RegistryTest, SetErrorTexts) {
  EXPECT_EQ(set({"nosuch", "1"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(set({"number", "1", "NoSuch", "1"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'NoSuch'");
  EXPECT_EQ(number, 0);  // checked before anything is applied
  EXPECT_EQ(set({"port", "7000"}),
            "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable "
            "config");
  EXPECT_EQ(set({"number", "3", "PORT", "7000"}),
            "ERR CONFIG SET failed (possibly related to argument 'PORT') - can't set immutable "
            "config");
  EXPECT_EQ(number, 0);
  EXPECT_EQ(port, 6379);
  EXPECT_EQ(set({"number", "1", "NUMBER", "2"}),
            "ERR CONFIG SET failed (possibly related to argument 'NUMBER') - duplicate parameter");
  EXPECT_EQ(set({"listpack-entries", "1", "ziplist-entries", "2"}),
            "ERR CONFIG SET failed (possibly related to argument 'ziplist-entries') - duplicate "
            "parameter");
  // Duplicates are found before values are parsed, in argument order.
  EXPECT_EQ(set({"number", "x", "number", "y", "nosuch", "1"}),
            "ERR CONFIG SET failed (possibly related to argument 'number') - duplicate parameter");
  EXPECT_EQ(number, 0);
  // A bad value names the directive itself, not the client's spelling.
  EXPECT_EQ(set({"NUMBER", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'number') - argument couldn't "
            "be parsed into an integer");
  EXPECT_EQ(set({"ziplist-entries", "-1"}),
            "ERR CONFIG SET failed (possibly related to argument 'listpack-entries') - argument "
            "must be between 0 and 9223372036854775807 inclusive");
  EXPECT_EQ(set({"memory", "-1"}),
            "ERR CONFIG SET failed (possibly related to argument 'memory') - argument must be a "
            "memory value");
  // Names are case-insensitive and aliases reach the same value.
  EXPECT_EQ(set({"NuMbEr", "7", "ziplist-entries", "64"}), "");
  EXPECT_EQ(number, 7);
  EXPECT_EQ(entries, 64);
}

TEST_F(RegistryTest, GetGlobsAndAliases) {
  EXPECT_EQ(get({"number"}), (std::vector<std::pair<std::string, std::string>>{{"number", "0"}}));
  EXPECT_TRUE(get({"nosuch"}).empty());
  EXPECT_TRUE(get({"nosuch*"}).empty());
  // A literal name is answered under the spelling asked for, once whatever the case.
  EXPECT_EQ(names(get({"NUMBER"})), std::vector<std::string>{"NUMBER"});
  EXPECT_EQ(names(get({"NUMBER", "number"})), std::vector<std::string>{"NUMBER"});
  EXPECT_EQ(names(get({"number", "NUMBER", "num*"})), std::vector<std::string>{"number"});
  // Globs are case-insensitive and match names and aliases alike.
  EXPECT_EQ(as_map(get({"N?MB[DE]R"})), (std::map<std::string, std::string>{{"number", "0"}}));
  EXPECT_EQ(as_map(get({"*-entries"})),
            (std::map<std::string, std::string>{{"listpack-entries", "512"},
                                                {"ziplist-entries", "512"}}));
  EXPECT_EQ(as_map(get({"ziplist-entries"})),
            (std::map<std::string, std::string>{{"ziplist-entries", "512"}}));
  EXPECT_EQ(as_map(get({"zip*"})), (std::map<std::string, std::string>{{"ziplist-entries", "512"}}));
  EXPECT_EQ(as_map(get({"listpack-entries", "ziplist-entries"})),
            (std::map<std::string, std::string>{{"listpack-entries", "512"},
                                                {"ziplist-entries", "512"}}));
  // Several patterns: the union, each name once.
  auto pairs = get({"n*", "*a*", "name"});
  EXPECT_EQ(as_map(pairs),
            (std::map<std::string, std::string>{{"name", "default"},
                                                {"number", "0"},
                                                {"small", "5"},
                                                {"flag", "no"},
                                                {"save", "3600 1"},
                                                {"listpack-entries", "512"}}));
  EXPECT_EQ(pairs.size(), 6u);
  EXPECT_EQ(get({"*"}).size(), registry.directives().size() + 1);  // + one alias
  // Values as set.
  ASSERT_EQ(set({"memory", "1kb", "choice", "gamma", "flag", "yes"}), "");
  EXPECT_EQ(as_map(get({"memory", "choice", "flag"})),
            (std::map<std::string, std::string>{
                {"memory", "1024"}, {"choice", "gamma"}, {"flag", "yes"}}));
}

// ----------------------------------------------------------------------------------------------
// The real directives, through a Server
// ----------------------------------------------------------------------------------------------

std::string value_of(Server& server, std::string_view name) {
  std::vector<std::string_view> patterns{name};
  auto pairs = server.config().get(patterns);
  return pairs.size() == 1 ? pairs[0].second : "<" + std::to_string(pairs.size()) + " values>";
}

std::string server_set(Server& server, std::vector<std::string_view> pairs) {
  return server.config().set(pairs);
}

TEST(ServerConfigTest, FatalReportsMatchRedis) {
  // Each case was given to redis-server 7.0.15; only the header's name and version differ.
  TempDir dir;
  struct Case {
    std::string file;
    std::vector<std::string> arguments;
    std::string expected;
  };
  const Case cases[] = {
      {"# comment\nport 7001\nfoo bar\n", {},
       fatal(3, "foo bar", "Bad directive or wrong number of arguments")},
      {"port 7001\n  appendonly maybe\n", {},
       fatal(2, "appendonly maybe", "argument must be 'yes' or 'no'")},
      {"maxmemory 10xb\n", {}, fatal(1, "maxmemory 10xb", "argument must be a memory value")},
      {"maxmemory -1\n", {}, fatal(1, "maxmemory -1", "argument must be a memory value")},
      {"maxmemory 1kbb\n", {}, fatal(1, "maxmemory 1kbb", "argument must be a memory value")},
      {"port 99999\n", {},
       fatal(1, "port 99999", "argument must be between 0 and 65535 inclusive")},
      {"port \"7001\n", {}, fatal(1, "port \"7001", "Unbalanced quotes in configuration line")},
      {"port 1 2\n", {}, fatal(1, "port 1 2", "wrong number of arguments")},
      {"port\n", {}, fatal(1, "port", "wrong number of arguments")},
      {"appendonly yes no\n", {}, fatal(1, "appendonly yes no", "wrong number of arguments")},
      {"hz 1.5\n", {}, fatal(1, "hz 1.5", "argument couldn't be parsed into an integer")},
      {"loglevel loud\n", {},
       fatal(1, "loglevel loud",
             "argument(s) must be one of the following: debug, verbose, notice, warning")},
      {"databases 0\n", {},
       fatal(1, "databases 0", "argument must be between 1 and 2147483647 inclusive")},
      {"timeout -1\n", {},
       fatal(1, "timeout -1", "argument must be between 0 and 2147483647 inclusive")},
      {"port 7001 # trailing\n", {},
       fatal(1, "port 7001 # trailing", "wrong number of arguments")},
      {"port 7313\nhz 10\n", {"--hz", "abc"},
       fatal(4, "hz \"abc\"", "argument couldn't be parsed into an integer")},
      {"port 7313\nhz 10\n", {"--requirepass", "a\"b c", "--hz", "1", "2"},
       fatal(5, "hz \"1\" \"2\"", "wrong number of arguments")},
  };
  int index = 0;
  for (const Case& c : cases) {
    std::string path = dir.write("bad" + std::to_string(index++) + ".conf", c.file);
    Server server;
    EXPECT_EQ(server.configure(path, c.arguments), c.expected) << c.file;
  }
  // Arguments alone (no file): the text starts with the separating newline.
  const Case argument_cases[] = {
      {"", {"--port", "7001", "--foo", "bar"},
       fatal(3, "foo \"bar\"", "Bad directive or wrong number of arguments")},
      {"", {"--save", "--hz", "x"},
       fatal(3, "hz \"x\"", "argument couldn't be parsed into an integer")},
      {"", {"--maxmemory", "-5"}, fatal(2, "maxmemory \"-5\"", "argument must be a memory value")},
      {"", {"--bind", "1.2.3.4", "::1", "--hz", "x"},
       fatal(3, "hz \"x\"", "argument couldn't be parsed into an integer")},
  };
  for (const Case& c : argument_cases) {
    Server server;
    EXPECT_EQ(server.configure("", c.arguments), c.expected) << c.arguments[0];
  }
  Server server;
  EXPECT_EQ(server.configure(dir.write("nosuch/dir.conf", ""), {}).rfind(
                "Fatal error, can't open config file '", 0),
            0u);
}

TEST(ServerConfigTest, LoadsFileAndArguments) {
  TempDir dir;
  std::string path = dir.write("ok.conf",
                               "# keywarden\n"
                               "port 7001\n"
                               "save 900 1 300 10\n"
                               "bind 127.0.0.1 -::1\n"
                               "maxmemory 100mb\n"
                               "maxmemory-policy allkeys-lru\n"
                               "requirepass \"p a s s\"\n");
  Server server;
  ASSERT_EQ(server.configure(path, std::vector<std::string>{"--save", "", "--hz", "20",
                                                            "--databases", "4"}),
            "");
  EXPECT_EQ(server.config_file(), std::filesystem::canonical(path).string());
  EXPECT_EQ(value_of(server, "port"), "7001");
  EXPECT_EQ(value_of(server, "save"), "");
  EXPECT_EQ(value_of(server, "bind"), "127.0.0.1 -::1");
  EXPECT_EQ(value_of(server, "maxmemory"), "104857600");
  EXPECT_EQ(value_of(server, "maxmemory-policy"), "allkeys-lru");
  EXPECT_EQ(value_of(server, "requirepass"), "p a s s");
  EXPECT_EQ(value_of(server, "hz"), "20");
  EXPECT_EQ(server.state().keyspace().database_count(), 4);
  EXPECT_EQ(server.network().port, 7001);
  EXPECT_EQ(server.actual_port(), 0);  // configured, never listening
}

TEST(ServerConfigTest, SetGetOnTheRealDirectives) {
  Server server;
  ASSERT_EQ(server.configure("", {}), "");
  EXPECT_EQ(server_set(server, {"hz", "20", "maxmemory", "foo"}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be "
            "a memory value");
  EXPECT_EQ(value_of(server, "hz"), "10");
  EXPECT_EQ(server_set(server, {"maxmemory", "1gb", "timeout", "30", "hz", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be "
            "parsed into an integer");
  EXPECT_EQ(value_of(server, "maxmemory"), "0");
  EXPECT_EQ(value_of(server, "timeout"), "0");
  EXPECT_EQ(server_set(server, {"hz", "5", "daemonize", "no"}),
            "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set "
            "immutable config");
  EXPECT_EQ(server_set(server, {"hz", "1", "HZ", "2"}),
            "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter");
  EXPECT_EQ(server_set(server, {"hz", "5", "nosuch", "3"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(server_set(server, {"HZ", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be "
            "parsed into an integer");
  EXPECT_EQ(server_set(server, {"maxmemory-policy", "foo"}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
            "noeviction");
  EXPECT_EQ(value_of(server, "hz"), "10");

  EXPECT_EQ(server_set(server, {"maxmemory", "1KB", "HZ", "11"}), "");
  EXPECT_EQ(value_of(server, "maxmemory"), "1024");
  std::vector<std::string_view> patterns{"HZ", "hz", "h?"};
  EXPECT_EQ(server.config().get(patterns),
            (std::vector<std::pair<std::string, std::string>>{{"HZ", "11"}}));
  patterns = {"proto-max-*"};
  EXPECT_EQ(server.config().get(patterns),
            (std::vector<std::pair<std::string, std::string>>{{"proto-max-bulk-len",
                                                               "536870912"}}));
  patterns = {"*"};
  auto all = server.config().get(patterns);
  // Every directive once, plus every alias (Redis lists aliases under "*" too).
  size_t names = 0;
  for (const ConfigDirective& directive : server.config().directives()) {
    names += 1 + directive.aliases.size();
  }
  EXPECT_EQ(all.size(), names);
  patterns = {"maxmemory*", "*memory"};
  EXPECT_EQ(as_map(server.config().get(patterns)),
            (std::map<std::string, std::string>{{"maxmemory", "1024"},
                                                {"maxmemory-clients", "0"},
                                                {"maxmemory-eviction-tenacity", "10"},
                                                {"maxmemory-policy", "noeviction"},
                                                {"maxmemory-samples", "5"},
                                                {"replica-ignore-maxmemory", "yes"},
                                                {"slave-ignore-maxmemory", "yes"}}));
}

TEST(ServerConfigTest, RewriteKeepsCommentsAndUnknownLines) {
  TempDir dir;
  std::string path = dir.write("rw.conf",
                               "# keywarden test config\n"
                               "port 7000\n"
                               "\n"
                               "hz 20\n"
                               "   # indented comment\n"
                               "maxmemory 1mb\n"
                               "timeout 0\n"
                               "hz 30\n"
                               "save 3600 1\n");
  Server server;
  ASSERT_EQ(server.configure(path, {}), "");
  EXPECT_EQ(value_of(server, "hz"), "30");
  // Lines keywarden does not know (an operator's edit, a directive of a later version).
  std::ofstream(path, std::ios::app) << "unknown-directive foo \"bar\"\nrename-command X Y\n";

  ASSERT_EQ(server_set(server, {"hz", "10",  // back at its default: its lines go
                                "maxmemory", "2mb",  // changed: updated in place
                                "maxmemory-policy", "allkeys-lru",  // new: appended
                                "requirepass", "a b\"c"}),
            "");
  ASSERT_EQ(server.config().rewrite(server.config_file()), "");
  const std::string expected =
      "# keywarden test config\n"
      "port 7000\n"
      "\n"
      "   # indented comment\n"
      "maxmemory 2097152\n"
      "save 3600 1\n"
      "unknown-directive foo \"bar\"\n"
      "rename-command X Y\n"
      "# Generated by CONFIG REWRITE\n"
      "maxmemory-policy allkeys-lru\n"
      "requirepass \"a b\\\"c\"\n"
      // Every ACL user, as Redis writes them (the default user's password is requirepass).
      "user default on #0c13a69ba69e1b7cc515a470879bf69f0d5d2d14b6802a3c0ac678076353fd18"
            " ~* &* +@all\n";
  EXPECT_EQ(TempDir::read(path), expected);

  // Rewriting again changes nothing.
  ASSERT_EQ(server.config().rewrite(server.config_file()), "");
  EXPECT_EQ(TempDir::read(path), expected);

  // A later change: updated in place or appended under the same signature, not a second one.
  ASSERT_EQ(server_set(server, {"maxmemory-policy", "noeviction", "slowlog-max-len", "5"}), "");
  ASSERT_EQ(server.config().rewrite(server.config_file()), "");
  EXPECT_EQ(TempDir::read(path),
            "# keywarden test config\n"
            "port 7000\n"
            "\n"
            "   # indented comment\n"
            "maxmemory 2097152\n"
            "save 3600 1\n"
            "unknown-directive foo \"bar\"\n"
            "rename-command X Y\n"
            "# Generated by CONFIG REWRITE\n"
            "requirepass \"a b\\\"c\"\n"
            "user default on #0c13a69ba69e1b7cc515a470879bf69f0d5d2d14b6802a3c0ac678076353fd18"
            " ~* &* +@all\n"
            "slowlog-max-len 5\n");
}

TEST(ServerConfigTest, RewrittenFileLoadsBackTheSameValues) {
  TempDir dir;
  std::string path = dir.write("round.conf", "port 7002\nsave 900 1\nbind 127.0.0.1 ::1\n");
  Server first;
  ASSERT_EQ(first.configure(path, {}), "");
  ASSERT_EQ(server_set(first, {"save", "", "requirepass", "x\ty 'z'",
                               "notify-keyspace-events", "KEA", "maxmemory", "3gb",
                               "latency-tracking-info-percentiles", "50 99.99"}),
            "");
  ASSERT_EQ(first.config().rewrite(first.config_file()), "");
  Server second;
  ASSERT_EQ(second.configure(path, {}), "") << TempDir::read(path);
  std::vector<std::string_view> all{"*"};
  EXPECT_EQ(first.config().get(all), second.config().get(all)) << TempDir::read(path);
}

TEST(ServerConfigTest, RewriteWithoutConfigFile) {
  Server server;
  ASSERT_EQ(server.configure("", {}), "");
  EXPECT_EQ(server.config().rewrite(server.config_file()),
            "ERR The server is running without a config file");
}

}  // namespace
}  // namespace keywarden
