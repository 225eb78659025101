// libkeywarden's side of the wire: the RESP2/RESP3 reply parser (resp/reply_parser.h) on
// hostile server bytes, then the conversion of each reply into the public keywarden::Reply
// and its accessors, as the client library's calls use them.
//
// Input: two bytes seeding the split points, then the reply stream. Invariants checked beyond
// "no crash": the replies and the error are the same whether the bytes arrive at once or
// split; the accessors either answer or throw keywarden's own ProtocolError, nothing else.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/reply_convert.h"
#include "fuzz_input.h"
#include "keywarden/errors.h"
#include "keywarden/reply.h"
#include "resp/reply_parser.h"

namespace {

using keywarden::ReplyParser;
using keywarden::ReplyParseStatus;
using keywarden::RespValue;
using keywarden::fuzzing::Choices;
using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::invariant_failed;

struct Outcome {
  std::vector<RespValue> replies;
  std::string error;
};

Outcome parse(std::string_view bytes, Choices* splits) {
  ReplyParser parser;
  Outcome outcome;
  std::string buffer;
  size_t at = 0;
  while (at < bytes.size() && outcome.error.empty()) {
    size_t chunk = bytes.size() - at;
    if (splits != nullptr)
      chunk = std::min(chunk, 1 + splits->below(splits->below(4) == 0 ? 3 : 40));
    buffer.append(bytes.substr(at, chunk));
    at += chunk;
    for (;;) {
      ReplyParseStatus status = parser.parse(buffer);
      if (status == ReplyParseStatus::kValue) outcome.replies.push_back(parser.take_value());
      if (status == ReplyParseStatus::kError) outcome.error = parser.error();
      buffer.erase(0, parser.consumed());
      if (status != ReplyParseStatus::kValue) break;
    }
  }
  return outcome;
}

// Walks a converted reply through the accessors a caller would use on it.
void exercise(const keywarden::Reply& reply, int depth) {
  (void)reply.to_string();
  try {
    (void)reply.str();
  } catch (const keywarden::ProtocolError&) {
  }
  try {
    (void)reply.integer();
  } catch (const keywarden::ProtocolError&) {
  }
  try {
    (void)reply.as_double();
  } catch (const keywarden::ProtocolError&) {
  }
  try {
    (void)reply.boolean();
  } catch (const keywarden::ProtocolError&) {
  }
  if (reply.is_error()) {
    keywarden::ServerError error(reply.str());
    (void)error.code();
  }
  if (!reply.is_aggregate()) return;
  try {
    const size_t pairs = reply.map_size();
    for (size_t i = 0; i < pairs && i < 4; ++i) {
      if (reply.key(i).is_string()) (void)reply.find(reply.key(i).str());
    }
  } catch (const keywarden::ProtocolError&) {
  }
  try {
    (void)reply[reply.size()];  // one past the end: must throw, not read
    invariant_failed("Reply::operator[] past the end did not throw");
  } catch (const keywarden::ProtocolError&) {
  }
  if (depth < 8) {
    for (const keywarden::Reply& element : reply.elements()) exercise(element, depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const uint32_t seed = input.byte() | (uint32_t{input.byte()} << 8);
  std::string_view bytes = input.rest();

  Outcome whole = parse(bytes, nullptr);
  Choices splits(seed);
  Outcome split = parse(bytes, &splits);
  if (whole.error != split.error) invariant_failed("split reads changed the error");
  if (whole.replies.size() != split.replies.size()) {
    invariant_failed("split reads changed the number of replies");
  }
  for (size_t i = 0; i < whole.replies.size(); ++i) {
    // NaN doubles compare unequal to themselves: compare renderings.
    if (to_debug_string(whole.replies[i]) != to_debug_string(split.replies[i])) {
      invariant_failed("split reads changed a reply");
    }
  }
  for (RespValue& value : whole.replies) {
    keywarden::Reply reply = keywarden::detail::to_reply(std::move(value));
    exercise(reply, 0);
  }
  return 0;
}
