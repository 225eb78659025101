// EVAL, EVALSHA, SCRIPT and the redis.* API through the dispatcher, on a manual clock: reply
// conversion both ways, the sandbox, error texts, script flags, propagation and BUSY/KILL.
// Expected replies are those of redis-server 7.0.15.
#include <gtest/gtest.h>

#include "../commands/command_harness.h"
#include "commands/errors.h"
#include "common/sha1.h"
#include "scripting/eval_commands.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

class ScriptTest : public ::testing::Test {
 protected:
  ScriptTest() : engine(h.state) { register_eval_commands(h.state.commands()); }

  // EVAL of `body` with no keys.
  std::string eval(std::string_view body) {
    std::string line = "EVAL \"";
    for (char c : body) {
      if (c == '"' || c == '\\') line.push_back('\\');
      line.push_back(c);
    }
    line += "\" 0";
    return h.call(line);
  }
  // The "script: <sha>, on @user_script:<line>." tail Redis appends to a raised error.
  static std::string at(std::string_view body, int line) {
    return " script: " + sha1_hex(body) + ", on @user_script:" + std::to_string(line) + ".";
  }

  testing::CommandHarness h;
  ScriptEngine engine;
};

TEST_F(ScriptTest, LuaValuesBecomeReplies) {
  EXPECT_EQ(eval("return 1"), ":1");
  EXPECT_EQ(eval("return 3.99"), ":3");
  EXPECT_EQ(eval("return -0.9"), ":0");
  EXPECT_EQ(eval("return 1.5e20"), ":-9223372036854775808");
  EXPECT_EQ(eval("return 'x'"), "\"x\"");
  EXPECT_EQ(eval("return true"), ":1");
  EXPECT_EQ(eval("return false"), "(nil)");
  EXPECT_EQ(eval("return nil"), "(nil)");
  EXPECT_EQ(eval("return {1, 2, 3.7, 'x', nil, 5}"), "[:1, :2, :3, \"x\"]");
  EXPECT_EQ(eval("return {1, {2, {3}}, 'a'}"), "[:1, [:2, [:3]], \"a\"]");
  EXPECT_EQ(eval("return {1, {err='x'}, {ok='y'}}"), "[:1, -x, +y]");
  EXPECT_EQ(eval("return {err='bad'}"), "-bad");
  EXPECT_EQ(eval("return {ok='a\\r\\nb'}"), "+a  b");
  EXPECT_EQ(eval("return redis.status_reply('fine')"), "+fine");
  EXPECT_EQ(eval("return redis.error_reply('nospace')"), "-ERR nospace");
  EXPECT_EQ(eval("return redis.error_reply('-X y')"), "-X y");
  EXPECT_EQ(eval("return redis.error_reply('X y')"), "-X y");
  EXPECT_EQ(eval("return {double=3.5}"), "\"3.5\"");
  EXPECT_EQ(eval("return {double='x'}"), "[]");
  EXPECT_EQ(eval("return {big_number='12'}"), "\"12\"");
  EXPECT_EQ(eval("return {map={1,2}}"), "[:1, :1, :2, :2]");
  EXPECT_EQ(eval("return {set={'a'}}"), "[:1]");
}

TEST_F(ScriptTest, Resp3CallerGetsResp3Types) {
  h.call("HELLO 3");
  // Booleans follow the script's protocol (redis.setresp), not the caller's.
  EXPECT_EQ(eval("return true"), ":1");
  EXPECT_EQ(eval("return false"), "(nil)");
  EXPECT_EQ(eval("redis.setresp(3) return true"), "#t");
  EXPECT_EQ(eval("redis.setresp(3) return false"), "#f");
  EXPECT_EQ(eval("return nil"), "(nil)");
  EXPECT_EQ(eval("return {double=3.5}"), ",3.5");
  EXPECT_EQ(eval("return {map={a=1}}"), "{\"a\": :1}");
  EXPECT_EQ(eval("return {set={a=true}}"), "~{\"a\"}");
  EXPECT_EQ(eval("return {big_number='123'}"), "(123");
  EXPECT_EQ(eval("return {verbatim_string={format='txt',string='hi'}}"), "=txt:\"hi\"");
}

