// Error-path shims: aoti_torch_check (the one that throws), aoti_torch_warn,
// the proxy executor refusal, check_inf_and_nan, print_tensor_handle, and how
// shim_call turns statuses and exceptions into 1 plus a last-error message.
#include <gtest/gtest.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/status.h"
#include "shim/common/shim_util.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace {

struct CapturedLog {
  std::vector<std::pair<LogLevel, std::string>> lines;
};

void capture_sink(LogLevel level, const char* message, void* user) {
  static_cast<CapturedLog*>(user)->lines.emplace_back(level, message);
}

// Routes log messages to |log| for the life of the object.
class LogCapture {
 public:
  explicit LogCapture(CapturedLog* log, LogLevel level = LogLevel::kWarning) : old_level_(log_level()) {
    set_log_sink(capture_sink, log);
    set_log_level(level);
  }
  ~LogCapture() {
    set_log_sink(nullptr, nullptr);
    set_log_level(old_level_);
  }

 private:
  LogLevel old_level_;
};

TEST(ShimCheckTest, TrueReturnsQuietly) {
  clear_last_error();
  aoti_torch_check(true, "fn", "file.cpp", 1, "never shown");
  aoti_torch_check(true, nullptr, nullptr, 0, nullptr);
  EXPECT_TRUE(get_last_error().ok());
}

TEST(ShimCheckTest, FalseThrowsAndRecordsTheLastError) {
  clear_last_error();
  bool caught = false;
  try {
    aoti_torch_check(false, "kernel_fn", "model.cpp", 42, "index out of bounds");
  } catch (const std::exception& e) {
    caught = true;
    std::string what = e.what();
    EXPECT_NE(what.find("index out of bounds"), std::string::npos) << what;
    EXPECT_NE(what.find("kernel_fn"), std::string::npos) << what;
    EXPECT_NE(what.find("model.cpp:42"), std::string::npos) << what;
  }
  EXPECT_TRUE(caught);
  const Status& last = get_last_error();
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.message().find("index out of bounds"), std::string::npos);
}

TEST(ShimCheckTest, FalseWithNullStringsStillThrows) {
  EXPECT_THROW(aoti_torch_check(false, nullptr, nullptr, 0, nullptr), std::exception);
  EXPECT_FALSE(get_last_error().ok());
}

TEST(ShimWarnTest, NullStringsDoNotCrash) {
  CapturedLog log;
  {
    LogCapture capture(&log);
    aoti_torch_warn(nullptr, nullptr, 0, nullptr);
    aoti_torch_warn("fn", "file.cpp", 7, "slow path taken");
  }
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[0].first, LogLevel::kWarning);
  EXPECT_NE(log.lines[0].second.find("model warning"), std::string::npos) << log.lines[0].second;
  EXPECT_NE(log.lines[1].second.find("slow path taken"), std::string::npos);
  EXPECT_NE(log.lines[1].second.find("file.cpp:7"), std::string::npos);
}

TEST(ShimProxyExecutorTest, RefusedWithAClearMessage) {
  clear_last_error();
  int64_t ints[2] = {1, 2};
  EXPECT_EQ(aoti_torch_proxy_executor_call_function(nullptr, 3, 2, ints, 0, nullptr), 1);
  const Status& e = get_last_error();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.code(), StatusCode::kUnimplemented);
  EXPECT_NE(e.message().find("extern node 3"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("proxy executor"), std::string::npos) << e.message();
  EXPECT_EQ(e.message().rfind("aoti_torch_proxy_executor_call_function", 0), 0u) << e.message();
}

