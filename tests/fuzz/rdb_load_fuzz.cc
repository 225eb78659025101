// libFuzzer target: whole RDB images loaded from memory (rdb_load in persistence/rdb_file.h),
// as a server loads its dump.rdb or an AOF's RDB preamble at start-up.
//
// Input: one control byte, then the image. Control bit 0 picks the validation depth
// (sanitize-dump-payload yes or no). Seeds end in a zero checksum ("saved without one"), which
// the loader does not verify, so mutations reach the records. A refused image must leave the
// keyspace empty; an accepted one must save and load again to the same number of keys.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "persistence/rdb_file.h"
#include "storage/keyspace.h"
#include "value_description.h"

using namespace keywarden;

namespace {
constexpr int64_t kNow = 1'700'000'000'000;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static ManualClock clock(kNow);
  CommandSettings settings;
  settings.sanitize_dump_payload = (data[0] & 1) ? kSanitizeDumpYes : kSanitizeDumpNo;
  const std::string_view image(reinterpret_cast<const char*>(data + 1), size - 1);
  Keyspace keyspace(16, clock);
  RdbLoadStats stats;
  if (!rdb_load(image, keyspace, settings, kNow, &stats).empty()) {
    if (keyspace.total_keys() != 0) fuzz::fail("a refused image left keys behind");
    return 0;
  }
  if (keyspace.total_keys() != stats.keys_loaded) fuzz::fail("keys loaded miscounted");
  RdbSaveOptions options;
  options.now_ms = kNow;
  const std::string saved = rdb_save_to_string(keyspace, options);
  Keyspace again(16, clock);
  settings.sanitize_dump_payload = kSanitizeDumpYes;
  if (!rdb_load(saved, again, settings, kNow, nullptr).empty()) {
    fuzz::fail("a loaded dataset's own image does not load");
  }
  if (again.total_keys() != keyspace.total_keys()) fuzz::fail("keys lost through save and load");
  for (int db = 0; db < keyspace.database_count(); ++db) {
    keyspace.db(db).for_each([&](const Entry* entry) {
      const Entry* copy = again.db(db).find_raw(entry->key());
      if (copy == nullptr || fuzz::describe(copy->value) != fuzz::describe(entry->value)) {
        fuzz::fail("a value changed through save and load");
      }
      return true;
    });
  }
  return 0;
}
