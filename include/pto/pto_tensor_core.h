// pto_tensor_core.h: the 128-byte tensor descriptor and the task id shared by the runtime,
// orchestrations and kernels of both Simpler generations, under their newest names
// (`simpler::tmr::Tensor`, `simpler::tmr::TaskId`), with DataType and the scalar helpers.
//
// This header is part of the PTO runtime's C ABI. Its layout is checked at compile time here
// and in the Rust runtime (crates/pto-runtime/src/ffi.rs); both sides must agree byte for byte.
// User code never includes it: each generation's "tensor.h" spells it (2026-08: `ChipTensor`,
// `PTO2TaskId`; 2026-09: `Tensor` / `TaskTensor`, `TaskId`, plus the 72-byte boundary
// `ChipTensor`). <pto_generation.h> (found first on the include path) says which one a
// translation unit is compiled for.
#pragma once

#include <pto_generation.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <exception>
#include <type_traits>

#include "pto_sim_thread_exit.h"

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef AICORE
#define AICORE
#endif

/// The name this generation gives the 128-byte descriptor, for messages.
#if PTO_SIMPLER_GENERATION >= 202609
#define PTO_TENSOR_SPELLING "Tensor"
#else
#define PTO_TENSOR_SPELLING "ChipTensor"
#endif

// Kernel units (compiled with the core macro of their type) see the pipe / event ids, the
// sync no-ops and the cache maintenance, as Simpler's simulator gives plain kernels through
// its AICore platform header; orchestrations do not.
#if defined(__DAV_VEC__) || defined(__DAV_CUBE__)
#include "pto_kernel_sync.h"
#endif

/// Maximum number of dimensions of a tensor view.
constexpr int MAX_TENSOR_DIMS = 5;

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
    FP8E4M3FN = 12,  ///< a5 only on the device
    FP8E8M0 = 13,    ///< a5 only on the device
    FP4E2M1 = 14,    ///< a5 only on the device; packed two per byte
    DATA_TYPE_NUM = 15,
};

/// Size in bytes of one element of `dt` (FP4 reports 1); 0 for a value that is no DataType.
inline constexpr uint64_t get_element_size(DataType dt) {
    switch (dt) {
    case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::FLOAT16: case DataType::INT16: case DataType::UINT16: case DataType::BFLOAT16: return 2;
    case DataType::INT64: case DataType::UINT64: return 8;
    case DataType::INT8: case DataType::UINT8: case DataType::BOOL:
    case DataType::FP8E4M3FN: case DataType::FP8E8M0: case DataType::FP4E2M1: return 1;
    default: return 0;
    }
}

/// The enumerator's name ("FLOAT32", "BFLOAT16", ...), or "UNKNOWN".
inline const char* get_dtype_name(DataType dt) {
    switch (dt) {
    case DataType::FLOAT32: return "FLOAT32";
    case DataType::FLOAT16: return "FLOAT16";
    case DataType::INT32: return "INT32";
    case DataType::INT16: return "INT16";
    case DataType::INT8: return "INT8";
    case DataType::UINT8: return "UINT8";
    case DataType::BFLOAT16: return "BFLOAT16";
    case DataType::INT64: return "INT64";
    case DataType::UINT64: return "UINT64";
    case DataType::UINT16: return "UINT16";
    case DataType::UINT32: return "UINT32";
    case DataType::BOOL: return "BOOL";
    case DataType::FP8E4M3FN: return "FP8E4M3FN";
    case DataType::FP8E8M0: return "FP8E8M0";
    case DataType::FP4E2M1: return "FP4E2M1";
    default: return "UNKNOWN";
    }
}

/// Whether `T` may be passed as a scalar argument (arithmetic or enum).
template <class T>
constexpr bool is_supported_scalar_arg_v = std::is_arithmetic<T>::value || std::is_enum<T>::value;

