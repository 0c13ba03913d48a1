// The op layer's rules for aten::_cudnn_rnn (src/ops/rnn_args): output,
// hidden and cell shapes for every sequence layout, how a layer's parameter
// list is read, and the arguments refused. The CUDA backend computes with
// these shapes, so they are checked here where no GPU is needed.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ops/cudnn_rnn_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::RnnArgs;
using ops::RnnMode;
using ops::RnnParam;

// Shapes only: the rules never read data.
struct Fake {
  std::vector<std::unique_ptr<TensorImpl>> owned;
  AtenTensorHandle t(DimVector sizes, DType dtype = DType::kFloat32) {
    DimVector strides = contiguous_strides(sizes);
    return strided(std::move(sizes), std::move(strides), dtype);
  }
  AtenTensorHandle strided(DimVector sizes, DimVector strides, DType dtype = DType::kFloat32) {
    owned.emplace_back(new TensorImpl(StorageRef(), dtype, std::move(sizes), std::move(strides), 0));
    return handle_of(owned.back().get());
  }
};

// torch's parameter list for an RNN of |gates| gates: per layer and direction
// w_ih, w_hh[, b_ih, b_hh][, w_hr].
std::vector<AtenTensorHandle> params(Fake& f, int64_t gates, int64_t in, int64_t hidden, int64_t proj,
                                     int64_t layers, int64_t dirs, bool bias) {
  std::vector<AtenTensorHandle> w;
  const int64_t out = proj ? proj : hidden;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      w.push_back(f.t({gates * hidden, l == 0 ? in : out * dirs}));
      w.push_back(f.t({gates * hidden, out}));
      if (bias) {
        w.push_back(f.t({gates * hidden}));
        w.push_back(f.t({gates * hidden}));
      }
      if (proj) w.push_back(f.t({proj, hidden}));
    }
  return w;
}

struct Call {
  AtenTensorHandle input = nullptr, hx = nullptr, cx = nullptr, weight_buf = nullptr;
  std::vector<AtenTensorHandle> weights;
  int64_t stride0 = 4, mode = 2, hidden = 8, proj = 0, layers = 1;
  int32_t batch_first = 0, train = 0, bidirectional = 0;
  std::vector<int64_t> batch_sizes;
  Result<RnnArgs> run() {
    return ops::rnn_args(input, weights.data(), static_cast<int64_t>(weights.size()), stride0,
                         weight_buf ? &weight_buf : nullptr, hx, cx ? &cx : nullptr, mode, hidden, proj, layers,
                         batch_first, 0.0, train, bidirectional, batch_sizes.data(),
                         static_cast<int64_t>(batch_sizes.size()));
  }
};

TEST(OpsRnnArgsTest, BidirectionalProjectedLstmBatchFirst) {
  Fake f;
  Call c;
  c.input = f.t({3, 5, 6});  // [batch, seq, input]
  c.batch_first = 1;
  c.bidirectional = 1;
  c.layers = 2;
  c.proj = 4;
  c.stride0 = 5;
  c.hx = f.t({4, 3, 4});
  c.cx = f.t({4, 3, 8});
  c.weights = params(f, 4, 6, 8, 4, 2, 2, true);
  auto r = c.run();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const RnnArgs& a = r.value();
  EXPECT_EQ(a.seq_length, 5);
  EXPECT_EQ(a.mini_batch, 3);
  EXPECT_EQ(a.out_size, 4);
  // The transpose of a [seq, batch, 2 * proj] tensor.
  EXPECT_EQ(a.output_sizes, (DimVector{3, 5, 8}));
  EXPECT_EQ(a.output_strides, (DimVector{8, 24, 1}));
  EXPECT_EQ(a.hidden_sizes, (DimVector{4, 3, 4}));
  EXPECT_EQ(a.cell_sizes, (DimVector{4, 3, 8}));
  EXPECT_EQ(ops::rnn_param_at(a, 4), RnnParam::kWeightHr);
  EXPECT_EQ(ops::rnn_param_sizes(a, 1, RnnParam::kWeightIh), (DimVector{32, 8}));
  EXPECT_EQ(ops::rnn_param_sizes(a, 0, RnnParam::kWeightHh), (DimVector{32, 4}));
  EXPECT_EQ(ops::rnn_param_sizes(a, 0, RnnParam::kWeightHr), (DimVector{4, 8}));
}

