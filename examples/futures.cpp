// Futures, promises, continuations and when_all with the explicit
// init/finalize form: main() stays an ordinary thread and blocks in get().
//
//   ./example_futures [--weft:threads=N]
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

int main(int argc, char** argv) {
  weft::init(argc, argv);

  // then(): a continuation runs as a new task when its input is ready.
  weft::future<std::string> greeting =
      weft::async([] { return 6 * 7; }).then([](weft::future<int> f) { return "answer " + std::to_string(f.get()); });

  // when_all(): one future for many.
  std::vector<weft::future<int>> squares;
  for (int i = 1; i <= 10; ++i) squares.push_back(weft::async([i] { return i * i; }));
  int sum = 0;
  for (auto& f : weft::when_all(squares).get()) sum += f.get();

  // A promise fulfilled by another thread wakes the tasks waiting on it.
  weft::promise<int> p;
  weft::shared_future<int> shared = p.get_future().share();
  auto doubled = weft::async([shared] { return 2 * shared.get(); });
  std::thread producer([&p] { p.set_value(21); });

  // Exceptions travel to whoever calls get().
  auto failing = weft::async([]() -> int { throw std::runtime_error("task failed"); });
  std::string error;
  try {
    failing.get();
  } catch (const std::exception& e) {
    error = e.what();
  }

  std::printf("%s; sum of squares = %d; doubled = %d; caught: %s\n", greeting.get().c_str(), sum, doubled.get(),
              error.c_str());
  producer.join();
  weft::finalize();
  return 0;
}