/// The 64-bit slot of a scalar: its bytes, zero-extended (int32 -1 is 0x00000000FFFFFFFF).
template <class T> __aicore__ inline uint64_t to_u64(T v) {
    static_assert(sizeof(T) <= 8, "a scalar argument is at most 64 bits");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    return bits;
}
/// The value of type `T` held in the low bytes of a 64-bit scalar slot.
template <class T> __aicore__ inline T from_u64(uint64_t bits) {
    static_assert(sizeof(T) <= 8, "a scalar argument is at most 64 bits");
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
}

/// The DataType the args dump records for a scalar of C++ type `T` (float and double are
/// FLOAT32, exact integer types their own, bool BOOL, anything else UINT64).
template <class T> constexpr DataType dtype_of() {
    using U = typename std::remove_cv<T>::type;
    if (std::is_same<U, bool>::value) return DataType::BOOL;
    if (std::is_floating_point<U>::value) return DataType::FLOAT32;
    if (std::is_same<U, int8_t>::value) return DataType::INT8;
    if (std::is_same<U, uint8_t>::value) return DataType::UINT8;
    if (std::is_same<U, int16_t>::value) return DataType::INT16;
    if (std::is_same<U, uint16_t>::value) return DataType::UINT16;
    if (std::is_same<U, int32_t>::value) return DataType::INT32;
    if (std::is_same<U, uint32_t>::value) return DataType::UINT32;
    if (std::is_same<U, int64_t>::value) return DataType::INT64;
    return DataType::UINT64;
}

/// Where a tensor's buffer lives. On the simulated chip both are host memory.
enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

namespace simpler {
namespace tmr {
/// A task id: `(ring << 32) | local`. All ones is the invalid id. Default construction
/// leaves it uninitialised (it is an aggregate), as in Simpler. 2026-08 spells it
/// `PTO2TaskId` (`local()`, `is_invalid()`), 2026-09 `TaskId` (`local_id()`, `<`,
/// `to_uint64`); both sets of members are here, over the same word.
struct TaskId {
    uint64_t raw;

    /// Marks task-id handles for templates that accept them.
    static constexpr bool kIsTaskIdHandle = true;

    /// The id of task `local` of ring `ring`.
    static constexpr TaskId make(uint8_t ring, uint32_t local) {
        return TaskId{((uint64_t)ring << 32) | local};
    }
    /// The invalid id.
    static constexpr TaskId invalid() { return TaskId{~0ull}; }
    constexpr bool is_valid() const { return raw != ~0ull; }
    constexpr bool is_invalid() const { return raw == ~0ull; }
    /// The scope-depth ring (0..3).
    constexpr uint8_t ring() const { return (uint8_t)((raw >> 32) & 0xFF); }
    /// The id within the ring (2026-08's accessor).
    constexpr uint32_t local() const { return (uint32_t)(raw & 0xFFFFFFFFull); }
    /// The id within the ring (2026-09's accessor).
    constexpr int32_t local_id() const { return (int32_t)(uint32_t)(raw & 0xFFFFFFFFull); }
    /// The raw word of a task-id handle.
    template <class T> static constexpr uint64_t to_uint64(const T& id) { return id.raw; }
    /// Copies a handle (across address spaces on the device; a plain copy here).
    template <class Dst, class Src> static void assign(Dst& dst, const Src& src) { dst.raw = src.raw; }
    constexpr bool operator==(const TaskId& o) const { return raw == o.raw; }
    constexpr bool operator!=(const TaskId& o) const { return raw != o.raw; }
    /// A total order on the raw word.
    constexpr bool operator<(const TaskId& o) const { return raw < o.raw; }
};
static_assert(sizeof(TaskId) == 8, "TaskId is one 64-bit word");
}  // namespace tmr
}  // namespace simpler

#if !defined(__DAV_VEC__) && !defined(__DAV_CUBE__)
#include <functional>
/// Task ids as keys of unordered containers (host code only, as in Simpler).
namespace std {
template <> struct hash<simpler::tmr::TaskId> {
    size_t operator()(const simpler::tmr::TaskId& id) const noexcept { return hash<uint64_t>()(id.raw); }
};
}  // namespace std
#endif

