// Ground truth for tests/integration/test_occupancy.py: NVIDIA's header-only occupancy
// calculator (cuda_occupancy.h, no GPU needed).
//
// stdin, one command per line:
//   D major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM
//     warpSize sharedMemPerBlock sharedMemPerSM numSms sharedMemPerBlockOptin
//     reservedSharedMemPerBlock carveoutPercent      -- select a device
//   Q registers threads sharedBytes                  -- query it
// stdout, one line per Q:
//   activeBlocks blockLimitWarps blockLimitRegs blockLimitSharedMem blockLimitBlocks
// or "ERR <code>" if the calculator rejects the input.
#include <cuda_occupancy.h>

#include <climits>
#include <cstdio>
#include <iostream>
#include <string>

int main() {
    cudaOccDeviceProp prop;
    cudaOccDeviceState state;
    size_t optin = 0;
    std::string cmd;
    while (std::cin >> cmd) {
        if (cmd == "D") {
            int carveout;
            std::cin >> prop.computeMajor >> prop.computeMinor >> prop.maxThreadsPerBlock
                >> prop.maxThreadsPerMultiprocessor >> prop.regsPerBlock
                >> prop.regsPerMultiprocessor >> prop.warpSize >> prop.sharedMemPerBlock
                >> prop.sharedMemPerMultiprocessor >> prop.numSms
                >> prop.sharedMemPerBlockOptin >> prop.reservedSharedMemPerBlock >> carveout;
            optin = prop.sharedMemPerBlockOptin;
            state.cacheConfig = CACHE_PREFER_NONE;
            state.carveoutConfig = carveout;  // 100 == SHAREDMEM_CARVEOUT_MAX_SHARED
        } else if (cmd == "Q") {
            int regs, threads;
            size_t smem;
            std::cin >> regs >> threads >> smem;
            cudaOccFuncAttributes attr;
            attr.maxThreadsPerBlock = INT_MAX;
            attr.numRegs = regs;
            // All shared memory counted as dynamic; the dispatcher opts the
            // kernel in to the per-block maximum.
            attr.sharedSizeBytes = 0;
            attr.partitionedGCConfig = PARTITIONED_GC_OFF;
            attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
            attr.maxDynamicSharedSizeBytes = optin;
            attr.numBlockBarriers = 1;  // __syncthreads uses barrier 0
            attr.virtualResourceCount = 0;
            cudaOccResult res;
            cudaOccError err =
                cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, threads, smem);
            if (err != CUDA_OCC_SUCCESS) {
                std::printf("ERR %d\n", (int)err);
            } else {
                std::printf("%d %d %d %d %d\n", res.activeBlocksPerMultiprocessor,
                            res.blockLimitWarps, res.blockLimitRegs,
                            res.blockLimitSharedMem, res.blockLimitBlocks);
            }
        } else {
            std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
            return 2;
        }
    }
    return 0;
}
