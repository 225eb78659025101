// The libkeywarden umbrella header: #include <keywarden/keywarden.h> for the whole client API.
#pragma once

#include "keywarden/client.h"
#include "keywarden/count_down_latch.h"
#include "keywarden/errors.h"
#include "keywarden/fair_lock.h"
#include "keywarden/fenced_lock.h"
#include "keywarden/lock.h"
#include "keywarden/multi_lock.h"
#include "keywarden/options.h"
#include "keywarden/read_write_lock.h"
#include "keywarden/reply.h"
#include "keywarden/semaphore.h"
#include "keywarden/simple_lock.h"
#include "keywarden/subscriber.h"
