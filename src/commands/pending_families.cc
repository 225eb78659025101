// TEMPORARY: empty registrations until the family files land (deleted before commit of families).
#include "commands/families.h"
namespace keywarden {
void register_string_commands(CommandTable&) {}
void register_key_commands(CommandTable&) {}
void register_expire_commands(CommandTable&) {}
}  // namespace keywarden
