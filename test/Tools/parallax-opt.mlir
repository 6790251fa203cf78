// RUN: parallax-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: parallax-opt --help | FileCheck %s --check-prefix=HELP
// RUN: parallax-opt --version | FileCheck %s --check-prefix=VERSION
// The suite uses LLVM 22's FileCheck, not Debian's /usr/bin/FileCheck-14.
// RUN: FileCheck --version | FileCheck %s --check-prefix=FILECHECK

// DIALECTS: Available Dialects:
// DIALECTS-SAME: linalg
// DIALECTS-SAME: parallax
// DIALECTS-SAME: tensor

// HELP: Parallax optimizer driver
// HELP: --parallax-async-allreduce
// HELP: --parallax-bucket-allreduce
// HELP-NEXT: --bucket-bytes=

// VERSION: LLVM version 22.
// FILECHECK: LLVM version 22.
