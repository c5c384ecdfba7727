/* parakern_cpu.h -- just enough CUDA, on the CPU, to run parakern's generated .cu files.
 *
 *   g++ -std=c++17 -pthread -include parakern_cpu.h kernels.cu ...
 *
 * Blocks of a launch run one after another; the threads of a block are fibers (ucontext)
 * on the launching OS thread, each with its own threadIdx, up to 1024 per block as on a GPU.
 * __syncthreads() is a barrier of the block's threads; a thread that returns from the
 * kernel leaves the barrier, as an exited thread does on a GPU. The threads of a block
 * take turns (one runs at a time, up to its next barrier or its end; threadIdx order in
 * even blocks, reverse order in odd ones): runs are reproducible, and a missing barrier
 * between one thread's write and another's read gives a wrong result. parakern_cpu::order_seed
 * (parakern_cpu_set_order) other than 0 runs the blocks of each launch, and the threads of each
 * block in every barrier interval, in seeded shuffled orders instead: verify runs every point in
 * both orders. Each block counts its barrier intervals (Block::phase: parakern_race.h's shadow
 * memory tells two accesses of one interval from accesses a barrier orders). Each block gets fresh
 * dynamic shared memory filled with a poison pattern (NaN as float or double, a huge
 * int), so that reading data never staged gives a wrong result, followed by a guard
 * zone: a write past the launch's `shared` bytes is a launch error.
 *
 * The device is emulated: the driver sets its limits (parakern_cpu_set_device) and the
 * registers each kernel uses (parakern_cpu_set_registers). A launch is refused, and
 * cudaGetLastError reports it, when a real device would refuse it: more threads than
 * maxThreadsPerBlock, more dynamic shared memory than sharedMemPerBlock without
 * cudaFuncAttributeMaxDynamicSharedMemorySize raised (and never above the opt-in limit),
 * or registers per block above regsPerBlock (allocated per warp in units of 256, warps in
 * groups of 4, as the hardware does: counters/registers.py registers_per_block).
 * parakern_cpu_set_profile makes the emulated device a given GPU for what the time model of
 * dispatch_auto reads (SMs, clocks, bus width, L2 size, per-SM limits): cudaDeviceGetAttribute and
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor (the calculator of counters/occupancy.py,
 * for compute capability >= 7.0 at the largest shared-memory carveout) answer from it.
 */
#ifndef PARAKERN_CPU_H
#define PARAKERN_CPU_H
#define PARAKERN_CPU 1

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <ucontext.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <type_traits>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

/* ------------------------------------------------------------------ keywords */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static /* blocks run one at a time: one copy serves the running block */
#define __constant__ static
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
/* __restrict__ is a g++ keyword already */

struct uint3 { unsigned int x, y, z; };
/* CUDA's float4: 16 bytes, 16-byte aligned (a register tile's vector reads of shared memory) */
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

inline thread_local uint3 threadIdx = {0, 0, 0};
inline thread_local uint3 blockIdx = {0, 0, 0};
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

/* CUDA's min/max of device code, and __ldg. By value, in the arguments' common type: the
   type of `a < b ? a : b` is A& where A is B, a reference to the by-value argument, which
   every call with two ints read after it was gone (verify found every such kernel wrong). */
template <class A, class B> inline std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <class A, class B> inline std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }
template <class T> inline T __ldg(const T *p) { return *p; }

/* ------------------------------------------------------------------ runtime API subset */
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
};
typedef cudaError_t cudaError;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrClockRate = 13, cudaDevAttrMemoryClockRate = 36,
                      cudaDevAttrGlobalMemoryBusWidth = 37 };

struct cudaDeviceProp {
    char name[256];
    size_t sharedMemPerBlock, sharedMemPerBlockOptin, sharedMemPerMultiprocessor;
    int regsPerBlock, regsPerMultiprocessor, maxThreadsPerBlock, maxThreadsPerMultiProcessor;
    int multiProcessorCount, warpSize, major, minor, maxBlocksPerMultiProcessor;
    int maxThreadsDim[3], maxGridSize[3];
    size_t reservedSharedMemPerBlock;
    int l2CacheSize;
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, maxDynamicSharedSizeBytes;
};

