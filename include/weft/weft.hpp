// weft — one include for the whole runtime.
#pragma once
#include "weft/am.hpp"
#include "weft/buffer.hpp"
#include "weft/checkout.hpp"
#include "weft/coll.hpp"
#include "weft/errors.hpp"
#include "weft/forkjoin.hpp"
#include "weft/offload.hpp"
#include "weft/pgas.hpp"
#include "weft/rma.hpp"
#include "weft/runtime.hpp"
#include "weft/sched.hpp"
#include "weft/serialize.hpp"
