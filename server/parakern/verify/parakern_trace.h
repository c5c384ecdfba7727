/* parakern_trace.h -- memory requests of emulated kernels, counted the way a GPU serves them.
 *
 *   g++ -std=c++17 -include parakern_cpu.h -include parakern_trace.h traced.cu ...
 *
 * Kernels printed with tracing (codegen/trace.py) reference every array element as
 * PARAKERN_AT(site, instance, array, index) (global memory) or
 * PARAKERN_AT_SHARED(site, instance, part, index) (shared memory), `site` naming the access
 * (or the staging copy) it comes from and `instance` its execution (the values of the loops
 * around it, mixed); an element an atomic function updates as
 * PARAKERN_AT_ATOMIC(site, instance, array, index), the element itself (an lvalue whose
 * address the atomic takes). An atomic is served in L2, which reads each sector the warp's
 * lanes update and writes it back: it counts as a read and a write of those sectors, as the
 * plain `h[k] += v` it replaces does (analysis/traffic.py counts both alike). Each reference notes its byte address; the references of one warp (32
 * consecutive linear thread ids of a block) to one site in one instance form one warp
 * request, as on a GPU where the warp executes the instruction together, lanes that skip it
 * (a guard) left out. A global request costs its distinct 32-byte sectors, a shared one
 * the most distinct 4-byte words in one of the 32 banks (wavefronts); both as
 * parakern/analysis/warps.py counts them, so the static figures can be checked against these.
 *
 * Addresses of global arrays are counted from the start of the array as registered with
 * parakern_trace::array (an array starts on a sector boundary, as cudaMalloc's do); an
 * element outside it is counted but neither read nor written. Per block, the distinct
 * elements read and written give the block's minimum traffic. parakern_trace::finish(out)
 * prints one JSON object with the totals per site and clears them.
 */
#ifndef PARAKERN_TRACE_H
#define PARAKERN_TRACE_H

#include <stdio.h>

#include <map>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace parakern_trace {

struct Totals {           /* per site and kind (read / write) */
    double requests = 0, cost = 0, ideal = 0;          /* every request */
    double full = 0, full_cost = 0, full_ideal = 0;    /* requests of every lane of their warp */
    double events = 0;                                 /* element references, lanes summed */
};

struct Group { int lanes = 0; int size = 0; bool shared = false; std::vector<long long> addresses; };

struct Key {
    int warp, site, write; long long instance;
    bool operator==(const Key &o) const {
        return warp == o.warp && site == o.site && write == o.write && instance == o.instance;
    }
};
struct KeyHash {
    size_t operator()(const Key &k) const {
        return ((size_t)k.instance * 1000003u) ^ ((size_t)k.site * 8191u) ^ ((size_t)k.warp * 31u) ^ (size_t)k.write;
    }
};

struct Both { Totals kind[2]; };
inline std::map<int, Both> sites;
inline std::unordered_map<Key, Group, KeyHash> groups;          /* the running block's requests */
inline std::unordered_map<long long, long long> executed;       /* (thread, site, write) -> times */
inline std::set<std::pair<const void *, long long>> read_elements, written_elements;
inline std::map<const void *, long long> arrays;                /* start -> elements */
inline long long block = -1, blocks = 0, threads = 0;
inline double minimum_bytes = 0;                                /* summed over blocks */

inline void array(const void *start, long long elements) { arrays[start] = elements; }

inline long long sectors(const Group &g) {
    std::set<long long> s;
    for (long long a : g.addresses) s.insert(a / 32);
    return (long long)s.size();
}

inline long long ideal_sectors(const Group &g) {
    std::set<long long> s(g.addresses.begin(), g.addresses.end());
    long long n = ((long long)s.size() * g.size + 31) / 32;
    return n < 1 ? 1 : n;
}

inline long long wavefronts(const Group &g, bool ideal) {
    std::set<long long> words;
    for (long long a : g.addresses)
        for (long long w = a / 4; w <= (a + g.size - 1) / 4; ++w) words.insert(w);
    if (ideal) { long long n = ((long long)words.size() + 31) / 32; return n < 1 ? 1 : n; }
    std::map<long long, int> per_bank;
    int most = 1;
    for (long long w : words) { int n = ++per_bank[w % 32]; if (n > most) most = n; }
    return most;
}

inline void flush_block() {
    if (block < 0) return;
    long long per_block = (long long)blockDim.x * blockDim.y * blockDim.z;
    for (auto &entry : groups) {
        const Key &k = entry.first;
        const Group &g = entry.second;
        long long lanes_of_warp = per_block - 32LL * k.warp < 32 ? per_block - 32LL * k.warp : 32;
        double cost = g.shared ? wavefronts(g, false) : sectors(g);
        double ideal = g.shared ? wavefronts(g, true) : ideal_sectors(g);
        Totals &t = sites[k.site].kind[k.write];
        t.requests += 1; t.cost += cost; t.ideal += ideal; t.events += g.lanes;
        if (g.lanes == lanes_of_warp) { t.full += 1; t.full_cost += cost; t.full_ideal += ideal; }
    }
    groups.clear();
    executed.clear();
    read_elements.clear();
    written_elements.clear();
    block = -1;
}

