// Counts heap allocations made through operator new, so that tests can assert that a hot path
// allocates nothing (or nothing large). The replacement operator new lives in
// allocation_counter_test.cc; counting is global and the tests run on one thread.
#pragma once

#include <cstddef>

namespace keywarden::testing {

struct AllocationStats {
  size_t count = 0;
  size_t largest = 0;
};

// Allocations made since construction, until the object is destroyed or stop() is called.
class AllocationScope {
 public:
  AllocationScope();
  ~AllocationScope();
  AllocationStats stop();

 private:
  bool active_ = true;
};

}  // namespace keywarden::testing
