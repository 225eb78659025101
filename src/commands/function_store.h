// The function libraries as persistence sees them: their code to save, and a way to install a
// library's code when loading. The scripting engine provides it (ServiceRegistry); an RDB
// image or AOF base saves the libraries and loads them back through it, without running
// FUNCTION DUMP/LOAD as commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

class FunctionStore {
 public:
  virtual ~FunctionStore() = default;
  // Every library's code, in the order FUNCTION DUMP writes them.
  virtual std::vector<std::string> library_codes() const = 0;
  // Installs a library from its code, replacing one of the same name. "" or the reason it was
  // refused (FUNCTION LOAD's error text, without the "ERR " code).
  virtual std::string load_library(std::string_view code) = 0;
  // Removes every library (a replica's full synchronization replaces them with its primary's).
  virtual void clear_libraries() = 0;
};

}  // namespace keywarden