namespace parakern_cpu {

struct KernelInfo { int numRegs = 0; long maxDynamicShared = -1; /* -1: not raised */ };

inline cudaDeviceProp default_device() {
    cudaDeviceProp p = {};
    snprintf(p.name, sizeof p.name, "parakern CPU emulation");
    p.sharedMemPerBlock = 48 * 1024; p.sharedMemPerBlockOptin = 48 * 1024;
    p.sharedMemPerMultiprocessor = 64 * 1024;
    p.regsPerBlock = 65536; p.regsPerMultiprocessor = 65536;
    p.maxThreadsPerBlock = 1024; p.maxThreadsPerMultiProcessor = 2048;
    p.multiProcessorCount = 4; p.warpSize = 32; p.major = 8; p.minor = 0; p.maxBlocksPerMultiProcessor = 32;
    p.maxThreadsDim[0] = p.maxThreadsDim[1] = 1024; p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647; p.maxGridSize[1] = p.maxGridSize[2] = 65535;
    return p;
}

/* the GPU parakern_cpu_set_device starts from (parakern_cpu_set_profile), and its speeds */
inline cudaDeviceProp profile = default_device();
struct Speeds { int clock_khz = 1410000, memory_khz = 1215000, bus_bits = 5120; };
inline Speeds speeds;
inline cudaDeviceProp device = default_device();
inline int device_number = 0;          /* each parakern_cpu_set_device is a new device: a dispatcher
                                          that caches the properties per device reads them again */
inline std::map<const void *, KernelInfo> kernels;
inline cudaError_t last_error = cudaSuccess;
inline std::string last_message;       /* why the last error happened, for the driver */
inline long launches = 0;
inline long attribute_queries = 0;     /* cudaFuncGetAttributes and cudaFuncSetAttribute calls: a
                                          dispatcher asks once per device and kernel, not per launch */

inline cudaError_t fail(cudaError_t code, const std::string &why) {
    last_error = code;
    last_message = why;
    return code;
}

/* ---- one block: its threads are fibers (ucontext) on the launching thread and take turns;
   a barrier ends a thread's turn. One OS thread runs them all, so a block of 1024 threads
   costs 1024 small stacks, not 1024 OS threads. */
constexpr size_t GUARD = 64;
constexpr uint32_t POISON = 0x7FFFDEADu;
constexpr size_t FIBER_STACK = 64 * 1024;     /* a kernel's frame holds scalars; deep calls do not happen */
enum : unsigned char { READY, WAITING, EXITED };

struct Block {
    ucontext_t scheduler;
    std::vector<ucontext_t> fibers;
    std::vector<std::unique_ptr<char[]>> stacks;
    std::vector<unsigned> order;                /* the order the threads run in, in every phase */
    std::vector<unsigned char> state;
    std::vector<uint3> index_of;                /* threadIdx of each thread */
    unsigned running = 0;
    unsigned phase = 0;                         /* the running barrier interval, from 0 */
    std::function<void()> body;                 /* the kernel with its arguments */
    uint3 index = {0, 0, 0};
    unsigned long number = 0;                   /* the linear index of blockIdx in the grid */
    unsigned char *shared = nullptr;
    size_t shared_size = 0;                     /* the launch's dynamic shared bytes */

