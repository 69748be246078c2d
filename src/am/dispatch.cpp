// Remote calls: sending, running them on the destination rank as tasks, and
// delivering replies to the caller's future.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "am/rank_comm.hpp"
#include "weft/am.hpp"

namespace weft::detail {

namespace {

thread_local std::vector<std::byte> spare_call_buffer;

/// A body up to copied_body_limit is copied into its message, which leaves
/// the serialization buffer with the caller: keep it for the next call.
void keep_call_buffer(std::vector<std::byte>&& bytes) noexcept {
  if (bytes.capacity() != 0 && bytes.capacity() <= 4096) spare_call_buffer = std::move(bytes);
}

struct call_header {
  std::uint64_t reply_token;  // the caller's reply_slot*, 0 for post_at
};

[[noreturn]] void fatal_from(const char* what, int source, const char* why) {
  char msg[512];
  std::snprintf(msg, sizeof msg, "%s from rank %d: %s", what, source, why);
  fatal_handler(msg);
  std::abort();
}

[[noreturn, gnu::cold]] void unknown_handler(const am_message& m) {
  char msg[128];
  std::snprintf(msg, sizeof msg, "message with unknown handler id %u from rank %d", static_cast<unsigned>(m.handler),
                m.source);
  fatal_handler(msg);
  std::abort();
}

/// The code that names a call on a timeline: the function it calls, or for
/// a function object the invoker instantiated for its type.
const void* action_code(const resolved_action& a) noexcept {
  if (a.target != nullptr) return reinterpret_cast<const void*>(a.target);
  return reinterpret_cast<const void*>(a.record->invoke);
}

/// A received call, run as a task on the destination rank.
struct call_task final : task_base, pooled {
  rank_comm* comm;
  am_message msg;
  static void go(task_base* t) noexcept {
    auto* self = static_cast<call_task*>(t);
    self->execute();
    delete self;
  }
  void execute() noexcept {
    const call_header h = am_header<call_header>(msg, "remote call");
    serialization::reader in = msg.reader();
    resolved_action action;
    try {
      action = read_action(in);
    } catch (const std::exception& e) {
      fatal_from("invalid remote call", msg.source, e.what());
    }
    trace::name_running(trace::kind::remote_call, action_code(action));
    if (h.reply_token == 0) {
      try {
        action.invoke(in, nullptr);
      } catch (const serialization_error& e) {
        fatal_from("malformed remote call", msg.source, e.what());
      } catch (...) {
        std::string where = "a call posted by rank " + std::to_string(msg.source);
        fatal_uncaught(where.c_str());
      }
      return;
    }
    serialization::writer out(take_call_buffer());
    serialization::owner keep;
    try {
      keep = action.invoke(in, &out);
    } catch (const serialization_error& e) {
      fatal_from("malformed remote call", msg.source, e.what());
    }
    const int to = msg.source;
    msg = am_message{};  // free the arguments before the reply travels
    serialization::message body = std::move(out).finish();
    send_am(*comm, to, am_handler::reply, call_header{h.reply_token}, std::move(body), std::move(keep));
    keep_call_buffer(std::move(body.bytes));
  }
};

}  // namespace

void rank_comm::no_such_rank(int dest) const {
  throw std::out_of_range("weft: rank " + std::to_string(dest) + " does not exist (nranks = " +
                          std::to_string(nranks) + ")");
}

rank_comm& current_comm() {
  auto* s = static_cast<scheduler*>(current_scheduler());
  if (s == nullptr || s->comm == nullptr) {
    std::fputs("weft: remote call or collective outside a running weft runtime\n", stderr);
    std::abort();
  }
  return *static_cast<rank_comm*>(s->comm);
}

void am_dispatch(void* ctx, am_message&& m) {
  auto& comm = *static_cast<rank_comm*>(ctx);
  const trace::message_scope traced(trace::record_type::receive, m.source, [&] { return trace_info(m); });
  switch (m.handler) {
    case am_handler::call: {
      auto* t = new call_task;
      t->run = &call_task::go;
      t->comm = &comm;
      t->msg = std::move(m);
      spawn_quietly(comm.sched, t);  // the transport wakes a worker per batch
      break;
    }
    case am_handler::reply: {
      const call_header h = am_header<call_header>(m, "reply");
      serialization::reader in = m.reader();
      auto* slot = reinterpret_cast<reply_slot*>(static_cast<std::uintptr_t>(h.reply_token));
      slot->deliver(slot, in);
      break;
    }
    default: {
      // A layer's message (am/handlers.hpp): one indexed load.
      const am_handler_fn fn = am_handler_table[static_cast<std::uint8_t>(m.handler)];
      if (fn == nullptr) [[unlikely]]
        unknown_handler(m);
      fn(comm, std::move(m));
    }
  }
}

std::vector<std::byte> take_call_buffer() noexcept { return std::move(spare_call_buffer); }

void send_call(int dest, serialization::message&& body, serialization::owner&& keep, reply_slot* reply) {
  send_am(current_comm(), dest, am_handler::call, call_header{reinterpret_cast<std::uintptr_t>(reply)},
          std::move(body), std::move(keep));
  keep_call_buffer(std::move(body.bytes));
}

}  // namespace weft::detail
