// The server's request parser (resp/request_parser.h) on hostile query buffers: multibulk and
// inline requests (RESP2 and RESP3 clients send the same request forms), under the default
// limits, the unauthenticated ones and tiny ones, fed both at once and in reads split at
// reproducible points.
//
// With settings bit 3, the split reads also take every awaited bulk body out of the buffer and
// feed it aside, as a connection does with a big argument (RequestParser::detach_bulk): the
// commands must not change.
//
// Input: one byte of settings, two bytes seeding the split points, then the query bytes.
// Invariants checked beyond "no crash": the commands and the protocol error are the same
// whether the bytes arrive at once or split (unless a size limit on a buffered line, which
// depends on how much has arrived, was hit), and every command read, written back as a
// multibulk request, parses back to the same arguments.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "resp/reply_writer.h"
#include "resp/request_parser.h"

namespace {

using keywarden::ParserLimits;
using keywarden::ParseStatus;
using keywarden::RequestParser;
using keywarden::fuzzing::Choices;
using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::invariant_failed;

struct Outcome {
  std::vector<std::vector<std::string>> commands;
  std::string error;
};

// Bulks the caller took out of the buffer (RequestParser::detach_bulk), as a connection reads a
// big argument into a block of its own: each body's storage is reserved whole, so the views the
// parser keeps stay valid while the rest arrives.
struct DetachedBulks {
  std::vector<std::unique_ptr<std::string>> bodies;
  size_t missing = 0;  // bytes (body and trailer) the last one still awaits
};

// Detaching only bulks up to this size keeps hostile lengths from allocating.
constexpr size_t kMaxDetached = 4096;

// Hands what arrived to the parser, the caller's side of the buffer contract: parse every
// complete command, drop consumed() bytes after each call. With `detached`, a bulk body the
// parser awaits moves out of the buffer, as Connection::detach_big_argument does.
void drain(RequestParser& parser, std::string& buffer, Outcome& outcome,
           DetachedBulks* detached) {
  for (;;) {
    ParseStatus status = parser.parse(buffer);
    if (status == ParseStatus::kCommand) {
      std::vector<std::string>& command = outcome.commands.emplace_back();
      for (std::string_view arg : parser.args()) command.emplace_back(arg);
    } else if (status == ParseStatus::kError) {
      outcome.error = parser.error();
    }
    buffer.erase(0, parser.consumed());
    if (status != ParseStatus::kCommand) {
      const auto awaited = parser.awaited_bulk();
      if (status == ParseStatus::kNeedMore && detached != nullptr && awaited &&
          awaited->length <= kMaxDetached) {
        auto body = std::make_unique<std::string>();
        body->reserve(awaited->length + 2);
        body->assign(buffer, awaited->offset);
        buffer.resize(awaited->offset);
        if (body->size() >= awaited->length + 2) invariant_failed("detached a complete bulk");
        detached->missing = awaited->length + 2 - body->size();
        parser.detach_bulk({body->data(), awaited->length});
        detached->bodies.push_back(std::move(body));
      }
      return;
    }
  }
}

Outcome parse_split(const ParserLimits& limits, std::string_view bytes, Choices* splits,
                    bool detach = false) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string buffer;
  DetachedBulks detached;
  size_t at = 0;
  while (at < bytes.size() && outcome.error.empty()) {
    size_t chunk = bytes.size() - at;
    if (splits != nullptr)
      chunk = std::min(chunk, 1 + splits->below(splits->below(4) == 0 ? 3 : 40));
    std::string_view piece = bytes.substr(at, chunk);
    at += chunk;
    if (detached.missing > 0) {
      // Bytes go to the detached body first, and never past its end.
      const size_t take = std::min(detached.missing, piece.size());
      detached.bodies.back()->append(piece.substr(0, take));
      detached.missing -= take;
      piece.remove_prefix(take);
      if (detached.missing > 0) continue;
    }
    buffer.append(piece);
    drain(parser, buffer, outcome, detach ? &detached : nullptr);
  }
  return outcome;
}

bool size_limited(const Outcome& outcome) {
  return outcome.error.find("too big") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint8_t settings = input.byte();
  const uint32_t seed = input.byte() | (uint32_t{input.byte()} << 8);
  std::string_view bytes = input.rest();

  ParserLimits limits;
  switch (settings & 3) {
    case 0:
      break;  // Redis's defaults
    case 1:
      limits.auth_required = true;
      break;
    case 2:  // tiny, so that every limit is reachable with short inputs
      limits.proto_max_bulk_len = 16;
      limits.inline_max = 24;
      limits.max_multibulk = 8;
      break;
    case 3:
      limits.proto_max_bulk_len = ParserLimits::kUnlimitedBulk;
      break;
  }

  Outcome whole = parse_split(limits, bytes, nullptr);
  Choices splits(seed);
  Outcome split = parse_split(limits, bytes, &splits, /*detach=*/(settings & 8) != 0);
  if (!size_limited(whole) && !size_limited(split)) {
    if (whole.commands != split.commands) invariant_failed("split reads changed the commands");
    if (whole.error != split.error) invariant_failed("split reads changed the error");
  }

  // Written back as a client would send it, every command reads back unchanged.
  std::string request;
  keywarden::ReplyWriter writer(&request, (settings & 4) != 0 ? 3 : 2);
  for (const std::vector<std::string>& command : whole.commands) {
    writer.array_header(command.size());
    for (const std::string& arg : command) writer.bulk(arg);
  }
  ParserLimits unlimited;
  unlimited.proto_max_bulk_len = ParserLimits::kUnlimitedBulk;
  Outcome again = parse_split(unlimited, request, nullptr);
  if (!again.error.empty()) invariant_failed("a command written back failed to parse");
  if (again.commands != whole.commands) invariant_failed("a command written back changed");
  return 0;
}
