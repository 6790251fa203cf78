//===- Threads.h - The threads of a worker ----------------------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// A worker computes on one pool of threads, LLVM's OpenMP runtime's: the
// generated loop nests share out their outer loops, matrix products their
// tiles (Blas.cpp), never both at once. By default it has as many threads
// as this rank has cores, shared with the other ranks of its machine that
// may run on them too.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_THREADS_H
#define PARALLAX_LIB_RUNTIME_THREADS_H

#include <cstdint>
#include <functional>
#include <string>

namespace parallax::runtime {

/// Parses a --threads value (a count of at least 1); dies naming `option`
/// otherwise.
int parseThreads(const std::string &option, const std::string &value);

/// Sets the worker's thread count: `requested` when it is positive, else
/// PARALLAX_THREADS, else OMP_NUM_THREADS, else the default above. Call
/// once, after initWorld(): the default asks the machine's other ranks for
/// their cores.
void configureThreads(int requested);

/// The count configureThreads chose (the default, computed for this rank
/// alone, when it was not called).
int workerThreads();

/// "threads: 2 (the cores this rank may run on: 2, shared by 1 rank)".
std::string describeThreads();

/// Runs body(begin, end) over [0, count) cut into chunks of at least
/// `minChunk` (and at most 256 chunks), on the worker's threads, each
/// thread one run of consecutive chunks (equal work per chunk). The
/// chunks depend on `count` and `minChunk` only, so a body that computes
/// each index independently gives the same results on any number of
/// threads.
void parallelChunks(int64_t count, int64_t minChunk,
                    const std::function<void(int64_t, int64_t)> &body);

/// Runs body(i) for i in [0, count) on the worker's threads, each task
/// handed to the next thread that is free: for tasks of unequal work
/// (matrix product tiles).
void parallelTasks(int64_t count, const std::function<void(int64_t)> &body);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_THREADS_H
