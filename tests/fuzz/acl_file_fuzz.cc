// libFuzzer target: arbitrary bytes as an ACL file (what `aclfile` names and ACL LOAD reads),
// then the permission checks of every user it defines.
//
// Input: the file's text, loaded with AclStore::load_text into the store of a server that has
// the whole command table (so `+get`, `+@string`, `-config|set` resolve as they do in the
// server).
//
// Checked beyond "no crash":
// - a refused file changes nothing: every user is described as before the load;
// - an accepted file round-trips: its users, written as ACL SAVE writes them, load again and
//   are described the same (what ACL SAVE then a restart would give);
// - every user answers the checks of a few commands (keys read and written, a channel, a
//   script, a subcommand) and of channels, without crashing.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/acl.h"
#include "commands/command_table.h"
#include "fuzz_input.h"
#include "fuzz_server.h"

namespace {

using keywarden::AclStore;
using keywarden::fuzzing::FuzzServer;
using keywarden::fuzzing::invariant_failed;

// Commands checked for every user: name first, as the dispatcher passes them.
const std::vector<std::vector<std::string_view>>& probes() {
  static const std::vector<std::vector<std::string_view>> all = {
      {"get", "k"},
      {"set", "k", "v"},
      {"mset", "a", "1", "b", "2"},
      {"copy", "src", "dst"},
      {"publish", "channel", "message"},
      {"subscribe", "channel", "other"},
      {"eval", "return 1", "1", "k"},
      {"config", "get", "maxmemory"},
      {"acl", "whoami"},
      {"lock.acquire", "lock", "owner", "1000"},
  };
  return all;
}

void check_every_user(FuzzServer& server) {
  AclStore& acl = server.state.acl();
  for (const auto& [name, user] : acl.users()) {
    for (const auto& args : probes()) {
      keywarden::Command* command = acl.lookup(args[0]);
      if (command == nullptr) continue;
      if (args.size() > 1 && command->is_container()) {
        std::string full(args[0]);
        full += '|';
        full += args[1];
        keywarden::Command* sub = acl.lookup(full);
        if (sub != nullptr) command = sub;
      }
      (void)acl.check(*user, *command, args);
    }
    (void)AclStore::channel_allowed(*user, "channel", false);
    (void)AclStore::channel_allowed(*user, "chan*", true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzServer server;
  AclStore& acl = server.state.acl();
  acl.acl_file = "fuzz.acl";
  if (!acl.load_text("").empty()) invariant_failed("an empty ACL file was refused");
  const std::vector<std::string> before = acl.user_lines();

  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string error = acl.load_text(text);
  if (!error.empty()) {
    if (acl.user_lines() != before) invariant_failed("a refused ACL file changed the users");
    return 0;
  }
  check_every_user(server);

  const std::vector<std::string> loaded = acl.user_lines();
  std::string saved;
  for (const std::string& line : loaded) saved += line + "\n";
  if (!acl.load_text(saved).empty()) invariant_failed("ACL SAVE's text of a loaded file was refused");
  if (acl.user_lines() != loaded) invariant_failed("ACL SAVE's text loaded to other users");
  return 0;
}
