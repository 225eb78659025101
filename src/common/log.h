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
void log_message(LogLevel level, std::string_view message);

}  // namespace keywarden
