//===- Trace.cpp - Chrome-trace timeline of a training run ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "Support.h"
#include "parallax/Support/FileNames.h"

#include <cstdio>
#include <vector>

using namespace parallax::runtime;

namespace {

struct Event {
  std::string name, detail;
  const char *category;
  double start, end;
  int timeline; // 0: main, 1: in flight
};

std::string tracePath;
double origin = 0;
std::vector<Event> events;

/// This rank's events (and its process and timeline names) as JSON objects
/// separated by commas.
std::string serialize(int rank) {
  std::string out;
  char buffer[160];
  std::snprintf(buffer, sizeof buffer,
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
                "\"args\":{\"name\":\"worker %d\"}}",
                rank, rank);
  out += buffer;
  for (int tid = 0; tid < 2; ++tid) {
    std::snprintf(buffer, sizeof buffer,
                  ",{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":"
                  "\"thread_name\",\"args\":{\"name\":\"%s\"}}",
                  rank, tid, tid == 0 ? "main" : "in flight");
    out += buffer;
  }
  for (const Event &e : events) {
    std::snprintf(buffer, sizeof buffer,
                  ",{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                  "\"dur\":%.3f,\"cat\":\"%s\",\"name\":",
                  rank, e.timeline, (e.start - origin) * 1e6,
                  (e.end - e.start) * 1e6, e.category);
    out += buffer;
    out += jsonString(e.name);
    if (!e.detail.empty())
      out += ",\"args\":{\"detail\":" + jsonString(e.detail) + "}";
    out += "}";
  }
  return out;
}

void record(const std::string &name, const char *category, double start,
            double end, const std::string &detail, int timeline) {
  if (!tracePath.empty())
    events.push_back({name, detail, category, start, end, timeline});
}

} // namespace

constexpr const char *kTraceSignature = "{\"displayTimeUnit\"";

void parallax::runtime::enableTrace(const std::string &path) {
  // Only worker 0 writes the file: find out now, not after training.
  if (world().rank == 0) {
    checkReplaceableFile("--trace", path, kTraceSignature, /*streamed=*/false);
    std::string error;
    if (!canWriteBeside(path, error))
      die("cannot write --trace '" + path + "': " + error);
  }
  tracePath = path;
  origin = parallax_rt_now();
}

bool parallax::runtime::tracing() { return !tracePath.empty(); }

void parallax::runtime::setTraceOrigin() {
  if (!tracing())
    return;
  const World &w = world();
  if (w.size > 1)
    barrier(w.comm, "the trace's start");
  origin = parallax_rt_now();
}

void parallax::runtime::traceEvent(const std::string &name,
                                   const char *category, double start,
                                   double end, const std::string &detail) {
  record(name, category, start, end, detail, 0);
}

void parallax::runtime::traceInFlight(const std::string &name,
                                      const char *category, double start,
                                      double end, const std::string &detail) {
  record(name, category, start, end, detail, 1);
}

void TraceScope::begin(std::string eventName) {
  name = std::move(eventName);
  start = parallax_rt_now();
}

TraceScope::~TraceScope() {
  if (!name.empty())
    traceEvent(name, category, start, parallax_rt_now(), detail);
}

void parallax::runtime::writeTrace() {
  if (!tracing())
    return;
  const World &w = world();
  std::vector<std::string> ranks =
      gatherToRoot(serialize(w.rank), "gathering the trace");
  if (w.rank != 0)
    return;
  std::string all;
  for (size_t r = 0; r < ranks.size(); ++r)
    all += (r ? "," : "") + ranks[r];
  std::string error;
  if (!writeFileAtomically(
          tracePath,
          {kTraceSignature, ":\"ms\",\"traceEvents\":[", all, "]}\n"}, error))
    die("cannot write --trace: " + error);
}
