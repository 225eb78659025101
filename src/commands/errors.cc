#include "commands/errors.h"

#include <algorithm>
#include <cctype>

namespace keywarden::errors {
namespace {
// An error reply is one line: Redis turns CR and LF taken from arguments into spaces.
std::string one_line(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  return text;
}
}  // namespace

std::string unknown_command(std::string_view name, const std::string_view* args, size_t count) {
  // Redis quotes arguments until their text reaches 128 bytes, each cut to what is left.
  std::string quoted;
  for (size_t i = 0; i < count && quoted.size() < 128; ++i) {
    size_t room = 128 - quoted.size();
    quoted += '\'';
    quoted.append(args[i].substr(0, room));
    quoted += "' ";
  }
  std::string text = "ERR unknown command '";
  text.append(name.substr(0, 128));
  text += "', with args beginning with: ";
  text += quoted;
  return one_line(std::move(text));
}

namespace {
// `lead`, the subcommand (cut to 128 bytes), then "'. Try <CONTAINER> HELP.".
std::string try_help(std::string_view lead, std::string_view container, std::string_view subcommand) {
  subcommand = subcommand.substr(0, 128);
  std::string text;
  text.reserve(lead.size() + subcommand.size() + container.size() + 13);
  text.append(lead).append(subcommand).append("'. Try ");
  for (char c : container) text += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  text.append(" HELP.");
  return one_line(std::move(text));
}
}  // namespace

std::string unknown_subcommand(std::string_view container, std::string_view subcommand) {
  return try_help("ERR unknown subcommand '", container, subcommand);
}

std::string subcommand_syntax(std::string_view container, std::string_view subcommand) {
  return try_help("ERR unknown subcommand or wrong number of arguments for '", container,
                  subcommand);
}

std::string no_permission_to_run(std::string_view full_name) {
  std::string text = "NOPERM this user has no permissions to run the '";
  text += full_name;
  text += "' command";
  return text;
}

std::string wrong_arity(std::string_view full_name) {
  std::string text = "ERR wrong number of arguments for '";
  text += full_name;
  text += "' command";
  return text;
}

std::string unknown_argument(std::string_view argument) {
  std::string text = "ERR unknown argument: ";
  text.append(argument);
  return text;
}

std::string invalid_expire_time(std::string_view command) {
  std::string text = "ERR invalid expire time in '";
  text += command;
  text += "' command";
  return text;
}

std::string fenced_refusal(int64_t token, int64_t highest) {
  std::string text = "FENCED token ";
  text += std::to_string(token);
  text += " is below ";
  text += std::to_string(highest);
  text += ", the highest token already used for this resource";
  return text;
}

}  // namespace keywarden::errors