TEST_F(ScriptTest, RepliesBecomeLuaValues) {
  EXPECT_EQ(eval("local t = redis.call('ping') return type(t) .. t.ok"), "\"tablePONG\"");
  EXPECT_EQ(eval("return redis.call('get', 'nokey')"), "(nil)");
  EXPECT_EQ(eval("return tostring(redis.call('get', 'nokey'))"), "\"false\"");
  EXPECT_EQ(eval("return redis.call('rpush', 'l', 'a', 'b')"), ":2");
  EXPECT_EQ(eval("return redis.call('lrange', 'l', 0, -1)"), "[\"a\", \"b\"]");
  // Numbers are sent as "%.17g" text.
  EXPECT_EQ(eval("redis.call('set', 'k', 0.1) return redis.call('get', 'k')"),
            "\"0.10000000000000001\"");
  EXPECT_EQ(eval("redis.call('set', 'k', 1e20) return redis.call('get', 'k')"), "\"1e+20\"");
  EXPECT_EQ(eval("redis.call('set', 'k', 1e15) return redis.call('get', 'k')"),
            "\"1000000000000000\"");
  EXPECT_EQ(eval("redis.call('set', 'k', -42) return redis.call('get', 'k')"), "\"-42\"");
  EXPECT_EQ(eval("redis.call('set', 'k', -0.0) return redis.call('get', 'k')"), "\"-0\"");
  EXPECT_EQ(eval("redis.call('set', 'k', 1/0) return redis.call('get', 'k')"), "\"inf\"");
  EXPECT_EQ(eval("redis.call('set', 'k', 123456789012) return redis.call('get', 'k')"),
            "\"123456789012\"");
  EXPECT_EQ(eval("redis.call('hset', 'h', 'a', '1') return redis.call('hgetall', 'h')"),
            "[\"a\", \"1\"]");
  EXPECT_EQ(eval("redis.setresp(3) local r = redis.call('hgetall', 'h') return r.map.a"),
            "\"1\"");
  EXPECT_EQ(eval("redis.setresp(3) return redis.call('get', 'nokey') == nil"), ":1");
  EXPECT_EQ(eval("redis.setresp(3) return redis.call('zscore', 'nz', 'm') == nil"), ":1");
  EXPECT_EQ(eval("redis.call('zadd', 'z', 1.5, 'm') redis.setresp(3) "
                 "return tostring(redis.call('zscore', 'z', 'm').double)"),
            "\"1.5\"");
  EXPECT_EQ(eval("redis.setresp(3) local s = redis.call('smembers', 'nos') return type(s.set)"),
            "\"table\"");
}

TEST_F(ScriptTest, CallErrorsRaiseAndPcallReturnsThem) {
  std::string body = "return redis.call('nosuch')";
  EXPECT_EQ(eval(body), "-ERR Unknown Redis command called from script" + at(body, 1));
  body = "return redis.call('set', 'k')";
  EXPECT_EQ(eval(body), "-ERR Wrong number of args calling Redis command from script" + at(body, 1));
  body = "return redis.call('multi')";
  EXPECT_EQ(eval(body), "-ERR This Redis command is not allowed from script" + at(body, 1));
  body = "return redis.call()";
  EXPECT_EQ(eval(body),
            "-ERR Please specify at least one argument for this redis lib call" + at(body, 1));
  body = "return redis.call('set', {}, 1)";
  EXPECT_EQ(eval(body),
            "-ERR Lua redis lib command arguments must be strings or integers" + at(body, 1));
  h.call("SET s v");
  body = "\nreturn redis.call('lpush', 's', 'x')";
  EXPECT_EQ(eval(body), std::string("-") + std::string(errors::kWrongType) + at(body, 2));
  EXPECT_EQ(eval("return redis.pcall('lpush', 's', 'x')"), std::string("-") +
                                                                std::string(errors::kWrongType));
  EXPECT_EQ(eval("return redis.pcall('nosuch')"), "-ERR Unknown Redis command called from script");
  // Lua's pcall hands back the message of a raised error table, as in Redis 7.
  EXPECT_EQ(eval("local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), e}"),
            "[\"false\", \"ERR Unknown Redis command called from script\"]");
}

