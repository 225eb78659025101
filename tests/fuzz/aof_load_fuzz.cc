// The AOF loader on hostile files: the bytes of one AOF file replayed through the dispatcher
// exactly as start-up loading does (persistence/aof.h, replay_aof_data: annotations, truncated
// tails, MULTI left open, an RDB preamble, unknown commands), and the manifest parser
// (persistence/aof_manifest.h).
//
// Input: one byte of settings (bit 0: the rest is a manifest rather than an AOF file; bit 1:
// the file is an old single-file AOF, whose RDB preamble the log words differently), then the
// bytes. Invariants checked beyond "no crash": the truncation offset lies within the file, no
// command of the file leaves a client blocked (the loader's client is gone once the load ends),
// and a manifest that parses prints back to a text that parses to the same manifest.
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "fuzz_server.h"
#include "persistence/aof.h"
#include "persistence/aof_manifest.h"

using keywarden::AofManifest;
using keywarden::AofReplay;
using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::FuzzServer;
using keywarden::fuzzing::invariant_failed;

namespace {

bool mentions_scripting(std::string_view bytes) {
  std::string lower(bytes);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"eval", "fcall", "function", "script"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return bytes.starts_with("REDIS");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  keywarden::fuzzing::silence_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint8_t settings = input.byte();
  std::string_view bytes = input.rest();

  if ((settings & 1) != 0) {
    AofManifest manifest;
    std::string bad_line;
    if (!AofManifest::parse(bytes, &manifest, &bad_line).empty()) return 0;
    // Only comments: accepted, as by Redis, and printed as nothing, which is not a manifest.
    if (manifest.empty() && manifest.history.empty()) return 0;
    // A name full of bytes that print as \xHH can make its line longer than the 1024 bytes
    // a manifest line may have: Redis writes and refuses such a line alike.
    const std::string text = manifest.to_text();
    for (size_t at = 0, end; at < text.size(); at = end + 1) {
      end = text.find('\n', at);
      if (end - at >= 1024) return 0;
    }
    AofManifest again;
    if (!AofManifest::parse(text, &again, &bad_line).empty()) {
      invariant_failed("a parsed manifest printed back does not parse");
    }
    if (again.to_text() != manifest.to_text()) {
      invariant_failed("a manifest changed in a round trip");
    }
    return 0;
  }

  static FuzzServer& server = *new FuzzServer();  // lives until exit
  server.reset();
  // The loader runs commands itself: any that could reach the scripting engine (an RDB
  // preamble's function libraries load through FUNCTION LOAD) mean fresh Lua states next time.
  if (mentions_scripting(bytes)) server.mark_scripting_used();
  uint64_t commands = 0;
  const bool old_style = (settings & 2) != 0;
  AofReplay replay = keywarden::replay_aof_data(
      server.dispatcher, bytes, old_style ? "appendonly.aof" : "appendonly.aof.1.incr.aof",
      old_style, &commands);
  if (replay.valid_up_to > bytes.size()) invariant_failed("truncation offset past the end");
  // The loader's client is gone: had it blocked, the registry would point at a dead session
  // that the server's next serve_ready_keys() or timeout pass would use.
  if (server.state.blocking().blocked_count() != 0) {
    invariant_failed("a client blocked during the AOF load");
  }
  return 0;
}
