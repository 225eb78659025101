#include "common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace keywarden {
namespace {
LogLevel g_level = LogLevel::kNotice;
FILE* g_file = nullptr;
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }

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
  std::fprintf(out, "%d:M %s %c %.*s\n", static_cast<int>(getpid()), stamp,
               kMarks[static_cast<int>(level)], static_cast<int>(message.size()), message.data());
  std::fflush(out);
}

}  // namespace keywarden
