// Redis 7 functions (FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/KILL, FCALL, FCALL_RO) on the
// ScriptEngine's second Lua state. A library is code that, when loaded, calls
// redis.register_function for each function it offers; loading sees only a small API (the
// load-time globals), calling sees the full sandbox. Functions receive their keys and
// arguments as two table parameters rather than KEYS/ARGV globals.
#include <algorithm>
#include <ctime>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/crc64.h"
#include "common/glob.h"
#include "common/lzf.h"
#include "resp/split_arguments.h"
#include "scripting/lua_sandbox.h"
#include "scripting/script_engine.h"

namespace keywarden {
namespace {

constexpr const char* kLoadApiKey = "__keywarden_load_api";
constexpr const char* kErrorHandler = "__redis__err__handler";
constexpr int64_t kLoadTimeoutUs = 500'000;
constexpr std::string_view kBadName =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least "
    "one character long";

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  });
}

// The library name from the `#!lua name=<name>` first line; false with `error` set.
bool parse_library_metadata(std::string_view code, std::string* name, size_t* shebang_length,
                            std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "ERR Missing library metadata";
    return false;
  }
  size_t end = code.find('\n');
  std::vector<std::string> parts;
  if (end == std::string_view::npos || !split_arguments(code.substr(0, end), parts) ||
      parts.empty()) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("name=")) {
      *error = "ERR Invalid metadata value given: " + parts[i];
      return false;
    }
    if (named) {
      *error = "ERR Invalid metadata value, name argument was given multiple times";
      return false;
    }
    named = true;
    *name = parts[i].substr(5);
  }
  if (!named) {
    *error = "ERR Library name was not given";
    return false;
  }
  std::string_view engine = std::string_view(parts[0]).substr(2);
  if (!equals_ignore_case(engine, "lua")) {
    *error = "ERR Engine '" + std::string(engine) + "' not found";
    return false;
  }
  if (!valid_name(*name)) {
    *error = "ERR " + std::string(kBadName);
    return false;
  }
  *shebang_length = end;
  return true;
}

// FUNCTION DUMP's serialization: Redis's RDB pieces for functions.
constexpr unsigned char kRdbOpcodeFunction2 = 245;
constexpr uint16_t kRdbVersion = 10;
constexpr std::string_view kBadPayload = "ERR DUMP payload version or checksum are wrong";

void append_rdb_length(std::string* out, uint64_t length) {
  if (length < 64) {
    out->push_back(static_cast<char>(length));
  } else if (length < 16384) {
    out->push_back(static_cast<char>(0x40 | (length >> 8)));
    out->push_back(static_cast<char>(length & 0xff));
  } else {
    const bool wide = length > UINT32_MAX;
    out->push_back(static_cast<char>(wide ? 0x81 : 0x80));
    for (int shift = wide ? 56 : 24; shift >= 0; shift -= 8) {
      out->push_back(static_cast<char>((length >> shift) & 0xff));
    }
  }
}

// Reads an RDB length; *special is set for the string encodings (integer, LZF), whose kind
// is then in *length.
bool read_rdb_length(std::string_view in, size_t* at, uint64_t* length, bool* special) {
  if (*at >= in.size()) return false;
  const auto first = static_cast<unsigned char>(in[(*at)++]);
  *special = false;
  switch (first >> 6) {
    case 0:
      *length = first & 0x3f;
      return true;
    case 1:
      if (*at >= in.size()) return false;
      *length = (uint64_t{first & 0x3fu} << 8) | static_cast<unsigned char>(in[(*at)++]);
      return true;
    case 2: {
      const int bytes = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
      if (bytes == 0 || *at + bytes > in.size()) return false;
      *length = 0;
      for (int i = 0; i < bytes; ++i) *length = (*length << 8) | static_cast<unsigned char>(in[(*at)++]);
      return true;
    }
    default:
      *special = true;
      *length = first & 0x3f;
      return true;
  }
}

