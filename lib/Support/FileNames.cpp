//===- FileNames.cpp - Names as file names, JSON strings, output guards ---===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/FileNames.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace parallax::runtime;

namespace {
constexpr size_t kMaxFileName = 200, kShortenedPrefix = 180;

bool needsEscape(unsigned char c, size_t position) {
  return c == '/' || c == '%' || c < 0x20 || c == 0x7f ||
         (position == 0 && c == '.');
}

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}
} // namespace

std::string parallax::runtime::encodeFileName(const std::string &name) {
  std::string file;
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = name[i];
    if (needsEscape(c, i)) {
      file += '%';
      file += hex[c >> 4];
      file += hex[c & 15];
    } else {
      file += static_cast<char>(c);
    }
  }
  if (name.empty())
    file = "%";
  if (file.size() <= kMaxFileName)
    return file;
  // Cut on a character boundary of the encoding (never inside %XX).
  size_t cut = kShortenedPrefix;
  for (size_t back = 1; back <= 2 && cut >= back; ++back)
    if (file[cut - back] == '%')
      cut -= back;
  uint64_t hash = fnv1a(name);
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(hash));
  return file.substr(0, cut) + "%~" + digits;
}

std::string parallax::runtime::decodeFileName(const std::string &file) {
  if (file == "%")
    return "";
  std::string name;
  for (size_t i = 0; i < file.size(); ++i) {
    if (file[i] != '%') {
      name += file[i];
      continue;
    }
    int high = i + 1 < file.size() ? hexValue(file[i + 1]) : -1;
    int low = i + 2 < file.size() ? hexValue(file[i + 2]) : -1;
    if (high < 0 || low < 0)
      return "";
    name += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return name;
}

std::string parallax::runtime::jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

namespace {
/// A temporary name beside `path`, private to this process.
std::string temporaryFor(const std::string &path) {
  return path + ".tmp." + std::to_string(getpid());
}
} // namespace

bool parallax::runtime::canWriteBeside(const std::string &path,
                                       std::string &error) {
  std::string temporary = temporaryFor(path);
  int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot write '" + temporary + "': " + std::strerror(errno);
    return false;
  }
  close(fd);
  unlink(temporary.c_str());
  return true;
}

bool parallax::runtime::writeFileAtomically(
    const std::string &path, std::initializer_list<std::string_view> parts,
    std::string &error) {
  return writeFileAtomically(
      path,
      [&](const ByteSink &append) {
        for (std::string_view part : parts)
          if (!append(part))
            return false;
        return true;
      },
      error);
}

bool parallax::runtime::writeFileAtomically(
    const std::string &path,
    const std::function<bool(const ByteSink &)> &produce, std::string &error) {
  std::string temporary = temporaryFor(path);
  int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot write '" + temporary + "': " + std::strerror(errno);
    return false;
  }
  int writeErrno = 0;
  ByteSink append = [&](std::string_view part) {
    const char *data = part.data();
    size_t left = part.size();
    while (left > 0) {
      ssize_t written = write(fd, data, left);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0) {
        writeErrno = written == 0 ? ENOSPC : errno;
        return false;
      }
      data += written;
      left -= written;
    }
    return true;
  };
  std::string produceError;
  error.clear();
  bool ok = produce(append);
  if (!ok && !writeErrno)
    produceError = error.empty() ? "writing it failed" : error;
  if (ok && fsync(fd) != 0) {
    ok = false;
    writeErrno = errno;
  }
  if (close(fd) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    error = writeErrno
                ? "cannot write '" + path + "': " + std::strerror(writeErrno)
                : produceError;
    unlink(temporary.c_str());
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + temporary + "' to '" + path +
            "': " + std::strerror(errno);
    unlink(temporary.c_str());
    return false;
  }
  return true;
}

void parallax::runtime::syncDirectory(const std::string &dir) {
  int fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return;
  fsync(fd);
  close(fd);
}
