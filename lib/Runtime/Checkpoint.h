//===- Checkpoint.h - Crash-proof checkpoint directories --------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CHECKPOINT_H
#define PARALLAX_LIB_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace parallax::runtime {

/// A registered buffer of generated code.
struct Buffer {
  std::string name;
  std::string dtype;
  char *data;
  std::vector<int64_t> shape;
  int64_t bytes;
};

/// A trainable variable, optimizer state or state variable.
struct Variable : Buffer {
  bool isState;
  int64_t partitions; // of a parameter-server variable; 0 when replicated
  int64_t firstServer;
};

/// Before training, on worker 0: `dir` must be absent, an empty
/// directory or a Parallax checkpoint (it has checkpoint.json); anything
/// else is refused, so --save never replaces what it did not write. Takes
/// the lock `dir.lock` for the rest of the run (a second writer is
/// refused naming the process holding it), then finishes or removes what
/// an interrupted save left beside `dir`.
void prepareCheckpointDir(const std::string &dir);

/// Writes every variable and checkpoint.json (the manifest) into a fresh
/// directory beside `dir` and swaps it in with one atomic rename: at
/// every instant `dir` names a complete checkpoint, old or new. Partitions
/// of parameter-server variables stream to worker 0 in bounded chunks as
/// their files are written (every worker calls this): no worker ever
/// holds a whole partitioned table.
void saveCheckpoint(const std::string &dir, int64_t step,
                    std::vector<Variable> &variables);

/// Reads `dir` (or, when an interrupted save of an older Parallax left it
/// without one, the complete checkpoint beside it) into `variables`:
/// every trainable variable must be there with its shape; optimizer
/// state and the step are read when checkpoint.json says they were
/// saved. Every file is checked before any is read; each rank reads only
/// the rows it holds. Returns the step.
int64_t restoreCheckpoint(const std::string &dir,
                          std::vector<Variable> &variables);

/// The byte ranges [first, last) of `v` this rank holds: all of it, or the
/// rows of the partitions it serves of a parameter-server variable (it
/// never reads or writes the other rows, whose pages stay untouched).
std::vector<std::pair<int64_t, int64_t>> heldRanges(const Variable &v);

/// Reads `dir/<variable>.npy` into every variable (the optimizer state
/// too when `withState`), each rank only the ranges it holds: the headers
/// of all files are checked first (a missing or differing file is an
/// error naming it, `flag` and the variable), then the data is read.
void readVariableFiles(const std::string &dir,
                       const std::vector<Variable> &variables, bool withState,
                       const std::string &flag);

/// Bytes worker 0 writes per checkpoint.
int64_t checkpointBytes(const std::vector<Variable> &variables);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_CHECKPOINT_H
