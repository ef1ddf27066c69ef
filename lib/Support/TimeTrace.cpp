//===- TimeTrace.cpp - Where compile time goes, as a Chrome trace ---------===//
#include "gc/Support/TimeTrace.h"

#include "gc/Support/FileSystem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unistd.h>

namespace gc {

namespace {
int64_t micros(TimeTrace::Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}
} // namespace

TimeTrace::TimeTrace() { threads_[std::this_thread::get_id()] = 0; }

void TimeTrace::record(std::string name, std::string_view category, Clock::time_point start) {
  Clock::time_point end = Clock::now();
  std::lock_guard lock(mutex_);
  uint32_t thread =
      threads_.try_emplace(std::this_thread::get_id(), static_cast<uint32_t>(threads_.size()))
          .first->second;
  events_.push_back({std::move(name), std::string(category), micros(start - origin_),
                     micros(end - start), thread});
}

std::string TimeTrace::json() const {
  std::lock_guard lock(mutex_);
  std::vector<const Event *> order;
  for (const Event &e : events_)
    order.push_back(&e);
  // Begin order, the enclosing event (the longer one) first on a tie, so
  // that a viewer nests events that start together.
  std::stable_sort(order.begin(), order.end(), [](const Event *a, const Event *b) {
    if (a->startMicros != b->startMicros)
      return a->startMicros < b->startMicros;
    return a->durationMicros > b->durationMicros;
  });
  nlohmann::json events = nlohmann::json::array();
  int pid = static_cast<int>(getpid());
  for (uint32_t number = 0; number < threads_.size(); ++number)
    events.push_back(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", pid},
         {"tid", number},
         {"args", {{"name", number == 0 ? "main" : "worker " + std::to_string(number)}}}});
  for (const Event *e : order)
    events.push_back({{"name", e->name},
                      {"cat", e->category},
                      {"ph", "X"},
                      {"ts", e->startMicros},
                      {"dur", e->durationMicros},
                      {"pid", pid},
                      {"tid", e->thread}});
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1) + "\n";
}

Error TimeTrace::write(const std::string &path) const {
  if (Error e = writeFileAtomic(path, json()))
    return e.withContext("--time-trace");
  return Error::success();
}

} // namespace gc