    Block(unsigned n, dim3 block) : fibers(n), stacks(n), order(n), state(n), index_of(n) {
        for (unsigned t = 0; t < n; ++t) {
            stacks[t].reset(new char[FIBER_STACK]);   /* uninitialised: only what a kernel uses is touched */
            index_of[t] = uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
        }
    }
    static void entry();
    /* runs block `block_index`: every thread until its end, phase by phase between barriers;
       with `shuffle`, the threads in a new seeded order in every phase */
    void run(uint3 block_index, unsigned char *buffer, bool reverse, std::mt19937_64 *shuffle = nullptr) {
        unsigned n = (unsigned)order.size();
        index = block_index;
        shared = buffer;
        phase = 0;
        for (unsigned p = 0; p < n; ++p) {
            order[p] = reverse ? n - 1 - p : p;
            state[p] = READY;
            getcontext(&fibers[p]);
            fibers[p].uc_stack.ss_sp = stacks[p].get();
            fibers[p].uc_stack.ss_size = FIBER_STACK;
            fibers[p].uc_link = &scheduler;
            makecontext(&fibers[p], (void (*)())entry, 0);
        }
        for (;; ++phase) {
            if (shuffle) std::shuffle(order.begin(), order.end(), *shuffle);
            for (unsigned p = 0; p < n; ++p) {
                unsigned t = order[p];
                if (state[t] != READY) continue;
                running = t;
                threadIdx = index_of[t];
                blockIdx = index;
                swapcontext(&scheduler, &fibers[t]);   /* back here at its barrier or its end */
            }
            bool waiting = false;
            for (auto &st : state) if (st == WAITING) { st = READY; waiting = true; }
            if (!waiting) return;
        }
    }
    void sync() {   /* an exited thread no longer counts at barriers, as on a GPU */
        state[running] = WAITING;
        swapcontext(&fibers[running], &scheduler);
    }
};

inline thread_local Block *current = nullptr;

inline void Block::entry() {
    current->body();
    current->state[current->running] = EXITED;   /* then uc_link returns to the scheduler */
}

inline unsigned char *shared_memory() { return current->shared; }

inline void poison(unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 4) {
        uint32_t v = POISON;
        memcpy(p + i, &v, bytes - i < 4 ? bytes - i : 4);
    }
}

inline bool guard_intact(const unsigned char *p, size_t bytes) {
    for (size_t i = 0; i < GUARD; ++i) if (p[bytes + i] != 0xA5) return false;
    return true;
}

/* the order of blocks and threads: 0, forward order (threadIdx 0 first) in even blocks and
   reverse order in odd ones, blocks in blockIdx order; another value seeds shuffles of both */
inline unsigned long long order_seed = 0;

/* ---- a launch: the blocks one after another, their threads one at a time (order_seed), so a
   missing barrier between a write and a read of another thread shows up deterministically */
