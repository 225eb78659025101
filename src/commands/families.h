// One registration call per command family of the command layer, each defined at the end of
// its family file. The server lists these, its own families and its services in one place
// (server/services.cc); tests and the fuzz harness register the data families alone.
#pragma once

#include "commands/command_table.h"

namespace keywarden {

void register_connection_commands(CommandTable& table);
void register_string_commands(CommandTable& table);
void register_bitmap_commands(CommandTable& table);
void register_key_commands(CommandTable& table);
void register_expire_commands(CommandTable& table);
void register_hash_commands(CommandTable& table);
void register_list_commands(CommandTable& table);
void register_zset_commands(CommandTable& table);
void register_set_commands(CommandTable& table);
void register_sort_commands(CommandTable& table);
void register_hyperloglog_commands(CommandTable& table);
// XADD, XREAD, consumer groups… (stream_commands.cc).
void register_stream_commands(CommandTable& table);
// GEOADD, GEOSEARCH… on sorted sets (geo_commands.cc).
void register_geo_commands(CommandTable& table);
void register_pubsub_commands(CommandTable& table);
// COMMAND and its subcommands, answered from the table itself.
void register_introspection_commands(CommandTable& table);
// MULTI, EXEC, DISCARD, WATCH, UNWATCH.
void register_transaction_commands(CommandTable& table);
// ACL and its subcommands (acl_commands.cc; the users are ServerState::acl()).
void register_acl_commands(CommandTable& table);
// LOCK.ACQUIRE, LOCK.RELEASE, LOCK.INFO: native locks on Redisson lock hashes.
void register_lock_commands(CommandTable& table);

class ConfigRegistry;
class ServerState;
// The directives of the command layer's settings (keyspace_config.cc).
void register_keyspace_config(ConfigRegistry& config, ServerState& state);

// All the families above.
inline void register_data_commands(CommandTable& table) {
  register_connection_commands(table);
  register_string_commands(table);
  register_bitmap_commands(table);
  register_key_commands(table);
  register_expire_commands(table);
  register_hash_commands(table);
  register_list_commands(table);
  register_zset_commands(table);
  register_set_commands(table);
  register_sort_commands(table);
  register_hyperloglog_commands(table);
  register_stream_commands(table);
  register_geo_commands(table);
  register_pubsub_commands(table);
  register_introspection_commands(table);
  register_transaction_commands(table);
  register_acl_commands(table);
  register_lock_commands(table);
}

}  // namespace keywarden
