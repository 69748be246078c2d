#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_runtime.hpp"

using weft::test::scoped_runtime;

TEST(Runtime, ThreadsOptionAndIdentity) {
  scoped_runtime rt({"--weft:threads=3", "--weft:pin=0"});
  EXPECT_TRUE(weft::is_initialized());
  EXPECT_EQ(weft::num_threads(), 3);
  EXPECT_EQ(weft::rank(), 0);
  EXPECT_EQ(weft::nranks(), 1);
  EXPECT_EQ(weft::thread_index(), -1);  // main is not a worker
  int idx = weft::async([] { return weft::thread_index(); }).get();
  EXPECT_GE(idx, 0);
  EXPECT_LT(idx, 3);
}

TEST(Runtime, StripsWeftOptionsAndKeepsOthers) {
  std::vector<std::string> args = {"prog", "-steps", "--weft:threads=2", "10", "--other", "--weft:pin=0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  weft::init(argc, argv.data());
  ASSERT_EQ(argc, 4);
  EXPECT_STREQ(argv[1], "-steps");
  EXPECT_STREQ(argv[2], "10");
  EXPECT_STREQ(argv[3], "--other");
  EXPECT_EQ(argv[4], nullptr);
  EXPECT_EQ(weft::num_threads(), 2);
  weft::finalize();
  EXPECT_FALSE(weft::is_initialized());
}

TEST(Runtime, EnvironmentVariableSetsOption) {
  setenv("WEFT_THREADS", "2", 1);
  {
    scoped_runtime rt;
    EXPECT_EQ(weft::num_threads(), 2);
  }
  {
    scoped_runtime rt({"--weft:threads=1"});  // command line wins
    EXPECT_EQ(weft::num_threads(), 1);
  }
  unsetenv("WEFT_THREADS");
}

TEST(Runtime, MallocTuningKeepsFreedMemory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc";
#endif
  for (const char* v : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"})
    if (std::getenv(v) != nullptr) GTEST_SKIP() << v << " is set: weft leaves malloc alone then";
  scoped_runtime rt({"--weft:threads=1"});
  // 2 MiB in 4 KiB blocks, all freed: glibc's default trim threshold (128
  // KiB) would give the top of the heap back to the kernel; with weft's
  // setting it stays, ready for the next burst of payloads.
  std::vector<void*> blocks;
  for (int i = 0; i < 512; ++i) blocks.push_back(std::malloc(4096));
  for (void* b : blocks) std::free(b);
  EXPECT_GE(mallinfo2().keepcost, std::size_t{1} << 20);
}

TEST(Runtime, MallocTuningCanBeTurnedOff) {
  setenv("WEFT_MALLOC_TUNING", "0", 1);  // the option's environment name
  {
    scoped_runtime rt({"--weft:threads=1"});
    EXPECT_EQ(weft::async([] { return 7; }).get(), 7);
  }
  unsetenv("WEFT_MALLOC_TUNING");
  scoped_runtime rt({"--weft:threads=1", "--weft:malloc-tuning=off"});
  EXPECT_EQ(weft::async([] { return 8; }).get(), 8);
}

TEST(Runtime, FinalizeRunsQueuedWork) {
  std::atomic<int> done{0};
  {
    scoped_runtime rt({"--weft:threads=2"});
    for (int i = 0; i < 10000; ++i) {
      // Detached: futures dropped immediately, work still queued at finalize.
      (void)weft::async([&done] {
        volatile double x = 1;
        for (int k = 0; k < 100; ++k) x = x * 1.0000001;
        done++;
      });
    }
  }
  EXPECT_EQ(done.load(), 10000);
}

TEST(Runtime, InitFinalizeRepeatedly) {
  for (int i = 0; i < 20; ++i) {
    scoped_runtime rt({"--weft:threads=2"});
    EXPECT_EQ(weft::async([i] { return i; }).get(), i);
  }
}

TEST(Runtime, RunReturnsBodyStatus) {
  std::vector<std::string> args = {"prog", "--weft:threads=2", "x"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = 3;
  int seen_argc = 0;
  int rc = weft::run(argc, argv.data(), [&](int ac, char**) {
    seen_argc = ac;
    return weft::async([] { return 7; }).get();
  });
  EXPECT_EQ(rc, 7);
  EXPECT_EQ(seen_argc, 2);
  argc = 1;
  EXPECT_EQ(weft::run(argc, argv.data(), [] {}), 0);
}

namespace {
void init_with(const char* opt) {
  static char a0[] = "prog";
  static std::string a1;
  a1 = opt;
  static char* argv[3];
  argv[0] = a0;
  argv[1] = a1.data();
  argv[2] = nullptr;
  int argc = 2;
  weft::init(argc, argv);
}
void run_throwing() {
  static char a0[] = "prog";
  static char a1[] = "--weft:threads=2";
  static char* argv[] = {a0, a1, nullptr};
  int argc = 2;
  weft::run(argc, argv, []() -> int { throw std::runtime_error("kaput"); });
}
}  // namespace

TEST(RuntimeDeathTest, UnknownOptionExitsWithMessage) {
  EXPECT_EXIT(init_with("--weft:bogus=1"), ::testing::ExitedWithCode(2), "unknown option '--weft:bogus'");
}

TEST(RuntimeDeathTest, BadValueExitsWithMessage) {
  EXPECT_EXIT(init_with("--weft:threads=zero"), ::testing::ExitedWithCode(2), "invalid value 'zero' for threads");
  EXPECT_EXIT(init_with("--weft:threads"), ::testing::ExitedWithCode(2), "needs a value");
  EXPECT_EXIT(init_with("--weft:backend=tcp"), ::testing::ExitedWithCode(2), "one of: auto, smp, mpi");
  EXPECT_EXIT(init_with("--weft:malloc-tuning=maybe"), ::testing::ExitedWithCode(2),
              "invalid value 'maybe' for malloc-tuning");
  EXPECT_EXIT(init_with("--weft:coalesce=100"), ::testing::ExitedWithCode(2), "coalesce must be at least 256");
  EXPECT_EXIT(init_with("--weft:coalesce=17M"), ::testing::ExitedWithCode(2), "coalesce must be at most 16M");
  EXPECT_EXIT(init_with("--weft:eager=1G"), ::testing::ExitedWithCode(2), "eager must be at most 16M");
  // The environment name of a hyphenated option: upper case, '-' as '_'
  // (read, so a bad value there fails the same way).
  EXPECT_EXIT(
      {
        setenv("WEFT_MALLOC_TUNING", "maybe", 1);
        init_with("--weft:threads=1");
      },
      ::testing::ExitedWithCode(2), "invalid value 'maybe' for malloc-tuning");
}

TEST(RuntimeDeathTest, UncaughtExceptionInRunEndsJobNamingRank) {
  EXPECT_EXIT(run_throwing(), ::testing::ExitedWithCode(1), "rank 0: uncaught exception in the main task: kaput");
}