TEST_F(ScriptTest, ScriptErrorsNameTheScriptAndLine) {
  std::string body = "error('boom')";
  EXPECT_EQ(eval(body), "-ERR user_script:1: boom" + at(body, 1));
  body = "error({err='MY boom'})";
  EXPECT_EQ(eval(body), "-MY boom" + at(body, 1));
  body = "return redis.setresp(4)";
  EXPECT_EQ(eval(body), "-ERR RESP version must be 2 or 3." + at(body, 1));
  body = "return redis.sha1hex()";
  EXPECT_EQ(eval(body), "-ERR wrong number of arguments" + at(body, 1));
  body = "return redis.log(9, 'x')";
  EXPECT_EQ(eval(body), "-ERR Invalid debug level." + at(body, 1));
  body = "return redis.set_repl(99)";
  EXPECT_EQ(eval(body),
            "-ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE." +
                at(body, 1));
  EXPECT_EQ(eval("syntax error here"),
            "-ERR Error compiling script (new function): user_script:1: '=' expected near "
            "'error'");
}

TEST_F(ScriptTest, Sandbox) {
  std::string body = "a = 1";
  EXPECT_EQ(eval(body), "-ERR user_script:1: Attempt to modify a readonly table" + at(body, 1));
  body = "return x";
  EXPECT_EQ(eval(body),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'x'" +
                at(body, 1));
  body = "string.foo = 1";
  EXPECT_EQ(eval(body), "-ERR user_script:1: Attempt to modify a readonly table" + at(body, 1));
  body = "redis.call = 1";
  EXPECT_EQ(eval(body), "-ERR user_script:1: Attempt to modify a readonly table" + at(body, 1));
  body = "_G.x = 1";
  EXPECT_EQ(eval(body), "-ERR user_script:1: Attempt to modify a readonly table" + at(body, 1));
  body = "rawset(_G, 'zz', 1) return 1";
  EXPECT_EQ(eval(body), "-ERR Attempt to modify a readonly table" + at(body, 1));
  body = "KEYS = 1";
  EXPECT_EQ(eval(body), "-ERR user_script:1: Attempt to modify a readonly table" + at(body, 1));
  for (std::string_view name : {"os", "io", "print", "dofile", "loadfile", "require", "debug",
                                "setfenv", "getfenv", "newproxy", "module"}) {
    body = "return " + std::string(name);
    EXPECT_EQ(eval(body), "-ERR user_script:1: Script attempted to access nonexistent global "
                          "variable '" + std::string(name) + "'" + at(body, 1));
  }
  EXPECT_EQ(eval("return {type(loadstring), type(coroutine), type(unpack), type(cjson), "
                 "type(bit), type(string.format), type(math.floor), type(table.insert)}"),
            "[\"function\", \"table\", \"function\", \"table\", \"table\", \"function\", "
            "\"function\", \"function\"]");
  EXPECT_EQ(eval("local t = {} t.x = 1 return t.x"), ":1");
  EXPECT_EQ(eval("return #KEYS + #ARGV"), ":0");
  EXPECT_EQ(h.call("EVAL \"return {KEYS[1], KEYS[2], ARGV[1]}\" 2 a b c"),
            "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(eval("return redis.REDIS_VERSION"), "\"7.0.15\"");
  EXPECT_EQ(eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_ALL, "
                 "redis.LOG_WARNING}"),
            "[:0, :1, :2, :3, :3]");
}

TEST_F(ScriptTest, MathRandomIsRedisGenerator) {
  // After the same seed, the same numbers as redis-server 7.0.15.
  EXPECT_EQ(eval("math.randomseed(42) return {math.random(1000), tostring(math.random())}"),
            "[:745, \"0.34270147855519\"]");
  std::string body = "return math.random(1, 2, 3)";
  EXPECT_EQ(eval(body), "-ERR user_script:1: wrong number of arguments" + at(body, 1));
  body = "return math.random(0)";
  EXPECT_EQ(eval(body),
            "-ERR user_script:1: bad argument #1 to 'random' (interval is empty)" + at(body, 1));
}

TEST_F(ScriptTest, EvalArgumentErrors) {
  EXPECT_EQ(h.call("EVAL \"return 1\" -1"), "-ERR Number of keys can't be negative");
  EXPECT_EQ(h.call("EVAL \"return 1\" 2 a"),
            "-ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(h.call("EVAL \"return 1\" x"), std::string("-") + std::string(errors::kNotInteger));
  EXPECT_EQ(h.call("EVALSHA ffff -1"), "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(h.call("EVALSHA ffffffffffffffffffffffffffffffffffffffff 0"),
            "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(h.call("EVAL \"#!python\nreturn 1\" 0"),
            "-ERR Unexpected engine in script shebang: #!python");
}

