// The sandbox scripts run in, as Redis 7.0 builds it: the libraries scripts may use and no
// others, no way to create or change globals (library tables included), an error for any read
// of an undefined global, and the error handler that gives every error the {err, source, line}
// shape the engine turns into Redis's error text.
//
// Redis patches Lua to mark tables read-only; with Debian's stock Lua the same behaviour comes
// from proxies: scripts see an empty table per protected table whose metatable reads through
// to the real one and refuses writes.
#pragma once
#include <span>
#include <string_view>
#include <type_traits>

struct lua_State;

namespace keywarden {

// Opens the libraries Redis 7.0 opens (open_script_libraries) and removes what it removes
// (print, dofile, loadfile, require, module, setfenv, getfenv, newproxy; debug goes once the
// error handler took it), makes pcall return raised error tables as their message, and
// replaces math.random/randomseed with Redis's generator (the same sequence from start-up).
void open_sandboxed_libraries(lua_State* lua);
// Defines the global error handler `name` used by every script call.
void install_error_handler(lua_State* lua, const char* name);
// Makes the globals and the library tables read-only for scripts (call last).
void protect_globals(lua_State* lua);
// Gives the function at `index` the protected globals as its environment.
void set_script_environment(lua_State* lua, int index);
// Replaces the table on top of the stack with a read-only view of it; a `strict` view also
// refuses reads of missing names, as the globals do.
void make_read_only(lua_State* lua, bool strict);
// While a FUNCTION library loads, scripts read their globals from the table at `index`
// instead (the load-time API); 0 ends that.
void set_load_globals(lua_State* lua, int index);
// Sets global `name` (KEYS, ARGV) to a fresh array of `values`, bypassing the protection.
void set_global_array(lua_State* lua, const char* name, std::span<const std::string_view> values);
// Pushes t[name] of the table at `index` without metamethods: reading a script's values from C++
// must never run the script's code (an __index that raises or calls redis would unwind the C++
// caller or re-enter the engine).
void push_raw_field(lua_State* lua, int index, const char* name);

// Runs `work(lua)` inside a protected call, so that a Lua error it raises (out of memory,
// mostly) fails the call instead of aborting the process. The top `argc` values of the stack
// are moved into the call (work sees them at 1..argc) and the top `results` values work leaves
// come back; false when it raised (nothing comes back then). `work` must keep no C++ object
// with a destructor alive across the Lua calls it makes.
bool run_protected(lua_State* lua, int argc, int results, void (*work)(lua_State*, void*),
                   void* data);
template <typename Work>
bool run_protected(lua_State* lua, int argc, int results, Work&& work) {
  using Type = std::remove_reference_t<Work>;
  return run_protected(
      lua, argc, results,
      [](lua_State* state, void* data) { (*static_cast<Type*>(data))(state); }, &work);
}

}  // namespace keywarden
