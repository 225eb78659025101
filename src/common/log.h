// Server log lines in Redis's format ("<pid>:M 22 Nov 2026 01:30:00.123 * message"), so that
// operators' log tooling reads both. Levels follow `loglevel`.
#pragma once

#include <string>
#include <string_view>

namespace keywarden {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3 };

void set_log_level(LogLevel level);
// Empty path: standard output.
bool set_log_file(const std::string& path);
// A message of several lines is written as several log lines.
void log_message(LogLevel level, std::string_view message);
// The role letter after the pid: 'M' (the server) by default, 'C' in a fork child, as Redis.
void set_log_role(char role);

}  // namespace keywarden
