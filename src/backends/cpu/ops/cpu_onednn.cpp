#include "backends/cpu/ops/cpu_onednn.h"

#if AOTIRT_WITH_ONEDNN

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_run_threads.h"
#include "backends/cpu/cpu_options.h"
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace cpu_ops {

Status onednn_status(dnnl_status_t s, const char* what) {
  switch (s) {
    case dnnl_success: return Status();
    case dnnl_unimplemented:
      return AOTIRT_STATUS(kUnimplemented, "oneDNN has no implementation for {}", what);
    case dnnl_out_of_memory: return AOTIRT_STATUS(kResourceExhausted, "oneDNN ran out of memory in {}", what);
    case dnnl_invalid_arguments: return AOTIRT_STATUS(kInvalidArgument, "oneDNN refused the arguments of {}", what);
    default: return AOTIRT_STATUS(kInternal, "oneDNN failed in {} (status {})", what, static_cast<int>(s));
  }
}

namespace {

const OnednnApi* g_api = nullptr;  // set once the context exists; MemoryDesc needs it to free

}  // namespace

MemoryDesc& MemoryDesc::operator=(MemoryDesc&& o) noexcept {
  if (this != &o) {
    if (md && g_api) g_api->dnnl_memory_desc_destroy(md);
    md = o.md;
    o.md = nullptr;
  }
  return *this;
}

MemoryDesc::~MemoryDesc() {
  if (md && g_api) g_api->dnnl_memory_desc_destroy(md);
}

Result<dnnl_data_type_t> onednn_dtype(DType dtype, const char* what) {
  switch (dtype) {
    case DType::kFloat32: return dnnl_f32;
    case DType::kBFloat16: return dnnl_bf16;
    case DType::kFloat16: return dnnl_f16;
    default:
      return AOTIRT_STATUS(kUnimplemented, "'{}' has dtype {}; the oneDNN ops take float32, bfloat16 and float16",
                           what, dtype_name(dtype));
  }
}

Result<dnnl_data_type_t> onednn_storage_dtype(DType dtype, const char* what) {
  switch (dtype) {
    case DType::kInt8: return dnnl_s8;
    case DType::kUInt8: return dnnl_u8;
    case DType::kInt32: return dnnl_s32;
    default: return onednn_dtype(dtype, what);
  }
}

Result<MemoryDesc> strided_desc(const int64_t* sizes, const int64_t* strides, int ndims, DType dtype) {
  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  AOTIRT_ASSIGN_OR_RETURN(dnnl_data_type_t dt, onednn_storage_dtype(dtype, "tensor"));
  AOTIRT_ENSURE(ndims >= 1 && ndims <= DNNL_MAX_NDIMS, kInvalidArgument, "{} dims do not fit oneDNN", ndims);
  dnnl_dims_t d, s;
  for (int i = 0; i < ndims; ++i) {
    d[i] = sizes[i];
    // oneDNN wants a stride for size-1 dims too; any non-negative value works.
    s[i] = strides[i];
  }
  MemoryDesc out;
  AOTIRT_DNNL_CHECK(ctx->api().dnnl_memory_desc_create_with_strides(&out.md, ndims, d, dt, s),
                    "a strided memory descriptor");
  return out;
}

// ---- prepacked weights ----------------------------------------------------

namespace {

// torch 2.11's _get_mkldnn_serialized_md: oneDNN 3.10's 768-byte memory
// descriptor, then the group count as int32. Offsets inside the descriptor,
// read from packages torch wrote (blocked weights of linears, plain, grouped
// and 1x1 convolutions, float32 and bfloat16).
constexpr size_t kBlobSize = 772;
constexpr size_t kOffHeader = 0;  // int32, 1 in every descriptor seen
constexpr size_t kOffNdims = 4;
constexpr size_t kOffDims = 8;
constexpr size_t kOffDataType = 104;
constexpr size_t kOffPaddedDims = 112;
constexpr size_t kOffPaddedOffsets = 208;
constexpr size_t kOffOffset0 = 304;
constexpr size_t kOffFormatKind = 312;
constexpr size_t kOffStrides = 320;
constexpr size_t kOffInnerNblks = 416;
constexpr size_t kOffInnerBlks = 424;
constexpr size_t kOffInnerIdxs = 520;
constexpr size_t kOffExtraFlags = 640;
constexpr size_t kOffGroups = 768;
constexpr int kMaxDims = 12;
constexpr int kFormatBlocked = 2;
// oneDNN's memory_extra_flags: compensation for s8 sources, and for
// sources with a zero point.
constexpr uint64_t kExtraCompensationS8S8 = 0x1, kExtraCompensationAsymmetricSrc = 0x8;
// oneDNN's data type numbers (dnnl_data_type_t), fixed across 3.x.
constexpr int kDnnlF16 = 1, kDnnlBf16 = 2, kDnnlF32 = 3, kDnnlS8 = 5, kDnnlU8 = 6;

template <class T>
T read_at(const uint8_t* blob, size_t off) {
  T v;
  std::memcpy(&v, blob + off, sizeof(T));
  return v;
}

// Per logical dim, the product of its inner blocks.
void block_products(const BlockedLayout& l, int64_t* per_dim) {
  for (int d = 0; d < l.ndims; ++d) per_dim[d] = 1;
  for (int k = 0; k < l.nblks; ++k) per_dim[l.idxs[k]] *= l.blks[k];
}

}  // namespace

int64_t BlockedLayout::span() const {
  int64_t per_dim[kMaxDims];
  block_products(*this, per_dim);
  int64_t inner = 1;
  for (int k = 0; k < nblks; ++k) inner *= blks[k];
  int64_t last = 0;
  for (int d = 0; d < ndims; ++d) last += (padded_dims[d] / per_dim[d] - 1) * strides[d];
  return last + inner;
}

int64_t BlockedLayout::offset(const int64_t* idx) const {
  int64_t per_dim[kMaxDims];
  block_products(*this, per_dim);
  int64_t off = 0;
  for (int d = 0; d < ndims; ++d) off += (idx[d] / per_dim[d]) * strides[d];
  // Inside the innermost block: a mixed-radix number whose digits are the
  // blocks in order; a dim split by several blocks gives each the matching
  // digit of its index (its outermost block the most significant).
  int64_t rest[kMaxDims];
  for (int d = 0; d < ndims; ++d) rest[d] = per_dim[d];
  int64_t inner = 0;
  for (int k = 0; k < nblks; ++k) {
    const int d = idxs[k];
    rest[d] /= blks[k];
    inner = inner * blks[k] + (idx[d] / rest[d]) % blks[k];
  }
  return off + inner;
}

std::string BlockedLayout::to_string() const {
  std::string s = "dims " + dims_to_string(dims, ndims) + " padded " + dims_to_string(padded_dims, ndims) +
                  " strides " + dims_to_string(strides, ndims) + " blocks";
  for (int k = 0; k < nblks; ++k) s += " " + std::to_string(blks[k]) + "@" + std::to_string(idxs[k]);
  return s;
}

Result<BlockedLayout> parse_blocked_layout(const uint8_t* blob, size_t size) {
  AOTIRT_ENSURE(blob != nullptr, kInvalidArgument, "the weight has no oneDNN descriptor");
  AOTIRT_ENSURE(size == kBlobSize, kUnimplemented,
                "the weight's oneDNN descriptor has {} bytes; aotirt reads the {}-byte form torch 2.11 writes", size,
                kBlobSize);
  const int32_t header = read_at<int32_t>(blob, kOffHeader);
  AOTIRT_ENSURE(header == 1, kUnimplemented, "the weight's oneDNN descriptor starts with {}, not 1: unknown form",
                header);
  BlockedLayout l;
  l.ndims = read_at<int32_t>(blob, kOffNdims);
  AOTIRT_ENSURE(l.ndims >= 1 && l.ndims <= 6, kInvalidArgument, "the weight's descriptor has {} dims", l.ndims);
  const int32_t fk = read_at<int32_t>(blob, kOffFormatKind);
  AOTIRT_ENSURE(fk == kFormatBlocked, kUnimplemented,
                "the weight's descriptor has format kind {}; only blocked layouts are supported", fk);
  const int32_t dt = read_at<int32_t>(blob, kOffDataType);
  switch (dt) {
    case kDnnlF32: l.dtype = DType::kFloat32; break;
    case kDnnlBf16: l.dtype = DType::kBFloat16; break;
    case kDnnlF16: l.dtype = DType::kFloat16; break;
    case kDnnlS8: l.dtype = DType::kInt8; break;
    case kDnnlU8: l.dtype = DType::kUInt8; break;
    default:
      return AOTIRT_STATUS(kUnimplemented, "the weight's descriptor has oneDNN data type {}; float32, bfloat16, "
                                           "float16, int8 and uint8 are supported", dt);
  }
  AOTIRT_ENSURE(read_at<int64_t>(blob, kOffOffset0) == 0, kUnimplemented, "the weight's descriptor has an offset");
  // Extra data: an int8 weight may carry the compensation oneDNN's kernels
  // add for a signed or zero-pointed source, stored after the weights. The
  // weights themselves are as laid out; the compensation is recomputed when
  // they are repacked for a primitive. A weight scaled for s8s8 kernels
  // (scale_adjust) is not the weight, and anything else is unknown.
  l.extra_flags = read_at<uint64_t>(blob, kOffExtraFlags);
  if (l.extra_flags != 0) {
    AOTIRT_ENSURE(l.dtype == DType::kInt8, kUnimplemented,
                  "the {} weight's descriptor carries extra data (compensation for int8): unsupported",
                  dtype_name(l.dtype));
    AOTIRT_ENSURE((l.extra_flags & ~(kExtraCompensationS8S8 | kExtraCompensationAsymmetricSrc)) == 0,
                  kUnimplemented,
                  "the int8 weight's descriptor carries extra data with flags {:#x}; aotirt reads only "
                  "compensation (0x1, 0x8)",
                  l.extra_flags);
  }
  for (int d = 0; d < l.ndims; ++d) {
    l.dims[d] = read_at<int64_t>(blob, kOffDims + 8 * d);
    l.padded_dims[d] = read_at<int64_t>(blob, kOffPaddedDims + 8 * d);
    l.strides[d] = read_at<int64_t>(blob, kOffStrides + 8 * d);
    AOTIRT_ENSURE(l.dims[d] >= 1 && l.padded_dims[d] >= l.dims[d] && l.strides[d] >= 0, kInvalidArgument,
                  "the weight's descriptor has dim {} of size {}, padded {}, stride {}", d, l.dims[d],
                  l.padded_dims[d], l.strides[d]);
    AOTIRT_ENSURE(read_at<int64_t>(blob, kOffPaddedOffsets + 8 * d) == 0, kUnimplemented,
                  "the weight's descriptor has padded offsets");
  }
  l.nblks = read_at<int32_t>(blob, kOffInnerNblks);
  AOTIRT_ENSURE(l.nblks >= 0 && l.nblks <= kMaxDims, kInvalidArgument, "the weight's descriptor has {} blocks",
                l.nblks);
  for (int k = 0; k < l.nblks; ++k) {
    l.blks[k] = read_at<int64_t>(blob, kOffInnerBlks + 8 * k);
    const int64_t idx = read_at<int64_t>(blob, kOffInnerIdxs + 8 * k);
    AOTIRT_ENSURE(l.blks[k] >= 1 && idx >= 0 && idx < l.ndims, kInvalidArgument,
                  "the weight's descriptor has block {} of size {} on dim {}", k, l.blks[k], idx);
    l.idxs[k] = static_cast<int>(idx);
  }
  int64_t per_dim[kMaxDims];
  block_products(l, per_dim);
  for (int d = 0; d < l.ndims; ++d)
    AOTIRT_ENSURE(l.padded_dims[d] % per_dim[d] == 0, kInvalidArgument,
                  "the weight's descriptor pads dim {} to {}, not a multiple of its blocks ({})", d,
                  l.padded_dims[d], per_dim[d]);
  l.groups = read_at<int32_t>(blob, kOffGroups);
  AOTIRT_ENSURE(l.groups >= 1, kInvalidArgument, "the weight's descriptor has {} groups", l.groups);
  return l;
}

void unpack_blocked(const BlockedLayout& l, const void* src, void* dst) {
  const size_t elem = dtype_size(l.dtype);
  int64_t count = 1;
  for (int d = 0; d < l.ndims; ++d) count *= l.dims[d];
  const char* s = static_cast<const char*>(src);
  char* o = static_cast<char*>(dst);
#pragma omp parallel for schedule(static) if (count > 65536)
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t idx[kMaxDims];
    int64_t rem = flat;
    for (int d = l.ndims - 1; d >= 0; --d) {
      idx[d] = rem % l.dims[d];
      rem /= l.dims[d];
    }
    std::memcpy(o + flat * elem, s + l.offset(idx) * elem, elem);
  }
}

