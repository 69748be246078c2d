// Internal: the handler table through which the layers above am receive
// their messages. am itself knows only remote calls and their replies; every
// other message kind belongs to a layer that registers a handler for its id.
//
// Ids are one byte on the wire and must mean the same on every rank, so each
// layer has a fixed id, chosen by that layer and listed in
// docs/ARCHITECTURE.md (ids up to 15 travel in the mpi transport's compact
// frame). A layer registers from the initializer of a namespace-scope
// constant in the source file that holds its handler:
//
//   void coll_arrived(rank_comm& c, am_message&& m);          // the handler
//   const am_handler coll_messages = register_am_handler(3, "coll", &coll_arrived);
//   ...
//   send_am(c, dest, coll_messages, header, std::move(body));  // the senders
//
// Why at load time: registration is then complete before main() runs, so it
// precedes any message on every rank, whichever rank starts first. Why the
// senders name the constant the registration returns (not the bare number):
// weft is a static library, whose object files are linked only when
// something refers to them. A layer that sends on an id refers to the
// registering object file, so whenever a rank can send a layer's messages,
// every rank (the same executable) has that layer's handler.
#pragma once
#include <cstdint>

#include "am/message.hpp"

namespace weft::detail {

struct rank_comm;

/// A layer's message handler. Runs inside progress on the destination rank:
/// it must not block (start a task for longer work). `m.source` is the
/// sending rank.
using am_handler_fn = void (*)(rank_comm& c, am_message&& m);

/// Lowest id a layer may register (1 and 2 are am's calls and replies).
inline constexpr unsigned am_first_layer_id = 3;

/// Registers `fn` for messages carrying handler id `id` and returns that id
/// for the layer's senders. For the initializers of namespace-scope
/// constants only (see above). A reserved or already registered id ends the
/// program with a message naming both layers.
am_handler register_am_handler(unsigned id, const char* layer, am_handler_fn fn) noexcept;

/// Handlers by id (nullptr: none registered). Filled by
/// register_am_handler only; read by the dispatcher, one indexed load.
extern constinit am_handler_fn am_handler_table[256];

}  // namespace weft::detail
