/*
 * module_autoload.c — the library loads plugins by itself at first use: the
 * modules (libctensor_<name>.so in CT_MODULE_DIR here; libctensor's folder
 * by default) and the paths of CT_PLUGIN_PATH; what does not load is kept
 * with its reason. Run by ctest with the environment of each case:
 *   module_autoload modules   CT_MODULE_DIR has libctensor_loopback.so and a broken libctensor_notalib.so
 *   module_autoload none      the same with CT_NO_MODULES=1: nothing loads
 *   module_autoload path      CT_NO_MODULES=1, CT_PLUGIN_PATH=<loopback>:/nonexistent.so
 * Exits 0 when every check holds, 1 with a message otherwise.
 */
#include <ctensor/ctensor.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      fprintf(stderr, "module_autoload: FAILED %s: ", #cond); \
      fprintf(stderr, __VA_ARGS__);                       \
      fprintf(stderr, "\n");                              \
      ++failures;                                         \
    }                                                     \
  } while (0)

/* The loopback device works: a round trip host -> loopback -> host. */
static void round_trip(void) {
  CTDevice lb = {CT_EXT_DEV, 0}, cpu = {CT_CPU, 0};
  float src[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  int64_t shape[1] = {4};
  void* dev = NULL;
  CHECK(ct_malloc(lb, sizeof src, &dev) == CT_OK, "%s", ct_last_error());
  if (!dev) return;
  CTensor h = {src, cpu, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor d = {dev, lb, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CTensor b = {back, cpu, 1, {CT_FLOAT, 32, 1}, shape, NULL, 0};
  CHECK(ct_copy(&h, &d, NULL) == CT_OK, "%s", ct_last_error());
  CHECK(ct_unary(CT_OP_NEG, &d, &d, NULL) == CT_OK, "%s", ct_last_error());
  CHECK(ct_copy(&d, &b, NULL) == CT_OK, "%s", ct_last_error());
  CHECK(back[3] == -4.0f, "got %g", (double)back[3]);
  ct_free(lb, dev);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const int32_t n = ct_library_count(), nf = ct_library_failure_count();
  CTLibraryInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CTLibraryFailure f;
  memset(&f, 0, sizeof f);
  f.struct_size = sizeof f;
  if (strcmp(mode, "none") == 0) {
    CHECK(n == 0 && nf == 0, "%d libraries, %d failures", n, nf);
    CHECK(ct_device_count() == 1, "%d devices", ct_device_count());
  } else if (strcmp(mode, "modules") == 0 || strcmp(mode, "path") == 0) {
    const int32_t origin = strcmp(mode, "modules") == 0 ? CT_LIBRARY_MODULE : CT_LIBRARY_PLUGIN_PATH;
    CTLibrary* lib = NULL;
    CHECK(n == 1, "%d libraries", n);
    CHECK(ct_library_get(0, &lib) == CT_OK && ct_library_info(lib, &info) == CT_OK, "%s", ct_last_error());
    CHECK(strcmp(info.name, "loopback") == 0 && info.origin == origin && info.loaded == 1 && info.num_devices == 1 &&
              info.num_kernel_tables == 1,
          "name %s origin %d loaded %d devices %d tables %d", info.name, info.origin, info.loaded, info.num_devices,
          info.num_kernel_tables);
    CHECK(ct_library_get(1, &lib) == CT_ERR_NOT_FOUND, "index 1");
    CHECK(nf == 1, "%d failures", nf);
    CHECK(ct_library_failure(0, &f) == CT_OK, "%s", ct_last_error());
    CHECK(f.origin == origin && f.status == CT_ERR_NOT_FOUND, "origin %d status %d", f.origin, f.status);
    CHECK(strstr(f.message, origin == CT_LIBRARY_MODULE ? "libctensor_notalib.so" : "/nonexistent.so") != NULL,
          "message: %s", f.message);
    CHECK(ct_device_count() == 3, "%d devices (cpu + 2 loopback)", ct_device_count());
    round_trip();
    /* A module unloads like any library; its device goes with it. */
    CHECK(ct_library_get(0, &lib) == CT_OK && ct_library_unload(lib) == CT_OK, "%s", ct_last_error());
    CHECK(ct_device_count() == 1 && ct_library_count() == 0, "%d devices, %d libraries after unload",
          ct_device_count(), ct_library_count());
  } else {
    fprintf(stderr, "usage: module_autoload modules|none|path\n");
    return 2;
  }
  if (failures == 0) printf("module_autoload %s: every check holds\n", mode);
  return failures ? 1 : 0;
}
