#include "server/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "common/glob.h"
#include "common/number.h"
#include "common/version.h"
#include "resp/split_arguments.h"

namespace keywarden {
namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// How CONFIG GET and CONFIG REWRITE quote a value: bare when it needs no quoting.
std::string quote_if_needed(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '\\' ||
        !std::isprint(static_cast<unsigned char>(c))) {
      plain = false;
    }
  }
  if (plain) return value;
  std::string quoted = "\"";
  for (unsigned char c : value) {
    switch (c) {
      case '\\': quoted += "\\\\"; break;
      case '"': quoted += "\\\""; break;
      case '\n': quoted += "\\n"; break;
      case '\r': quoted += "\\r"; break;
      case '\t': quoted += "\\t"; break;
      default:
        if (std::isprint(c)) {
          quoted += static_cast<char>(c);
        } else {
          char hex[5];
          snprintf(hex, sizeof(hex), "\\x%02x", c);
          quoted += hex;
        }
    }
  }
  quoted += '"';
  return quoted;
}

std::string range_error(int64_t min, int64_t max) {
  return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) +
         " inclusive";
}

// A directive as one config file line.
std::string file_line(const ConfigDirective& directive, const std::string& value) {
  // Multi-argument values ("save 3600 1 300 100") are written as separate words.
  if ((directive.flags & kConfigMultiArg) && !value.empty()) return directive.name + " " + value;
  return directive.name + " " + quote_if_needed(value);
}

}  // namespace

bool parse_memory(std::string_view text, int64_t* out) {
  std::string lower = lowercase(text);
  int64_t multiplier = 1;
  struct Unit {
    const char* suffix;
    int64_t factor;
  };
  static constexpr Unit kUnits[] = {{"kb", 1024},       {"mb", 1024 * 1024},
                                    {"gb", 1024LL * 1024 * 1024}, {"k", 1000},
                                    {"m", 1000 * 1000}, {"g", 1000LL * 1000 * 1000},
                                    {"b", 1}};
  std::string_view digits = lower;
  for (const Unit& unit : kUnits) {
    std::string_view suffix = unit.suffix;
    if (digits.size() > suffix.size() && digits.ends_with(suffix)) {
      multiplier = unit.factor;
      digits.remove_suffix(suffix.size());
      break;
    }
  }
  int64_t number;
  if (!parse_int64(digits, &number)) return false;
  if (number != 0 && (number > INT64_MAX / multiplier || number < INT64_MIN / multiplier)) {
    return false;
  }
  *out = number * multiplier;
  return true;
}

void ConfigRegistry::add(ConfigDirective directive) { directives_.push_back(std::move(directive)); }

void ConfigRegistry::add_alias(std::string_view name, std::string alias) {
  if (ConfigDirective* directive = find(name)) directive->aliases.push_back(std::move(alias));
}

void ConfigRegistry::add_bool(std::string name, bool* target, uint32_t flags,
                              std::function<void()> on_change) {
  add({std::move(name), {}, flags, [target] { return std::string(*target ? "yes" : "no"); },
       [target, on_change](std::string_view value, bool) -> std::string {
         std::string lower = lowercase(value);
         if (lower != "yes" && lower != "no") return "argument must be 'yes' or 'no'";
         *target = lower == "yes";
         if (on_change) on_change();
         return "";
       }});
}

void ConfigRegistry::add_integer(std::string name, int64_t* target, int64_t min, int64_t max,
                                 uint32_t flags, std::function<void()> on_change) {
  add({std::move(name), {}, flags, [target] { return std::to_string(*target); },
       [=](std::string_view value, bool) -> std::string {
         int64_t number;
         if (!parse_int64(value, &number)) return "argument couldn't be parsed into an integer";
         if (number < min || number > max) return range_error(min, max);
         *target = number;
         if (on_change) on_change();
         return "";
       }});
}

void ConfigRegistry::add_int(std::string name, int* target, int min, int max, uint32_t flags,
                             std::function<void()> on_change) {
  add({std::move(name), {}, flags, [target] { return std::to_string(*target); },
       [=](std::string_view value, bool) -> std::string {
         int64_t number;
         if (!parse_int64(value, &number)) return "argument couldn't be parsed into an integer";
         if (number < min || number > max) return range_error(min, max);
         *target = static_cast<int>(number);
         if (on_change) on_change();
         return "";
       }});
}

