//===- thread_affinity_benchmark.cpp - What threads cost on this machine --===//
//
// Part of the Parallax project.
//
// Three figures that decide how far a worker's loop nests gain from a
// second thread (docs/benchmarks.md, "Two threads: where the data is"):
// - the time to start and end an OpenMP parallel region of a static
//   loop (every parallel kernel pays it);
// - the one-way time for a cache line to go from one thread's core to
//   the other's (a flag passed back and forth);
// - a chain of 200 elementwise kernels (b = 0.5 a + 1, then back) over
//   buffers of 1-128 MiB in 64 chunks under a static schedule, on one
//   thread and on two: each thread either takes the same chunks in every
//   kernel (it reads what it wrote) or, in every other kernel, the other
//   thread's (its input was written on the other core).
// Best of 5 rounds each. Never asserts timings.
//
// Usage: build/bin/parallax-affinity-bench [THREADS] (default 2)
//
//===----------------------------------------------------------------------===//

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

constexpr int kRounds = 5;

/// What the empty regions write, so that they are not optimized away.
volatile int sink[64];

double parallelRegionMicroseconds(int threads) {
  constexpr int kRegions = 20000;
  double best = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    double start = now();
    for (int r = 0; r < kRegions; ++r) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int i = 0; i < 64; ++i)
        sink[i] = i;
    }
    best = std::min(best, (now() - start) / kRegions);
  }
  return best * 1e6;
}

/// Threads 0 and 1 pass a flag back and forth; half a round trip.
double handoffNanoseconds() {
  constexpr int kTrips = 100000;
  alignas(64) std::atomic<int> flag{0};
  double best = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    flag.store(0);
    double seconds = 0;
#pragma omp parallel num_threads(2)
    {
      int me = omp_get_thread_num();
#pragma omp barrier
      double start = now();
      for (int i = 0; i < kTrips; ++i) {
        if (me == 0) {
          flag.store(2 * i + 1, std::memory_order_release);
          while (flag.load(std::memory_order_acquire) != 2 * i + 2)
            ;
        } else {
          while (flag.load(std::memory_order_acquire) != 2 * i + 1)
            ;
          flag.store(2 * i + 2, std::memory_order_release);
        }
      }
      if (me == 0)
        seconds = now() - start;
    }
    best = std::min(best, seconds / kTrips / 2);
  }
  return best * 1e9;
}

struct FreeDeleter {
  void operator()(float *p) const { std::free(p); }
};

/// Microseconds per kernel of the chain over `bytes` per buffer.
double chainMicroseconds(size_t bytes, int threads, bool swapped) {
  constexpr int kChunks = 64, kKernels = 200;
  size_t n = bytes / sizeof(float) / kChunks * kChunks, chunk = n / kChunks;
  std::unique_ptr<float[], FreeDeleter> a(
      static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))));
  std::unique_ptr<float[], FreeDeleter> b(
      static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))));
  if (!a || !b) {
    std::fprintf(stderr, "parallax-affinity-bench: out of memory\n");
    std::exit(1);
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int c = 0; c < kChunks; ++c)
    for (size_t j = c * chunk; j < (c + 1) * chunk; ++j) {
      a[j] = static_cast<float>(j % 97);
      b[j] = 0;
    }
  double best = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    double start = now();
    for (int k = 0; k < kKernels; ++k) {
      const float *in = k % 2 ? b.get() : a.get();
      float *out = k % 2 ? a.get() : b.get();
      bool reverse = swapped && k % 2;
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int c = 0; c < kChunks; ++c) {
        size_t first = (reverse ? kChunks - 1 - c : c) * chunk;
        for (size_t j = first; j < first + chunk; ++j)
          out[j] = 0.5f * in[j] + 1.0f;
      }
    }
    best = std::min(best, (now() - start) / kKernels);
  }
  return best * 1e6;
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (threads < 2) {
    std::fprintf(stderr, "usage: parallax-affinity-bench [THREADS >= 2]\n");
    return 2;
  }
  std::printf("parallel region (start and end, %d threads): %.2f us\n", threads,
              parallelRegionMicroseconds(threads));
  std::printf("cache line from one thread's core to another's: %.0f ns\n",
              handoffNanoseconds());
  std::printf("\nchain of elementwise kernels, us per kernel (GB/s read and "
              "written)\n");
  std::printf("%9s %16s %22s %26s\n", "buffer", "1 thread",
              "2+ threads, same part", "2+ threads, other's part");
  for (size_t mib : {1, 4, 16, 128}) {
    size_t bytes = mib << 20;
    double one = chainMicroseconds(bytes, 1, false);
    double same = chainMicroseconds(bytes, threads, false);
    double other = chainMicroseconds(bytes, threads, true);
    auto rate = [&](double us) { return 2.0 * bytes / (us * 1e-6) / 1e9; };
    std::printf("%6zu MiB %8.1f (%5.1f) %14.1f (%5.1f) %18.1f (%5.1f)\n", mib,
                one, rate(one), same, rate(same), other, rate(other));
  }
  return 0;
}
