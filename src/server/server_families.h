// The server layer's own command families: commands about the process rather than the data.
#pragma once

#include "commands/command_table.h"

namespace keywarden {

void register_config_commands(CommandTable& table);
void register_info_commands(CommandTable& table);
// CLIENT, installed by the client registry (client_registry.h).
void register_client_commands(CommandTable& table);
void register_admin_commands(CommandTable& table);
void register_memory_commands(CommandTable& table);
void register_debug_commands(CommandTable& table);

class CommandContext;
// The reply of a container command that got a subcommand it knows with the wrong number of
// arguments, or (DEBUG) one it does not know: "unknown subcommand or wrong number of arguments
// for 'x'. Try DEBUG HELP."
void reply_subcommand_syntax_error(CommandContext& ctx);

inline void register_server_commands(CommandTable& table) {
  register_config_commands(table);
  register_info_commands(table);
  register_admin_commands(table);
  register_memory_commands(table);
  register_debug_commands(table);
}

}  // namespace keywarden
