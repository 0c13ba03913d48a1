// aotirt._runtime: the nanobind module behind aotirt's Python runtime API
// (python/aotirt/_runtime_api.py wraps it; docs/python.md documents it).
//
// Arrays cross as DLPack or the buffer protocol through nb::ndarray, so
// numpy, torch, cupy and jax arrays are borrowed without a copy where their
// device and layout allow. Outputs are handed out as arrays that own their
// aotirt::Tensor through a capsule: nothing is copied on the way out either.
// The GIL is released while a model runs or a Generator generates. A failed
// Status becomes a StatusError, which the translator below raises as the
// aotirt.Error subclass of its code (python/aotirt/_errors.py); the only
// other exception is a Python one raised in a Generator's token callback,
// or by a signal during generation, raised again as it was.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/generate.h"
#include "aotirt/model.h"
#include "aotirt/status.h"
#include "aotirt/tensor.h"
#include "aotirt/types.h"

namespace nb = nanobind;

namespace aotirt {
namespace {

struct StatusError {
  int code;
  std::string code_name;
  std::string text;  // Status::to_string(), as the CLI prints it
  std::string message;
};

[[noreturn]] void raise(const Status& s) {
  throw StatusError{static_cast<int>(s.code()), status_code_name(s.code()), s.to_string(), s.message()};
}

[[noreturn]] void raise(StatusCode code, std::string message) { raise(Status(code, std::move(message))); }

template <class T>
T take(Result<T>&& r) {
  if (!r.ok()) raise(r.status());
  return std::move(r).value();
}

// ---- dtypes between DLPack and aotirt ----

bool to_dtype(const nb::dlpack::dtype& d, DType* out) {
  if (d.lanes != 1) return false;
  using Code = nb::dlpack::dtype_code;
  switch (static_cast<Code>(d.code)) {
    case Code::Int:
      if (d.bits == 8) *out = DType::kInt8;
      else if (d.bits == 16) *out = DType::kInt16;
      else if (d.bits == 32) *out = DType::kInt32;
      else if (d.bits == 64) *out = DType::kInt64;
      else return false;
      return true;
    case Code::UInt:
      if (d.bits == 8) *out = DType::kUInt8;
      else if (d.bits == 16) *out = DType::kUInt16;
      else if (d.bits == 32) *out = DType::kUInt32;
      else if (d.bits == 64) *out = DType::kUInt64;
      else return false;
      return true;
    case Code::Float:
      if (d.bits == 16) *out = DType::kFloat16;
      else if (d.bits == 32) *out = DType::kFloat32;
      else if (d.bits == 64) *out = DType::kFloat64;
      else return false;
      return true;
    case Code::Bfloat:
      if (d.bits != 16) return false;
      *out = DType::kBFloat16;
      return true;
    case Code::Complex:
      if (d.bits == 64) *out = DType::kComplex64;
      else if (d.bits == 128) *out = DType::kComplex128;
      else return false;
      return true;
    case Code::Bool:
      if (d.bits != 8) return false;
      *out = DType::kBool;
      return true;
    default:
      return false;
  }
}

// The DLPack dtype of |d|; false for the float8 types, which DLPack (as
// nanobind speaks it) has no code for.
bool to_dlpack(DType d, nb::dlpack::dtype* out) {
  using Code = nb::dlpack::dtype_code;
  auto set = [&](Code c, int bits) {
    out->code = static_cast<uint8_t>(c);
    out->bits = static_cast<uint8_t>(bits);
    out->lanes = 1;
    return true;
  };
  switch (d) {
    case DType::kUInt8: return set(Code::UInt, 8);
    case DType::kInt8: return set(Code::Int, 8);
    case DType::kInt16: return set(Code::Int, 16);
    case DType::kInt32: return set(Code::Int, 32);
    case DType::kInt64: return set(Code::Int, 64);
    case DType::kUInt16: return set(Code::UInt, 16);
    case DType::kUInt32: return set(Code::UInt, 32);
    case DType::kUInt64: return set(Code::UInt, 64);
    case DType::kFloat16: return set(Code::Float, 16);
    case DType::kFloat32: return set(Code::Float, 32);
    case DType::kFloat64: return set(Code::Float, 64);
    case DType::kBFloat16: return set(Code::Bfloat, 16);
    case DType::kComplex64: return set(Code::Complex, 64);
    case DType::kComplex128: return set(Code::Complex, 128);
    case DType::kBool: return set(Code::Bool, 8);
    default: return false;
  }
}

DeviceId device_of(const nb::ndarray<nb::ro>& a) {
  switch (a.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value:
      return DeviceId{};
    case nb::device::cuda::value:
      return DeviceId{DeviceType::kCuda, static_cast<int>(a.device_id())};
    default:
      raise(StatusCode::kInvalidArgument,
            "an input is on DLPack device type " + std::to_string(a.device_type()) +
                ", which aotirt does not run on (CPU and CUDA only)");
  }
}

// An aotirt tensor over |a|'s memory (borrowed), or a contiguous copy of it
// when its strides are not ones a model library takes. |bits_as| is a dtype
// code the Python side gives when it passed a dtype numpy cannot name
// (bfloat16 from ml_dtypes arrives as uint16); -1 for none.
Tensor borrow(size_t index, const nb::ndarray<nb::ro>& a, int bits_as) {
  DType dt;
  if (bits_as >= 0) {
    if (!dtype_is_valid(bits_as))
      raise(StatusCode::kInvalidArgument, "input " + std::to_string(index) + ": dtype code " +
                                              std::to_string(bits_as) + " is not one aotirt knows");
    dt = static_cast<DType>(bits_as);
  } else if (!to_dtype(a.dtype(), &dt)) {
    raise(StatusCode::kInvalidArgument,
          "input " + std::to_string(index) + " has a DLPack dtype (code " + std::to_string(a.dtype().code) +
              ", " + std::to_string(a.dtype().bits) + " bits, " + std::to_string(a.dtype().lanes) +
              " lanes) that aotirt does not take");
  }
  if (dtype_size(dt) * 8 != static_cast<size_t>(a.dtype().bits) * a.dtype().lanes)
    raise(StatusCode::kInvalidArgument, "input " + std::to_string(index) + ": its elements are " +
                                            std::to_string(a.dtype().bits) + " bits, not the " +
                                            std::to_string(dtype_size(dt) * 8) + " of " + dtype_name(dt));
  std::vector<int64_t> sizes(a.ndim()), strides(a.ndim());
  for (size_t d = 0; d < a.ndim(); ++d) {
    sizes[d] = static_cast<int64_t>(a.shape(d));
    strides[d] = a.stride(d);
  }
  const DeviceId device = device_of(a);
  Tensor t = Tensor::from_blob(const_cast<void*>(a.data()), std::move(sizes), dt, device, std::move(strides));
  if (t.is_contiguous()) return t;
  // A model library is compiled for dense inputs: copy a strided view.
  Result<Tensor> dense = t.to(device, dt);
  if (!dense.ok()) {
    Status s = dense.status();
    raise(s.annotate("copying non-contiguous input " + std::to_string(index) + " to a dense tensor"));
  }
  return std::move(dense).value();
}

// |t| as an array that owns it, and the aotirt dtype code the Python side
// must view it as (-1: as it is). numpy: a numpy array (host tensors only),
// with bfloat16 and float8 elements as unsigned ints of their width, since
// numpy has no such types (the Python side views them with ml_dtypes);
// otherwise nanobind's own array type, which speaks DLPack and the buffer
// protocol.
std::pair<nb::object, int> hand_out(Tensor t, bool numpy) {
  nb::dlpack::dtype dt;
  int view_as = -1;
  const DType type = t.dtype();
  const bool narrow = type == DType::kBFloat16 || type == DType::kFloat8_e5m2 || type == DType::kFloat8_e4m3fn ||
                      type == DType::kFloat8_e5m2fnuz || type == DType::kFloat8_e4m3fnuz;
  if (numpy && narrow) {
    view_as = static_cast<int>(type);
    to_dlpack(dtype_size(type) == 2 ? DType::kUInt16 : DType::kUInt8, &dt);
  } else if (!to_dlpack(type, &dt)) {
    raise(StatusCode::kUnimplemented, std::string("an output has dtype ") + dtype_name(type) +
                                          ", which DLPack cannot describe; ask for outputs='numpy'");
  }
  const size_t nd = static_cast<size_t>(t.dim());
  std::vector<size_t> shape(nd);
  const std::vector<int64_t> sizes = t.sizes();
  const std::vector<int64_t> strides = t.strides();
  for (size_t d = 0; d < nd; ++d) shape[d] = static_cast<size_t>(sizes[d]);
  const DeviceId dev = t.device();
  const int device_type = dev.is_cpu() ? nb::device::cpu::value : nb::device::cuda::value;
  void* data = t.data();
  auto* held = new Tensor(std::move(t));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  if (numpy) {
    return {nb::cast(nb::ndarray<nb::numpy>(data, nd, shape.data(), owner, strides.data(), dt, device_type,
                                            dev.index)),
            view_as};
  }
  return {nb::cast(nb::ndarray<nb::array_api>(data, nd, shape.data(), owner, strides.data(), dt, device_type,
                                             dev.index)),
          view_as};
}

nb::dict spec_dict(const TensorSpec& s) {
  nb::dict d;
  d["name"] = s.name;
  d["dtype"] = s.has_dtype ? nb::object(nb::str(dtype_name(s.dtype))) : nb::none();
  if (s.has_shape) {
    nb::list shape;
    for (int64_t v : s.shape) shape.append(v < 0 ? nb::object(nb::none()) : nb::object(nb::int_(v)));
    d["shape"] = shape;
  } else {
    d["shape"] = nb::none();
  }
  return d;
}

nb::list spec_list(const std::vector<TensorSpec>& specs) {
  nb::list l;
  for (const TensorSpec& s : specs) l.append(spec_dict(s));
  return l;
}

nb::dict package_dict(const PackageInfo& p) {
  nb::dict d;
  d["path"] = p.path;
  d["model_name"] = p.model_name;
  d["device"] = p.device_key;
  d["cpu_isa"] = p.cpu_isa;
  d["compute_capability"] = p.compute_capability;
  d["library_entry"] = p.library_entry;
  d["library_bytes"] = p.library_bytes;
  d["weight_bytes"] = p.weight_bytes;
  d["weights_in_library"] = p.weights_in_library;
  d["kernel_entries"] = p.kernel_entries;
  d["inputs"] = spec_list(p.inputs);
  d["outputs"] = spec_list(p.outputs);
  d["spec_source"] = spec_source_name(p.spec_source);
  nb::list missing;
  for (const PackageInfo::Symbol& s : p.imported_shims)
    if (!s.provided) missing.append(s.name);
  d["missing_shims"] = missing;
  d["warnings"] = p.warnings;
  nb::dict meta;
  for (const auto& kv : p.metadata) meta[nb::str(kv.first.c_str())] = kv.second;
  d["metadata"] = meta;
  return d;
}

class PyModel {
 public:
  explicit PyModel(std::unique_ptr<Model> m) : model_(std::move(m)) {}

