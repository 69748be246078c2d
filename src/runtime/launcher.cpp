#include "runtime/launcher.hpp"

#include <cstdio>
#include <cstdlib>

namespace weft::detail {

namespace {

/// A variable's value as a count; -1 when unset or not a number.
long env_count(const char* name) noexcept {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' && x >= 0 ? x : -1;
}

}  // namespace

launcher_info detect_launcher() noexcept {
  // Sizes: MPICH's Hydra (and srun --mpi=pmi2) PMI_SIZE, Open MPI,
  // MVAPICH, an srun step (not SLURM_NTASKS: an sbatch script's own shell
  // has that, as the allocation's size). Ranks, for launchers that export
  // no size (PMIx): a rank above 0 means there are others.
  static constexpr const char* sizes[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE",
                                          "SLURM_STEP_NUM_TASKS"};
  static constexpr const char* ranks[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
  static char evidence[96];
  launcher_info info;
  auto note = [&](const char* name, long value, long size) {
    if (size <= info.size) return;
    info.size = static_cast<int>(size);
    std::snprintf(evidence, sizeof evidence, "%s=%ld", name, value);
    info.evidence = evidence;
  };
  for (const char* name : sizes)
    if (const long n = env_count(name); n > 1) note(name, n, n);
  for (const char* name : ranks)
    if (const long r = env_count(name); r > 0) note(name, r, r + 1);
  return info;
}

}  // namespace weft::detail
