// Internal: raises glibc's malloc trim and mmap thresholds once per process
// (why: malloc_tuning.cpp). Returns whether the settings are in effect.
#pragma once

namespace weft::detail {

bool tune_malloc() noexcept;

}  // namespace weft::detail
