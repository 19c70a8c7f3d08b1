// tensor.h: the 128-byte tensor descriptor shared by the runtime, orchestrations and kernels.
//
// This header is part of the PTO runtime's C ABI. Its layout is checked at compile time here
// and in the Rust runtime (crates/pto-runtime/src/ffi.rs); both sides must agree byte for byte.
// Kernels include it as "tensor.h" to read descriptors directly.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef AICORE
#define AICORE
#endif

/// Maximum number of dimensions of a tensor view.
#define MAX_TENSOR_DIMS 5

/// Element types. The numeric values are Simpler's and appear in every artifact.
enum class DataType : uint8_t {
    FLOAT32 = 0,
    FLOAT16 = 1,
    INT32 = 2,
    INT16 = 3,
    INT8 = 4,
    UINT8 = 5,
    BFLOAT16 = 6,
    INT64 = 7,
    UINT64 = 8,
    UINT16 = 9,
    UINT32 = 10,
    BOOL = 11,
    FP8E4M3FN = 12,
    FP8E8M0 = 13,
    FP4E2M1 = 14,
};

/// Size in bytes of one element of `dt` (FP4 is packed two per byte and reports 1).
inline constexpr uint32_t get_element_size(DataType dt) {
    switch (dt) {
    case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::FLOAT16: case DataType::INT16: case DataType::UINT16: case DataType::BFLOAT16: return 2;
    case DataType::INT64: case DataType::UINT64: return 8;
    default: return 1;
    }
}

/// Where a tensor's buffer lives. On the simulated chip both are host memory.
enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

/// A task id: `(ring << 32) | local`. All ones is the invalid id.
struct PTO2TaskId {
    uint64_t raw;

    static constexpr PTO2TaskId invalid() { return PTO2TaskId{~0ull}; }
    constexpr bool is_valid() const { return raw != ~0ull; }
    constexpr uint32_t ring() const { return (uint32_t)((raw >> 32) & 0xFF); }
    constexpr uint32_t local() const { return (uint32_t)(raw & 0xFFFFFFFFull); }
    constexpr bool operator==(const PTO2TaskId& o) const { return raw == o.raw; }
    constexpr bool operator!=(const PTO2TaskId& o) const { return raw != o.raw; }
};

/// The tensor descriptor: a view (shape, element strides, element offset) into a buffer.
///
/// Trivially copyable; copying it copies the view, not the data. Kernels read element
/// `(i0, .., in)` at `(T*)buffer.addr + start_offset + sum(i_d * strides[d])`.
struct alignas(64) ChipTensor {
    struct {
        uint64_t addr;  ///< buffer base address
        uint64_t size;  ///< buffer size in bytes
    } buffer;
    PTO2TaskId owner_task_id;   ///< task that allocated the buffer; invalid for external tensors
    uint64_t start_offset;      ///< element offset of the view origin
    int32_t version;
    uint32_t ndims;             ///< <= MAX_TENSOR_DIMS
    DataType dtype;
    bool manual_dep;            ///< no TensorMap tracking for this tensor
    bool is_contiguous;
    AddressSpace address_space;
    uint32_t shapes[MAX_TENSOR_DIMS];
    // second cache line
    uint64_t extent_elem_cache; ///< elements spanned by the view (0 = not computed)
    uint32_t strides[MAX_TENSOR_DIMS];
    uint8_t _pad_cl2[36];