bool same_layout(const OnednnApi& api, const BlockedLayout& l, const_dnnl_memory_desc_t md) {
  // A weight with compensation is repacked: the primitive's may differ.
  if (l.extra_flags != 0) return false;
  int ndims = 0, nblks = 0;
  dnnl_format_kind_t fk = dnnl_format_kind_undef;
  dnnl_data_type_t dt = dnnl_data_type_undef;
  const dnnl_dims_t *dims = nullptr, *padded = nullptr, *strides = nullptr, *blks = nullptr, *idxs = nullptr;
  if (api.dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &ndims) != dnnl_success || ndims != l.ndims) return false;
  if (api.dnnl_memory_desc_query(md, dnnl_query_format_kind, &fk) != dnnl_success || fk != dnnl_blocked) return false;
  if (api.dnnl_memory_desc_query(md, dnnl_query_data_type, &dt) != dnnl_success) return false;
  auto expected_dt = onednn_storage_dtype(l.dtype, "weight");
  if (!expected_dt.ok() || dt != *expected_dt) return false;
  if (api.dnnl_memory_desc_query(md, dnnl_query_dims, &dims) != dnnl_success ||
      api.dnnl_memory_desc_query(md, dnnl_query_padded_dims, &padded) != dnnl_success ||
      api.dnnl_memory_desc_query(md, dnnl_query_strides, &strides) != dnnl_success ||
      api.dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &nblks) != dnnl_success ||
      api.dnnl_memory_desc_query(md, dnnl_query_inner_blks, &blks) != dnnl_success ||
      api.dnnl_memory_desc_query(md, dnnl_query_inner_idxs, &idxs) != dnnl_success)
    return false;
  if (nblks != l.nblks) return false;
  for (int d = 0; d < ndims; ++d)
    if ((*dims)[d] != l.dims[d] || (*padded)[d] != l.padded_dims[d] || (*strides)[d] != l.strides[d]) return false;
  for (int k = 0; k < nblks; ++k)
    if ((*blks)[k] != l.blks[k] || (*idxs)[k] != l.idxs[k]) return false;
  // A descriptor with extra data (int8 compensation) reports a larger size.
  int64_t elems = l.span();
  return api.dnnl_memory_desc_get_size(md) == static_cast<size_t>(elems) * dtype_size(l.dtype);
}

