// weft — one include for the whole runtime.
#pragma once
#include "weft/runtime.hpp"
#include "weft/sched.hpp"
