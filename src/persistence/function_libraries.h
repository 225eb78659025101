// Function libraries in RDB images and AOF bases, through the function store the scripting
// engine provides (commands/function_store.h): persistence never sees the Lua engine.
//
// An RDB image holds the libraries between its AUX fields and the first SELECTDB as one
// FUNCTION2 opcode per library followed by the library's code as an RDB string, which is also
// FUNCTION DUMP's payload without its 10-byte footer (RDB version, CRC64).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class FunctionStore;

// The FUNCTION2 records of every library ("" when there are none, or no store).
std::string function_library_records(const FunctionStore* store);

// Splits FUNCTION2 records into the libraries' code. False when they are malformed.
bool split_function_records(std::string_view records, std::vector<std::string>* codes);

// Installs each library, replacing any of the same name. "" or the first library's refusal.
std::string load_function_libraries(FunctionStore* store, const std::vector<std::string>& codes);

}  // namespace keywarden
