//===- FileNames.h - Names as file names, JSON strings, output guards --===//
//
// Part of the Parallax project. Shared by the runtime and the compiler
// (lib/Support); in namespace parallax::runtime, the runtime being their
// main user.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_SUPPORT_FILENAMES_H
#define PARALLAX_SUPPORT_FILENAMES_H

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

namespace parallax::runtime {

/// The file name (without ".npy") that holds variable, input or output
/// `name` inside a directory. A plain file name (no '/', '%', control
/// character or leading '.', not empty, at most 200 bytes) is kept as it
/// is; any other name has each such byte written as %XX (uppercase hex),
/// so the file never leaves its directory and decodeFileName gives the
/// name back. An encoding longer than 200 bytes is cut at 180 and ends in
/// "%~" and a 16-digit hash: only the manifest maps such a file back.
std::string encodeFileName(const std::string &name);

/// The name of an encoded file name; "" for a shortened one (%~).
std::string decodeFileName(const std::string &file);

/// 64-bit FNV-1a of `bytes`, continuing from `hash`.
inline uint64_t fnv1a(std::string_view bytes,
                      uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : bytes)
    hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

/// `text` as a JSON string literal, quotes included.
std::string jsonString(const std::string &text);

/// Writes `parts`, one after the other, to `path` through a temporary file that
/// is flushed to disk and renamed into place; false with `error` set on any
/// failure (nothing is left at `path` then but what was there before).
bool writeFileAtomically(const std::string &path,
                         std::initializer_list<std::string_view> parts,
                         std::string &error);

/// Appends bytes to the file being written; false after a write error.
using ByteSink = std::function<bool(std::string_view)>;

/// As above, with the contents streamed: `produce` appends them through
/// the sink it is given and returns false to give up (after a failed
/// append, or a failure of its own, which it describes in `error`).
bool writeFileAtomically(const std::string &path,
                         const std::function<bool(const ByteSink &)> &produce,
                         std::string &error);

/// Whether a file can be created beside `path` (where writeFileAtomically
/// would put its temporary); false with `error` set otherwise. Creates
/// and removes only a file of its own.
bool canWriteBeside(const std::string &path, std::string &error);

/// fsync of a directory, so that renames inside it survive a crash.
void syncDirectory(const std::string &dir);

} // namespace parallax::runtime

#endif // PARALLAX_SUPPORT_FILENAMES_H
