// Every fallback-op shim aotirt declares beyond the core ABI of shim_abi.h,
// one header per op family (src/shim/abi/). The ops' own sources include
// only their family's header; this one gathers them for the ABI check
// (tests/shim/abi_match_test.cpp), which compiles them against torch's
// declarations. CUDA families are declared in every build and defined only
// in CUDA builds.
#pragma once

#include "shim/abi/cpu_elementwise.h"
#include "shim/abi/cpu_indexing.h"
#include "shim/abi/cpu_linalg.h"
#include "shim/abi/cpu_pooling.h"
#include "shim/abi/cpu_random.h"
#include "shim/abi/cpu_scaled_mm.h"
#include "shim/abi/cpu_selection.h"
#include "shim/abi/cpu_tensor.h"
#include "shim/abi/cuda_attention.h"
#include "shim/abi/cuda_elementwise.h"
#include "shim/abi/cuda_fft.h"
#include "shim/abi/cuda_indexing.h"
#include "shim/abi/cuda_kth.h"
#include "shim/abi/cuda_linalg.h"
#include "shim/abi/cuda_matmul.h"
#include "shim/abi/cuda_norm.h"
#include "shim/abi/cuda_pooling.h"
#include "shim/abi/cuda_random.h"
#include "shim/abi/cuda_cudnn_rnn.h"
#include "shim/abi/cuda_rnn.h"
#include "shim/abi/cuda_scan_sort.h"
#include "shim/abi/cuda_selection.h"
#include "shim/abi/cuda_tensor.h"
#include "shim/abi/generic_attention.h"