TEST(OpsRnnArgsTest, ProjectionWithoutBiasesReadsThreeParameters) {
  Fake f;
  Call c;
  c.input = f.t({5, 3, 6});
  c.proj = 4;
  c.stride0 = 3;
  c.hx = f.t({1, 3, 4});
  c.weights = params(f, 4, 6, 8, 4, 1, 1, false);
  auto r = c.run();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(ops::rnn_param_at(r.value(), 2), RnnParam::kWeightHr);
  EXPECT_EQ(r.value().output_sizes, (DimVector{5, 3, 4}));
  EXPECT_EQ(r.value().output_strides, (DimVector{12, 4, 1}));
}

TEST(OpsRnnArgsTest, PackedGru) {
  Fake f;
  Call c;
  c.mode = 3;
  c.input = f.t({9, 6});
  c.batch_sizes = {4, 3, 1, 1};
  c.hx = f.t({1, 4, 8});
  c.weights = params(f, 3, 6, 8, 0, 1, 1, true);
  auto r = c.run();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r.value().packed);
  EXPECT_EQ(r.value().seq_length, 4);
  EXPECT_EQ(r.value().mini_batch, 4);
  EXPECT_EQ(r.value().output_sizes, (DimVector{9, 8}));
  // Increasing steps, or ones that do not add up to the input, are refused.
  c.batch_sizes = {3, 4, 1, 1};
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c.batch_sizes = {4, 3, 1};
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
}

TEST(OpsRnnArgsTest, FlatBufferSkipsTheListLayout) {
  Fake f;
  Call c;
  c.input = f.t({5, 3, 6});
  c.hx = f.t({1, 3, 8});
  c.cx = f.t({1, 3, 8});
  c.weight_buf = f.t({1000});
  c.stride0 = 7;  // not read when the flat buffer is given
  EXPECT_TRUE(c.run().ok());
  c.weight_buf = f.t({1000}, DType::kFloat64);
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c.weight_buf = f.strided({10}, {2});
  EXPECT_EQ(c.run().status().code(), StatusCode::kUnimplemented);
}

TEST(OpsRnnArgsTest, RefusedArguments) {
  Fake f;
  auto base = [&] {
    Call c;
    c.input = f.t({5, 3, 6});
    c.hx = f.t({1, 3, 8});
    c.cx = f.t({1, 3, 8});
    c.weights = params(f, 4, 6, 8, 0, 1, 1, true);
    return c;
  };
  ASSERT_TRUE(base().run().ok());
  Call c = base();
  c.train = 1;
  EXPECT_EQ(c.run().status().code(), StatusCode::kUnimplemented);
  c = base();
  c.mode = 4;
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.mode = 3;  // GRU with a cell state
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.hx = f.strided({1, 3, 8}, {24, 1, 3});
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.hx = f.t({1, 2, 8});
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.cx = f.t({1, 3, 8}, DType::kFloat64);
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.weights.pop_back();
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.weights[1] = c.weights[0];  // w_hh of w_ih's size
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.stride0 = 3;
  c.weights.pop_back();
  EXPECT_EQ(c.run().status().code(), StatusCode::kUnimplemented);
  c = base();
  c.proj = 8;  // not below hidden_size
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.input = f.t({5, 6});
  EXPECT_EQ(c.run().status().code(), StatusCode::kInvalidArgument);
  c = base();
  c.input = f.t({5, 3, 6}, DType::kInt32);
  EXPECT_EQ(c.run().status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace aotirt
