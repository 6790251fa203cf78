//===- ModelWeights.cpp - Initial weights from the ONNX model -------------===//
//
// Part of the Parallax project.
//
// Training programs hold no copy of their weights: the trainable variables
// the importer left in the model (parallax.from_model) are read from the
// ONNX file when the program begins, each initializer checked against the
// compiled shape and dtype. Embedded data (raw_data, float_data) is copied
// out of the parsed model; external data is read from its file at its
// offset straight into the variable, so start-up memory is the variables
// themselves plus the model's protobuf (small when the data is external).
//
//===----------------------------------------------------------------------===//

#include "ModelWeights.h"

#include "Support.h"
#include "parallax/Support/ExternalData.h"
#include "parallax/Support/Npy.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace parallax::runtime;

namespace {
std::string compiledPath;
std::set<std::string> fromModel;

/// Reads the held ranges of `v` from the external data file of `init`.
void readExternal(const std::string &model, const onnx::TensorProto &init,
                  const Variable &v) {
  char *out = v.data;
  int64_t bytes = v.bytes;
  auto [location, offset, length] = parallax::externalDataOf(init);
  std::string where = "initializer '" + init.name() + "' of '" + model + "'";
  if (location.empty())
    die(where + " has external data without a location");
  std::filesystem::path path(location);
  if (path.is_relative())
    path = std::filesystem::path(model).parent_path() / path;
  if (length >= 0 && length != bytes)
    die(where + " has " + std::to_string(length) +
        " bytes of external data, its shape needs " + std::to_string(bytes));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    die("cannot open '" + path.string() + "', the external data of " + where +
        ": " + std::strerror(errno));
  struct stat status;
  if (::fstat(fd, &status) != 0)
    die("cannot read '" + path.string() + "': " + std::strerror(errno));
  // Compared without computing offset + bytes, which may overflow.
  if (offset < 0 || bytes > status.st_size || offset > status.st_size - bytes)
    die("'" + path.string() + "' is truncated: it has " +
        std::to_string(status.st_size) + " bytes, " + where + " needs " +
        std::to_string(bytes) + " from offset " + std::to_string(offset));
  for (auto [first, last] : heldRanges(v))
    readFileInto(fd, offset + first, out + first, last - first, [&](int error) {
      die("cannot read '" + path.string() + "' (" + where +
          "): " + (error ? std::strerror(error) : "unexpected end of file"));
    });
  ::close(fd);
}

void load(const std::string &model, const onnx::TensorProto &init,
          const Variable &v, const std::string &why) {
  std::string where = "initializer '" + init.name() + "' of '" + model + "'";
  std::vector<int64_t> shape(init.dims().begin(), init.dims().end());
  if (init.data_type() != onnx::TensorProto::FLOAT)
    die(where + " is " +
        onnx::TensorProto::DataType_Name(
            static_cast<onnx::TensorProto::DataType>(init.data_type())) +
        ", the program was compiled for FLOAT: " + why);
  if (shape != v.shape)
    die(where + " has shape " + shapeString(shape) +
        ", the program was compiled for " + shapeString(v.shape) + ": " + why);
  if (init.data_location() == onnx::TensorProto::EXTERNAL)
    return readExternal(model, init, v);
  const char *from;
  if (!init.raw_data().empty()) {
    if (static_cast<int64_t>(init.raw_data().size()) != v.bytes)
      die(where + " holds " + std::to_string(init.raw_data().size()) +
          " bytes of data, its shape needs " + std::to_string(v.bytes));
    from = init.raw_data().data();
  } else {
    if (static_cast<int64_t>(init.float_data_size()) * 4 != v.bytes)
      die(where + " holds " + std::to_string(init.float_data_size()) +
          " values, its shape needs " + std::to_string(v.bytes / 4));
    from = reinterpret_cast<const char *>(init.float_data().data());
  }
  for (auto [first, last] : heldRanges(v))
    copyBuffer(v.data + first, from + first, last - first);
}
} // namespace

void parallax::runtime::setModelPath(const std::string &path) {
  compiledPath = path;
}

void parallax::runtime::markFromModel(const std::string &name) {
  fromModel.insert(name);
}

bool parallax::runtime::hasModelWeights() { return !fromModel.empty(); }

void parallax::runtime::loadModelWeights(const std::vector<Variable> &variables,
                                         const std::string &path) {
  if (fromModel.empty())
    return;
  std::string model = path.empty() ? compiledPath : path;
  std::string why = path.empty()
                        ? "the model changed after compiling"
                        : "--init must name a model with the initializers "
                          "the program was compiled for";
  // Parsed from the stream: the model's bytes are held once, in the
  // message, not also in a copy of the file.
  std::ifstream in(model, std::ios::binary);
  if (!in)
    die("cannot open the model '" + model + "' that holds the program's " +
        "initial weights: " + std::strerror(errno) +
        " (--init MODEL.onnx names another copy; --restore DIR starts from a "
        "checkpoint)");
  onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&in))
    die("'" + model + "' is not a valid ONNX model (its protobuf is " +
        "truncated or corrupt): it cannot give the program its initial " +
        "weights");
  std::vector<const onnx::TensorProto *> byName;
  for (const onnx::TensorProto &init : proto.graph().initializer())
    byName.push_back(&init);
  std::sort(byName.begin(), byName.end(),
            [](auto *a, auto *b) { return a->name() < b->name(); });
  for (const Variable &v : variables) {
    if (!fromModel.count(v.name))
      continue;
    auto it = std::lower_bound(byName.begin(), byName.end(), v.name,
                               [](auto *init, const std::string &name) {
                                 return init->name() < name;
                               });
    if (it == byName.end() || (*it)->name() != v.name)
      die("'" + model + "' has no initializer '" + v.name +
          "', the initial value of that variable: " + why);
    load(model, **it, v, why);
  }
}

void parallax::runtime::loadWeightsFromDirectory(
    const std::vector<Variable> &variables, const std::string &dir) {
  readVariableFiles(dir, variables, /*withState=*/false, "--init");
}
