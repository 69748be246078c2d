#include "am/mpi_transport.hpp"

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <sched.h>
#include <unistd.h>

namespace weft::detail {

namespace {

constexpr int tag_eager = 1;
constexpr int tag_bulk = 2;

// Wire layout of the eager message: fixed part, header bytes, inline body,
// then either the bulk segments themselves (flattened) or nothing (they
// follow on tag_bulk).
struct wire_prefix {
  std::uint32_t magic;
  std::uint32_t handler;
  std::uint32_t header_len;
  std::uint32_t n_bulk;
  std::uint64_t body_len;
  std::uint32_t flattened;  // 1: bulk segments follow inline
  std::uint32_t unused;
};
constexpr std::uint32_t wire_magic = 0x77656674;  // "weft"

struct outgoing {
  int dest;
  am_message msg;
};

struct in_flight_send {
  std::vector<MPI_Request> requests;
  std::vector<std::byte> buffer;  // the eager part
  am_message msg;                 // keeps bulk memory alive
};

struct in_flight_recv {
  int source;
  am_message msg;
  std::vector<MPI_Request> requests;
};

std::once_flag mpi_once;
bool we_initialized_mpi = false;

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && we_initialized_mpi) MPI_Finalize();
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

}  // namespace

struct mpi_transport::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::mutex queue_mutex;
  std::vector<outgoing> queue;  // filled by send(), drained under the progress lock
  std::atomic<std::size_t> queued{0};
  std::vector<outgoing> draining;
  std::deque<in_flight_send> sends;
  std::deque<in_flight_recv> recvs;  // waiting for bulk segments, in arrival order
  std::vector<am_message> loopback;   // messages to self
};

bool mpi_transport::launched_with_several_ranks() noexcept { return env_int("PMI_SIZE", 1) > 1; }

