# WEFT_CUDA=AUTO|ON|OFF: cuda devices for the offload layer (docs/OFFLOAD.md).
# AUTO builds them when a CUDA compiler and toolkit are found; ON requires
# them; OFF leaves them out. Sets WEFT_HAVE_CUDA. Whether a GPU is present is
# decided at run time: a build with CUDA runs unchanged without one.
set(WEFT_CUDA AUTO CACHE STRING "cuda devices for offload: AUTO, ON or OFF")
set_property(CACHE WEFT_CUDA PROPERTY STRINGS AUTO ON OFF)
set(WEFT_HAVE_CUDA OFF)
if(NOT WEFT_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Ampere and Hopper code, plus PTX for what comes later; the build
    # machine needs no GPU.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(WEFT_HAVE_CUDA ON)
    # CMake 3.25 knows no C++20 dialect flag for nvcc (12.0 and later take
    # -std=c++20); CUDA sources follow CMAKE_CXX_STANDARD.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    message(STATUS "weft: cuda devices enabled (CUDA ${CUDAToolkit_VERSION})")
  elseif(WEFT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WEFT_CUDA=ON but no CUDA compiler or toolkit was found")
  else()
    message(STATUS "weft: no CUDA toolkit found, cuda devices left out")
  endif()
endif()