std::string describe_md(const OnednnApi& api, const_dnnl_memory_desc_t md) {
  int ndims = 0, nblks = 0;
  dnnl_format_kind_t fk = dnnl_format_kind_undef;
  dnnl_data_type_t dt = dnnl_data_type_undef;
  api.dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &ndims);
  api.dnnl_memory_desc_query(md, dnnl_query_format_kind, &fk);
  api.dnnl_memory_desc_query(md, dnnl_query_data_type, &dt);
  std::string s = "fk" + std::to_string(static_cast<int>(fk)) + " dt" + std::to_string(static_cast<int>(dt)) +
                  " size" + std::to_string(api.dnnl_memory_desc_get_size(md));
  const dnnl_dims_t* v = nullptr;
  auto add = [&](dnnl_query_t q, int n, const char* tag) {
    if (api.dnnl_memory_desc_query(md, q, &v) == dnnl_success && v) s += std::string(" ") + tag + dims_to_string(*v, n);
  };
  add(dnnl_query_dims, ndims, "d");
  if (fk == dnnl_blocked) {
    api.dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &nblks);
    add(dnnl_query_padded_dims, ndims, "p");
    add(dnnl_query_strides, ndims, "s");
    add(dnnl_query_inner_blks, nblks, "b");
    add(dnnl_query_inner_idxs, nblks, "i");
  }
  return s;
}