void ConfigRegistry::add_memory(std::string name, int64_t* target, int64_t min, int64_t max,
                                uint32_t flags, std::function<void()> on_change) {
  add({std::move(name), {}, flags, [target] { return std::to_string(*target); },
       [=](std::string_view value, bool) -> std::string {
         int64_t number;
         if (!parse_memory(value, &number)) return "argument must be a memory value";
         if (number < min || number > max) return range_error(min, max);
         *target = number;
         if (on_change) on_change();
         return "";
       }});
}

void ConfigRegistry::add_enum(std::string name, int* target,
                              std::vector<std::pair<std::string, int>> choices, uint32_t flags,
                              std::function<void()> on_change) {
  auto get = [target, choices] {
    for (const auto& [text, value] : choices) {
      if (value == *target) return text;
    }
    return std::string();
  };
  auto set = [target, choices, on_change](std::string_view value, bool) -> std::string {
    std::string lower = lowercase(value);
    for (const auto& [text, number] : choices) {
      if (text == lower) {
        *target = number;
        if (on_change) on_change();
        return "";
      }
    }
    std::string message = "argument(s) must be one of the following: ";
    for (size_t i = 0; i < choices.size(); ++i) {
      if (i > 0) message += ", ";
      message += choices[i].first;
    }
    return message;
  };
  add({std::move(name), {}, flags, get, set});
}

void ConfigRegistry::add_string(std::string name, std::string* target, uint32_t flags,
                                std::function<void()> on_change) {
  add({std::move(name), {}, flags, [target] { return *target; },
       [target, on_change](std::string_view value, bool) -> std::string {
         target->assign(value);
         if (on_change) on_change();
         return "";
       }});
}

void ConfigRegistry::seal() {
  std::sort(directives_.begin(), directives_.end(),
            [](const ConfigDirective& a, const ConfigDirective& b) { return a.name < b.name; });
  for (ConfigDirective& directive : directives_) directive.default_value = directive.get();
}

ConfigDirective* ConfigRegistry::find(std::string_view name) {
  std::string lower = lowercase(name);
  for (ConfigDirective& directive : directives_) {
    if (directive.name == lower) return &directive;
    for (const std::string& alias : directive.aliases) {
      if (alias == lower) return &directive;
    }
  }
  return nullptr;
}

std::string ConfigRegistry::arguments_to_text(std::span<const std::string> arguments) {
  // Each `--name` starts a line; the values after it join that line, quoted, so that the
  // result reads like a config file (redis-server builds the same text).
  std::string text;
  for (const std::string& argument : arguments) {
    if (argument.starts_with("--") && argument.size() > 2) {
      if (!text.empty()) text += '\n';
      text += argument.substr(2);
    } else {
      text += ' ';
      text += quote_if_needed(argument);
    }
  }
  text += '\n';
  return text;
}

