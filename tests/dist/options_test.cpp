// The option tables: the layers above the runtime register theirs, parsing
// reads them like the runtime's own, and every parse starts from defaults.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "forkjoin/options.hpp"
#include "offload/options.hpp"
#include "pgas/options.hpp"
#include "runtime/options.hpp"

namespace {

using weft::detail::option_error;

/// parse_options on a command line of `args` (after the program's name).
weft::detail::runtime_options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "options_test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  bool help = false;
  return weft::detail::parse_options(argc, argv.data(), help);
}

TEST(Parse, LayerOptionsReachTheLayersSettings) {
  parse({"--weft:cache-size=8M", "--weft:forkjoin-checks=off", "--weft:cuda-devices=0", "--weft:threads=3"});
  EXPECT_EQ(weft::pgas::detail::pgas_options().cache_size, std::size_t{8} << 20);
  EXPECT_EQ(weft::detail::fj::forkjoin_options().checks, "off");
  EXPECT_EQ(weft::detail::offload_options().cuda_devices, 0);
}

TEST(Parse, EveryParseStartsFromTheDefaults) {
  const auto runtime = parse({"--weft:segment=64K", "--weft:cpu-devices=3", "--weft:threads=3"});
  EXPECT_EQ(runtime.threads, 3);
  const auto again = parse({});
  EXPECT_EQ(again.threads, 0);
  EXPECT_EQ(weft::pgas::detail::pgas_options().segment, std::size_t{1} << 30);
  EXPECT_EQ(weft::detail::offload_options().cpu_devices, 1);
  EXPECT_EQ(weft::detail::offload_options().cuda_devices, weft::detail::max_cuda_devices);
}

TEST(Parse, LayerOptionsComeFromTheEnvironmentToo) {
  ::setenv("WEFT_CUDA_DEVICES", "2", 1);
  ::setenv("WEFT_CACHE", "always", 1);
  parse({"--weft:cache=auto"});  // the command line wins
  ::unsetenv("WEFT_CUDA_DEVICES");
  ::unsetenv("WEFT_CACHE");
  EXPECT_EQ(weft::detail::offload_options().cuda_devices, 2);
  EXPECT_EQ(weft::pgas::detail::pgas_options().cache, "auto");
}

TEST(Parse, BadLayerValuesNameTheOptionAndItsLimits) {
  try {
    parse({"--weft:cuda-devices=-1"});
    FAIL() << "accepted cuda-devices=-1";
  } catch (const option_error& e) {
    EXPECT_STREQ(e.what(), "invalid value '-1' for cuda-devices (expected an integer in [0, 1024])");
  }
  ::setenv("WEFT_CACHE_BLOCK", "1K", 1);
  try {
    parse({});
    FAIL() << "accepted WEFT_CACHE_BLOCK=1K";
  } catch (const option_error& e) {
    EXPECT_STREQ(e.what(), "cache-block must be at least 4K (from environment variable WEFT_CACHE_BLOCK)");
  }
  ::unsetenv("WEFT_CACHE_BLOCK");
  EXPECT_THROW(parse({"--weft:forkjoin-check=on"}), option_error);
}

TEST(Help, ListsTheRuntimesOptionsFirstThenEachLayersUnderItsName) {
  const std::string help = weft::detail::options_help();
  const auto at = [&](const char* text) {
    const auto p = help.find(text);
    EXPECT_NE(p, std::string::npos) << text;
    return p;
  };
  const auto runtime = at("\nruntime options:\n  --weft:threads\n");
  EXPECT_LT(runtime, at("--weft:trace-limit\n"));
  EXPECT_LT(at("--weft:trace-limit\n"), at("--weft:help\n"));
  const auto pgas = at("\npgas options:\n");
  const auto forkjoin = at("\nforkjoin options:\n  --weft:forkjoin-checks\n");
  const auto offload = at("\noffload options:\n  --weft:cpu-devices\n");
  for (const auto layer : {pgas, forkjoin, offload}) EXPECT_LT(at("--weft:help\n"), layer);
  // Each option under its own layer's heading: after it, before the next.
  EXPECT_LT(forkjoin, offload);
  EXPECT_LT(offload, at("--weft:cuda-devices\n"));
  EXPECT_LT(at("--weft:cuda-devices\n"), pgas);
  EXPECT_LT(pgas, at("--weft:cache-size\n"));
}

}  // namespace
