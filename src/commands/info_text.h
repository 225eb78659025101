// INFO's text and who writes it. Every service writes its own fields into the sections it
// owns (the AOF service its aof_* lines of "Persistence", the diagnostics service
// "Latencystats"…); INFO only asks for the sections a call wants, in Redis 7.0's order.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace keywarden {

// Builds the text: "# Title" headers, "name:value" lines, a blank line between sections.
class InfoText {
 public:
  void section(std::string_view title) {
    if (!text_.empty()) text_ += "\r\n";
    text_ += "# ";
    text_ += title;
    text_ += "\r\n";
  }
  void field(std::string_view name, std::string_view value) {
    text_ += name;
    text_ += ':';
    text_ += value;
    text_ += "\r\n";
  }
  void field(std::string_view name, const std::string& value) {
    field(name, std::string_view(value));
  }
  void field(std::string_view name, const char* value) { field(name, std::string_view(value)); }
  template <typename Integer>
    requires std::is_integral_v<Integer>
  void field(std::string_view name, Integer value) {
    field(name, std::string_view(std::to_string(value)));
  }
  // A double with two decimals ("1.07"), as Redis prints ratios and rates.
  void fixed2(std::string_view name, double value, std::string_view suffix = "") {
    char buffer[64];
    snprintf(buffer, sizeof(buffer), "%.2f", value);
    field(name, std::string(buffer) + std::string(suffix));
  }
  // A line whose name is built by the caller ("db0", "cmdstat_get").
  void line(const std::string& text) {
    text_ += text;
    text_ += "\r\n";
  }

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// INFO lines must not contain its separators: Redis turns '#', ':', CR and LF into '_'.
inline std::string safe_info_name(std::string_view name) {
  std::string safe(name);
  for (char& c : safe) {
    if (c == '#' || c == ':' || c == '\r' || c == '\n') c = '_';
  }
  return safe;
}

// The writers of each INFO section, lowercase name -> writers by `order` (lower first). A
// section with several owners (Persistence: loading, RDB, AOF) is written by each in turn.
class InfoSections {
 public:
  using Writer = std::function<void(InfoText&)>;
  void add(std::string_view section, int order, Writer writer) {
    sections_[std::string(section)].emplace(order, std::move(writer));
  }
  // Writes `section` (lowercase) with every writer registered for it; false when none.
  bool write(std::string_view section, InfoText& text) const {
    auto found = sections_.find(section);
    if (found == sections_.end()) return false;
    for (const auto& [order, writer] : found->second) writer(text);
    return true;
  }

 private:
  std::map<std::string, std::multimap<int, Writer>, std::less<>> sections_;
};

}  // namespace keywarden
