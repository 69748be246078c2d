#include "impl.hpp"

namespace taskbench_weft {

scratch_set::scratch_set(const taskbench::task_graph& g) : bytes_(g.scratch_bytes_per_task) {
  if (bytes_ == 0) return;
  data_.resize(static_cast<std::size_t>(g.max_width));
  for (auto& d : data_) {
    d.resize(bytes_);
    taskbench::task_graph::prepare_scratch(d.data(), bytes_);
  }
}

}  // namespace taskbench_weft