std::string ConfigRegistry::load(std::string_view file_text,
                                 std::span<const std::string> arguments) {
  std::string text(file_text);
  text += '\n';
  text += arguments_to_text(arguments);

  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  auto fatal = [&](const std::string& reason) {
    return "\n*** FATAL CONFIG FILE ERROR (keywarden " + std::string(kKeywardenVersion) +
           ") ***\nReading the configuration file, at line " + std::to_string(line_number) +
           "\n>>> '" + line + "'\n" + reason;
  };
  while (std::getline(lines, line)) {
    ++line_number;
    std::string_view trimmed = line;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) {
      trimmed.remove_prefix(1);
    }
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) {
      trimmed.remove_suffix(1);
    }
    if (trimmed.empty() || trimmed.front() == '#') continue;
    std::vector<std::string> words;
    if (!split_arguments(trimmed, words)) return fatal("Unbalanced quotes in configuration line");
    if (words.empty()) continue;
    ConfigDirective* directive = find(words[0]);
    if (directive == nullptr) return fatal("Bad directive or wrong number of arguments");
    std::string value;
    if (words.size() == 2) {
      value = words[1];
    } else if (words.size() > 2 && (directive->flags & kConfigMultiArg)) {
      for (size_t i = 1; i < words.size(); ++i) {
        if (i > 1) value += ' ';
        value += words[i];
      }
    } else {
      return fatal("wrong number of arguments");
    }
    std::string problem = directive->set(value, true);
    if (!problem.empty()) return fatal(problem);
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> ConfigRegistry::get(
    std::span<const std::string_view> patterns) {
  std::vector<std::pair<std::string, std::string>> result;
  std::set<std::string> seen;
  for (const ConfigDirective& directive : directives_) {
    for (std::string_view pattern : patterns) {
      bool matched = glob_match(pattern, directive.name, true);
      std::string shown = directive.name;
      if (!matched) {
        // An alias matched exactly is answered under the alias, as Redis does.
        for (const std::string& alias : directive.aliases) {
          if (glob_is_literal(pattern) && lowercase(pattern) == alias) {
            matched = true;
            shown = alias;
          }
        }
      }
      if (matched && seen.insert(shown).second) {
        result.emplace_back(shown, directive.get());
      }
    }
  }
  return result;
}

std::string ConfigRegistry::set(std::span<const std::string_view> pairs) {
  std::vector<ConfigDirective*> targets;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    ConfigDirective* directive = find(pairs[i]);
    if (directive == nullptr) {
      return "ERR Unknown option or number of arguments for CONFIG SET - '" +
             std::string(pairs[i]) + "'";
    }
    auto failed = [&](const std::string& reason) {
      return "ERR CONFIG SET failed (possibly related to argument '" + std::string(pairs[i]) +
             "') - " + reason;
    };
    if (directive->flags & kConfigImmutable) return failed("can't set immutable config");
    if (std::find(targets.begin(), targets.end(), directive) != targets.end()) {
      return failed("duplicate parameter");
    }
    targets.push_back(directive);
  }
  std::vector<std::string> previous;
  for (ConfigDirective* directive : targets) previous.push_back(directive->get());
  for (size_t i = 0; i < targets.size(); ++i) {
    std::string problem = targets[i]->set(pairs[2 * i + 1], false);
    if (!problem.empty()) {
      // All or nothing: restore what was applied before the failure.
      for (size_t j = 0; j < i; ++j) targets[j]->set(previous[j], false);
      return "ERR CONFIG SET failed (possibly related to argument '" +
             std::string(pairs[2 * i]) + "') - " + problem;
    }
  }
  return "";
}

std::string ConfigRegistry::rewrite(const std::string& path) {
  if (path.empty()) return "ERR The server is running without a config file";
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);

  std::set<const ConfigDirective*> written;
  std::vector<std::string> output;
  for (const std::string& original : lines) {
    std::vector<std::string> words;
    std::string_view view = original;
    ConfigDirective* directive = nullptr;
    if (!view.empty() && view.front() != '#' && split_arguments(view, words) && !words.empty()) {
      directive = find(words[0]);
    }
    if (directive == nullptr) {
      output.push_back(original);
      continue;
    }
    if (written.count(directive)) continue;  // later duplicates collapse into the first line
    written.insert(directive);
    std::string value = directive->get();
    if (value == directive->default_value) continue;
    output.push_back(file_line(*directive, value));
  }
  bool header = false;
  for (const ConfigDirective& directive : directives_) {
    if (written.count(&directive)) continue;
    std::string value = directive.get();
    if (value == directive.default_value) continue;
    if (!header) {
      output.push_back("# Generated by CONFIG REWRITE");
      header = true;
    }
    output.push_back(file_line(directive, value));
  }
  std::string temporary = path + ".rewrite.tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) return "ERR Rewriting config file: " + std::string(strerror(errno));
    for (const std::string& text : output) out << text << '\n';
    out.flush();
    if (!out) return "ERR Rewriting config file: " + std::string(strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return "ERR Rewriting config file: " + std::string(strerror(errno));
  }
  return "";
}

}  // namespace keywarden
