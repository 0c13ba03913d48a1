// A persistent ping-pong kernel for CUTLASS's sm_90 implicit-GEMM forward
// convolution: CUTLASS 4.2 runs its convolution collectives only in a
// kernel of one block a tile (its builder refuses the persistent schedules
// for convolutions, and its persistent GEMM kernels take no convolution
// problem shape). With one block an SM (the 128x128 tile's registers), a
// block a tile leaves the tensor cores idle while a tile's output is
// stored and while the next block fills its pipeline, which left
// ResNet-50's strided 1x1 downsample at batch 32 well behind cuDNN's.
//
// Here a block stays on its SM and walks the tiles |blocks| apart. Its
// producer warp loads every tile's k steps through the same pipeline, in
// order; two consumer warpgroups take the tiles in turn, and an ordered
// barrier hands the tensor cores from one to the other, so one warpgroup's
// epilogue (the TMA store of its tile) runs under the other's mainloop.
// The collectives (mainloop, epilogue, pipelines) are CUTLASS's, used as
// its own kernels use them; only the walk over the tiles is ours.
// Included by the sm_90a-only convolution file alone.
#pragma once

#include <cutlass/cutlass.h>
#include <cutlass/kernel_hardware_info.hpp>

#include <cute/tensor.hpp>
#include <cutlass/arch/grid_dependency_control.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include <algorithm>
#include <cstdint>

namespace aotirt {

// The arguments, the problem's transformation and the checks are those of
// CUTLASS's kernel of one block a tile (the base); the shared storage, the
// grid and the body are this kernel's.
template <class ProblemShape_, class Mainloop_, class Epilogue_>
class CudaConvSm90Pingpong : public cutlass::conv::kernel::ConvUniversal<ProblemShape_, Mainloop_, Epilogue_> {
  using Base = cutlass::conv::kernel::ConvUniversal<ProblemShape_, Mainloop_, Epilogue_>;

 public:
  using typename Base::Arguments;
  using typename Base::ClusterShape;
  using typename Base::CollectiveEpilogue;
  using typename Base::CollectiveMainloop;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  static_assert(cute::size(ClusterShape{}) == 1, "one-SM clusters only");
  static_assert(cute::size(TiledMma{}) == cutlass::NumThreadsPerWarpGroup,
                "each consumer warpgroup multiplies a whole tile");

  static constexpr uint32_t NumMmaWarpGroups = 2;
  static constexpr uint32_t MaxThreadsPerBlock = (1 + NumMmaWarpGroups) * cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t MinBlocksPerMultiprocessor = 1;
  // As CUTLASS's GEMM ping-pong kernel: the producer warpgroup gives its
  // registers to the two that hold a tile's accumulators each.
  static constexpr uint32_t kLoadRegisters = 40;
  static constexpr uint32_t kMmaRegisters = 232;

  // Turns on the tensor cores, then on the epilogue's shared memory:
  // warpgroup 0, 1, 0, 1, ... in each.
  using OrderBarrier = cutlass::OrderedSequenceBarrier<2, NumMmaWarpGroups>;

