//===- DriverTest.cpp - parallax-compile's back end as a library ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/Emit.h"
#include "parallax/Driver/PartitionSearch.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// A scratch directory removed with everything in it.
struct ScratchDirectory {
  SmallString<128> path;
  ScratchDirectory() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("parallax-driver", path));
  }
  ~ScratchDirectory() { llvm::sys::fs::remove_directories(path); }
  std::string file(StringRef name) const { return (path + "/" + name).str(); }
};

void writeFile(const std::string &path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << contents;
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

TEST(EmitTest, OutputsReplaceOnlyWhatCouldBeAnEarlierOutput) {
  ScratchDirectory dir;
  EXPECT_EQ(unreplaceableOutput(dir.file("absent"), EmitKind::Executable), "");
  EXPECT_NE(unreplaceableOutput(dir.path, EmitKind::MLIR), "");
  writeFile(dir.file("notes.txt"), "my notes\n");
  EXPECT_NE(unreplaceableOutput(dir.file("notes.txt"), EmitKind::Executable),
            "");
  EXPECT_NE(unreplaceableOutput(dir.file("notes.txt"), EmitKind::Object), "");
  // Text output replaces a text file, as compilers do.
  EXPECT_EQ(unreplaceableOutput(dir.file("notes.txt"), EmitKind::LLVM), "");
  writeFile(dir.file("empty"), "");
  EXPECT_EQ(unreplaceableOutput(dir.file("empty"), EmitKind::Executable), "");
  writeFile(dir.file("old-program"),
            StringRef("\x7f"
                      "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0",
                      18));
  EXPECT_EQ(unreplaceableOutput(dir.file("old-program"), EmitKind::Executable),
            "");
}

class EmitProgramTest : public ::testing::Test {
protected:
  EmitProgramTest() {
    DialectRegistry registry;
    registry.insert<LLVM::LLVMDialect>();
    registerAllToLLVMIRTranslations(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      llvm.func @main() -> i32 {
        %0 = llvm.mlir.constant(0 : i32) : i32
        llvm.return %0 : i32
      })mlir",
                                         &context);
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(EmitProgramTest, EmitsLLVMIRAndObjectFiles) {
  ASSERT_TRUE(module);
  ScratchDirectory dir;
  EmitOptions options;
  options.kind = EmitKind::LLVM;
  EXPECT_EQ(emitProgram(*module, dir.file("main.ll"), options), "");
  std::string ir = readFile(dir.file("main.ll"));
  EXPECT_NE(ir.find("define"), std::string::npos) << ir;
  EXPECT_NE(ir.find("i32 @main()"), std::string::npos) << ir;
  options.kind = EmitKind::Object;
  options.optLevel = 0;
  EXPECT_EQ(emitProgram(*module, dir.file("main.o"), options), "");
  llvm::file_magic magic;
  ASSERT_FALSE(llvm::identify_magic(dir.file("main.o"), magic));
  EXPECT_EQ(magic, llvm::file_magic::elf_relocatable);
}

TEST_F(EmitProgramTest, AMissingRuntimeLeavesNoProgram) {
  ASSERT_TRUE(module);
  ScratchDirectory dir;
  EmitOptions options;
  options.runtimeLibrary = dir.file("no-such-runtime.a");
  std::string problem = emitProgram(*module, dir.file("program"), options);
  EXPECT_NE(problem.find("runtime library"), std::string::npos) << problem;
  EXPECT_NE(problem.find("not found"), std::string::npos) << problem;
  EXPECT_FALSE(llvm::sys::fs::exists(dir.file("program")));
  // Nor a temporary beside it.
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(dir.path, ec), end;
  EXPECT_TRUE(it == end) << it->path();
}

// Programs are built for what the CPU says it can do, not for its model:
// a Zen 4 whose virtual machine hides AVX-512 ran its first AVX-512
// instruction and died (SIGILL) when only the CPU's name chose them.
TEST(EmitTest, HostFeaturesAreWhatCPUIDSays) {
  std::string features = hostCPUFeatures();
#if defined(__x86_64__)
  auto has = [&](const std::string &feature) {
    return ("," + features + ",").find("," + feature + ",") !=
           std::string::npos;
  };
  EXPECT_TRUE(has(__builtin_cpu_supports("avx2") ? "+avx2" : "-avx2"))
      << features;
  EXPECT_TRUE(has(__builtin_cpu_supports("avx512f") ? "+avx512f" : "-avx512f"))
      << features;
  EXPECT_TRUE(has(__builtin_cpu_supports("fma") ? "+fma" : "-fma")) << features;
#else
  GTEST_SKIP() << "the features checked here are x86's";
#endif
}

TEST(PartitionSearchTest, TriesUpToTwiceTheWorkersWithinTheRows) {
  Plan plan;
  plan.cluster.machines = 4;
  VariablePlan table;
  table.name = "table";
  table.shape = {100, 8};
  table.placement = Placement::PS;
  VariablePlan dense = table;
  dense.name = "dense";
  dense.placement = Placement::AllReduce;
  dense.shape = {2, 2};
  plan.variables = {table, dense};
  EXPECT_EQ(largestPartitionCount(plan), 8);
  plan.variables[0].shape = {3, 8};
  EXPECT_EQ(largestPartitionCount(plan), 3);
  plan.cluster.machines = 1;
  plan.variables[0].shape = {100, 8};
  EXPECT_EQ(largestPartitionCount(plan), 4);
  plan.variables.erase(plan.variables.begin());
  EXPECT_EQ(largestPartitionCount(plan), 0);
}

} // namespace