template <typename... P, typename... A>
void launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A... args) {
    const KernelInfo info = kernels[(const void *)kernel];
    unsigned long threads = (unsigned long)block.x * block.y * block.z;
    unsigned long blocks = (unsigned long)grid.x * grid.y * grid.z;
    long limit = info.maxDynamicShared >= 0 ? info.maxDynamicShared : (long)device.sharedMemPerBlock;
    char why[256];
    if (threads == 0 || blocks == 0 || threads > (unsigned long)device.maxThreadsPerBlock ||
        block.x > (unsigned)device.maxThreadsDim[0] || block.y > (unsigned)device.maxThreadsDim[1] ||
        block.z > (unsigned)device.maxThreadsDim[2]) {
        snprintf(why, sizeof why, "invalid configuration: block %ux%ux%u (%lu threads, maxThreadsPerBlock %d), grid %ux%ux%u",
                 block.x, block.y, block.z, threads, device.maxThreadsPerBlock, grid.x, grid.y, grid.z);
        fail(cudaErrorInvalidConfiguration, why);
        return;
    }
    if ((long)shared > limit) {
        snprintf(why, sizeof why, "%zu bytes of dynamic shared memory, limit %ld%s", shared, limit,
                 info.maxDynamicShared >= 0 ? " (raised by cudaFuncSetAttribute)" : " (attribute not raised)");
        fail(cudaErrorInvalidValue, why);
        return;
    }
    /* registers go to warps in units of 256, warps in groups of 4 (one per SM sub-partition) */
    long allocated = 1024L * ((info.numRegs + 7) / 8) * (long)((threads + 127) / 128);
    if (allocated > (long)device.regsPerBlock) {
        snprintf(why, sizeof why, "too many resources requested: %d registers x %lu threads take %ld > regsPerBlock %d",
                 info.numRegs, threads, allocated, device.regsPerBlock);
        fail(cudaErrorLaunchOutOfResources, why);
        return;
    }
    ++launches;
    std::tuple<P...> params(args...);
    Block state((unsigned)threads, block);
    state.body = [&] { std::apply(kernel, params); };
    state.shared_size = shared;
    Block *outer = current;    /* a launch from inside a kernel does not happen; keep it tidy anyway */
    current = &state;
    blockDim = block;
    gridDim = grid;
    unsigned char *buffer = static_cast<unsigned char *>(::operator new(shared + GUARD, std::align_val_t(16)));
    bool overflow = false;
    std::mt19937_64 shuffle(order_seed * 0x9E3779B97F4A7C15ull + (unsigned long long)launches);
    std::vector<unsigned long> sequence;   /* the blocks in a shuffled order */
    if (order_seed) {
        sequence.resize(blocks);
        std::iota(sequence.begin(), sequence.end(), 0UL);
        std::shuffle(sequence.begin(), sequence.end(), shuffle);
    }
    for (unsigned long n = 0; n < blocks; ++n) {
        unsigned long b = order_seed ? sequence[n] : n;
        poison(buffer, shared);
        memset(buffer + shared, 0xA5, GUARD);
        uint3 index = {(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y),
                       (unsigned)(b / ((unsigned long)grid.x * grid.y))};
        state.number = b;
        state.run(index, buffer, b % 2 == 1, order_seed ? &shuffle : nullptr);
        if (!guard_intact(buffer, shared)) overflow = true;
    }
    current = outer;
    ::operator delete(buffer, std::align_val_t(16));
    if (overflow) {
        snprintf(why, sizeof why, "a block wrote past its %zu bytes of dynamic shared memory", shared);
        fail(cudaErrorIllegalAddress, why);
    }
}

}  // namespace parakern_cpu

inline void __syncthreads() { parakern_cpu::current->sync(); }

#define PARAKERN_LAUNCH(kernel, grid, block, shared, ...) \
    parakern_cpu::launch(kernel, dim3(grid), dim3(block), (size_t)(shared), __VA_ARGS__)
#define PARAKERN_DYNAMIC_SHARED(name) unsigned char *const name = parakern_cpu::shared_memory()
/* A traced vector read (codegen/memory.py): the element of lane `lane` is noted as a read of it
 * (parakern_race.h, parakern_trace.h), and the aligned float4 at vector index i is what it reads. */
#define PARAKERN_AT_SHARED4(site, instance, a, i, lane) \
    ((void)PARAKERN_AT_SHARED(site, instance, a, 4 * (long long)(i) + (lane)), \
     reinterpret_cast<const float4 *>(a)[(i)])

