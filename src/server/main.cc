// keywarden-server [config-file] [--directive value ...], as redis-server is invoked.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/version.h"
#include "server/server.h"

namespace {

keywarden::Server* g_server = nullptr;

void on_termination_signal(int) {
  // Only stops the loop: the loop thread notices at its next wake-up (at most one cron tick).
  if (g_server != nullptr) g_server->request_shutdown();
}

void print_usage() {
  std::printf(
      "Usage: ./keywarden-server [/path/to/keywarden.conf] [options] [-]\n"
      "       ./keywarden-server - (read config from stdin)\n"
      "       ./keywarden-server -v or --version\n"
      "       ./keywarden-server -h or --help\n\n"
      "Examples:\n"
      "       ./keywarden-server (run the server with default conf)\n"
      "       ./keywarden-server /etc/keywarden/6379.conf\n"
      "       ./keywarden-server --port 7777\n"
      "       ./keywarden-server /etc/mykeywarden.conf --loglevel verbose\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i == 1 && (arg == "-v" || arg == "--version")) {
      std::printf("keywarden-server v=%s (Redis %s compatible)\n",
                  std::string(keywarden::kKeywardenVersion).c_str(),
                  std::string(keywarden::kRedisCompatibleVersion).c_str());
      return 0;
    }
    if (i == 1 && (arg == "-h" || arg == "--help")) {
      print_usage();
      return 0;
    }
    if (i == 1 && !arg.starts_with("--")) {
      config_path = arg;
      continue;
    }
    arguments.push_back(arg);
  }

  keywarden::Server server;
  std::string problem = server.configure(config_path, arguments);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    return 1;
  }
  problem = server.listen();
  if (!problem.empty()) {
    keywarden::log_message(keywarden::LogLevel::kWarning, problem);
    return 1;
  }
  problem = server.load_data();
  if (!problem.empty()) {
    keywarden::log_message(keywarden::LogLevel::kWarning, problem);
    std::fprintf(stderr, "%s\n", problem.c_str());
    return 1;
  }
  problem = server.load_append_only_file();
  if (!problem.empty()) {
    keywarden::log_message(keywarden::LogLevel::kWarning, problem);
    return 1;
  }
  server.replication().start();
  g_server = &server;
  struct sigaction action {};
  action.sa_handler = on_termination_signal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
  keywarden::log_message(keywarden::LogLevel::kNotice,
                         "keywarden " + std::string(keywarden::kKeywardenVersion) +
                             " starting, port " + std::to_string(server.actual_port()) +
                             ", pid " + std::to_string(getpid()));
  server.run();
  keywarden::log_message(keywarden::LogLevel::kNotice, "keywarden is now ready to exit, bye bye...");
  return 0;
}