namespace pto_detail {
/// Reports a violated tensor contract (a reshape of a non-contiguous view, a slice outside
/// its dimension). Inside an orchestration the API header points this at the runtime's
/// fatal-error path; elsewhere (kernels, host tools) the message goes to stderr and the
/// process aborts, as Simpler's assertions do.
inline void (*tensor_contract_hook)(const char* message) = nullptr;

inline void tensor_contract(const char* message) {
    if (tensor_contract_hook != nullptr) {
        tensor_contract_hook(message);
        return;
    }
    fprintf(stderr, PTO_TENSOR_SPELLING ": %s\n", message);
    abort();
}
}  // namespace pto_detail

#if PTO_SIMPLER_GENERATION >= 202609
// 2026-09's 72-byte boundary descriptor, completed by that generation's tensor.h for
// orchestrations and host code only. A kernel that reads its arguments through it gets an
// "incomplete type" error whose note quotes the next line.
struct ChipTensor;  // 2026-09: the 72-byte boundary type, never a kernel argument; kernels read args[i] as Tensor* / TaskTensor* (128 bytes)
#endif

namespace simpler {
namespace tmr {
/// The tensor descriptor: a view (shape, element strides, element offset) into a buffer.
///
/// Trivially copyable; copying it copies the view, not the data. Element `(i0, .., in)` is at
/// `(T*)buffer.addr + start_offset + sum(i_d * strides[d])`.
struct alignas(64) Tensor {
    struct {
        uint64_t addr;  ///< buffer base address
        uint64_t size;  ///< buffer size in bytes
    } buffer;
    TaskId owner_task_id;   ///< task that allocated the buffer; invalid for external tensors
    uint64_t start_offset;      ///< element offset of the view origin
    int32_t version;
    uint32_t ndims;             ///< <= MAX_TENSOR_DIMS
    DataType dtype;
    bool manual_dep;            ///< no TensorMap tracking for this tensor
    bool is_contiguous;
    AddressSpace address_space;
    uint32_t shapes[MAX_TENSOR_DIMS];
    // second cache line
    uint64_t extent_elem_cache; ///< elements spanned by the view (0 = empty)
    uint32_t strides[MAX_TENSOR_DIMS];
    uint8_t _pad_cl2[36];

    /// Number of elements of the view.
    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
        return n;
    }
    /// Size of one element in bytes.
    uint64_t elem_size() const { return get_element_size(dtype); }
    /// Bytes of the view's elements (`numel() * elem_size()`).
    uint64_t nbytes() const { return numel() * elem_size(); }
    /// Whether the buffer is in device memory.
    bool is_device_memory() const { return address_space == AddressSpace::DEVICE; }
    /// The buffer base as `T*` (the view's `start_offset` is *not* added, as in Simpler).
    template <class T> T* data_as() const { return reinterpret_cast<T*>(buffer.addr); }
    /// Pointer to the view origin (this runtime's helper: `data_as<T>() + start_offset`).
    template <class T> T* data() const { return reinterpret_cast<T*>(buffer.addr) + start_offset; }
    /// Element offset (relative to the view origin) of a multi-index.
    uint64_t offset_of(const uint32_t idx[]) const {
        uint64_t off = 0;
        for (uint32_t i = 0; i < ndims; ++i) off += (uint64_t)idx[i] * strides[i];
        return off;
    }
    /// Element offset from the buffer base (start_offset included) of the first `n` indices.
    uint64_t compute_flat_offset(const uint32_t idx[], uint32_t n) const {
        uint64_t off = start_offset;
        for (uint32_t i = 0; i < n && i < ndims; ++i) off += (uint64_t)idx[i] * strides[i];
        return off;
    }
    /// Elements spanned by the view: `numel()` when contiguous, else `1 + sum (shape-1)*stride`.
    uint64_t extent_elem() const { return is_contiguous ? numel() : extent_elem_cache; }

