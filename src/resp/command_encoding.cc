#include "resp/command_encoding.h"

#include <cstdio>

namespace keywarden {
namespace {

void append_header(std::string& out, char kind, size_t count) {
  char header[32];
  const int length = std::snprintf(header, sizeof(header), "%c%zu\r\n", kind, count);
  out.append(header, static_cast<size_t>(length));
}

template <typename Args>
void append_args(std::string& out, const Args& args) {
  append_header(out, '*', args.size());
  for (const auto& arg : args) {
    append_header(out, '$', arg.size());
    out.append(arg.data(), arg.size());
    out.append("\r\n", 2);
  }
}

}  // namespace

void append_resp_command(std::string& out, std::span<const std::string> args) {
  append_args(out, args);
}

void append_resp_command(std::string& out, std::span<const std::string_view> args) {
  append_args(out, args);
}

void append_resp_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_args(out, args);
}

}  // namespace keywarden