  struct SharedStorage {
    // Not a union (as the base's is): the producer fills the next tile's
    // stages while an epilogue stages its output.
    struct TensorStorage {
      typename CollectiveMainloop::TensorStorage mainloop;
      typename CollectiveEpilogue::TensorStorage epilogue;
    } tensors;
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) typename CollectiveEpilogue::PipelineStorage epi_load;
      alignas(16) typename OrderBarrier::SharedStorage order;
    } pipelines;
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);
  static_assert(SharedStorageSize <= 232448, "more shared memory than an sm_90 block has");

  struct Params {
    typename Base::Params base;
    int tiles_m = 0, tiles_n = 0;
    int blocks = 0;  // the grid: min(tiles, SMs); a block walks the tiles |blocks| apart
  };

  static Params to_underlying_arguments(Arguments const& args, void* workspace) {
    Params p;
    p.base = Base::to_underlying_arguments(args, workspace);
    // The tile counts of the base's grid, so that tiles are numbered as
    // its blocks are (the kernel takes its coordinates the same way). A
    // forward convolution has no batch mode (grid.z is 1), and the caller's
    // 2^31-element limit on each tensor keeps the tile numbers in an int.
    const dim3 grid = Base::get_grid_shape(p.base);
    p.tiles_m = static_cast<int>(grid.x);
    p.tiles_n = static_cast<int>(grid.y);
    const int64_t tiles = int64_t(grid.x) * grid.y * grid.z;
    const int sms = args.hw_info.sm_count > 0 ? args.hw_info.sm_count : 1;
    p.blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tiles, sms)));
    return p;
  }

  static dim3 get_grid_shape(Params const& params) { return dim3(params.blocks, 1, 1); }
  static dim3 get_block_shape() { return dim3(MaxThreadsPerBlock, 1, 1); }

  CUTLASS_DEVICE
  void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    enum class Role { Producer = 0, Consumer0 = 1, Consumer1 = 2 };
    SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem_buf);
    const typename Base::Params& bp = params.base;

    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int wg_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const Role role = Role(cutlass::canonical_warp_group_idx());
    const bool producer_warp = role == Role::Producer && warp_idx % cutlass::NumWarpsPerWarpGroup == 0;
    const int lane_predicate = cute::elect_one_sync();

    if (warp_idx == 0 && lane_predicate) {
      CollectiveMainloop::prefetch_tma_descriptors(bp.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(bp.epilogue);
    }

    using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
    typename MainloopPipeline::Params mainloop_params;
    if (producer_warp) mainloop_params.role = MainloopPipeline::ThreadCategory::Producer;
    if (role != Role::Producer) mainloop_params.role = MainloopPipeline::ThreadCategory::Consumer;
    mainloop_params.is_leader = wg_thread_idx == 0;
    // Each stage is read by the one warpgroup whose tile it belongs to.
    mainloop_params.num_consumers = cutlass::NumThreadsPerWarpGroup;
    mainloop_params.transaction_bytes = bp.mainloop.tma_transaction_bytes;
    MainloopPipeline mainloop_pipeline(shared.pipelines.mainloop, mainloop_params, ClusterShape{});

    // The epilogue reads no C (void), but its collective still takes a
    // load pipeline.
    using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
    typename EpiLoadPipeline::Params epi_load_params;
    if (producer_warp) epi_load_params.role = EpiLoadPipeline::ThreadCategory::Producer;
    if (role != Role::Producer) epi_load_params.role = EpiLoadPipeline::ThreadCategory::Consumer;
    epi_load_params.dst_blockid = cute::block_rank_in_cluster();
    epi_load_params.producer_arv_count = cutlass::NumThreadsPerWarp;
    epi_load_params.consumer_arv_count = cutlass::NumThreadsPerWarpGroup;
    if constexpr (CollectiveEpilogue::RequiresTransactionBytes) {
      epi_load_params.transaction_bytes = bp.epilogue.tma_transaction_bytes;
    }
    EpiLoadPipeline epi_load_pipeline(shared.pipelines.epi_load, epi_load_params);

    using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;
    typename EpiStorePipeline::Params epi_store_params;
    epi_store_params.always_wait = true;
    EpiStorePipeline epi_store_pipeline(epi_store_params);

    typename OrderBarrier::Params order_params;
    order_params.group_id = role == Role::Consumer1 ? 1 : 0;
    order_params.group_size = cutlass::NumThreadsPerWarpGroup;
    OrderBarrier order(shared.pipelines.order, order_params);

    auto problem_shape_MNKL = append<4>(bp.problem_shape, Int<1>{});
    const auto blk_shape = TileShape{};
    TiledMma tiled_mma;
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, bp.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);
    Tensor gB_nkl = get<1>(load_inputs);
    const int k_tiles = size<3>(gA_mkl);
    const int tiles = params.tiles_m * params.tiles_n;
    const int stride = int(gridDim.x);
    // Tile t's coordinates: output channels fastest, so the blocks running
    // at once share their input rows (read from memory once).
    auto tile_coord = [&](int t) {
      const int m = t / params.tiles_n;
      const int n = t - m * params.tiles_n;
      return make_coord(idx2crd(m, shape<2>(gA_mkl)), idx2crd(n, shape<2>(gB_nkl)), _, Int<0>{});
    };

    // The barriers' initialisation, seen by every warp before its first use.
    __syncthreads();

    if (role == Role::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<kLoadRegisters>();
      if (producer_warp) {
        auto producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
        // The kernel before may still be running (a dependent launch):
        // its output is read from here on.
        cutlass::arch::wait_on_dependent_grids();
        for (int t = int(blockIdx.x); t < tiles; t += stride) {
          collective_mainloop.load(bp.mainloop, mainloop_pipeline, producer_state, load_inputs, tile_coord(t),
                                   cute::make_coord_iterator(shape<3>(gA_mkl)), k_tiles, cutlass::canonical_lane_idx(),
                                   cute::block_rank_in_cluster(), shared.tensors.mainloop);
          producer_state.advance(k_tiles);
        }
        // The block does not exit while its stages are being read.
        collective_mainloop.load_tail(mainloop_pipeline, producer_state);
      }
      return;
    }

    cutlass::arch::warpgroup_reg_alloc<kMmaRegisters>();
    const int wg = role == Role::Consumer1 ? 1 : 0;
    CollectiveEpilogue collective_epilogue(bp.epilogue, shared.tensors.epilogue);
    const int c_tiles = CollectiveEpilogue::get_load_pipe_increment(blk_shape);
    const int d_tiles = CollectiveEpilogue::get_store_pipe_increment(blk_shape);
    typename CollectiveMainloop::PipelineState consumer_state;
    typename CollectiveEpilogue::LoadPipelineState epi_load_state;
    auto epi_store_state = cutlass::make_producer_start_state<EpiStorePipeline>();
    if (wg == 1) {
      // Warpgroup 1's first tile is the block's second: past warpgroup 0's.
      consumer_state.advance(k_tiles);
      epi_load_state.advance(c_tiles);
      epi_store_state.advance(d_tiles);
    }
    const int first = int(blockIdx.x) + wg * stride;
    for (int t = first; t < tiles; t += NumMmaWarpGroups * stride) {
      const auto coord = tile_coord(t);
      Tensor accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      order.wait();
      collective_mainloop.mma(mainloop_pipeline, consumer_state, accumulators, k_tiles, wg_thread_idx,
                              shared.tensors.mainloop, bp.mainloop);
      order.arrive();
      collective_mainloop.mma_tail(mainloop_pipeline, consumer_state, k_tiles);
      consumer_state.advance(k_tiles * NumMmaWarpGroups);
      if (t + NumMmaWarpGroups * stride >= tiles) {
        // This warpgroup's last product: the kernel after may start its
        // prologue (it waits for this grid's end before reading).
        cutlass::arch::launch_dependent_grids();
      }
      order.wait();
      auto [load_next, store_next] =
          collective_epilogue.store(epi_load_pipeline, epi_load_state, epi_store_pipeline, epi_store_state,
                                    problem_shape_MNKL, blk_shape, coord, accumulators, tiled_mma, wg_thread_idx,
                                    shared.tensors.epilogue);
      // The other warpgroup's epilogue reuses the staging buffers: this
      // one's stores must have read them first.
      auto [load_done, store_done] = collective_epilogue.store_tail(epi_load_pipeline, load_next,
                                                                    epi_store_pipeline, store_next);
      epi_load_state = load_done;
      epi_store_state = store_done;
      epi_load_state.advance(c_tiles);
      epi_store_state.advance(d_tiles);
      order.arrive();
    }
#else
    (void)params;
    (void)smem_buf;
#endif
  }
};

}  // namespace aotirt
