// The one list of what the server runs: every command family and every service, registered
// in this order (it is the order of COMMAND's table, of the config directives and of the
// services' cron work). Adding a service is one new file plus one line here.
#include "commands/families.h"
#include "server/server.h"
#include "server/server_families.h"
#include "scripting/script_engine.h"

namespace keywarden {

void Server::install_services() {
  CommandTable& commands = state_.commands();
  ServiceSetup setup{commands, config_, info_sections_};
  // Families without state of their own: the data commands, then the server's.
  register_data_commands(commands);
  register_keyspace_config(config_, state_);
  register_server_commands(commands);
  // Loading progress closes INFO persistence, after the RDB and AOF services' lines.
  info_sections_.add("persistence", 90, [this](InfoText& info) { write_loading_progress(info); });
  // Services, each with its commands, directives, INFO fields and cron work. The client
  // registry comes first: its cron (idle timeout, buffers, output limits) and its before-sleep
  // work (running resumed clients) precede the others'.
  for (Service* service : std::initializer_list<Service*>{
           clients_.get(), rdb_.get(), aof_.get(), replication_.get(), scripting_.get(),
           diagnostics_.get()}) {
    service->install(setup);
    services_.push_back(service);
  }
}

}  // namespace keywarden
