#include "commands/dispatcher.h"

#include "commands/context.h"
#include "commands/errors.h"

namespace keywarden {

void Dispatcher::reject(Command* command, ReplyWriter& reply, std::string_view text) {
  if (command != nullptr) ++command->stats.rejected_calls;
  server_.count_error(text);
  reply.error(text);
}

int64_t Dispatcher::execute(ClientSession& session, std::span<const std::string_view> args,
                            ReplyWriter& reply, Command* command) {
  CommandTable& table = server_.commands();
  if (command == nullptr) {
    Command* base = table.find(args[0]);
    if (base != nullptr && base->is_container()) {
      reject(nullptr, reply, errors::unknown_subcommand(args[0], args[1]));
    } else {
      reject(nullptr, reply, errors::unknown_command(args[0], args.data() + 1, args.size() - 1));
    }
    return 0;
  }

  const int arity = command->spec->arity;
  const int argc = static_cast<int>(args.size());
  if ((arity > 0 && arity != argc) || argc < -arity) {
    reject(command, reply, errors::wrong_arity(command->full_name));
    return 0;
  }
  if (command->has(kProtected)) {
    DebugCommandAccess access = server_.settings().enable_debug_command;
    if (access == DebugCommandAccess::kNo ||
        (access == DebugCommandAccess::kLocal && !session.is_local)) {
      reject(command, reply, errors::kDebugDisabled);
      return 0;
    }
  }
  if (!session.authenticated && !server_.settings().requirepass.empty() &&
      !command->has(kNoAuth)) {
    reject(command, reply, errors::kNoAuth);
    return 0;
  }

  const Clock& clock = server_.clock();
  const ClockReading start = clock.read();
  const int64_t start_us = start.monotonic_us;
  CommandContext context(server_, session, reply, args, *command, start.wall_ms);
  command->spec->handler(context);
  const int64_t elapsed_us = clock.monotonic_us() - start_us;

  CommandStats& stats = command->stats;
  ++stats.calls;
  stats.usec += static_cast<uint64_t>(elapsed_us);
  if (context.failed()) ++stats.failed_calls;
  ++server_.stats().total_commands_processed;
  session.last_command = command;
  server_.propagator().flush();
  return elapsed_us;
}

}  // namespace keywarden