TEST(ShimDebugTest, CheckInfAndNanAndPrint) {
  AtenTensorHandle t = nullptr;
  const int64_t n = 3;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, 6, 0, 0, &t), 0);
  EXPECT_EQ(aoti_torch_check_inf_and_nan("buf0", t), 0);
  EXPECT_EQ(aoti_torch_check_inf_and_nan(nullptr, t), 0);
  clear_last_error();
  EXPECT_EQ(aoti_torch_check_inf_and_nan("buf0", nullptr), 1);
  EXPECT_FALSE(get_last_error().ok());
  CapturedLog log;
  {
    LogCapture capture(&log, LogLevel::kInfo);
    aoti_torch_print_tensor_handle(t, "after conv");
    aoti_torch_print_tensor_handle(t, nullptr);
    aoti_torch_print_tensor_handle(nullptr, "nothing");
  }
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_NE(log.lines[0].second.find("after conv"), std::string::npos) << log.lines[0].second;
  EXPECT_NE(log.lines[0].second.find("float32 [3]"), std::string::npos) << log.lines[0].second;
  EXPECT_EQ(aoti_torch_delete_tensor_object(t), 0);
}

TEST(ShimDebugTest, SaveTensorHandleLogsInsteadOfPickling) {
  AtenTensorHandle t = nullptr;
  const int64_t sizes[2] = {2, 5};
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, 15, 0, 0, &t), 0);
  CapturedLog log;
  {
    LogCapture capture(&log, LogLevel::kInfo);
    aoti_torch_save_tensor_handle(t, "buf7", "before_launch", "triton_poi_0");
    aoti_torch_save_tensor_handle(t, nullptr, nullptr, nullptr);
    aoti_torch_save_tensor_handle(nullptr, "x", "y", "z");
  }
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_NE(log.lines[0].second.find("buf7"), std::string::npos) << log.lines[0].second;
  EXPECT_NE(log.lines[0].second.find("bfloat16 [2, 5]"), std::string::npos) << log.lines[0].second;
  EXPECT_EQ(aoti_torch_delete_tensor_object(t), 0);
}

TEST(ShimProfileTest, RecordFunctionGuardsOpenAndClose) {
  AtenRecordFunctionHandle guard = nullptr;
  ASSERT_EQ(aoti_record_function_start("triton_poi_0", nullptr, nullptr, 0, &guard), 0);
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(aoti_record_function_end(guard), 0);
  clear_last_error();
  EXPECT_EQ(aoti_record_function_start("x", nullptr, nullptr, 0, nullptr), 1);
  EXPECT_FALSE(get_last_error().ok());
  EXPECT_EQ(aoti_record_function_end(nullptr), 1);
}

TEST(ShimCallTest, StatusesBecomeOneWithTheEntryPointNamed) {
  clear_last_error();
  EXPECT_EQ(shim_call("aoti_torch_demo", []() -> Status { return Status(); }), 0);
  EXPECT_TRUE(get_last_error().ok());
  EXPECT_EQ(shim_call("aoti_torch_demo", []() -> Status { return AOTIRT_STATUS(kNotFound, "no {}", "thing"); }), 1);
  EXPECT_EQ(get_last_error().code(), StatusCode::kNotFound);
  EXPECT_EQ(get_last_error().message(), "aoti_torch_demo: no thing");
}

TEST(ShimCallTest, ExceptionsNeverEscape) {
  clear_last_error();
  EXPECT_EQ(shim_call("aoti_torch_demo", []() -> Status { throw std::runtime_error("boom"); }), 1);
  EXPECT_EQ(get_last_error().code(), StatusCode::kInternal);
  EXPECT_EQ(get_last_error().message(), "aoti_torch_demo: boom");
  EXPECT_EQ(shim_call("aoti_torch_demo", []() -> Status { throw std::bad_alloc(); }), 1);
  EXPECT_EQ(get_last_error().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(get_last_error().message().find("out of host memory"), std::string::npos);
  EXPECT_EQ(shim_call("aoti_torch_demo", []() -> Status { throw 42; }), 1);
  EXPECT_NE(get_last_error().message().find("unknown exception"), std::string::npos);
}

TEST(ShimCallTest, LastErrorIsPerThread) {
  clear_last_error();
  std::thread([] {
    int64_t dim = 0;
    EXPECT_EQ(aoti_torch_get_dim(nullptr, &dim), 1);
    EXPECT_FALSE(get_last_error().ok());
  }).join();
  EXPECT_TRUE(get_last_error().ok());
}

}  // namespace
}  // namespace aotirt
