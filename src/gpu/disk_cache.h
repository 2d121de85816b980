// disk_cache.h — the compiled-kernel cache both GPU modules keep on disk, so
// that a second process compiles nothing: one file per program, named by a
// hash of everything the binary depends on (device, driver, compiler
// options, source), holding a magic, the hash again, and the binary.
#ifndef CTENSOR_SRC_GPU_DISK_CACHE_H_
#define CTENSOR_SRC_GPU_DISK_CACHE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ctgpu {

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull);

// The cache's folder for a module: $<env> ("off": no disk cache), else
// $XDG_CACHE_HOME/ctensor/<sub>, else ~/.cache/ctensor/<sub>; "" for none.
std::string cache_dir(const char* env, const char* sub);

// "<dir>/<16 hex digits of key><ext>" ("" when dir is "").
std::string cache_path(const std::string& dir, uint64_t key, const char* ext);

// The binary stored under key at path; empty when absent, foreign or torn.
std::vector<unsigned char> read_cached(const std::string& path, uint64_t key);

// Stores bin under key at path (creating dir): written to a temporary name
// and renamed, so a concurrent reader sees the whole file or none. Best
// effort: a failure leaves no file.
void write_cached(const std::string& dir, const std::string& path, uint64_t key, const std::vector<unsigned char>& bin);

// Writes text to path (creating dir); false on failure. For the sources the
// modules write beside their binaries when asked to be verbose.
bool write_text(const std::string& dir, const std::string& path, const std::string& text);

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_DISK_CACHE_H_
