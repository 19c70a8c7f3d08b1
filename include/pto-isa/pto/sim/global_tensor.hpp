// pto/sim/global_tensor.hpp: `Shape`, `Stride` and `GlobalTensor`, the views of global memory.
//
// A GlobalTensor is a pointer plus a 5-D shape and element strides, right-aligned (the two
// innermost dimensions are the rows and columns a tile sees). Element (i0, .., i4) is at
// `data + sum(i_d * stride_d)`; the Layout argument (ND, DN, NZ) only tells TLOAD / TSTORE how
// the dimensions map onto a tile.
#pragma once

#include "pto/sim/tile.hpp"

namespace pto {

namespace sim {
/// Number of `DYNAMIC` entries among five.
constexpr int count_dynamic(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return (a == DYNAMIC) + (b == DYNAMIC) + (c == DYNAMIC) + (d == DYNAMIC) + (e == DYNAMIC);
}

/// Shared body of Shape and Stride: five extents, static ones fixed by the template.
template <int64_t N1, int64_t N2, int64_t N3, int64_t N4, int64_t N5>
struct Dims5 {
    /// The template's values (DYNAMIC = given at run time).
    static constexpr int64_t statics[5] = {N1, N2, N3, N4, N5};
    /// How many are DYNAMIC.
    static constexpr int dynamic_count = count_dynamic(N1, N2, N3, N4, N5);

    /// All values: static ones from the template, dynamic ones from `vals` (or 1).
    static void fill(int64_t* out, const int64_t* vals, int nvals) {
        int k = 0;
        for (int d = 0; d < 5; ++d) {
            if (statics[d] != DYNAMIC) {
                out[d] = statics[d];
            } else if (nvals == 5) {
                out[d] = vals[d];
            } else if (k < nvals) {
                out[d] = vals[k++];
            } else {
                out[d] = 1;
            }
        }
    }
};
} // namespace sim

/// A 5-D shape; `DYNAMIC` entries are given to the constructor, which takes either all five
/// values (static ones ignored), exactly as many values as there are dynamic entries, or none
/// (dynamic entries are then 1).
template <int64_t N1 = DYNAMIC, int64_t N2 = DYNAMIC, int64_t N3 = DYNAMIC, int64_t N4 = DYNAMIC,
          int64_t N5 = DYNAMIC>
struct Shape {
    using Dims = sim::Dims5<N1, N2, N3, N4, N5>; ///< helper
    /// The template's values.
    static constexpr int64_t staticShape[5] = {N1, N2, N3, N4, N5};

    /// Dynamic extents are 1.
    Shape() { Dims::fill(shape, nullptr, 0); }
    /// One dynamic extent.
    Shape(int64_t n) {
        static_assert(Dims::dynamic_count == 1, "Shape(n) takes exactly one value: the shape has another "
                                                "number of DYNAMIC dimensions");
        const int64_t v[1] = {n};
        Dims::fill(shape, v, 1);
    }
    /// Two dynamic extents.
    Shape(int64_t n1, int64_t n2) {
        static_assert(Dims::dynamic_count == 2, "Shape(a, b) needs exactly two DYNAMIC dimensions");
        const int64_t v[2] = {n1, n2};
        Dims::fill(shape, v, 2);
    }
    /// Three dynamic extents.
    Shape(int64_t n1, int64_t n2, int64_t n3) {
        static_assert(Dims::dynamic_count == 3, "Shape(a, b, c) needs exactly three DYNAMIC dimensions");
        const int64_t v[3] = {n1, n2, n3};
        Dims::fill(shape, v, 3);
    }
    /// Four dynamic extents.
    Shape(int64_t n1, int64_t n2, int64_t n3, int64_t n4) {
        static_assert(Dims::dynamic_count == 4, "Shape(a, b, c, d) needs exactly four DYNAMIC dimensions");
        const int64_t v[4] = {n1, n2, n3, n4};
        Dims::fill(shape, v, 4);
    }
    /// All five values; static dimensions keep the template's value.
    Shape(int64_t n1, int64_t n2, int64_t n3, int64_t n4, int64_t n5) {
        const int64_t v[5] = {n1, n2, n3, n4, n5};
        Dims::fill(shape, v, 5);
    }

