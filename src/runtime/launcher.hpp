// Internal: whether this process was started by a parallel launcher
// (mpiexec of MPICH or Open MPI, Slurm's srun, a PMIx launcher) as one of
// several, read from the variables those launchers set for each process.
#pragma once

namespace weft::detail {

struct launcher_info {
  int size = 1;                  // processes the launcher started (1: none, or alone)
  const char* evidence = "";     // the variable that told, e.g. "PMI_SIZE=4"
};

launcher_info detect_launcher() noexcept;

}  // namespace weft::detail
