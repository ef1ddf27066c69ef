//===- TimeTrace.h - Where compile time goes, as a Chrome trace -*- C++ -*-===//
//
// --time-trace FILE writes the trace-event JSON that chrome://tracing and
// Perfetto load: one complete ("X") event per stage, pass and kernel batch,
// each on the thread that ran it. Events are recorded when they end, from
// any thread; times are microseconds since the trace began.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_TIMETRACE_H
#define GC_SUPPORT_TIMETRACE_H

#include "gc/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gc {

class TimeTrace {
public:
  using Clock = std::chrono::steady_clock;

  /// The constructing thread is thread 0 of the trace.
  TimeTrace();

  /// Records `name` (of `category`: "stage", "pass", "kernels", ...) as
  /// having run from `start` until now on the calling thread.
  void record(std::string name, std::string_view category, Clock::time_point start);

  /// The trace as Chrome trace-event JSON, events in the order they began.
  std::string json() const;
  /// Writes json() to `path` (atomically, as every gc output).
  Error write(const std::string &path) const;

private:
  struct Event {
    std::string name;
    std::string category;
    int64_t startMicros;
    int64_t durationMicros;
    uint32_t thread;
  };
  Clock::time_point origin_ = Clock::now();
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  /// Small thread numbers in order of first appearance.
  std::map<std::thread::id, uint32_t> threads_;
};

/// Records its lifetime as one event of `trace` (nothing when it is null).
class TraceScope {
public:
  TraceScope(TimeTrace *trace, std::string name, std::string_view category)
      : trace_(trace), name_(std::move(name)), category_(category) {}
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;
  ~TraceScope() {
    if (trace_)
      trace_->record(std::move(name_), category_, start_);
  }

private:
  TimeTrace *trace_;
  std::string name_;
  std::string_view category_;
  TimeTrace::Clock::time_point start_ = TimeTrace::Clock::now();
};

} // namespace gc

#endif // GC_SUPPORT_TIMETRACE_H
