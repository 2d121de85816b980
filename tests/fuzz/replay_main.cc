// replay_main.cc — runs a fuzz harness's LLVMFuzzerTestOneInput over files,
// without libFuzzer: what ctest does with the checked-in corpus in every
// build (GCC included). Arguments are files or directories (their regular
// files, in name order, not recursively). Exits 1 when it found no input.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> files_of(const std::string& path) {
  if (!is_dir(path)) return {path};
  std::vector<std::string> out;
  if (DIR* d = opendir(path.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string f = path + "/" + e->d_name;
      struct stat st;
      if (e->d_name[0] != '.' && stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(f);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool read_file(const std::string& path, std::vector<uint8_t>* data) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[4096];
  size_t n;
  data->clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data->insert(data->end(), buf, buf + n);
  std::fclose(f);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  size_t runs = 0;
  std::vector<uint8_t> data;
  for (int i = 1; i < argc; ++i)
    for (const std::string& f : files_of(argv[i])) {
      if (!read_file(f, &data)) {
        std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
        return 1;
      }
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), data.size());
      // A copy of exactly the input's size, so reads past its end are caught under ASan.
      std::vector<uint8_t> exact(data);
      LLVMFuzzerTestOneInput(exact.data(), exact.size());
      ++runs;
    }
  std::printf("replay: %zu inputs ran\n", runs);
  return runs ? 0 : 1;
}
