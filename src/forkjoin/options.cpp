// forkjoin's --weft: options (options.hpp).
#include "forkjoin/options.hpp"

#include "runtime/option_registry.hpp"

namespace weft::detail::fj {

namespace {
forkjoin_option_values g_values;  // the defaults until a parse; before the registration below
}  // namespace

const forkjoin_option_values& forkjoin_options() noexcept { return g_values; }

}  // namespace weft::detail::fj

// Named in src/forkjoin/CMakeLists.txt so that every program links this file.
extern "C" const bool weft_forkjoin_options = weft::detail::register_layer_options(
    "forkjoin", {weft::detail::choice_option(
                     "forkjoin-checks", &weft::detail::fj::g_values.checks, {"auto", "on", "off"},
                     "at every fork and join, check that the task holds no checkout and that the forked function "
                     "captured no address on the task's stack (auto: on unless built with NDEBUG)"),
                 weft::detail::bool_option(
                     "steal-rdma", &weft::detail::fj::g_values.steal_rdma,
                     "steal from ranks of other nodes by one-sided operations where the transport's need no action "
                     "of the target (0: by message, to compare the paths; docs/FORKJOIN.md)")});
