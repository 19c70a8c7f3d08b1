// tensor.h (2026-09 spelling): the runtime's tensor headers under Simpler's 2026-09 names.
//
// Like Simpler's per-runtime shim, it sits first on the include path and brings both tensor
// types: the working descriptor `simpler::tmr::Tensor` (128 bytes, alias `Tensor` and the older
// `TaskTensor`; the same bytes as 2026-08's ChipTensor, and what `args[i]` of a kernel points
// at) and the 72-byte boundary `ChipTensor` (entry arguments on the host side; orchestrations
// never see one). `TaskId` is `simpler::tmr::TaskId`. In kernel units ChipTensor stays
// incomplete, so a kernel that casts its arguments to ChipTensor* fails to compile instead of
// reading a wrong layout.
#pragma once

#include "pto_tensor_core.h"

#if PTO_SIMPLER_GENERATION < 202609
#error "tensor.h of the 2026-09 headers reached in a 2026-08 translation unit: the include roots are in the wrong order"
#endif

using simpler::tmr::TaskId;
/// The 128-byte working descriptor.
using Tensor = simpler::tmr::Tensor;
/// The descriptor's name between Simpler #1974 and #2044, kept by Simpler for older sources.
using TaskTensor = simpler::tmr::Tensor;

#if !defined(__DAV_VEC__) && !defined(__DAV_CUBE__)
/// A buffer: base address and size in bytes.
struct PTOBufferHandle {
    uint64_t addr;
    uint64_t size;
};

/// The 72-byte boundary descriptor of an entry argument: geometry only (no owner, version or
/// dependency flag). The runtime turns each entry argument into a `Tensor` before the
/// orchestration runs (`Tensor::from_boundary`).
struct ChipTensor {
    PTOBufferHandle buffer;
    uint64_t start_offset;  ///< element offset of the view origin
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t strides[MAX_TENSOR_DIMS];  ///< element strides
    uint32_t ndims;
    DataType dtype;
    AddressSpace address_space;
    uint8_t _pad[2];

    /// Number of elements.
    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
        return n;
    }
    /// Elements spanned: `1 + sum (shape-1)*stride`, 0 when a dimension is 0.
    uint64_t extent_elem() const {
        uint64_t e = 1;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (shapes[i] == 0) return 0;
            e += (uint64_t)(shapes[i] - 1) * strides[i];
        }
        return e;
    }
    /// Whether the strides are row-major (size-1 dimensions exempt).
    bool is_contiguous() const {
        uint64_t expect = 1;
        for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
            if (shapes[i] != 1 && strides[i] != expect) return false;
            expect *= shapes[i];
        }
        return true;
    }
    bool is_device_memory() const { return address_space == AddressSpace::DEVICE; }
    /// Bytes of the elements (`numel() * element size`).
    uint64_t nbytes() const { return numel() * get_element_size(dtype); }
    /// The buffer base as `T*`.
    template <class T> T* data_as() const { return reinterpret_cast<T*>(buffer.addr); }
    /// Makes this a contiguous descriptor of `bytes` bytes at `addr`.
    void init_external(void* addr, uint64_t bytes, const uint32_t in_shapes[], uint32_t in_ndims, DataType in_dtype,
                       AddressSpace space = AddressSpace::HOST) {
        memset(this, 0, sizeof(*this));
        buffer.addr = (uint64_t)(uintptr_t)addr;
        buffer.size = bytes;
        ndims = in_ndims <= (uint32_t)MAX_TENSOR_DIMS ? in_ndims : (uint32_t)MAX_TENSOR_DIMS;
        dtype = in_dtype;
        address_space = space;
        uint32_t stride = 1;
        for (int32_t i = (int32_t)ndims - 1; i >= 0; --i) {
            shapes[i] = in_shapes[i];
            strides[i] = stride;
            stride *= in_shapes[i];
        }
    }
    /// Prints the descriptor (one line) to stdout.
    void dump() const {
        printf("ChipTensor{addr=0x%llx size=%llu offset=%llu dtype=%s ndims=%u}\n", (unsigned long long)buffer.addr,
               (unsigned long long)buffer.size, (unsigned long long)start_offset, get_dtype_name(dtype), ndims);
    }
};
static_assert(sizeof(ChipTensor) == 72, "the boundary ChipTensor is 72 bytes");
static_assert(offsetof(ChipTensor, shapes) == 24 && offsetof(ChipTensor, strides) == 44 &&
                  offsetof(ChipTensor, ndims) == 64 && offsetof(ChipTensor, dtype) == 68,
              "boundary ChipTensor layout");
static_assert(std::is_trivially_copyable<ChipTensor>::value && std::is_standard_layout<ChipTensor>::value,
              "the boundary ChipTensor is plain data");

/// A contiguous boundary descriptor of `numel * elem_size` bytes at `addr`.
inline ChipTensor make_tensor_external(void* addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32,
                                       AddressSpace address_space = AddressSpace::HOST) {
    ChipTensor t;
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
    t.init_external(addr, n * get_element_size(dtype), shapes, ndims, dtype, address_space);
    return t;
}
/// A boundary descriptor with explicit element strides; size = extent * elem_size.
inline ChipTensor make_tensor_strided(void* addr, const uint32_t shapes[], const uint32_t strides[], uint32_t ndims,
                                      DataType dtype = DataType::FLOAT32,
                                      AddressSpace address_space = AddressSpace::HOST) {
    ChipTensor t;
    t.init_external(addr, 0, shapes, ndims, dtype, address_space);
    for (uint32_t i = 0; i < t.ndims; ++i) t.strides[i] = strides[i];
    t.buffer.size = t.extent_elem() * get_element_size(dtype);
    return t;
}

inline simpler::tmr::Tensor simpler::tmr::Tensor::from_boundary(const ::ChipTensor& b) {
    Tensor t;
    memset(&t, 0, sizeof(t));
    t.buffer.addr = b.buffer.addr;
    t.buffer.size = b.buffer.size;
    t.owner_task_id = TaskId::invalid();
    t.start_offset = b.start_offset;
    t.ndims = b.ndims;
    t.dtype = b.dtype;
    t.address_space = b.address_space;
    for (int i = 0; i < MAX_TENSOR_DIMS; ++i) { t.shapes[i] = b.shapes[i]; t.strides[i] = b.strides[i]; }
    t.refresh_layout();
    return t;
}

inline ::ChipTensor simpler::tmr::Tensor::to_boundary() const {
    ::ChipTensor b;
    memset(&b, 0, sizeof(b));
    b.buffer.addr = buffer.addr;
    b.buffer.size = buffer.size;
    b.start_offset = start_offset;
    b.ndims = ndims;
    b.dtype = dtype;
    b.address_space = address_space;
    for (int i = 0; i < MAX_TENSOR_DIMS; ++i) { b.shapes[i] = shapes[i]; b.strides[i] = strides[i]; }
    return b;
}
#endif

#include "intrinsic.h"
