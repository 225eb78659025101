// Every command's argument parsing, through the real dispatcher: sequences of commands drawn
// from the command table (subcommands included), sent by three clients of a fuzz server
// (fuzz_server.h: data families, DUMP/RESTORE, scripting; manual clock), with arguments built
// from the input: a few shared key names, small and edge-case numbers, option keywords, member
// names, Lua snippets, glob patterns, command names and raw bytes (short or up to 255 bytes).
// Blocking commands block (another client's write may serve them), time advances, MULTI queues,
// SUBSCRIBE changes what a RESP2 client may send, HELLO 3 switches protocol.
//
// Not reached: SAVE and BGSAVE (neutered by the fuzz server: files, fork), PFSELFTEST (ten
// million additions: a timeout), and the
// server-layer families (CONFIG, INFO, CLIENT, DEBUG, SHUTDOWN, MONITOR, MEMORY, SLOWLOG,
// LATENCY…), which need a whole Server.
//
// Input, one command after another: a byte choosing the client (or, from 0xF0, advancing the
// clock), two bytes choosing the command, a byte for the argument count, then per argument a
// byte choosing its kind and what the kind needs. At most kMaxCommands per input. Invariant
// checked beyond "no crash": every reply the server writes is well-formed RESP.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "fuzz_server.h"
#include "resp/reply_parser.h"

