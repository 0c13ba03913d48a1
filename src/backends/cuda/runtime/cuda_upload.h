// Weight uploads: a model library's host-to-device copies out of the .pt2's
// weights blob, done by aotirt on several threads through pinned buffers
// instead of by the CUDA runtime's pageable-memory path.
//
// A model library loads its weights with one synchronous cudaMemcpy (host to
// device) per constant, from the blob aotirt maps out of the package. The
// runtime copies pageable memory through its own staging buffers on the
// calling thread, at a fraction of what the bus carries. Reading the file
// with pread() on four threads into two pinned 1 MiB buffers each and
// queueing asynchronous copies from them runs several times faster (larger
// buffers cost more to pin than they save), and maps none of the blob's
// pages into the process.
//
// libaotirt's build renames the static CUDA runtime's cudaMemcpy to
// aotirt_cudart_memcpy and defines cudaMemcpy in cuda_upload.cpp, which is
// what model libraries (and aotirt itself) resolve. While an upload is open,
// a copy made on the thread that opened it whose source lies in the upload's
// range is queued and returns at once; any other cudaMemcpy on that thread
// first waits for the queued copies, so the thread's copies stay in program
// order. Every other call goes to the runtime unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "device/device.h"

namespace aotirt {

struct CudaUploadOptions {
  // Reader threads; 0 turns uploads off (the runtime's path).
  int threads = 4;
  // Bytes per pinned buffer; each thread has two.
  size_t piece_bytes = size_t{1} << 20;
  // Ranges smaller than this are left to the runtime: pinning the buffers
  // would cost more than it saves.
  size_t min_bytes = size_t{16} << 20;
};

// The defaults above, with no threads where AOTIRT_CUDA_DISABLE names upload
// and no threshold where it names upload_threshold (cuda_options.h).
CudaUploadOptions cuda_upload_options();

// Opens an upload on device |index| for copies from |data| (|size| bytes,
// mapped from |path| at |file_offset|). Null (and no error) when |options|
// turn uploads off or the range is under min_bytes. Owned by the caller;
// destroying it without finish() waits for the copies and drops their errors.
Result<std::unique_ptr<HostUpload>> cuda_begin_upload(int index, const uint8_t* data, size_t size,
                                                      const std::string& path, uint64_t file_offset,
                                                      const CudaUploadOptions& options);

// Counters of the uploads opened so far in this process (for tests and the
// debug log).
struct CudaUploadStats {
  size_t uploads = 0;        // opened
  size_t copies = 0;         // cudaMemcpy calls taken over
  size_t bytes = 0;          // their bytes
  size_t pageable_bytes = 0; // of those, copied by the runtime after a pinned allocation failed
};
CudaUploadStats cuda_upload_stats();

}  // namespace aotirt