  // |arrays| with their dtype overrides (see borrow()); |outputs| is
  // "numpy", "dlpack" or "auto" (numpy when the outputs are on the host).
  nb::tuple run(const std::vector<nb::ndarray<nb::ro>>& arrays, const std::vector<int>& bits_as,
               const std::string& outputs, bool to_host) {
    if (outputs != "numpy" && outputs != "dlpack" && outputs != "auto")
      raise(StatusCode::kInvalidArgument, "outputs must be 'auto', 'numpy' or 'dlpack', not '" + outputs + "'");
    std::vector<Tensor> inputs;
    inputs.reserve(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) inputs.push_back(borrow(i, arrays[i], i < bits_as.size() ? bits_as[i] : -1));
    RunOptions options;
    options.outputs_to_host = to_host || outputs == "numpy";
    // Device outputs are handed to other libraries, which read them on
    // streams of their own: the run is finished before they get them.
    options.synchronize = true;
    std::optional<Result<std::vector<Tensor>>> r;
    {
      nb::gil_scoped_release release;
      r.emplace(model_->run(inputs, options));
    }
    std::vector<Tensor> outs = take(std::move(*r));
    // (arrays, None), or (arrays, the dtype codes to view them as) when an
    // output's type is one numpy lacks.
    nb::list result;
    std::vector<int> views(outs.size(), -1);
    bool any_view = false;
    for (size_t k = 0; k < outs.size(); ++k) {
      const bool numpy = outputs == "numpy" || (outputs == "auto" && outs[k].device().is_cpu());
      std::pair<nb::object, int> out = hand_out(std::move(outs[k]), numpy);
      result.append(out.first);
      views[k] = out.second;
      any_view = any_view || out.second >= 0;
    }
    return nb::make_tuple(result, any_view ? nb::cast(views) : nb::none());
  }

