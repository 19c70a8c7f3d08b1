// vector_add's kernel with a fault chosen by PTO_TEST_FAULT (tests only): each run of the
// faults test sets it to one kind; unset, the kernel adds as usual.
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>

#include "tensor.h"

static void terminate_now() noexcept { throw std::runtime_error("thrown through noexcept"); }

static void fault(const char* kind) {
    if (strcmp(kind, "segv") == 0) {
        volatile int* p = nullptr;
        *p = 1;
    } else if (strcmp(kind, "bus") == 0) {
        char path[] = "/tmp/pto-bus-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0 || ftruncate(fd, 8192) != 0) return;
        volatile char* m = (volatile char*)mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0);
        unlink(path);
        if (ftruncate(fd, 0) != 0) return;
        (void)m[4096];
    } else if (strcmp(kind, "fpe") == 0) {
        volatile int zero = 0;
        volatile int x = 7 / zero;
        (void)x;
    } else if (strcmp(kind, "ill") == 0) {
        __builtin_trap();
    } else if (strcmp(kind, "abort") == 0) {
        abort();
    } else if (strcmp(kind, "terminate") == 0) {
        terminate_now();
    } else if (strcmp(kind, "throw") == 0) {
        throw std::out_of_range("index 9 of 8");
    } else if (strcmp(kind, "exit") == 0) {
        exit(0);
    } else if (strcmp(kind, "_exit") == 0) {
        _exit(3);
    } else if (strcmp(kind, "pthread_exit") == 0) {
        pthread_exit(nullptr);
    } else if (strcmp(kind, "sleep") == 0) {
        usleep(3000000);  // then computes as usual: a slow, correct run
    } else if (strcmp(kind, "hang") == 0) {
        for (volatile int spin = 0;; spin = spin + 1) {
        }
    }
}

// --- ptoas-generated code ---
static void kernel_add(const ChipTensor* a, const ChipTensor* b, const ChipTensor* c, int32_t block, int32_t blocks) {
    const char* kind = getenv("PTO_TEST_FAULT");
    if (kind != nullptr && block == 0) fault(kind);
    uint64_t n = c->numel();
    for (uint64_t i = n * block / blocks; i < n * (block + 1) / blocks; ++i)
        c->data<float>()[i] = a->data<float>()[i] + b->data<float>()[i];
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    kernel_add(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_tensor(args, 2), get_block_idx(args),
               get_block_num(args));
}
