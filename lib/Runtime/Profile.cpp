//===- Profile.cpp - Where a training step's time goes --------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "Descriptor.h"
#include "Support.h"
#include "Threads.h"
#include "parallax/Support/FileNames.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <unistd.h>

using namespace parallax::runtime;

extern "C" {
/// The compiler's description of the program's sites, one line each:
/// family, flops, bytes, node and name, separated by tabs
/// (--parallax-instrument-profile). Weak: absent from a program built
/// without the pass.
extern const char parallax_profile_sites[] __attribute__((weak));
}

namespace {

struct Site {
  std::string family, node, name;
  int64_t flops = 0, bytes = 0; // per call
  double seconds = 0, started = 0;
  int64_t calls = 0;
};

constexpr const char *kProfileSignature = "{\"parallax_profile\"";

std::string profilePath;
std::vector<Site> sites;
size_t compiledSites = 0;
std::map<std::string, int64_t> runtimeSites; // "family\tname" -> site
int64_t plannedSteps = 0, measuredSteps = 0;
bool warmupLeftOut = false;
double windowStart = 0, windowEnd = 0;
/// A GPU program's profiler (setDeviceProfiler); constant-initialised,
/// as it is set before main().
void (*flushDevice)() = nullptr;

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

void readCompiledSites() {
  sites.clear();
  runtimeSites.clear();
  compiledSites = 0;
  if (!parallax_profile_sites)
    return;
  std::string table = parallax_profile_sites;
  int line = 0;
  for (const std::string &row : split(table, '\n')) {
    ++line;
    if (row.empty())
      continue;
    std::vector<std::string> fields = split(row, '\t');
    std::optional<int64_t> flops, bytes;
    if (fields.size() == 5) {
      flops = parseInteger(fields[1].c_str());
      bytes = parseInteger(fields[2].c_str());
    }
    if (!flops || !bytes)
      die("internal error: line " + std::to_string(line) +
          " of the program's profile sites is malformed: '" + row + "'");
    Site site;
    site.family = fields[0];
    site.flops = *flops;
    site.bytes = *bytes;
    site.node = fields[3];
    site.name = fields[4];
    sites.push_back(std::move(site));
  }
  compiledSites = sites.size();
}

std::string number(double value) {
  if (!std::isfinite(value))
    return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

//===----------------------------------------------------------------------===//
// Peaks
//===----------------------------------------------------------------------===//

struct AlignedFree {
  void operator()(float *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;

Buffer allocate(int64_t count) {
  auto *data = static_cast<float *>(
      std::aligned_alloc(64, ceilDiv(count * sizeof(float), 64) * 64));
  if (!data)
    die("--profile: cannot allocate the peak probes' buffers");
  return Buffer(data);
}

constexpr int kProbeRepeats = 5;
constexpr int64_t kGemmSize = 1024;
constexpr int64_t kStreamElements = int64_t(16) << 20; // 64 MiB per array

/// The best GFLOP/s of a kGemmSize^3 product through the programs' own
/// matrix product (its tiles, threads and BLAS kernels).
double measureGemmPeak() {
  int64_t n = kGemmSize;
  Buffer a = allocate(n * n), b = allocate(n * n), c = allocate(n * n);
  parallelChunks(n * n, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      a[i] = 1.0f / static_cast<float>(i % 7 + 1);
      b[i] = 1.0f / static_cast<float>(i % 5 + 1);
      c[i] = 0;
    }
  });
  // Row-major n x n memrefs, as parallax_rt_matmul_f32 takes them.
  auto view = [&](float *data) {
    return StridedMemRefType<float, 2>{data, data, 0, {n, n}, {n, 1}};
  };
  StridedMemRefType<float, 2> A = view(a.get()), B = view(b.get()),
                              C = view(c.get());
  double best = 0;
  for (int i = 0; i <= kProbeRepeats; ++i) {
    double start = parallax_rt_now();
    parallax_rt_matmul_f32(2, &A, 2, &B, 2, &C);
    double seconds = parallax_rt_now() - start;
    if (i > 0) // the first call loads the library and warms the caches
      best = std::max(best, 2.0 * n * n * n / seconds / 1e9);
  }
  return best;
}

/// The best GB/s of a STREAM triad (a = b + s c, three arrays counted)
/// over `n` floats per array in chunks of `chunk`, each chunk swept
/// `sweeps` times in a row, on the worker's threads.
double measureTriad(int64_t n, int64_t chunk, int sweeps) {
  Buffer a = allocate(n), b = allocate(n), c = allocate(n);
  parallelChunks(n, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  float *pa = a.get();
  const float *pb = b.get(), *pc = c.get();
  double best = 0;
  for (int i = 0; i <= kProbeRepeats; ++i) {
    double start = parallax_rt_now();
    // A chunk's sweeps run in a row on one thread: one start and end of
    // the threads per measurement, not one per sweep.
    parallelChunks(n, chunk, [&](int64_t begin, int64_t end) {
      for (int sweep = 0; sweep < sweeps; ++sweep)
        for (int64_t j = begin; j < end; ++j)
          pa[j] = pb[j] + 3.0f * pc[j];
    });
    double seconds = parallax_rt_now() - start;
    if (i > 0)
      best = std::max(best, 3.0 * n * sizeof(float) * sweeps / seconds / 1e9);
  }
  return best;
}

/// The per-core L2 cache's size (sysconf; 256 KiB where it says nothing).
int64_t level2Bytes() {
  long size = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return size > 0 ? size : 256 << 10;
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

/// What the machine can do, measured on worker 0 at the end.
struct Peaks {
  double gflops = 0;      // GEMM
  double memory = 0;      // GB/s from memory
  double cache = 0;       // GB/s within the L2 cache
  int64_t cacheBytes = 0; // the L2 cache's size
};
Peaks peaks;

/// The least time the roofline allows one call of `site`: its FLOPs at
/// the GEMM peak or its bytes at the bandwidth of the level they fit in
/// (the L2 cache for a site that moves no more than it holds), whichever
/// is longer. Zero before the peaks are measured.
double rooflineSeconds(const Site &site, bool &computeBound) {
  if (peaks.gflops <= 0 || peaks.memory <= 0)
    return 0;
  double compute = site.flops / (peaks.gflops * 1e9);
  double bandwidth =
      site.bytes <= peaks.cacheBytes ? peaks.cache : peaks.memory;
  double memory = site.bytes / (bandwidth * 1e9);
  computeBound = compute >= memory;
  return std::max(compute, memory);
}

/// Seconds, FLOPs and bytes per measured step of a group of sites, and
/// the least time the roofline allows them.
struct Totals {
  std::string label;
  double seconds = 0, flops = 0, bytes = 0, calls = 0;
  double roofline = 0, computeRoofline = 0;
  std::string family; // for sites

  double gflops() const { return seconds > 0 ? flops / seconds / 1e9 : 0; }
  double gbytes() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  /// The roofline's time over the time taken, or nullopt without either.
  std::optional<double> rooflineFraction() const {
    if (roofline <= 0 || seconds <= 0)
      return std::nullopt;
    return roofline / seconds;
  }
};

std::string totalsJson(const Totals &t, const char *key, double step) {
  std::string json = "{\"" + std::string(key) + "\":" + jsonString(t.label);
  if (!t.family.empty())
    json += ",\"family\":" + jsonString(t.family);
  json += ",\"seconds\":" + number(t.seconds) +
          ",\"share\":" + number(step > 0 ? t.seconds / step : 0) +
          ",\"calls\":" + number(t.calls) + ",\"flops\":" + number(t.flops) +
          ",\"bytes\":" + number(t.bytes) +
          ",\"gflops\":" + number(t.gflops()) +
          ",\"gbytes_per_second\":" + number(t.gbytes());
  if (t.bytes > 0)
    json += ",\"intensity\":" + number(t.flops / t.bytes);
  if (std::optional<double> fraction = t.rooflineFraction())
    json += ",\"roofline_seconds\":" + number(t.roofline) +
            ",\"roofline_fraction\":" + number(*fraction) + ",\"bound\":\"" +
            (2 * t.computeRoofline >= t.roofline ? "compute" : "memory") + "\"";
  return json + "}";
}

double steps() { return std::max<int64_t>(measuredSteps, 1); }

/// The measured sites grouped by `keyOf`, per step, largest time first.
template <typename Key>
std::vector<Totals> groupSites(Key keyOf, bool keepFamily) {
  std::map<std::string, Totals> groups;
  for (const Site &site : sites) {
    if (!site.calls)
      continue;
    std::string key = keyOf(site);
    if (key.empty())
      continue;
    Totals &t = groups[key];
    t.label = key;
    if (keepFamily)
      t.family = site.family;
    t.seconds += site.seconds / steps();
    t.calls += site.calls / steps();
    t.flops += static_cast<double>(site.flops) * site.calls / steps();
    t.bytes += static_cast<double>(site.bytes) * site.calls / steps();
    bool computeBound = false;
    double roofline =
        rooflineSeconds(site, computeBound) * site.calls / steps();
    t.roofline += roofline;
    if (computeBound)
      t.computeRoofline += roofline;
  }
  std::vector<Totals> sorted;
  for (auto &entry : groups)
    sorted.push_back(entry.second);
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const Totals &x, const Totals &y) { return x.seconds > y.seconds; });
  return sorted;
}

std::vector<Totals> families() {
  return groupSites([](const Site &s) { return s.family; }, false);
}

double stepSeconds() {
  return measuredSteps ? (windowEnd - windowStart) / measuredSteps : 0;
}

/// This worker's step and family times, for the report's "workers".
std::string workerJson(int rank) {
  std::string json = "{\"rank\":" + std::to_string(rank) +
                     ",\"step_seconds\":" + number(stepSeconds()) +
                     ",\"families\":{";
  bool first = true;
  for (const Totals &t : families()) {
    json += (first ? "" : ",") + jsonString(t.label) + ":" + number(t.seconds);
    first = false;
  }
  return json + "}}";
}

void printTable(const std::vector<Totals> &rows, double step,
                double unattributed) {
  std::fprintf(stderr, "  %-28s %9s %6s %8s %7s %8s\n", "family", "ms/step",
               "share", "GFLOP/s", "GB/s", "roofline");
  for (const Totals &t : rows) {
    std::string roofline;
    if (std::optional<double> fraction = t.rooflineFraction())
      roofline = number(std::round(100 * *fraction)) + "%";
    std::fprintf(stderr, "  %-28s %9.3f %5.1f%% %8.2f %7.2f %8s\n",
                 t.label.c_str(), t.seconds * 1e3, 100 * t.seconds / step,
                 t.gflops(), t.gbytes(), roofline.c_str());
  }
  std::fprintf(stderr, "  %-28s %9.3f %5.1f%%\n", "(outside every site)",
               unattributed * 1e3, 100 * unattributed / step);
}

} // namespace

//===----------------------------------------------------------------------===//
// Sites
//===----------------------------------------------------------------------===//

/// Adds the time since `site` started to it.
static void stopSite(Site &site) {
  site.seconds += parallax_rt_now() - site.started;
  ++site.calls;
}

/// Compiled site `site`; dies on an index outside the program's table.
static Site &compiledSite(int64_t site) {
  if (site < 0 || static_cast<size_t>(site) >= compiledSites)
    die("internal error: profile site " + std::to_string(site) +
        " is not in the program's table of " + std::to_string(compiledSites));
  return sites[site];
}

extern "C" void parallax_rt_profile_begin(int64_t site) {
  if (!profilePath.empty())
    compiledSite(site).started = parallax_rt_now();
}

extern "C" void parallax_rt_profile_end(int64_t site) {
  if (!profilePath.empty())
    stopSite(compiledSite(site));
}

/// The runtime site (`family`, `name`), added on first use.
static int64_t runtimeSite(const char *family, const std::string &name) {
  std::string key = std::string(family) + "\t" + name;
  auto [it, added] = runtimeSites.emplace(key, sites.size());
  if (added) {
    Site s;
    s.family = family;
    s.name = name;
    sites.push_back(std::move(s));
  }
  return it->second;
}

ProfileScope::ProfileScope(const char *family, const char *name) {
  if (profilePath.empty())
    return;
  site = runtimeSite(family, name);
  sites[site].started = parallax_rt_now();
}

void parallax::runtime::addSiteTime(const char *family, const std::string &name,
                                    double seconds, const std::string &node) {
  if (profilePath.empty())
    return;
  Site &site = sites[runtimeSite(family, name)];
  if (site.node.empty())
    site.node = node;
  site.seconds += seconds;
  ++site.calls;
}

void parallax::runtime::setDeviceProfiler(void (*flush)()) {
  flushDevice = flush;
}

ProfileScope::~ProfileScope() {
  if (site >= 0)
    stopSite(sites[site]);
}

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

void parallax::runtime::enableProfile(const std::string &path) {
  if (!parallax_profile_sites && !flushDevice)
    die("--profile: this program has no profile sites (CPU programs have "
        "them from --parallax-instrument-profile; GPU programs time their "
        "kernels)");
  if (world().rank == 0) {
    checkReplaceableFile("--profile", path, kProfileSignature,
                         /*streamed=*/false);
    std::string error;
    if (!canWriteBeside(path, error))
      die("cannot write --profile '" + path + "': " + error);
  }
  readCompiledSites();
  profilePath = path;
}

bool parallax::runtime::profiling() { return !profilePath.empty(); }

void parallax::runtime::startProfile(int64_t steps) {
  plannedSteps = steps;
  windowStart = windowEnd = parallax_rt_now();
}

void parallax::runtime::profileStepEnd() {
  if (!profiling())
    return;
  if (flushDevice)
    flushDevice();
  double now = parallax_rt_now();
  if (!warmupLeftOut && plannedSteps > 1) {
    // The first step pays for first touches of every buffer, the
    // libraries' start and the threads' creation: not the steady state.
    for (Site &site : sites) {
      site.seconds = 0;
      site.calls = 0;
    }
    warmupLeftOut = true;
    windowStart = now;
    return;
  }
  ++measuredSteps;
  windowEnd = now;
}

void parallax::runtime::writeProfile() {
  if (!profiling())
    return;
  const World &w = world();
  const char *deviceName = device();
  if (w.rank == 0 && !deviceName) {
    std::fprintf(stderr,
                 "profile: measuring this machine's peaks (a %lld^3 matrix "
                 "product, STREAM triads over %lld MiB and within the L2 "
                 "cache)\n",
                 static_cast<long long>(kGemmSize),
                 static_cast<long long>(3 * kStreamElements * 4 >> 20));
    peaks.gflops = measureGemmPeak();
    peaks.memory = measureTriad(kStreamElements, kStreamElements / 64, 1);
    peaks.cacheBytes = level2Bytes();
    // Per thread, three arrays in half its core's cache, swept often
    // enough to time.
    int64_t perThread = peaks.cacheBytes / 2 / 3 / sizeof(float);
    peaks.cache = measureTriad(perThread * workerThreads(), perThread,
                               static_cast<int>(kStreamElements / perThread));
  }
  std::vector<std::string> workers =
      gatherToRoot(workerJson(w.rank), "gathering the profile");
  if (w.rank != 0)
    return;

  double step = stepSeconds();
  std::vector<Totals> byFamily = families();
  double attributed = 0, roofline = 0;
  for (const Totals &t : byFamily) {
    attributed += t.seconds;
    roofline += t.roofline;
  }
  double unattributed = std::max(0.0, step - attributed);
  // Kernels are named after their node already; runtime calls are not.
  std::vector<Totals> bySite = groupSites(
      [](const Site &s) {
        bool named = s.node.empty() || s.name.find(s.node) != std::string::npos;
        return named ? s.name : s.name + " " + s.node;
      },
      true);
  std::vector<Totals> byNode =
      groupSites([](const Site &s) { return s.node; }, false);
  std::string json = std::string(kProfileSignature) + ":1";
  json += ",\"workers\":" + std::to_string(w.size) +
          ",\"threads\":" + std::to_string(workerThreads()) +
          ",\"steps\":" + std::to_string(measuredSteps) +
          ",\"warmup_left_out\":" + (warmupLeftOut ? "true" : "false") +
          ",\"step_seconds\":" + number(step) +
          ",\"roofline_seconds\":" + number(roofline) +
          ",\"roofline_fraction\":" + number(step > 0 ? roofline / step : 0);
  if (deviceName)
    json += ",\"device\":" + jsonString(deviceName) + ",\"device_timing\":" +
            jsonString("each kernel, cuBLAS product and device copy between "
                       "two CUDA events on the program's stream") +
            ",\"peaks\":null";
  else
    json += ",\"peaks\":{\"gflops\":" + number(peaks.gflops) +
            ",\"gbytes_per_second\":" + number(peaks.memory) +
            ",\"cache_gbytes_per_second\":" + number(peaks.cache) +
            ",\"cache_bytes\":" + number(peaks.cacheBytes) +
            ",\"gemm_probe\":" +
            jsonString(std::to_string(kGemmSize) +
                       "^3 float32 product through the runtime's matrix "
                       "product, best of 5") +
            ",\"bandwidth_probe\":" +
            jsonString("STREAM triad over 3 x 64 MiB float32 arrays (memory) "
                       "and, per thread, over 3 arrays in half its L2 cache "
                       "(cache), on the worker's threads, 3 arrays counted, "
                       "best of 5") +
            "}";
  auto list = [&](const char *name, const char *key,
                  const std::vector<Totals> &rows) {
    json += ",\"" + std::string(name) + "\":[";
    for (size_t i = 0; i < rows.size(); ++i)
      json += (i ? "," : "") + totalsJson(rows[i], key, step);
    json += "]";
  };
  list("families", "family", byFamily);
  json += ",\"outside_sites\":{\"seconds\":" + number(unattributed) +
          ",\"share\":" + number(step > 0 ? unattributed / step : 0) + "}";
  list("sites", "site", bySite);
  list("nodes", "node", byNode);
  json += ",\"per_worker\":[";
  for (size_t r = 0; r < workers.size(); ++r)
    json += (r ? "," : "") + workers[r];
  json += "]}\n";

  std::string error;
  if (!writeFileAtomically(profilePath, {json}, error))
    die("cannot write --profile: " + error);
  char measured[128];
  std::snprintf(
      measured, sizeof measured, "profile: %lld step%s of %.4f s on worker 0%s",
      static_cast<long long>(measuredSteps), measuredSteps == 1 ? "" : "s",
      step, warmupLeftOut ? " (the first, a warm-up, left out)" : "");
  if (deviceName) {
    std::fprintf(stderr, "%s; the device work timed on %s\n", measured,
                 deviceName);
  } else {
    int threads = workerThreads();
    std::fprintf(stderr,
                 "%s; peaks: GEMM %.1f GFLOP/s, memory %.1f GB/s, L2 cache "
                 "%.1f GB/s (%d thread%s)\n",
                 measured, peaks.gflops, peaks.memory, peaks.cache, threads,
                 threads == 1 ? "" : "s");
  }
  if (step > 0) {
    printTable(byFamily, step, unattributed);
    if (deviceName) {
      std::fprintf(stderr, "  the longest sites:\n");
      for (size_t i = 0; i < bySite.size() && i < 10; ++i)
        std::fprintf(stderr, "  %-40s %9.3f %5.1f%% %6.0f calls\n",
                     bySite[i].label.c_str(), bySite[i].seconds * 1e3,
                     100 * bySite[i].seconds / step, bySite[i].calls);
    } else {
      std::fprintf(stderr,
                   "profile: at the peaks the sites would take %.3f ms a step: "
                   "the step runs at %.0f%% of its roofline\n",
                   roofline * 1e3, 100 * roofline / step);
    }
  }
  std::fprintf(stderr, "profile written to %s\n", profilePath.c_str());
}
