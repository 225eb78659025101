#include "resp/split_arguments.h"

#include "resp/request_parser.h"

namespace keywarden {

bool split_arguments(std::string_view line, std::vector<std::string>& out) {
  // The same splitting as inline requests, copied out of the parser's arena.
  std::string arena;
  std::vector<ArgSpan> spans;
  out.clear();
  if (!split_inline_arguments(line, arena, spans)) return false;
  out.reserve(spans.size());
  for (const ArgSpan& span : spans) out.emplace_back(arena, span.offset, span.length);
  return true;
}

}  // namespace keywarden
