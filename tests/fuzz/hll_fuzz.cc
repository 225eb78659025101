// libFuzzer target: arbitrary bytes as a HyperLogLog value, through every HLL command path.
//
// Input: a control byte, an operation list, then the value's body. Control bits 0-1 pick
// hll-sparse-max-bytes (0, 40, 3000, 20000: promotion early, late, or never); bit 2 makes the
// header dense (encoding 0) instead of sparse; bit 3 marks the cached cardinality valid; bit 4
// stores the body raw, without a header (what SET of any string gives). Then a length byte and
// that many operation bytes, each running one command on the value at "k" (with "g", a valid
// HLL, and "d", a destination): PFCOUNT of one and two keys, PFADD of a few elements, PFMERGE
// into and from it, PFDEBUG GETREG/DECODE/ENCODING/TODENSE, GET. The rest of the input is the
// body (a dense body is padded or cut to the exact size, so that mutations reach the registers).
//
// Checked beyond "no crash" (ASan catches any read or write outside the value): every reply is
// well-formed RESP; and, on the value as stored first, the decoders agree on what is corrupt —
// a sparse body converts to dense exactly when it counts and merges, and then the dense form
// counts the same and holds the registers the merge saw.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_input.h"
#include "fuzz_server.h"
#include "resp/reply_parser.h"
#include "types/hyperloglog.h"

namespace {

using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::FuzzServer;
using keywarden::fuzzing::invariant_failed;
namespace hll = keywarden::hll;

constexpr int64_t kSparseLimits[] = {0, 40, 3000, 20000};

void check_replies(std::string& output) {
  std::string_view rest = output;
  keywarden::ReplyParser parser;
  while (!rest.empty()) {
    const keywarden::ReplyParseStatus status = parser.parse(rest);
    if (status == keywarden::ReplyParseStatus::kError) {
      invariant_failed("the server wrote malformed RESP");
    }
    if (status == keywarden::ReplyParseStatus::kNeedMore) {
      invariant_failed("the server wrote an incomplete reply");
    }
    rest.remove_prefix(parser.consumed());
  }
  output.clear();
}

// The decoders' agreement on one value with a valid header.
void check_decoders(const std::string& value) {
  if (!hll::is_hll(value)) return;
  uint64_t counted = 0;
  const bool counts = hll::estimate(value, &counted);
  static uint8_t merged[hll::kRegisters];
  std::memset(merged, 0, sizeof(merged));
  const bool merges = hll::merge_into(value, merged);
  std::string dense = value;
  const bool converts = hll::sparse_to_dense(dense);
  if (counts != converts || merges != converts) {
    invariant_failed("the HLL decoders disagree on whether a value is corrupt");
  }
  if (!converts) return;
  uint64_t dense_count = 0;
  if (!hll::estimate(dense, &dense_count) || dense_count != counted) {
    invariant_failed("a sparse HLL and its dense form count differently");
  }
  const auto* registers = reinterpret_cast<const uint8_t*>(dense.data()) + hll::kHeaderSize;
  for (uint32_t i = 0; i < hll::kRegisters; ++i) {
    if (hll::dense_get(registers, i) != merged[i]) {
      invariant_failed("a sparse HLL's dense form and its merge hold different registers");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  keywarden::fuzzing::silence_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  static FuzzServer& server = *new FuzzServer(1);  // lives until exit
  server.reset();
  const uint8_t control = input.byte();
  server.state.settings().hll_sparse_max_bytes = kSparseLimits[control & 3];
  const std::string_view operations = input.bytes(32);
  const std::string_view body = input.rest();

  std::string value;
  if (control & 16) {
    value.assign(body);
  } else {
    value.assign("HYLL", 4);
    value.push_back(static_cast<char>((control & 4) ? hll::kEncodingDense : hll::kEncodingSparse));
    value.append(3, '\0');
    value.append(7, '\x01');
    value.push_back((control & 8) ? '\x00' : '\x80');
    value.append(body);
    if (control & 4) value.resize(hll::kDenseSize, '\0');
  }
  check_decoders(value);

  auto& client = *server.clients[0];
  auto run = [&](std::vector<std::string_view> args) {
    server.execute(client, args);
    check_replies(client.output);
  };
  run({"SET", "k", value});
  run({"PFADD", "g", "a", "b", "c", "d"});
  for (const char op : operations) {
    switch (static_cast<uint8_t>(op) % 12) {
      case 0: run({"PFCOUNT", "k"}); break;
      case 1: run({"PFCOUNT", "k", "g"}); break;
      case 2: run({"PFADD", "k", "x", "y", "z"}); break;
      case 3: {
        // An element per byte value: up to 40 edits of the sparse opcodes in one command.
        std::vector<std::string> elements;
        for (int i = 0; i < 40; ++i) elements.push_back(std::to_string(i * 7 + op));
        std::vector<std::string_view> args = {"PFADD", "k"};
        for (const auto& element : elements) args.push_back(element);
        run(args);
        break;
      }
      case 4: run({"PFMERGE", "d", "k", "g"}); break;
      case 5: run({"PFMERGE", "k", "g"}); break;
      case 6: run({"PFDEBUG", "GETREG", "k"}); break;
      case 7: run({"PFDEBUG", "DECODE", "k"}); break;
      case 8: run({"PFDEBUG", "ENCODING", "k"}); break;
      case 9: run({"PFDEBUG", "TODENSE", "k"}); break;
      case 10: run({"GET", "k"}); break;
      default: run({"SET", "k", value}); break;
    }
  }
  return 0;
}
