// weft offload — the device's side of a target task (internal): the wire
// forms of its arguments, what the kernel receives for each, and the remote
// call that runs it on the device's rank. weft/offload/target.hpp is the
// caller's side.
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/future.hpp"
#include "weft/offload/cuda.hpp"
#include "weft/offload/device_buffer.hpp"
#include "weft/offload/kernel_ref.hpp"
#include "weft/offload/map.hpp"

namespace weft::detail {

// ---- the device's side (src/offload/device_scope.cpp) ------------------------

class local_device;

/// Names a target task across the job: the rank that launched it and a
/// number unique in that rank's process (0: not tracked).
struct task_token {
  int rank = -1;
  std::uint64_t seq = 0;
  friend bool operator==(const task_token&, const task_token&) = default;
};

/// A dependency the device's rank resolves itself: a target task still in
/// flight when this one was launched, running on a device of rank `rank`.
struct remote_dependency {
  int rank = -1;
  task_token task;
};

/// Tells a device's rank that `consumers` launches named `task` as a
/// dependency: once that many have arrived, its record there can go.
struct consumer_count {
  task_token task;
  std::uint64_t consumers = 0;
};

/// One target task on its device's rank: resolves and checks addresses,
/// holds the task's temporary allocations (freed on destruction) and runs
/// the copies and the kernel on the device's queues.
class device_scope {
 public:
  /// Throws unless `device` is a device of this rank. The task starts
  /// (copies in, fetches, kernel) once the target tasks in `after` are done;
  /// a failed one fails it.
  explicit device_scope(int device, std::vector<remote_dependency> after = {});
  ~device_scope();
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

  /// [address, address + bytes) inside a live allocation of the device.
  std::byte* resolve(std::uint64_t address, std::size_t bytes);
  std::byte* allocate_temporary(std::size_t bytes);
  /// A temporary filled (when run starts) from another device's memory.
  std::byte* fetch_later(int device, std::uint64_t address, std::size_t bytes);
  int id() const noexcept { return device_; }
  void copy_in_later(std::byte* to, std::vector<std::byte>&& from);
  void copy_out_later(const std::byte* from, std::size_t bytes);
  /// Fetches and copies in (on the transfer queue), then the kernel on the kernel queue
  /// (its exception rethrown naming the device), then the copies out; the
  /// bytes copied out, in the order of copy_out_later.
  /// `name`: a code address naming the kernel in a timeline (--weft:trace).
  std::vector<std::vector<std::byte>> run(const std::function<void()>& kernel, const void* name = nullptr);
  /// The same with a launcher, given the device's compute stream (cuda devices).
  std::vector<std::vector<std::byte>> run_launcher(const std::function<void(cuda_stream)>& launcher,
                                                   const void* name = nullptr);