// Reads an RDB string in any of its encodings (plain, integer, LZF-compressed).
bool read_rdb_string(std::string_view in, size_t* at, std::string* out) {
  uint64_t length;
  bool special;
  if (!read_rdb_length(in, at, &length, &special)) return false;
  if (!special) {
    if (length > in.size() - *at) return false;
    out->assign(in.substr(*at, length));
    *at += length;
    return true;
  }
  if (length <= 2) {  // 8, 16 or 32-bit little-endian integer
    const int bytes = 1 << length;
    if (*at + bytes > in.size()) return false;
    uint32_t raw = 0;
    for (int i = 0; i < bytes; ++i) raw |= uint32_t{static_cast<unsigned char>(in[*at + i])} << (8 * i);
    *at += bytes;
    int64_t value = bytes == 1 ? static_cast<int8_t>(raw)
                    : bytes == 2 ? static_cast<int16_t>(raw) : static_cast<int32_t>(raw);
    *out = std::to_string(value);
    return true;
  }
  if (length != 3) return false;
  uint64_t compressed, plain;
  if (!read_rdb_length(in, at, &compressed, &special) || special ||
      !read_rdb_length(in, at, &plain, &special) || special || compressed > in.size() - *at) {
    return false;
  }
  if (!lzf_decompress(in.substr(*at, compressed), plain, out)) return false;
  *at += compressed;
  return true;
}

// The hook while a library loads: loading may not take longer than half a second.
void load_hook(lua_State* lua, lua_Debug*);

}  // namespace

void ScriptEngine::push_load_api(lua_State* lua) {
  // The table a loading library sees as its globals: `redis` with register_function, log and
  // the version and log-level constants, taken from the full `redis` table on the stack.
  const int full = lua_gettop(lua);
  lua_newtable(lua);  // load-time globals
  lua_newtable(lua);  // its `redis`
  lua_pushlightuserdata(lua, this);
  lua_pushcclosure(lua, &ScriptEngine::lua_register_function, 1);
  lua_setfield(lua, -2, "register_function");
  for (const char* name : {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                           "REDIS_VERSION", "REDIS_VERSION_NUM"}) {
    lua_getfield(lua, full, name);
    lua_setfield(lua, -2, name);
  }
  make_read_only(lua, true);
  lua_setfield(lua, -2, "redis");
  lua_setfield(lua, LUA_REGISTRYINDEX, kLoadApiKey);
}

void ScriptEngine::close_functions() {
  if (functions_lua_ != nullptr) lua_close(functions_lua_);
  functions_lua_ = nullptr;
  libraries_.clear();
  functions_.clear();
}

void ScriptEngine::function_flush() {
  close_functions();
  functions_lua_ = create_state(true);
}

size_t ScriptEngine::functions_bytes() const {
  size_t bytes = 0;
  for (const auto& [name, library] : libraries_) bytes += name.size() + library.code.size();
  for (const auto& [name, function] : functions_) bytes += name.size() + sizeof(Function);
  return bytes;
}

int ScriptEngine::lua_register_function(lua_State* lua) {
  std::string_view error = self(lua).register_function(lua);
  if (!error.empty()) return raise_error(lua, error);
  return 0;
}

