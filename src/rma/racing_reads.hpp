// Gets whose source bytes other ranks may be writing at the same time, by
// design: the software cache fetches whole sub-blocks while other ranks
// write back their disjoint parts of them. The bytes the fetching rank did not ask
// for are dropped at its next acquire, so the program never sees a torn
// copy; but in one process (the smp backend) the copy reads memory another
// thread writes, which ThreadSanitizer reports. A get started inside a
// `racing_reads` scope does its copy with reads unrecorded, wherever the copy
// happens: at once (a mapped heap) or later, when the reply arrives.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace weft::rma::detail {

/// While one lives on a thread, that thread's reads are not recorded by
/// ThreadSanitizer and gets it starts are marked as racing by design.
class racing_reads {
 public:
  racing_reads() noexcept {
    ++depth();
#if defined(__SANITIZE_THREAD__)
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
  }
  ~racing_reads() {
#if defined(__SANITIZE_THREAD__)
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
    --depth();
  }
  racing_reads(const racing_reads&) = delete;
  racing_reads& operator=(const racing_reads&) = delete;

  /// Whether the calling thread is inside a scope.
  static bool active() noexcept { return depth() != 0; }

 private:
  static int& depth() noexcept {
    thread_local int d = 0;
    return d;
  }
};

}  // namespace weft::rma::detail
