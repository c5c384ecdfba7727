/* parakern_race.h -- data races found by execution: shadow memory of every array element.
 *
 *   g++ -std=c++17 -include parakern_cpu.h -include parakern_race.h kernels.cu ...
 *
 * Kernels printed with tracing (codegen/trace.py) reference every array element as
 * PARAKERN_AT(site, instance, array, index) (global memory), PARAKERN_AT_SHARED(site, instance,
 * part, index) (shared memory) or PARAKERN_AT_ATOMIC(site, instance, array, index) (an element an
 * atomic function updates: a real lvalue, whose address the atomic takes). Here each reference
 * notes, in a shadow cell of the element (keyed by its address), which thread made it: a read,
 * a plain write or an atomic update, with its site and the line of the .cu it is on.
 *
 * Two accesses of one element by different threads race when one of them is a plain write, or
 * one is atomic and the other plain, and nothing orders them: in one block, a barrier interval
 * (Block::phase of parakern_cpu.h) is the unit; global memory has no barrier between the blocks
 * of a launch, so there the whole launch is one interval. Launches are ordered. Per cell and
 * kind of access the first two distinct blocks (global memory) and the first two distinct
 * threads of the running block's current interval are kept (one of each for plain writes: a
 * second one races at once): an access conflicting with any earlier one meets at least one of
 * them, so every race of the run is found whatever the order the emulation ran the threads in
 * (each racing element counted once, the first race described).
 *
 * parakern_race::enabled turns the notes off (the references stay as plain as they are).
 * parakern_race::report() is the first race as one JSON object ("" when none), count() the
 * elements found racing; reset() forgets both and the shadow memory.
 */
#ifndef PARAKERN_RACE_H
#define PARAKERN_RACE_H

#include <stdint.h>
#include <stdio.h>

#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace parakern_race {

enum Kind : unsigned char { READ = 0, WRITE = 1, ATOMIC = 2 };
inline const char *const KIND_NAMES[] = {"read", "write", "atomic"};
/* CONFLICT[a][b]: an access of kind a races with one of kind b by another unordered thread */
constexpr bool CONFLICT[3][3] = {{false, true, true}, {true, true, true}, {true, true, false}};

/* where a reference is in the source: its site (codegen/trace.py) and the .cu line, interned
   once per reference (a static of its own) so that a shadow cell keeps 16 bits of it */
struct Where { int site, line; const char *name; };
inline std::vector<Where> &places() { static std::vector<Where> table; return table; }
inline uint16_t intern(int site, int line, const char *name) {
    places().push_back(Where{site, line, name});
    return (uint16_t)(places().size() - 1 < 0xFFFF ? places().size() - 1 : 0xFFFF);
}

constexpr uint16_t NONE = 0xFFFF;
struct ByBlock { int32_t block = -1; uint16_t thread = NONE, where = NONE; };
struct ByThread { uint16_t thread = NONE, where = NONE; };

/* Slots per kind: two for reads and atomics (neither conflicts with its own kind, so any number
   of blocks or threads may make them: a later conflicting access must meet one of another
   block or thread), one for plain writes (a second writer races at once). */
constexpr int SLOT[3] = {0, 2, 3}, SLOTS[3] = {2, 1, 2};

struct Cell {
    uint32_t launch = 0;          /* parakern_cpu::launches when the cell was last set (from 1) */
    int32_t here_block = -1;      /* the block and interval `here` holds threads of */
    uint32_t here_phase = 0;
    bool raced = false;           /* counted already */
    ByBlock blocks[5];            /* global memory: the first blocks of each kind in the launch */
    ByThread here[5];             /* the first threads of each kind in that block and interval */
};

/* The shadow memory: pages of PAGE_CELLS cells, one per element of one size (1, 2, 4, 8 or 16
   bytes) at consecutive addresses, made when first touched; a small direct-mapped cache of
   pages keeps the lookup of most references to a compare. */
constexpr uint64_t PAGE_CELLS = 1024;
struct Page { Cell cells[PAGE_CELLS]; };
struct Cached { uint64_t key = ~0ull; Page *page = nullptr; };
inline std::unordered_map<uint64_t, std::unique_ptr<Page>> pages;
inline Cached recent[64];

inline Cell &cell_of(const void *address, size_t size) {
    const uint64_t unit = (uint64_t)(uintptr_t)address / size;
    const uint64_t key = (unit / PAGE_CELLS) << 5 | (uint64_t)size;
    Cached &hit = recent[(key >> 5 ^ key) & 63];
    if (hit.key != key) {
        std::unique_ptr<Page> &page = pages[key];
        if (!page) page.reset(new Page());
        hit = Cached{key, page.get()};
    }
    return hit.page->cells[unit % PAGE_CELLS];
}

inline bool enabled = true;
inline long raced = 0;            /* elements found racing */
inline std::string first;         /* the first race, as JSON */

inline void reset() {
    pages.clear();
    for (Cached &c : recent) c = Cached();
    raced = 0;
    first.clear();
}

inline const char *report() { return first.c_str(); }
inline long count() { return raced; }

inline std::string quoted(const char *s) {
    std::string out = "\"";
    for (; s && *s; ++s) {
        if (*s == '"' || *s == '\\') out += '\\';
        if ((unsigned char)*s >= 0x20) out += *s;
    }
    return out + "\"";
}

inline std::string coords(long linear, dim3 d) {
    char text[64];
    snprintf(text, sizeof text, "[%ld, %ld, %ld]", linear % (long)d.x, linear / (long)d.x % (long)d.y,
             linear / ((long)d.x * d.y));
    return text;
}