namespace {

using keywarden::fuzzing::FuzzClient;
using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::FuzzServer;
using keywarden::fuzzing::invariant_failed;

constexpr int kMaxCommands = 48;
constexpr size_t kClients = 3;

// Commands the target never draws (they are neutered anyway).
constexpr std::string_view kExcluded[] = {"save", "bgsave", "pfselftest"};

constexpr std::string_view kKeys[] = {"k", "k2", "{k}3", "", "key:1"};
constexpr std::string_view kMembers[] = {"a", "b", "c", "field", "1", "2.5", "-1", "", "m"};
constexpr std::string_view kNumbers[] = {"0",
                                         "-1",
                                         "1",
                                         "1.5",
                                         "inf",
                                         "-inf",
                                         "+inf",
                                         "nan",
                                         "(1",
                                         "[a",
                                         "(a",
                                         "-",
                                         "+",
                                         "1e308",
                                         "-0",
                                         "3.0",
                                         " 1",
                                         "0x10",
                                         "1e-320",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "9223372036854775808",
                                         "18446744073709551615",
                                         "4294967296",
                                         "2147483647",
                                         "-2147483648",
                                         "536870911",
                                         "536870912",
                                         "100000"};
constexpr std::string_view kKeywords[] = {"EX",
                                          "PX",
                                          "EXAT",
                                          "PXAT",
                                          "NX",
                                          "XX",
                                          "GT",
                                          "LT",
                                          "CH",
                                          "INCR",
                                          "KEEPTTL",
                                          "GET",
                                          "PERSIST",
                                          "WITHSCORES",
                                          "WITHSCORE",
                                          "LIMIT",
                                          "BYSCORE",
                                          "BYLEX",
                                          "REV",
                                          "COUNT",
                                          "MATCH",
                                          "TYPE",
                                          "LEFT",
                                          "RIGHT",
                                          "BEFORE",
                                          "AFTER",
                                          "MIN",
                                          "MAX",
                                          "SUM",
                                          "WEIGHTS",
                                          "AGGREGATE",
                                          "ALPHA",
                                          "ASC",
                                          "DESC",
                                          "BY",
                                          "STORE",
                                          "DB",
                                          "REPLACE",
                                          "ABSTTL",
                                          "IDLETIME",
                                          "FREQ",
                                          "ASYNC",
                                          "SYNC",
                                          "NOVALUES",
                                          "WITHVALUES",
                                          "RANK",
                                          "MAXLEN",
                                          "IDX",
                                          "LEN",
                                          "MINMATCHLEN",
                                          "WITHMATCHLEN",
                                          "FLUSH",
                                          "APPEND",
                                          "WITHCODE",
                                          "LIBRARYNAME",
                                          "NOSCRIPT",
                                          "USAGE",
                                          "SAMPLES",
                                          "FILTERBY",
                                          "MODULE",
                                          "ACLCAT",
                                          "PATTERN",
                                          "NUMSUB",
                                          "NUMPAT",
                                          "CHANNELS",
                                          "SHARDCHANNELS",
                                          "SHARDNUMSUB",
                                          "ENCODING",
                                          "REFCOUNT",
                                          "HELP",
                                          "AUTH",
                                          "SETNAME",
                                          "FIELDS",
                                          "FNX",
                                          "FXX",
                                          "KEEPTTL",
                                          "IFEQ",
                                          "IFNE",
                                          "IFDEQ",
                                          "IFDNE",
                                          "string",
                                          "list",
                                          "set",
                                          "zset",
                                          "hash",
                                          "default",
                                          "3",
                                          "2"};
constexpr std::string_view kScripts[] = {
    "return redis.call('get', KEYS[1])",
    "return {1, 'two', {3, {err='four'}}, {ok='five'}}",
    "redis.call('set', KEYS[1], ARGV[1]) return redis.call('incr', KEYS[1])",
    "return redis.pcall('lpush', KEYS[1], 'x')",
    "redis.setresp(3) return redis.call('hgetall', KEYS[1])",
    "return {double=1.5}",
    "#!lua flags=no-writes\nreturn redis.call('ttl', KEYS[1])",
    "#!lua name=lib\nredis.register_function('f', function(k, a) "
    "return redis.call('rpush', k[1], a[1]) end)",
    "#!lua name=lib2\nredis.register_function{function_name='g', callback=function(k, a) "
    "return #k end, flags={'no-writes'}}",
    "return redis.sha1hex(ARGV[1])",
    "while true do end",
    "return cjson.encode({1, 2, {a=ARGV[1]}})",
    "return cmsgpack.unpack(ARGV[1])",
    "return struct.unpack('>I2', ARGV[1])",
    "redis.call('blpop', KEYS[1], 0)",
};
constexpr std::string_view kPatterns[] = {"*", "k*", "[a-z]*", "\\", "?", "[^", "*{k}*", "a[b"};

struct CommandName {
  std::string name;
  std::string subcommand;  // empty for a plain command
};

std::vector<CommandName> draw_table(FuzzServer& server) {
  std::vector<CommandName> names;
  for (const auto& [name, command] : server.state.commands().commands()) {
    if (std::find(std::begin(kExcluded), std::end(kExcluded), name) != std::end(kExcluded)) {
      continue;
    }
    names.push_back({name, ""});  // a container alone: its arity error and unknown subcommands
    for (const auto& [sub, _] : command->subcommands) names.push_back({name, sub});
  }
  return names;
}

template <size_t N>
std::string_view pick(FuzzInput& input, const std::string_view (&list)[N]) {
  return list[input.below(N)];
}

std::string argument(FuzzInput& input, const std::vector<CommandName>& table) {
  switch (input.below(10)) {
    case 0:
      return std::string(pick(input, kKeys));
    case 1:
      return std::to_string(static_cast<int>(input.below(24)) - 4);
    case 2:
      return std::string(pick(input, kKeywords));
    case 3:
      return std::string(input.bytes(24));
    case 4:
      return std::string(pick(input, kNumbers));
    case 5:
      return std::string(pick(input, kMembers));
    case 6:
      return std::string(pick(input, kScripts));
    case 7:
      return std::string(pick(input, kPatterns));
    case 8: {
      const CommandName& drawn = table[input.below(table.size())];
      return drawn.subcommand.empty() ? drawn.name : drawn.subcommand;
    }
    default:
      return std::string(input.bytes(255));
  }
}

// Every reply written is whole, well-formed RESP (nesting aside: a Lua result may nest deeper
// than the client parser accepts).
void check_replies(std::string& output) {
  std::string_view rest = output;
  keywarden::ReplyParser parser;
  while (!rest.empty()) {
    keywarden::ReplyParseStatus status = parser.parse(rest);
    if (status == keywarden::ReplyParseStatus::kError) {
      if (parser.error() == "reply nested too deep") break;
      invariant_failed("the server wrote malformed RESP");
    }
    if (status == keywarden::ReplyParseStatus::kNeedMore) {
      invariant_failed("the server wrote an incomplete reply");
    }
    rest.remove_prefix(parser.consumed());
  }
  output.clear();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  keywarden::fuzzing::silence_log();
  // make_command_seeds.py encodes its seeds with the command indexes printed here.
  if (std::getenv("KEYWARDEN_FUZZ_LIST_COMMANDS") != nullptr) {
    FuzzServer server;
    for (const CommandName& name : draw_table(server)) {
      std::printf("%s %s\n", name.name.c_str(), name.subcommand.c_str());
    }
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  static FuzzServer& server = *new FuzzServer(kClients);  // lives until exit
  static const std::vector<CommandName> table = draw_table(server);
  server.reset();

  std::vector<std::string> args;
  std::vector<std::string_view> views;
  for (int count = 0; count < kMaxCommands && !input.empty(); ++count) {
    const uint8_t op = input.byte();
    if (op >= 0xF0) {
      server.clock.advance_ms((op & 0x0F) * 250 + 1);
      server.time_out_blocked();
      continue;
    }
    FuzzClient& client = *server.clients[op % kClients];
    server.unblock(client);  // a blocked client sends nothing: its wait ends first

    const size_t index = (input.byte() << 8 | input.byte()) % table.size();
    args.clear();
    args.push_back(table[index].name);
    if (!table[index].subcommand.empty()) args.push_back(table[index].subcommand);
    const size_t extra = input.below(8);
    for (size_t i = 0; i < extra; ++i) args.push_back(argument(input, table));
    views.assign(args.begin(), args.end());
    server.execute(client, views);
    for (auto& each : server.clients) check_replies(each->output);
  }
  return 0;
}
