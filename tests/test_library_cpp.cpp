// test_library_cpp.cpp — plugin libraries through the C++ wrapper (ct::Library, ct::op_id): the example
// plugin of docs/writing-a-plugin.md (CT_DOC_PLUGIN_PATH: the op isru, a CPU kernel, a reference)
// loaded, listed, called by id through the generic entry points, unloaded by RAII and loaded again under
// its old id; loads that fail (no such file, not a plugin, the loopback whose device type the test runner
// registered already, one file twice) throw ct::Error with the library's message and leave nothing
// behind.
//
// Tagged [library] and hidden ([.]): a plugin op's id stays taken for the life of the process (ids are
// never reused), so these cases run in a process of their own (ctest: catch2_library), not next to the
// suites that walk every op id.
#include <catch2/catch.hpp>

#include <ctensor/ctensor.hpp>
#include <ctensor/plugin.h>  // CT_PLUGIN_ABI_*, ct_op_reference

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The ct::Error that f throws (status CT_OK and "" when it throws none).
template <class F>
ct::Error error_of(F&& f) {
  try {
    f();
  } catch (const ct::Error& e) {
    return e;
  }
  return ct::Error(CT_OK, "(no error)");
}

int32_t count_named(const std::string& name) {
  int32_t n = 0;
  for (const ct::LibraryInfo& l : ct::Library::loaded()) n += l.name == name;
  return n;
}

double isru(double v) { return v / std::hypot(1.0, v); }

}  // namespace

TEST_CASE("ct::Library loads the documented plugin and its op runs by id", "[library][.]") {
  const int32_t ops_before = ct_op_count();
  const size_t libs_before = ct::Library::loaded().size();
  int32_t id = -1;
  {
    ct::Library lib(CT_DOC_PLUGIN_PATH);
    REQUIRE(static_cast<bool>(lib));
    const ct::LibraryInfo info = lib.info();
    CHECK(info.name == "isru");
    CHECK(info.version == "1.0.0");
    CHECK(contains(info.path, "libisru"));
    CHECK(info.abi_major() == CT_PLUGIN_ABI_MAJOR);
    CHECK(info.abi_minor() == CT_PLUGIN_ABI_MINOR);
    CHECK(info.num_ops == 1);
    CHECK(info.num_devices == 0);
    CHECK(info.num_kernel_tables == 1);
    CHECK(info.loaded);
    id = ct::op_id("isru");
    CHECK(id >= static_cast<int32_t>(CT_OP_END_));
    CHECK(lib.ops() == std::vector<int32_t>{id});
    CHECK(lib.op_names() == std::vector<std::string>{"isru"});
    CHECK(ct_op_count() >= ops_before + 1);
    CHECK(ct::Library::loaded().size() == libs_before + 1);
    CHECK(count_named("isru") == 1);
    const CTOpInfo oi = ct::op_info(id);
    CHECK(oi.kind == CT_KIND_UNARY);
    CHECK(std::string(oi.summary) == "x / sqrt(1 + x^2)");

    // the generic entry point, a strided view, in place, and float64
    ct::Tensor x = ct::Tensor::from({-3.f, -1.f, 0.f, 0.5f, 2.f, 8.f}, {2, 3});
    ct::Tensor y = ct::unary(id, x);
    std::vector<float> got = y.to_vector<float>();
    const float want[6] = {-3.f, -1.f, 0.f, 0.5f, 2.f, 8.f};
    for (int k = 0; k < 6; ++k) CHECK(got[k] == Approx(isru(want[k])).epsilon(1e-6));
    ct::Tensor t = ct::unary(id, x.transpose(0, 1));
    CHECK(t.shape() == std::vector<int64_t>{3, 2});
    CHECK(t.to_vector<float>()[3] == Approx(isru(2.0)).epsilon(1e-6));  // [[-3, .5], [-1, 2], [0, 8]]
    ct::unary(id, x, x);
    CHECK(x.to_vector<float>() == got);
    ct::Tensor d = ct::unary(id, ct::Tensor::from({-1.0, 4.0}));
    CHECK(d.to_vector<double>()[1] == Approx(4 / std::sqrt(17.0)).epsilon(1e-15));

    // the op's rule: float32 and float64 only, said by the library
    ct::Error e = error_of([&] { ct::unary(id, ct::Tensor::from({1, 2})); });
    CHECK(e.status() != CT_OK);
    CHECK(contains(e.what(), "isru"));
    CHECK(contains(e.what(), "int32"));

    // the plugin's own reference, as `ctensor check` runs it
    ct::Tensor r = ct::Tensor::empty({2, 3}, ct::dtype::float32);
    const CTensor* args[2] = {&x.c(), &r.c()};
    ct::Tensor src = ct::Tensor::from({-3.f, -1.f, 0.f, 0.5f, 2.f, 8.f}, {2, 3});
    args[0] = &src.c();
    REQUIRE(ct_op_reference(id, args, 2, nullptr, nullptr) == CT_OK);
    const std::vector<float> ref = r.to_vector<float>();  // in double, rounded once: within an ulp of the kernel's
    for (int k = 0; k < 6; ++k) CHECK(ref[(size_t)k] == Approx(got[(size_t)k]).epsilon(3e-7));
    // a built-in op has no reference in the library
    CHECK(ct_op_reference(CT_OP_EXP, args, 2, nullptr, nullptr) == CT_ERR_NOT_FOUND);

    // the same file again is refused; the first load is untouched
    ct::Error twice = error_of([] { ct::Library again(CT_DOC_PLUGIN_PATH); });
    CHECK(twice.status() == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(twice.what(), "is loaded already"));
    CHECK(contains(twice.what(), "isru"));
    CHECK(count_named("isru") == 1);
    CHECK(ct::unary(id, src).to_vector<float>() == got);

    // move-only ownership: the moved-from object holds nothing
    ct::Library moved(std::move(lib));
    CHECK_FALSE(static_cast<bool>(lib));
    CHECK(error_of([&] { lib.info(); }).status() == CT_ERR_INVALID_ARGUMENT);
    CHECK(moved.name() == "isru");
  }  // unloaded here

  CHECK(count_named("isru") == 0);
  CHECK(ct::Library::loaded().size() == libs_before);
  CHECK(error_of([] { ct::op_id("isru"); }).status() == CT_ERR_NOT_FOUND);
  ct::Error gone = error_of([&] { ct::unary(id, ct::Tensor::from({1.f})); });
  CHECK(gone.status() == CT_ERR_NOT_FOUND);
  CHECK(contains(gone.what(), "unloaded"));
  // the entry points that name ops by id in their messages skip the id that names no op now (the generic NN
  // pair once read every id's name at its first call, and crashed on an unloaded one)
  {
    const CTensor* none[1] = {nullptr};
    size_t bytes = 0;
    CHECK(ct_nn_workspace_size(CT_OP_MATMUL, nullptr, none, 1, &bytes) != CT_OK);
    CHECK(contains(ct_last_error(), "ct_nn_workspace_size(matmul)"));
    CHECK(ct_nn_workspace_size(id, nullptr, none, 1, &bytes) == CT_ERR_NOT_FOUND);
  }

  // loaded again: the same id; unload() by hand, then the destructor has nothing to do
  ct::Library again(CT_DOC_PLUGIN_PATH);
  CHECK(ct::op_id("isru") == id);
  CHECK(again.ops() == std::vector<int32_t>{id});
  CHECK(ct::unary(id, ct::Tensor::from({0.f})).to_vector<float>()[0] == 0.0f);
  CHECK(ct::unary(id, ct::Tensor::from({1.f})).to_vector<float>()[0] == Approx(std::sqrt(0.5)).epsilon(3e-7));
  again.unload();
  CHECK_FALSE(static_cast<bool>(again));
  CHECK(count_named("isru") == 0);

  // release(): the library stays loaded until its handle is unloaded
  CTLibrary* raw = ct::Library(CT_DOC_PLUGIN_PATH).release();
  CHECK(count_named("isru") == 1);
  ct::Library::adopt(raw);  // a temporary: unloads at the end of the statement
  CHECK(count_named("isru") == 0);
}

