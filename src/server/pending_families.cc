// TEMPORARY: empty registrations until the family files land.
#include "server/server_families.h"
namespace keywarden {
void register_info_commands(CommandTable&) {}
void register_client_commands(CommandTable&) {}
void register_admin_commands(CommandTable&) {}
}  // namespace keywarden
