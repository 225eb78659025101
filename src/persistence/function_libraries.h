// Function libraries in RDB images and AOF bases. Persistence never sees the Lua engine: it
// asks for the libraries with FUNCTION DUMP and installs them with FUNCTION LOAD REPLACE, both
// run through the dispatcher with an internal session, as AOF loading replays its commands.
// Those internal calls are not client traffic: they leave the command counters as they were.
//
// The FUNCTION DUMP payload without its 10-byte footer (RDB version, CRC64) is exactly what an
// RDB file holds between its AUX fields and the first SELECTDB: one FUNCTION2 opcode per
// library followed by the library's code as an RDB string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class Dispatcher;

// The FUNCTION2 records of every library ("" when there are none, or no scripting engine is
// attached). On failure returns false with *error set.
bool dump_function_libraries(Dispatcher& dispatcher, std::string* records, std::string* error);

// Splits FUNCTION2 records into the libraries' code. False when they are malformed.
bool split_function_records(std::string_view records, std::vector<std::string>* codes);

// Installs each library with FUNCTION LOAD REPLACE. "" or the first library's refusal.
std::string load_function_libraries(Dispatcher& dispatcher, const std::vector<std::string>& codes);

}  // namespace keywarden
