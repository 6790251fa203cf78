//===- Trace.h - Chrome-trace timeline of a training run --------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_TRACE_H
#define PARALLAX_LIB_RUNTIME_TRACE_H

#include <string>
#include <utility>

namespace parallax::runtime {

/// Records events from now on, to be written to `path` by writeTrace();
/// dies if `path` cannot be written.
void enableTrace(const std::string &path);

bool tracing();

/// Times are relative to this point, taken on every rank at once (after a
/// barrier) so that the ranks of one machine share a time axis.
void setTraceOrigin();

/// A complete event on the rank's main timeline, from `start` to `end`
/// (parallax_rt_now() seconds). `detail` becomes the event's args.detail.
void traceEvent(const std::string &name, const char *category, double start,
                double end, const std::string &detail = {});

/// The same on the rank's second timeline, "in flight": operations that
/// proceed while the main timeline computes (a started allreduce).
void traceInFlight(const std::string &name, const char *category, double start,
                   double end, const std::string &detail = {});

/// A complete event from construction to destruction when tracing. `name`
/// (a callable returning the event's name) runs only when tracing, so the
/// scopes on per-step paths build no strings otherwise.
class TraceScope {
public:
  template <typename Name>
  TraceScope(const char *category, Name &&name, const char *detail = "")
      : category(category), detail(detail) {
    if (tracing())
      begin(std::forward<Name>(name)());
  }
  ~TraceScope();
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;

private:
  void begin(std::string eventName);

  std::string name; // empty when not tracing
  const char *category, *detail;
  double start = 0;
};

/// Gathers every rank's events to worker 0, which writes one Chrome-trace
/// JSON file (one process per worker) atomically. A no-op when not
/// tracing; every rank must call it.
void writeTrace();

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_TRACE_H
