#include "rma/rank_state.hpp"

namespace weft::rma::detail {

namespace {

// Handed down by the runtime before it starts the ranks (set_rma_settings).
rma_settings g_settings;

}  // namespace

void set_rma_settings(const rma_settings& s) noexcept { g_settings = s; }

rank_state::rank_state(rank_comm& c) : comm(c), settings(g_settings) {}

}  // namespace weft::rma::detail
