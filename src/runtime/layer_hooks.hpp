// Internal: set-up and tear-down hooks of the layers above runtime (pgas
// today), which need every local rank's context before any task runs and
// must be torn down after global quiescence.
//
// Why hooks rather than runtime calling those layers by name: runtime sits
// below them (they read its process state), so it may not name them. A layer
// registers from the initializer of a namespace-scope constant in the source
// file that holds its state, like am's message handlers: registration is
// complete before main() runs, and a program that uses the layer links that
// file (a program that never uses the layer does not pay for its set-up).
#pragma once

namespace weft::detail {

struct process_runtime;

using layer_hook = void (*)(process_runtime& rt);

/// Registers `start` (run by init after the backend is up and before the
/// schedulers start, in registration order) and `stop` (run by finalize
/// after quiescence, in reverse order). Returns true; ends the program when
/// more than the table's few layers register.
bool register_layer_hooks(const char* layer, layer_hook start, layer_hook stop) noexcept;

/// Runs every registered start hook / every stop hook (runtime.cpp).
void start_layers(process_runtime& rt);
void stop_layers(process_runtime& rt);

}  // namespace weft::detail
