// The AOF manifest's text format and the file naming rules of Redis 7's multi-part AOF.
#include "persistence/aof_manifest.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "common/ascii.h"
#include "resp/split_arguments.h"

namespace keywarden {
namespace {

// Redis quotes a name only when it holds characters its argument splitter would misread.
bool needs_quoting(std::string_view name) {
  for (unsigned char c : name) {
    if (c <= ' ' || c == '"' || c == '\'' || c == '\\' || c >= 0x7f) return true;
  }
  return name.empty();
}

std::string quoted(std::string_view name) {
  std::string out = "\"";
  for (unsigned char c : name) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < ' ' || c >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

void append_line(std::string& out, const AofFileInfo& info) {
  out += "file ";
  out += needs_quoting(info.name) ? quoted(info.name) : info.name;
  out += " seq " + std::to_string(info.seq) + " type ";
  out += static_cast<char>(info.type);
  out += '\n';
}

}  // namespace

std::string AofManifest::to_text() const {
  std::string out;
  if (has_base) append_line(out, base);
  for (const AofFileInfo& info : history) append_line(out, info);
  for (const AofFileInfo& info : incremental) append_line(out, info);
  return out;
}

std::string AofManifest::parse(std::string_view text, AofManifest* out, std::string* bad_line) {
  constexpr size_t kMaxLine = 1024;
  *out = AofManifest{};
  int64_t max_incremental_seq = 0;
  size_t lines = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    const bool complete = end != std::string_view::npos;
    std::string_view raw = text.substr(at, complete ? end - at : std::string_view::npos);
    at = complete ? end + 1 : text.size();
    ++lines;
    if (!raw.empty() && raw[0] == '#') continue;
    if (!complete || raw.size() >= kMaxLine) {
      *bad_line = std::string(raw);
      return "The AOF manifest file contains too long line";
    }
    size_t first = raw.find_first_not_of(" \t\r");
    size_t last = raw.find_last_not_of(" \t\r");
    std::string_view line =
        first == std::string_view::npos ? std::string_view{} : raw.substr(first, last - first + 1);
    *bad_line = std::string(line);
    if (line.empty()) return "Invalid AOF manifest file format";
    std::vector<std::string> words;
    // Fewer than six words is refused; more is allowed for forward compatibility.
    if (!split_arguments(line, words) || words.size() < 6 || words.size() % 2 != 0) {
      return "Invalid AOF manifest file format";
    }
    AofFileInfo info;
    char type = 0;
    for (size_t i = 0; i < words.size(); i += 2) {
      if (equals_ignore_case(words[i], "file")) {
        info.name = words[i + 1];
        if (info.name.find('/') != std::string::npos) {
          return "File can't be a path, just a filename";
        }
      } else if (equals_ignore_case(words[i], "seq")) {
        info.seq = std::atoll(words[i + 1].c_str());
      } else if (equals_ignore_case(words[i], "type")) {
        type = words[i + 1].empty() ? 0 : words[i + 1][0];
      }
    }
    if (info.name.empty() || info.seq == 0 || type == 0) {
      return "Invalid AOF manifest file format";
    }
    if (type == 'b') {
      if (out->has_base) return "Found duplicate base file information";
      info.type = AofFileType::kBase;
      out->has_base = true;
      out->base = info;
      out->base_seq = info.seq;
    } else if (type == 'h') {
      info.type = AofFileType::kHistory;
      out->history.push_back(info);
    } else if (type == 'i') {
      if (info.seq <= max_incremental_seq) return "Found a non-monotonic sequence number";
      info.type = AofFileType::kIncremental;
      out->incremental.push_back(info);
      out->incremental_seq = max_incremental_seq = info.seq;
    } else {
      return "Unknown AOF file type";
    }
  }
  bad_line->clear();
  if (lines == 0) return "Found an empty AOF manifest";
  return "";
}

const std::string& AofManifest::start_new_base(std::string_view filename, bool rdb_format) {
  if (has_base) {
    base.type = AofFileType::kHistory;
    history.insert(history.begin(), base);
  }
  ++base_seq;
  base = AofFileInfo{std::string(filename) + "." + std::to_string(base_seq) + ".base" +
                         (rdb_format ? ".rdb" : ".aof"),
                     base_seq, AofFileType::kBase};
  has_base = true;
  return base.name;
}

const std::string& AofManifest::add_incremental(std::string_view filename) {
  ++incremental_seq;
  incremental.push_back(
      AofFileInfo{std::string(filename) + "." + std::to_string(incremental_seq) + ".incr.aof",
                  incremental_seq, AofFileType::kIncremental});
  return incremental.back().name;
}

void AofManifest::retire_incremental(size_t keep) {
  while (incremental.size() > keep) {
    AofFileInfo info = incremental.front();
    incremental.erase(incremental.begin());
    info.type = AofFileType::kHistory;
    history.push_back(info);
  }
}

std::string manifest_file_name(std::string_view filename) {
  return std::string(filename) + ".manifest";
}

std::string temp_manifest_file_name(std::string_view filename) {
  return "temp-" + std::string(filename) + ".manifest";
}

}  // namespace keywarden