// ---- primitives -------------------------------------------------------------

OnednnPrimitive::~OnednnPrimitive() {
  if (!g_api) return;
  if (primitive) g_api->dnnl_primitive_destroy(primitive);
  if (pd) g_api->dnnl_primitive_desc_destroy(pd);
}

const_dnnl_memory_desc_t OnednnPrimitive::md_for(int arg) const {
  for (const auto& a : arg_mds)
    if (a.first == arg) return a.second;
  return nullptr;
}

OnednnContext::~OnednnContext() {
  // The process is ending; oneDNN's own teardown may already have run.
}

Status OnednnContext::init() {
  const std::string& name = cpu_options().onednn_library;
  // Local scope: only these entry points are used, and oneDNN's own symbols
  // must not bind the model library's. The search follows libaotirt.so's
  // RUNPATH, which names the directory the build found oneDNN in.
  library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* why = dlerror();
    return AOTIRT_STATUS(kUnavailable,
                         "frozen (freezing=True) CPU models need oneDNN 3.x, which could not be loaded ({}): {}; "
                         "install it (scripts/setup.sh: pip's onednn-cpu-gomp) or point AOTIRT_ONEDNN_LIBRARY at "
                         "a libdnnl.so.3 built with GNU OpenMP",
                         name, why ? why : "unknown error");
  }
