#include "core/constant_load.h"

namespace aotirt {

namespace {
thread_local ConstantLoadObserver* t_observer = nullptr;
}  // namespace

ConstantLoadObserver* constant_load_observer() { return t_observer; }

ScopedConstantLoadObserver::ScopedConstantLoadObserver(ConstantLoadObserver* o) : previous_(t_observer) {
  t_observer = o;
}

ScopedConstantLoadObserver::~ScopedConstantLoadObserver() { t_observer = previous_; }

}  // namespace aotirt