    int64_t shape[GlobalTensorDim::TOTAL_DIM]; ///< the five extents
};

/// A 5-D element stride; constructors as for Shape (dynamic entries default to 1).
template <int64_t S1 = DYNAMIC, int64_t S2 = DYNAMIC, int64_t S3 = DYNAMIC, int64_t S4 = DYNAMIC,
          int64_t S5 = DYNAMIC>
struct Stride {
    using Dims = sim::Dims5<S1, S2, S3, S4, S5>; ///< helper
    /// The template's values.
    static constexpr int64_t staticStride[5] = {S1, S2, S3, S4, S5};

    /// Dynamic strides are 1.
    Stride() { Dims::fill(stride, nullptr, 0); }
    /// One dynamic stride.
    Stride(int64_t n) {
        static_assert(Dims::dynamic_count == 1, "Stride(n) takes exactly one value: the stride has another "
                                                "number of DYNAMIC dimensions");
        const int64_t v[1] = {n};
        Dims::fill(stride, v, 1);
    }
    /// Two dynamic strides.
    Stride(int64_t n1, int64_t n2) {
        static_assert(Dims::dynamic_count == 2, "Stride(a, b) needs exactly two DYNAMIC dimensions");
        const int64_t v[2] = {n1, n2};
        Dims::fill(stride, v, 2);
    }
    /// Three dynamic strides.
    Stride(int64_t n1, int64_t n2, int64_t n3) {
        static_assert(Dims::dynamic_count == 3, "Stride(a, b, c) needs exactly three DYNAMIC dimensions");
        const int64_t v[3] = {n1, n2, n3};
        Dims::fill(stride, v, 3);
    }
    /// Four dynamic strides.
    Stride(int64_t n1, int64_t n2, int64_t n3, int64_t n4) {
        static_assert(Dims::dynamic_count == 4, "Stride(a, b, c, d) needs exactly four DYNAMIC dimensions");
        const int64_t v[4] = {n1, n2, n3, n4};
        Dims::fill(stride, v, 4);
    }
    /// All five values; static dimensions keep the template's value.
    Stride(int64_t n1, int64_t n2, int64_t n3, int64_t n4, int64_t n5) {
        const int64_t v[5] = {n1, n2, n3, n4, n5};
        Dims::fill(stride, v, 5);
    }

    int64_t stride[GlobalTensorDim::TOTAL_DIM]; ///< the five strides (elements)
};

/// A view of global memory: `data`, a Shape and a Stride, tagged with a Layout.
template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
    using Shape = Shape_;                                  ///< shape type
    using Stride = Stride_;                                ///< stride type
    using RawDType = std::remove_cv_t<Element_>;           ///< element type
    using DType = Element_;                                ///< element type as declared
    static constexpr Layout layout = Layout_;              ///< GM layout tag
    /// Static extents (DYNAMIC where run-time).
    static constexpr int64_t staticShape[5] = {Shape::staticShape[0], Shape::staticShape[1], Shape::staticShape[2],
                                               Shape::staticShape[3], Shape::staticShape[4]};
    /// Static strides (DYNAMIC where run-time).
    static constexpr int64_t staticStride[5] = {Stride::staticStride[0], Stride::staticStride[1],
                                                Stride::staticStride[2], Stride::staticStride[3],
                                                Stride::staticStride[4]};

    /// A view at `data` with the given shape and stride.
    GlobalTensor(DType* data, const Shape& shape = Shape(), const Stride& stride = Stride())
        : data_(data), shape_(shape), stride_(stride) {}
    /// A view at null (bound later with TASSIGN).
    GlobalTensor() : data_(nullptr), shape_(), stride_() {}