#define AOTIRT_ONEDNN_RESOLVE(fn)                                                                    \
  api_.fn = reinterpret_cast<decltype(api_.fn)>(dlsym(library_, #fn));                              \
  if (!api_.fn)                                                                                      \
    return AOTIRT_STATUS(kUnavailable, "{} lacks {}: it is not oneDNN 3.x (aotirt uses its 3.x API)", \
                         name, #fn);
  AOTIRT_ONEDNN_FUNCTIONS(AOTIRT_ONEDNN_RESOLVE)
#undef AOTIRT_ONEDNN_RESOLVE
  const dnnl_version_t* v = api_.dnnl_version();
  AOTIRT_ENSURE(v && v->major == 3, kUnavailable, "{} is oneDNN {}.{}; aotirt needs 3.x", name, v ? v->major : 0,
                v ? v->minor : 0);
  AOTIRT_DNNL_CHECK(api_.dnnl_engine_create(&engine_, dnnl_cpu, 0), "creating the CPU engine");
  return Status();
}

namespace {
std::atomic<OnednnContext*> g_open_context{nullptr};
}  // namespace

OnednnContext* onednn_context_if_open() { return g_open_context.load(std::memory_order_acquire); }

Result<OnednnContext*> onednn_context() {
  // Created once and kept for the process: the library and its engine stay,
  // and the OpenMP pool outlives any one model. Its primitives are dropped
  // when the CPU device's last model unloads.
  static OnednnContext* ctx = nullptr;
  static Status status = [] {
    auto* c = new OnednnContext();
    Status s = c->init();
    if (s.ok()) {
      ctx = c;
      g_api = &c->api_;
      g_open_context.store(c, std::memory_order_release);
    } else {
      delete c;
    }
    return s;
  }();
  if (!status.ok()) return status;
  return ctx;
}

Result<dnnl_stream_t> OnednnContext::stream() {
  // One per thread: a stream is not meant to be shared between threads.
  struct ThreadStream {
    dnnl_stream_t s = nullptr;
    ~ThreadStream() {
      if (s && g_api) g_api->dnnl_stream_destroy(s);
    }
  };
  thread_local ThreadStream ts;
  if (!ts.s) AOTIRT_DNNL_CHECK(api_.dnnl_stream_create(&ts.s, engine_, dnnl_stream_default_flags), "a stream");
  return ts.s;
}

Result<std::shared_ptr<OnednnPrimitive>> OnednnContext::primitive(const std::string& key, const Factory& make) {
  OnednnThreads threads;  // primitives are made for the thread's own OpenMP settings (cpu_run_threads.h)
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  // Built outside the lock: creating a primitive compiles its kernel (a few
  // milliseconds), and other shapes need not wait for it.
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> p, make());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;  // another thread won
  lru_.emplace_front(key, p);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();  // a primitive still running elsewhere stays alive through its shared_ptr
  }
  return p;
}

void OnednnContext::clear() {
  std::list<std::pair<std::string, std::shared_ptr<OnednnPrimitive>>> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  dropped.swap(lru_);
  index_.clear();
}

size_t OnednnContext::cached_primitives() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

void OnednnContext::set_capacity_for_testing(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = capacity < 1 ? 1 : capacity;
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

Result<std::shared_ptr<OnednnPrimitive>> OnednnContext::finish(dnnl_primitive_desc_t pd, std::vector<int> arg_ids) {
  auto p = std::make_shared<OnednnPrimitive>();
  p->pd = pd;
  AOTIRT_DNNL_CHECK(api_.dnnl_primitive_create(&p->primitive, pd), "creating a primitive");
  p->weights_md = api_.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  if (p->weights_md) p->weights_key = describe_md(api_, p->weights_md);
  const_dnnl_memory_desc_t scratch = api_.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  p->scratchpad_bytes = scratch ? api_.dnnl_memory_desc_get_size(scratch) : 0;
  for (int id : arg_ids) {
    const_dnnl_memory_desc_t md = api_.dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, id);
    AOTIRT_ENSURE(md != nullptr, kInternal, "oneDNN primitive has no descriptor for argument {}", id);
    p->arg_mds.emplace_back(id, md);
  }
  return p;
}

