// Reading and writing NumPy .npy files for the aotirt command-line tool.
//
// read_npy accepts format versions 1.0, 2.0 and 3.0, little-endian data in C
// or Fortran order, and returns an owned, contiguous CPU tensor. write_npy
// writes C order, format 1.0 (2.0 only when the header does not fit), with a
// header laid out byte for byte as numpy's own writer lays it out.
#pragma once

#include <string>

#include "aotirt/status.h"
#include "aotirt/tensor.h"
#include "aotirt/types.h"

namespace aotirt {
namespace cli {

// Reads |path|. Every malformed file gives a Status naming the path and the
// problem: kNotFound (missing), kIoError (unreadable), kInvalidArgument (not a
// .npy file), kDataLoss (truncated or malformed header, bad shape, truncated
// or trailing data), kUnimplemented (unsupported version, dtype, big-endian).
Result<Tensor> read_npy(const std::string& path);

// Writes |tensor| (a CPU tensor of any strides) to |path| in C order.
// Fails with kInvalidArgument for a device tensor or an undefined one,
// kUnimplemented for a dtype numpy lacks (bfloat16, float8, complex32), and
// kIoError naming |path| when the file cannot be written.
Status write_npy(const std::string& path, const Tensor& tensor);

// Writes |tensor| (a CPU tensor of any dtype that converts to float32) to
// |path| as a float32 array in C order, the way numpy readers want bfloat16
// and float16 outputs. A large contiguous tensor is converted in chunks on
// up to |threads| threads and written as they finish, so no float32 copy of
// the whole tensor is held. Errors as write_npy's; on any error no file is
// left at |path|.
Status write_npy_float32(const std::string& path, const Tensor& tensor, int threads);

// The .npy dtype string for |dtype| ("<f4", "|u1", ...).
Result<std::string> npy_descr(DType dtype);
// The dtype for a .npy dtype string; "=" (native) is read as little-endian.
Result<DType> dtype_from_npy_descr(const std::string& descr);

}  // namespace cli
}  // namespace aotirt