  nb::list inputs() const { return spec_list(model_->inputs()); }
  nb::list outputs() const { return spec_list(model_->outputs()); }
  std::string device() const { return model_->device().to_string(); }
  nb::dict package() const { return package_dict(model_->package()); }
  size_t num_inputs() const { return model_->num_inputs(); }
  size_t num_outputs() const { return model_->num_outputs(); }

 private:
  std::unique_ptr<Model> model_;
};

// A Generator (aotirt/generate.h). One call at a time: a second thread's
// call is refused rather than queued behind a generation of unknown length.
class PyGenerator {
 public:
  explicit PyGenerator(std::unique_ptr<Generator> g) : gen_(std::move(g)) {}

  // The tokens generated after |prompt|. |on_token| (None or a callable)
  // gets each token as it is chosen, with the GIL held; returning False
  // stops generation after it, and an exception it raises stops it and is
  // raised here. A pending signal (Ctrl-C: KeyboardInterrupt) stops it too,
  // after the current token.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens, double temperature,
                                int64_t top_k, double top_p, uint64_t seed, const std::vector<int64_t>& stop_token_ids,
                                bool use_config_stop_tokens, bool reuse_cache, nb::object on_token) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock())
      raise(StatusCode::kInvalidArgument,
            "this Generator is already generating on another thread: it takes one call at a time (load a Generator "
            "per thread to generate in parallel)");
    GenerateOptions o;
    o.max_new_tokens = max_new_tokens;
    o.stop_token_ids = stop_token_ids;
    o.use_config_stop_tokens = use_config_stop_tokens;
    o.reuse_cache = reuse_cache;
    o.sampling.temperature = static_cast<float>(temperature);
    o.sampling.top_k = top_k;
    o.sampling.top_p = static_cast<float>(top_p);
    o.sampling.seed = seed;
    const bool has_callback = !on_token.is_none();
    // The first Python error of the call, raised once generation returned.
    std::optional<nb::python_error> error;
    o.on_token = [&](int64_t token) -> bool {
      nb::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        error.emplace();
        return false;
      }
      if (!has_callback) return true;
      try {
        nb::object r = on_token(token);
        return r.ptr() != Py_False;
      } catch (nb::python_error& e) {
        error.emplace(std::move(e));
        return false;
      }
    };
    GenerateStats st;
    std::optional<Result<std::vector<int64_t>>> r;
    {
      nb::gil_scoped_release release;
      r.emplace(gen_->generate(prompt, o, &st));
    }
    if (r->ok() || error) stats_ = st;
    if (error) throw std::move(*error);
    return take(std::move(*r));
  }

  // What the last call that generated reported (None before the first).
  nb::object last_stats() const {
    if (!stats_) return nb::none();
    const GenerateStats& st = *stats_;
    nb::dict d;
    d["prompt_tokens"] = st.prompt_tokens;
    d["generated_tokens"] = st.generated_tokens;
    d["prefill_seconds"] = st.prefill_seconds;
    d["decode_seconds"] = st.decode_seconds;
    d["first_token_seconds"] = st.first_token_seconds;
    d["stop_reason"] = st.stop_reason;
    d["graph_replays"] = st.graph_replays;
    d["reused_tokens"] = st.reused_tokens;
    return d;
  }

  nb::dict config() const {
    const LlmConfig& c = gen_->config();
    nb::dict d;
    d["prefill_package"] = c.prefill_package;
    d["decode_package"] = c.decode_package;
    d["vocab_size"] = c.vocab_size;
    d["max_cache_len"] = c.max_cache_len;
    d["num_layers"] = c.num_layers;
    d["cache_shape"] = c.cache_shape;
    d["cache_dtype"] = dtype_name(c.cache_dtype);
    d["stop_token_ids"] = c.stop_token_ids;
    d["bos_token_id"] = c.bos_token_id < 0 ? nb::object(nb::none()) : nb::object(nb::int_(c.bos_token_id));
    d["tokenizer"] = c.tokenizer.empty() ? nb::object(nb::none()) : nb::object(nb::str(c.tokenizer.c_str()));
    d["export_id"] = c.export_id;
    return d;
  }
  std::string device() const { return gen_->device().to_string(); }
  size_t weight_bytes() const { return gen_->weight_bytes(); }
  size_t unshared_weight_bytes() const { return gen_->unshared_weight_bytes(); }

 private:
  std::unique_ptr<Generator> gen_;
  std::mutex busy_;
  std::optional<GenerateStats> stats_;
};

