// oneDNN for the CPU ops of frozen packages (Inductor's freezing=True recipe,
// whose convolutions and linears call mkldnn shims on prepacked weights).
// This file holds what those ops share:
//  * the library, opened with dlopen at the first call (like OpenBLAS), so a
//    deployment that never runs a frozen model never loads it;
//  * the reading of a prepacked weight's descriptor, which PyTorch's own
//    oneDNN serialized into the package; aotirt decodes it itself, so any
//    oneDNN 3.x can run the package, not only the one torch was built with;
//  * OnednnContext: engine, per-thread streams and a bounded LRU cache of
//    primitives, keyed by everything that shapes one;
//  * post-op lists built from the attr strings the shims receive.
// Only built when CMake found oneDNN's headers (AOTIRT_WITH_ONEDNN).
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"

namespace aotirt {
namespace cpu_ops {

// A plain convolution (aten::convolution, not transposed; float32, bfloat16
// or float16) on oneDNN, written into |out|, whose sizes and strides the
// caller chose. stride, padding and dilation hold |spatial| values each. The
// weight is reordered for oneDNN's kernel on each call, as PyTorch's own CPU
// convolution does. UNAVAILABLE when this build has no oneDNN or the library
// cannot be loaded, so that the caller can compute it another way.
Status onednn_convolution_into(const TensorImpl& x, const TensorImpl& w, const TensorImpl* bias,
                               const int64_t* stride, const int64_t* padding, const int64_t* dilation,
                               int64_t groups, const TensorImpl& out);

// c = a @ b for 3-d a [B, M, K], b [B, K, N] and c [B, M, N] of one dtype,
// bfloat16 or float16, each a batch of row- or column-major matrices, on
// oneDNN's matmul (its kernels read both in their own precision; PyTorch's
// CPU matmul does the same). UNAVAILABLE without oneDNN, UNIMPLEMENTED for
// what it does not take (a batch broadcast by a zero stride, matrices with
// no unit stride, another dtype), so that the caller can compute it
// another way.
Status onednn_matmul_into(const TensorImpl& a, const TensorImpl& b, const TensorImpl& c);

// Opens oneDNN now (the ops open it at their first call), for a load that
// wants it ready by the first run. The status is the library's.
Status onednn_open();
// Drops the cached primitives, if oneDNN is open (the CPU device does, when
// its last model unloads).
void onednn_release_primitives();

}  // namespace cpu_ops
}  // namespace aotirt

#if AOTIRT_WITH_ONEDNN

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"

