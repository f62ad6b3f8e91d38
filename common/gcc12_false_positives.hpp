#pragma once
// Included first in every C++ file when the compiler is GCC 12 (CMakeLists.txt, `-include`), to
// silence false positives of GCC 12 that sit inside its own headers:
//  - its AVX-512 headers build "undefined" placeholder vectors as `__m512 __Y = __Y;`, and once
//    Eigen's packet code is inlined (GEMM packing, transposes, reductions) each use is reported as
//    a possibly uninitialised read: over a thousand warnings in a clean build (GCC bug 105593);
//  - `"." + std::string` is reported as an overlapping memcpy inside basic_string (GCC bug 105329);
//  - in a sanitizer build at -O1 with g++ (-DP0SIM_SANITIZE=ON; the sanitize preset is clang's), the
//    std::function members of <regex>'s states (Catch2's main and the tests that match messages)
//    are reported as possibly uninitialised inside std_function.h.
// A diagnostic pragma applies by source location, so ignoring these warnings only around these
// headers hides the false positives and keeps the warnings on for the project's own code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wrestrict"
#include <functional>
#include <immintrin.h>
#include <string>
#pragma GCC diagnostic pop
