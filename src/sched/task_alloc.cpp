// Size-class free lists per thread heap. A block records its owning heap;
// the owner frees onto its private list, any other thread pushes onto the
// owner's atomic remote list, which the owner takes whole when its private
// list runs dry. Heaps outlive threads (a new thread adopts a released heap),
// so a block freed after its allocating thread ended still has a home.
#include "weft/detail/task_alloc.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

namespace weft::detail {

#if defined(__SANITIZE_ADDRESS__)
// Under ASan use the global allocator so use-after-free stays detectable.
void* task_alloc(std::size_t bytes) { return ::operator new(bytes); }
void task_free(void* p) noexcept { ::operator delete(p); }
#else

namespace {

constexpr std::size_t header = 16;
constexpr std::size_t class_size[] = {64, 128, 256, 512, 1024};
constexpr int n_classes = sizeof(class_size) / sizeof(class_size[0]);
constexpr std::uint32_t big = 0xffffffff;
constexpr std::size_t slab_bytes = 64 * 1024;

struct node {
  node* next;
};
struct heap;
struct block_header {
  heap* owner;
  std::uint32_t cls;
  std::uint32_t unused;
};
static_assert(sizeof(block_header) == header);

struct heap {
  node* local[n_classes] = {};
  std::atomic<node*> remote[n_classes] = {};
  heap* next_released = nullptr;
};

std::mutex released_mutex;
heap* released = nullptr;

heap* acquire_heap() {
  std::lock_guard lock(released_mutex);
  if (released != nullptr) {
    heap* h = released;
    released = h->next_released;
    return h;
  }
  return new heap;  // never deleted: blocks may point at it forever
}

struct thread_heap {
  heap* h = nullptr;
  ~thread_heap() {
    if (h == nullptr) return;
    std::lock_guard lock(released_mutex);
    h->next_released = released;
    released = h;
  }
};
thread_local thread_heap tls_heap;

inline heap* my_heap() {
  if (tls_heap.h == nullptr) tls_heap.h = acquire_heap();
  return tls_heap.h;
}

inline int class_of(std::size_t total) {
  for (int c = 0; c < n_classes; ++c)
    if (total <= class_size[c]) return c;
  return -1;
}

node* refill(int c) {
  auto* slab = static_cast<char*>(std::malloc(slab_bytes));
  if (slab == nullptr) throw std::bad_alloc();
  const std::size_t sz = class_size[c];
  node* head = nullptr;
  for (std::size_t off = 0; off + sz <= slab_bytes; off += sz) {
    auto* n = reinterpret_cast<node*>(slab + off);
    n->next = head;
    head = n;
  }
  return head;
}

}  // namespace

void* task_alloc(std::size_t bytes) {
  const int c = class_of(bytes + header);
  if (c < 0) {
    auto* h = static_cast<block_header*>(std::malloc(bytes + header));
    if (h == nullptr) throw std::bad_alloc();
    h->owner = nullptr;
    h->cls = big;
    return reinterpret_cast<char*>(h) + header;
  }
  heap* hp = my_heap();
  node* n = hp->local[c];
  if (n == nullptr) {
    n = hp->remote[c].exchange(nullptr, std::memory_order_acquire);
    if (n == nullptr) n = refill(c);
  }
  hp->local[c] = n->next;
  auto* h = reinterpret_cast<block_header*>(n);
  h->owner = hp;
  h->cls = static_cast<std::uint32_t>(c);
  return reinterpret_cast<char*>(h) + header;
}

void task_free(void* p) noexcept {
  if (p == nullptr) return;
  auto* h = reinterpret_cast<block_header*>(static_cast<char*>(p) - header);
  if (h->cls == big) {
    std::free(h);
    return;
  }
  heap* owner = h->owner;
  const std::uint32_t c = h->cls;
  auto* n = reinterpret_cast<node*>(h);
  if (owner == tls_heap.h) {
    n->next = owner->local[c];
    owner->local[c] = n;
    return;
  }
  node* head = owner->remote[c].load(std::memory_order_relaxed);
  do {
    n->next = head;
  } while (!owner->remote[c].compare_exchange_weak(head, n, std::memory_order_release, std::memory_order_relaxed));
}

#endif

}  // namespace weft::detail