PyGenerator* load_generator(const std::string& dir, const std::optional<std::string>& device, bool cuda_graph) {
  GeneratorOptions options;
  if (device) options.load.device = take(DeviceId::parse(*device));
  options.decode_cuda_graph = cuda_graph;
  std::optional<Result<std::unique_ptr<Generator>>> r;
  {
    nb::gil_scoped_release release;
    r.emplace(Generator::load(dir, options));
  }
  return new PyGenerator(take(std::move(*r)));
}

PyModel* load(const std::string& path, const std::optional<std::string>& device, size_t num_runners,
              bool cuda_graph) {
  LoadOptions options;
  if (device) options.device = take(DeviceId::parse(*device));
  if (num_runners == 0) raise(StatusCode::kInvalidArgument, "num_runners must be at least 1");
  options.num_runners = num_runners;
  options.cuda_graph = cuda_graph;
  std::optional<Result<std::unique_ptr<Model>>> r;
  {
    nb::gil_scoped_release release;
    r.emplace(Model::load(path, options));
  }
  return new PyModel(take(std::move(*r)));
}

nb::dict inspect(const std::string& path) {
  std::optional<Result<PackageInfo>> r;
  {
    nb::gil_scoped_release release;
    r.emplace(inspect_package(path));
  }
  return package_dict(take(std::move(*r)));
}

}  // namespace
}  // namespace aotirt

