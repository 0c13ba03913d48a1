// The OpenMP thread budget of concurrent CPU runs.
//
// Every thread that runs a CPU model becomes the master of its own OpenMP
// team in the model's `#pragma omp parallel` kernels (which ask for
// num_threads(<cores at export>)), in oneDNN and in OpenBLAS. With several
// runs in flight those teams oversubscribe the cores, and their spinning
// workers (and OpenBLAS 0.3.21's OpenMP server, which runs one threaded call
// at a time and spins the others) turn 8 concurrent runs of a small model
// into a 100x slowdown (issue #32, item 12; bench/notes.md, CPU section).
//
// A CpuRunThreads scope around each CPU run counts the runs in flight in the
// process. While it is not alone, it gives its thread a budget of
// max(1, T / runs in flight) OpenMP threads, T being the thread's own
// omp_get_max_threads() at entry: omp_set_num_threads (a per-thread ICV) plus
// omp_set_dynamic(1), which is what lets libgomp give a num_threads(N) region
// fewer than N threads (the model's kernels and aotirt's own OpenMP loops
// follow it). oneDNN calls get the thread's own settings back (OnednnThreads
// below), and BLAS calls are made single-threaded (cpu_op_util.cpp). All is
// restored when the scope ends. Nothing is changed for a run that is alone,
// nor anything process-wide (no setenv). With dynamic adjustment on, libgomp
// also subtracts the 15-minute load average from a region's thread count.
#pragma once

namespace aotirt {

class CpuRunThreads {
 public:
  // |cpu|: whether this is a run of a CPU model (otherwise the scope is inert).
  explicit CpuRunThreads(bool cpu);
  ~CpuRunThreads();
  CpuRunThreads(const CpuRunThreads&) = delete;
  CpuRunThreads& operator=(const CpuRunThreads&) = delete;

 private:
  bool counted_ = false;
  bool changed_ = false;
  bool saved_concurrent_ = false;
  int saved_threads_ = 0;
  int saved_dynamic_ = 0;
};

namespace cpu_ops {
// Inside a CpuRunThreads scope that lowered its thread's budget, gives the
// thread its own OpenMP settings back while alive (thread count, dynamic
// adjustment off), and lowers them again after. oneDNN calls are wrapped in
// it: a oneDNN primitive sizes its work for omp_get_max_threads() at its
// creation, is cached across runs (alone or not), and must get that many
// threads when it runs, which dynamic adjustment does not promise. Measured:
// oneDNN at the lowered budget made deep_cnn 2.5x slower at 8 threads
// (bench/notes.md, CPU section).
class OnednnThreads {
 public:
  OnednnThreads();
  ~OnednnThreads();
  OnednnThreads(const OnednnThreads&) = delete;
  OnednnThreads& operator=(const OnednnThreads&) = delete;

 private:
  bool changed_ = false;
};

// True on a thread inside a CpuRunThreads scope that was not alone: its BLAS
// calls are made single-threaded (cpu_op_util.cpp).
bool in_concurrent_cpu_run();
}  // namespace cpu_ops

}  // namespace aotirt