 private:
  struct pending;
  class fetching;
  std::vector<std::vector<std::byte>> run_steps(const std::function<void(local_device&)>& kernel);
  int device_;
  std::unique_ptr<pending> p_;
};

// ---- wire forms of the arguments ---------------------------------------------

inline constexpr std::uint8_t wire_copy_out = 1;

/// A mapped range on its way to the device: its address there (0: allocate
/// for this task), the bytes to copy in (empty: none) and whether to copy out.
template <class T>
struct map_wire {
  std::uint64_t address = 0;
  std::uint64_t count = 0;
  std::uint8_t flags = 0;
  std::vector<std::byte> data;
  template <class Ar>
  void serialize(Ar& ar) {
    ar & address & count & flags & data;
  }
};

template <class T> struct is_map_clause : std::false_type {};
template <class T> struct is_map_clause<map_clause<T>> : std::true_type {};
template <class T> struct is_device_buffer : std::false_type {};
template <class T> struct is_device_buffer<device_buffer<T>> : std::true_type {};
template <class T> struct is_map_wire : std::false_type {};
template <class T> struct is_map_wire<map_wire<T>> : std::true_type {};

/// What the kernel receives for an argument that arrived as W.
template <class W> struct kernel_arg { using type = W; };
template <class T> struct kernel_arg<map_wire<T>> { using type = std::span<T>; };
template <class T> struct kernel_arg<device_buffer<T>> { using type = std::span<T>; };
template <class T> struct kernel_arg<std::vector<device_buffer<T>>> { using type = std::vector<std::span<T>>; };
template <class T> struct is_buffer_list : std::false_type {};
template <class T> struct is_buffer_list<std::vector<device_buffer<T>>> : std::true_type {};

template <class T>
std::span<T> bind_buffer(device_scope& dev, const device_buffer<T>& b) {
  std::byte* p = b.device_id == dev.id() ? dev.resolve(b.address, b.bytes())
                                         : dev.fetch_later(b.device_id, b.address, b.bytes());
  return {reinterpret_cast<T*>(p), b.count};
}
template <class W> using kernel_arg_t = typename kernel_arg<W>::type;

template <class W>
kernel_arg_t<W> bind_on_device(device_scope& dev, W& w) {
  if constexpr (is_map_wire<W>::value) {
    using T = typename kernel_arg_t<W>::element_type;
    const std::size_t bytes = w.count * sizeof(T);
    std::byte* p = w.address == 0 ? dev.allocate_temporary(bytes) : dev.resolve(w.address, bytes);
    if (!w.data.empty()) dev.copy_in_later(p, std::move(w.data));
    if (w.flags & wire_copy_out) dev.copy_out_later(p, bytes);
    return {reinterpret_cast<T*>(p), w.count};
  } else if constexpr (is_device_buffer<W>::value) {
    return bind_buffer(dev, w);
  } else if constexpr (is_buffer_list<W>::value) {
    kernel_arg_t<W> spans;
    spans.reserve(w.size());
    for (const auto& b : w) spans.push_back(bind_buffer(dev, b));
    return spans;
  } else {
    return std::move(w);
  }
}

struct launch_header {
  int device = -1;
  std::uint64_t kernel = 0;
  task_token task;                        // this task
  std::vector<remote_dependency> after;   // resolved on the device's rank
  std::vector<consumer_count> counts;     // for this rank's records, carried along
  template <class Ar>
  void serialize(Ar& ar) {
    ar & device & kernel & task & after & counts;
  }
};

/// On the device's rank (src/offload/task_table.cpp): records the counts a
/// launch carries, and the end of a task, which wakes every launch that
/// named it as a dependency.
void consumer_counts_arrived(const std::vector<consumer_count>& counts);
void task_finished(const task_token& task, std::exception_ptr error) noexcept;

/// Its address names a kernel of callable type K in a timeline: the trace
/// writer shows the symbol of this instantiation as K's name.
template <class K>
void kernel_symbol() noexcept {}

/// A code address naming kernel `k` in a timeline (--weft:trace): the
/// function itself, or kernel_symbol<K> for a callable.
template <class K>
const void* kernel_trace_name(const K& k) noexcept {
  if constexpr (std::is_pointer_v<K>) return reinterpret_cast<const void*>(k);
  else return reinterpret_cast<const void*>(&kernel_symbol<K>);
}

/// The remote call that runs a target task on the device's rank.
template <class K, class... W>
struct launch_on_device {
  std::vector<std::vector<std::byte>> operator()(launch_header h, W... w) const {
    consumer_counts_arrived(h.counts);
    try {
      auto outs = run(h, w...);
      task_finished(h.task, nullptr);
      return outs;
    } catch (...) {
      task_finished(h.task, std::current_exception());
      throw;
    }
  }

 private:
  static std::vector<std::vector<std::byte>> run(launch_header& h, W&... w) {
    device_scope dev(h.device, std::move(h.after));
    // Braced: the arguments bind in order, so copies out keep their order.
    std::tuple<kernel_arg_t<W>...> args{bind_on_device(dev, w)...};
    const K kernel = decode_kernel<K>(h.kernel);
    // A host kernel takes the arguments; a launcher (cuda devices) takes
    // the device's stream first. Host form first: a generic kernel is one.
    // A kernel returns nothing: a value would be dropped on the device's
    // rank, so results go through map_from/map_tofrom ranges or buffers.
    if constexpr (std::is_invocable_v<const K&, kernel_arg_t<W>&...>) {
      static_assert(std::is_void_v<std::invoke_result_t<const K&, kernel_arg_t<W>&...>>,
                    "weft::target: the kernel returns a value, which would be lost; a kernel returns void and "
                    "hands results back through map_from/map_tofrom ranges or device buffers");
      return dev.run([&] { std::apply([&](auto&... a) { std::invoke(kernel, a...); }, args); },
                     kernel_trace_name(kernel));
    } else if constexpr (std::is_invocable_v<const K&, cuda_stream, kernel_arg_t<W>&...>) {
      static_assert(std::is_void_v<std::invoke_result_t<const K&, cuda_stream, kernel_arg_t<W>&...>>,
                    "weft::target: the launcher returns a value, which would be lost; a launcher returns void and "
                    "its kernel hands results back through map_from/map_tofrom ranges or device buffers");
      return dev.run_launcher(
          [&](cuda_stream s) { std::apply([&](auto&... a) { std::invoke(kernel, s, a...); }, args); },
          kernel_trace_name(kernel));
    } else {
      static_assert(sizeof(K) == 0,
                    "weft::target: the kernel takes neither the arguments as given (see weft/offload/target.hpp) "
                    "nor a cudaStream_t followed by them");
      return {};
    }
  }
};

}  // namespace weft::detail