    /// Recomputes `is_contiguous` and `extent_elem_cache` from shapes and strides. A view is
    /// contiguous when every dimension's stride is the row-major product of the dimensions
    /// after it; 2026-08 checks size-1 dimensions too, 2026-09 exempts them.
    void refresh_layout() {
        bool contiguous = true;
        uint64_t expect = 1;
        uint64_t extent = 1;
        bool empty = false;
        for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
            if (shapes[i] == 0) empty = true;
            if (strides[i] != expect && !(PTO_SIMPLER_GENERATION >= 202609 && shapes[i] == 1)) contiguous = false;
            expect *= shapes[i];
            if (shapes[i] > 0) extent += (uint64_t)(shapes[i] - 1) * strides[i];
        }
        if (empty) {
            is_contiguous = true;
            extent_elem_cache = 0;
            return;
        }
        is_contiguous = contiguous;
        extent_elem_cache = extent;
    }

    /// A sub-view: `new_shapes` of the new view, `offsets` of its origin in this view's
    /// indices; strides are kept and `manual_dep` is set to `in_manual_dep`. A view with a
    /// zero dimension is empty: its offsets are ignored.
    Tensor view(const uint32_t new_shapes[], const uint32_t offsets[], bool in_manual_dep = false) const {
        Tensor t = *this;
        bool empty = false;
        for (uint32_t i = 0; i < ndims; ++i) empty = empty || new_shapes[i] == 0;
        if (!empty) t.start_offset = start_offset + offset_of(offsets);
        for (uint32_t i = 0; i < ndims; ++i) t.shapes[i] = new_shapes[i];
        t.manual_dep = in_manual_dep;
        t.refresh_layout();
        return t;
    }
    /// Whether `reshape(new_shapes, new_ndims)` is allowed: a contiguous view and the same
    /// number of elements in at most MAX_TENSOR_DIMS dimensions.
    bool valid_reshape(const uint32_t new_shapes[], uint32_t new_ndims) const {
        if (!is_contiguous || new_ndims == 0 || new_ndims > (uint32_t)MAX_TENSOR_DIMS) return false;
        uint64_t n = 1;
        for (uint32_t i = 0; i < new_ndims; ++i) n *= new_shapes[i];
        return n == numel();
    }
    /// A new shape over the same elements (the view must be contiguous).
    Tensor reshape(const uint32_t new_shapes[], uint32_t new_ndims, bool in_manual_dep = false) const {
        if (!valid_reshape(new_shapes, new_ndims)) {
            pto_detail::tensor_contract(is_contiguous ? "reshape: the new shape has another element count or rank"
                                                      : "reshape: the view is not contiguous");
            return *this;
        }
        Tensor t = *this;
        t.ndims = new_ndims;
        uint32_t stride = 1;
        for (int32_t i = (int32_t)new_ndims - 1; i >= 0; --i) {
            t.shapes[i] = new_shapes[i];
            t.strides[i] = stride;
            stride *= new_shapes[i];
        }
        for (uint32_t i = new_ndims; i < (uint32_t)MAX_TENSOR_DIMS; ++i) { t.shapes[i] = 0; t.strides[i] = 0; }
        t.manual_dep = in_manual_dep;
        t.refresh_layout();
        return t;
    }
    /// Whether dimensions `d0` and `d1` exist.
    bool valid_transpose(uint32_t d0, uint32_t d1) const { return d0 < ndims && d1 < ndims; }
    /// Swaps two dimensions (zero-copy).
    Tensor transpose(uint32_t d0, uint32_t d1, bool in_manual_dep = false) const {
        if (!valid_transpose(d0, d1)) {
            pto_detail::tensor_contract("transpose: a dimension index is not below ndims");
            return *this;
        }
        Tensor t = *this;
        uint32_t s = t.shapes[d0]; t.shapes[d0] = t.shapes[d1]; t.shapes[d1] = s;
        uint32_t st = t.strides[d0]; t.strides[d0] = t.strides[d1]; t.strides[d1] = st;
        t.manual_dep = in_manual_dep;
        t.refresh_layout();
        return t;
    }
    /// Reorders dimensions: new dim i is old dim `order[i]` (zero-copy).
    Tensor permute(const uint32_t order[], bool in_manual_dep = false) const {
        uint32_t seen = 0;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (order[i] >= ndims || (seen & (1u << order[i])) != 0) {
                pto_detail::tensor_contract("permute: the order is not a permutation of the dimensions");
                return *this;
            }
            seen |= 1u << order[i];
        }
        Tensor t = *this;
        for (uint32_t i = 0; i < ndims; ++i) { t.shapes[i] = shapes[order[i]]; t.strides[i] = strides[order[i]]; }
        t.manual_dep = in_manual_dep;
        t.refresh_layout();
        return t;
    }
    /// Elements `start, start+step, ..` below `end` along `dim` (zero-copy); needs
    /// `start < end <= shapes[dim]`.
    Tensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1, bool in_manual_dep = false) const {
        if (dim >= ndims || end <= start || end > shapes[dim] || step == 0) {
            pto_detail::tensor_contract("slice: needs dim < ndims, start < end <= shapes[dim] and step > 0");
            return *this;
        }
        Tensor t = *this;
        t.start_offset = start_offset + (uint64_t)start * strides[dim];
        t.shapes[dim] = (end - start + step - 1) / step;
        t.strides[dim] = strides[dim] * step;
        t.manual_dep = in_manual_dep;
        t.refresh_layout();
        return t;
    }

    /// Makes this a contiguous external descriptor of `bytes` bytes at `addr`.
    void init_external(void* addr, uint64_t bytes, const uint32_t in_shapes[], uint32_t in_ndims, DataType in_dtype,
                       int32_t in_version, bool in_manual_dep = false,
                       AddressSpace space = AddressSpace::HOST) {
        memset(this, 0, sizeof(*this));
        buffer.addr = (uint64_t)(uintptr_t)addr;
        buffer.size = bytes;
        owner_task_id = TaskId::invalid();
        version = in_version;
        ndims = in_ndims <= (uint32_t)MAX_TENSOR_DIMS ? in_ndims : (uint32_t)MAX_TENSOR_DIMS;
        dtype = in_dtype;
        manual_dep = in_manual_dep;
        address_space = space;
        uint32_t stride = 1;
        for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
            shapes[i] = in_shapes[i];
            strides[i] = stride;
            stride *= in_shapes[i];
        }
        refresh_layout();
    }
    /// Copies every field of `other`.
    void init_from(const Tensor& other) { *this = other; }