std::string_view ScriptEngine::register_function(lua_State* lua) {
  if (loading_ == nullptr) {
    return "redis.register_function can only be called on FUNCTION LOAD command";
  }
  const int argc = lua_gettop(lua);
  int name_index = 0;
  int callback_index = 0;
  int description_index = 0;
  uint32_t flags = 0;
  if (argc == 1) {
    if (!lua_istable(lua, 1)) {
      return "calling redis.register_function with a single argument is only applicable to Lua "
             "table (representing named arguments).";
    }
    // Named arguments: each value is copied to the stack so that it has an index of its own.
    for (lua_pushnil(lua); lua_next(lua, 1) != 0;) {
      const char* key = lua_type(lua, -2) == LUA_TSTRING ? lua_tostring(lua, -2) : "";
      const std::string_view field = key;
      if (field == "function_name") {
        if (lua_type(lua, -1) != LUA_TSTRING) {
          return "function_name argument given to redis.register_function must be a string";
        }
        name_index = lua_gettop(lua);
      } else if (field == "callback") {
        if (!lua_isfunction(lua, -1)) {
          return "callback argument given to redis.register_function must be a function";
        }
        callback_index = lua_gettop(lua);
      } else if (field == "description") {
        if (lua_type(lua, -1) != LUA_TSTRING) {
          return "description argument given to redis.register_function must be a string";
        }
        description_index = lua_gettop(lua);
      } else if (field == "flags") {
        if (!lua_istable(lua, -1)) {
          return "flags argument to redis.register_function must be a table representing "
                 "function flags";
        }
        for (int i = 1;; ++i) {
          lua_rawgeti(lua, -1, i);
          if (lua_isnil(lua, -1)) {
            lua_pop(lua, 1);
            break;
          }
          uint32_t flag = lua_type(lua, -1) == LUA_TSTRING
                              ? script_flag_by_name(lua_tostring(lua, -1))
                              : 0;
          lua_pop(lua, 1);
          if (flag == 0) return "unknown flag given";
          flags |= flag;
        }
      } else {
        return "unknown argument given to redis.register_function";
      }
      // Keep the value (its index is remembered) and a copy of the key for lua_next.
      lua_pushvalue(lua, -2);
    }
    if (name_index == 0) return "redis.register_function must get a function name argument";
    if (callback_index == 0) return "redis.register_function must get a callback argument";
  } else if (argc == 2) {
    if (lua_type(lua, 1) != LUA_TSTRING) {
      return "first argument to redis.register_function must be a string";
    }
    if (!lua_isfunction(lua, 2)) {
      return "second argument to redis.register_function must be a function";
    }
    name_index = 1;
    callback_index = 2;
  } else {
    return "wrong number of arguments to redis.register_function";
  }
  size_t length;
  const char* text = lua_tolstring(lua, name_index, &length);
  const std::string_view name(text, length);
  if (!valid_name(name)) return kBadName;
  for (const Function& registered : *loading_) {
    if (registered.name == name) return "Function already exists in the library";
  }
  Function function{std::string(name), {}, 0, flags, description_index != 0, {}};
  if (description_index != 0) function.description = lua_tostring(lua, description_index);
  lua_pushvalue(lua, callback_index);
  function.ref = luaL_ref(lua, LUA_REGISTRYINDEX);
  loading_->push_back(std::move(function));
  return {};
}

namespace {

void load_hook(lua_State* lua, lua_Debug*) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "__keywarden_load_deadline");
  const auto deadline = static_cast<int64_t>(lua_tonumber(lua, -1));
  lua_pop(lua, 1);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (now.tv_sec * 1'000'000 + now.tv_nsec / 1000 > deadline) {
    lua_newtable(lua);
    lua_pushliteral(lua, "ERR FUNCTION LOAD timeout");
    lua_setfield(lua, -2, "err");
    lua_error(lua);
  }
}

}  // namespace

bool ScriptEngine::prepare_library(std::string_view code, PreparedLibrary* prepared,
                                   std::string* error) {
  size_t shebang_length = 0;
  if (!parse_library_metadata(code, &prepared->name, &shebang_length, error)) return false;
  lua_State* lua = functions_lua_;
  std::string_view body = code.substr(shebang_length);
  if (luaL_loadbuffer(lua, body.data(), body.size(), "@user_function") != 0) {
    *error = "ERR Error compiling function: " + std::string(lua_tostring(lua, -1));
    lua_pop(lua, 1);
    return false;
  }
  set_script_environment(lua, -1);

  // Run the library's code with the load-time API, bounded in time.
  std::vector<Function>& registered = prepared->functions;
  loading_ = &registered;
  lua_getfield(lua, LUA_REGISTRYINDEX, kLoadApiKey);
  set_load_globals(lua, lua_gettop(lua));
  lua_pop(lua, 1);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  lua_pushnumber(lua, static_cast<lua_Number>(now.tv_sec * 1'000'000 + now.tv_nsec / 1000 +
                                              kLoadTimeoutUs));
  lua_setfield(lua, LUA_REGISTRYINDEX, "__keywarden_load_deadline");
  lua_sethook(lua, load_hook, LUA_MASKCOUNT, 100000);
  lua_getglobal(lua, kErrorHandler);
  lua_insert(lua, -2);
  const int status = lua_pcall(lua, 0, 0, -2);
  lua_sethook(lua, nullptr, 0, 0);
  set_load_globals(lua, 0);
  loading_ = nullptr;

  if (status != 0) {
    std::string message = "unknown error";
    if (lua_istable(lua, -1)) {
      push_raw_field(lua, -1, "err");
      if (lua_isstring(lua, -1)) message = lua_tostring(lua, -1);
      lua_pop(lua, 1);
    } else if (lua_isstring(lua, -1)) {
      message = lua_tostring(lua, -1);
    }
    lua_pop(lua, 2);  // the error and the handler
    release(*prepared);
    *error = "ERR Error registering functions: " + message;
    return false;
  }
  lua_pop(lua, 1);  // the handler
  if (registered.empty()) {
    *error = "ERR No functions registered";
    return false;
  }
  prepared->code.assign(code);
  return true;
}

