// Placeholder registrations for server families still being written: weak, so that the real
// definition in a family file replaces each without editing this file. Removed once all exist.
#include "server/server_families.h"
namespace keywarden {
__attribute__((weak)) void register_info_commands(CommandTable&) {}
__attribute__((weak)) void register_client_commands(CommandTable&) {}
__attribute__((weak)) void register_admin_commands(CommandTable&) {}
}  // namespace keywarden