TEST_F(ScriptTest, ScriptCache) {
  EXPECT_EQ(h.call("SCRIPT LOAD \"return 1\""), "\"e0e1f9fabfc9d4800c877a703b823ac0578ff8db\"");
  EXPECT_EQ(h.call("SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db nope"), "[:1, :0]");
  EXPECT_EQ(h.call("EVALSHA E0E1F9FABFC9D4800C877A703B823AC0578FF8DB 0"), ":1");
  EXPECT_EQ(engine.cached_scripts(), 1u);
  EXPECT_EQ(h.call("SCRIPT LOAD \"x x\""),
            "-ERR Error compiling script (new function): user_script:1: '=' expected near 'x'");
  eval("return 2");
  EXPECT_EQ(engine.cached_scripts(), 2u);
  EXPECT_EQ(h.call("SCRIPT FLUSH bad"), "-ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  EXPECT_EQ(h.call("SCRIPT FLUSH ASYNC"), "+OK");
  EXPECT_EQ(engine.cached_scripts(), 0u);
  EXPECT_EQ(h.call("EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0"),
            "-NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(h.call("SCRIPT KILL"), "-NOTBUSY No scripts in execution right now.");
  EXPECT_EQ(h.call("SCRIPT DEBUG bad"), "-ERR Use SCRIPT DEBUG YES/SYNC/NO");
  EXPECT_EQ(h.call("SCRIPT DEBUG no"), "+OK");
}

TEST_F(ScriptTest, ReadOnlyScripts) {
  std::string body = "return redis.call('set', 'a', 'b')";
  EXPECT_EQ(h.call("EVAL_RO \"" + body + "\" 0"),
            "-ERR Write commands are not allowed from read-only scripts." + at(body, 1));
  body = "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')";
  EXPECT_EQ(h.call("EVAL \"" + body + "\" 0"),
            "-ERR Write commands are not allowed from read-only scripts." + at(body, 2));
  EXPECT_EQ(h.call("EVAL_RO \"#!lua\nreturn 1\" 0"),
            "-ERR Can not execute a script with write flag using *_ro command.");
  EXPECT_EQ(h.call("EVAL_RO \"#!lua flags=no-writes\nreturn redis.call('get', 'a')\" 0"),
            "(nil)");
  EXPECT_EQ(h.call("EVAL_RO \"return redis.call('exists', 'a')\" 0"), ":0");
}

TEST_F(ScriptTest, CommandsRunInTheScriptsOwnClient) {
  // SELECT inside a script does not move the caller; blocking commands that may run there
  // (BLMPOP, BZMPOP) do not block.
  EXPECT_EQ(eval("redis.call('select', 1) redis.call('set', 'k', 'one') return 1"), ":1");
  EXPECT_EQ(h.call("EXISTS k"), ":0");
  EXPECT_EQ(h.call("SELECT 1"), "+OK");
  EXPECT_EQ(h.call("GET k"), "\"one\"");
  EXPECT_EQ(h.call("SELECT 0"), "+OK");
  EXPECT_EQ(eval("return redis.call('blmpop', 0, 1, 'nolist', 'left')"), "(nil)");
  std::string body = "return redis.call('blpop', 'nolist', 0)";
  EXPECT_EQ(eval(body), "-ERR This Redis command is not allowed from script" + at(body, 1));
}

TEST_F(ScriptTest, EffectsPropagateAsOneTransaction) {
  h.propagated.lines.clear();
  eval("redis.call('set', 'a', '1') redis.call('incr', 'a') return 1");
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:MULTI", "0:set a 1", "0:incr a", "0:EXEC"}));
  h.propagated.lines.clear();
  eval("return redis.call('incr', 'a')");
  EXPECT_EQ(h.propagated.lines, (std::vector<std::string>{"0:incr a"}));
  h.propagated.lines.clear();
  eval("redis.set_repl(redis.REPL_NONE) redis.call('incr', 'a') "
       "redis.set_repl(redis.REPL_ALL) redis.call('incr', 'a') return 1");
  EXPECT_EQ(h.propagated.lines, (std::vector<std::string>{"0:incr a"}));
  EXPECT_EQ(h.call("GET a"), "\"5\"");
  h.propagated.lines.clear();
  eval("return redis.call('get', 'a')");
  EXPECT_TRUE(h.propagated.lines.empty());
  // Inside MULTI/EXEC the script's effects join the EXEC's one transaction.
  h.propagated.lines.clear();
  h.call("MULTI");
  h.call("EVAL \"redis.call('set', 'b', '1') redis.call('set', 'c', '2')\" 0");
  h.call("SET d 3");
  h.call("EXEC");
  EXPECT_EQ(h.propagated.lines, (std::vector<std::string>{"0:MULTI", "0:set b 1", "0:set c 2",
                                                          "0:SET d 3", "0:EXEC"}));
}

// The FUNCTION commands that change the libraries count one change and are propagated as
// received by the dispatcher; a failed one neither. A script counts nothing itself: only its
// commands do.
TEST_F(ScriptTest, FunctionChangesCountAndPropagateAsReceived) {
  const std::string load =
      "FUNCTION LOAD \"#!lua name=lib\nredis.register_function('f', function() return 1 end)\"";
  h.propagated.lines.clear();
  uint64_t dirty = h.dirty();
  EXPECT_EQ(h.call(load), "\"lib\"");
  EXPECT_EQ(h.dirty(), dirty + 1);
  ASSERT_EQ(h.propagated.lines.size(), 1u);
  EXPECT_TRUE(h.propagated.lines[0].starts_with("0:FUNCTION LOAD ")) << h.propagated.lines[0];
  h.propagated.lines.clear();
  dirty = h.dirty();
  EXPECT_TRUE(h.call(load).starts_with("-ERR"));  // exists already
  EXPECT_EQ(h.dirty(), dirty);
  EXPECT_TRUE(h.propagated.lines.empty());
  EXPECT_EQ(h.call("FUNCTION DELETE lib"), "+OK");
  EXPECT_EQ(h.call("FUNCTION FLUSH"), "+OK");
  EXPECT_EQ(h.dirty(), dirty + 2);
  EXPECT_EQ(h.propagated.lines,
            (std::vector<std::string>{"0:FUNCTION DELETE lib", "0:FUNCTION FLUSH"}));
  h.propagated.lines.clear();
  dirty = h.dirty();
  eval("redis.call('set', 'a', '1') return 1");
  EXPECT_EQ(h.dirty(), dirty + 1);
  EXPECT_EQ(h.propagated.lines, (std::vector<std::string>{"0:set a 1"}));
}

TEST_F(ScriptTest, BusyScriptAnswersOthersAndCanBeKilled) {
  testing::HarnessClient& other = h.new_client();
  engine.busy_reply_threshold_ms = 0;
  std::vector<std::string> seen;
  bool killed = false;
  engine.set_busy_handler([&] {
    if (killed) return;
    seen.push_back(h.call_as(other, "GET x"));
    seen.push_back(h.call_as(other, "SCRIPT KILL"));
    killed = true;
  });
  std::string body = "local i = 0 while true do i = i + 1 end";
  EXPECT_EQ(eval(body), "-ERR Script killed by user with SCRIPT KILL..." + at(body, 1));
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                      "SHUTDOWN NOSAVE.",
                      "+OK"}));
  EXPECT_FALSE(engine.running());
  EXPECT_EQ(h.call_as(other, "GET x"), "(nil)");
}