void ScriptEngine::release(PreparedLibrary& prepared) {
  for (const Function& function : prepared.functions) {
    luaL_unref(functions_lua_, LUA_REGISTRYINDEX, function.ref);
  }
  prepared.functions.clear();
}

void ScriptEngine::remove_library(std::string_view name) {
  auto found = libraries_.find(std::string(name));
  if (found == libraries_.end()) return;
  for (const std::string& function : found->second.functions) {
    auto entry = functions_.find(function);
    luaL_unref(functions_lua_, LUA_REGISTRYINDEX, entry->second.ref);
    functions_.erase(entry);
  }
  libraries_.erase(found);
}

bool ScriptEngine::install_libraries(std::vector<PreparedLibrary>& prepared, bool replace,
                                     std::string* error) {
  // All or nothing: every name is checked before anything changes.
  std::map<std::string, std::string, std::less<>> new_functions;  // function -> library
  for (const PreparedLibrary& library : prepared) {
    if (!replace && libraries_.contains(library.name)) {
      *error = "ERR Library " + library.name + " already exists";
      return false;
    }
    for (const Function& function : library.functions) {
      auto found = functions_.find(function.name);
      const bool replaced = replace && found != functions_.end() &&
                            found->second.library == library.name;
      if ((found != functions_.end() && !replaced) ||
          !new_functions.emplace(function.name, library.name).second) {
        *error = "ERR Function " + function.name + " already exists";
        return false;
      }
    }
  }
  for (PreparedLibrary& library : prepared) {
    remove_library(library.name);
    Library& installed = libraries_[library.name];
    installed.name = library.name;
    installed.code = std::move(library.code);
    for (Function& function : library.functions) {
      function.library = library.name;
      installed.functions.push_back(function.name);
      std::string key = function.name;
      functions_.emplace(std::move(key), std::move(function));
    }
    library.functions.clear();
  }
  return true;
}

void ScriptEngine::function_load(CommandContext& ctx, std::string_view code, bool replace) {
  std::vector<PreparedLibrary> prepared(1);
  std::string error;
  // An existing library is reported before the new code is compiled, as Redis does.
  size_t shebang_length;
  if (parse_library_metadata(code, &prepared[0].name, &shebang_length, &error) && !replace &&
      libraries_.contains(prepared[0].name)) {
    ctx.error("ERR Library '" + prepared[0].name + "' already exists");
    return;
  }
  if (!prepare_library(code, &prepared[0], &error)) {
    ctx.error(error);
    return;
  }
  if (!install_libraries(prepared, true, &error)) {
    release(prepared[0]);
    ctx.error(error);
    return;
  }
  ctx.reply.bulk(prepared[0].name);
}

std::vector<std::string> ScriptEngine::library_codes() const {
  std::vector<std::string> codes;
  codes.reserve(libraries_.size());
  for (const auto& [name, library] : libraries_) codes.push_back(library.code);
  return codes;
}

