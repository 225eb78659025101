// TEMPORARY placeholder registrations for families still being written. A family file that
// defines one deletes its line here (sed -i /register_x_commands/d). Removed once all exist.
#include "server/server_families.h"
namespace keywarden {
}  // namespace keywarden
