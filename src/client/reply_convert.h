// RespValue (the RESP layer's parse tree) to keywarden::Reply (the public value type).
#pragma once

#include "keywarden/reply.h"
#include "resp/reply_parser.h"

namespace keywarden::detail {

Reply to_reply(RespValue&& value);

}  // namespace keywarden::detail
