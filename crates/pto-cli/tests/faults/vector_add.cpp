// vector_add's orchestration with a fault chosen by PTO_TEST_ORCH_FAULT (tests only).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const ChipTensor& a = orch_args.tensor(0).ref();
    const ChipTensor& b = orch_args.tensor(1).ref();
    const ChipTensor& c = orch_args.tensor(2).ref();
    const char* kind = getenv("PTO_TEST_ORCH_FAULT");
    PTO2_SCOPE() {
        for (uint32_t off = 0; off < a.shapes[0]; off += 2048) {
            uint32_t s[1] = {2048}, o[1] = {off};
            ChipTensor at = a.view(s, o), bt = b.view(s, o), ct = c.view(s, o);
            CoreTaskArgs p;
            p.add_input(at, bt);
            p.add_output(ct);
            p.launch_spec.set_block_num(4);
            rt_submit_aiv_task(0, p);
            if (kind != nullptr && off == 2048) {
                if (strcmp(kind, "segv") == 0) {
                    volatile int* q = nullptr;
                    *q = 2;
                } else if (strcmp(kind, "exit") == 0) {
                    exit(0);
                } else if (strcmp(kind, "pthread_exit") == 0) {
                    pthread_exit(nullptr);
                } else if (strcmp(kind, "hang") == 0) {
                    for (volatile int spin = 0;; spin = spin + 1) {
                    }
                }
            }
        }
    }
}
