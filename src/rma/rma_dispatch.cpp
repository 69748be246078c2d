// Placeholder until the rma layer lands: an rma message is a protocol error.
#include "am/rank_comm.hpp"

namespace weft::detail {

void rma_arrived(rank_comm& c, am_message&& m) {
  (void)c;
  char msg[96];
  std::snprintf(msg, sizeof msg, "rma message from rank %d, but this build has no rma layer", m.source);
  fatal_handler(msg);
  std::abort();
}

}  // namespace weft::detail
