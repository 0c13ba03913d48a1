// Umbrella header for aotirt's public C++ API.
#pragma once

#include "aotirt/generate.h"
#include "aotirt/model.h"
#include "aotirt/model_group.h"
#include "aotirt/status.h"
#include "aotirt/tensor.h"
#include "aotirt/types.h"
