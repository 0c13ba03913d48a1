// CpuRunThreads (backends/cpu/cpu_run_threads.h).
#include "backends/cpu/cpu_run_threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

namespace aotirt {
namespace {

// CPU runs in flight in the process, over every CPU model: the cores are shared.
std::atomic<int> g_runs_in_flight{0};
thread_local bool t_concurrent = false;
// The settings a CpuRunThreads scope lowered, while it has them lowered.
thread_local bool t_lowered = false;
thread_local int t_full_dynamic = 0, t_full_threads = 0, t_budget = 0;

}  // namespace

CpuRunThreads::CpuRunThreads(bool cpu) {
  if (!cpu) return;
  counted_ = true;
  const int runs = g_runs_in_flight.fetch_add(1, std::memory_order_relaxed) + 1;
  saved_concurrent_ = t_concurrent;
  if (runs <= 1) return;
  t_concurrent = true;
  saved_threads_ = omp_get_max_threads();
  const int budget = std::max(1, saved_threads_ / runs);
  if (budget >= saved_threads_) return;
  saved_dynamic_ = omp_get_dynamic();
  omp_set_dynamic(1);
  omp_set_num_threads(budget);
  changed_ = true;
  t_lowered = true;
  t_full_dynamic = saved_dynamic_;
  t_full_threads = saved_threads_;
  t_budget = budget;
}

CpuRunThreads::~CpuRunThreads() {
  if (!counted_) return;
  if (changed_) {
    omp_set_num_threads(saved_threads_);
    omp_set_dynamic(saved_dynamic_);
    t_lowered = false;
  }
  t_concurrent = saved_concurrent_;
  g_runs_in_flight.fetch_sub(1, std::memory_order_relaxed);
}

namespace cpu_ops {

OnednnThreads::OnednnThreads() {
  if (!t_lowered) return;
  omp_set_dynamic(t_full_dynamic);
  omp_set_num_threads(t_full_threads);
  t_lowered = false;
  changed_ = true;
}

OnednnThreads::~OnednnThreads() {
  if (!changed_) return;
  omp_set_dynamic(1);
  omp_set_num_threads(t_budget);
  t_lowered = true;
}

bool in_concurrent_cpu_run() { return t_concurrent; }
}  // namespace cpu_ops

}  // namespace aotirt