TEST_F(ScriptTest, ScriptThatWroteCannotBeKilled) {
  testing::HarnessClient& other = h.new_client();
  engine.busy_reply_threshold_ms = 0;
  std::string kill_reply;
  engine.set_busy_handler([&] {
    if (kill_reply.empty()) kill_reply = h.call_as(other, "SCRIPT KILL");
  });
  EXPECT_EQ(eval("redis.call('set', 'w', '1') for i = 1, 300000 do end return 'done'"),
            "\"done\"");
  EXPECT_EQ(kill_reply,
            "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
            "You can either wait the script termination or kill the server in a hard way using "
            "the SHUTDOWN NOSAVE command.");
}

TEST_F(ScriptTest, FunctionsLoadCallListAndDelete) {
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib1\nredis.register_function('echo', "
                   "function(keys, args) return {keys[1], args[1]} end)\""),
            "\"lib1\"");
  EXPECT_EQ(h.call("FCALL echo 1 k v"), "[\"k\", \"v\"]");
  EXPECT_EQ(h.call("FCALL ECHO 0 v"), "[]");  // names are case-insensitive; keys[1] is nil
  EXPECT_EQ(h.call("FCALL_RO echo 0"),
            "-ERR Can not execute a script with write flag using *_ro command.");
  EXPECT_EQ(h.call("FCALL nosuch 0"), "-ERR Function not found");
  EXPECT_EQ(h.call("FCALL echo x"), "-ERR Bad number of keys provided");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib1\nredis.register_function('x', "
                   "function() end)\""),
            "-ERR Library 'lib1' already exists");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib2\nredis.register_function('echo', "
                   "function() end)\""),
            "-ERR Function echo already exists");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=lib2\nredis.register_function{"
                   "function_name='ro', callback=function(keys) "
                   "return redis.call('get', keys[1]) end, flags={'no-writes'}, "
                   "description='reads'}\""),
            "\"lib2\"");
  EXPECT_EQ(h.call("SET k v"), "+OK");
  EXPECT_EQ(h.call("FCALL_RO ro 1 k"), "\"v\"");
  EXPECT_EQ(h.call("FUNCTION LIST LIBRARYNAME lib2"),
            "[[\"library_name\", \"lib2\", \"engine\", \"LUA\", \"functions\", "
            "[[\"name\", \"ro\", \"description\", \"reads\", \"flags\", [+no-writes]]]]]");
  EXPECT_EQ(engine.library_count(), 2u);
  EXPECT_EQ(engine.function_count(), 2u);
  EXPECT_EQ(h.call("FUNCTION DELETE lib1"), "+OK");
  EXPECT_EQ(h.call("FUNCTION DELETE lib1"), "-ERR Library not found");
  EXPECT_EQ(h.call("FCALL echo 0"), "-ERR Function not found");
  EXPECT_EQ(h.call("FUNCTION FLUSH"), "+OK");
  EXPECT_EQ(engine.library_count(), 0u);
}

