// pto/sim/bf16.hpp: the 16-bit floating-point element types `bfloat16_t` and `half`.
//
// `half` is the compiler's `_Float16` (IEEE binary16, arithmetic through float on x86-64).
// `bfloat16_t` is our own 16-bit storage type: conversion from float rounds to nearest, ties to
// even, and keeps NaNs quiet; conversion to float is exact; arithmetic goes through float.
// Both are global-scope names, as kernels spell them.
#pragma once

#include "pto/sim/config.hpp"

/// IEEE binary16.
typedef _Float16 half;

/// bfloat16: the upper 16 bits of an IEEE binary32.
struct bfloat16_t {
    uint16_t bits; ///< the raw encoding

    /// Uninitialised, like the built-in types (tiles reinterpret raw memory).
    bfloat16_t() = default;
    /// From float, rounding to nearest, ties to even.
    bfloat16_t(float f) : bits(round_from_float(f)) {}
    /// From double (through float).
    bfloat16_t(double d) : bits(round_from_float(static_cast<float>(d))) {}
    /// From half (exact through float).
    bfloat16_t(half h) : bits(round_from_float(static_cast<float>(h))) {}
    /// From an integer (through float).
    template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
    bfloat16_t(I v) : bits(round_from_float(static_cast<float>(v))) {}

    /// The exact float value.
    operator float() const {
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    }

    /// A value with the given encoding.
    static bfloat16_t from_bits(uint16_t b) {
        bfloat16_t v;
        v.bits = b;
        return v;
    }

    /// Rounds a float to the nearest bfloat16 encoding (ties to even; NaN stays a quiet NaN).
    static uint16_t round_from_float(float f) {
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            return static_cast<uint16_t>((u >> 16) | 0x0040u);
        }
        u += 0x7fffu + ((u >> 16) & 1u);
        return static_cast<uint16_t>(u >> 16);
    }

    /// `*this = *this + o` through float.
    bfloat16_t& operator+=(float o) { return *this = bfloat16_t(static_cast<float>(*this) + o); }
    /// `*this = *this - o` through float.
    bfloat16_t& operator-=(float o) { return *this = bfloat16_t(static_cast<float>(*this) - o); }
    /// `*this = *this * o` through float.
    bfloat16_t& operator*=(float o) { return *this = bfloat16_t(static_cast<float>(*this) * o); }
    /// `*this = *this / o` through float.
    bfloat16_t& operator/=(float o) { return *this = bfloat16_t(static_cast<float>(*this) / o); }
};

static_assert(sizeof(bfloat16_t) == 2, "bfloat16_t is 16 bits");
static_assert(std::is_trivially_copyable<bfloat16_t>::value, "bfloat16_t is trivially copyable");
static_assert(sizeof(half) == 2, "half is 16 bits");
