// Registration of the scripting layer's command families (the server layer calls these after
// attaching a ScriptEngine to its ServerState).
#pragma once

namespace keywarden {

class CommandTable;

// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
void register_eval_commands(CommandTable& table);

}  // namespace keywarden