    /// The base pointer.
    DType* data() const { return data_; }
    /// Extent of dimension `dim` (0..4).
    int64_t GetShape(int dim) const { return shape_.shape[dim]; }
    /// Stride of dimension `dim` (0..4), in elements.
    int64_t GetStride(int dim) const { return stride_.stride[dim]; }
    /// Static extent of dimension `dim`.
    template <int dim>
    static constexpr int64_t GetShape() {
        static_assert(dim >= 0 && dim < 5, "GlobalTensor::GetShape<dim>: dim is 0..4");
        static_assert(staticShape[dim] != DYNAMIC, "GlobalTensor::GetShape<dim>: the dimension is DYNAMIC");
        return staticShape[dim];
    }
    /// Static stride of dimension `dim`.
    template <int dim>
    static constexpr int64_t GetStride() {
        static_assert(dim >= 0 && dim < 5, "GlobalTensor::GetStride<dim>: dim is 0..4");
        static_assert(staticStride[dim] != DYNAMIC, "GlobalTensor::GetStride<dim>: the dimension is DYNAMIC");
        return staticStride[dim];
    }
    /// Sets a dynamic extent.
    template <int dim>
    void SetShape(int64_t v) {
        static_assert(staticShape[dim] == DYNAMIC, "GlobalTensor::SetShape<dim>: the dimension is static");
        shape_.shape[dim] = v;
    }
    /// Sets a dynamic stride.
    template <int dim>
    void SetStride(int64_t v) {
        static_assert(staticStride[dim] == DYNAMIC, "GlobalTensor::SetStride<dim>: the dimension is static");
        stride_.stride[dim] = v;
    }

    DType* data_;   ///< base pointer
    Shape shape_;   ///< extents
    Stride stride_; ///< strides
};

/// True for GlobalTensor types.
template <class T>
struct is_global : std::false_type {};
/// True for GlobalTensor types.
template <class E, class S, class St, Layout L>
struct is_global<GlobalTensor<E, S, St, L>> : std::true_type {};
/// True for GlobalTensor types.
template <class T>
inline constexpr bool is_global_data_v = is_global<std::remove_cv_t<T>>::value;

namespace sim {

/// Name of a GM layout.
constexpr const char* gm_layout_name(Layout l) {
    switch (l) {
    case Layout::ND: return "ND";
    case Layout::DN: return "DN";
    case Layout::NZ: return "NZ";
    default: return "other";
    }
}

/// Readable description: `GlobalTensor<float, ND> at 0x.. shape [1,1,1,16,256] strides [...]`.
template <class GT>
inline std::string gt_name(const GT& g) {
    std::string s = "GlobalTensor<";
    s += type_name<typename GT::RawDType>();
    s += ", ";
    s += gm_layout_name(GT::layout);
    s += "> at " + hex(reinterpret_cast<uintptr_t>(g.data())) + " shape [";
    for (int d = 0; d < 5; ++d) s += (d ? "," : "") + std::to_string(g.GetShape(d));
    s += "] strides [";
    for (int d = 0; d < 5; ++d) s += (d ? "," : "") + std::to_string(g.GetStride(d));
    s += "]";
    return s;
}

/// Byte range `[lo, hi)` touched by a GlobalTensor; empty when any extent is 0.
template <class GT>
inline void gt_span(const GT& g, uint64_t& lo, uint64_t& hi) {
    const int64_t esize = static_cast<int64_t>(sizeof(typename GT::RawDType));
    int64_t min_off = 0, max_off = 0;
    for (int d = 0; d < 5; ++d) {
        const int64_t n = g.GetShape(d);
        if (n <= 0) {
            lo = hi = 0;
            return;
        }
        const int64_t step = (n - 1) * g.GetStride(d);
        if (step < 0) {
            min_off += step;
        } else {
            max_off += step;
        }
    }
    const uint64_t base = reinterpret_cast<uintptr_t>(g.data());
    lo = base + static_cast<uint64_t>(min_off * esize);
    hi = base + static_cast<uint64_t>((max_off + 1) * esize);
}

} // namespace sim
} // namespace pto
