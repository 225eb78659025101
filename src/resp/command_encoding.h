// Commands encoded as RESP multibulk requests ("*<n>\r\n$<len>\r\n<arg>\r\n…"), the form the
// AOF stores and the replication stream carries. One encoder for both, so that a replica and
// an AOF of the same writes hold the same bytes.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace keywarden {

void append_resp_command(std::string& out, std::span<const std::string> args);
void append_resp_command(std::string& out, std::span<const std::string_view> args);
void append_resp_command(std::string& out, std::initializer_list<std::string_view> args);

}  // namespace keywarden
