// FUNCTION DUMP / FUNCTION LOAD through the dispatcher for persistence (function_libraries.h).
#include "persistence/function_libraries.h"

#include <cstdint>
#include <cstdlib>

#include "commands/client_session.h"
#include "commands/dispatcher.h"
#include "persistence/rdb_codec.h"
#include "persistence/rdb_format.h"
#include "resp/reply_writer.h"

namespace keywarden {
namespace {

// Runs `args` as an internal client and returns the raw RESP2 reply. The command's counters
// and the processed-commands total are put back: a save or a load is not a client's call.
// `nested`: inside another command (SAVE, BGSAVE in EXEC) a read must not flush that command's
// pending effects, so it runs as a nested call; a load runs as a command of its own.
std::string run_internal(Dispatcher& dispatcher, std::initializer_list<std::string_view> list,
                         bool nested) {
  std::vector<std::string_view> args(list);
  ServerState& server = dispatcher.server();
  // By the original name: rename-command must not break saving or loading the libraries.
  Command* command = server.commands().find_original_for_args(args);
  ClientSession session;
  session.id = UINT64_MAX;
  session.authenticated = true;
  session.must_obey = true;  // a load runs while the server is loading
  session.is_local = true;
  std::string reply;
  ReplyWriter writer(&reply);
  if (command == nullptr) return "-ERR unknown command\r\n";
  const CommandStats saved_stats = command->stats;
  const ServerStats saved_server_stats = server.stats();
  if (nested) {
    dispatcher.execute_nested(session, args, writer, *command, server.clock().wall_ms());
  } else {
    dispatcher.execute(session, args, writer, command);
  }
  command->stats = saved_stats;
  server.stats().total_commands_processed = saved_server_stats.total_commands_processed;
  server.stats().total_error_replies = saved_server_stats.total_error_replies;
  server.stats().error_counts = saved_server_stats.error_counts;
  return reply;
}

// "-text\r\n" -> "text".
std::string error_text(std::string_view reply) {
  if (reply.starts_with('-')) reply.remove_prefix(1);
  while (reply.ends_with('\n') || reply.ends_with('\r')) reply.remove_suffix(1);
  return std::string(reply);
}

}  // namespace

bool dump_function_libraries(Dispatcher& dispatcher, std::string* records, std::string* error) {
  records->clear();
  if (dispatcher.server().scripting() == nullptr) return true;
  const std::string reply = run_internal(dispatcher, {"FUNCTION", "DUMP"}, /*nested=*/true);
  // "$<length>\r\n<payload>\r\n"
  const size_t header_end = reply.find("\r\n");
  if (!reply.starts_with('$') || header_end == std::string::npos) {
    *error = "FUNCTION DUMP failed: " + error_text(reply);
    return false;
  }
  const long long length = std::strtoll(reply.c_str() + 1, nullptr, 10);
  constexpr size_t kFooter = 10;  // RDB version and CRC64
  if (length < static_cast<long long>(kFooter) ||
      header_end + 2 + static_cast<size_t>(length) + 2 != reply.size()) {
    *error = "FUNCTION DUMP returned a malformed payload";
    return false;
  }
  records->assign(reply, header_end + 2, static_cast<size_t>(length) - kFooter);
  return true;
}

bool split_function_records(std::string_view records, std::vector<std::string>* codes) {
  RdbReader in(records);
  while (in.position() < records.size()) {
    uint8_t opcode;
    std::string code;
    if (!in.byte(&opcode) || opcode != rdb::kOpFunction2 || !in.string(&code)) return false;
    codes->push_back(std::move(code));
  }
  return true;
}

std::string load_function_libraries(Dispatcher& dispatcher, const std::vector<std::string>& codes) {
  if (codes.empty()) return "";
  if (dispatcher.server().scripting() == nullptr) {
    return "the RDB file contains function libraries but no scripting engine is attached";
  }
  for (const std::string& code : codes) {
    const std::string reply =
        run_internal(dispatcher, {"FUNCTION", "LOAD", "REPLACE", code}, /*nested=*/false);
    if (reply.starts_with('-')) {
      return "Failed loading library from the RDB file: " + error_text(reply);
    }
  }
  return "";
}

}  // namespace keywarden