inline std::string access_json(long block, long thread, int kind, uint16_t where) {
    const Where w = where < places().size() ? places()[where] : Where{0, 0, ""};
    char text[96];
    snprintf(text, sizeof text, ", \"kind\": \"%s\", \"site\": %d, \"line\": %d}", KIND_NAMES[kind], w.site, w.line);
    return "{\"block\": " + coords(block, gridDim) + ", \"thread\": " + coords(thread, blockDim) + text;
}

inline void found(Cell &cell, bool shared, const char *name, long long index, long other_block, long other_thread,
                  int other_kind, uint16_t other_where, long block, long thread, int kind, uint16_t where) {
    if (cell.raced) return;
    cell.raced = true;
    ++raced;
    if (!first.empty()) return;
    char head[160];
    snprintf(head, sizeof head, "{\"array\": %s, \"index\": %lld, \"shared\": %s, \"interval\": \"%s\", \"launch\": %ld, ",
             quoted(name).c_str(), index, shared ? "true" : "false", other_block == block ? "barrier" : "launch",
             parakern_cpu::launches);
    first = head + std::string("\"first\": ") + access_json(other_block, other_thread, other_kind, other_where)
            + ", \"second\": " + access_json(block, thread, kind, where) + "}";
}

inline void note(const void *address, size_t size, bool shared, Kind kind, uint16_t where, const char *name,
                 long long index) {
    if (!enabled) return;
    parakern_cpu::Block *running = parakern_cpu::current;
    if (running == nullptr) return;
    const uint32_t launch = (uint32_t)parakern_cpu::launches;
    const int32_t block = (int32_t)running->number;
    const uint16_t thread = (uint16_t)running->running;
    const uint32_t phase = running->phase;
    /* an element of the block's dynamic shared memory, whatever pointer reached it */
    shared = shared || ((const unsigned char *)address >= running->shared
                        && (const unsigned char *)address < running->shared + running->shared_size);
    Cell &cell = cell_of(address, size);
    if (cell.launch != launch) {
        cell = Cell();
        cell.launch = launch;
    }
    if (cell.here_block != block || cell.here_phase != phase) {   /* a barrier or another block orders them */
        for (ByThread &slot : cell.here) slot = ByThread();
        cell.here_block = block;
        cell.here_phase = phase;
    }
    ByThread *mine = cell.here + SLOT[kind];
    ByBlock *ours = cell.blocks + SLOT[kind];
    const bool noted = mine[0].thread == thread || (SLOTS[kind] > 1 && mine[1].thread == thread);
    if (noted && (shared || ours[0].block == block || (SLOTS[kind] > 1 && ours[1].block == block)))
        return;   /* as this thread's earlier access of this kind: every race it has was found then */
    for (int other = 0; other < 3; ++other) {
        if (!CONFLICT[kind][other]) continue;
        for (int s = SLOT[other]; s < SLOT[other] + SLOTS[other]; ++s) {
            const ByBlock &b = cell.blocks[s];
            if (!shared && b.block >= 0 && b.block != block)
                found(cell, shared, name, index, b.block, b.thread, other, b.where, block, thread, kind, where);
            const ByThread &t = cell.here[s];
            if (t.thread != NONE && t.thread != thread)
                found(cell, shared, name, index, block, t.thread, other, t.where, block, thread, kind, where);
        }
    }
    if (!shared) {
        if (ours[0].block < 0) ours[0] = ByBlock{block, thread, where};
        else if (SLOTS[kind] > 1 && ours[0].block != block && ours[1].block < 0) ours[1] = ByBlock{block, thread, where};
    }
    if (mine[0].thread == NONE) mine[0] = ByThread{thread, where};
    else if (SLOTS[kind] > 1 && mine[0].thread != thread && mine[1].thread == NONE) mine[1] = ByThread{thread, where};
}

/* An element reference: reads and writes through it are noted, then made. */
template <bool Shared, class T> struct Ref {
    using V = std::remove_const_t<T>;
    T *element; uint16_t where; const char *name; long long index;
    V get() const { note(element, sizeof(T), Shared, READ, where, name, index); return *element; }
    void put(V v) const { note(element, sizeof(T), Shared, WRITE, where, name, index); *const_cast<V *>(element) = v; }
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

template <bool Shared, class T> Ref<Shared, T> at(uint16_t where, T *start, long long index, const char *name) {
    return Ref<Shared, T>{start + index, where, name, index};
}

/* an element an atomic function updates: noted as atomic, then the element itself */
template <class T> T &atomic_at(uint16_t where, T *start, long long index, const char *name) {
    note(start + index, sizeof(T), false, ATOMIC, where, name, index);
    return start[index];
}

}  // namespace parakern_race

/* `instance` (which execution: traffic counting's) is not needed here and not evaluated */
#define PARAKERN_RACE_WHERE(site, a) \
    ([&] { static const uint16_t where = parakern_race::intern((site), __LINE__, #a); return where; }())
#define PARAKERN_AT(site, instance, a, i) \
    parakern_race::at<false>(PARAKERN_RACE_WHERE(site, a), (a), (long long)(i), #a)
#define PARAKERN_AT_SHARED(site, instance, a, i) \
    parakern_race::at<true>(PARAKERN_RACE_WHERE(site, a), (a), (long long)(i), #a)
#ifndef PARAKERN_AT_ATOMIC
#define PARAKERN_AT_ATOMIC(site, instance, a, i) \
    parakern_race::atomic_at(PARAKERN_RACE_WHERE(site, a), (a), (long long)(i), #a)
#endif

#endif /* PARAKERN_RACE_H */