namespace aotirt {
namespace cpu_ops {

// The C entry points aotirt calls, resolved from the library by name.
#define AOTIRT_ONEDNN_FUNCTIONS(X)                   \
  X(dnnl_version)                                    \
  X(dnnl_engine_create)                              \
  X(dnnl_engine_destroy)                             \
  X(dnnl_stream_create)                              \
  X(dnnl_stream_wait)                                \
  X(dnnl_stream_destroy)                             \
  X(dnnl_memory_desc_create_with_tag)                \
  X(dnnl_memory_desc_create_with_strides)            \
  X(dnnl_memory_desc_destroy)                        \
  X(dnnl_memory_desc_query)                          \
  X(dnnl_memory_desc_get_size)                       \
  X(dnnl_memory_desc_equal)                          \
  X(dnnl_memory_create)                              \
  X(dnnl_memory_destroy)                             \
  X(dnnl_primitive_attr_create)                      \
  X(dnnl_primitive_attr_destroy)                     \
  X(dnnl_primitive_attr_set_post_ops)                \
  X(dnnl_primitive_attr_set_scratchpad_mode)         \
  X(dnnl_primitive_attr_set_scales_mask)             \
  X(dnnl_primitive_attr_set_zero_points_mask)        \
  X(dnnl_post_ops_create)                            \
  X(dnnl_post_ops_destroy)                           \
  X(dnnl_post_ops_append_eltwise)                    \
  X(dnnl_post_ops_append_sum)                        \
  X(dnnl_post_ops_append_binary)                     \
  X(dnnl_convolution_forward_primitive_desc_create)  \
  X(dnnl_inner_product_forward_primitive_desc_create) \
  X(dnnl_deconvolution_forward_primitive_desc_create) \
  X(dnnl_matmul_primitive_desc_create)               \
  X(dnnl_lstm_forward_primitive_desc_create)         \
  X(dnnl_reorder_primitive_desc_create)              \
  X(dnnl_primitive_desc_query_md)                    \
  X(dnnl_primitive_desc_destroy)                     \
  X(dnnl_primitive_create)                           \
  X(dnnl_primitive_destroy)                          \
  X(dnnl_primitive_execute)

struct OnednnApi {
#define AOTIRT_ONEDNN_MEMBER(name) decltype(&::name) name = nullptr;
  AOTIRT_ONEDNN_FUNCTIONS(AOTIRT_ONEDNN_MEMBER)
#undef AOTIRT_ONEDNN_MEMBER
};

// Turns a oneDNN status into aotirt's (UNIMPLEMENTED when oneDNN has no
// kernel for the case), naming |what| was attempted.
Status onednn_status(dnnl_status_t s, const char* what);
#define AOTIRT_DNNL_CHECK(call, what) AOTIRT_RETURN_IF_ERROR(::aotirt::cpu_ops::onednn_status((call), (what)))

// An owned memory descriptor.
struct MemoryDesc {
  dnnl_memory_desc_t md = nullptr;
  MemoryDesc() = default;
  explicit MemoryDesc(dnnl_memory_desc_t m) : md(m) {}
  MemoryDesc(const MemoryDesc&) = delete;
  MemoryDesc& operator=(const MemoryDesc&) = delete;
  MemoryDesc(MemoryDesc&& o) noexcept : md(o.md) { o.md = nullptr; }
  MemoryDesc& operator=(MemoryDesc&& o) noexcept;
  ~MemoryDesc();
};

// A memory descriptor for a strided tensor: |sizes| and |strides| as given
// (the dims oneDNN sees may differ from the tensor's, e.g. a [M, K] view).
Result<MemoryDesc> strided_desc(const int64_t* sizes, const int64_t* strides, int ndims, DType dtype);
Result<dnnl_data_type_t> onednn_dtype(DType dtype, const char* what);
// onednn_dtype, and also the integer types the quantized ops move (int8,
// uint8, int32): for descriptors of data the caller already checked.
Result<dnnl_data_type_t> onednn_storage_dtype(DType dtype, const char* what);

// The layout of a prepacked weight, as PyTorch's oneDNN serialized it
// (torch 2.11: oneDNN 3.10's memory descriptor, then the group count).
// Floating weights, and the int8 ones of the quantized ops.
struct BlockedLayout {
  int ndims = 0;
  int64_t dims[12] = {};
  int64_t padded_dims[12] = {};
  DType dtype = DType::kFloat32;
  int64_t strides[12] = {};  // of the outermost blocks, in elements
  int nblks = 0;             // inner blocks, outermost first
  int64_t blks[12] = {};
  int idxs[12] = {};  // the dim each inner block splits
  int64_t groups = 1;
  uint64_t extra_flags = 0;  // int8 compensation stored after the weights

  // Elements the layout spans (padding included).
  int64_t span() const;
  // Element offset of logical index |idx| (ndims values).
  int64_t offset(const int64_t* idx) const;
  std::string to_string() const;
};

// Decodes and checks a serialized descriptor; INVALID_ARGUMENT naming what
// is wrong (unknown format, blocks that do not divide the padding, ...).
Result<BlockedLayout> parse_blocked_layout(const uint8_t* blob, size_t size);
// Copies the weight laid out as |layout| at |src| into |dst|, dense and
// row-major over layout.dims (the padding is dropped).
void unpack_blocked(const BlockedLayout& layout, const void* src, void* dst);
// True when |md| describes exactly |layout| (so the packed bytes can be used as they are).
bool same_layout(const OnednnApi& api, const BlockedLayout& layout, const_dnnl_memory_desc_t md);

// One cached primitive and the descriptors its arguments must match.
struct OnednnPrimitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  // Owned by |pd|.
  const_dnnl_memory_desc_t weights_md = nullptr;
  size_t scratchpad_bytes = 0;
  std::string weights_key;  // identifies weights_md, for the prepared-weight cache
  // The descriptors of the arguments, by DNNL_ARG_* id (owned by |pd|, or
  // by the caller for a reorder).
  std::vector<std::pair<int, const_dnnl_memory_desc_t>> arg_mds;
  // A primitive that picked its own activation layouts keeps the callers'
  // strided descriptors here when they differ from the ones it picked; the
  // activations are reordered in and out around it.
  MemoryDesc user_src, user_dst;
  // Descriptors the caller made for arg_mds (runtime scales, zero points).
  std::vector<MemoryDesc> owned_mds;
  ~OnednnPrimitive();
  const_dnnl_memory_desc_t md_for(int arg) const;
};

// The library, its engine and a bounded cache of primitives. One per process
// (onednn_context()): primitives hold JIT code that any model may reuse. At
// most kDefaultCapacity primitives are kept; the least recently used goes
// first.
class OnednnContext {
 public:
  static constexpr size_t kDefaultCapacity = 256;
  ~OnednnContext();