/* ---- the API the dispatcher uses */
inline cudaError_t cudaGetDevice(int *device) { *device = parakern_cpu::device_number; return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
    if (device != parakern_cpu::device_number) return parakern_cpu::fail(cudaErrorInvalidValue, "no such device");
    *prop = parakern_cpu::device;
    return cudaSuccess;
}
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, F *kernel) {
    ++parakern_cpu::attribute_queries;
    const parakern_cpu::KernelInfo &info = parakern_cpu::kernels[(const void *)kernel];
    const cudaDeviceProp &d = parakern_cpu::device;
    *attr = cudaFuncAttributes{};
    attr->numRegs = info.numRegs;
    attr->maxThreadsPerBlock = info.numRegs > 0 && d.regsPerBlock / info.numRegs < d.maxThreadsPerBlock
                                   ? d.regsPerBlock / info.numRegs : d.maxThreadsPerBlock;
    attr->sharedSizeBytes = 0;
    attr->maxDynamicSharedSizeBytes = info.maxDynamicShared >= 0 ? (int)info.maxDynamicShared
                                                                 : (int)d.sharedMemPerBlock;
    attr->ptxVersion = attr->binaryVersion = 10 * d.major + d.minor;
    return cudaSuccess;
}
template <class F> cudaError_t cudaFuncSetAttribute(F *kernel, cudaFuncAttribute attr, int value) {
    ++parakern_cpu::attribute_queries;
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
    if (value < 0 || (size_t)value > parakern_cpu::device.sharedMemPerBlockOptin) {
        char why[128];
        snprintf(why, sizeof why, "cudaFuncSetAttribute: %d bytes above sharedMemPerBlockOptin %zu", value,
                 parakern_cpu::device.sharedMemPerBlockOptin);
        return parakern_cpu::fail(cudaErrorInvalidValue, why);
    }
    parakern_cpu::kernels[(const void *)kernel].maxDynamicShared = value;
    return cudaSuccess;
}
inline cudaError_t cudaGetLastError() {
    cudaError_t e = parakern_cpu::last_error;
    parakern_cpu::last_error = cudaSuccess;
    return e;
}
inline cudaError_t cudaPeekAtLastError() { return parakern_cpu::last_error; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

/* ---- what dispatch_tuned uses: device memory is the host's, events read a clock (launches
   are synchronous here); the driver counts the bytes copied and the events */
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
typedef struct parakern_cpu_event *cudaEvent_t;
struct parakern_cpu_event { std::chrono::steady_clock::time_point at; bool recorded = false; };
namespace parakern_cpu {
inline long mallocs = 0, bytes_copied = 0;
inline size_t malloc_limit = (size_t)-1;     /* a device with little memory: cudaMalloc fails above it */
inline float (*elapsed_hook)(float ms) = nullptr;   /* tests: scripted event times instead of the clock's */
}
inline cudaError_t cudaMalloc(void **p, size_t bytes) {
    if (bytes > parakern_cpu::malloc_limit) return parakern_cpu::fail(cudaErrorMemoryAllocation, "out of memory");
    *p = malloc(bytes ? bytes : 1);
    if (!*p) return parakern_cpu::fail(cudaErrorMemoryAllocation, "out of memory");
    ++parakern_cpu::mallocs;
    return cudaSuccess;
}
inline cudaError_t cudaFree(void *p) {
    if (p) { free(p); --parakern_cpu::mallocs; }
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
    memmove(dst, src, bytes);
    parakern_cpu::bytes_copied += (long)bytes;
    return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new parakern_cpu_event(); return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
    if (!e) return parakern_cpu::fail(cudaErrorInvalidResourceHandle, "invalid resource handle");
    delete e;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, void *stream = nullptr) {
    (void)stream;
    e->at = std::chrono::steady_clock::now();
    e->recorded = true;
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    return e->recorded ? cudaSuccess : parakern_cpu::fail(cudaErrorInvalidResourceHandle, "event not recorded");
}
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop) {
    if (!start->recorded || !stop->recorded)
        return parakern_cpu::fail(cudaErrorInvalidResourceHandle, "event not recorded");
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    if (parakern_cpu::elapsed_hook)
        *ms = parakern_cpu::elapsed_hook(*ms);
    return cudaSuccess;
}
inline const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    }
    return "unknown error";
}

