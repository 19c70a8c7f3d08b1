// pto/sim/config.hpp: language checks, the core-type guard and the qualifier macros.
//
// Part of our own CPU implementation of the PTO-ISA C++ API (see docs/PTO_ISA.md). Kernels do
// not include this file directly; <pto/pto-inst.hpp> does.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "<pto/pto-inst.hpp> needs C++17 or later: compile kernels with -std=c++17"
#endif

// ptoas wraps every kernel body in `#if defined(__DAV_VEC__)` or `#if defined(__DAV_CUBE__)`:
// a kernel compiled without the right macro would silently run an empty body.
#if !defined(__DAV_VEC__) && !defined(__DAV_CUBE__)
#error "<pto/pto-inst.hpp>: no core type: compile AIV kernels with -D__DAV_VEC__ and AIC kernels with -D__DAV_CUBE__"
#endif
#if defined(__DAV_VEC__) && defined(__DAV_CUBE__)
#error "<pto/pto-inst.hpp>: both __DAV_VEC__ and __DAV_CUBE__ are defined; a kernel is built for one core type"
#endif

#include <stddef.h>
#include <stdint.h>

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "pto_sim_abi.h"

// Address-space and entry qualifiers are empty on the CPU (defined only when the kernel or an
// earlier header has not defined them).
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef AICORE
#define AICORE
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __cbuf__
#define __cbuf__
#endif
#ifndef __ca__
#define __ca__
#endif
#ifndef __cb__
#define __cb__
#endif
#ifndef __cc__
#define __cc__
#endif
#ifndef __fbuf__
#define __fbuf__
#endif
#ifndef PTO_INST
#define PTO_INST inline
#endif
#ifndef PTO_INTERNAL
#define PTO_INTERNAL inline
#endif

// ptoas samples declare their own MrgSortExecutedNumList unless TMRGSORT_HPP is defined (the
// include guard of PTO-ISA's TMRGSORT header); ours is in pto/sim/types.hpp.
#ifndef TMRGSORT_HPP
#define TMRGSORT_HPP
#endif

/// The core type this translation unit is built for.
#if defined(__DAV_CUBE__)
#define PTO_SIM_BUILD_CORE_TYPE PTO_SIM_CORE_AIC
#else
#define PTO_SIM_BUILD_CORE_TYPE PTO_SIM_CORE_AIV
#endif