std::string ScriptEngine::load_library(std::string_view code) {
  std::vector<PreparedLibrary> prepared(1);
  std::string error;
  if (prepare_library(code, &prepared[0], &error)) {
    if (install_libraries(prepared, /*replace=*/true, &error)) return "";
    release(prepared[0]);
  }
  // FUNCTION LOAD's reply text without its error code.
  return error.starts_with("ERR ") ? error.substr(4) : error;
}

void ScriptEngine::fcall(CommandContext& ctx, bool read_only) {
  if (monitor_feed_) monitor_feed_(ctx.session, ctx.args);
  auto found = functions_.find(std::string(ctx.args[1]));
  if (found == functions_.end()) {
    ctx.error("ERR Function not found");
    return;
  }
  size_t key_count;
  if (!parse_key_count(ctx, "ERR Bad number of keys provided", &key_count)) return;
  const Function& function = found->second;
  if (!oom_allows_start(ctx, function.flags)) return;
  const bool no_writes = (function.flags & kScriptNoWrites) != 0;
  if (read_only && !no_writes) {
    ctx.error("ERR Can not execute a script with write flag using *_ro command.");
    return;
  }
  lua_State* lua = functions_lua_;
  lua_rawgeti(lua, LUA_REGISTRYINDEX, function.ref);
  const auto keys = ctx.args.subspan(3, key_count);
  const auto arguments = ctx.args.subspan(3 + key_count);
  // The callback's two arguments, built protected: memory may run out on a huge call.
  const bool built = run_protected(lua, 0, 2, [&](lua_State* state) {
    for (auto values : {keys, arguments}) {
      lua_createtable(state, static_cast<int>(values.size()), 0);
      for (size_t i = 0; i < values.size(); ++i) {
        lua_pushlstring(state, values[i].data(), values[i].size());
        lua_rawseti(state, -2, static_cast<int>(i + 1));
      }
    }
  });
  if (!built) {
    lua_pop(lua, 1);
    ctx.error(kOutOfMemoryReply);
    return;
  }
  run_function(ctx, lua, function.name, read_only || no_writes, true, 2);
}

void ScriptEngine::function_list(CommandContext& ctx) {
  bool with_code = false;
  bool has_pattern = false;
  std::string_view pattern;
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    std::string_view arg = ctx.args[i];
    if (equals_ignore_case(arg, "withcode") && !with_code) {
      with_code = true;
    } else if (equals_ignore_case(arg, "libraryname") && !has_pattern) {
      if (i + 1 >= ctx.args.size()) {
        ctx.error("ERR library name argument was not given");
        return;
      }
      has_pattern = true;
      pattern = ctx.args[++i];
    } else {
      ctx.error("ERR Unknown argument " + std::string(arg));
      return;
    }
  }
  std::vector<const Library*> listed;
  for (const auto& [name, library] : libraries_) {
    if (has_pattern && !glob_match(pattern, name)) continue;
    listed.push_back(&library);
  }
  ReplyWriter& reply = ctx.reply;
  reply.array_header(listed.size());
  for (const Library* library : listed) {
    reply.map_header(with_code ? 4 : 3);
    reply.bulk("library_name");
    reply.bulk(library->name);
    reply.bulk("engine");
    reply.bulk("LUA");
    reply.bulk("functions");
    reply.array_header(library->functions.size());
    for (const std::string& name : library->functions) {
      const Function& function = functions_.at(name);
      reply.map_header(3);
      reply.bulk("name");
      reply.bulk(function.name);
      reply.bulk("description");
      if (function.has_description) {
        reply.bulk(function.description);
      } else {
        reply.null();
      }
      reply.bulk("flags");
      std::vector<std::string_view> flags;
      for (std::string_view flag_name :
           {"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}) {
        if (function.flags & script_flag_by_name(flag_name)) flags.push_back(flag_name);
      }
      reply.set_header(flags.size());
      for (std::string_view flag : flags) reply.simple_string(flag);
    }
    if (with_code) {
      reply.bulk("library_code");
      reply.bulk(library->code);
    }
  }
}

