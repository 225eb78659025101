// The libkeywarden umbrella header: #include <keywarden/keywarden.h> for the whole client API.
#pragma once

#include "keywarden/client.h"
#include "keywarden/errors.h"
#include "keywarden/lock.h"
#include "keywarden/options.h"
#include "keywarden/reply.h"
#include "keywarden/subscriber.h"
