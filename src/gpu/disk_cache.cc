// disk_cache.cc — see disk_cache.h.
#include "disk_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ctgpu {
namespace {

const char kMagic[8] = {'C', 'T', 'G', 'P', 'U', 'B', 'N', '1'};

void make_dirs(const std::string& path) {
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/') mkdir(path.substr(0, at).c_str(), 0755);
}

}  // namespace

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_dir(const char* env, const char* sub) {
  if (const char* e = std::getenv(env)) return std::strcmp(e, "off") == 0 ? "" : e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ctensor/" + sub;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/ctensor/" + sub;
  return "";
}

std::string cache_path(const std::string& dir, uint64_t key, const char* ext) {
  if (dir.empty()) return "";
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)key);
  return dir + "/" + hex + ext;
}

std::vector<unsigned char> read_cached(const std::string& path, uint64_t key) {
  std::vector<unsigned char> bin;
  FILE* f = path.empty() ? nullptr : std::fopen(path.c_str(), "rb");
  if (!f) return bin;
  char magic[8];
  uint64_t k = 0;
  if (std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0 && std::fread(&k, 8, 1, f) == 1 &&
      k == key) {
    unsigned char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bin.insert(bin.end(), buf, buf + n);
  }
  std::fclose(f);
  return bin;
}

void write_cached(const std::string& dir, const std::string& path, uint64_t key, const std::vector<unsigned char>& bin) {
  if (path.empty()) return;
  make_dirs(dir);
  const std::string tmp = path + ".tmp." + std::to_string((long)getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return;
  bool ok = std::fwrite(kMagic, 1, 8, f) == 8 && std::fwrite(&key, 8, 1, f) == 1 &&
            std::fwrite(bin.data(), 1, bin.size(), f) == bin.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

bool write_text(const std::string& dir, const std::string& path, const std::string& text) {
  make_dirs(dir);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return (std::fclose(f) == 0) && ok;
}

}  // namespace ctgpu
