#include "common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace keywarden {
namespace {
LogLevel g_level = LogLevel::kNotice;
FILE* g_file = nullptr;
char g_role = 'M';
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }

void set_log_role(char role) { g_role = role; }

bool set_log_file(const std::string& path) {
  if (path.empty()) {
    g_file = nullptr;
    return true;
  }
  FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return false;
  g_file = file;
  return true;
}

void log_message(LogLevel level, std::string_view message) {
  if (level < g_level) return;
  static constexpr char kMarks[] = {'.', '-', '*', '#'};
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[64];
  size_t length = strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S.", &local);
  snprintf(stamp + length, sizeof(stamp) - length, "%03d", static_cast<int>(now.tv_usec / 1000));
  FILE* out = g_file != nullptr ? g_file : stdout;
  // One prefixed line per line of the message.
  for (;;) {
    const size_t end = message.find('\n');
    const std::string_view line = message.substr(0, end);
    std::fprintf(out, "%d:%c %s %c %.*s\n", static_cast<int>(getpid()), g_role, stamp,
                 kMarks[static_cast<int>(level)], static_cast<int>(line.size()), line.data());
    if (end == std::string_view::npos) break;
    message.remove_prefix(end + 1);
  }
  std::fflush(out);
}

}  // namespace keywarden
