// weft — offload: kernels on any device of any rank, OpenMP-style.
//
// @code
//   #include <weft/offload.hpp>
//   // given: void saxpy(float, std::span<const float>, std::span<float>); std::vector<float> x, y;
//   weft::device d = weft::devices().back();                  // any rank's
//   auto f = weft::target(d, saxpy, 2.0f, weft::map_to(x), weft::map_tofrom(y));
//   f.get();
// @endcode
//
// Devices (weft/offload/device.hpp), device memory and copies
// (weft/offload/device_buffer.hpp), map clauses and the present table
// (weft/offload/map.hpp), target tasks and the data directives
// (weft/offload/target.hpp). The model: docs/OFFLOAD.md.
#pragma once
#include "weft/offload/device.hpp"
#include "weft/offload/device_buffer.hpp"
#include "weft/offload/map.hpp"
#include "weft/offload/target.hpp"
