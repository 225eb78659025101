// libFuzzer target: RESTORE's payload decoder (decode_dump_payload in persistence/rdb_codec.h).
//
// Input: one control byte, then the payload. Control bit 0 picks the validation depth
// (sanitize-dump-payload yes or no); bit 1 says the input carries its own footer (RDB version
// and CRC64), else the target appends a valid one (RDB 12), so that mutations reach the object
// decoder instead of dying at the checksum; bits 2-3 shrink the encoding limits so that loaded
// values convert between packed and table encodings. A payload that loads must DUMP again, and that
// payload must load (in depth) to the same value: whatever the decoder accepts is internally
// consistent.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/crc64.h"
#include "persistence/rdb_codec.h"
#include "value_description.h"

using namespace keywarden;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  const bool deep = (control & 1) != 0;
  std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((control & 2) == 0) {
    // RDB 12: the newest footer the decoder accepts, so that hashes with field deadlines
    // (types 24/25, which need it) are reached too; older types read the same under it.
    payload.push_back(12);
    payload.push_back(0);
    const uint64_t crc = crc64(0, payload);
    for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  }
  CommandSettings settings;
  if (control & 4) {
    settings.hash_limits.max_listpack_entries = 2;
    settings.zset_limits.max_listpack_entries = 2;
    settings.set_limits.max_intset_entries = 2;
    settings.set_limits.max_listpack_entries = 2;
  }
  if (control & 8) {
    settings.hash_limits.max_listpack_value = 4;
    settings.zset_limits.max_listpack_value = 4;
    settings.set_limits.max_listpack_value = 4;
    settings.list_max_listpack_size = 2;
  }
  Value value;
  uint64_t deep_validations = 0;
  if (decode_dump_payload(payload, settings, deep, &value, &deep_validations) !=
      DumpPayloadStatus::kOk) {
    return 0;
  }
  if (!deep && deep_validations != 0) fuzz::fail("shallow decoding counted a deep validation");
  const std::string again = encode_dump_payload(value);
  Value reloaded;
  if (decode_dump_payload(again, settings, true, &reloaded) != DumpPayloadStatus::kOk) {
    fuzz::fail("a loaded value's own DUMP does not load");
  }
  if (fuzz::describe(reloaded) != fuzz::describe(value)) {
    fuzz::fail("a loaded value changed through DUMP and RESTORE");
  }
  return 0;
}
