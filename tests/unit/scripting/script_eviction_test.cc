// maxmemory and scripts, with a fake memory gauge (one fixed cost per key): Redis 7.0's rules
// for EVAL and FCALL when memory is over the limit. A script without a shebang runs, but its
// first denyoom command is refused unless it already wrote; a script with a shebang is denyoom
// itself unless it declares allow-oom or no-writes. Replies are redis-server 7.0.15's.
#include <gtest/gtest.h>

#include <string>

#include "../commands/command_harness.h"
#include "commands/errors.h"
#include "common/sha1.h"
#include "scripting/eval_commands.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

const std::string kOomReply = "-" + std::string(errors::kOom);

class ScriptEvictionTest : public ::testing::Test {
 protected:
  ScriptEvictionTest() : engine(h.state) {
    register_eval_commands(h.state.commands());
    h.state.eviction().set_memory_gauge(
        [this] { return 100 * h.state.keyspace().total_keys(); });
  }
  std::string eval(std::string_view body, std::string_view tail = " 0") {
    std::string line = "EVAL \"";
    for (char c : body) {
      if (c == '"' || c == '\\') line.push_back('\\');
      line.push_back(c);
    }
    line += "\"";
    line += tail;
    return h.call(line);
  }
  static std::string at(std::string_view body, int line) {
    return " script: " + sha1_hex(body) + ", on @user_script:" + std::to_string(line) + ".";
  }
  void go_over_limit() {
    h.call("SET a 1");
    h.call("SET b 1");
    h.state.eviction().settings().maxmemory = 100;  // noeviction: stays over
  }

  testing::CommandHarness h;
  ScriptEngine engine;
};

TEST_F(ScriptEvictionTest, ScriptWithoutShebangRefusesItsFirstDenyoomWrite) {
  go_over_limit();
  const std::string body = "redis.call('set','x',1) return 1";
  EXPECT_EQ(eval(body), kOomReply + at(body, 1));
  EXPECT_EQ(eval("return redis.call('get','a')"), "\"1\"");
  // pcall gets the error as a value.
  EXPECT_EQ(eval("return redis.pcall('set','x',1)"), kOomReply);
  // After a first write (not denyoom) the script cannot be stopped half-way.
  EXPECT_EQ(eval("redis.call('del','a') redis.call('set','x',1) return 1"), ":1");
  EXPECT_EQ(h.call("EXISTS x"), ":1");
}

TEST_F(ScriptEvictionTest, ShebangScriptsFollowTheirFlags) {
  go_over_limit();
  EXPECT_EQ(eval("#!lua\nreturn redis.call('get','a')"), kOomReply);
  EXPECT_EQ(eval("#!lua flags=no-writes\nreturn redis.call('get','a')"), "\"1\"");
  EXPECT_EQ(eval("#!lua flags=allow-oom\nreturn redis.call('set','x','5')"), "+OK");
  EXPECT_EQ(h.call("EVAL_RO \"#!lua\nreturn 1\" 0"), kOomReply);
  // A cached script is judged by its cached flags (EVALSHA).
  h.state.eviction().settings().maxmemory = 0;
  const std::string body = "#!lua\nreturn 1";
  EXPECT_EQ(eval(body), ":1");
  h.state.eviction().settings().maxmemory = 100;
  EXPECT_EQ(h.call("EVALSHA " + sha1_hex(body) + " 0"), kOomReply);
}

TEST_F(ScriptEvictionTest, FunctionsFollowTheirFlags) {
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib\nredis.register_function('f', function() "
                   "return 1 end)\nredis.register_function{function_name='g', callback="
                   "function() return 2 end, flags={'no-writes'}}\""),
            "\"lib\"");
  go_over_limit();
  EXPECT_EQ(h.call("FCALL f 0"), kOomReply);
  EXPECT_EQ(h.call("FCALL g 0"), ":2");
  EXPECT_EQ(h.call("FCALL nosuch 0"), "-ERR Function not found");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib2\nredis.register_function('h', function() "
                   "return 1 end)\""),
            kOomReply);
}

TEST_F(ScriptEvictionTest, ShebangScriptQueuedInMultiIsCheckedAtStart) {
  h.call("SET a 1");
  h.state.eviction().settings().maxmemory = 100;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EVAL \"#!lua flags=no-writes\nreturn 1\" 0"), "+QUEUED");
  EXPECT_EQ(h.call("SET b 1"), "+QUEUED");
  // EXEC starts at the limit (not over); the SET takes it over; the script that follows the
  // SET inside the same EXEC was judged at EXEC's start.
  EXPECT_EQ(h.call("EVAL \"#!lua\nreturn 2\" 0"), "+QUEUED");
  EXPECT_EQ(h.call("EXEC"), "[:1, +OK, :2]");
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("GET a"), kOomReply);
  EXPECT_EQ(h.call("DISCARD"), "+OK");
  h.state.eviction().settings().maxmemory = 0;
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("EVAL \"#!lua\nreturn 2\" 0"), "+QUEUED");
  h.state.eviction().settings().maxmemory = 100;
  EXPECT_EQ(h.call("EXEC"),
            "-EXECABORT Transaction discarded because of: OOM command not allowed when used "
            "memory > 'maxmemory'.");
}

TEST_F(ScriptEvictionTest, ScriptEvictsUnderAnEvictionPolicy) {
  h.state.settings().maxmemory_policy = kMaxmemoryAllKeysLru;
  go_over_limit();
  EXPECT_EQ(eval("#!lua\nreturn redis.call('set','x','1')"), "+OK");
  EXPECT_EQ(h.state.eviction().evicted_keys(), 1u);
}

}  // namespace
}  // namespace keywarden