inline void note(int site, long long instance, bool shared, bool write, long long address, int size,
                 const void *array_start, long long element) {
    long long b = (long long)blockIdx.x + (long long)gridDim.x * ((long long)blockIdx.y + (long long)gridDim.y * blockIdx.z);
    if (b != block) {
        flush_block();
        block = b;
        blocks += 1;
        threads += (long long)blockDim.x * blockDim.y * blockDim.z;
    }
    long long tid = threadIdx.x + (long long)blockDim.x * (threadIdx.y + (long long)blockDim.y * threadIdx.z);
    /* the n-th reference with this instance: a statement that reads one element twice */
    long long &n = executed[(long long)((unsigned long long)instance * 1000003ull + (unsigned long long)((tid * 65536 + site) * 2 + write))];
    Group &g = groups[Key{(int)(tid / 32), site, write ? 1 : 0, instance * 64 + n++}];
    g.lanes += 1; g.size = size; g.shared = shared;
    g.addresses.push_back(address);
    if (!shared) {
        auto &set = write ? written_elements : read_elements;
        if (set.insert({array_start, element}).second) minimum_bytes += size;
    }
}

template <bool Shared, class T> struct Ref {
    using V = std::remove_const_t<T>;
    T *start; long long index; int site; bool inside; long long instance;
    long long address() const {
        if (Shared) return (long long)((const unsigned char *)(start + index) - parakern_cpu::shared_memory());
        return index * (long long)sizeof(T);
    }
    V get() const {
        note(site, instance, Shared, false, address(), (int)sizeof(T), start, index);
        return inside ? start[index] : V();
    }
    void put(V v) const {
        note(site, instance, Shared, true, address(), (int)sizeof(T), start, index);
        if (inside) const_cast<V *>(start)[index] = v;
    }
    operator V() const { return get(); }
    Ref &operator=(V v) { put(v); return *this; }
    Ref &operator=(const Ref &o) { put(o.get()); return *this; }
    template <class U> Ref &operator+=(U v) { put(get() + v); return *this; }
    template <class U> Ref &operator-=(U v) { put(get() - v); return *this; }
    template <class U> Ref &operator*=(U v) { put(get() * v); return *this; }
    template <class U> Ref &operator/=(U v) { put(get() / v); return *this; }
    template <class U> Ref &operator%=(U v) { put(get() % v); return *this; }
    template <class U> Ref &operator<<=(U v) { put(get() << v); return *this; }
    template <class U> Ref &operator>>=(U v) { put(get() >> v); return *this; }
    template <class U> Ref &operator&=(U v) { put(get() & v); return *this; }
    template <class U> Ref &operator|=(U v) { put(get() | v); return *this; }
    template <class U> Ref &operator^=(U v) { put(get() ^ v); return *this; }
};

/* The element an atomic function updates: noted as read and written, then the element itself
   (outside its array: a scratch element, counted but not touched, as Ref does). */
template <class T> T &atomic_at(int site, long long instance, T *start, long long index) {
    auto found = arrays.find((const void *)start);
    bool inside = found != arrays.end() && 0 <= index && index < found->second;
    note(site, instance, false, false, index * (long long)sizeof(T), (int)sizeof(T), start, index);
    note(site, instance, false, true, index * (long long)sizeof(T), (int)sizeof(T), start, index);
    static thread_local std::remove_const_t<T> scratch;
    if (!inside) { scratch = {}; return scratch; }
    return start[index];
}

/* Which execution of a site: the values of the loops around it, mixed into one number. */
inline long long mix() { return 0; }
template <class... R> long long mix(long long first, R... rest) {
    return (long long)((unsigned long long)first * 0x9E3779B97F4A7C15ull + (unsigned long long)mix(rest...) * 31ull);
}

template <bool Shared, class T> Ref<Shared, T> at(int site, long long instance, T *start, long long index) {
    bool inside = true;
    if (!Shared) {
        auto found = arrays.find((const void *)start);
        inside = found != arrays.end() && 0 <= index && index < found->second;
    }
    return Ref<Shared, T>{start, index, site, inside, instance};
}

/* Prints the totals since the last finish as one JSON line and clears them. */
inline void finish(FILE *out, int label) {
    flush_block();
    fprintf(out, "{\"label\": %d, \"blocks\": %lld, \"threads\": %lld, \"minimum_bytes\": %.17g, \"sites\": {",
            label, blocks, threads, minimum_bytes);
    bool first = true;
    for (auto &entry : sites) {
        for (int w = 0; w < 2; ++w) {
            const Totals &t = entry.second.kind[w];
            if (t.requests == 0) continue;
            fprintf(out, "%s\"%d:%s\": {\"requests\": %.17g, \"cost\": %.17g, \"ideal\": %.17g, \"full\": %.17g, "
                    "\"full_cost\": %.17g, \"full_ideal\": %.17g, \"events\": %.17g}",
                    first ? "" : ", ", entry.first, w ? "write" : "read", t.requests, t.cost, t.ideal, t.full,
                    t.full_cost, t.full_ideal, t.events);
            first = false;
        }
    }
    fprintf(out, "}}\n");
    fflush(out);
    sites.clear();
    blocks = threads = 0;
    minimum_bytes = 0;
}

}  // namespace parakern_trace

#define PARAKERN_AT(site, instance, a, i) parakern_trace::at<false>((site), (long long)(instance), (a), (long long)(i))
#define PARAKERN_AT_SHARED(site, instance, a, i) parakern_trace::at<true>((site), (long long)(instance), (a), (long long)(i))
#ifndef PARAKERN_AT_ATOMIC   /* verify's race detection may define its own */
#define PARAKERN_AT_ATOMIC(site, instance, a, i) \
    parakern_trace::atomic_at((site), (long long)(instance), (a), (long long)(i))
#endif

#endif /* PARAKERN_TRACE_H */
