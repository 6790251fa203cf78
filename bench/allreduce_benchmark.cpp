//===- allreduce_benchmark.cpp - The runtime's AllReduce against the wire
//---===//
//
// Part of the Parallax project.
//
// Run under mpirun (bench/allreduce_benchmark.py runs it on an emulated
// cluster): times the AllReduce buckets of generated code
// (parallax_rt_allreduce_add/start/wait) at each size, alone and started
// before a stretch of single-threaded compute, as a backward pass starts
// its buckets. Prints one JSON object per size on rank 0:
//   comm_s     median time of start + wait alone;
//   compute_s  median time of the compute alone;
//   overlap_s  median time of start, compute, wait;
//   hidden     the fraction of the shorter of the two that the overlap hid
//              ((comm_s + compute_s - overlap_s) / min(comm_s, compute_s)).
// Whether the communication thread runs follows PARALLAX_COMM_THREAD.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "CommThread.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace parallax::runtime;

namespace {

struct Memref1D {
  float *allocated, *aligned;
  int64_t offset = 0, size, stride = 1;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Single-threaded arithmetic for about `seconds`, calibrated once: the
/// stand-in for the backward pass the buckets overlap with.
struct Compute {
  int64_t itersPerSecond = 0;
  volatile float sink = 0;

  void run(int64_t iters) {
    float a = 1.0f, b = 0.999999f;
    for (int64_t i = 0; i < iters; ++i)
      a = a * b + 1e-7f;
    sink = a;
  }
  void calibrate() {
    int64_t iters = 1 << 20;
    for (;;) {
      double start = parallax_rt_now();
      run(iters);
      double took = parallax_rt_now() - start;
      if (took > 0.05) {
        itersPerSecond = static_cast<int64_t>(iters / took);
        return;
      }
      iters *= 4;
    }
  }
  void runFor(double seconds) {
    run(static_cast<int64_t>(seconds * itersPerSecond));
  }
};

void barrier() { MPI_Barrier(world().comm); }

} // namespace

int main(int argc, char **argv) {
  initWorld(&argc, &argv);
  std::vector<double> sizesMB;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--sizes-mb")
      while (i + 1 < argc && argv[i + 1][0] != '-')
        sizesMB.push_back(std::atof(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: mpirun -np N %s [--sizes-mb MB...] [--repeats R]\n",
                   argv[0]);
      return 2;
    }
  }
  if (sizesMB.empty())
    sizesMB = {1, 8, 32, 115};
  const World &w = world();
  Compute compute;
  compute.calibrate();
  // Every rank computes for rank 0's calibrated time.
  MPI_Bcast(&compute.itersPerSecond, 1, MPI_INT64_T, 0, w.comm);
  if (w.rank == 0)
    std::fprintf(stderr, "%s\n", describeCommunication().c_str());

  for (double mb : sizesMB) {
    int64_t count = static_cast<int64_t>(mb * 1e6 / sizeof(float));
    std::vector<float> gradient(count, 1.0f), result(count);
    Memref1D in{gradient.data(), gradient.data(), 0, count};
    Memref1D out{result.data(), result.data(), 0, count};
    auto allreduce = [&](bool withCompute, double computeSeconds) {
      parallax_rt_allreduce_add_f32(0, "gradient", 1, &in, 1, &out);
      parallax_rt_allreduce_start(0, PARALLAX_RT_REDUCE_MEAN);
      if (withCompute)
        compute.runFor(computeSeconds);
      parallax_rt_allreduce_wait(0);
    };
    allreduce(false, 0); // warm-up: buffers, connections
    std::vector<double> comm, alone, overlapped;
    for (int r = 0; r < repeats; ++r) {
      barrier();
      double start = parallax_rt_now();
      allreduce(false, 0);
      comm.push_back(parallax_rt_now() - start);
    }
    // As long a compute as the communication: the most there is to hide.
    double computeSeconds = median(comm);
    MPI_Bcast(&computeSeconds, 1, MPI_DOUBLE, 0, w.comm);
    for (int r = 0; r < repeats; ++r) {
      barrier();
      double start = parallax_rt_now();
      compute.runFor(computeSeconds);
      alone.push_back(parallax_rt_now() - start);
      barrier();
      start = parallax_rt_now();
      allreduce(true, computeSeconds);
      overlapped.push_back(parallax_rt_now() - start);
    }
    if (result[0] != 1.0f || result[count - 1] != 1.0f) {
      std::fprintf(stderr, "wrong AllReduce result %g\n", result[0]);
      return 1;
    }
    double c = median(comm), k = median(alone), o = median(overlapped);
    if (w.rank == 0)
      std::printf("{\"workers\": %d, \"bytes\": %lld, \"comm_s\": %.6f, "
                  "\"compute_s\": %.6f, \"overlap_s\": %.6f, "
                  "\"hidden\": %.3f, \"comm_thread\": %s}\n",
                  w.size, static_cast<long long>(count * sizeof(float)), c, k,
                  o, std::max(0.0, (c + k - o) / std::min(c, k)),
                  commThreadEnabled() ? "true" : "false");
    std::fflush(stdout);
  }
  finalizeWorld();
  return 0;
}