#if PTO_SIMPLER_GENERATION >= 202609
    /// A working descriptor of an entry (boundary) tensor: its geometry, no owner, version 0,
    /// no manual dependency (defined in 2026-09's tensor.h, after ChipTensor).
    static Tensor from_boundary(const ::ChipTensor& boundary);
    /// The boundary form of this descriptor (geometry only).
    ::ChipTensor to_boundary() const;
    /// Copies the geometry (buffer, offset, shapes, strides, dtype, space) of `other`.
    void init_geometry_from(const Tensor& other) {
        buffer = other.buffer;
        start_offset = other.start_offset;
        ndims = other.ndims;
        dtype = other.dtype;
        address_space = other.address_space;
        for (int i = 0; i < MAX_TENSOR_DIMS; ++i) { shapes[i] = other.shapes[i]; strides[i] = other.strides[i]; }
        refresh_layout();
    }
    /// Recomputes the derived fields (contiguity, extent) from shapes and strides.
    void refresh_row_major_derived() { refresh_layout(); }
#endif
    /// A copy of this descriptor.
    Tensor copy() const { return *this; }
    /// Prints the descriptor (one line) to stdout.
    void dump() const {
        printf(PTO_TENSOR_SPELLING "{addr=0x%llx size=%llu owner=0x%llx offset=%llu dtype=%s ndims=%u shape=[",
               (unsigned long long)buffer.addr, (unsigned long long)buffer.size,
               (unsigned long long)owner_task_id.raw, (unsigned long long)start_offset, get_dtype_name(dtype), ndims);
        for (uint32_t i = 0; i < ndims; ++i) printf(i ? ",%u" : "%u", shapes[i]);
        printf("] strides=[");
        for (uint32_t i = 0; i < ndims; ++i) printf(i ? ",%u" : "%u", strides[i]);
        printf("] contiguous=%d manual_dep=%d version=%d}\n", (int)is_contiguous, (int)manual_dep, version);
    }
};

