// Internal: a rank that leaves the job on its own (exit(), quick_exit(), a
// fatal signal such as SIGSEGV or std::abort's SIGABRT) while the runtime
// runs ends the whole job at once, with a line naming the rank and how it
// ended, instead of leaving the other ranks waiting for it (mpi) or tearing
// the process down under running workers (smp).
#pragma once

namespace weft::detail {

/// Installs the exit and signal handlers (once per process; they act only
/// while a runtime is initialized and otherwise hand over to what was there
/// before). Call after the backend started: MPI's own handlers (UCX's crash
/// handler) are installed by then and are replaced.
void install_failure_handlers() noexcept;

}  // namespace weft::detail
