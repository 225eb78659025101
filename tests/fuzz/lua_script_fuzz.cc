// Lua scripts and their results through the scripting engine (scripting/script_engine.h): the
// script text, compiled and run by EVAL, EVALSHA, or as a function library (FUNCTION LOAD and
// FCALL), with its redis.call()s going through the dispatcher and its result converted to a
// RESP2 or RESP3 reply. Runaway scripts are stopped by the fuzz server's busy handler.
//
// Input: one byte of settings (bit 0: the caller speaks RESP3; bits 1-2: EVAL, the script as
// the body of a registered function, or a whole library; bits 3-4: how many keys, bits 5-6:
// how many arguments), then the script text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/sha1.h"
#include "fuzz_input.h"
#include "fuzz_server.h"

using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::FuzzServer;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  keywarden::fuzzing::silence_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint8_t settings = input.byte();
  const std::string body(input.rest());

  static FuzzServer& server = *new FuzzServer();  // lives until exit
  server.reset();
  server.mark_scripting_used();
  keywarden::fuzzing::FuzzClient& client = *server.clients[0];
  client.session.resp = (settings & 1) != 0 ? 3 : 2;
  const int mode = (settings >> 1) & 3;
  const size_t keys = (settings >> 3) & 3;
  const size_t argc = (settings >> 5) & 3;
  static const char* const kKeys[] = {"k1", "k2", "{k}3"};
  static const char* const kArgs[] = {"1", "-2.5", "value"};

  auto run = [&](std::vector<std::string> command) {
    std::vector<std::string_view> views(command.begin(), command.end());
    server.execute(client, views);
    client.output.clear();
  };
  auto with_keys_and_args = [&](std::vector<std::string> command) {
    command.push_back(std::to_string(keys));
    for (size_t i = 0; i < keys; ++i) command.emplace_back(kKeys[i]);
    for (size_t i = 0; i < argc; ++i) command.emplace_back(kArgs[i]);
    return command;
  };

  // Some data for the script's redis.call()s to find.
  run({"SET", "k1", "10"});
  run({"RPUSH", "k2", "a", "b", "c"});
  run({"HSET", "{k}3", "f", "v", "g", "1.5"});

  if (mode == 0 || mode == 3) {
    run(with_keys_and_args({"EVAL", body}));
    // Again from the cache, by SHA, read-only this time.
    run({"SCRIPT", "LOAD", body});
    run(with_keys_and_args({"EVALSHA_RO", keywarden::sha1_hex(body)}));
  } else if (mode == 1) {
    run({"FUNCTION", "LOAD",
         "#!lua name=fuzz\nredis.register_function('f', function(KEYS, ARGV)\n" + body + "\nend)"});
    run(with_keys_and_args({"FCALL", "f"}));
    run(with_keys_and_args({"FCALL_RO", "f"}));
  } else {
    run({"FUNCTION", "LOAD", "REPLACE", "#!lua name=fuzz\n" + body});
    run({"FUNCTION", "LIST", "WITHCODE"});
    run({"FUNCTION", "DUMP"});
  }
  return 0;
}
