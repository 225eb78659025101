#include "scripting/script_flags.h"

#include <gtest/gtest.h>

namespace keywarden {
namespace {

ScriptShebang parse_ok(std::string_view body) {
  ScriptShebang shebang;
  std::string error;
  EXPECT_TRUE(parse_script_shebang(body, &shebang, &error)) << error;
  return shebang;
}

std::string parse_error(std::string_view body) {
  ScriptShebang shebang;
  std::string error;
  EXPECT_FALSE(parse_script_shebang(body, &shebang, &error));
  return error;
}

TEST(ScriptShebang, NoShebangIsCompatibilityMode) {
  ScriptShebang shebang = parse_ok("return 1");
  EXPECT_EQ(shebang.flags, kScriptEvalCompatMode);
  EXPECT_EQ(shebang.length, 0u);
}

TEST(ScriptShebang, FlagsAreRead) {
  ScriptShebang shebang = parse_ok("#!lua flags=no-writes,allow-oom\nreturn 1");
  EXPECT_EQ(shebang.flags, kScriptNoWrites | kScriptAllowOom);
  EXPECT_EQ(shebang.length, 31u);
  EXPECT_EQ(parse_ok("#!lua\nreturn 1").flags, 0u);
  EXPECT_EQ(parse_ok("#!lua flags=\nreturn 1").flags, 0u);
  EXPECT_EQ(parse_ok("#!lua flags=allow-stale flags=no-cluster\n").flags,
            kScriptAllowStale | kScriptNoCluster);
}

TEST(ScriptShebang, ErrorsAsRedisWordsThem) {
  EXPECT_EQ(parse_error("#!lua"), "Invalid script shebang");
  EXPECT_EQ(parse_error("#!python\n"), "Unexpected engine in script shebang: #!python");
  EXPECT_EQ(parse_error("#!lua name=x\n"), "Unknown lua shebang option: name=x");
  EXPECT_EQ(parse_error("#!lua flags=no-writes,bad\n"), "Unexpected flag in script shebang: bad");
  EXPECT_EQ(parse_error("#!lua flags=no-writes,\n"), "Unexpected flag in script shebang: ");
  EXPECT_EQ(parse_error("#!lua \"unterminated\n"), "Invalid engine in script shebang");
}

}  // namespace
}  // namespace keywarden
