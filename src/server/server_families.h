// The server layer's own command families: commands about the process rather than the data.
#pragma once

#include "commands/command_table.h"

namespace keywarden {

void register_config_commands(CommandTable& table);
void register_info_commands(CommandTable& table);
void register_client_commands(CommandTable& table);
void register_admin_commands(CommandTable& table);
void register_memory_commands(CommandTable& table);

inline void register_server_commands(CommandTable& table) {
  register_config_commands(table);
  register_info_commands(table);
  register_client_commands(table);
  register_admin_commands(table);
  register_memory_commands(table);
}

}  // namespace keywarden