mpi_transport::mpi_transport(am_dispatch_fn dispatch, std::size_t eager_limit)
    : p_(std::make_unique<impl>()), dispatch_(dispatch), eager_limit_(eager_limit < 1024 ? 1024 : eager_limit) {
  std::call_once(mpi_once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (provided < MPI_THREAD_SERIALIZED) {
        std::fprintf(stderr, "weft: MPI does not provide MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      we_initialized_mpi = true;
      std::atexit(finalize_mpi_at_exit);
    }
  });
  MPI_Comm_dup(MPI_COMM_WORLD, &p_->comm);
  MPI_Comm_set_errhandler(p_->comm, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(p_->comm, &rank_);
  MPI_Comm_size(p_->comm, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(p_->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

mpi_transport::~mpi_transport() {
  std::lock_guard lock(lock_);
  while (!p_->sends.empty()) {  // quiescence guarantees these are done or nearly
    auto& s = p_->sends.front();
    MPI_Waitall(static_cast<int>(s.requests.size()), s.requests.data(), MPI_STATUSES_IGNORE);
    p_->sends.pop_front();
  }
  MPI_Comm_free(&p_->comm);
}

void mpi_transport::abort_world(int code) noexcept {
  // Not MPI_Abort: when several ranks fail at once (a corrupted value seen
  // by every consumer), concurrent MPI_Abort calls can crash inside UCX and
  // then hang in its crash handler. A rank that exits non-zero before
  // MPI_Finalize makes mpiexec (Hydra) kill the others and fail the job,
  // with this rank's output forwarded first.
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

void mpi_transport::send(int dest, am_message&& m) {
  std::lock_guard lock(p_->queue_mutex);
  p_->queue.push_back(outgoing{dest, std::move(m)});
  p_->queued.store(p_->queue.size(), std::memory_order_release);
}

bool mpi_transport::progress() {
  std::unique_lock lock(lock_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  return progress_locked();
}

bool mpi_transport::progress_locked() {
  bool did = false;
  impl& p = *p_;
  // 1. Hand queued messages to MPI (or to ourselves).
  if (p.queued.load(std::memory_order_acquire) != 0) {
    {
      std::lock_guard q(p.queue_mutex);
      p.draining.swap(p.queue);
      p.queued.store(0, std::memory_order_relaxed);
    }
    for (auto& o : p.draining) {
      did = true;
      if (o.dest == rank_) {
        p.loopback.push_back(std::move(o.msg));
        continue;
      }
      am_message& m = o.msg;
      std::size_t total = sizeof(wire_prefix) + m.header.size() + m.body.bytes.size();
      std::size_t bulk_total = 0;
      for (auto s : m.body.bulk) bulk_total += s.size();
      const bool flatten = total + bulk_total <= eager_limit_;
      wire_prefix pre{wire_magic, static_cast<std::uint32_t>(m.handler), static_cast<std::uint32_t>(m.header.size()),
                      static_cast<std::uint32_t>(m.body.bulk.size()), m.body.bytes.size(), flatten ? 1u : 0u, 0};
      in_flight_send s;
      s.buffer.resize(total + (flatten ? bulk_total + 8 * m.body.bulk.size() : 8 * m.body.bulk.size()));
      std::byte* w = s.buffer.data();
      std::memcpy(w, &pre, sizeof pre);
      w += sizeof pre;
      std::memcpy(w, m.header.data(), m.header.size());
      w += m.header.size();
      std::memcpy(w, m.body.bytes.data(), m.body.bytes.size());
      w += m.body.bytes.size();
      for (auto seg : m.body.bulk) {
        std::uint64_t len = seg.size();
        std::memcpy(w, &len, 8);
        w += 8;
      }
      if (flatten)
        for (auto seg : m.body.bulk) {
          std::memcpy(w, seg.data(), seg.size());
          w += seg.size();
        }
      s.requests.emplace_back();
      MPI_Isend(s.buffer.data(), static_cast<int>(s.buffer.size()), MPI_BYTE, o.dest, tag_eager, p.comm,
                &s.requests.back());
      if (!flatten) {
        for (auto seg : m.body.bulk) {
          // Segments over 2 GiB would need splitting; remote-call payloads here stay far below.
          s.requests.emplace_back();
          MPI_Isend(seg.data(), static_cast<int>(seg.size()), MPI_BYTE, o.dest, tag_bulk, p.comm,
                    &s.requests.back());
        }
        s.msg = std::move(m);
      }
      p.sends.push_back(std::move(s));
    }
    p.draining.clear();
  }
  // 2. Retire completed sends (in order; cheap test of the oldest few).
  while (!p.sends.empty()) {
    auto& s = p.sends.front();
    int done = 0;
    MPI_Testall(static_cast<int>(s.requests.size()), s.requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) break;
    p.sends.pop_front();
    did = true;
  }
  // 3. Receive eager messages.
  for (;;) {
    int flag = 0;
    MPI_Message handle;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, tag_eager, p.comm, &flag, &handle, &st);
    if (!flag) break;
    did = true;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<std::byte> buf(static_cast<std::size_t>(count));
    MPI_Mrecv(buf.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
    wire_prefix pre;
    auto bad = [&](const char* why) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "corrupt or truncated message from rank %d: %s", st.MPI_SOURCE, why);
      std::fprintf(stderr, "weft: rank %d: %s\n", rank_, msg);
      abort_world(1);
    };
    if (buf.size() < sizeof pre) bad("shorter than its prefix");
    std::memcpy(&pre, buf.data(), sizeof pre);
    if (pre.magic != wire_magic) bad("bad magic");
    std::size_t need = sizeof pre + pre.header_len + pre.body_len + 8ull * pre.n_bulk;
    if (need > buf.size()) bad("lengths exceed the message");
    in_flight_recv r;
    r.source = st.MPI_SOURCE;
    r.msg.source = st.MPI_SOURCE;
    r.msg.handler = static_cast<am_handler>(pre.handler);
    const std::byte* c = buf.data() + sizeof pre;
    r.msg.header.assign(c, c + pre.header_len);
    c += pre.header_len;
    r.msg.body.bytes.assign(c, c + pre.body_len);
    c += pre.body_len;
    std::vector<std::uint64_t> lens(pre.n_bulk);
    std::uint64_t bulk_total = 0;
    for (auto& l : lens) {
      std::memcpy(&l, c, 8);
      c += 8;
      bulk_total += l;
    }
    r.msg.owned_bulk.resize(pre.n_bulk);
    if (pre.flattened) {
      if (need + bulk_total != buf.size()) bad("flattened segments do not add up");
      for (std::size_t i = 0; i < lens.size(); ++i) {
        r.msg.owned_bulk[i].assign(c, c + lens[i]);
        c += lens[i];
      }
      dispatch_(ctx_, std::move(r.msg));
      continue;
    }
    for (std::size_t i = 0; i < lens.size(); ++i) {
      r.msg.owned_bulk[i].resize(lens[i]);
      r.requests.emplace_back();
      MPI_Irecv(r.msg.owned_bulk[i].data(), static_cast<int>(lens[i]), MPI_BYTE, r.source, tag_bulk, p.comm,
                &r.requests.back());
    }
    p.recvs.push_back(std::move(r));
  }
  // 4. Deliver messages whose bulk segments have all arrived.
  for (auto it = p.recvs.begin(); it != p.recvs.end();) {
    int done = 0;
    MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) {
      ++it;
      continue;
    }
    dispatch_(ctx_, std::move(it->msg));
    it = p.recvs.erase(it);
    did = true;
  }
  // 5. Messages to ourselves.
  if (!p.loopback.empty()) {
    std::vector<am_message> local;
    local.swap(p.loopback);
    for (auto& m : local) dispatch_(ctx_, std::move(m));
    did = true;
  }
  return did;
}

std::array<std::uint64_t, 3> mpi_transport::global_sum(std::array<std::uint64_t, 3> local) {
  std::array<std::uint64_t, 3> global{};
  MPI_Request req;
  {
    std::lock_guard lock(lock_);
    MPI_Iallreduce(local.data(), global.data(), 3, MPI_UINT64_T, MPI_SUM, p_->comm, &req);
  }
  for (;;) {
    int done = 0;
    {
      std::lock_guard lock(lock_);
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (!done) progress_locked();  // keep serving the other ranks meanwhile
    }
    if (done) break;
    sched_yield();
  }
  return global;
}

}  // namespace weft::detail
