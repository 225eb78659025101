// Placeholder registrations for families still being written: weak, so that the real
// definition in a family file replaces each without editing this file. Removed once all exist.
#include "commands/families.h"
namespace keywarden {
__attribute__((weak)) void register_string_commands(CommandTable&) {}
__attribute__((weak)) void register_key_commands(CommandTable&) {}
__attribute__((weak)) void register_expire_commands(CommandTable&) {}
__attribute__((weak)) void register_introspection_commands(CommandTable&) {}
}  // namespace keywarden
