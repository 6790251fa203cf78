//===- TranslateRegistration.cpp - parallax-translate --import-onnx -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Target/ONNX/ONNXImporter.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct ImportOptions {
  llvm::cl::OptionCategory category{"ONNX import options (--import-onnx)"};
  llvm::cl::list<std::string> bind{
      "bind", llvm::cl::CommaSeparated, llvm::cl::cat(category),
      llvm::cl::value_desc("NAME=VALUE"),
      llvm::cl::desc("Bind the symbolic dimension NAME of graph inputs, or "
                     "dimension D of graph input INPUT (INPUT:D=VALUE), to "
                     "VALUE (repeatable, or comma-separated)")};
  llvm::cl::opt<int64_t> batchSize{
      "batch-size", llvm::cl::init(0), llvm::cl::cat(category),
      llvm::cl::value_desc("B"),
      llvm::cl::desc("Bind the leading (batch) dimension of every graph "
                     "input to B, symbolic or not, unless --bind names it")};
  llvm::cl::list<std::string> freeze{
      "freeze", llvm::cl::CommaSeparated, llvm::cl::cat(category),
      llvm::cl::value_desc("NAME[,NAME...]"),
      llvm::cl::desc("Import these float initializers as frozen constants "
                     "instead of trainable variables")};
  llvm::cl::opt<std::string> dataDir{
      "onnx-data-dir", llvm::cl::cat(category), llvm::cl::value_desc("DIR"),
      llvm::cl::desc("Directory of external tensor data (default: the "
                     "model's directory)")};
  llvm::cl::opt<bool> weightsFromModel{
      "weights-from-model", llvm::cl::cat(category),
      llvm::cl::desc("Leave the values of trainable initializers in the "
                     "model (variables marked parallax.from_model, read by "
                     "the program when it starts), as parallax-compile "
                     "does for training programs")};
  llvm::cl::opt<int64_t> seed{
      "seed", llvm::cl::init(0), llvm::cl::cat(category),
      llvm::cl::value_desc("S"),
      llvm::cl::desc("Seed of random draws (training-mode Dropout masks)")};
  llvm::cl::opt<bool> bytecode{
      "emit-bytecode", llvm::cl::cat(category),
      llvm::cl::desc("Write MLIR bytecode instead of text (compact and "
                     "fast for models with large initializers)")};
  llvm::cl::opt<bool> elide{
      "elide-large-constants", llvm::cl::cat(category),
      llvm::cl::desc("Print large initial values and constants as elided "
                     "placeholders (the output is then not re-parseable)")};
};

} // namespace

/// Binary models start with protobuf field 1 (ir_version, byte 0x08); the
/// ONNX text format starts, after blanks and `#` comments, with the model
/// header `<` or the graph's name. Split inputs (--split-input-file) carry
/// no extension, so the contents decide when the name does not.
std::string mlir::parallax::setShapeBindings(ONNXImportOptions &options,
                                             ArrayRef<std::string> bindings,
                                             std::optional<int64_t> batchSize) {
  for (const std::string &binding : bindings) {
    auto [name, value] = StringRef(binding).split('=');
    int64_t size;
    if (name.empty() || value.getAsInteger(10, size) || size < 0)
      return "--bind expects NAME=VALUE with a non-negative integer VALUE, "
             "got '" +
             binding + "'";
    options.dimensionBindings[name] = size;
  }
  if (batchSize) {
    if (*batchSize < 1)
      return "--batch-size must be at least 1, got " +
             std::to_string(*batchSize);
    options.batchSize = batchSize;
  }
  return "";
}

bool mlir::parallax::isONNXText(StringRef filename, StringRef contents) {
  if (filename.ends_with(".onnxtext"))
    return true;
  if (filename.ends_with(".onnx"))
    return false;
  while (true) {
    contents = contents.ltrim();
    if (!contents.starts_with("#"))
      break;
    contents = contents.drop_until([](char c) { return c == '\n'; });
  }
  return !contents.empty() &&
         (contents.front() == '<' || llvm::isAlpha(contents.front()));
}

void mlir::parallax::registerONNXImportTranslation() {
  static ImportOptions cl;
  static TranslateRegistration registration(
      "import-onnx", "Import an ONNX model (.onnx or .onnxtext)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &output, MLIRContext *context) -> LogicalResult {
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        StringRef filename = buffer->getBufferIdentifier();
        Location loc = FileLineColLoc::get(context, filename, 0, 0);

        ONNXImportOptions options;
        std::string error =
            setShapeBindings(options, cl.bind,
                             cl.batchSize.getNumOccurrences()
                                 ? std::optional<int64_t>(cl.batchSize)
                                 : std::nullopt);
        if (!error.empty())
          return emitError(loc) << error;
        for (const std::string &name : cl.freeze)
          options.frozen.insert(name);
        options.dataDirectory = cl.dataDir;
        options.weightsFromModel = cl.weightsFromModel;
        options.randomSeed = cl.seed;

        OwningOpRef<ModuleOp> module = importONNXModel(
            *buffer, filename, isONNXText(filename, buffer->getBuffer()),
            context, options);
        if (!module)
          return failure();
        if (cl.bytecode)
          return writeBytecodeToFile(*module, output);
        OpPrintingFlags flags;
        if (cl.elide)
          flags.elideLargeElementsAttrs(16).elideLargeResourceString(64);
        module->print(output, flags);
        output << "\n";
        return success();
      });
}