NB_MODULE(_runtime, m) {
  using namespace aotirt;
  m.doc() = "aotirt's runtime (use the aotirt package, not this module)";

  // StatusError -> aotirt._errors.error_for(code_name, text, message), raised.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      nb::object errors = nb::module_::import_("aotirt._errors");
      nb::object exc = errors.attr("error_for")(e.code_name, e.text, e.message);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "aotirt: out of memory");
    }
  });

  nb::class_<PyModel>(m, "Model")
      .def("run", &PyModel::run, nb::arg("arrays"), nb::arg("bits_as"), nb::arg("outputs"), nb::arg("to_host"))
      .def_prop_ro("inputs", &PyModel::inputs)
      .def_prop_ro("outputs", &PyModel::outputs)
      .def_prop_ro("device", &PyModel::device)
      .def_prop_ro("package", &PyModel::package)
      .def_prop_ro("num_inputs", &PyModel::num_inputs)
      .def_prop_ro("num_outputs", &PyModel::num_outputs);

  m.def("load", &load, nb::arg("path"), nb::arg("device") = nb::none(), nb::arg("num_runners") = 1,
        nb::arg("cuda_graph") = false, nb::rv_policy::take_ownership);
  nb::class_<PyGenerator>(m, "Generator")
      .def("generate", &PyGenerator::generate, nb::arg("prompt"), nb::arg("max_new_tokens"), nb::arg("temperature"),
           nb::arg("top_k"), nb::arg("top_p"), nb::arg("seed"), nb::arg("stop_token_ids"),
           nb::arg("use_config_stop_tokens"), nb::arg("reuse_cache"), nb::arg("on_token").none())
      .def_prop_ro("last_stats", &PyGenerator::last_stats)
      .def_prop_ro("config", &PyGenerator::config)
      .def_prop_ro("device", &PyGenerator::device)
      .def_prop_ro("weight_bytes", &PyGenerator::weight_bytes)
      .def_prop_ro("unshared_weight_bytes", &PyGenerator::unshared_weight_bytes);

  m.def("load_generator", &load_generator, nb::arg("dir"), nb::arg("device") = nb::none(),
        nb::arg("cuda_graph") = true, nb::rv_policy::take_ownership);
  m.def("inspect", &inspect, nb::arg("path"));
  m.def("version", [] { return std::string(aotirt::version()); });
  m.def("last_error", [] { return aotirt::last_error(); });
}
