// The benchmark program of benches/isa.rs: times instructions of our PTO-ISA header against
// plain C++ loops doing the same work on the same memory, and prints one line per case:
//   <name> <unit> <header rate> <plain rate>
// It binds its own PtoSimContext (malloc'd on-chip memories) and runs through pto_sim_invoke,
// as the runtime does.
#include <pto/pto-inst.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

using namespace pto;

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Runs `f` `reps` times per round until 0.3 s have passed; returns seconds per call (best
/// round).
template <class F>
double time_it(F&& f, int reps) {
    double best = 1e30;
    const double start = now();
    do {
        const double t0 = now();
        for (int i = 0; i < reps; ++i) f();
        best = std::min(best, (now() - t0) / reps);
    } while (now() - start < 0.3);
    return best;
}

volatile float sink;

constexpr int R = 32, C = 256, N = R * C;

void report(const char* name, const char* unit, double work, double t_header, double t_plain) {
    std::printf("%s %s %.6g %.6g\n", name, unit, work / t_header, work / t_plain);
}

void bench_vector() {
    using TF = Tile<TileType::Vec, float, R, C>;
    using Col = Tile<TileType::Vec, float, R, 1, BLayout::ColMajor>;
    TF a, b, c;
    Col m;
    TASSIGN(a, 0x0);
    TASSIGN(b, N * 4);
    TASSIGN(c, 2 * N * 4);
    TASSIGN(m, 3 * N * 4);
    for (int i = 0; i < N; ++i) {
        a.data()[i] = 0.001f * (i % 997) - 0.4f;
        b.data()[i] = 0.002f * (i % 991) + 0.1f;
    }
    float* pa = a.data();
    float* pb = b.data();
    float* pc = c.data();
    float* pm = m.data();

    const double t_add = time_it([&] { TADD(c, a, b); sink = pc[7]; }, 200);
    const double p_add = time_it([&] {
        for (int i = 0; i < N; ++i) pc[i] = pa[i] + pb[i];
        sink = pc[7];
    }, 200);
    report("TADD_f32", "Melem/s", N / 1e6, t_add, p_add);

    const double t_exp = time_it([&] { TEXP(c, a); sink = pc[7]; }, 20);
    const double p_exp = time_it([&] {
        for (int i = 0; i < N; ++i) pc[i] = std::exp(pa[i]);
        sink = pc[7];
    }, 20);
    report("TEXP_f32", "Melem/s", N / 1e6, t_exp, p_exp);

    const double t_max = time_it([&] { TROWMAX(m, a, c); sink = pm[3]; }, 100);
    const double p_max = time_it([&] {
        for (int r = 0; r < R; ++r) {
            float acc = pa[r * C];
            for (int j = 1; j < C; ++j) acc = pa[r * C + j] > acc ? pa[r * C + j] : acc;
            pm[r] = acc;
        }
        sink = pm[3];
    }, 100);
    report("TROWMAX_f32", "Melem/s", N / 1e6, t_max, p_max);
}

template <class T, int M, int K, int Nn>
void bench_matmul(const char* name) {
    using L = Tile<TileType::Left, T, M, K, BLayout::RowMajor, M, K, SLayout::RowMajor, 512>;
    using Rt = Tile<TileType::Right, T, K, Nn, BLayout::RowMajor, K, Nn, SLayout::ColMajor, 512>;
    using Acc = Tile<TileType::Acc, float, M, Nn, BLayout::ColMajor, M, Nn, SLayout::RowMajor, 1024>;
    L l;
    Rt r;
    Acc acc;
    TASSIGN(l, 0);
    TASSIGN(r, 0);
    TASSIGN(acc, 0);
    std::vector<float> a(M * K), b(K * Nn), c(M * Nn);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            a[i * K + k] = static_cast<float>(static_cast<T>(0.01f * ((i * 7 + k) % 13) - 0.05f));
            l.data()[l.ElementOffset(i, k)] = static_cast<T>(a[i * K + k]);
        }
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < Nn; ++j) {
            b[k * Nn + j] = static_cast<float>(static_cast<T>(0.02f * ((k * 3 + j) % 11) - 0.1f));
            r.data()[r.ElementOffset(k, j)] = static_cast<T>(b[k * Nn + j]);
        }
    const double flops = 2.0 * M * K * Nn;
    const double t_mm = time_it([&] { TMATMUL(acc, l, r); sink = acc.data()[5]; }, 5);
    const double p_mm = time_it([&] {
        for (int i = 0; i < M; ++i) {
            float* ci = &c[i * Nn];
            for (int j = 0; j < Nn; ++j) ci[j] = 0.0f;
            for (int k = 0; k < K; ++k) {
                const float x = a[i * K + k];
                const float* bk = &b[k * Nn];
                for (int j = 0; j < Nn; ++j) ci[j] += x * bk[j];
            }
        }
        sink = c[5];
    }, 5);
    report(name, "GFLOP/s", flops / 1e9, t_mm, p_mm);
}

void entry(int64_t*) {
    bench_vector();
    bench_matmul<bfloat16_t, 128, 128, 128>("TMATMUL_bf16_128x128x128");
    bench_matmul<float, 128, 64, 128>("TMATMUL_f32_128x64x128");
}

} // namespace

int main() {
    static const uint64_t sizes[PTO_SIM_BUFFER_COUNT] = {192 << 10, 512 << 10, 64 << 10, 64 << 10, 128 << 10, 1 << 10, 2 << 10};
    std::vector<std::vector<uint8_t>> mem;
    PtoSimContext ctx{};
    ctx.abi_version = PTO_SIM_ABI_VERSION;
    ctx.core_type = PTO_SIM_CORE_AIV;
    ctx.block_num = 1;
    ctx.subblock_dim = 1;
    ctx.kernel_name = "isa_bench";
    for (int i = 0; i < PTO_SIM_BUFFER_COUNT; ++i) {
        mem.emplace_back(sizes[i], 0);
        ctx.memory[i].base = mem.back().data();
        ctx.memory[i].size = sizes[i];
    }
    return pto_sim_invoke(&ctx, entry, nullptr);
}
