// Written by hand in the form AOTInductor generates: a bfloat16 input with a
// dynamic first dimension, an int64 one, a 0-d float32 one.
AOTInductorModel::AOTInductorModel() {
    inputs_info_[0].name = "arg0_1";
    inputs_info_[1].name = "arg1_1";
    inputs_info_[2].name = "arg2_1";
    outputs_info_[0].name = "output0";
}

AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg0_1 = ConstantHandle(input_handles[0]);
    int32_t arg0_1_dtype;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(arg0_1, &arg0_1_dtype));
    int32_t arg0_1_expected_dtype = aoti_torch_dtype_bfloat16();
    if (arg0_1_expected_dtype != arg0_1_dtype) {
        throw std::runtime_error("input_handles[0]: unmatched dtype");
    }
    auto arg0_1_size = arg0_1.sizes();
    if (arg0_1_size[0] < 2) {
        throw std::runtime_error("input_handles[0]: dim value is too small at 0");
    }
    if (arg0_1_size[0] > 64) {
        throw std::runtime_error("input_handles[0]: dim value is too large at 0");
    }
    if (16 != arg0_1_size[1]) {
        throw std::runtime_error("input_handles[0]: unmatched dim value at 1");
    }
    auto arg0_1_stride = arg0_1.strides();
    if (16 != arg0_1_stride[0]) {
        throw std::runtime_error("input_handles[0]: unmatched stride value at 0");
    }
    if (1 != arg0_1_stride[1]) {
        throw std::runtime_error("input_handles[0]: unmatched stride value at 1");
    }
}

AOTI_NOINLINE static void check_input_1(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg1_1 = ConstantHandle(input_handles[1]);
    int32_t arg1_1_expected_dtype = aoti_torch_dtype_int64();
    auto arg1_1_size = arg1_1.sizes();
    if (4 != arg1_1_size[0]) {
        throw std::runtime_error("input_handles[1]: unmatched dim value at 0");
    }
    auto arg1_1_stride = arg1_1.strides();
    if (1 != arg1_1_stride[0]) {
        throw std::runtime_error("input_handles[1]: unmatched stride value at 0");
    }
}

AOTI_NOINLINE static void check_input_2(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg2_1 = ConstantHandle(input_handles[2]);
    int32_t arg2_1_expected_dtype = aoti_torch_dtype_float32();
    auto arg2_1_size = arg2_1.sizes();
    auto arg2_1_stride = arg2_1.strides();
}