TEST_CASE("ct::Library: a load that fails throws the library's reason and leaves nothing loaded",
          "[library][.]") {
  const size_t libs = ct::Library::loaded().size();
  const int32_t devices = ct_device_count();
  const size_t failures = ct::Library::failures().size();  // modules that declined (libctensor_cuda without a GPU)

  // the loopback backend: linked into the test runner, which registered it
  ct::Error e = error_of([] { ct::Library lib(CT_LOOPBACK_PATH); });
  CHECK(e.status() == CT_ERR_INVALID_ARGUMENT);
  CHECK(contains(e.what(), "already in this process"));  // linked into the test runner: its init would run twice
  CHECK(contains(e.what(), "libct_loopback"));
  CHECK(ct::Library::loaded().size() == libs);
  CHECK(ct_device_count() == devices);

  // no such file
  e = error_of([] { ct::Library lib("/nonexistent/libnothing.so"); });
  CHECK(e.status() == CT_ERR_NOT_FOUND);
  CHECK(contains(e.what(), "/nonexistent/libnothing.so"));
  CHECK(contains(e.what(), "no such file"));

  // a file that is not a shared library
  const std::string junk = std::string(CT_DOC_PLUGIN_PATH) + ".not_a_library.txt";
  {
    std::FILE* f = std::fopen(junk.c_str(), "w");
    REQUIRE(f);
    std::fputs("not a shared library\n", f);
    std::fclose(f);
  }
  e = error_of([&] { ct::Library lib(junk); });
  std::remove(junk.c_str());
  CHECK(e.status() == CT_ERR_NOT_FOUND);
  CHECK(contains(e.what(), "cannot load"));
  CHECK(contains(e.what(), ".not_a_library.txt"));

  CHECK(ct::Library::loaded().size() == libs);
  CHECK(ct::Library::failures().size() == failures);  // a failed ct::Library load is not recorded there
  ct::Library none;
  CHECK_FALSE(static_cast<bool>(none));
  none.unload();  // nothing to do
}
