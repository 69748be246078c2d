// Core count and thread pinning through hwloc (loaded once per process).
#pragma once

namespace weft::detail {

/// Physical cores of this machine (at least 1).
int hardware_cores() noexcept;

/// Binds the calling thread to core `index % hardware_cores()`; false if
/// binding is unsupported (the thread then runs unpinned).
bool pin_this_thread(int index) noexcept;

}  // namespace weft::detail