void ScriptEngine::function_delete(CommandContext& ctx, std::string_view name) {
  if (!libraries_.contains(std::string(name))) {
    ctx.error("ERR Library not found");
    return;
  }
  remove_library(name);
  ctx.reply.simple_string("OK");
}

void ScriptEngine::function_dump(CommandContext& ctx) {
  std::string payload;
  for (const auto& [name, library] : libraries_) {
    payload.push_back(static_cast<char>(kRdbOpcodeFunction2));
    append_rdb_length(&payload, library.code.size());
    payload += library.code;
  }
  payload.push_back(static_cast<char>(kRdbVersion & 0xff));
  payload.push_back(static_cast<char>(kRdbVersion >> 8));
  const uint64_t crc = crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  ctx.reply.bulk(payload);
}

void ScriptEngine::function_restore(CommandContext& ctx) {
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (ctx.args.size() > 4) {
    ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
    return;
  }
  if (ctx.args.size() == 4) {
    std::string_view name = ctx.args[3];
    if (equals_ignore_case(name, "append")) {
      policy = Policy::kAppend;
    } else if (equals_ignore_case(name, "replace")) {
      policy = Policy::kReplace;
    } else if (equals_ignore_case(name, "flush")) {
      policy = Policy::kFlush;
    } else {
      ctx.error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or "
                "REPLACE.");
      return;
    }
  }
  // The footer: RDB version (2 bytes) and CRC64 of everything before it (8 bytes).
  std::string_view payload = ctx.args[2];
  if (payload.size() < 10) {
    ctx.error(kBadPayload);
    return;
  }
  const std::string_view footer = payload.substr(payload.size() - 10);
  const unsigned version = static_cast<unsigned char>(footer[0]) |
                           (static_cast<unsigned>(static_cast<unsigned char>(footer[1])) << 8);
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= uint64_t{static_cast<unsigned char>(footer[2 + i])} << (8 * i);
  if (version > kRdbVersion || crc64(0, payload.substr(0, payload.size() - 8)) != stored) {
    ctx.error(kBadPayload);
    return;
  }
  const std::string_view body = payload.substr(0, payload.size() - 10);
  std::vector<PreparedLibrary> prepared;
  std::string error;
  for (size_t at = 0; at < body.size() && error.empty();) {
    std::string code;
    if (static_cast<unsigned char>(body[at++]) != kRdbOpcodeFunction2) {
      error = "ERR given type is not a function";
    } else if (!read_rdb_string(body, &at, &code)) {
      error = "ERR Failed loading library payload";
    } else if (!prepare_library(code, &prepared.emplace_back(), &error)) {
      prepared.pop_back();
    }
  }
  if (error.empty()) {
    if (policy == Policy::kFlush) {
      while (!libraries_.empty()) remove_library(libraries_.begin()->first);
    }
    install_libraries(prepared, policy == Policy::kReplace, &error);
  }
  if (!error.empty()) {
    for (PreparedLibrary& library : prepared) release(library);
    ctx.error(error);
    return;
  }
  ctx.reply.simple_string("OK");
}

void ScriptEngine::function_stats(CommandContext& ctx) {
  ReplyWriter& reply = ctx.reply;
  reply.map_header(2);
  reply.bulk("running_script");
  if (run_ != nullptr && run_->is_function) {
    reply.map_header(3);
    reply.bulk("name");
    reply.bulk(run_->name);
    reply.bulk("command");
    reply.array_header(run_->ctx->args.size());
    for (std::string_view arg : run_->ctx->args) reply.bulk(arg);
    reply.bulk("duration_ms");
    reply.integer((server_.clock().monotonic_us() - run_->start_us) / 1000);
  } else {
    reply.null();
  }
  reply.bulk("engines");
  reply.map_header(1);
  reply.bulk("LUA");
  reply.map_header(2);
  reply.bulk("libraries_count");
  reply.integer(static_cast<int64_t>(libraries_.size()));
  reply.bulk("functions_count");
  reply.integer(static_cast<int64_t>(functions_.size()));
}

}  // namespace keywarden
