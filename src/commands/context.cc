#include "commands/context.h"

namespace keywarden {

Entry* CommandContext::lookup_read(std::string_view key) {
  Entry* entry = db().lookup(key, now_ms);
  if (entry == nullptr) {
    ++server.stats().keyspace_misses;
  } else {
    ++server.stats().keyspace_hits;
  }
  return entry;
}

void CommandContext::error(std::string_view text) {
  failed_ = true;
  server.count_error(text);
  reply.error(text);
}

}  // namespace keywarden