    /// Number of elements of the view.
    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
        return n;
    }
    /// Size of one element in bytes.
    uint32_t elem_size() const { return get_element_size(dtype); }
    /// Pointer to the view origin.
    template <class T> T* data() const { return reinterpret_cast<T*>(buffer.addr) + start_offset; }
    /// Element offset (relative to the view origin) of a multi-index.
    uint64_t offset_of(const uint32_t idx[]) const {
        uint64_t off = 0;
        for (uint32_t i = 0; i < ndims; ++i) off += (uint64_t)idx[i] * strides[i];
        return off;
    }

    /// Recomputes `is_contiguous` and `extent_elem_cache` from shapes and strides.
    void refresh_layout() {
        bool contiguous = true;
        uint64_t expect = 1;
        uint64_t extent = 1;
        bool empty = false;
        for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
            if (shapes[i] == 0) empty = true;
            if (shapes[i] != 1 && strides[i] != expect) contiguous = false;
            expect *= shapes[i];
            if (shapes[i] > 0) extent += (uint64_t)(shapes[i] - 1) * strides[i];
        }
        is_contiguous = contiguous;
        extent_elem_cache = empty ? 0 : extent;
    }

    /// A sub-view: `shapes` of the new view, `offsets` of its origin in this view's indices.
    ChipTensor view(const uint32_t new_shapes[], const uint32_t offsets[]) const {
        ChipTensor t = *this;
        t.start_offset = start_offset + offset_of(offsets);
        for (uint32_t i = 0; i < ndims; ++i) t.shapes[i] = new_shapes[i];
        t.refresh_layout();
        return t;
    }
    /// A new shape over the same elements; only valid for contiguous views.
    ChipTensor reshape(const uint32_t new_shapes[], uint32_t new_ndims) const {
        ChipTensor t = *this;
        t.ndims = new_ndims;
        uint32_t stride = 1;
        for (int32_t i = (int32_t)new_ndims - 1; i >= 0; --i) {
            t.shapes[i] = new_shapes[i];
            t.strides[i] = stride;
            stride *= new_shapes[i];
        }
        for (uint32_t i = new_ndims; i < MAX_TENSOR_DIMS; ++i) { t.shapes[i] = 0; t.strides[i] = 0; }
        t.refresh_layout();
        return t;
    }
    /// Swaps two dimensions (zero-copy).
    ChipTensor transpose(uint32_t d0, uint32_t d1) const {
        ChipTensor t = *this;
        uint32_t s = t.shapes[d0]; t.shapes[d0] = t.shapes[d1]; t.shapes[d1] = s;
        uint32_t st = t.strides[d0]; t.strides[d0] = t.strides[d1]; t.strides[d1] = st;
        t.refresh_layout();
        return t;
    }
    /// Reorders dimensions: new dim i is old dim `perm[i]` (zero-copy).
    ChipTensor permute(const uint32_t perm[]) const {
        ChipTensor t = *this;
        for (uint32_t i = 0; i < ndims; ++i) { t.shapes[i] = shapes[perm[i]]; t.strides[i] = strides[perm[i]]; }
        t.refresh_layout();
        return t;
    }
    /// Elements `start, start+step, ..` below `end` along `dim` (zero-copy).
    ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1) const {
        ChipTensor t = *this;
        if (step == 0) step = 1;
        t.start_offset = start_offset + (uint64_t)start * strides[dim];
        t.shapes[dim] = end > start ? (end - start + step - 1) / step : 0;
        t.strides[dim] = strides[dim] * step;
        t.refresh_layout();
        return t;
    }
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor must be 128 bytes");
static_assert(alignof(ChipTensor) == 64, "ChipTensor must be 64-byte aligned");
static_assert(offsetof(ChipTensor, owner_task_id) == 16, "ChipTensor layout");
static_assert(offsetof(ChipTensor, start_offset) == 24, "ChipTensor layout");
static_assert(offsetof(ChipTensor, version) == 32, "ChipTensor layout");
static_assert(offsetof(ChipTensor, ndims) == 36, "ChipTensor layout");
static_assert(offsetof(ChipTensor, dtype) == 40, "ChipTensor layout");
static_assert(offsetof(ChipTensor, shapes) == 44, "ChipTensor layout");
static_assert(offsetof(ChipTensor, extent_elem_cache) == 64, "ChipTensor layout");
static_assert(offsetof(ChipTensor, strides) == 72, "ChipTensor layout");

/// Alias used by Simpler-era kernels.
using Tensor = ChipTensor;

/// Wraps an existing buffer (host memory on the simulated chip) in a contiguous descriptor.
inline ChipTensor make_tensor_external(void* addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0,
                                       AddressSpace address_space = AddressSpace::HOST) {
    ChipTensor t;
    memset(&t, 0, sizeof(t));
    t.buffer.addr = (uint64_t)(uintptr_t)addr;
    t.owner_task_id = PTO2TaskId::invalid();
    t.version = version;
    t.ndims = ndims;
    t.dtype = dtype;
    t.manual_dep = manual_dep;
    t.address_space = address_space;
    uint32_t stride = 1;
    for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
        t.shapes[i] = shapes[i];
        t.strides[i] = stride;
        stride *= shapes[i];
    }
    t.buffer.size = t.numel() * get_element_size(dtype);
    t.refresh_layout();
    return t;
}

// ---------------------------------------------------------------------------------------------
// Kernel arguments. The dispatch contexts (`args[48]`, `args[49]`) and their accessors
// (`get_block_idx(args)`, ...) are in intrinsic.h, included below so that kernels written
// against this header alone keep compiling; the helpers here are this runtime's own.
// ---------------------------------------------------------------------------------------------

/// Length of a kernel's args array.
#define PTO2_DISPATCH_MAX_ARGS 50
/// Most tensors one task may take.
#define MAX_TENSOR_ARGS 32
/// Most scalars one task may take.
#define MAX_SCALAR_ARGS 16

/// The tensor argument `i` of a kernel.
inline ChipTensor* kernel_tensor(__gm__ int64_t* args, uint32_t i) {
    return reinterpret_cast<ChipTensor*>(args[i]);
}
/// The scalar argument at args index `i`, reinterpreted as `T`.
template <class T> inline T kernel_scalar(__gm__ int64_t* args, uint32_t i) {
    T v;
    uint64_t bits = (uint64_t)args[i];
    memcpy(&v, &bits, sizeof(T));
    return v;
}

#include "intrinsic.h"
