// weft — placement hints: which worker thread of the rank should run a task.
#pragma once

namespace weft {

/// Placement hint for async and dataflow: run on worker thread `index` of
/// the calling rank (taken modulo weft::num_threads()). Keeping the tasks
/// that touch the same data on one worker keeps that data in its cache; the
/// hint is not a binding — a worker with nothing else to do takes placed
/// work from a busy sibling, so load still balances. Ignored when the task
/// is started off the rank's workers.
///
/// @code
///   // given: int x, width; std::vector<weft::shared_future<double>> cur, next;
///   // given: double step(std::vector<weft::shared_future<double>>&);
///   weft::on_thread where{x * weft::num_threads() / width};
///   next[x] = weft::dataflow(where, step, std::vector{cur[x - 1], cur[x], cur[x + 1]}).share();
/// @endcode
struct on_thread {
  int index;
};

}  // namespace weft