static_assert(sizeof(Tensor) == 128, "the tensor descriptor must be 128 bytes");
static_assert(alignof(Tensor) == 64, "the tensor descriptor must be 64-byte aligned");
static_assert(offsetof(Tensor, owner_task_id) == 16, "tensor descriptor layout");
static_assert(offsetof(Tensor, start_offset) == 24, "tensor descriptor layout");
static_assert(offsetof(Tensor, version) == 32, "tensor descriptor layout");
static_assert(offsetof(Tensor, ndims) == 36, "tensor descriptor layout");
static_assert(offsetof(Tensor, dtype) == 40, "tensor descriptor layout");
static_assert(offsetof(Tensor, shapes) == 44, "tensor descriptor layout");
static_assert(offsetof(Tensor, extent_elem_cache) == 64, "tensor descriptor layout");
static_assert(offsetof(Tensor, strides) == 72, "tensor descriptor layout");

/// Wraps an existing buffer (host memory on the simulated chip) in a contiguous descriptor
/// of `numel * elem_size` bytes with no owner.
inline Tensor make_tensor_external(void* addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0,
                                       AddressSpace address_space = AddressSpace::HOST) {
    Tensor t;
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
    t.init_external(addr, n * get_element_size(dtype), shapes, ndims, dtype, version, manual_dep, address_space);
    return t;
}

/// Wraps a buffer with explicit element strides; `start_offset` 0, size = extent * elem_size.
inline Tensor make_tensor_strided(void* addr, const uint32_t shapes[], const uint32_t strides[], uint32_t ndims,
                                      DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                      int32_t version = 0,
                                      AddressSpace address_space = AddressSpace::HOST) {
    Tensor t;
    t.init_external(addr, 0, shapes, ndims, dtype, version, manual_dep, address_space);
    for (uint32_t i = 0; i < t.ndims; ++i) t.strides[i] = strides[i];
    t.refresh_layout();
    uint64_t extent = t.is_contiguous ? t.numel() : t.extent_elem_cache;
    t.buffer.size = extent * get_element_size(dtype);
    return t;
}

}  // namespace tmr
}  // namespace simpler

// ---------------------------------------------------------------------------------------------
// Kernel arguments. The dispatch contexts (`args[48]`, `args[49]`) and their accessors
// (`get_block_idx(args)`, ...) are in intrinsic.h, which each generation's tensor.h includes
// so that kernels written against tensor.h alone keep compiling; the helpers here are this
// runtime's own.
// ---------------------------------------------------------------------------------------------

/// Length of a kernel's args array.
#define PTO2_DISPATCH_MAX_ARGS 50

/// The tensor argument `i` of a kernel.
inline simpler::tmr::Tensor* kernel_tensor(__gm__ int64_t* args, uint32_t i) {
    return reinterpret_cast<simpler::tmr::Tensor*>(args[i]);
}
/// The scalar argument at args index `i`, reinterpreted as `T`.
template <class T> inline T kernel_scalar(__gm__ int64_t* args, uint32_t i) {
    return from_u64<T>((uint64_t)args[i]);
}

/// Runs `entry(args)` and turns a C++ exception that escapes the kernel into a status, so it
/// never unwinds into the runtime: 0 = returned, 2 = threw (its text in `message`). The
/// runtime calls kernels through this when the library exports it (weak: one per library).
extern "C" __attribute__((weak, visibility("default"))) int pto_kernel_call(void (*entry)(int64_t*), int64_t* args,
                                                                            char* message, size_t capacity) {
    try {
        entry(args);
        return 0;
    } catch (abi::__forced_unwind&) {
        pto_detail::thread_exit_refused("kernel");
    } catch (const std::exception& e) {
        snprintf(message, capacity, "%s", e.what());
    } catch (...) {
        snprintf(message, capacity, "an exception that is not a std::exception");
    }
    return 2;
}

