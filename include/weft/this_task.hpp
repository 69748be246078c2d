// weft — giving way to other tasks of the same worker.
#pragma once

namespace weft {

namespace this_task {
/// Lets other ready tasks of this worker run; resumes this task later.
void yield();
/// yield() only if another task is ready on this worker (its own queue,
/// tasks placed on it, or work injected into its rank); returns whether it
/// yielded. The check is a few loads, so a long-running background task (a
/// graph builder, a poller) can call it often: it gives way to real work at
/// once and otherwise runs while the worker would have been idle.
bool yield_if_others_ready();
}  // namespace this_task

}  // namespace weft