  const OnednnApi& api() const { return api_; }
  dnnl_engine_t engine() const { return engine_; }
  // The calling thread's stream (oneDNN's CPU streams run in the caller).
  Result<dnnl_stream_t> stream();

  using Factory = std::function<Result<std::shared_ptr<OnednnPrimitive>>()>;
  // The primitive cached under |key|, or a new one from |make|.
  Result<std::shared_ptr<OnednnPrimitive>> primitive(const std::string& key, const Factory& make);
  size_t cached_primitives() const;
  // Drops every cached primitive (one still running elsewhere lives on
  // through its shared_ptr).
  void clear();
  size_t capacity() const { return capacity_; }
  void set_capacity_for_testing(size_t capacity);

  // Runs |p| with |args| (scratchpad added here, from aotirt's allocator)
  // and waits for it.
  Status execute(const OnednnPrimitive& p, const std::vector<std::pair<int, void*>>& args);
  // Builds a primitive descriptor's primitive and argument descriptors.
  Result<std::shared_ptr<OnednnPrimitive>> finish(dnnl_primitive_desc_t pd, std::vector<int> arg_ids);
  // A copy of the |from|-described bytes at |src| in |to|'s layout, in memory
  // that lives as long as the returned pointer.
  Result<std::shared_ptr<const void>> reorder(const_dnnl_memory_desc_t from, const void* src,
                                              const_dnnl_memory_desc_t to);
  // Copies the |from|-described bytes at |src| into |dst| in |to|'s layout,
  // with a reorder primitive kept in the cache.
  Status reorder_into(const_dnnl_memory_desc_t from, const void* src, const_dnnl_memory_desc_t to, void* dst);

 private:
  friend Result<OnednnContext*> onednn_context();
  OnednnContext() = default;
  Status init();

  OnednnApi api_;
  void* library_ = nullptr;
  dnnl_engine_t engine_ = nullptr;
  size_t capacity_ = kDefaultCapacity;
  mutable std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<OnednnPrimitive>>> lru_;  // most recent first
  std::unordered_map<std::string, decltype(lru_)::iterator> index_;
};

// Opens oneDNN on first use; UNAVAILABLE, naming the library and
// AOTIRT_ONEDNN_LIBRARY, when it cannot be loaded or is not oneDNN 3.x.
Result<OnednnContext*> onednn_context();
// The context if oneDNN was opened already, else null (opens nothing).
OnednnContext* onednn_context_if_open();

// Unary post-op from the shims' attr string: "none", "relu", "leaky_relu"
// (scalar: negative slope), "hardtanh" (min, max), "gelu" (algorithm "none"
// or "tanh"), "tanh", "sigmoid", "swish"/"silu", "hardswish", "hardsigmoid".
// Scalars may be null pointers (the generated code passes {nullptr} when it
// has none). INVALID_ARGUMENT for an unknown name or missing scalar.
struct UnaryPostOp {
  bool present = false;
  dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
  float alpha = 0.f, beta = 0.f;
};
Result<UnaryPostOp> parse_unary(const char* attr, const double** scalars, int64_t scalars_len,
                                const char* algorithm);
// Binary post-op from "add", "sub", "mul", "div".
Result<dnnl_alg_kind_t> parse_binary(const char* attr);

// What a weight argument is: prepacked (layout _mkldnn, with its decoded
// descriptor) or a plain strided tensor.
struct WeightInfo {
  const TensorImpl* tensor = nullptr;
  bool packed = false;
  BlockedLayout layout;  // when packed
};
Result<WeightInfo> read_weight(const TensorImpl& w);

// The weight in the layout |p| wants: the stored bytes themselves when they
// already are, else a copy made once per weight and layout and kept with the
// weight's storage when that storage is immutable (a model parameter, or a
// prepacked weight). Any other weight may change between calls and is
// copied on every call. A plain weight is read as |plain_dims|: its dense
// copy when |plain_strides| is null, else its own memory with those strides
// (a permuted view, as a transposed convolution's weight).
Result<std::shared_ptr<const void>> prepared_weight(OnednnContext& ctx, const OnednnPrimitive& p,
                                                    const WeightInfo& w, const int64_t* plain_dims, int plain_ndims,
                                                    const int64_t* plain_strides = nullptr);

// A stable description of |md| for cache keys (blocked formats in full).
std::string describe_md(const OnednnApi& api, const_dnnl_memory_desc_t md);

}  // namespace cpu_ops
}  // namespace aotirt

#endif  // AOTIRT_WITH_ONEDNN
