AOTI_NOINLINE static void check_input_0(AtenTensorHandle* h) {
    ConstantHandle a = ConstantHandle(input_handles[0]);
    int32_t a_expected_dtype = aoti_torch_dtype_float16();
    auto a_size = a.sizes();
    if (3 != a_size[0]) { "}