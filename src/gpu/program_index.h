// program_index.h — the GPU modules' index of programs by signature (a
// string naming the context or architecture, the kind and the dtypes), so
// a program's source is generated once per signature; the programs
// themselves belong to the module's own cache (by source).
#ifndef CTENSOR_SRC_GPU_PROGRAM_INDEX_H_
#define CTENSOR_SRC_GPU_PROGRAM_INDEX_H_

#include <ctensor/plugin.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace ctgpu {

template <class Program>
class ProgramIndex {
 public:
  // The program of `key`: indexed, else build(source of gen(&label), label, &program).
  template <class Gen, class Build>
  CTStatus get(const std::string& key, Gen gen, Build build, Program** prog) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        *prog = it->second;
        return CT_OK;
      }
    }
    std::string label;
    const std::string src = gen(&label);
    if (CTStatus s = build(src, label, prog)) return s;
    std::lock_guard<std::mutex> lock(mu_);
    map_[key] = *prog;
    return CT_OK;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Program*> map_;
};

// A signature's key: prefix (context or architecture), family, the input dtypes, the output dtype.
inline std::string signature_key(const std::string& prefix, const char* family, const int32_t* dts, int n,
                                 int32_t out_dt) {
  std::string k = prefix + family;
  for (int i = 0; i < n; ++i) k += "," + std::to_string(dts[i]);
  return k + ">" + std::to_string(out_dt);
}

}  // namespace ctgpu

#endif  // CTENSOR_SRC_GPU_PROGRAM_INDEX_H_