/* ---- for the driver: the emulated device */
inline void parakern_cpu_set_device(int regsPerBlock, size_t sharedMemPerBlockOptin, int maxThreadsPerBlock,
                                    size_t sharedMemPerBlock = 48 * 1024) {
    cudaDeviceProp &d = parakern_cpu::device;
    d = parakern_cpu::profile;
    ++parakern_cpu::device_number;
    d.regsPerBlock = regsPerBlock;
    d.regsPerMultiprocessor = regsPerBlock > 65536 ? regsPerBlock : 65536;
    d.sharedMemPerBlockOptin = sharedMemPerBlockOptin;
    d.sharedMemPerBlock = sharedMemPerBlock < sharedMemPerBlockOptin ? sharedMemPerBlock : sharedMemPerBlockOptin;
    d.sharedMemPerMultiprocessor = sharedMemPerBlockOptin + d.reservedSharedMemPerBlock;
    d.maxThreadsPerBlock = maxThreadsPerBlock;
    d.maxThreadsDim[0] = d.maxThreadsDim[1] = maxThreadsPerBlock;
    d.maxThreadsDim[2] = maxThreadsPerBlock < 64 ? maxThreadsPerBlock : 64;
    for (auto &k : parakern_cpu::kernels) k.second.maxDynamicShared = -1;  /* raised for the previous device */
    parakern_cpu::last_error = cudaSuccess;
    parakern_cpu::last_message.clear();
}
inline void parakern_cpu_set_registers(const void *kernel, int numRegs) {
    parakern_cpu::kernels[kernel].numRegs = numRegs;
    ++parakern_cpu::device_number;   /* another kernel image: what a dispatcher cached is stale */
}

inline long parakern_cpu_attribute_queries(void) { return parakern_cpu::attribute_queries; }

/* The order the next launches run blocks and threads in (parakern_cpu::order_seed; 0: the default). */
inline void parakern_cpu_set_order(unsigned long long seed) { parakern_cpu::order_seed = seed; }

/* The GPU the next parakern_cpu_set_device emulates, beside the limits that call sets. */
inline void parakern_cpu_set_profile(int sms, int major, int minor, int threadsPerSM, int blocksPerSM,
                                     size_t reservedSharedPerBlock, int clockKHz, int memoryClockKHz,
                                     int busWidthBits, int l2Bytes = 0) {
    cudaDeviceProp &p = parakern_cpu::profile;
    p = parakern_cpu::default_device();
    p.multiProcessorCount = sms; p.major = major; p.minor = minor;
    p.maxThreadsPerMultiProcessor = threadsPerSM; p.maxBlocksPerMultiProcessor = blocksPerSM;
    p.reservedSharedMemPerBlock = reservedSharedPerBlock;
    p.l2CacheSize = l2Bytes;
    parakern_cpu::speeds.clock_khz = clockKHz;
    parakern_cpu::speeds.memory_khz = memoryClockKHz;
    parakern_cpu::speeds.bus_bits = busWidthBits;
}

inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
    if (device != parakern_cpu::device_number) return parakern_cpu::fail(cudaErrorInvalidValue, "no such device");
    switch (attr) {
    case cudaDevAttrClockRate: *value = parakern_cpu::speeds.clock_khz; return cudaSuccess;
    case cudaDevAttrMemoryClockRate: *value = parakern_cpu::speeds.memory_khz; return cudaSuccess;
    case cudaDevAttrGlobalMemoryBusWidth: *value = parakern_cpu::speeds.bus_bits; return cudaSuccess;
    }
    return parakern_cpu::fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute not emulated");
}

