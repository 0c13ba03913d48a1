#include <gtest/gtest.h>

#include <thread>

#include "base/status.h"

namespace aotirt {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return AOTIRT_STATUS(kInvalidArgument, "{} is not positive", v);
  return v;
}

Status use_parse(int v, int* out) {
  AOTIRT_ASSIGN_OR_RETURN(*out, parse_positive(v));
  return Status();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(StatusTest, CarriesCodeMessageAndLocation) {
  Status s = AOTIRT_STATUS(kNotFound, "file {} missing", "x.pt2");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "file x.pt2 missing");
  EXPECT_NE(s.to_string().find("NOT_FOUND: file x.pt2 missing [status_test.cpp:"), std::string::npos);
  s.annotate("loading");
  EXPECT_EQ(s.message(), "loading: file x.pt2 missing");
}

TEST(StatusTest, ResultPropagates) {
  int out = 0;
  EXPECT_TRUE(use_parse(3, &out).ok());
  EXPECT_EQ(out, 3);
  Status bad = use_parse(-1, &out);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "-1 is not positive");
}

TEST(StatusTest, ResultFromOkStatusIsAnError) {
  Result<int> r{Status()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(StatusTest, LastErrorIsThreadLocal) {
  clear_last_error();
  set_last_error(AOTIRT_STATUS(kInternal, "boom"));
  EXPECT_EQ(get_last_error().message(), "boom");
  std::string seen = "unset";
  std::thread([&] { seen = get_last_error().ok() ? "ok" : "error"; }).join();
  EXPECT_EQ(seen, "ok");
  clear_last_error();
  EXPECT_TRUE(get_last_error().ok());
}

}  // namespace
}  // namespace aotirt
