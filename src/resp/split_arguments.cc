#include "resp/split_arguments.h"

namespace keywarden {
namespace {
bool is_blank(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool split_arguments(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  size_t i = 0;
  const size_t n = line.size();
  for (;;) {
    while (i < n && is_blank(line[i])) ++i;
    if (i >= n) return true;
    std::string word;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && hex_digit(line[i + 2]) >= 0 &&
            hex_digit(line[i + 3]) >= 0) {
          word += static_cast<char>(hex_digit(line[i + 2]) * 16 + hex_digit(line[i + 3]));
          i += 4;
        } else if (c == '\\' && i + 1 < n) {
          char e = line[i + 1];
          switch (e) {
            case 'n': word += '\n'; break;
            case 'r': word += '\r'; break;
            case 't': word += '\t'; break;
            case 'b': word += '\b'; break;
            case 'a': word += '\a'; break;
            default: word += e; break;
          }
          i += 2;
        } else if (c == '"') {
          // The closing quote must end the word.
          if (i + 1 < n && !is_blank(line[i + 1])) return false;
          done = true;
          ++i;
        } else {
          word += c;
          ++i;
        }
      } else if (in_single) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          word += '\'';
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < n && !is_blank(line[i + 1])) return false;
          done = true;
          ++i;
        } else {
          word += c;
          ++i;
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (is_blank(c)) {
          done = true;
        } else if (c == '"') {
          in_double = true;
          ++i;
        } else if (c == '\'') {
          in_single = true;
          ++i;
        } else {
          word += c;
          ++i;
        }
      }
    }
    out.push_back(std::move(word));
  }
}

}  // namespace keywarden