TEST_F(ScriptTest, FunctionLoadErrors) {
  EXPECT_EQ(h.call("FUNCTION LOAD \"return 1\""), "-ERR Missing library metadata");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua\nreturn 1\""), "-ERR Library name was not given");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!js name=x\nreturn 1\""), "-ERR Engine 'js' not found");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nreturn 1\""), "-ERR No functions registered");
  // At load time only register_function, log and the constants exist.
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nredis.call('ping')\""),
            "-ERR Error registering functions: ERR user_function:2: Script attempted to access "
            "nonexistent global variable 'call'");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nlocal s = string.rep('a', 2)\""),
            "-ERR Error registering functions: ERR user_function:2: Script attempted to access "
            "nonexistent global variable 'string'");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nredis.register_function{function_name='f', "
                   "callback=function() end, flags={'bad'}}\""),
            "-ERR Error registering functions: ERR unknown flag given");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nsyntax error\""),
            "-ERR Error compiling function: user_function:2: '=' expected near 'error'");
  EXPECT_EQ(h.call("FUNCTION LOAD \"#!lua name=x\nlocal t = {} "
                   "redis.register_function('count', function() t[1] = (t[1] or 0) + 1 "
                   "return t[1] end)\""),
            "\"x\"");
  // A library keeps its local state between calls, and runs with the full sandbox.
  EXPECT_EQ(h.call("FCALL count 0"), ":1");
  EXPECT_EQ(h.call("FCALL count 0"), ":2");
}

// The dispatcher keeps the maxmemory state at the start of a script run for its first write:
// it knows which commands run scripts by this internal flag, not by their names.
TEST_F(ScriptTest, ScriptRunnersCarryTheRunsScriptsFlag) {
  std::vector<std::string> runners;
  for (const auto& [name, command] : h.state.commands().commands()) {
    if (command->has(kRunsScripts)) runners.push_back(name);
  }
  EXPECT_EQ(runners, (std::vector<std::string>{"eval", "eval_ro", "evalsha", "evalsha_ro",
                                               "exec", "fcall", "fcall_ro"}));
}

}  // namespace
}  // namespace keywarden
