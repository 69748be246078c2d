// weft — the intra-rank task layer: futures, async, fork-join.
//
// @code
//   weft::future<int> f = weft::async([] { return 6 * 7; });
//   int v = f.get();                       // suspends this task, not the worker
//
//   // given: void left(); void right(); long n; double a; std::vector<double> x, y;
//   weft::task_group g;                    // nested fork-join
//   g.run([] { left(); });  g.run([] { right(); });  g.wait();
//
//   weft::parallel_for(0L, n, 1024L, [&](long i) { y[i] += a * x[i]; });
// @endcode
//
// Every blocking call (future::get, task_group::wait, when_all(...).get())
// made from inside a task suspends that task's fiber and lets the worker run
// other work; called from a plain thread (e.g. main under weft::init) it
// blocks the thread. Exceptions thrown by a task travel to whoever calls
// get()/wait().
#pragma once

// The concepts, one header each; this header includes them all.
#include "weft/async.hpp"
#include "weft/dataflow.hpp"
#include "weft/errors.hpp"
#include "weft/future.hpp"
#include "weft/placement.hpp"
#include "weft/task_group.hpp"
#include "weft/this_task.hpp"
#include "weft/when_all.hpp"
