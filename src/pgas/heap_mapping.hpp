// Internal: the memory behind the heaps. Where the transport offers no
// node-shared memory (smp: every rank in one process) the process reserves
// one private region per rank; elsewhere a rank creates a shared-memory object,
// maps it, and maps the objects of the ranks on its node, so that their
// heaps are plain memory here too. Regions are reserved, not committed:
// pages are backed as they are first touched.
#pragma once
#include <cstddef>

#include "pgas/state.hpp"

namespace weft::detail {
struct process_runtime;
}

namespace weft::pgas::detail {

/// Without node-shared memory: one private region per local rank (every local rank's
/// heap is mapped; view() shows each only to the ranks on its node).
void map_private_heaps(process_pgas& p);

/// With node-shared memory: creates and maps this rank's heap as a shared-memory object
/// (collective over all ranks; checks every rank has the same size).
void map_own_shared_heap(process_pgas& p, weft::detail::process_runtime& rt);
/// With node-shared memory: maps the heaps of the ranks on this node, as the transport's
/// same_node says (collective over all ranks), then removes this rank's object's name.
void map_node_peers(process_pgas& p, weft::detail::process_runtime& rt);

/// Unmaps every region in p.maps.
void unmap_heaps(process_pgas& p) noexcept;

}  // namespace weft::pgas::detail
