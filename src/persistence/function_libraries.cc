// Function libraries to and from RDB records (function_libraries.h).
#include "persistence/function_libraries.h"

#include <utility>

#include "commands/function_store.h"
#include "persistence/rdb_codec.h"
#include "persistence/rdb_format.h"

namespace keywarden {

std::string function_library_records(const FunctionStore* store) {
  std::string records;
  if (store == nullptr) return records;
  // Length and bytes, as FUNCTION DUMP writes them (never an integer or LZF encoding).
  RdbWriter out(/*compression=*/false);
  for (const std::string& code : store->library_codes()) {
    out.byte(rdb::kOpFunction2);
    out.length(code.size());
    out.raw(code);
  }
  return std::move(out.buffer());
}

bool split_function_records(std::string_view records, std::vector<std::string>* codes) {
  RdbReader in(records);
  while (in.position() < records.size()) {
    uint8_t opcode;
    std::string code;
    if (!in.byte(&opcode) || opcode != rdb::kOpFunction2 || !in.string(&code)) return false;
    codes->push_back(std::move(code));
  }
  return true;
}

std::string load_function_libraries(FunctionStore* store, const std::vector<std::string>& codes) {
  if (codes.empty()) return "";
  if (store == nullptr) {
    return "the RDB file contains function libraries but no scripting engine is attached";
  }
  for (const std::string& code : codes) {
    std::string refusal = store->load_library(code);
    if (!refusal.empty()) return "Failed loading library from the RDB file: " + refusal;
  }
  return "";
}

}  // namespace keywarden