/* Blocks resident per SM, as counters/occupancy.py's occupancy_detail computes them. */
template <class F> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, F *kernel, int threads,
                                                                             size_t shared) {
    const cudaDeviceProp &d = parakern_cpu::device;
    const int regs = parakern_cpu::kernels[(const void *)kernel].numRegs;
    if (threads <= 0) return parakern_cpu::fail(cudaErrorInvalidValue, "cudaOccupancy: no threads");
    auto up = [](long a, long b) { return (a + b - 1) / b * b; };
    const long warps = (threads + d.warpSize - 1) / d.warpSize;
    long best = threads > d.maxThreadsPerBlock ? 0 : (d.maxThreadsPerMultiProcessor / d.warpSize) / warps;
    const long per_warp = up((long)regs * d.warpSize, 256);
    if (regs > 255 || per_warp * up(warps, 4) > d.regsPerBlock) best = 0;
    else if (per_warp > 0) best = std::min(best, ((d.regsPerMultiprocessor / 4) / per_warp) * 4 / warps);
    const long per_block = up((long)shared + (long)d.reservedSharedMemPerBlock, d.major >= 8 ? 128 : 256);
    if (shared > d.sharedMemPerBlockOptin) best = 0;
    else if (per_block > 0) best = std::min(best, (long)d.sharedMemPerMultiprocessor / per_block);
    *blocks = (int)std::min(best, (long)d.maxBlocksPerMultiProcessor);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ atomics */
/* CUDA's atomic functions that generated kernels call (parakern/analysis/updates.py), with
 * CUDA's overloads; each returns the element's old value. The threads of a block are fibers
 * of the launching OS thread that switch only in __syncthreads (Block::run and Block::sync
 * above: swapcontext nowhere else) and blocks run one after another, so no other thread of
 * the launch can run between an update's read and its write. The GCC builtins make each
 * update one indivisible step all the same, whichever OS thread runs it (a dispatcher may be
 * called from several host threads). */
namespace parakern_cpu {
template <class T, class F> inline T atomic_update(T *address, F next) {
    T old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    T value;
    do {
        value = next(old);
    } while (!__atomic_compare_exchange(address, &old, &value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
template <class T> inline T atomic_add(T *address, T v) { return __atomic_fetch_add(address, v, __ATOMIC_RELAXED); }
template <class T> inline T atomic_sub(T *address, T v) { return __atomic_fetch_sub(address, v, __ATOMIC_RELAXED); }
template <class T> inline T atomic_max(T *address, T v) { return atomic_update(address, [v](T x) { return x < v ? v : x; }); }
template <class T> inline T atomic_min(T *address, T v) { return atomic_update(address, [v](T x) { return v < x ? v : x; }); }
}  // namespace parakern_cpu

inline int atomicAdd(int *address, int v) { return parakern_cpu::atomic_add(address, v); }
inline unsigned int atomicAdd(unsigned int *address, unsigned int v) { return parakern_cpu::atomic_add(address, v); }
inline unsigned long long atomicAdd(unsigned long long *address, unsigned long long v) {
    return parakern_cpu::atomic_add(address, v);
}
inline float atomicAdd(float *address, float v) {
    return parakern_cpu::atomic_update(address, [v](float x) { return x + v; });
}
inline double atomicAdd(double *address, double v) {   /* sm_60 and later on a GPU */
    return parakern_cpu::atomic_update(address, [v](double x) { return x + v; });
}
inline int atomicSub(int *address, int v) { return parakern_cpu::atomic_sub(address, v); }
inline unsigned int atomicSub(unsigned int *address, unsigned int v) { return parakern_cpu::atomic_sub(address, v); }
inline int atomicMax(int *address, int v) { return parakern_cpu::atomic_max(address, v); }
inline unsigned int atomicMax(unsigned int *address, unsigned int v) { return parakern_cpu::atomic_max(address, v); }
inline long long atomicMax(long long *address, long long v) { return parakern_cpu::atomic_max(address, v); }
inline unsigned long long atomicMax(unsigned long long *address, unsigned long long v) {
    return parakern_cpu::atomic_max(address, v);
}
inline int atomicMin(int *address, int v) { return parakern_cpu::atomic_min(address, v); }
inline unsigned int atomicMin(unsigned int *address, unsigned int v) { return parakern_cpu::atomic_min(address, v); }
inline long long atomicMin(long long *address, long long v) { return parakern_cpu::atomic_min(address, v); }
inline unsigned long long atomicMin(unsigned long long *address, unsigned long long v) {
    return parakern_cpu::atomic_min(address, v);
}

#endif /* PARAKERN_CPU_H */
