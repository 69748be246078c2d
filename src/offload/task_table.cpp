// The device rank's records of target tasks, and the remote calls that
// wait for them on the rank where they ran.
#include "offload/task_table.hpp"

#include <stdexcept>
#include <utility>

#include "am/rank_comm.hpp"
#include "offload/device_state.hpp"
#include "runtime/runtime_state.hpp"
#include "weft/am.hpp"

namespace weft::detail {

std::uint64_t task_table::key(const task_token& t) noexcept {
  // 40 bits of sequence (10^12 tasks per launching process) and 24 of rank.
  return (t.seq & ((std::uint64_t{1} << 40) - 1)) | (static_cast<std::uint64_t>(t.rank) << 40);
}

shared_future<void> task_table::arrive(const task_token& task) {
  std::lock_guard g(mutex_);
  auto r = records_.try_emplace(key(task)).first;
  record& x = r->second;
  ++x.arrived;
  shared_future<void> end;
  if (x.finished) {
    end = x.error ? make_exceptional_future<void>(x.error).share() : make_ready_future().share();
  } else {
    if (!x.ended) x.end = x.ended.emplace().get_future().share();
    end = x.end;
  }
  maybe_forget(r);
  return end;
}

void task_table::finish(const task_token& task, std::exception_ptr error) {
  std::optional<promise<void>> ended;
  {
    std::lock_guard g(mutex_);
    auto r = records_.try_emplace(key(task)).first;
    record& x = r->second;
    x.finished = true;
    x.error = error;
    ended = std::move(x.ended);
    maybe_forget(r);
  }
  // Outside the lock: waking the waiters may run them here.
  if (!ended) return;
  if (error) ended->set_exception(std::move(error));
  else ended->set_value();
}

void task_table::count(const consumer_count& c) {
  std::lock_guard g(mutex_);
  auto r = records_.try_emplace(key(c.task)).first;
  r->second.expected = static_cast<std::int64_t>(c.consumers);
  maybe_forget(r);
}

std::size_t task_table::size() {
  std::lock_guard g(mutex_);
  return records_.size();
}

void task_table::maybe_forget(std::unordered_map<std::uint64_t, record>::iterator r) {
  const record& x = r->second;
  if (x.finished && x.expected >= 0 && x.arrived == static_cast<std::uint64_t>(x.expected)) records_.erase(r);
}

namespace {

task_table& tasks_here() { return layer_state<offload_rank>(current_comm()).tasks; }

std::vector<std::vector<std::byte>> read_after_here(std::vector<task_token> tasks, std::vector<fetch_request> reads) {
  task_table& t = tasks_here();
  std::vector<shared_future<void>> ends;
  ends.reserve(tasks.size());
  for (const auto& k : tasks) ends.push_back(t.arrive(k));  // every arrival first: the counts stay right
  for (const auto& e : ends) e.get();
  std::vector<std::vector<std::byte>> out;
  out.reserve(reads.size());
  for (const auto& r : reads) {
    local_device& d = local_device_of(r.device);
    const std::byte* from = d.resolve(r.address, r.bytes);
    out.emplace_back(r.bytes);
    d.read(out.back().data(), from, r.bytes);
  }
  return out;
}

void arrivals_here(std::vector<task_token> tasks) {
  task_table& t = tasks_here();
  for (const auto& k : tasks) (void)t.arrive(k);
}

void counts_here(std::vector<consumer_count> counts) { consumer_counts_arrived(counts); }

void failed_here(task_token task, std::string what) {
  tasks_here().finish(task, std::make_exception_ptr(std::runtime_error(what)));
}

}  // namespace

void consumer_counts_arrived(const std::vector<consumer_count>& counts) {
  if (counts.empty()) return;
  task_table& t = tasks_here();
  for (const auto& c : counts) t.count(c);
}

void task_finished(const task_token& task, std::exception_ptr error) noexcept {
  if (task.seq == 0) return;
  tasks_here().finish(task, std::move(error));
}

std::size_t task_records_here() { return tasks_here().size(); }

shared_future<void> arrive_here(const task_token& task) { return tasks_here().arrive(task); }

future<std::vector<std::vector<std::byte>>> read_after(int rank, std::vector<task_token> tasks,
                                                       std::vector<fetch_request> reads) {
  return async_at(rank, &read_after_here, std::move(tasks), std::move(reads));
}

void abandon_arrivals(int rank, std::vector<task_token> tasks) {
  if (!tasks.empty()) post_at(rank, &arrivals_here, std::move(tasks));
}

void send_consumer_counts(int rank, std::vector<consumer_count> counts) {
  if (!counts.empty()) post_at(rank, &counts_here, std::move(counts));
}

void launch_not_sent(int rank, const task_token& task, const std::string& what) {
  post_at(rank, &failed_here, task, what);
}

}  // namespace weft::detail
