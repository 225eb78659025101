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

}  // namespace keywarden
