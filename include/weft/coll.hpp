// weft — collectives across ranks: barrier, broadcast, reduce, allreduce,
// gather, allgather, scatter, alltoall, alltoallv, exclusive_scan. Every
// rank must call the same collectives in the same order (as in MPI). Each
// comes in two forms: the plain name blocks (inside a task it suspends only
// that task) and returns the value; the `_async` name returns a future and
// runs the collective in a task of its own. Values are serialized like
// remote-call arguments.
//
// @code
//   // given: double local; std::string config; std::vector<double> v;
//   weft::barrier();
//   double total = weft::allreduce(local, std::plus<>{});
//   auto cfg = weft::broadcast(config, /*root=*/0);
//   std::vector<int> all = weft::allgather(weft::rank());
//   std::vector<double> sums = weft::allreduce(std::move(v), weft::elementwise{std::plus<>{}});
// @endcode
//
// Algorithms (p = the largest power of two <= nranks): barrier by
// dissemination, broadcast/gather/scatter on binomial trees, allreduce by
// recursive doubling (large elementwise vectors: reduce-scatter + allgather),
// reduce on a binomial tree, allgather by Bruck's algorithm, exclusive_scan
// by recursive doubling, alltoall(v) by direct exchange; about log2(nranks)
// message latencies each (alltoall: one round of nranks - 1 messages).
//
// Combining order. `op` must be associative; it need not be commutative:
// reductions keep rank order. They bracket as a fixed tree that depends only
// on nranks: ranks 2i and 2i+1 (i < nranks - p) are combined first, then
// the p resulting consecutive ranges as a balanced binary tree, always
// op(lower ranks, higher ranks). reduce (at any root), allreduce and
// elementwise allreduce (per element) use this same tree, so they give the
// same bits on every rank and on every run (floating point included).
// exclusive_scan brackets each rank's prefix by recursive doubling and
// returns op(init, prefix).
#pragma once
#include "weft/coll/detail.hpp"
#include "weft/coll/elementwise.hpp"
#include "weft/coll/exchange.hpp"
#include "weft/coll/reduce.hpp"
#include "weft/coll/tree.hpp"
