/*
 * loopback.h — a test backend built against <ctensor/plugin.h> only: the
 * gate that proves the waist holds. It registers device type CT_EXT_DEV
 * (DLPack's kDLExtDev) with two devices, "loopback:0" and "loopback:1",
 * whose memory is host memory behind its own allocator, stored encoded (every
 * byte XORed with a per-device key) and declared not host-accessible: a value
 * reaches or leaves it only through the backend's own copy slot, so anything
 * that read or wrote it behind the backend's back would see garbage.
 *
 * Kernels (plain strided loops, nothing from the CPU backend):
 *   unary neg, abs, exp, relu         float32, float64
 *   cast                              every pair of the dtypes
 *   binary add, mul, maximum, less    float32, float64
 *   reduce sum, max                   float32, float64
 *   along-axis softmax                float32, float64
 * Everything else is refused by supports() with a message naming the
 * backend, the op and the dtype.
 *
 * CT_LOOPBACK_PERTURB=<op name> in the environment at registration makes that
 * op's kernel write a wrong first element (the tool's tests show that
 * `ctensor check` catches a broken plugin kernel).
 *
 * C99 interface; the implementation is C11 (atomics) and includes only
 * <ctensor/plugin.h> and the C standard library.
 */
#ifndef CT_LOOPBACK_H_
#define CT_LOOPBACK_H_

#include <ctensor/plugin.h>

#if defined(__GNUC__) || defined(__clang__)
#define CT_LOOPBACK_API __attribute__((visibility("default")))
#else
#define CT_LOOPBACK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Devices of the loopback device type. */
#define CT_LOOPBACK_DEVICES 2

/** The first field of a CTLoopbackStream. */
#define CT_LOOPBACK_STREAM_MAGIC 0x4C4F4F50u /* "LOOP" */

/** The loopback's stream: pass a pointer to one (magic set, device_id the
 *  device it belongs to) as any op's stream argument on a loopback device.
 *  Work on it is synchronous; ops counts the kernels and copies it ran. */
typedef struct {
  uint32_t magic;    /**< CT_LOOPBACK_STREAM_MAGIC */
  int32_t device_id; /**< 0 or 1 */
  uint64_t ops;      /**< out: kernels and copies run on this stream */
} CTLoopbackStream;

/** What the backend has seen since it was loaded. */
typedef struct {
  int64_t live;           /**< allocations not yet freed (malloc slot and default allocator) */
  int64_t mallocs;        /**< allocations through the malloc slot (ct_malloc) */
  int64_t temp_allocs;    /**< allocations through default_allocator (core's temp_alloc) */
  int64_t frees;          /**< frees of either kind */
  int64_t bad_frees;      /**< frees of a pointer this backend did not hand out, or with a broken canary */
  int64_t copies;         /**< calls of the copy slot */
  int64_t kernels;        /**< kernel calls (elementwise, binary, reduce, along_axis) */
  int64_t synchronizes;   /**< calls of the synchronize slot */
} CTLoopbackStats;

/** Registers the loopback device type and its kernels through
 *  host->register_backend. A second call is refused by the host. */
CT_LOOPBACK_API CTStatus ct_loopback_register(const CTHost* host);

/** The plugin entry point (plugin.h) that ct_library_load calls: fills
 *  info, then ct_loopback_register. */
CT_LOOPBACK_API CTStatus ct_plugin_init(const CTHost* host, uint32_t host_version, CTPluginInfo* info);

/** A snapshot of the counters. */
CT_LOOPBACK_API void ct_loopback_stats(CTLoopbackStats* stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CT_LOOPBACK_H_ */