Status OnednnContext::execute(const OnednnPrimitive& p, const std::vector<std::pair<int, void*>>& args) {
  OnednnThreads threads;
  AOTIRT_ASSIGN_OR_RETURN(dnnl_stream_t s, stream());
  std::vector<dnnl_exec_arg_t> exec;
  std::vector<dnnl_memory_t> mems;
  struct Cleanup {
    const OnednnApi& api;
    std::vector<dnnl_memory_t>& mems;
    ~Cleanup() {
      for (dnnl_memory_t m : mems) api.dnnl_memory_destroy(m);
    }
  } cleanup{api_, mems};
  auto add = [&](int id, const_dnnl_memory_desc_t md, void* data) -> Status {
    dnnl_memory_t m = nullptr;
    AOTIRT_DNNL_CHECK(api_.dnnl_memory_create(&m, md, engine_, data), "wrapping an argument");
    mems.push_back(m);
    exec.push_back(dnnl_exec_arg_t{id, m});
    return Status();
  };
  for (const auto& a : args) {
    const_dnnl_memory_desc_t md = a.first == DNNL_ARG_WEIGHTS && p.weights_md ? p.weights_md : p.md_for(a.first);
    AOTIRT_ENSURE(md != nullptr, kInternal, "no descriptor for oneDNN argument {}", a.first);
    AOTIRT_RETURN_IF_ERROR(add(a.first, md, a.second));
  }
  TensorImpl scratch;
  if (p.scratchpad_bytes > 0) {
    AOTIRT_ASSIGN_OR_RETURN(scratch, empty_contiguous(DimVector{static_cast<int64_t>(p.scratchpad_bytes)},
                                                      DType::kUInt8, DeviceId{}));
    const_dnnl_memory_desc_t md = api_.dnnl_primitive_desc_query_md(p.pd, dnnl_query_scratchpad_md, 0);
    AOTIRT_RETURN_IF_ERROR(add(DNNL_ARG_SCRATCHPAD, md, scratch.data_ptr()));
  }
  AOTIRT_DNNL_CHECK(api_.dnnl_primitive_execute(p.primitive, s, static_cast<int>(exec.size()), exec.data()),
                    "running a primitive");
  AOTIRT_DNNL_CHECK(api_.dnnl_stream_wait(s), "waiting for a primitive");
  return Status();
}

Result<std::shared_ptr<const void>> OnednnContext::reorder(const_dnnl_memory_desc_t from, const void* src,
                                                           const_dnnl_memory_desc_t to) {
  OnednnThreads threads;
  dnnl_primitive_desc_t pd = nullptr;
  AOTIRT_DNNL_CHECK(api_.dnnl_reorder_primitive_desc_create(&pd, from, engine_, to, engine_, nullptr),
                    "a weight reorder");
  auto prim = std::make_shared<OnednnPrimitive>();
  prim->pd = pd;
  AOTIRT_DNNL_CHECK(api_.dnnl_primitive_create(&prim->primitive, pd), "a weight reorder");
  const size_t bytes = api_.dnnl_memory_desc_get_size(to);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8,
                                                           DeviceId{}));
  // The reorder runs like any primitive, with its source and destination
  // descriptors given here rather than queried.
  prim->arg_mds = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  Status st = execute(*prim, {{DNNL_ARG_FROM, const_cast<void*>(src)}, {DNNL_ARG_TO, out.data_ptr()}});
  AOTIRT_RETURN_IF_ERROR(st);
  auto holder = std::make_shared<TensorImpl>(std::move(out));
  return std::shared_ptr<const void>(holder, holder->data_ptr());
}

