// Internal: the target's and owner's sides of the pgas messages, and the
// origin's reply handlers (pgas_dispatch.cpp calls them from progress; the
// lock calls also run directly when owner and requester share a process).
#pragma once
#include <cstdint>

#include "pgas/state.hpp"
#include "pgas/wire.hpp"

namespace weft::pgas::detail {

void serve_atomic(rank_comm& c, weft::detail::am_message& m, const wire_header& h);
void atomic_replied(const wire_header& h);
void serve_lock_request(rank_pgas& owner, int requester, std::uint32_t id, std::uint64_t token, bool try_only);
void serve_unlock(rank_pgas& owner, int releaser, std::uint32_t id);
void lock_replied(const wire_header& h);

}  // namespace weft::pgas::detail