Status OnednnContext::reorder_into(const_dnnl_memory_desc_t from, const void* src, const_dnnl_memory_desc_t to,
                                   void* dst) {
  const std::string key = "reorder " + describe_md(api_, from) + " -> " + describe_md(api_, to);
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim,
                          primitive(key, [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
                            dnnl_primitive_desc_t pd = nullptr;
                            AOTIRT_DNNL_CHECK(
                                api_.dnnl_reorder_primitive_desc_create(&pd, from, engine_, to, engine_, nullptr),
                                "an activation reorder");
                            return finish(pd, {DNNL_ARG_FROM, DNNL_ARG_TO});
                          }));
  return execute(*prim, {{DNNL_ARG_FROM, const_cast<void*>(src)}, {DNNL_ARG_TO, dst}});
}

// ---- post-ops ---------------------------------------------------------------

namespace {

Result<double> scalar_at(const double** scalars, int64_t len, int64_t i, const char* attr) {
  AOTIRT_ENSURE(scalars != nullptr && len > i && scalars[i] != nullptr, kInvalidArgument,
                "post-op '{}' needs {} scalar(s), got {}", attr, i + 1, scalars ? len : 0);
  return *scalars[i];
}

}  // namespace

Result<UnaryPostOp> parse_unary(const char* attr, const double** scalars, int64_t scalars_len,
                                const char* algorithm) {
  AOTIRT_ENSURE(attr != nullptr, kInvalidArgument, "the post-op name is null");
  AOTIRT_ENSURE(scalars_len >= 0, kInvalidArgument, "negative scalar count {}", scalars_len);
  const std::string a = attr;
  const std::string alg = algorithm ? algorithm : "";
  UnaryPostOp op;
  op.present = true;
  if (a == "none" || a.empty()) {
    op.present = false;
  } else if (a == "relu") {
    op.alg = dnnl_eltwise_relu;
  } else if (a == "leaky_relu") {
    op.alg = dnnl_eltwise_relu;
    AOTIRT_ASSIGN_OR_RETURN(double slope, scalar_at(scalars, scalars_len, 0, attr));
    op.alpha = static_cast<float>(slope);
  } else if (a == "hardtanh") {
    op.alg = dnnl_eltwise_clip;
    AOTIRT_ASSIGN_OR_RETURN(double lo, scalar_at(scalars, scalars_len, 0, attr));
    AOTIRT_ASSIGN_OR_RETURN(double hi, scalar_at(scalars, scalars_len, 1, attr));
    op.alpha = static_cast<float>(lo);
    op.beta = static_cast<float>(hi);
  } else if (a == "gelu") {
    if (alg.empty() || alg == "none")
      op.alg = dnnl_eltwise_gelu_erf;
    else if (alg == "tanh")
      op.alg = dnnl_eltwise_gelu_tanh;
    else
      return AOTIRT_STATUS(kInvalidArgument, "gelu algorithm '{}' is unknown (expected 'none' or 'tanh')", alg);
  } else if (a == "tanh") {
    op.alg = dnnl_eltwise_tanh;
  } else if (a == "sigmoid") {
    op.alg = dnnl_eltwise_logistic;
  } else if (a == "swish" || a == "silu") {
    op.alg = dnnl_eltwise_swish;
    op.alpha = 1.f;
  } else if (a == "hardswish") {
    // x * clamp(x / 6 + 1 / 2, 0, 1), as torch's hardswish.
    op.alg = dnnl_eltwise_hardswish;
    op.alpha = 1.f / 6.f;
    op.beta = 0.5f;
  } else if (a == "hardsigmoid") {
    op.alg = dnnl_eltwise_hardsigmoid;
    op.alpha = 1.f / 6.f;
    op.beta = 0.5f;
  } else {
    return AOTIRT_STATUS(kInvalidArgument,
                         "post-op '{}' is unknown (expected none, relu, leaky_relu, hardtanh, gelu, tanh, sigmoid, "
                         "swish, hardswish or hardsigmoid)",
                         a);
  }
  return op;
}

Result<dnnl_alg_kind_t> parse_binary(const char* attr) {
  AOTIRT_ENSURE(attr != nullptr, kInvalidArgument, "the binary post-op name is null");
  const std::string a = attr;
  if (a == "add") return dnnl_binary_add;
  if (a == "sub") return dnnl_binary_sub;
  if (a == "mul") return dnnl_binary_mul;
  if (a == "div") return dnnl_binary_div;
  return AOTIRT_STATUS(kInvalidArgument, "binary post-op '{}' is unknown (expected add, sub, mul or div)", a);
}

}  // namespace cpu_ops
}  // namespace aotirt

#endif  // AOTIRT_WITH_ONEDNN
